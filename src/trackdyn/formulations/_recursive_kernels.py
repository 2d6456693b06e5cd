"""Numba kernels of the planar recursive formulation (:mod:`trackdyn.formulations.recursive`).

Every node of the spanning tree is one body (or a massless virtual body of a
floating base) with one inboard joint of one degree of freedom; nodes are in
tree order (a parent before its children). Planar quantities are in the
plane's basis ``(e1, e2)`` with ``e1 × e2 = n`` (the joint axis): positions
``(n_node, 2)``, angles ``(n_node,)`` about ``n``, velocities
``Y = (ṙ1, ṙ2, ω)`` ``(n_node, 3)`` of the centre of mass (han-sander-mao
eq. 5). ``rot90(r) = n × r = (-r2, r1)``.

The transform of eq. (5), ``Y_j = B1 Y_i + B2 θ̇``, is applied without
forming B1: ``B1 Y = (Y[:2] + Y[2] rot90(r), Y[2])`` and
``B1ᵀ F = (F[:2], F[2] + r × F[:2])`` with ``r = r_j − r_i``.

The steps on the vector of joint coordinates, which do not depend on the
kinematics (the RK4 stages and update, the least-norm projection's Newton
and velocity corrections), are here too and serve the spatial kernels
(:mod:`._recursive_spatial_kernels`) as well.
"""

from __future__ import annotations

import math

import numba as nb

from ..linsolve._dense_kernels import gauss_solve

jit = nb.njit(cache=True, _nrt=False)
jit_inline = nb.njit(cache=True, _nrt=False, inline="always")

REVOLUTE = 0
PRISMATIC = 1


@jit_inline
def _from_parent(acc, i, r0, r1):
    """``B1 Y'_i``: parent i's acceleration (row i of ``acc`` (n, 3)) carried to the child's centre of mass,
    ``r = r_j − r_i`` (eq. 5's first term); zero for a ground parent (i < 0)."""
    if i < 0:
        return 0.0, 0.0, 0.0
    return acc[i, 0] - acc[i, 2] * r1, acc[i, 1] + acc[i, 2] * r0, acc[i, 2]


