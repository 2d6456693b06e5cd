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

from .._compiled import entry_point
from ..mbs.forces import RSDABlock, TSDABlock
from ..mbs.markers import MarkerOutputs
from . import _tree_kernels
from .absolute import AbsoluteSystem, ForceContext

__all__ = ["TreeSystem"]


class TreeSystem(AbsoluteSystem):
    """The absolute system of a massless model run by the real-time stepper: cheaper outputs for recording.

    :meth:`evaluate_outputs` gives the series of
    :meth:`AbsoluteSystem.evaluate_outputs` (to round-off) with three
    short-cuts: a provider with a ``refresh_outputs(kin)`` method (the
    massless track) keeps the outputs of the compiled evaluation that
    :meth:`~trackdyn.integrators.realtime.RealtimeStepper.run_chunk` made at
    the very same state (``fresh``: that state's ``q`` array; otherwise the
    provider is evaluated as usual); the kinematics, the dampers (TSDA), the
    torsion bars (RSDA) and the markers are evaluated by one compiled call
    (:func:`trackdyn.formulations._tree_kernels.outputs`, the same kernels in
    the same order: bit-identical) when the model's elements are those (else
    one call each); and the joints' constraint values, which no recorded
    series reads here, are not evaluated. The stepper has no joint
    multipliers (its coordinates are minimal), so the system declares no
    joint reactions (``joint_reactions = False``): the recorder writes no
    ``*.force.*``/``*.torque.*`` series of joints for it, rather than
    NaN-filled ones.
    """

    joint_reactions = False
    fresh_q = None  # q array of the state whose track outputs the stepper evaluated last
    _outputs_plan = None  # (entry, arguments after q, v, acc, other providers) or False; built at the first sample

    def _plan_outputs(self):
        """The compiled sample outputs' plan, or False when an element needs its own evaluation (a block other
        than one TSDA block without force callables and one RSDA block, several marker providers)."""
        tsda = [b for b in self.blocks if type(b) is TSDABlock]
        rsda = [b for b in self.blocks if type(b) is RSDABlock]
        marks = [p for p in self.providers if type(p) is MarkerOutputs]
        if (len(tsda) > 1 or len(rsda) > 1 or len(tsda) + len(rsda) != len(self.blocks) or len(marks) > 1
                or (tsda and tsda[0].callables)):
            return False
        t = tsda[0] if tsda else TSDABlock([], self.model)
        r = rsda[0] if rsda else RSDABlock([], self.model)
        ta = (t.body, t.s, t.k, t.c, t.l0, t.f_act, t.tab_x, t.tab_y, t.spring_tab, t.damper_tab, t.use_ext,
              t.ext_force, t.force, t.length, t.rate)
        ra = (r.body, r.zi, r.xi, r.xj, r.k, r.c, r.theta0, r.t_act, r.tab_x, r.tab_y, r.spring_tab, r.damper_tab,
              r.torque, r.angle, r.rate)
        if marks:
            mk = (marks[0].body, marks[0].s, marks[0].out)
        else:
            mk = (np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 9)))
        k = self.kin
        args = (k.q_ext, k.pos, k.R, k.vel, k.omega_w, *ta, *ra, *mk)
        q0 = np.zeros((self.nb, 7))
        v0 = np.zeros((self.nb, 6))
        entry = entry_point(_tree_kernels.outputs, (q0, v0, v0, *args))
        others = [p for p in self.providers if type(p) is not MarkerOutputs]
        self._out_f, self._out_Dv = np.zeros_like(self.f), np.zeros_like(self.Dv)
        return entry, args, others

    def prime_outputs(self) -> None:
        """Build the compiled outputs' plan now (loading its kernel from Numba's cache) rather than at the first
        sample, e.g. before a timed loop."""
        if self._outputs_plan is None:
            self._outputs_plan = self._plan_outputs()

    def evaluate_outputs(self, state, elements: bool = True):
        if not elements:
            return super().evaluate_outputs(state, elements=False)
        plan = self._outputs_plan
        if plan is None:
            plan = self._outputs_plan = self._plan_outputs()
        q, v, acc = state.q, state.v, state.acc
        if not (_c_float(q) and _c_float(v) and _c_float(acc)):
            q, v, acc = (np.ascontiguousarray(a, dtype=np.float64) for a in (q, v, acc))
        if plan:
            entry, args, providers = plan
            entry(q, v, acc, *args)
            f, dv = self._out_f, self._out_Dv
        else:
            self.update_kinematics(q, v)
            for blk in self.blocks:
                blk.evaluate(state.t, self.kin, v)
            providers = self.providers
            f = dv = None
        ctx = None
        fresh = self.fresh_q is not None and state.q is self.fresh_q
        for prov in providers:
            if fresh and hasattr(prov, "refresh_outputs"):
                prov.refresh_outputs(self.kin)
            elif type(prov) is MarkerOutputs:
                _tree_kernels.markers(prov.body, prov.s, self.kin.pos, self.kin.R, self.kin.vel, self.kin.omega_w,
                                      acc, prov.out)
            else:
                if ctx is None:
                    if f is None:
                        f, dv = np.zeros_like(self.f), np.zeros_like(self.Dv)
                    else:
                        f.fill(0.0)
                        dv.fill(0.0)
                    ctx = ForceContext(state.t, 0.0, state, self.kin, f, dv, None, 0.0, 0.0)
                prov.accumulate(ctx)
        self.update_drivers(state.t)


def _c_float(a) -> bool:
    return a.dtype == np.float64 and a.flags.c_contiguous
