"""How a Model becomes equations, and the fidelity registry.

``absolute``: absolute coordinates with Lagrange multipliers; ``tree``: the
minimal-coordinate system of the real-time stepper; ``contract``: the
:class:`~trackdyn.formulations.contract.Formulation` protocol every fidelity
implements and the registry by name.
"""

from .absolute import AbsoluteSystem, RedundantConstraintWarning
from .contract import (Build, Formulation, FormulationInfo, formulation_names, formulations, get_formulation,
                       register_formulation, unregister_formulation)
from .tree import TreeSystem

__all__ = ["AbsoluteSystem", "RedundantConstraintWarning", "TreeSystem", "Formulation", "FormulationInfo", "Build",
           "register_formulation", "unregister_formulation", "get_formulation", "formulation_names", "formulations"]
