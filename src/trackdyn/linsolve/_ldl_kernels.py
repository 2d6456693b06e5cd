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


@nb.njit(cache=True)
def sym_upper_matvec(n, Ap, Ai, Ax, x, y):
    """y = K x for a symmetric K stored as its upper triangle (CSC)."""
    for i in range(n):
        y[i] = 0.0
    for j in range(n):
        for p in range(Ap[j], Ap[j + 1]):
            i = Ai[p]
            y[i] += Ax[p] * x[j]
            if i != j:
                y[j] += Ax[p] * x[i]
