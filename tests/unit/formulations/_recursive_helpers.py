"""What the recursive formulations' tests share: the absolute reference, random joint states and runs side by side.

Used by ``test_recursive.py`` (planar), ``test_recursive_abm.py`` and ``test_recursive_spatial.py``; the models
themselves come from :mod:`trackdyn.testing.problems` or stay in the test that uses them.
"""

from __future__ import annotations

import warnings

import numpy as np

from trackdyn.formulations.absolute import AbsoluteSystem, RedundantConstraintWarning
from trackdyn.integrators import make_integrator
from trackdyn.integrators.recursive import RecursiveABM, RecursiveRK4


def quiet(cls, model):
    """``cls(model)`` with its redundant-row warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RedundantConstraintWarning)
        return cls(model)


def absolute(model):
    """The absolute formulation of ``model`` (the reference), redundant rows removed silently."""
    return quiet(AbsoluteSystem, model)


def dense_mass(a):
    """The absolute system's block-diagonal mass matrix (6 nb, 6 nb)."""
    M = np.zeros((6 * a.nb, 6 * a.nb))
    for b in range(a.nb):
        M[6 * b:6 * b + 3, 6 * b:6 * b + 3] = a.mass[b] * np.eye(3)
        M[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = a.inertia[b]
    return M


def absolute_accelerations(a, qa, va, with_lam=False):
    """Body accelerations of the absolute index-1 system [[M, Jᵀ], [J, 0]] [v̇; λ] = [f; γ] (dense); with
    ``with_lam`` also its multipliers."""
    a.update_kinematics(qa, va)
    a.update_drivers(0.0)
    a.eval_constraints(want_gamma=True)
    f = a.eval_forces(0.0, va, 0.0, 0.0, np.zeros(a.pattern.nnz)).ravel().copy()
    M, J = dense_mass(a), a.dense_jacobian()
    nd = 6 * a.nb
    K = np.zeros((nd + a.nc, nd + a.nc))
    K[:nd, :nd], K[:nd, nd:], K[nd:, :nd] = M, J.T, J
    sol = np.linalg.solve(K, np.concatenate([f, a.gamma]))
    if with_lam:
        return sol[:nd].reshape(a.nb, 6), sol[nd:]
    return sol[:nd].reshape(a.nb, 6)


def random_state(sys, seed, scale=0.3):
    """Joint coordinates ``scale`` N(0, 1) and rates N(0, 1), off the closure manifold."""
    rng = np.random.default_rng(seed)
    return scale * rng.normal(size=sys.n), rng.normal(size=sys.n)


def manifold_state(sys, seed, scale=0.05):
    """:func:`random_state` projected on the closure manifold."""
    q, qd = random_state(sys, seed, scale)
    sys.project(q, qd)
    return q, qd


def lockstep(ia, ib, sa, sb, steps, closure=None):
    """``steps`` steps of two integrators side by side from ``sa``, ``sb``: the largest centre-of-mass distance
    between their states (m), the largest ``closure(q)`` of the first's joint coordinates after every step (0
    without ``closure``) and the final states."""
    err = worst = 0.0
    for _ in range(steps):
        sa, sb = ia.step(sa), ib.step(sb)
        err = max(err, float(np.max(np.linalg.norm(sa.q[:, :3] - sb.q[:, :3], axis=1))))
        if closure is not None:
            worst = max(worst, closure(sa.extra["recursive.q"]))
    return err, worst, sa, sb


def run_against_absolute(sys, model, t_end, h, closure=None):
    """Recursive RK4 (projected closure) on ``sys`` and the absolute RK4 (coordinate partitioning) on ``model``
    side by side over ``t_end``: :func:`lockstep`'s distance, closure and final recursive state."""
    a = absolute(model)
    err, worst, sr, _ = lockstep(RecursiveRK4(sys, h), make_integrator("rk4", a, h), sys.initial_state(),
                                 a.initial_state(), round(t_end / h), closure)
    return err, worst, sr


def simulate(model, sys, stepper, t_end=0.05):
    """``td.Simulation`` of ``sys`` with ``recursive-rk4`` (h = 1e-4) or ``recursive-abm`` (1 ms, rtol 1e-9)
    recording every 10 ms: the simulation and its result, checked complete."""
    import trackdyn as td

    cls, kw = (RecursiveRK4, {}) if stepper == "rk4" else (RecursiveABM, {"rtol": 1e-9, "atol": 1e-12})
    sim = td.Simulation(model, integrator=cls, system=sys, step=1e-3 if stepper == "abm" else 1e-4,
                        output_step=0.01, **kw)
    r = sim.run(t_end)
    assert r.status == "complete" and len(r.t) == round(t_end / 0.01) + 1
    return sim, r


def projected_absolute(sys, a, q, qd):
    """``(M, Bᵀ M_abs B, Q, Bᵀ (f_abs − M_abs Ḃq̇), B)`` at (q, q̇): the recursive mass matrix and forces, and the
    absolute ones projected through the velocity map B (the absolute system left at the mapped state)."""
    qa, va, aa0 = sys.to_absolute(q, qd, np.zeros(sys.n))
    B = sys.velocity_map(q)
    a.update_kinematics(qa, va)
    Mabs = dense_mass(a)
    f = a.eval_forces(0.0, va, 0.0, 0.0, np.zeros(a.pattern.nnz)).ravel().copy()
    return sys.mass_matrix(q), B.T @ Mabs @ B, sys.generalized_forces(0.0, q, qd), B.T @ (f - Mabs @ aa0.ravel()), B


def velocity_product_and_differences(sys, q, qd, eps=1e-6):
    """Ḃq̇ (the absolute accelerations at q̈ = 0, eq. 6's D) and d/dε B(q + ε q̇) q̇ by central differences."""
    _, _, a0 = sys.to_absolute(q, qd, np.zeros(sys.n))
    fd = (sys.to_absolute(q + eps * qd, qd)[1] - sys.to_absolute(q - eps * qd, qd)[1]) / (2 * eps)
    return a0, fd


def closure_differences(sys, q, eps=1e-6):
    """Φ_q (nc, n) by central differences of :meth:`closure`."""
    fd = np.zeros((sys.nc, sys.n))
    for k in range(sys.n):
        dq = np.zeros(sys.n)
        dq[k] = eps
        fd[:, k] = (sys.closure(q + dq)[0].copy() - sys.closure(q - dq)[0].copy()) / (2 * eps)
    return fd


def accelerations_against_absolute(sys, a, seed):
    """``(acc, ref)``: the body accelerations of the recursive pass (with the cut multipliers) at a state on the
    closure manifold, and the absolute KKT's at its absolute image."""
    q, qd = manifold_state(sys, seed)
    qdd, _ = sys.accelerations(0.0, q, qd)
    qa, va, aa = sys.to_absolute(q, qd, qdd)
    return aa, absolute_accelerations(a, qa, va)


def joint_rate_trace(system, k, h, t_end):
    """(t, q̇_k) of ``system``'s joint coordinate k over ``t_end`` under ``RecursiveRK4`` at step h (a disc's
    speed in the brake and servo tests)."""
    stepper = RecursiveRK4(system, h)
    st = system.initial_state()
    ts, ws = [0.0], [float(st.extra["recursive.qd"][k])]
    for _ in range(int(round(t_end / h))):
        st = stepper.step(st)
        ts.append(st.t)
        ws.append(float(st.extra["recursive.qd"][k]))
    return np.array(ts), np.array(ws)
