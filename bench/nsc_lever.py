"""Does keeping the joints exact pay? NSC contact iterations with the joints eliminated by the sparse
factorisation (trackdyn's ``nsc-euler``) against projected Gauss-Seidel over all unknowns, joints and
contacts together (Chrono's NSC with PSOR), issue #29.

A chain of k capsule links joined by revolute joints lies on flat ground (2k contacts, 5(k-1) joint rows);
a beam of k welded links rests on the ground by its two end links (4 contacts, 6(k-1) joint rows, the
joints carry the span). After it has settled, one step's problem is solved both ways from a cold start (no warm start), by block
PSOR, until the new velocities are within 1e-6 m/s of the exact step. The exact step is the lever
method converged to 1e-13 m/s. Reported: sweeps, wall time of the sweeps, and the joints' velocity
violation ``|J v⁺ + b|`` left by the all-unknowns sweeps.

Usage: python bench/nsc_lever.py [k ...]   (default 8 32 64); prints one JSON object.
"""

import json
import sys
import time

import numba as nb
import numpy as np

import trackdyn as td
import trackdyn.integrators.nsc as INS
from trackdyn import terrain
from trackdyn.contact import Material, shapes
from trackdyn.contact import _nsc_kernels as NK
from trackdyn.contact.nsc import NscContact


@nb.njit(cache=True)
def _psor_all(W, r, n_bil, mu, x, ref_v, V, tol, max_sweeps, check):
    """Block PSOR on W x + r over n_bil free rows (joints) then 3-row cone blocks (contacts); stops when the
    velocities V x (+ the free velocity, folded into ref_v) are within tol of ref_v. Returns sweeps."""
    n = x.shape[0]
    m = (n - n_bil) // 3
    for it in range(1, max_sweeps + 1):
        for i in range(n_bil):
            s = r[i]
            for j in range(n):
                s += W[i, j] * x[j]
            x[i] -= s / W[i, i]
        for c in range(m):
            o = n_bil + 3 * c
            big = 0.0
            for a in range(3):
                row = 0.0
                for b in range(3):
                    row += abs(W[o + a, o + b])
                big = max(big, row)
            w0 = r[o]
            w1 = r[o + 1]
            w2 = r[o + 2]
            for j in range(n):
                w0 += W[o, j] * x[j]
                w1 += W[o + 1, j] * x[j]
                w2 += W[o + 2, j] * x[j]
            g0 = x[o] - w0 / big
            g1 = x[o + 1] - w1 / big
            g2 = x[o + 2] - w2 / big
            sn = np.sqrt(g1 * g1 + g2 * g2)
            if sn <= mu[c] * g0:
                pass
            elif mu[c] * sn <= -g0:
                g0 = g1 = g2 = 0.0
            else:
                a0 = (g0 + mu[c] * sn) / (1.0 + mu[c] * mu[c])
                g1 *= mu[c] * a0 / sn
                g2 *= mu[c] * a0 / sn
                g0 = a0
            x[o] = g0
            x[o + 1] = g1
            x[o + 2] = g2
        if it % check == 0:
            err = 0.0
            for k in range(V.shape[0]):
                s = -ref_v[k]
                for j in range(n):
                    s += V[k, j] * x[j]
                err = max(err, abs(s))
            if err <= tol:
                return it
    return max_sweeps