@jit
def forward_kinematics(q, qd, node_parent, joint_type, joint_sp, joint_sc, joint_dir, pos, ang, vel, bias, b2,
                       r_pc, joint_pt, joint_axis):
    """Recursive kinematics, root to leaves (han-sander-mao eqs. 1-6, Table 1 first row).

    Fills per node: ``pos`` (centre of mass), ``ang``, ``vel`` = Y, ``b2``
    (B2 of eq. 5), ``bias`` (D of eq. 6, the velocity-product acceleration),
    ``r_pc`` (r_j − r_i, for B1), ``joint_pt`` (joint point, world plane) and
    ``joint_axis`` (sliding direction of a prismatic joint, world plane).
    ``joint_sp`` / ``joint_sc``: joint point from the parent's / child's
    centre of mass in the body frames at zero angle; ``joint_dir``: the
    prismatic direction in the parent's frame.
    """
    n = q.shape[0]
    for j in range(n):
        i = node_parent[j]
        if i >= 0:
            pi0, pi1, ai = pos[i, 0], pos[i, 1], ang[i]
            vi0, vi1, wi = vel[i, 0], vel[i, 1], vel[i, 2]
        else:
            pi0, pi1, ai = 0.0, 0.0, 0.0
            vi0, vi1, wi = 0.0, 0.0, 0.0
        ci, si = math.cos(ai), math.sin(ai)
        sp0 = ci * joint_sp[j, 0] - si * joint_sp[j, 1]
        sp1 = si * joint_sp[j, 0] + ci * joint_sp[j, 1]
        c0, c1 = pi0 + sp0, pi1 + sp1
        joint_pt[j, 0], joint_pt[j, 1] = c0, c1
        if joint_type[j] == REVOLUTE:
            aj = ai + q[j]
            cj, sj = math.cos(aj), math.sin(aj)
            sc0 = cj * joint_sc[j, 0] - sj * joint_sc[j, 1]
            sc1 = sj * joint_sc[j, 0] + cj * joint_sc[j, 1]
            p0, p1 = c0 - sc0, c1 - sc1
            # B2 = (n × (r_j − c), 1)
            b2[j, 0], b2[j, 1], b2[j, 2] = sc1, -sc0, 1.0
            joint_axis[j, 0], joint_axis[j, 1] = 0.0, 0.0
        else:
            aj = ai
            d0 = ci * joint_dir[j, 0] - si * joint_dir[j, 1]
            d1 = si * joint_dir[j, 0] + ci * joint_dir[j, 1]
            sc0 = ci * joint_sc[j, 0] - si * joint_sc[j, 1]
            sc1 = si * joint_sc[j, 0] + ci * joint_sc[j, 1]
            p0, p1 = c0 + q[j] * d0 - sc0, c1 + q[j] * d1 - sc1
            b2[j, 0], b2[j, 1], b2[j, 2] = d0, d1, 0.0
            joint_axis[j, 0], joint_axis[j, 1] = d0, d1
        pos[j, 0], pos[j, 1], ang[j] = p0, p1, aj
        r0, r1 = p0 - pi0, p1 - pi1
        r_pc[j, 0], r_pc[j, 1] = r0, r1
        u = qd[j]
        v0 = vi0 - wi * r1 + u * b2[j, 0]
        v1 = vi1 + wi * r0 + u * b2[j, 1]
        w = wi + u * b2[j, 2]
        vel[j, 0], vel[j, 1], vel[j, 2] = v0, v1, w
        # D = d/dt(B1) Y_i + d/dt(B2) θ̇ (eq. 6): ω_i n × (v_j − v_i) plus the joint's own term
        dv0, dv1 = v0 - vi0, v1 - vi1
        D0, D1 = -wi * dv1, wi * dv0
        if joint_type[j] == REVOLUTE:
            # θ̇ n × (v_j − v_c), v_c the joint point's velocity on the parent
            vc0, vc1 = vi0 - wi * sp1, vi1 + wi * sp0
            D0 += -u * (v1 - vc1)
            D1 += u * (v0 - vc0)
        else:
            # θ̇ ω_i n × d (the direction turns with the parent)
            D0 += -u * wi * b2[j, 1]
            D1 += u * wi * b2[j, 0]
        bias[j, 0], bias[j, 1], bias[j, 2] = D0, D1, 0.0


@jit
def cut_points(cut_node, cut_s, pos, ang, cut_pw):
    """World (plane) vectors from each cut body's centre of mass to its cut point, ``cut_pw`` (n_cut, 2, 2)."""
    for k in range(cut_node.shape[0]):
        for side in range(2):
            b = cut_node[k, side]
            a = ang[b] if b >= 0 else 0.0
            c, s = math.cos(a), math.sin(a)
            cut_pw[k, side, 0] = c * cut_s[k, side, 0] - s * cut_s[k, side, 1]
            cut_pw[k, side, 1] = s * cut_s[k, side, 0] + c * cut_s[k, side, 1]


