"""The minimal-coordinate (tree) system of the real-time stepper: an absolute system with cheaper outputs.

The ``massless`` fidelity steps its vehicle in the minimal coordinates of a
depth-1 tree (:class:`~trackdyn.integrators.realtime.RealtimeStepper`,
agapov-kovalev-pogorelov §3.1); the state it returns is the absolute state of
every body, so the system that records it is an
:class:`~trackdyn.formulations.absolute.AbsoluteSystem` with the recording
short-cuts of :class:`TreeSystem`. Nothing here knows about vehicles.
"""

from __future__ import annotations

import numpy as np

from ..mbs.markers import MarkerOutputs
from . import _tree_kernels
from .absolute import AbsoluteSystem, ForceContext

__all__ = ["TreeSystem"]


class TreeSystem(AbsoluteSystem):
    """The absolute system of a massless model run by the real-time stepper: cheaper outputs for recording.

    :meth:`evaluate_outputs` gives the series of
    :meth:`AbsoluteSystem.evaluate_outputs` (to round-off) with two
    short-cuts: a provider with a ``refresh_outputs(kin)`` method (the
    massless track) keeps the outputs of the compiled evaluation that
    :meth:`~trackdyn.integrators.realtime.RealtimeStepper.run_chunk` made at
    the very same state (``fresh``: that state's ``q`` array; otherwise the
    provider is evaluated as usual), and the markers are evaluated by a
    compiled kernel (:func:`trackdyn.formulations._tree_kernels.markers`). The
    stepper has no joint multipliers (its coordinates are minimal), so the
    system declares no joint reactions (``joint_reactions = False``): the
    recorder writes no ``*.force.*``/``*.torque.*`` series of joints for it,
    rather than NaN-filled ones.
    """

    joint_reactions = False
    fresh_q = None  # q array of the state whose track outputs the stepper evaluated last

    def evaluate_outputs(self, state, elements: bool = True):
        if not elements:
            return super().evaluate_outputs(state, elements=False)
        self.update_kinematics(state.q, state.v)
        for blk in self.blocks:
            blk.evaluate(state.t, self.kin, state.v)
        ctx = None
        fresh = self.fresh_q is not None and state.q is self.fresh_q
        for prov in self.providers:
            if fresh and hasattr(prov, "refresh_outputs"):
                prov.refresh_outputs(self.kin)
            elif type(prov) is MarkerOutputs:
                acc = state.acc if state.acc.flags.c_contiguous else np.ascontiguousarray(state.acc)
                _tree_kernels.markers(prov.body, prov.s, self.kin.pos, self.kin.R, self.kin.vel, self.kin.omega_w, acc,
                                 prov.out)
            else:
                if ctx is None:
                    ctx = ForceContext(state.t, 0.0, state, self.kin, np.zeros_like(self.f), np.zeros_like(self.Dv),
                                       None, 0.0, 0.0)
                prov.accumulate(ctx)
        self.update_drivers(state.t)
        self.eval_constraints(want_gamma=False)
