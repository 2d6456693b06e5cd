"""How a Model becomes equations. ``absolute``: absolute coordinates with Lagrange multipliers."""

from .absolute import AbsoluteSystem, RedundantConstraintWarning

__all__ = ["AbsoluteSystem", "RedundantConstraintWarning"]