@jit
def articulated_solve(node_parent, b2, r_pc, bias, vel, node_mass, node_inertia, node_force, gravity, tau,
                      cut_node, cut_pw, drv_node, drv_acc, Ia, pA, Pl, U, dinv, u0, ul, acc0, accl, qdd0, qddl, G,
                      rhs, piv,
                      qdd, lam, acc):
    """Joint accelerations and cut-joint multipliers in O(n m): han-sander-mao Table 1 on a tree.

    Backward pass (eqs. 15-17): articulated inertia ``Ia`` (the paper's
    M + K), bias force ``pA`` (−(Q + L)) and, per cut row, the load column
    ``Pl`` (M̄ᵀ: how a unit multiplier reaches each body through its
    subtree). Forward pass (eq. 18 then eq. 6): joint and body
    accelerations with their affine dependence on λ (``qddl``, ``accl``).
    The cut-joint acceleration equations (eqs. 20-25) are then the m × m
    system ``G λ = rhs`` (G = −Φ_q M⁻¹ Φ_qᵀ, the paper's L̄), solved by
    Gaussian elimination with partial pivoting; ``qdd = qdd0 + qddl λ``.
    Driver rows (a prescribed joint coordinate, ``q_j = θ(t)``) follow the
    cut rows: row ``2 n_cut + d`` acts on node ``drv_node[d]`` as the joint
    force −λ and asks ``q̈_j = drv_acc[d]``.
    The equations are ``M q̈ + Φ_qᵀ λ = Q + τ`` with Q the applied forces
    (``node_force`` (n, 3) plus ``m g``) and ``τ`` the joint forces.
    A node whose parent is the ground has a fixed parent (Y = 0).
    """
    n = node_parent.shape[0]
    m = Pl.shape[2]
    ncut = cut_node.shape[0]
    for j in range(n):
        for a in range(3):
            for b in range(3):
                Ia[j, a, b] = 0.0
            for k in range(m):
                Pl[j, a, k] = 0.0
        Ia[j, 0, 0] = node_mass[j]
        Ia[j, 1, 1] = node_mass[j]
        Ia[j, 2, 2] = node_inertia[j]
        pA[j, 0] = -(node_mass[j] * gravity[0] + node_force[j, 0])
        pA[j, 1] = -(node_mass[j] * gravity[1] + node_force[j, 1])
        pA[j, 2] = -node_force[j, 2]
    # Φ_Zᵀ of each cut row (eqs. 11-12): body a gets +(I, n × s_a)ᵀ, body b the negative
    for k in range(ncut):
        for side in range(2):
            bd = cut_node[k, side]
            if bd < 0:
                continue
            sg = 1.0 if side == 0 else -1.0
            s0, s1 = cut_pw[k, side, 0], cut_pw[k, side, 1]
            Pl[bd, 0, 2 * k] += sg
            Pl[bd, 2, 2 * k] += -sg * s1
            Pl[bd, 1, 2 * k + 1] += sg
            Pl[bd, 2, 2 * k + 1] += sg * s0
    # ---------------------------------------------------------------- backward (leaves to root)
    for j in range(n - 1, -1, -1):
        for a in range(3):
            U[j, a] = Ia[j, a, 0] * b2[j, 0] + Ia[j, a, 1] * b2[j, 1] + Ia[j, a, 2] * b2[j, 2]
        d = b2[j, 0] * U[j, 0] + b2[j, 1] * U[j, 1] + b2[j, 2] * U[j, 2]
        dinv[j] = 1.0 / d
        IaD0 = Ia[j, 0, 0] * bias[j, 0] + Ia[j, 0, 1] * bias[j, 1] + Ia[j, 0, 2] * bias[j, 2]
        IaD1 = Ia[j, 1, 0] * bias[j, 0] + Ia[j, 1, 1] * bias[j, 1] + Ia[j, 1, 2] * bias[j, 2]
        IaD2 = Ia[j, 2, 0] * bias[j, 0] + Ia[j, 2, 1] * bias[j, 1] + Ia[j, 2, 2] * bias[j, 2]
        u0[j] = tau[j] - (b2[j, 0] * (IaD0 + pA[j, 0]) + b2[j, 1] * (IaD1 + pA[j, 1]) + b2[j, 2] * (IaD2 + pA[j, 2]))
        for k in range(m):
            ul[j, k] = -(b2[j, 0] * Pl[j, 0, k] + b2[j, 1] * Pl[j, 1, k] + b2[j, 2] * Pl[j, 2, k])
        for d in range(drv_node.shape[0]):
            if drv_node[d] == j:
                ul[j, 2 * ncut + d] -= 1.0
        i = node_parent[j]
        if i < 0:
            continue
        r0, r1 = r_pc[j, 0], r_pc[j, 1]
        # articulated inertia seen through the joint: Ia − U Uᵀ/d, then B1ᵀ (.) B1 (eq. 15)
        A00 = Ia[j, 0, 0] - U[j, 0] * U[j, 0] * dinv[j]
        A01 = Ia[j, 0, 1] - U[j, 0] * U[j, 1] * dinv[j]
        A02 = Ia[j, 0, 2] - U[j, 0] * U[j, 2] * dinv[j]
        A11 = Ia[j, 1, 1] - U[j, 1] * U[j, 1] * dinv[j]
        A12 = Ia[j, 1, 2] - U[j, 1] * U[j, 2] * dinv[j]
        A22 = Ia[j, 2, 2] - U[j, 2] * U[j, 2] * dinv[j]
        # B1 = [[1, 0, -r1], [0, 1, r0], [0, 0, 1]]; (A B1) column 2 = A[:,2] - r1 A[:,0] + r0 A[:,1]
        C0 = A02 - r1 * A00 + r0 * A01
        C1 = A12 - r1 * A01 + r0 * A11
        C2 = A22 - r1 * A02 + r0 * A12
        Ia[i, 0, 0] += A00
        Ia[i, 0, 1] += A01
        Ia[i, 1, 0] += A01
        Ia[i, 1, 1] += A11
        Ia[i, 0, 2] += C0
        Ia[i, 2, 0] += C0
        Ia[i, 1, 2] += C1
        Ia[i, 2, 1] += C1
        Ia[i, 2, 2] += C2 - r1 * C0 + r0 * C1
        # bias force (eq. 16): B1ᵀ (pA + Ia D + U u/d)
        f0 = pA[j, 0] + IaD0 + U[j, 0] * u0[j] * dinv[j]
        f1 = pA[j, 1] + IaD1 + U[j, 1] * u0[j] * dinv[j]
        f2 = pA[j, 2] + IaD2 + U[j, 2] * u0[j] * dinv[j]
        pA[i, 0] += f0
        pA[i, 1] += f1
        pA[i, 2] += f2 + r0 * f1 - r1 * f0
        # cut-row load columns (eq. 17): B1ᵀ (Pl + U ul/d)
        for k in range(m):
            g0 = Pl[j, 0, k] + U[j, 0] * ul[j, k] * dinv[j]
            g1 = Pl[j, 1, k] + U[j, 1] * ul[j, k] * dinv[j]
            g2 = Pl[j, 2, k] + U[j, 2] * ul[j, k] * dinv[j]
            Pl[i, 0, k] += g0
            Pl[i, 1, k] += g1
            Pl[i, 2, k] += g2 + r0 * g1 - r1 * g0
    # ---------------------------------------------------------------- forward (root to leaves)
    for j in range(n):
        i = node_parent[j]
        r0, r1 = r_pc[j, 0], r_pc[j, 1]
        y0, y1, y2 = _from_parent(acc0, i, r0, r1)
        x = (u0[j] - (U[j, 0] * y0 + U[j, 1] * y1 + U[j, 2] * y2)) * dinv[j]
        qdd0[j] = x
        acc0[j, 0] = y0 + b2[j, 0] * x + bias[j, 0]
        acc0[j, 1] = y1 + b2[j, 1] * x + bias[j, 1]
        acc0[j, 2] = y2 + b2[j, 2] * x + bias[j, 2]
        for k in range(m):
            y0, y1, y2 = _from_parent(accl[:, :, k], i, r0, r1)
            x = (ul[j, k] - (U[j, 0] * y0 + U[j, 1] * y1 + U[j, 2] * y2)) * dinv[j]
            qddl[j, k] = x
            accl[j, 0, k] = y0 + b2[j, 0] * x
            accl[j, 1, k] = y1 + b2[j, 1] * x
            accl[j, 2, k] = y2 + b2[j, 2] * x
    # ---------------------------------------------------------------- cut joints (eqs. 20-27)
    for k in range(ncut):
        for c in range(2):
            rhs[2 * k + c] = 0.0
            for l in range(m):
                G[2 * k + c, l] = 0.0
        for side in range(2):
            bd = cut_node[k, side]
            if bd < 0:
                continue
            sg = 1.0 if side == 0 else -1.0
            s0, s1 = cut_pw[k, side, 0], cut_pw[k, side, 1]
            w = vel[bd, 2]
            # point acceleration a + α n × s − ω² s
            rhs[2 * k] -= sg * (acc0[bd, 0] - acc0[bd, 2] * s1 - w * w * s0)
            rhs[2 * k + 1] -= sg * (acc0[bd, 1] + acc0[bd, 2] * s0 - w * w * s1)
            for l in range(m):
                G[2 * k, l] += sg * (accl[bd, 0, l] - accl[bd, 2, l] * s1)
                G[2 * k + 1, l] += sg * (accl[bd, 1, l] + accl[bd, 2, l] * s0)
    driver_accelerations(drv_node, drv_acc, 2 * ncut, qdd0, qddl, G, rhs)
    lu_solve_inplace(G, rhs, piv, lam)
    affine_in_multipliers(qdd0, qddl, acc0, accl, lam, qdd, acc)


