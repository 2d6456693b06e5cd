"""Time integrators, selectable by name (``make_integrator``).

=============================  =======================================================  =====
name                           scheme                                                   order
=============================  =======================================================  =====
``euler-implicit-linearized``  one linear solve per step (thesis eq. 2.13)              1
``theta-linearized``           linearised θ-method, one linear solve per step           1 (2 at θ=½)
``euler-implicit``             backward Euler, full Newton (eq. 2.12)                   1
``euler-implicit-projected``   eq. 2.14 velocity step + position projection (eq. 2.15)  1
``hht``                        HHT-α, Newton on accelerations and multipliers           2
``rk4``                        classical Runge-Kutta on the index-1 form, in a chart    4
``ab3``                        3-step Adams-Bashforth on the index-1 form               3
``abm``                        variable-step Adams-Bashforth-Moulton PECE               var.
``massless-realtime``          linearised Euler in a massless vehicle's minimal coords  1
``nsc-euler``                  linearised Euler with non-smooth contact (NscContact)    1
=============================  =======================================================  =====

See docs/integrators.md for the equations, options and measured accuracy.
"""

from __future__ import annotations

from .abm import ABM
from .base import Integrator, StepFailed
from .euler import EulerImplicitLinearized, ThetaLinearized
from .explicit import AB3, RK4
from .hht import HHT
from .implicit import EulerImplicit, EulerImplicitProjected
from .nsc import NscEuler
from .realtime import RealtimeStepper

__all__ = ["Integrator", "StepFailed", "EulerImplicitLinearized", "ThetaLinearized", "EulerImplicit",
           "EulerImplicitProjected",
           "HHT", "RK4", "AB3", "ABM", "RealtimeStepper", "NscEuler", "INTEGRATORS", "make_integrator"]

INTEGRATORS = {cls.name: cls for cls in (EulerImplicitLinearized, ThetaLinearized, EulerImplicit,
                                         EulerImplicitProjected, HHT, RK4, AB3, ABM, RealtimeStepper, NscEuler)}


def make_integrator(name, system, step, **options):
    if isinstance(name, type):
        return name(system, step, **options)
    try:
        cls = INTEGRATORS[name]
    except KeyError:
        raise ValueError(f"unknown integrator {name!r}; choose one of {sorted(INTEGRATORS)}") from None
    return cls(system, step, **options)