def all_unknowns(s, cs, mc, state0, h, vmax, r, v_free):
    """Chrono's all-unknowns problem of the step from ``state0``: ``W = A M⁻¹ Aᵀ``, ``A = [J; D]`` on (joint
    impulses, contact impulses), forces explicit. ``r`` the lever's contact bias ``D v_free + b``. Returns
    (J, D, A, W, V, v_unc, b_joint, r_all): dense J (joint rows, 6 nb) and D (3 mc, 6 nb), ``V = M⁻¹ Aᵀ``
    (``v⁺ = v_unc + V x``) and the right-hand side ``W x + r_all``. Leaves the system at the step's start."""
    nd = 6 * s.nb
    s.load_step(state0)
    s.update_kinematics(s.q_step, s.v_step)
    s.eval_constraints(want_gamma=False)
    Jd = s.dense_jacobian()
    Dd = np.zeros((3 * mc, nd))
    for i in range(mc):
        for side in range(2):
            b = cs.c_body[i, side]
            if b >= 0:
                Dd[3 * i:3 * i + 3, 6 * b:6 * b + 6] = cs.c_D[i, :, 6 * side:6 * side + 6]
    Minv = np.zeros((nd, nd))
    for b in range(s.nb):
        Minv[6 * b:6 * b + 3, 6 * b:6 * b + 3] = np.eye(3) / s.mass[b]
        Minv[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = np.linalg.inv(s.inertia[b])
    A = np.vstack([Jd, Dd])
    W = A @ Minv @ A.T
    s.eval_forces(state0.t, s.v_step, h * h, h, s.data, state0, h, 1.0)
    v_unc = state0.v.ravel() + h * Minv @ s.f.ravel()
    b_joint = np.clip(s.phi / h, -vmax, vmax)
    b_contact = r - Dd @ v_free
    r_all = A @ v_unc + np.concatenate([b_joint, b_contact])
    return Jd, Dd, A, W, Minv @ A.T, v_unc, b_joint, r_all


def chain(k, kind, link=0.2, r=0.02):
    """"chain": k links pinned end to end, all lying on the ground; "beam": k links welded (Fixed joints),
    resting on the ground by its two end links only (the joints carry the span's bending)."""
    m = td.Model()
    mat = Material("steel", friction=0.5)
    nsc = NscContact(m, terrain=terrain.Flat(material=mat))
    prev = None
    for i in range(k):
        b = m.add_body(f"link{i}", mass=1.0, inertia=[1e-4, 4e-3, 4e-3], pos=[(i + 0.5) * link, 0, r])
        if kind == "chain" or i in (0, k - 1):
            nsc.add_shape(b, shapes.Capsule(r, link, axis=[1, 0, 0]), material=mat)
        if prev is not None:
            joint = td.Revolute(prev, b, point=[i * link, 0, r], axis=[0, 1, 0], name=f"pin{i}") if kind == "chain" \
                else td.Fixed(prev, b, point=[i * link, 0, r], name=f"weld{i}")
            m.add_joint(joint)
        prev = b
    return m, nsc


def measure(k, kind="chain", h=1e-3):
    m, nsc = chain(k, kind)
    sim = td.Simulation(m, integrator="nsc-euler", step=h, providers=[nsc], monitor=False, contact_solver="psor",
                        contact_tolerance=1e-12, contact_max_iterations=200000)
    for _ in range(20):
        sim.step()
    s, st = sim.system, sim.integrator
    captured = {}
    orig = INS.solve_ccp

    def spy(method, mm, mu, eta, r, gamma, u, **kw):
        captured.update(m=mm, mu=mu.copy(), eta=eta.copy(), r=r.copy(), N=kw["N"].copy())
        return orig(method, mm, mu, eta, r, gamma, u, **kw)

    INS.solve_ccp = spy
    try:
        state0 = sim.state.copy()
        sim.step()
    finally:
        INS.solve_ccp = orig
    v_exact = sim.state.v.ravel().copy()
    mc, mu, N, r = captured["m"], captured["mu"], captured["N"], captured["r"]
    # the lever: PSOR on N from a cold start, sweeps until v⁺ is within 1e-6 of the exact step
    cs = nsc
    nd = 6 * s.nb
    # v⁺(γ) = v_free + G Dᵀ γ: the columns G Dᵀ from the dense N's construction (solve per column)
    GD = np.empty((nd, 3 * mc))
    rhs = np.zeros(nd + s.nc)
    out = np.empty(nd + s.nc)
    unit = np.zeros(3 * mc)
    for j in range(3 * mc):
        rhs[:] = 0.0
        unit[j] = 1.0
        NK.scatter_Dt(j // 3, j // 3 + 1, cs.c_body, cs.c_D, NK.NO_PERM, unit, rhs)
        unit[j] = 0.0
        st.solver.solve(rhs, out)
        GD[:, j] = out[:nd]
    v_free = st.x[:nd] - st.x_c[:nd]  # x = x_free + x_c of the step just taken
    gamma = np.zeros(3 * mc)
    u = np.empty(3 * mc)
    eta = captured["eta"]
    t0 = time.perf_counter()
    lever_sweeps = 0
    for sweeps in range(1, 200001):
        NK.psor(mc, np.zeros(mc, np.int64), N, r, mu, eta, gamma, u, 1.0, 0.0, 1, 1)
        if np.abs(v_free + GD @ gamma - v_exact).max() <= 1e-6:
            lever_sweeps = sweeps
            break
    lever_time = time.perf_counter() - t0
    Jd, _, _, W, V, v_unc, b_joint, r_all = all_unknowns(s, cs, mc, state0, h, st.vmax, r, v_free)
    x = np.zeros(s.nc + 3 * mc)
    t0 = time.perf_counter()
    all_sweeps = _psor_all(W, r_all, s.nc, mu, x, v_exact - v_unc, V, 1e-6, 200000, 1)
    all_time = time.perf_counter() - t0
    v_all = v_unc + V @ x
    joint_violation = float(np.abs(Jd @ v_all + b_joint).max())
    return {"model": kind, "links": k, "contacts": mc, "joint_rows": s.nc,
            "lever_sweeps": lever_sweeps, "lever_time_ms": 1e3 * lever_time,
            "all_unknowns_sweeps": int(all_sweeps), "all_unknowns_time_ms": 1e3 * all_time,
            "all_unknowns_joint_violation": joint_violation,
            "note": "cold start; sweeps to |v - v_exact| <= 1e-6 m/s; 200000 = not reached"}


if __name__ == "__main__":
    ks = [int(a) for a in sys.argv[1:]] or [8, 32, 64]
    measure(4)  # compiles the kernels outside the timings
    print(json.dumps([measure(k, kind) for kind in ("chain", "beam") for k in ks], indent=2))
