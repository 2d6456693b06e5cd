"""Solvers of the cone complementarity problem (CCP) of one NSC step.

The problem (Anitescu 2006; Tasora & Anitescu 2011): impulses ``γ`` (3m,)
of ``m`` contacts with ``u = N γ + r`` (contact velocities, m/s), ``N`` the
Delassus operator (symmetric positive semi-definite), find

    γ_i ∈ K_i = {|γ_t| ≤ μ_i γ_n},   u_i ∈ K_i° (dual cone),   γ_i · u_i = 0,

which is the optimality condition of ``min ½ γᵀNγ + rᵀγ`` over the cones.
``N`` comes as a dense matrix or as the factorised operator ``D G Dᵀ`` (one
sparse solve per product, :func:`~trackdyn.contact._nsc_kernels.delassus_apply`);
PSOR needs the dense matrix. Every solver starts from a given γ (warm start), stops when
the residual :func:`~trackdyn.contact._nsc_kernels.ccp_measures` (the
natural map ``η_i |γ_i - Π_K(γ_i - u_i/η_i)|``, m/s) is at most ``tol``
or after ``max_iter`` iterations, and returns :class:`CCPInfo`.

- ``"psor"``: projected Gauss-Seidel over contact blocks with relaxation ω, on
  the dense N; the block step is ``1/η_i``, ``η_i`` Gershgorin's bound of
  ``λ_max(N_ii)`` (Tasora's ``trace(N_ii)/3`` diverges on contacts that move in
  one direction only, as the tip of a pinned rod).
- ``"bb"``: spectral projected gradient with Barzilai-Borwein steps and the
  non-monotone line search of Grippo-Lampariello-Lucidi (Birgin, Martínez &
  Raydan 2000; Chrono's ``ChSolverBB``); the quadratic objective makes the
  line search exact and free of extra products.
- ``"apgd"``: Nesterov's accelerated projected gradient with backtracking on
  the Lipschitz estimate and adaptive restart (Mazhar et al. 2015; Chrono's
  ``ChSolverAPGD``).

One product with N per iteration for BB and APGD (APGD's backtracking adds a
few), through the saddle-point factorisation when N is not formed
(:mod:`trackdyn.integrators.nsc`). Each solver is one compiled kernel
(:mod:`trackdyn.contact._nsc_kernels`): no Python runs inside the iterations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _nsc_kernels as NK

__all__ = ["CCP_SOLVERS", "CCPInfo", "solve_ccp"]

CCP_SOLVERS = ("psor", "bb", "apgd")


@dataclass
class CCPInfo:
    """Outcome of one CCP solve: iterations (sweeps or products), residual (m/s), complementarity gap
    (``max_i |γ_i·u_i|``, N s · m/s), converged (residual ≤ tol), products with N."""

    iterations: int
    residual: float
    gap: float
    converged: bool
    products: int = 0  # products with N (APGD's backtracking adds some; PSOR: sweeps)


_NO_BODY = np.zeros((0, 2), np.int64)
_NO_D = np.zeros((0, 3, 12))
_NO_N = np.zeros((0, 0))
_NO_WORK = np.zeros(0)


def no_factor():
    """The ``fac`` argument of :func:`~trackdyn.contact._nsc_kernels.delassus_apply` when N is dense (typed
    empty arrays in the factor's layout)."""
    i64 = np.zeros(0, np.int64)
    u64 = np.zeros(0, np.uint64)
    return (i64, np.zeros(0), np.zeros(0), np.zeros(0, np.bool_), np.uint64(0), u64, u64, u64, u64, u64, u64, u64,
            u64)




_NO_FAC = no_factor()


def solve_ccp(method, m, mu, eta, r, gamma, u, N=None, operator=None, tol=1e-9, max_iter=500, omega=1.0, kind=None,
              bb_memory=10, reg=None):
    """Solve the CCP in place: γ (3m,) from its warm start; u (3m,) gets ``Nγ + r``; returns :class:`CCPInfo`.

    N is given either dense, ``N`` (3m, 3m), or as ``operator = (c_body, c_D, fac, work)``: the contacts' bodies
    and Jacobian rows and the step's factorisation (:func:`~trackdyn.contact._nsc_kernels.delassus_apply`), each
    product one sparse solve. ``"psor"`` needs the dense N. ``eta`` (m,) the contacts' scales of the residual
    (1/kg). ``kind`` (m,) int: 0 a friction cone of coefficient ``mu``, 1 a rolling block (spin 0, rolling in
    the disc of radius ``mu``); default all cones. ``reg`` (3m,), optional: the contacts' compliance, the
    CCP solved on ``N + diag(reg)`` (strongly convex, so a jammed configuration has a solution). Every
    solver runs in one compiled kernel.
    """
    if m == 0:
        return CCPInfo(0, 0.0, 0.0, True)
    if kind is None:
        kind = np.zeros(m, np.int64)
    if (N is None) == (operator is None):
        raise ValueError("solve_ccp: give exactly one of the dense N and the factorised operator")
    NK.project_cones(m, kind, mu, gamma, gamma)
    reg = _NO_WORK if reg is None else np.ascontiguousarray(reg, dtype=float)
    if method == "psor":
        if N is None:
            raise ValueError("solve_ccp: 'psor' needs the dense Delassus matrix N")
        if reg.shape[0]:
            N = N + np.diag(reg)
        it, res, gap = NK.psor(m, kind, N, r, mu, eta, gamma, u, float(omega), float(tol), int(max_iter), 1)
        return CCPInfo(int(it), float(res), float(gap), bool(res <= tol), int(it))
    if N is not None:
        c_body, c_D, fac, work = _NO_BODY, _NO_D, _NO_FAC, _NO_WORK
        N = np.ascontiguousarray(N, dtype=float)
    else:
        c_body, c_D, fac, work = operator
        N = _NO_N
    if method == "bb":
        it, prod, res, gap = NK.bb(m, kind, mu, eta, r, gamma, u, float(tol), int(max_iter), c_body, c_D, N, fac,
                                   work, int(bb_memory), 1e-4, reg)
    elif method == "apgd":
        it, prod, res, gap = NK.apgd(m, kind, mu, eta, r, gamma, u, float(tol), int(max_iter), c_body, c_D, N, fac,
                                     work, reg)
    else:
        raise ValueError(f"solve_ccp: method must be one of {CCP_SOLVERS}, got {method!r}")
    return CCPInfo(int(it), float(res), float(gap), bool(res <= tol), int(prod))