@jit_inline
def driver_accelerations(drv_q, drv_acc, nrow, qdd0, qddl, G, rhs):
    """The driver rows of ``G λ = rhs`` after the ``nrow`` cut rows: ``q̈_k = drv_acc`` for ``k = drv_q``, with
    ``q̈ = qdd0 + qddl λ``."""
    for d in range(drv_q.shape[0]):
        r = nrow + d
        k = drv_q[d]
        rhs[r] = drv_acc[d] - qdd0[k]
        for l in range(G.shape[1]):
            G[r, l] = qddl[k, l]


@jit_inline
def affine_in_multipliers(qdd0, qddl, acc0, accl, lam, qdd, acc):
    """The joint and body accelerations at the multipliers λ: ``qdd = qdd0 + qddl λ``, ``acc = acc0 + accl λ``
    (any node width: 3 planar, 6 spatial)."""
    m = lam.shape[0]
    for k in range(qdd0.shape[0]):
        s = qdd0[k]
        for l in range(m):
            s += qddl[k, l] * lam[l]
        qdd[k] = s
    for j in range(acc0.shape[0]):
        for a in range(acc0.shape[1]):
            s = acc0[j, a]
            for l in range(m):
                s += accl[j, a, l] * lam[l]
            acc[j, a] = s


@jit
def lu_solve_inplace(A, b, piv, x):
    """x = A⁻¹ b (:func:`~trackdyn.linsolve._dense_kernels.gauss_solve` on all of A); A and b are overwritten,
    ``piv`` gets the identity (no permutation is kept)."""
    m = A.shape[0]
    for k in range(m):
        piv[k] = k
    gauss_solve(A, b, m, x)


