"""Numba kernels of the block (supernodal) LDLᵀ: dense blocks of at most 6 x 6 per unit.

Storage (built by :mod:`trackdyn.linsolve.block_ldl`): one flat array ``X``
holds, per unit u in elimination order, its diagonal block (s_u x s_u,
row-major) at ``diag_off[u]`` and its sub-diagonal blocks L_vu (s_v x s_u,
row-major) at ``col_off[col_ptr[u] + k]`` for the k-th unit ``col_unit[...]``
of its column structure. Right-looking: after unit u is factored, every pair
(v1 <= v2) of its structure receives ``A[v2, v1] -= L[v2, u] D_u L[v1, u]ᵀ``
at the precomputed destination ``upd_dst``.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, inline="always")
def _small_ldl(X, off, s, dfac):
    """In-place LDLᵀ of the s x s block at X[off] (lower part used); D into dfac[0:s].

    Returns False on a zero or non-finite pivot.
    """
    for j in range(s):
        d = X[off + j * s + j]
        for k in range(j):
            ljk = X[off + j * s + k]
            d -= ljk * ljk * dfac[k]
        if d == 0.0 or not np.isfinite(d):
            return False
        dfac[j] = d
        for i in range(j + 1, s):
            v = X[off + i * s + j]
            for k in range(j):
                v -= X[off + i * s + k] * X[off + j * s + k] * dfac[k]
            X[off + i * s + j] = v / d
    return True


@nb.njit(cache=True)
def block_factor(X, A, gather_src, gather_dst, n_units, unit_size, diag_off, dvec_off, dvec,
                 col_ptr, col_unit, col_off, col_woff, upd_ptr, upd_a, upd_b, upd_dst, W):
    """Numeric block LDLᵀ. X is overwritten; returns -1 or the unit with a bad pivot.

    ``A`` is the KKT value array (CSC upper-triangle order); ``gather`` copies
    it into the block layout (zeroing X first). ``W`` is scratch (>= 6 * 6 * max
    column length).
    """
    for i in range(X.shape[0]):
        X[i] = 0.0
    for k in range(gather_src.shape[0]):
        X[gather_dst[k]] += A[gather_src[k]]
    for u in range(n_units):
        s = unit_size[u]
        do = diag_off[u]
        dv = dvec_off[u]
        # the diagonal block's lower triangle holds the updated values; factor it
        ok = _small_ldl(X, do, s, dvec[dv:dv + s])
        if not ok:
            return u
        # W_v = A_vu (current), L_vu = W_v L_d^{-T} D^{-1} L_d^{-1}
        c0 = col_ptr[u]
        c1 = col_ptr[u + 1]
        for c in range(c0, c1):
            v = col_unit[c]
            sv = unit_size[v]
            lo = col_off[c]
            # keep a copy of W for the update products
            wpos = col_woff[c]
            for i in range(sv * s):
                W[wpos + i] = X[lo + i]
            # solve rows: each row r of L_vu: x L_d^T... row-wise: (x) such that x (L_d D L_dᵀ) = w
            for r in range(sv):
                base = lo + r * s
                # forward: y L_dᵀ ... y_j = w_j - sum_{k<j} y_k L_d[j,k]
                for j in range(s):
                    t = X[base + j]
                    for k in range(j):
                        t -= X[base + k] * X[do + j * s + k]
                    X[base + j] = t
                for j in range(s):
                    X[base + j] /= dvec[dv + j]
                for j in range(s - 1, -1, -1):
                    t = X[base + j]
                    for k in range(j + 1, s):
                        t -= X[base + k] * X[do + k * s + j]
                    X[base + j] = t
        # updates A[v2, v1] -= L[v2,u] W[v1]ᵀ for v1 <= v2 in the structure
        for p in range(upd_ptr[u], upd_ptr[u + 1]):
            a = upd_a[p]      # index c of v1 within the column (c - c0 gives W position)
            b = upd_b[p]      # index c of v2
            dst = upd_dst[p]
            v1 = col_unit[a]
            v2 = col_unit[b]
            s1 = unit_size[v1]
            s2 = unit_size[v2]
            wp = col_woff[a]
            lo2 = col_off[b]
            if a == b:
                # diagonal block of v1: lower triangle only
                for i in range(s2):
                    for j in range(i + 1):
                        acc = 0.0
                        for k in range(s):
                            acc += X[lo2 + i * s + k] * W[wp + j * s + k]
                        X[dst + i * s1 + j] -= acc
            else:
                for i in range(s2):
                    for j in range(s1):
                        acc = 0.0
                        for k in range(s):
                            acc += X[lo2 + i * s + k] * W[wp + j * s + k]
                        X[dst + i * s1 + j] -= acc
    return -1


@nb.njit(cache=True)
def block_solve(X, n_units, unit_size, unit_start, diag_off, dvec_off, dvec, col_ptr, col_unit, col_off,
                perm, b, out, y):
    """out = K⁻¹ b using the block factor ``K = L_b diag(K_u) L_bᵀ`` (``perm[new] = old``).

    ``L_b`` has identity diagonal blocks and the blocks ``L_vu = A_vu K_u⁻¹``;
    each ``K_u`` is held as its own small LDLᵀ in the diagonal block.
    """
    n = perm.shape[0]
    for k in range(n):
        y[k] = b[perm[k]]
    # forward: L_b a = b
    for u in range(n_units):
        s = unit_size[u]
        st = unit_start[u]
        for c in range(col_ptr[u], col_ptr[u + 1]):
            v = col_unit[c]
            sv = unit_size[v]
            sv0 = unit_start[v]
            lo = col_off[c]
            for i in range(sv):
                t = 0.0
                for k in range(s):
                    t += X[lo + i * s + k] * y[st + k]
                y[sv0 + i] -= t
    # block diagonal: K_u c_u = a_u with K_u = L_d D L_dᵀ
    for u in range(n_units):
        s = unit_size[u]
        st = unit_start[u]
        do = diag_off[u]
        dv = dvec_off[u]
        for j in range(s):
            t = y[st + j]
            for k in range(j):
                t -= X[do + j * s + k] * y[st + k]
            y[st + j] = t
        for j in range(s):
            y[st + j] /= dvec[dv + j]
        for j in range(s - 1, -1, -1):
            t = y[st + j]
            for k in range(j + 1, s):
                t -= X[do + k * s + j] * y[st + k]
            y[st + j] = t
    # backward: L_bᵀ x = c
    for u in range(n_units - 1, -1, -1):
        s = unit_size[u]
        st = unit_start[u]
        for c in range(col_ptr[u], col_ptr[u + 1]):
            v = col_unit[c]
            sv = unit_size[v]
            sv0 = unit_start[v]
            lo = col_off[c]
            for k in range(s):
                t = 0.0
                for i in range(sv):
                    t += X[lo + i * s + k] * y[sv0 + i]
                y[st + k] -= t
    for k in range(n):
        out[perm[k]] = y[k]
