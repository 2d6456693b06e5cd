"""Integrator contract shared by every time-stepping scheme.

An integrator advances a :class:`~trackdyn.mbs.model.State` by one step of a
formulation (:class:`~trackdyn.formulations.absolute.AbsoluteSystem`):
``state = integrator.step(state)``. The public :meth:`Integrator.step` does
the bookkeeping (counters, wall-time split, divergence check); subclasses fill
``_step_impl``. Every scheme reports the same diagnostics:

- ``counters``: ``steps``, ``residual_evals``, ``jacobian_evals``,
  ``factorizations``, ``solves``, ``iterations``;
- ``timing``: wall seconds spent per stage (``forces``, ``contact`` (force
  providers), ``constraints``,
  ``assembly``, ``factorization``, ``solve``, ``update``);
- ``last``: position and velocity constraint violation of the last step
  (``pos_violation``, ``vel_violation``), ``iterations``, ``residual``.
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from ..errors import StepFailed
from ..mbs.model import State

__all__ = ["Integrator", "StepFailed"]


@nb.njit(cache=True, _nrt=False)
def _finite(q, v):
    """True when every entry of q and v is finite (one pass, no temporaries: this runs after every step)."""
    for x in q.flat:
        if not np.isfinite(x):
            return False
    for x in v.flat:
        if not np.isfinite(x):
            return False
    return True


STAGES = ("forces", "contact", "constraints", "assembly", "factorization", "solve", "update")


class Integrator:
    """Base class of time steppers (see the module docstring for the contract)."""

    name = "base"

    def __init__(self, system, step: float, **options):
        h = float(step)
        if not np.isfinite(h) or h <= 0:
            raise ValueError(f"integrator {self.name!r}: step must be positive, got {step!r}")
        self.system = system
        self.h = h
        self.options = options
        self.counters = {k: 0 for k in ("steps", "residual_evals", "jacobian_evals",
                                        "factorizations", "solves", "iterations")}
        self.timing = {k: 0.0 for k in STAGES}
        self.last = {"pos_violation": 0.0, "vel_violation": 0.0, "iterations": 0, "residual": 0.0}
        self._clock = time.perf_counter

    def step(self, state: State) -> State:
        new = self._step_impl(state)
        self.counters["steps"] += 1
        if not _finite(new.q, new.v):
            raise StepFailed(f"non-finite state after the step from t = {state.t:.6g} s")
        return new

    def _count_linear_steps(self, k: int = 1) -> None:
        """Counters of ``k`` steps of one residual, one Jacobian, one factorisation and one solve each."""
        c = self.counters
        for key in ("residual_evals", "jacobian_evals", "factorizations", "solves", "iterations"):
            c[key] += k
        if k:
            self.last["iterations"] = 1

    def _step_impl(self, state: State) -> State:  # pragma: no cover - abstract
        raise NotImplementedError

    def settings(self) -> dict:
        return {"integrator": self.name, "step": self.h, **{k: v for k, v in self.options.items()}}