@jit
def inverse_dynamics(node_parent, b2, r_pc, bias, node_mass, node_inertia, node_force, gravity, qdd, with_bias,
                     acc, F, tau):
    """τ = M(q) q̈ − Q(q, q̇) by the recursive Newton-Euler pass, O(n).

    Forward: Y' = B1 Y'_i + B2 q̈ (+ D when ``with_bias``); body force
    ``F = M Y' (− m g − node_force when with_bias)``; backward:
    ``τ_j = B2ᵀ F_j``, ``F_i += B1ᵀ F_j``. Without the bias terms this is
    the mass-matrix product ``τ = M(q) q̈`` (the cut joints do not enter).
    """
    n = node_parent.shape[0]
    for j in range(n):
        i = node_parent[j]
        r0, r1 = r_pc[j, 0], r_pc[j, 1]
        y0, y1, y2 = _from_parent(acc, i, r0, r1)
        x = qdd[j]
        acc[j, 0] = y0 + b2[j, 0] * x
        acc[j, 1] = y1 + b2[j, 1] * x
        acc[j, 2] = y2 + b2[j, 2] * x
        if with_bias:
            for a in range(3):
                acc[j, a] += bias[j, a]
        F[j, 0] = node_mass[j] * acc[j, 0]
        F[j, 1] = node_mass[j] * acc[j, 1]
        F[j, 2] = node_inertia[j] * acc[j, 2]
        if with_bias:
            F[j, 0] -= node_mass[j] * gravity[0] + node_force[j, 0]
            F[j, 1] -= node_mass[j] * gravity[1] + node_force[j, 1]
            F[j, 2] -= node_force[j, 2]
    for j in range(n - 1, -1, -1):
        tau[j] = b2[j, 0] * F[j, 0] + b2[j, 1] * F[j, 1] + b2[j, 2] * F[j, 2]
        i = node_parent[j]
        if i >= 0:
            r0, r1 = r_pc[j, 0], r_pc[j, 1]
            F[i, 0] += F[j, 0]
            F[i, 1] += F[j, 1]
            F[i, 2] += F[j, 2] + r0 * F[j, 1] - r1 * F[j, 0]


