"""Up-looking sparse LDLᵀ with a fixed pattern (Numba).

The algorithm is the classic elimination-tree LDLᵀ (T. A. Davis, "Algorithm
849: a concise sparse Cholesky factorization package", ACM TOMS 31, 2005):
a symbolic pass computes the elimination tree and the column counts of L once
per pattern; each numeric pass computes row k of L by a sparse triangular
solve along the tree. The input is the upper triangle of an already permuted
symmetric matrix in CSC form. No pivoting: the caller provides an ordering for
which every pivot is safe (see :mod:`trackdyn.linsolve.kkt`).
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def ldl_symbolic(n, Ap, Ai, Parent, Lnz, Lp, Flag):
    """Elimination tree and column pointers of L for the pattern (Ap, Ai)."""
    for k in range(n):
        Parent[k] = -1
        Flag[k] = k
        Lnz[k] = 0
        for p in range(Ap[k], Ap[k + 1]):
            i = Ai[p]
            if i < k:
                while Flag[i] != k:
                    if Parent[i] == -1:
                        Parent[i] = k
                    Lnz[i] += 1
                    Flag[i] = k
                    i = Parent[i]
    Lp[0] = 0
    for k in range(n):
        Lp[k + 1] = Lp[k] + Lnz[k]


@nb.njit(cache=True)
def ldl_numeric(n, Ap, Ai, Ax, Lp, Parent, Lnz, Li, Lx, Dg, Y, Pattern, Flag):
    """Numeric LDLᵀ; returns -1 on success or the index of a zero pivot."""
    for k in range(n):
        Y[k] = 0.0
        top = n
        Flag[k] = k
        Lnz[k] = 0
        for p in range(Ap[k], Ap[k + 1]):
            i = Ai[p]
            if i <= k:
                Y[i] += Ax[p]
                length = 0
                while Flag[i] != k:
                    Pattern[length] = i
                    length += 1
                    Flag[i] = k
                    i = Parent[i]
                while length > 0:
                    top -= 1
                    length -= 1
                    Pattern[top] = Pattern[length]
        Dg[k] = Y[k]
        Y[k] = 0.0
        while top < n:
            i = Pattern[top]
            yi = Y[i]
            Y[i] = 0.0
            p2 = Lp[i] + Lnz[i]
            for p in range(Lp[i], p2):
                Y[Li[p]] -= Lx[p] * yi
            lki = yi / Dg[i]
            Dg[k] -= lki * yi
            Li[p2] = k
            Lx[p2] = lki
            Lnz[i] += 1
            top += 1
        if Dg[k] == 0.0 or not np.isfinite(Dg[k]):
            return k
    return -1


@nb.njit(cache=True)
def ldl_solve_inplace(n, Lp, Li, Lx, Dg, x):
    """Solve L D Lᵀ x = b in place (x holds b on entry)."""
    for j in range(n):
        xj = x[j]
        for p in range(Lp[j], Lp[j + 1]):
            x[Li[p]] -= Lx[p] * xj
    for j in range(n):
        x[j] /= Dg[j]
    for j in range(n - 1, -1, -1):
        s = x[j]
        for p in range(Lp[j], Lp[j + 1]):
            s -= Lx[p] * x[Li[p]]
        x[j] = s


@nb.njit(cache=True)
def permuted_solve(n, Lp, Li, Lx, Dg, perm, b, out, work):
    """out = K⁻¹ b where L D Lᵀ factors P K Pᵀ and ``perm[new] = old``."""
    for k in range(n):
        work[k] = b[perm[k]]
    ldl_solve_inplace(n, Lp, Li, Lx, Dg, work)
    for k in range(n):
        out[perm[k]] = work[k]


@nb.njit(cache=True, _nrt=False, fastmath={"reassoc", "contract"})
def sym_upper_matvec(n, Ap, Ai, Ax, x, y):
    """y = K x for a symmetric K stored as its upper triangle (CSC).

    Column j's transposed part is summed in a register, unsigned indices skip
    Numba's wrap-around of negative ones, and a column whose ``x_j`` is zero
    (the constraint rows of ``[v; 0]``) only gathers: 72 -> 23 µs on the M113
    KKT matrix (22 000 stored entries).
    """
    for i in range(n):
        y[i] = 0.0
    for j in range(n):
        xj = x[j]
        acc = 0.0
        p0 = np.uint64(Ap[j])
        p1 = np.uint64(Ap[j + 1])
        if xj != 0.0:
            for p in range(p0, p1):
                i = np.uint64(Ai[p])
                a = Ax[p]
                y[i] += a * xj
                if i != j:
                    acc += a * x[i]
        else:
            for p in range(p0, p1):
                acc += Ax[p] * x[np.uint64(Ai[p])]
        y[j] += acc


# --------------------------------------------------------------------------- supernodal
# Index arithmetic below is unsigned (np.uint64): with signed offsets loaded from arrays, Numba wraps
# negative indices at every access, which blocks vectorisation and costs about 5x in these loops.
_FM = {"reassoc", "contract"}
U0 = np.uint64(0)
U1 = np.uint64(1)
U2 = np.uint64(2)


@nb.njit(cache=True, _nrt=False, fastmath=_FM)
def supernodal_factor(A, X, Dg, G, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size, e_row, gd_ptr, gd_end,
                      ge_ptr, ge_end, g_src, g_dst, pp, u_dst, u_nr, u_dflag):
    """Right-looking supernodal LDLᵀ (layout and maps: :class:`trackdyn.linsolve.kkt._Supernodes`).

    ``X`` holds, per supernode J, a column-major block of ``sn_nr[J]`` rows
    and ``sn_w[J]`` columns: its diagonal block then its row units. All
    values are gathered from ``A`` (upper CSC, permuted) first; a row unit
    whose values are all zero is not flagged. Then for each supernode in
    elimination order: dense LDLᵀ of its columns (unit lower L, pivots into
    ``Dg``), and for every pair of flagged row units (i <= k) the update
    ``L_k D L_iᵀ`` subtracted from the block of the supernode owning unit i
    (which becomes flagged). Row units that stay unflagged are zero blocks
    of this step: they cost nothing. ``G`` is scratch (>= max rows x widest row unit);
    ``flag`` has one spare slot at the end (target of updates of diagonal
    blocks). All index arrays are uint64. Returns -1 or the permuted index
    of a zero or non-finite pivot.
    """
    for J in range(U0, n_sn):
        # each block zeroed just before its values are gathered, while its lines are in L1 (one sweep of the
        # whole X first, 275 KB for the M113, left the gather to fetch every line again)
        for i in range(sn_off[J], sn_off[J + U1]):
            X[i] = 0.0
        for g in range(gd_ptr[J], gd_end[J]):
            X[g_dst[g]] = A[g_src[g]]
        for e in range(e_ptr[J], e_ptr[J + U1]):
            nz = False
            for g in range(ge_ptr[e], ge_end[e]):
                val = A[g_src[g]]
                X[g_dst[g]] = val
                nz = nz or val != 0.0
            flag[e] = nz
    for J in range(U0, n_sn):
        w = sn_w[J]
        nr = sn_nr[J]
        off = sn_off[J]
        s0 = sn_start[J]
        e0 = e_ptr[J]
        e1 = e_ptr[J + U1]
        # rows beyond the last flagged row unit are zero: leave them out
        nre = w
        for e in range(e0, e1):
            if flag[e]:
                nre = e_row[e] + e_size[e]
        # dense right-looking LDLᵀ of the panel (diagonal block and row units); the trailing columns are
        # updated two at a time, sharing the loads of column j (one inner loop per pair instead of per column,
        # and a product by 1/d instead of a division per column: the panel stage 134 -> 52 µs on the M113)
        for j in range(U0, w):
            cj = off + j * nr
            d = X[cj + j]
            if d == 0.0 or not np.isfinite(d):
                return np.int64(s0 + j)
            Dg[s0 + j] = d
            inv = 1.0 / d
            c = j + U1
            while c + U1 < w:
                a0 = X[cj + c] * inv
                a1 = X[cj + c + U1] * inv
                c0 = off + c * nr
                c1 = c0 + nr
                X[c0 + c] -= X[cj + c] * a0
                for i in range(c + U1, nre):
                    xi = X[cj + i]
                    X[c0 + i] -= xi * a0
                    X[c1 + i] -= xi * a1
                c += U2
            if c < w:
                a0 = X[cj + c] * inv
                c0 = off + c * nr
                for i in range(c, nre):
                    X[c0 + i] -= X[cj + i] * a0
            for i in range(j + U1, nre):
                X[cj + i] *= inv
        # updates of the ancestors: for each flagged row unit i, the columns of L D Lᵀ at rows >= i
        for ei in range(e0, e1):
            if not flag[ei]:
                continue
            ri = e_row[ei]
            si = e_size[ei]
            # two columns of G per pass (sharing the loads of L), each from two columns of L
            c = U0
            while c + U1 < si:
                g0 = c * nr
                g1 = g0 + nr
                r0 = ri + c
                # the first pair of L columns (or the only column) initialises G: no zeroing pass (LLVM made
                # each zeroing loop a memset call, ~1400 calls of ~40 bytes per M113 factorisation)
                ct = off
                d0 = Dg[s0]
                a00 = X[ct + r0] * d0
                a10 = X[ct + r0 + U1] * d0
                if U1 < w:
                    ct1 = ct + nr
                    d1 = Dg[s0 + U1]
                    a01 = X[ct1 + r0] * d1
                    a11 = X[ct1 + r0 + U1] * d1
                    G[g0 + r0] = a00 * X[ct + r0] + a01 * X[ct1 + r0]
                    for r in range(r0 + U1, nre):
                        x0 = X[ct + r]
                        x1 = X[ct1 + r]
                        G[g0 + r] = a00 * x0 + a01 * x1
                        G[g1 + r] = a10 * x0 + a11 * x1
                    t = U2
                else:
                    G[g0 + r0] = a00 * X[ct + r0]
                    for r in range(r0 + U1, nre):
                        x0 = X[ct + r]
                        G[g0 + r] = a00 * x0
                        G[g1 + r] = a10 * x0
                    t = U1
                while t + U1 < w:
                    ct = off + t * nr
                    ct1 = ct + nr
                    d0 = Dg[s0 + t]
                    d1 = Dg[s0 + t + U1]
                    a00 = X[ct + r0] * d0
                    a01 = X[ct1 + r0] * d1
                    a10 = X[ct + r0 + U1] * d0
                    a11 = X[ct1 + r0 + U1] * d1
                    G[g0 + r0] += a00 * X[ct + r0] + a01 * X[ct1 + r0]
                    for r in range(r0 + U1, nre):
                        x0 = X[ct + r]
                        x1 = X[ct1 + r]
                        G[g0 + r] += a00 * x0 + a01 * x1
                        G[g1 + r] += a10 * x0 + a11 * x1
                    t += U2
                if t < w:
                    ct = off + t * nr
                    d0 = Dg[s0 + t]
                    a00 = X[ct + r0] * d0
                    a10 = X[ct + r0 + U1] * d0
                    G[g0 + r0] += a00 * X[ct + r0]
                    for r in range(r0 + U1, nre):
                        x0 = X[ct + r]
                        G[g0 + r] += a00 * x0
                        G[g1 + r] += a10 * x0
                c += U2
            if c < si:
                g0 = c * nr
                r0 = ri + c
                ct = off
                a00 = X[ct + r0] * Dg[s0]
                if U1 < w:
                    ct1 = ct + nr
                    a01 = X[ct1 + r0] * Dg[s0 + U1]
                    for r in range(r0, nre):
                        G[g0 + r] = a00 * X[ct + r] + a01 * X[ct1 + r]
                    t = U2
                else:
                    for r in range(r0, nre):
                        G[g0 + r] = a00 * X[ct + r]
                    t = U1
                while t + U1 < w:
                    ct = off + t * nr
                    ct1 = ct + nr
                    a00 = X[ct + r0] * Dg[s0 + t]
                    a01 = X[ct1 + r0] * Dg[s0 + t + U1]
                    for r in range(r0, nre):
                        G[g0 + r] += a00 * X[ct + r] + a01 * X[ct1 + r]
                    t += U2
                if t < w:
                    ct = off + t * nr
                    a00 = X[ct + r0] * Dg[s0 + t]
                    for r in range(r0, nre):
                        G[g0 + r] += a00 * X[ct + r]
            p0 = pp[ei]
            for ek in range(ei, e1):
                if not flag[ek]:
                    continue
                p = p0 + ek - ei
                dst = u_dst[p]
                nrp = u_nr[p]
                rk = e_row[ek]
                sk = e_size[ek]
                diag = ek == ei  # a diagonal block: its lower triangle only
                c = U0
                while c + U1 < si:
                    gc = c * nr + rk
                    xc = dst + c * nrp
                    gc1 = gc + nr
                    xc1 = xc + nrp
                    r_lo = U0
                    if diag:
                        X[xc + c] -= G[gc + c]
                        r_lo = c + U1
                    for r in range(r_lo, sk):
                        X[xc + r] -= G[gc + r]
                        X[xc1 + r] -= G[gc1 + r]
                    c += U2
                if c < si:
                    gc = c * nr + rk
                    xc = dst + c * nrp
                    r_lo = c if diag else U0
                    for r in range(r_lo, sk):
                        X[xc + r] -= G[gc + r]
                flag[u_dflag[p]] = True
    return np.int64(-1)


@nb.njit(cache=True, _nrt=False, fastmath=_FM)
def supernodal_solve_inplace(X, Dg, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size, e_gstart, e_row, y):
    """Solve L D Lᵀ y = b in place (permuted order; y holds b on entry), skipping zero row units."""
    for J in range(U0, n_sn):
        w = sn_w[J]
        nr = sn_nr[J]
        off = sn_off[J]
        s0 = sn_start[J]
        j = U0
        while j + U1 < w:  # two columns per pass; the last column has nothing below it in the block
            cj = off + j * nr
            cj1 = cj + nr
            yj = y[s0 + j]
            yj1 = y[s0 + j + U1] - X[cj + j + U1] * yj
            y[s0 + j + U1] = yj1
            for i in range(j + U2, w):
                y[s0 + i] -= X[cj + i] * yj + X[cj1 + i] * yj1
            j += U2
        for e in range(e_ptr[J], e_ptr[J + U1]):
            if not flag[e]:
                continue
            r0 = e_row[e]
            g0 = e_gstart[e]
            se = e_size[e]
            t = U0
            while t + U1 < w:  # two columns of L per pass (see supernodal_factor)
                ct = off + t * nr + r0
                ct1 = ct + nr
                y0 = y[s0 + t]
                y1 = y[s0 + t + U1]
                for r in range(U0, se):
                    y[g0 + r] -= X[ct + r] * y0 + X[ct1 + r] * y1
                t += U2
            if t < w:
                ct = off + t * nr + r0
                y0 = y[s0 + t]
                for r in range(U0, se):
                    y[g0 + r] -= X[ct + r] * y0
    for k in range(y.shape[0]):
        y[k] /= Dg[k]
    for Jr in range(U0, n_sn):
        J = n_sn - U1 - Jr
        w = sn_w[J]
        nr = sn_nr[J]
        off = sn_off[J]
        s0 = sn_start[J]
        for e in range(e_ptr[J], e_ptr[J + U1]):
            if not flag[e]:
                continue
            r0 = e_row[e]
            g0 = e_gstart[e]
            se = e_size[e]
            t = U0
            while t + U1 < w:
                ct = off + t * nr + r0
                ct1 = ct + nr
                acc0 = 0.0
                acc1 = 0.0
                for r in range(U0, se):
                    yr = y[g0 + r]
                    acc0 += X[ct + r] * yr
                    acc1 += X[ct1 + r] * yr
                y[s0 + t] -= acc0
                y[s0 + t + U1] -= acc1
                t += U2
            if t < w:
                ct = off + t * nr + r0
                acc0 = 0.0
                for r in range(U0, se):
                    acc0 += X[ct + r] * y[g0 + r]
                y[s0 + t] -= acc0
        j = w
        while j > U1:  # columns j-1 and j-2 per pass
            j -= U2
            c1 = off + (j + U1) * nr
            c0 = c1 - nr
            acc1 = 0.0
            acc0 = 0.0
            for i in range(j + U2, w):
                yi = y[s0 + i]
                acc1 += X[c1 + i] * yi
                acc0 += X[c0 + i] * yi
            y1 = y[s0 + j + U1] - acc1
            y[s0 + j + U1] = y1
            y[s0 + j] -= acc0 + X[c0 + j + U1] * y1
        if j == U1:
            acc0 = 0.0
            for i in range(U1, w):
                acc0 += X[off + i] * y[s0 + i]
            y[s0] -= acc0


@nb.njit(cache=True, _nrt=False)
def supernodal_solve_refined(n, Ap, Ai, data, X, Dg, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size,
                             e_gstart, e_row, perm, rhs, out, work, work2, resid, refine):
    """out = K⁻¹ rhs with ``refine`` steps of iterative refinement (K: upper CSC ``data``, permuted)."""
    for k in range(n):
        work[k] = rhs[perm[k]]
        work2[k] = work[k]
    supernodal_solve_inplace(X, Dg, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size, e_gstart, e_row,
                             work2)
    for _ in range(refine):
        sym_upper_matvec(n, Ap, Ai, data, work2, resid)
        for k in range(n):
            resid[k] = work[k] - resid[k]
        supernodal_solve_inplace(X, Dg, flag, n_sn, sn_w, sn_nr, sn_start, sn_off, e_ptr, e_size, e_gstart, e_row,
                                 resid)
        for k in range(n):
            work2[k] += resid[k]
    for k in range(n):
        out[perm[k]] = work2[k]
