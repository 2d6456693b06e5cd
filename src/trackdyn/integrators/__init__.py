"""Time integrators, selectable by name (``make_integrator``)."""

from __future__ import annotations

from .base import Integrator, StepFailed
from .euler import EulerImplicitLinearized

__all__ = ["Integrator", "StepFailed", "EulerImplicitLinearized", "INTEGRATORS", "make_integrator"]

INTEGRATORS = {EulerImplicitLinearized.name: EulerImplicitLinearized}


def make_integrator(name, system, step, **options):
    if isinstance(name, type):
        return name(system, step, **options)
    try:
        cls = INTEGRATORS[name]
    except KeyError:
        raise ValueError(f"unknown integrator {name!r}; choose one of {sorted(INTEGRATORS)}") from None
    return cls(system, step, **options)