@jit
def closure(cut_node, cut_pw, pos, joint_type, joint_pt, joint_axis, cut_ptr, cut_col, cut_side, phi, Jval):
    """Cut-joint constraints Φ = (r_a + s_a) − (r_b + s_b) (eq. 10) and their Jacobian Φ_q, fixed pattern.

    For cut k the pattern (``cut_ptr[k]:cut_ptr[k+1]``) lists the joints on
    the paths from the root to body a and to body b (``cut_side`` bit 1: on
    a's path, bit 2: on b's path; a joint on both keeps both terms, which
    cancel only on the constraint manifold). A revolute joint at point c
    moves the cut point P by ``n × (P − c)`` per radian, a prismatic joint
    by its direction. ``Jval`` (nnz, 2): the two rows' entries.
    """
    for k in range(cut_node.shape[0]):
        a, b = cut_node[k, 0], cut_node[k, 1]
        Pa0, Pa1 = cut_pw[k, 0, 0], cut_pw[k, 0, 1]
        Pb0, Pb1 = cut_pw[k, 1, 0], cut_pw[k, 1, 1]
        if a >= 0:
            Pa0 += pos[a, 0]
            Pa1 += pos[a, 1]
        if b >= 0:
            Pb0 += pos[b, 0]
            Pb1 += pos[b, 1]
        phi[2 * k] = Pa0 - Pb0
        phi[2 * k + 1] = Pa1 - Pb1
        for e in range(cut_ptr[k], cut_ptr[k + 1]):
            j = cut_col[e]
            v0, v1 = 0.0, 0.0
            for side in range(2):
                if cut_side[e] & (1 << side):
                    sg = 1.0 if side == 0 else -1.0
                    P0 = Pa0 if side == 0 else Pb0
                    P1 = Pa1 if side == 0 else Pb1
                    if joint_type[j] == REVOLUTE:
                        v0 += -sg * (P1 - joint_pt[j, 1])
                        v1 += sg * (P0 - joint_pt[j, 0])
                    else:
                        v0 += sg * joint_axis[j, 0]
                        v1 += sg * joint_axis[j, 1]
            Jval[e, 0] = v0
            Jval[e, 1] = v1


@jit
def to_absolute(node_body, pos, ang, vel, acc, plane_e1, plane_e2, plane_n, body_offset, body_quat0, body_axis_b,
                q_abs, v_abs, a_abs):
    """Absolute body states (DESIGN.md's layout) from the planar ones.

    Position ``offset + r1 e1 + r2 e2`` (``offset`` the constant component
    along n), quaternion ``(cos φ/2, sin φ/2 n) ⊗ quat0``, world linear
    velocity and acceleration, body-frame angular velocity and acceleration
    ``ω a_b`` with ``a_b = R0ᵀ n`` (a rotation about n leaves n fixed).
    """
    for j in range(node_body.shape[0]):
        b = node_body[j]
        if b < 0:
            continue
        for a in range(3):
            q_abs[b, a] = body_offset[b, a] + pos[j, 0] * plane_e1[a] + pos[j, 1] * plane_e2[a]
            v_abs[b, a] = vel[j, 0] * plane_e1[a] + vel[j, 1] * plane_e2[a]
            v_abs[b, 3 + a] = vel[j, 2] * body_axis_b[b, a]
            a_abs[b, a] = acc[j, 0] * plane_e1[a] + acc[j, 1] * plane_e2[a]
            a_abs[b, 3 + a] = acc[j, 2] * body_axis_b[b, a]
        h = 0.5 * ang[j]
        c, s = math.cos(h), math.sin(h)
        w0, w1, w2, w3 = c, s * plane_n[0], s * plane_n[1], s * plane_n[2]
        e0, e1, e2, e3 = body_quat0[b, 0], body_quat0[b, 1], body_quat0[b, 2], body_quat0[b, 3]
        q_abs[b, 3] = w0 * e0 - w1 * e1 - w2 * e2 - w3 * e3
        q_abs[b, 4] = w0 * e1 + w1 * e0 + w2 * e3 - w3 * e2
        q_abs[b, 5] = w0 * e2 - w1 * e3 + w2 * e0 + w3 * e1
        q_abs[b, 6] = w0 * e3 + w1 * e2 - w2 * e1 + w3 * e0


# ---------------------------------------------------------------------------- steps on the joint coordinates
@jit_inline
def rk4_stage_point(st, h, q0, v0, a1, kq, kv, qs, vs):
    """The point ``(qs, vs)`` of RK4 stage ``st`` (0-2: at t + h/2, t + h/2, t + h) from ``(q0, v0)``, ``a1`` the
    first stage's q̈ and ``kq``, ``kv`` (3, n) the later stages' q̇, q̈ so far."""
    c = 0.5 * h if st < 2 else h
    for j in range(q0.shape[0]):
        if st == 0:
            dq, dv = v0[j], a1[j]
        else:
            dq, dv = kq[st - 1, j], kv[st - 1, j]
        qs[j] = q0[j] + c * dq
        vs[j] = v0[j] + c * dv


