"""Variable-step Adams-Bashforth-Moulton predictor-corrector (han-sander-mao §3.6).

The index-1 form ``ẋ = L(x) v``, ``v̇ = a`` (see :mod:`.explicit`) is advanced
by a PECE pair on a non-uniform grid, in the chart centred at the current
point ``t_n`` (past points mapped exactly, ``x_j = q_n ⊖ q_j``):

- predictor (Adams-Bashforth, ``m`` past points, order ``m``):
  ``y^p = y_n + ∫_{t_n}^{t_n+H} P(t) dt`` with ``P`` interpolating ``ẏ`` at
  ``t_n, …, t_{n−m+1}``;
- evaluate ``ẏ`` at the (made consistent) predicted point;
- corrector (Adams-Moulton, the same points plus the predicted one, order
  ``m + 1``), accepted as the new value (local extrapolation);
- evaluate at the corrected point (its accelerations and multipliers go into
  the state and the history).

The weights are the integrals of the Lagrange basis over ``[t_n, t_n + H]``,
computed from the actual (non-uniform) node times. The local error of the
order-``m`` predictor is estimated by ``y^c − y^p`` on the *independent*
coordinates only (chart positions and velocities selected by the coordinate
partitioning; all of them under Baumgarte) in the max norm scaled by
``atol + rtol·|y|``, with ``|y|`` the world position for translations, 1 rad
for rotations and ``|v|`` for velocities. A step is accepted when that error
is at most 1; the next step is ``H · min(2, max(0.2, 0.9 err^{−1/(m+1)}))``.
The order starts at 1 and grows by one per accepted step up to ``order``.

``Simulation``'s ``step`` is the interval at which the integrator returns a
state: inside it the scheme takes as many internal steps as its error control
asks for, the last ones stretched equally so that it lands on the interval's
end. Choose ``step`` equal to the output interval.
"""

from __future__ import annotations

import math

import numpy as np

from ..mbs.model import State
from ._chart_kernels import chart_log, chart_rate
from ._constraints import CoordinatePartitioning, PartitionFailed
from .base import StepFailed
from .explicit import ChartScheme
from ._scheme import check_int, check_positive

__all__ = ["ABM", "adams_march", "adams_weights", "initial_step"]


def adams_weights(nodes) -> np.ndarray:
    """Weights ``w`` with ``∫_0^1 p(s) ds = Σ w_j p(s_j)`` for every polynomial of degree < len(nodes).

    ``nodes`` are times relative to ``t_n`` in units of the step (``s_j = (t_j − t_n)/H``).
    """
    s = np.asarray(nodes, dtype=float)
    m = len(s)
    V = np.vander(s, m, increasing=True).T  # V[k, j] = s_j^k
    rhs = 1.0 / np.arange(1, m + 1)
    return np.linalg.solve(V, rhs)


def initial_step(d0: float, d1: float, d2_at, max_step: float) -> float:
    """Starting step of an order-1 start (Hairer, Nørsett & Wanner, Solving ODEs I, §II.4): ``d0``, ``d1`` the
    scaled norms of y and ẏ, ``d2_at(h0)`` that of the second derivative estimated by one Euler step of h0."""
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    h0 = min(h0, max_step)
    big = max(d1, d2_at(h0))
    h1 = max(1e-6, h0 * 1e-3) if big <= 1e-15 else (0.01 / big) ** 0.5
    return min(100.0 * h0, h1, max_step)


def adams_march(hist, hc: float, t_end: float, order: int, max_step: float, attempt, lam, name: str = "abm"):
    """The step-size loop of the Adams PECE schemes, from the newest point of ``hist`` to ``t_end``.

    ``hist = (t, q, v, a)``, newest first (at most ``order`` points); ``hc`` the proposed step.
    ``attempt(hist, H) -> (err, m, point)`` tries one step of size H (``point = (t1, q1, v1, a1, lam)``, or None
    when rejected). Each try takes ``n = ceil(remaining / min(hc, max_step))`` equal steps' first, so that the
    last ones land on ``t_end`` exactly; the next step is ``H min(2, max(0.2, 0.9 err^(-1/(m+1))))`` (no growth
    right after a rejection). Returns ``(hist, hc, lam, accepted, rejected)``, ``accepted`` a list of
    ``(t1, H)`` of the accepted steps.
    """
    t = float(hist[0][0])
    grow_limit = 2.0
    accepted, rejected = [], 0
    while t < t_end:
        remaining = t_end - t
        n = max(1, math.ceil(remaining / min(hc, max_step) - 1e-9))
        H = remaining / n
        if H <= 1e-14 * max(1.0, abs(t)):
            raise StepFailed(f"t = {t:.6g} s: {name} step size underflow ({H:.3g} s)")
        err, m, point = attempt(hist, H)
        fac = 0.9 * err ** (-1.0 / (m + 1)) if err > 0 else grow_limit
        if point is None:
            rejected += 1
            hc = H * max(0.2, min(0.9, fac))
            grow_limit = 1.0
            continue
        if n == 1:
            point = (t_end,) + tuple(point[1:])  # land exactly (H = remaining already)
        t1, q1, v1, a1, lam = point
        k = order
        hist = (np.concatenate([[t1], hist[0][: k - 1]]), np.concatenate([q1[None], hist[1][: k - 1]]),
                np.concatenate([v1[None], hist[2][: k - 1]]), np.concatenate([a1[None], hist[3][: k - 1]]))
        new_h = H * max(0.2, min(grow_limit, fac))
        hc = max(hc, new_h) if (H < hc and fac >= 1.0) else new_h
        grow_limit = 2.0
        t = t1
        accepted.append((t1, H))
    return hist, hc, lam, accepted, rejected


