"""Saddle-point solvers for the implicit steppers; a name registry.

``make_solver(name, pattern, **options)`` returns an object with
``factor(data)`` and ``solve(rhs, out)`` for the KKT matrix whose fixed
pattern is ``pattern`` (:class:`~trackdyn.linsolve.kkt.KKTPattern`).
"""

from __future__ import annotations

from .block_ldl import BlockSolver
from .iterative import BBSolver, MinresSolver, PSORSolver
from .kkt import DirectSolver, KKTPattern, ScalarDirectSolver

__all__ = ["make_solver", "SOLVERS", "DirectSolver", "ScalarDirectSolver", "BlockSolver", "KKTPattern",
           "MinresSolver", "PSORSolver", "BBSolver"]

SOLVERS = {"direct": DirectSolver, "direct-scalar": ScalarDirectSolver, "direct-block": BlockSolver,
           "minres": MinresSolver, "psor": PSORSolver, "bb": BBSolver}


def make_solver(name, pattern, **options):
    if isinstance(name, type):
        return name(pattern, **options)
    try:
        cls = SOLVERS[name]
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; choose one of {sorted(SOLVERS)}") from None
    return cls(pattern, **options)