@jit_inline
def rk4_update(h, q0, v0, a1, kq, kv, q_out, v_out):
    """The classical RK4 update ``y + h/6 (k1 + 2 k2 + 2 k3 + k4)`` of ``(q, q̇)``."""
    w = h / 6.0
    for j in range(q0.shape[0]):
        q_out[j] = q0[j] + w * (v0[j] + 2.0 * kq[0, j] + 2.0 * kq[1, j] + kq[2, j])
        v_out[j] = v0[j] + w * (a1[j] + 2.0 * kv[0, j] + 2.0 * kv[1, j] + kv[2, j])


@jit
def rk4_step(h, q0, v0, a1, node_parent, joint_type, joint_sp, joint_sc, joint_dir, pos, ang, vel, bias, b2, r_pc,
             joint_pt, joint_axis, cut_node, cut_s, cut_pw, drv_node, drv_acc, drv_stage_acc, node_mass, node_inertia,
             node_force, gravity, tau, Ia, pA, Pl, U, dinv, u0, ul, acc0, accl, qdd0, qddl, G, rhs, piv, qdd, lam, acc,
             kq, kv, qs, vs, q_out, v_out):
    """One classical RK4 step of ``(q, q̇)`` in compiled code, ``a1`` the first stage's q̈ (given).

    The three later stages run :func:`forward_kinematics`, :func:`cut_points`
    and :func:`articulated_solve` with the applied forces ``node_force`` held
    as given (gravity and constant loads: the system uses this only without
    force elements). ``drv_stage_acc`` (3, n_drv): the drivers' q̈ at the
    three stages (t + h/2, t + h/2, t + h). Writes ``q_out``, ``v_out``; the
    closure is not projected here.
    """
    n = q0.shape[0]
    for st in range(3):
        rk4_stage_point(st, h, q0, v0, a1, kq, kv, qs, vs)
        forward_kinematics(qs, vs, node_parent, joint_type, joint_sp, joint_sc, joint_dir, pos, ang, vel, bias, b2,
                           r_pc, joint_pt, joint_axis)
        cut_points(cut_node, cut_s, pos, ang, cut_pw)
        for d in range(drv_node.shape[0]):
            drv_acc[d] = drv_stage_acc[st, d]
        articulated_solve(node_parent, b2, r_pc, bias, vel, node_mass, node_inertia, node_force, gravity, tau,
                          cut_node, cut_pw, drv_node, drv_acc, Ia, pA, Pl, U, dinv, u0, ul, acc0, accl, qdd0, qddl, G,
                          rhs, piv, qdd, lam, acc)
        for j in range(n):
            kq[st, j] = vs[j]
            kv[st, j] = qdd[j]
    rk4_update(h, q0, v0, a1, kq, kv, q_out, v_out)


@jit
def least_norm(Jd, b, A, bw, y):
    """y = (Jd Jdᵀ)⁻¹ b (A, bw: work space; b is kept)."""
    m, n = Jd.shape
    for r in range(m):
        bw[r] = b[r]
        for c in range(r, m):
            s = 0.0
            for k in range(n):
                s += Jd[r, k] * Jd[c, k]
            A[r, c] = s
            A[c, r] = s
    gauss_solve(A, bw, m, y)


@jit_inline
def driver_rows(q, drv_q, drv_pos, nrow, phi, Jd):
    """The driver rows after the ``nrow`` cut rows: ``Φ = q_k − drv_pos``, a 1 in column ``drv_q``."""
    for d in range(drv_q.shape[0]):
        phi[nrow + d] = q[drv_q[d]] - drv_pos[d]
        Jd[nrow + d, drv_q[d]] = 1.0


@jit_inline
def max_abs(x):
    err = 0.0
    for r in range(x.shape[0]):
        err = max(err, abs(x[r]))
    return err


@jit_inline
def subtract_transposed(Jd, y, x):
    """``x −= Jdᵀ y`` in place."""
    m, n = Jd.shape
    for c in range(n):
        s = 0.0
        for r in range(m):
            s += Jd[r, c] * y[r]
        x[c] -= s


