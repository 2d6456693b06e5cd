"""Real-time stepper of the massless model: minimal coordinates, one compiled call per step.

:class:`RealtimeStepper` is an :class:`~trackdyn.integrators.base.Integrator`
for the systems built by :func:`trackdyn.assembly.fidelities.MasslessFormulation`
(``formulation = "tree"``, the default of the massless fidelity): it advances
the hull, sprocket and road-arm rotations of the vehicle's depth-1 tree by a
linearised implicit Euler step with the Jacobians of the stiff forces
(agapov-kovalev-pogorelov §3.1), see :mod:`trackdyn.integrators._realtime_kernels`. The
state it returns is the ordinary absolute state of every body of the model,
so recording, markers, the drivetrain's series and the track's outputs are
those of the absolute formulation (evaluated by the system at sample times).

What differs from stepping the same model in absolute coordinates
(:class:`~trackdyn.contact.massless.track.MasslessTrack` on an
:class:`~trackdyn.formulations.absolute.AbsoluteSystem`): joints hold exactly
(no multipliers: joint reaction series are NaN); the spin of wheels, idlers
and rollers keeps its rate relative to the parent (no torque acts about
their axles in the massless model), their gyroscopic coupling is left out;
the Newton matrix holds the stiff Jacobian terms only. Tests compare the two
on shared runs.
"""

from __future__ import annotations

import math

import numpy as np

from .._compiled import entry_point
from ..contact.massless import _kernels as K
from ..contact.massless._slice import new_slice_buffer
from ..contact.massless.track import MasslessTrack
from ..driver import Observation
from ..driver._compiled import compiled_form
from ..math.quaternion import quat_to_matrix
from ..mbs.forces import RSDABlock, TSDABlock
from ..mbs.model import State
from ..powertrain import Drivetrain, track_inputs
from . import _realtime_kernels as TK
from .base import Integrator, StepFailed

__all__ = ["RealtimeStepper"]

_F64 = np.dtype(np.float64)


