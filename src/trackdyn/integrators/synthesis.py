"""The time stepper of the ``synthesis`` fidelity: kim-2012's joint models on a free base with chain
subsystems (:class:`~trackdyn.formulations.synthesis.ChainSynthesis`, docs/synthesis.md).

The stepper drives the formulation through its system (``system.chain_synthesis(base, chains)``), as the other
steppers of this package drive theirs, so it imports nothing from :mod:`trackdyn.formulations`.
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from .base import Integrator

__all__ = ["SynthesisStepper", "SynthesisTrackedStepper", "CHAIN_SCHEMES", "SCHEME_INTEGRATORS", "BASE_PREDICTIONS"]

#: the chain stepper's schemes, and the integrator names that choose them
CHAIN_SCHEMES = ("explicit", "explicit-implicit")
SCHEME_INTEGRATORS = {"synthesis-ab3-hht": "explicit-implicit", "synthesis-ab3": "explicit"}
#: the base acceleration in the subsystems' HHT residual: the last one, or extrapolated linearly
BASE_PREDICTIONS = ("last", "linear")


class SynthesisStepper(Integrator):
    """Time stepper of a :class:`~trackdyn.formulations.synthesis.ChainSynthesis` (kim-2012's joint models, Table 2 models 3 and 4, on a free
    base with chain subsystems), an :class:`~trackdyn.integrators.base.Integrator` for the generic
    :class:`~trackdyn.sim.simulation.Simulation`: it takes and returns the absolute state of every body.

    ``scheme = "explicit"``: AB3 on the base and on every joint coordinate (Heun's step first, then AB2, so
    that the order is 3 from the start), one synthesis evaluation per step. The base's rotation advances in
    the chart centred at its current orientation: the past orientations are mapped into it exactly and their
    rates carry the inverse right Jacobian of SO(3) (``dexp⁻¹``, :mod:`trackdyn.integrators._chart_kernels`),
    so AB3 keeps its order on the rotation group.

    ``scheme = "explicit-implicit"``: AB3 on the base as above; HHT-α (``alpha``) on every subsystem's joint
    coordinates with the base at t_{n+1} from AB3 (kim-2012 eq. 31-35), all subsystems' Newton iterations
    together (each iteration is one force evaluation of the whole vehicle, the subsystems being independent
    once the base is given). The base's acceleration in eq. 31 is the last one (``base_prediction="last"``,
    first order) or extrapolated from t_n and t_{n-1} (``"linear"``: second order, less robust against a
    stiffly damped explicit base); its coupling term is α-weighted like a force (``weighted_coupling``; eq. 31
    as printed leaves it unweighted). Newton matrix (eq. 35) by finite differences of the residual, all
    subsystems at once, kept as a chord and refreshed when a step needs more than ``refresh_after``
    iterations; a step that fails with the chord is redone by full Newton. After the subsystems the base
    equation at t_{n+1} gives a0_{n+1} (and the state's accelerations).

    ``fused``: a factory ``(ChainSynthesis) -> (calls, decide) or None`` of a compiled one-call evaluation
    (:meth:`~trackdyn.formulations.synthesis.ChainSynthesis.set_fused`); without it the absolute system's force evaluation is used.
    The driver decides once per step from the step's initial state (as on every fidelity).
    """

    name = "synthesis"
    SCHEMES = CHAIN_SCHEMES

    def __init__(self, system, step, chains=None, base="chassis", scheme="explicit-implicit", alpha=-0.2,
                 newton_tol=1e-8, newton_max_iter=12, refresh_after=3, base_prediction="last",
                 weighted_coupling=True, fused=None, solver="direct", passive=(), **options):
        if options:
            raise ValueError(f"integrator 'synthesis': unknown options {sorted(options)}; it takes scheme, alpha, "
                             "newton_tol, newton_max_iter, refresh_after, base_prediction, weighted_coupling")
        h = float(step)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"integrator 'synthesis': step must be positive, got {step!r}")
        if scheme not in CHAIN_SCHEMES:
            raise ValueError(f"integrator 'synthesis': scheme = {scheme!r}: choose one of {list(CHAIN_SCHEMES)}")
        a = float(alpha)
        if not -1.0 / 3.0 <= a <= 0.0:
            raise ValueError(f"integrator 'synthesis': alpha = {alpha!r}: HHT-α needs -1/3 <= alpha <= 0")
        for key, val in (("newton_tol", newton_tol),):
            if not (np.isfinite(float(val)) and float(val) > 0):
                raise ValueError(f"integrator 'synthesis': {key} = {val!r}: expected a positive number")
        for key, val in (("newton_max_iter", newton_max_iter), ("refresh_after", refresh_after)):
            if isinstance(val, bool) or int(val) != val or int(val) < 1:
                raise ValueError(f"integrator 'synthesis': {key} = {val!r}: expected an integer >= 1")
        if base_prediction not in BASE_PREDICTIONS:
            raise ValueError(f"integrator 'synthesis': base_prediction = {base_prediction!r}: choose one of "
                             f"{list(BASE_PREDICTIONS)}")
        self.base_prediction = base_prediction
        self.weighted = bool(weighted_coupling)
        if chains is None:
            raise ValueError("integrator 'synthesis': needs the subsystems' chains (the fidelity gives them)")
        super().__init__(system, h)
        self.scheme = scheme
        self.alpha = a
        self.gamma = 0.5 - a
        self.beta = 0.25 * (1.0 - a) ** 2
        self.newton_tol = float(newton_tol)
        self.newton_max_iter = int(newton_max_iter)
        self.refresh_after = int(refresh_after)
        self.options = {"scheme": scheme, "alpha": a, "newton_tol": self.newton_tol,
                        "newton_max_iter": self.newton_max_iter, "refresh_after": self.refresh_after,
                        "base_prediction": base_prediction, "weighted_coupling": self.weighted}
        if not hasattr(system, "chain_synthesis"):
            raise ValueError(f"integrator 'synthesis': the system ({type(system).__name__}) has no chain_synthesis(); "
                             "step a SynthesisAbsoluteSystem (trackdyn.formulations.synthesis)")
        self.cs = system.chain_synthesis(base, chains, passive=passive)
        n = self.cs.n
        NBS = self.cs.K.NBS
        mask = np.zeros((n, NBS), bool)
        for i in range(n):
            mask[i, :self.cs.ch_nb[i]] = True
        self._mask = mask
        self._pad = np.zeros((n, NBS, NBS))
        for i in range(n):
            for j in range(self.cs.ch_nb[i], NBS):
                self._pad[i, j, j] = 1.0
        self._H = None  # Newton matrices (n, NBS, NBS), a chord
        # the history (newest first): the base's q, v, a and the joints' rates; the last state's key
        self.Hq0, self.Hv0, self.Ha0 = np.zeros((3, 7)), np.zeros((3, 6)), np.zeros((3, 6))
        self.Hthd, self.Hthdd = np.zeros((3, n, NBS)), np.zeros((3, n, NBS))
        self.th, self.xa, self.F = np.zeros((n, NBS)), np.zeros((n, NBS)), np.zeros((n, NBS))
        self.nh = 0
        self._key = None
        if fused is not None:
            made = fused(self.cs)
            if made is not None:
                self.cs.set_fused(*made)

    def settings(self) -> dict:
        name = next(k for k, v in SCHEME_INTEGRATORS.items() if v == self.scheme)
        return {"integrator": name, "step": self.h, **self.options}

    # ------------------------------------------------------------------ helpers
    def _eval(self, t, q0, v0, th, thd, state, a0=None, solve_base=True, fused=True):
        t0 = time.perf_counter()
        out = self.cs.evaluate(t, q0, v0, th, thd, state, self.h, a0=a0, solve_base=solve_base, fused=fused)
        self.counters["residual_evals"] += 1
        self.timing["forces"] += time.perf_counter() - t0
        return out

    def _decide_and_eval(self, t, q0, v0, th, thd, state):
        """The providers' decisions for the step from ``state`` (the driver's), then the full evaluation there
        (the absolute system's force evaluation does both when no compiled evaluation is set)."""
        cs = self.cs
        if cs.fused is not None:
            cs.decide(state, self.h)
        return self._eval(t, q0, v0, th, thd, state)

    def _begin(self, state):
        """Start a history at ``state`` (the first step, or a state that is not the last one returned)."""
        cs = self.cs
        q0, v0, th, thd = cs.coordinates(state.q, state.v)
        a0, thdd = self._decide_and_eval(state.t, q0, v0, th, thd, state)
        self.Hq0[0], self.Hv0[0], self.Ha0[0] = q0, v0, a0
        self.th[:] = th
        self.Hthd[0], self.Hthdd[0] = thd, thdd
        self.xa[:] = thdd
        self.F[:] = self._coupling_force(a0)
        self.nh = 1

    def _coupling_force(self, a0):
        """HHT's force term of eq. 31 at the last evaluation: ``M_yqᵀ Ẏ0 - P_q`` (α-weighted coupling) or
        ``-P_q`` (eq. 31 as printed), (n, NBS)."""
        if self.weighted:
            return np.einsum("ikj,k->ij", self.cs.Myq, a0) - self.cs.Pq
        return -self.cs.Pq.copy()

    # ------------------------------------------------------------------ the step
    def _step_impl(self, state):
        from ..errors import StepFailed

        t0 = time.perf_counter()
        tf = self.timing["forces"]
        cs, h = self.cs, self.h
        if self._key != (state.t, id(state.q)):
            self._begin(state)
        k = min(self.nh, 3)
        c = _AB[k - 1]
        t1 = state.t + h
        q0, v0 = np.zeros(7), np.zeros(6)
        th1, thd1 = np.zeros_like(self.th), np.zeros_like(self.th)
        explicit = self.scheme == "explicit"
        cs.K.chain_ab_advance(h, c, k, self.Hq0, self.Hv0, self.Ha0, self.th, self.Hthd, self.Hthdd,
                              explicit and k > 1, q0, v0, th1, thd1)
        iters = 1
        if explicit and k == 1:  # Heun's step to start: AB3 keeps its third order only so
            q0, v0, th1, thd1 = self._heun(state, q0, v0, t1)
            iters = 2
        elif not explicit:
            th1, thd1, iters = self._hht(state, q0, v0, t1)
        # the new state, its driver memory, then its accelerations (the next step's rates)
        new = self._new_state(state, t1, q0, v0, th1, thd1)
        self.system.commit(new)
        a0, thdd = self._decide_and_eval(t1, q0, v0, th1, thd1, new)
        cs.body_accelerations(a0, thdd, new.acc)
        if not np.isfinite(a0.sum() + thdd.sum()):
            raise StepFailed(f"t = {t1:.6g} s: non-finite accelerations in the synthesis")
        for H in (self.Hq0, self.Hv0, self.Ha0, self.Hthd, self.Hthdd):
            H[2] = H[1]
            H[1] = H[0]
        self.Hq0[0], self.Hv0[0], self.Ha0[0] = q0, v0, a0
        self.Hthd[0], self.Hthdd[0] = thd1, thdd
        self.th[:] = th1
        if not explicit:  # HHT's force term at t_{n+1} (the explicit model keeps no such term)
            self.F[:] = self._coupling_force(a0)
        self.nh += 1
        self._key = (t1, id(new.q))
        self.counters["iterations"] += iters
        self.last["iterations"] = iters
        self.timing["update"] += time.perf_counter() - t0 - (self.timing["forces"] - tf)
        return new

    def _new_state(self, state, t1, q0, v0, th1, thd1):
        """The absolute state at t_{n+1} of the base state and the joint coordinates (its accelerations are
        filled in after the last evaluation)."""
        from ..mbs.model import State

        q, v = self.cs.pose(q0, v0, th1, thd1, q=np.empty_like(state.q), v=np.empty_like(state.v))
        return State(t1, q, v, state.lam, np.empty_like(state.acc), dict(state.extra))

    def _heun(self, state, qe, ve, t1):
        """The explicit model's first step, Heun's (locally third order, as AB3's steps): Euler's predictor
        ``(qe, ve)`` for the base and the joints, one evaluation there, then the mean of the two rates (the
        base's rotation in the chart at its start, the predictor's rate mapped by dexp⁻¹)."""
        from ._chart_kernels import chart_rate
        from ..mbs._kernels import advance_positions_dq

        h = self.h
        th, thd, thdd = self.th, self.Hthd[0], self.Hthdd[0]
        TH, THD = th + h * thd, thd + h * thdd
        a0s, thdds = self._eval(t1, qe, ve, TH, THD, state)
        q0n, v0n, a0n = self.Hq0[0], self.Hv0[0], self.Ha0[0]
        r = np.zeros((1, 6))
        chart_rate((h * v0n)[None], ve[None], r)
        dx = (0.5 * h) * (v0n + r[0])
        q1 = np.zeros((1, 7))
        advance_positions_dq(q0n[None], dx[None], q1)
        v1 = v0n + 0.5 * h * (a0n + a0s)
        return q1[0], v1, th + 0.5 * h * (thd + THD), thd + 0.5 * h * (thdd + thdds)

    def _hht(self, state, q0, v0, t1):
        """HHT-α on every subsystem's joint coordinates with the base at t_{n+1} (eq. 31-35), batched."""
        from ..errors import StepFailed

        h, al, be, ga = self.h, self.alpha, self.beta, self.gamma
        cs = self.cs
        n, NBS = cs.n, cs.K.NBS
        th, thd, xa, Fn = self.th, self.Hthd[0], self.xa, self.F
        a0h = self.Ha0
        a0p = 2.0 * a0h[0] - a0h[1] if self.nh > 1 and self.base_prediction == "linear" else a0h[0].copy()
        thb = th + h * thd + h * h * (0.5 - be) * xa
        thdb = thd + h * (1.0 - ga) * xa
        mask = self._mask

        K = cs.K
        weighted = int(self.weighted)

        def residual(x):
            self._eval(t1, q0, v0, thb + be * h * h * x, thdb + ga * h * x, state, a0=a0p, solve_base=False)
            r = np.empty_like(x)
            K.chain_hht_residual(cs.ch_nb, cs.Mqq, cs.Myq, cs.Pq, a0p, x, Fn, al, weighted, r)
            return r

        def jacobian(x, r):
            H = np.zeros((n, NBS, NBS))
            for k in range(self.cs.nq):  # the k-th coordinate of every subsystem at once: independent given the base
                eps = 1e-6 * np.maximum(1.0, np.abs(x[:, k]))
                xk = x.copy()
                xk[:, k] += eps
                H[:, :, k] = (residual(xk) - r) / eps[:, None]
            H[:, :, :][np.broadcast_to(~mask[:, None, :], H.shape)] = 0.0
            H[:, :, :][np.broadcast_to(~mask[:, :, None], H.shape)] = 0.0
            H += self._pad  # identity on the coordinates a shorter chain does not have
            self.counters["jacobian_evals"] += 1
            self.counters["factorizations"] += 1
            return H

        conv = False
        it = 0
        dx = np.zeros_like(xa)
        for attempt in range(2):
            x = xa.copy()
            for it in range(1, self.newton_max_iter + 1):
                r = residual(x)
                if (self._H is None and it == 1) or attempt == 1:  # the retry is a full Newton: the tyres'
                    # slip law and the brakes' tanh saturate, where a chord taken on their steep part stalls
                    self._H = jacobian(x, r)
                K.chain_newton_update(cs.ch_nb, self._H, r, x, dx)
                self.counters["solves"] += 1
                if np.all(ga * h * np.abs(dx) <= self.newton_tol * (1.0 + np.abs(thdb))):
                    conv = bool(np.isfinite(x).all())
                    break
            if conv:
                if it > self.refresh_after:
                    self._H = None
                break
        if not conv:
            raise StepFailed(f"t = {t1:.6g} s: the subsystems' HHT Newton iteration did not converge in "
                             f"{self.newton_max_iter} iterations (integrator 'synthesis', explicit-implicit)")
        self.xa[:] = x
        return thb + be * h * h * x, thdb + ga * h * x, it


_AB = (np.array([1.0]), np.array([1.5, -0.5]), np.array([23.0, -16.0, 5.0]) / 12.0)


@nb.njit(cache=True, _nrt=False)
def prescribe_rows(ent, ent_r, ent_c, kind, xf, data, rhs):
    """Prescribe some unknowns of a step's KKT system (stored as its upper triangle, ``data``; entries ``ent``
    touch a prescribed unknown, at original row ``ent_r`` and column ``ent_c``): ``kind`` 1 a velocity fixed
    at ``xf``, 2 a constraint row whose multiplier is set to zero. Their couplings move to the free rows'
    right-hand side (``rhs_free -= A_free,fixed x_fixed``), their rows and columns become unit rows (+1 for a
    velocity, -1 for a multiplier: the matrix stays quasi-definite) and their right-hand side the value."""
    for e in range(ent.shape[0]):
        k = ent[e]
        r = ent_r[e]
        c = ent_c[e]
        fr = kind[r]
        fc = kind[c]
        if r == c:
            data[k] = 1.0 if fr == 1 else -1.0
        elif fr != 0 and fc != 0:
            data[k] = 0.0
        elif fr != 0:
            rhs[c] -= data[k] * xf[r]
            data[k] = 0.0
        else:
            rhs[r] -= data[k] * xf[c]
            data[k] = 0.0
    for i in range(kind.shape[0]):
        if kind[i] == 1:
            rhs[i] = xf[i]
        elif kind[i] == 2:
            rhs[i] = 0.0


def prescribed_entries(pattern, kind):
    """``(ent, ent_r, ent_c)`` of :func:`prescribe_rows`: the stored entries of a
    :class:`~trackdyn.linsolve.kkt.KKTPattern` that touch an unknown of nonzero ``kind`` (n,), with their
    original row and column. Every prescribed unknown needs its stored diagonal (ValueError otherwise)."""
    p = pattern
    cols = np.repeat(np.arange(p.n), np.diff(p.Ap))
    ent_r, ent_c = p.perm[p.Ai], p.perm[cols]
    touch = (kind[ent_r] != 0) | (kind[ent_c] != 0)
    diag = ent_r[touch] == ent_c[touch]
    missing = np.setdiff1d(np.nonzero(kind)[0], ent_r[touch][diag])
    if len(missing):
        raise ValueError(f"prescribed unknowns {missing[:5].tolist()}: the step matrix stores no diagonal there, "
                         "so they cannot be prescribed")
    return (np.nonzero(touch)[0].astype(np.int64), ent_r[touch].astype(np.int64),
            ent_c[touch].astype(np.int64))


class SynthesisTrackedStepper(SynthesisStepper):
    """The synthesis of a tracked vehicle: the chassis and its chain subsystems (road-arm units, sprockets,
    idler carriers) as :class:`SynthesisStepper` steps them, and the track loops -- bodies with no joint to
    them, coupled by contact only (``passive``) -- by an implicit Euler step of the whole absolute system in
    which every other body's velocity is prescribed (docs/synthesis.md, "The M113 on synthesis").

    One step, a staggered (Gauss-Seidel) coupling:

    1. the track bodies are held at their predicted pose ``q ⊕ h (v + h a)``, ``v + h a`` while AB3 advances
       the chassis and HHT (or AB3) the chains; so the wheels' contact with the track is implicit in the
       chains' Newton iteration, with the track where its last acceleration takes it;
    2. ``track`` (an :class:`~trackdyn.integrators.euler.EulerImplicitLinearized` on the same system) takes
       the links step of the track bodies with every other body's velocity at its synthesis value at
       t_{n+1} (:func:`prescribe_rows`: their rows of the KKT matrix become unit rows, their couplings move to
       the right-hand side), so the track sees the wheels where they are at the end of the step;
    3. the providers' history is committed once, and the synthesis evaluated at t_{n+1} with the track's new
       state gives the next step's rates.

    The track's constraint rows may not touch a non-track body (refused at construction, naming the joint):
    the only coupling across the partition is through forces.
    """

    name = "synthesis-tracked"

    def __init__(self, system, step, chains=None, base="chassis", passive=(), track_options=None, **options):
        from .euler import EulerImplicitLinearized

        if not passive:
            raise ValueError("integrator 'synthesis-tracked': needs the track bodies (passive) the fidelity gives")
        super().__init__(system, step, chains=chains, base=base, passive=passive, **options)
        self.track = track = EulerImplicitLinearized(system, step, **dict(track_options or {}))
        track.commit_step = False
        track.prescribe = self._prescribe
        nb_ = system.nb
        nd = 6 * nb_
        pas = np.zeros(nb_, bool)
        pas[self.cs.passive] = True
        self._pas = pas
        kind = np.zeros(system.pattern.n, np.int8)
        for b in np.nonzero(~pas)[0]:
            kind[6 * b:6 * b + 6] = 1
        rb = system.row_body
        for r in range(system.nc):
            inside = [bool(pas[b]) for b in rb[r] if b >= 0]
            if all(inside):
                continue
            if any(inside):
                jn = system.joint_names[system.row_joint[r]]
                raise ValueError(f"integrator 'synthesis-tracked': joint {jn!r} ties a track body to a body of the "
                                 "synthesis; the track loops may touch the rest only through forces")
            kind[nd + r] = 2
        self._ent, self._ent_r, self._ent_c = prescribed_entries(system.pattern, kind)
        self._kind = kind
        self._xf = np.zeros(system.pattern.n)
        self.options["track"] = track.name

    def _prescribe(self, data, rhs):
        prescribe_rows(self._ent, self._ent_r, self._ent_c, self._kind, self._xf, data, rhs)

    def _hold(self, q, v):
        """The track bodies' rows of the synthesis' pose buffers."""
        p = self.cs.passive
        self.cs.q[p] = q[p]
        self.cs.v[p] = v[p]

    def _step_impl(self, state):
        from ..mbs._kernels import advance_positions

        if self._key != (state.t, id(state.q)):
            self._hold(state.q, state.v)
            self._begin(state)
            self._key = (state.t, id(state.q))
        p, h = self.cs.passive, self.h
        vp = state.v[p] + h * state.acc[p]
        qp = np.empty((len(p), 7))
        advance_positions(np.ascontiguousarray(state.q[p]), vp, h, qp)
        self.cs.q[p] = qp
        self.cs.v[p] = vp
        tr = self.track
        before = dict(tr.timing)
        new = super()._step_impl(state)
        for k, t in tr.timing.items():  # the track's stages, out of the synthesis' "update"
            d = t - before.get(k, 0.0)
            self.timing[k] = self.timing.get(k, 0.0) + d
            self.timing["update"] -= d
        self.last["pos_violation"] = tr.last["pos_violation"]
        return new

    def _new_state(self, state, t1, q0, v0, th1, thd1):
        # the synthesis' bodies at t_{n+1}: their velocities prescribed to the shoes' Euler step (which returns
        # them exactly), their positions the synthesis' own (Euler's q ⊕ h v differs from AB3/HHT's)
        q, v = self.cs.pose(q0, v0, th1, thd1, q=state.q.copy(), v=state.v.copy())
        self._xf[:6 * self.system.nb] = v.reshape(-1)
        new = self.track._step_impl(state)
        free = ~self._pas
        new.q[free] = q[free]
        self._hold(new.q, new.v)
        return new