@jit
def newton_correction(Jd, phi, A, bw, y, q):
    """The least-norm Newton step on Φ(q) = 0, in place: ``q −= Jdᵀ (Jd Jdᵀ)⁻¹ Φ``."""
    least_norm(Jd, phi, A, bw, y)
    subtract_transposed(Jd, y, q)


@jit_inline
def newton_step(Jd, phi, tol, it, max_iter, A, bw, y, q):
    """One Newton iteration of the projection after Φ and Jd are evaluated: ``(max|Φ|, stop)``, stop when
    converged or after ``max_iter`` iterations, else q takes the least-norm step."""
    err = max_abs(phi)
    if err <= tol or it == max_iter:
        return err, True
    newton_correction(Jd, phi, A, bw, y, q)
    return err, False


@jit
def velocity_correction(Jd, qd, nrow, drv_vel, A, bw, y):
    """``q̇ −= Jdᵀ (Jd Jdᵀ)⁻¹ (Jd q̇ − v*)`` in place (Jd at the final q; v* = 0 for the ``nrow`` cut rows,
    ``drv_vel`` for the driver rows after them)."""
    m, n = Jd.shape
    for r in range(m):
        s = 0.0
        for c in range(n):
            s += Jd[r, c] * qd[c]
        y[r] = s
    for d in range(drv_vel.shape[0]):
        y[nrow + d] -= drv_vel[d]
    for r in range(m):
        bw[r] = y[r]
    least_norm(Jd, bw, A, bw, y)
    subtract_transposed(Jd, y, qd)


@jit_inline
def projection_result(err, tol, it, Jd, qd, nrow, drv_vel, A, bw, y):
    """The projection's end after ``it`` Newton iterations: −1 when ``err = max|Φ| > tol``, else ``it`` with q̇
    projected (:func:`velocity_correction`)."""
    if err > tol:
        return -1
    velocity_correction(Jd, qd, nrow, drv_vel, A, bw, y)
    return it


@jit
def project(q, qd, tol, max_iter, node_parent, joint_type, joint_sp, joint_sc, joint_dir, pos, ang, vel, bias, b2,
            r_pc, joint_pt, joint_axis, cut_node, cut_s, cut_pw, cut_ptr, cut_col, cut_side, drv_node, drv_pos, drv_vel,
            phi, Jval, Jd, A, bw, y):
    """Newton on Φ(q) = 0 with the least-norm step ``Δq = −Φ_qᵀ (Φ_q Φ_qᵀ)⁻¹ Φ``, then ``Φ_q q̇ = 0``, in place.

    Returns the Newton iterations, or −1 when ``max|Φ| > tol`` after
    ``max_iter`` of them. ``phi`` holds the final Φ; ``Jd`` (m, n), ``A``
    (m, m), ``bw`` and ``y`` (m,) are work space. Driver rows (after the cut
    rows) ask ``q_j = drv_pos`` and ``q̇_j = drv_vel``.
    """
    m = phi.shape[0]
    n = q.shape[0]
    nc2 = 2 * cut_node.shape[0]
    it = 0
    err = 0.0
    while True:
        forward_kinematics(q, qd, node_parent, joint_type, joint_sp, joint_sc, joint_dir, pos, ang, vel, bias, b2,
                           r_pc, joint_pt, joint_axis)
        cut_points(cut_node, cut_s, pos, ang, cut_pw)
        closure(cut_node, cut_pw, pos, joint_type, joint_pt, joint_axis, cut_ptr, cut_col, cut_side, phi, Jval)
        for r in range(m):
            for c in range(n):
                Jd[r, c] = 0.0
        for k in range(cut_node.shape[0]):
            for e in range(cut_ptr[k], cut_ptr[k + 1]):
                Jd[2 * k, cut_col[e]] = Jval[e, 0]
                Jd[2 * k + 1, cut_col[e]] = Jval[e, 1]
        driver_rows(q, drv_node, drv_pos, nc2, phi, Jd)
        err, stop = newton_step(Jd, phi, tol, it, max_iter, A, bw, y, q)
        if stop:
            break
        it += 1
    return projection_result(err, tol, it, Jd, qd, nc2, drv_vel, A, bw, y)