class RealtimeStepper(Integrator):
    """Linearised implicit Euler in the minimal coordinates of a massless vehicle.

    Parameters
    ----------
    system : AbsoluteSystem
        The system of the massless model (for its arrays, force elements and
        providers: a :class:`MasslessTrack`, optionally a :class:`Drivetrain`).
    step : float
        Time step, s (the massless model runs at 2-10 ms).
    tree : dict
        ``body name -> (parent name, pivot (3,), axis (3,), kind)`` at the
        initial pose (world), ``kind`` ``"dof"`` or ``"spin"``
        (:attr:`MasslessVehicle.tree <trackdyn.assembly.massless.MasslessVehicle>`).
    """

    name = "massless-realtime"
    #: runs several steps per compiled call (:meth:`run_chunk`): :class:`~trackdyn.sim.realtime.RealtimeSimulation`
    chunked = True
    #: minimal coordinates, no multipliers: watched by :class:`~trackdyn.sim.monitor.RealtimeMonitor`
    minimal_coordinates = True

    def __init__(self, system, step, tree=None, solver=None, **options):
        if options:
            raise ValueError(f"massless-realtime: unknown options {sorted(options)}")
        super().__init__(system, step)
        if tree is None:
            raise ValueError("massless-realtime: needs the vehicle's tree (MasslessVehicle.tree)")
        model = system.model
        names = model.body_names
        idx = {nm: k for k, nm in enumerate(names)}
        nb_ = system.nb
        if "chassis" not in idx:
            raise ValueError("massless-realtime: the model has no body 'chassis'")
        C = idx["chassis"]
        self.C = C
        q0 = system.q0
        RC0 = quat_to_matrix(q0[C, 3:])
        kind = np.zeros(nb_, np.int64)
        parent = np.full(nb_, -1, np.int64)
        dof = np.full(nb_, -1, np.int64)
        pivot = np.zeros((nb_, 3))
        axis = np.zeros((nb_, 3))
        kind[C] = TK.KIND_HULL
        n_dof = 0
        for nm in names:
            if nm == "chassis":
                continue
            if nm not in tree:
                raise ValueError(f"massless-realtime: body {nm!r} is not in the vehicle's tree")
            par, pv, ax, kd = tree[nm]
            b = idx[nm]
            parent[b] = idx[par]
            pivot[b] = RC0.T @ (np.asarray(pv, float) - q0[C, :3])
            axis[b] = RC0.T @ np.asarray(ax, float)
            if kd == "dof":
                if par != "chassis":
                    raise ValueError(f"massless-realtime: joint of {nm!r} must be on the chassis (depth-1 tree)")
                kind[b] = TK.KIND_DOF
                dof[b] = n_dof
                n_dof += 1
            else:
                kind[b] = TK.KIND_SPIN
        for b in range(nb_):
            if kind[b] == TK.KIND_SPIN and parent[b] != C:
                if kind[parent[b]] != TK.KIND_DOF:
                    raise ValueError(f"massless-realtime: {names[b]!r} must hang on the chassis or on a joint body")
                dof[b] = dof[parent[b]]
        self.kind, self.parent, self.dof, self.pivot, self.axis = kind, parent, dof, pivot, axis
        n = 6 + n_dof
        self.n = n
        # inertia: spin bodies without their axial moment (their spin is free)
        J = system.inertia.copy()
        for b in range(nb_):
            if kind[b] == TK.KIND_SPIN:
                J[b, 1, :] = 0.0
                J[b, :, 1] = 0.0
        self.mass = system.mass.copy()
        self.J = J
        # force elements of the model
        rs = [blk for blk in system.blocks if isinstance(blk, RSDABlock)]
        ts = [blk for blk in system.blocks if isinstance(blk, TSDABlock)]
        other = [type(blk).__name__ for blk in system.blocks if not isinstance(blk, (RSDABlock, TSDABlock))]
        if other:
            raise ValueError(f"massless-realtime: force elements {other} are not supported")
        if rs:
            r = rs[0]
            self.rs = (r.body, r.zi, r.xi, r.xj, r.k, r.c, r.theta0, r.t_act, r.tab_x, r.tab_y, r.spring_tab,
                       r.damper_tab)
        else:
            z = np.zeros((0, 3))
            self.rs = (np.zeros((0, 2), np.int64), z, z, z, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0),
                       np.zeros(1), np.zeros(1), np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64))
        if ts:
            t = ts[0]
            if t.use_ext.any():
                raise ValueError("massless-realtime: TSDA elements with a force callable are not supported")
            self.ts = (t.body, t.s, t.k, t.c, t.l0, t.f_act, t.tab_x, t.tab_y, t.spring_tab, t.damper_tab)
        else:
            self.ts = (np.zeros((0, 2), np.int64), np.zeros((0, 2, 3)), np.zeros(0), np.zeros(0), np.zeros(0),
                       np.zeros(0), np.zeros(1), np.zeros(1), np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64))
        for blk_ in (self.rs, self.ts):
            for i, j in blk_[0]:
                for b in (i, j):
                    if b < 0:
                        raise ValueError("massless-realtime: force elements to the ground are not supported")
        # providers
        self.track = next((p for p in system.providers if isinstance(p, MasslessTrack)), None)
        self.drivetrain = next((p for p in system.providers if isinstance(p, Drivetrain)), None)
        unknown = [type(p).__name__ for p in system.providers
                   if not isinstance(p, (MasslessTrack, Drivetrain)) and getattr(p, "name", "") != "markers"]
        if unknown:
            raise ValueError(f"massless-realtime: force providers {unknown} are not supported")
        dt = self.drivetrain
        if dt is not None:
            self.spr = dt.sprockets.copy()
            # the compiled drive reads the map against sprocket rad/s: a track-speed map (map_scale = pin-circle
            # radius) is rescaled here, as Drivetrain does inside its kernel
            self.map_w, self.map_t, self.brake_torque = dt.map_w / dt.map_scale, dt.map_t, dt.brake_torque
        else:
            self.spr = np.zeros(0, np.int64)
            self.map_w = self.map_t = np.zeros(2)
            self.brake_torque = 0.0
        self.throttle = np.zeros(len(self.spr))
        self.braking = np.zeros(len(self.spr))
        self.drive_out = np.zeros((max(len(self.spr), 1), 2))
        # buffers
        self.pos = np.zeros((nb_ + 1, 3))
        self.R = np.zeros((nb_ + 1, 3, 3))
        self.R[nb_] = np.eye(3)
        self.vel = np.zeros((nb_ + 1, 3))
        self.omega = np.zeros((nb_ + 1, 3))
        self.body_T = np.zeros((nb_, 3, 7))
        self.body_W = np.zeros((nb_, 3, 7))
        self.spin = np.zeros(nb_)
        self.u = np.zeros(n)
        self.M = np.zeros((n, n))
        self.Q = np.zeros(n)
        self.Kx = np.zeros((n, n))
        self.Dv = np.zeros((n, n))
        self.A = np.zeros((n, n))
        self.rhs = np.zeros(n)
        self.unew = self.rhs  # after a step: the new rates (the kernel leaves them in rhs)
        self.g7 = np.zeros(7)
        self.g = np.zeros(n)
        if self.track is None:
            raise ValueError("massless-realtime: the system has no MasslessTrack provider")
        self._track_setup()
        self.nan_lam = np.full(system.nc, np.nan)
        self._entry = None
        self._argl = None
        self._chunk = None
        self._chunk_entry = None
        self._chunk_drv = self.chunk_driver()
        self._acc_shape = (nb_, 6)
        # history of run_samples: up to _hist_cap samples per call (t, q, v, acc, driver memory, track outputs)
        self._hist_cap = 64
        tr = self.track
        cap = self._hist_cap
        self._hist = (np.zeros(cap), np.zeros((cap, nb_, 7)), np.zeros((cap, nb_, 6)), np.zeros((cap, nb_, 6)),
                      np.zeros((cap, 3)), np.zeros((cap, *tr.wout.shape)), np.zeros((cap, *tr.sout.shape)),
                      np.zeros((cap, *tr.hout.shape)), np.zeros((cap, *tr.tout.shape)))
        self._samples_entry = None
        self._qo = np.zeros((nb_, 7))
        self._vo = np.zeros((nb_, 6))
        self._mem_try = np.zeros(3)
        tr = self.track
        self._wsc, self._ssc = np.zeros_like(tr.wout), np.zeros_like(tr.sout)
        self._hsc, self._tsc = np.zeros_like(tr.hout), np.zeros_like(tr.tout)

    def _track_setup(self):
        tr = self.track
        if tr is None:
            E = 1
            self.gmap = np.full((E, K.NC_RED), -1, np.int64)
            self.T_pack = self.V_pack = self.P_pack = None
            self.work = None
            return
        E = len(tr.roles)
        gmap = np.full((E, K.NC_RED), -1, np.int64)
        cols = np.zeros((E, K.NC_RED), np.int64)
        ncols = np.zeros(E, np.int64)
        for e in range(E):
            for c in range(6):
                gmap[e, c] = c
            for k in range(1, 4):
                b = tr.roles[e, k]
                if b >= 0 and tr.blk[e, k] == k and self.dof[b] >= 0:
                    gmap[e, 5 + k] = 6 + self.dof[b]
            for c in range(K.NC_RED):
                if gmap[e, c] >= 0:
                    cols[e, ncols[e]] = c
                    ncols[e] += 1
        self.gmap = gmap
        self._ecols, self._encols = cols, ncols
        self.work = K.new_work(K.NC_RED, tr.blk, cols, ncols, tr._cap)
        self.Qe = np.zeros((E, K.NC_RED))
        self.Kxe = np.zeros((E, K.NC_RED, K.NC_RED))
        self.Kve = np.zeros((E, K.NC_RED, K.NC_RED))
        self.on = np.zeros(E, np.bool_)

    # ------------------------------------------------------------------ driver
    def _decide(self, state):
        """The driver's inputs for this step (as trackdyn.powertrain.Drivetrain decides them)."""
        dt = self.drivetrain
        if dt is None:
            return None
        # plain floats: this runs every step, numpy scalars and small arrays cost more than the arithmetic
        x, y, _, e0, e1, e2, e3 = state.q[self.C].tolist()
        vx, vy, vz, wx, wy, wz = state.v[self.C].tolist()
        f0, f1, f2 = 1 - 2 * (e2 * e2 + e3 * e3), 2 * (e1 * e2 + e0 * e3), 2 * (e1 * e3 - e0 * e2)   # hull x axis
        s2 = 2 * (e2 * e3 + e0 * e1)                                                                # hull y axis, z
        u2 = 1 - 2 * (e1 * e1 + e2 * e2)                                                            # hull z axis, z
        yaw_rate = f2 * wx + s2 * wy + u2 * wz
        obs = Observation(t=state.t, speed=vx * f0 + vy * f1 + vz * f2, heading=math.atan2(f1, f0),
                          yaw_rate=yaw_rate, y=y, x=x)
        mem = state.extra.get("driver", np.zeros(1))
        th, steer, br, new_mem = dt.driver.inputs(obs, self.h, mem.copy())
        track_inputs(th, steer, br, self.throttle, self.braking)
        return np.asarray(new_mem, dtype=float)

    # ------------------------------------------------------------------ step
    def _args(self, state, qout, vout, acc):
        tr = self.track
        return (self.h, state.q, state.v, qout, vout, acc, self.C, self.kind, self.parent, self.dof, self.pivot,
                self.axis, self.mass, self.J, self.system.gravity, self.rs, self.ts, self.spr, self.throttle,
                self.braking, self.map_w, self.map_t, float(self.brake_torque), self.drive_out, True, tr.pack, tr.V,
                tr.P, tr.buf, self.work, self.Qe, self.Kxe, self.Kve, self.on, self.gmap, tr.wout, tr.sout, tr.hout,
                tr.tout, tr.flags, self.pos, self.R, self.vel, self.omega, self.body_T, self.body_W, self.spin,
                self.u, self.M, self.Q, self.Kx, self.Dv, self.A, self.rhs, self.g7, self.g)

    def _step_impl(self, state: State) -> State:
        clk = self._clock
        t0 = clk()
        new_mem = self._decide(state)
        nb_ = self.system.nb
        qout = np.empty((nb_, 7))
        vout = np.empty((nb_, 6))
        acc = np.empty((nb_, 6))
        t1 = clk()
        q = state.q if state.q.flags.c_contiguous else np.ascontiguousarray(state.q)
        v = state.v if state.v.flags.c_contiguous else np.ascontiguousarray(state.v)
        while True:
            args = self._argl
            if args is None:
                args = self._argl = list(self._args(state, qout, vout, acc))
            args[1], args[2], args[3], args[4], args[5] = q, v, qout, vout, acc
            if self._entry is None:
                self._entry = entry_point(TK.step, args)
            try:
                code = self._entry(*args)
            except np.linalg.LinAlgError as err:
                raise StepFailed(f"t = {state.t:.6g} s: {err}") from None
            if code == 0:
                break
            if code == 3:
                raise StepFailed(f"t = {state.t:.6g} s: Matrix is singular to machine precision.")
            self._grow()
        t2 = clk()
        extra = dict(state.extra)
        if new_mem is not None:
            extra["driver"] = new_mem
        new = State(state.t + self.h, qout, vout, self.nan_lam.copy(), acc, extra)
        tm = self.timing
        tm["forces"] += t1 - t0
        tm["contact"] = tm.get("contact", 0.0) + (t2 - t1)
        tm["update"] += clk() - t2
        self._count_linear_steps()
        return new


    def _grow(self):
        """Grow the slice buffer after an overflow (flags[1]: segments needed); compiled entries are rebuilt."""
        tr = self.track
        tr._cap = int(max(2 * tr._cap, tr.flags[1] + 16))
        tr.buf = _new_buffer(tr)
        self.work = K.new_work(K.NC_RED, tr.blk, self._ecols, self._encols, tr._cap)
        self._entry = None
        self._argl = None
        self._chunk = None

    # ------------------------------------------------------------------ several steps per call
    def chunk_driver(self):
        """``(kind, parameters)`` of the driver for :meth:`run_chunk`, or None when it has no compiled form."""
        dt = self.drivetrain
        if dt is None:
            return compiled_form(None)
        d = dt.driver
        if len(self.spr) != 2 or getattr(d, "kinematic", False):
            return None
        return compiled_form(d)

    def prime(self, state: State, limits) -> None:
        """Type (and load from Numba's cache) the compiled loops of :meth:`run_chunk` and :meth:`run_samples`
        now, e.g. before a timed run: calls of no step (the state is not advanced; the stage timings are left
        as they were)."""
        if self._chunk_entry is not None and self._samples_entry is not None and self._chunk is not None:
            return
        tm = self.timing
        before = tm.get("contact", 0.0)
        self.run_chunk(state, 0, limits, False, False)
        self.run_samples(state, 0, 1, limits, False)
        tm["contact"] = before

    def _chunk_inputs(self, state: State):
        """The compiled loops' inputs from ``state`` (:meth:`run_chunk`, :meth:`run_samples`): the new state's own
        q and v (C-contiguous float64 copies the kernel advances in place), the driver memory (3 slots), an
        acceleration buffer (every step writes all of it; with no step the state's is copied) and the
        loop's argument tail (built once)."""
        q, v = state.q, state.v
        q = q.copy() if q.dtype == _F64 else np.array(q, dtype=float, order="C")
        v = v.copy() if v.dtype == _F64 else np.array(v, dtype=float, order="C")
        extra = state.extra
        mem_in = extra.get("driver", None)
        if mem_in is None:
            mem = np.zeros(3)
        elif mem_in.shape[0] >= 3:
            mem = np.array(mem_in, dtype=float)
        else:
            mem = np.zeros(3)
            mem[: mem_in.shape[0]] = mem_in
        acc = np.empty(self._acc_shape)
        tail = self._chunk
        if tail is None:
            tail = self._chunk = list(self._args(state, self._qo, self._vo, acc)) + [self._mem_try]
            self._chunk_entry = self._samples_entry = None  # both loops are bound to the tail's arrays
        return q, v, extra, mem_in, mem, acc, tail

    def run_chunk(self, state: State, nsteps: int, limits, want_outputs: bool, first_outputs: bool = False):
        """Up to ``nsteps`` steps from ``state`` in one compiled call (:func:`trackdyn.integrators._realtime_kernels.run_steps`).

        The same steps as :meth:`step` with the driver (a PID, FullThrottle, Idle or Brake:
        :meth:`chunk_driver`) decided before each, and the divergence checks of
        :class:`~trackdyn.sim.monitor.RealtimeMonitor` (``limits``: max speed,
        max spin, max energy jump, on/off). Returns ``(code, k, state)``:
        ``k`` steps were taken and ``state`` is the state after them; code 0:
        all done; otherwise the next step was not taken (1: the slice buffer
        must grow, 2: a check failed) and the caller redoes it with
        :meth:`step` (which grows the buffer or raises the diagnostic).
        With ``want_outputs`` the track's outputs are those of the final state;
        with ``first_outputs`` (and no ``want_outputs``) those of ``state``,
        from the first step's own evaluation (valid when a step was taken or
        refused with code 2).
        """
        clk = self._clock
        t0 = clk()
        q, v, extra, mem_in, mem, acc, tail = self._chunk_inputs(state)
        tail[1], tail[2], tail[5] = q, v, acc
        drv, pid = self._chunk_drv
        if self._chunk_entry is None:
            self._chunk_entry = entry_point(TK.run_steps, (int(nsteps), float(state.t), drv, pid, mem, limits,
                                                           bool(want_outputs), bool(first_outputs), self._wsc,
                                                           self._ssc, self._hsc, self._tsc, *tail))
        code, k, t = self._chunk_entry(int(nsteps), float(state.t), drv, pid, mem, limits, bool(want_outputs),
                                       bool(first_outputs), self._wsc, self._ssc, self._hsc, self._tsc, *tail)
        extra = dict(extra)
        if mem_in is not None:
            extra["driver"] = mem[: mem_in.shape[0]].copy()
        if not k:
            acc = state.acc.copy()
        new = State(t, q, v, self.nan_lam.copy(), acc, extra)
        tm = self.timing
        tm["contact"] = tm.get("contact", 0.0) + (clk() - t0)
        if k:
            self.counters["steps"] += k
            self._count_linear_steps(k)
        return code, k, new


    def run_samples(self, state: State, nsamp: int, every: int, limits, first_outputs: bool):
        """Up to ``nsamp`` output samples of ``every`` steps each in one compiled call
        (:func:`trackdyn.integrators._realtime_kernels.run_samples`): the steps of :meth:`run_chunk`, the
        samples kept in history buffers.

        Returns ``(code, n, k, state, history)``: ``n`` complete samples, ``k`` steps in all, ``state``
        after them (code and refusal as :meth:`run_chunk`). ``history`` is ``(t, q, v, acc, mem, wout, sout,
        hout, tout)``, arrays whose first index is the sample; sample ``j``'s track outputs are valid for
        ``j < n - 1`` (the last one's come with the next call's first step, written into the track's own
        arrays with ``first_outputs``, as :meth:`run_chunk`'s; after a refusal, the last one's are valid
        when a step was taken after it or the refusal has code 2). The buffers are reused by the next call.
        """
        clk = self._clock
        t0 = clk()
        nsamp = int(min(nsamp, self._hist_cap))
        q, v, extra, mem_in, mem, acc, tail = self._chunk_inputs(state)
        tail[1], tail[2], tail[5] = q, v, acc
        drv, pid = self._chunk_drv
        hist = self._hist
        if self._samples_entry is None:
            self._samples_entry = entry_point(TK.run_samples, (nsamp, int(every), float(state.t), drv, pid, mem,
                                                               limits, bool(first_outputs), self._wsc, self._ssc,
                                                               self._hsc, self._tsc, *hist, *tail))
        code, n, k, t = self._samples_entry(nsamp, int(every), float(state.t), drv, pid, mem, limits,
                                            bool(first_outputs), self._wsc, self._ssc, self._hsc, self._tsc,
                                            *hist, *tail)
        extra = dict(extra)
        if mem_in is not None:
            extra["driver"] = mem[: mem_in.shape[0]].copy()
        if not k:
            acc = state.acc.copy()
        new = State(t, q, v, self.nan_lam.copy(), acc, extra)
        tm = self.timing
        tm["contact"] = tm.get("contact", 0.0) + (clk() - t0)
        if k:
            self.counters["steps"] += k
            self._count_linear_steps(k)
        return code, n, k, new, hist


def _new_buffer(track):
    return new_slice_buffer(track._cap, track._n_edges, track._stack)
