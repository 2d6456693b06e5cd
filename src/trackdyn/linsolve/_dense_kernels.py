"""Numba kernels for small dense systems solved inside other compiled kernels (no allocation, no BLAS)."""

from __future__ import annotations

import numba as nb

jit = nb.njit(cache=True, _nrt=False)


@jit
def gauss_solve(A, b, n, x):
    """``x = A⁻¹ b`` for the leading n × n block of A by Gaussian elimination with partial pivoting.

    A and b are overwritten; ``x`` may be ``b`` itself (the back substitution reads only the entries it has
    already solved). For the few-row systems of the recursive cut joints and the synthesis subsystems, where a
    LAPACK call costs more in overhead than the arithmetic.
    """
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for r in range(k + 1, n):
            if abs(A[r, k]) > big:
                big = abs(A[r, k])
                p = r
        if p != k:
            for c in range(n):
                A[k, c], A[p, c] = A[p, c], A[k, c]
            b[k], b[p] = b[p], b[k]
        d = A[k, k]
        for r in range(k + 1, n):
            f = A[r, k] / d
            if f != 0.0:
                for c in range(k, n):
                    A[r, c] -= f * A[k, c]
                b[r] -= f * b[k]
    for k in range(n - 1, -1, -1):
        s = b[k]
        for c in range(k + 1, n):
            s -= A[k, c] * x[c]
        x[k] = s / A[k, k]