class ABM(ChartScheme):
    """Variable-step Adams-Bashforth-Moulton PECE with error control (see the module docstring).

    Options
    -------
    rtol, atol : float
        Local error tolerances on the independent coordinates (defaults 1e-6,
        1e-8; han-sander-mao used rtol 1e-9). atol is in m, rad, m/s, rad/s.
    order : int
        Largest predictor order m (1-8, default 4; corrector m + 1).
    first_step : float, optional
        First internal step, s (default: estimated from the initial derivatives).
    max_step : float, optional
        Largest internal step, s (default: the simulation step).
    solver, constraints, constraint_tol, constraint_max_iter, baumgarte_frequency, baumgarte_damping
        As for :class:`~trackdyn.integrators.explicit.ChartScheme`.

    Counters add ``substeps`` (accepted internal steps) and ``rejected``.
    """

    name = "abm"

    def __init__(self, system, step, solver="direct", rtol=1e-6, atol=1e-8, order=4, first_step=None,
                 max_step=None, constraints="partitioning", constraint_tol=1e-12, constraint_max_iter=12,
                 baumgarte_frequency=10.0, baumgarte_damping=1.0, **solver_options):
        owner = f"integrator {self.name!r}"
        self.rtol = check_positive(owner, "rtol", rtol, allow_zero=True)
        self.atol = check_positive(owner, "atol", atol)
        self.order = check_int(owner, "order", order, 1, 8)
        self.first_step = None if first_step is None else check_positive(owner, "first_step", first_step)
        self.max_step = float(step) if max_step is None else check_positive(owner, "max_step", max_step)
        super().__init__(system, step, solver, solver_options, constraints, constraint_tol, constraint_max_iter,
                         baumgarte_frequency, baumgarte_damping, rtol=self.rtol, atol=self.atol, order=self.order,
                         first_step=self.first_step, max_step=self.max_step)
        self.counters["substeps"] = 0
        self.counters["rejected"] = 0
        nb_ = system.nb
        self._rot = np.zeros((nb_, 6), dtype=bool)
        self._rot[:, 3:] = True
        self._rot = self._rot.ravel()

    # ------------------------------------------------------------------ error norm
    def _scales(self, r0, x1, v0, v1):
        """atol + rtol|y| per chart position and velocity coordinate (flattened, nb*6 each).

        ``r0`` (nb, 6): world positions in the chart layout (zeros in the
        rotation slots); ``x1``: chart increment of the new point.
        """
        pos = np.abs(r0.ravel())
        pos = np.maximum(pos, np.abs(r0.ravel() + x1.ravel()))
        pos[self._rot] = 1.0
        sx = self.atol + self.rtol * pos
        sv = self.atol + self.rtol * np.maximum(np.abs(v0.ravel()), np.abs(v1.ravel()))
        return sx, sv

    def _norm(self, ex, ev, sx, sv) -> float:
        """Max over the independent coordinates of |e|/scale."""
        ind = self.treat.independent
        if len(ind) == 0:
            return 0.0
        return float(max(np.max(np.abs(ex.ravel()[ind]) / sx[ind]), np.max(np.abs(ev.ravel()[ind]) / sv[ind])))

    @staticmethod
    def _pos6(q):
        """Per body (r, 0, 0, 0): world positions in the layout of chart coordinates."""
        out = np.zeros((q.shape[0], 6))
        out[:, :3] = q[:, :3]
        return out

    # ------------------------------------------------------------------ steps
    def _initial_step(self, t, q0, v0, a0, state):
        """Starting step for order 1 (Hairer, Nørsett & Wanner, Solving ODEs I, §II.4), independent coordinates."""
        nb_ = self.system.nb
        if len(self.treat.independent) == 0:
            return self.max_step
        r6 = self._pos6(q0)
        zero = np.zeros((nb_, 6))
        sx, sv = self._scales(r6, zero, v0, v0)
        d1 = self._norm(v0, a0, sx, sv)

        def d2_at(h0):
            dx1 = np.zeros((nb_, 6))
            a1 = np.zeros((nb_, 6))
            self.treat.begin_step(t, q0, v0)
            self._evaluate(t + h0, q0, h0 * v0, v0 + h0 * a0, dx1, a1, state)
            return self._norm(dx1 - v0, a1 - a0, sx, sv) / h0

        return initial_step(self._norm(r6, v0, sx, sv), d1, d2_at, self.max_step)

    def _attempt(self, hist, H, state):
        """One PECE step of size H from hist[0]; returns (err, point or None)."""
        ht, hq, hv, ha = hist
        t, q0, v0 = ht[0], hq[0], hv[0]
        m = min(self.order, len(ht))
        nb_ = self.system.nb
        self.treat.begin_step(t, q0, v0)
        nodes = (ht[:m] - t) / H
        wp = adams_weights(nodes)
        wc = adams_weights(np.concatenate([[1.0], nodes]))
        dxs = [v0]
        xj = np.zeros((nb_, 6))
        for j in range(1, m):
            chart_log(q0, hq[j], xj)
            d = np.zeros((nb_, 6))
            chart_rate(xj, hv[j], d)
            dxs.append(d)
        x = np.zeros((nb_, 6))
        v = v0.copy()
        for j in range(m):
            x += (H * wp[j]) * dxs[j]
            v += (H * wp[j]) * ha[j]
        xp, vp = x.copy(), v.copy()
        self._lap("update")
        dxp = np.zeros((nb_, 6))
        ap = np.zeros((nb_, 6))
        self._evaluate(t + H, q0, x, v, dxp, ap, state)
        xc = (H * wc[0]) * dxp
        vc = v0 + (H * wc[0]) * ap
        for j in range(m):
            xc += (H * wc[j + 1]) * dxs[j]
            vc += (H * wc[j + 1]) * ha[j]
        sx, sv = self._scales(self._pos6(q0), xc, v0, vc)
        err = self._norm(xc - xp, vc - vp, sx, sv)
        self._lap("update")
        if err > 1.0:
            return err, m, None
        a1 = np.zeros((nb_, 6))
        lam, q1 = self._evaluate(t + H, q0, xc, vc, np.zeros((nb_, 6)), a1, state)
        return err, m, (t + H, q1, vc.copy(), a1, lam)

    def _history(self, state):
        ex = state.extra
        ht = ex.get("abm.t")
        if ht is None or float(ht[0]) != state.t or not np.array_equal(ex["abm.q"][0], state.q):
            return None
        return (ht, ex["abm.q"], ex["abm.v"], ex["abm.a"]), float(ex["abm.h"][0]), ex["abm.lam"]

    def _step_impl(self, state: State) -> State:
        t_end = state.t + self.h
        found = self._history(state)
        if found is None:
            q0, v0, a0, lam = self._start_point(state)
            hist = (np.array([state.t]), q0[None], v0[None], a0[None])
            hc = self.first_step if self.first_step is not None else self._initial_step(state.t, q0, v0, a0, state)
        else:
            hist, hc, lam = found

        def attempt(hist, H):
            for k in range(3):
                try:
                    return self._attempt(hist, H, state)
                except PartitionFailed as e2:
                    if not isinstance(self.treat, CoordinatePartitioning) or k == 2:
                        raise StepFailed(f"t = {float(hist[0][0]):.6g} s: {e2}") from None
                    self.treat.refactor_at(float(hist[0][0]), hist[1][0], hist[2][0], repartition=k == 1)

        hist, hc, lam, accepted, rejected = adams_march(hist, hc, t_end, self.order, self.max_step, attempt, lam)
        n_sub = len(accepted)
        self.counters["rejected"] += rejected
        self.counters["substeps"] += n_sub
        self.counters["iterations"] += n_sub
        self.last["iterations"] = n_sub
        self.last["step_size"] = float(hc)
        extra = dict(state.extra)
        extra["abm.t"], extra["abm.q"], extra["abm.v"], extra["abm.a"] = hist
        extra["abm.h"] = np.array([hc])
        extra["abm.lam"] = lam
        new = self._finish(state, t_end, hist[1][0].copy(), hist[2][0].copy(), hist[3][0].copy(), lam, extra)
        self._lap("update")
        return new
