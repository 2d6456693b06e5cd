"""Solvers of the cone complementarity problem (CCP) of one NSC step.

The problem (Anitescu 2006; Tasora & Anitescu 2011): impulses ``γ`` (3m,)
of ``m`` contacts with ``u = N γ + r`` (contact velocities, m/s), ``N`` the
Delassus operator (symmetric positive semi-definite), find

    γ_i ∈ K_i = {|γ_t| ≤ μ_i γ_n},   u_i ∈ K_i° (dual cone),   γ_i · u_i = 0,

which is the optimality condition of ``min ½ γᵀNγ + rᵀγ`` over the cones.
``N`` comes as an operator (``apply(x, out)``: out = N x) and, for PSOR, as a
dense matrix. Every solver starts from a given γ (warm start), stops when
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

One product with N per iteration for BB and APGD (through the saddle-point
factorisation when joints are present: :mod:`trackdyn.integrators.nsc`).
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
    (``max_i |γ_i·u_i|``, N s · m/s), converged (residual ≤ tol)."""

    iterations: int
    residual: float
    gap: float
    converged: bool


def _objective(gamma, Ng, r):
    return 0.5 * gamma @ Ng + r @ gamma


def solve_ccp(method, m, mu, eta, r, gamma, u, apply=None, N=None, tol=1e-9, max_iter=500, omega=1.0, kind=None):
    """Solve the CCP in place: γ (3m,) from its warm start; u (3m,) gets ``Nγ + r``; returns :class:`CCPInfo`.

    ``apply(x, out)`` computes ``out = N x``; ``N`` the dense matrix (needed by ``"psor"``, used by the others
    when given). ``eta`` (m,) the contacts' scales of the residual (1/kg). ``kind`` (m,) int: 0 a friction
    cone of coefficient ``mu``, 1 a rolling block (spin 0, rolling in the disc of radius ``mu``); default
    all cones.
    """
    if m == 0:
        return CCPInfo(0, 0.0, 0.0, True)
    if kind is None:
        kind = np.zeros(m, np.int64)
    if N is not None and apply is None:
        def apply(x, out):
            np.dot(N, x, out=out)
    NK.project_cones(m, kind, mu, gamma, gamma)
    if method == "psor":
        if N is None:
            raise ValueError("solve_ccp: 'psor' needs the dense Delassus matrix N")
        it, res, gap = NK.psor(m, kind, N, r, mu, eta, gamma, u, float(omega), float(tol), int(max_iter), 1)
        return CCPInfo(int(it), float(res), float(gap), bool(res <= tol))
    if method == "bb":
        return _bb(m, kind, mu, eta, r, gamma, u, apply, tol, max_iter)
    if method == "apgd":
        return _apgd(m, kind, mu, eta, r, gamma, u, apply, tol, max_iter)
    raise ValueError(f"solve_ccp: method must be one of {CCP_SOLVERS}, got {method!r}")


def _bb(m, kind, mu, eta, r, gamma, u, apply, tol, max_iter, memory=10, sigma=1e-4):
    n3 = 3 * m
    Ng = np.empty(n3)
    apply(gamma, Ng)
    g = Ng + r
    u[:] = g
    res, gap = NK.ccp_measures(m, kind, mu, eta, gamma, g)
    if res <= tol:
        return CCPInfo(0, float(res), float(gap), True)
    f = _objective(gamma, Ng, r)
    hist = [f]
    alpha = 1.0 / max(float(np.max(eta)), 1e-300)
    trial = np.empty(n3)
    Nd = np.empty(n3)
    it = 0
    while it < max_iter:
        it += 1
        NK.project_cones(m, kind, mu, gamma - alpha * g, trial)
        d = trial - gamma
        apply(trial, Nd)
        Nd -= Ng  # N d
        gd = g @ d
        dNd = d @ Nd
        fmax = max(hist)
        lam = 1.0
        if f + gd + 0.5 * dNd > fmax + sigma * gd and dNd > 0.0:
            lam = min(1.0, max(-gd / dNd, 0.0))
        gamma += lam * d
        Ng += lam * Nd
        f = f + lam * gd + 0.5 * lam * lam * dNd
        hist.append(f)
        if len(hist) > memory:
            hist.pop(0)
        g_new = Ng + r
        s = lam * d
        y = g_new - g
        sy = s @ y
        alpha = (s @ s) / sy if sy > 0.0 else 1.0 / max(float(np.min(eta)), 1e-300)
        alpha = min(max(alpha, 1e-30), 1e30)
        g = g_new
        res, gap = NK.ccp_measures(m, kind, mu, eta, gamma, g)
        if res <= tol:
            break
    u[:] = g
    return CCPInfo(it, float(res), float(gap), bool(res <= tol))


def _apgd(m, kind, mu, eta, r, gamma, u, apply, tol, max_iter):
    n3 = 3 * m
    x = gamma.copy()
    Nx = np.empty(n3)
    apply(x, Nx)
    g = Nx + r
    res, gap = NK.ccp_measures(m, kind, mu, eta, x, g)
    if res <= tol:
        u[:] = g
        return CCPInfo(0, float(res), float(gap), True)
    # Lipschitz estimate from a trial step
    L = 2.0 * float(np.max(eta))
    y = x.copy()
    Ny = Nx.copy()
    x_prev = x.copy()
    Nx_prev = Nx.copy()
    theta = 1.0
    best = (res, gap, x.copy(), g.copy())
    xn = np.empty(n3)
    Nxn = np.empty(n3)
    it = 0
    while it < max_iter:
        it += 1
        gy = Ny + r
        while True:
            NK.project_cones(m, kind, mu, y - gy / L, xn)
            apply(xn, Nxn)
            dx = xn - y
            # the sufficient-decrease test in the form that round-off cannot fail: ½ dxᵀN dx ≤ ½ L |dx|²
            # (f quadratic: f(x) - f(y) - g(y)·dx = ½ dxᵀ N dx exactly)
            if dx @ (Nxn - Ny) <= L * (dx @ dx) or L > 1e300:
                break
            L *= 2.0
        gx = Nxn + r
        res, gap = NK.ccp_measures(m, kind, mu, eta, xn, gx)
        if res < best[0]:
            best = (res, gap, xn.copy(), gx.copy())
        if res <= tol:
            break
        theta_n = 0.5 * (-theta * theta + theta * np.sqrt(theta * theta + 4.0))
        beta = theta * (1.0 - theta) / (theta * theta + theta_n)
        if gy @ (xn - x_prev) > 0.0:  # adaptive restart (O'Donoghue & Candès): the momentum points uphill
            beta = 0.0
            theta_n = 1.0
        y = xn + beta * (xn - x_prev)
        Ny = Nxn + beta * (Nxn - Nx_prev)
        x_prev, xn = xn, x_prev
        Nx_prev, Nxn = Nxn, Nx_prev
        theta = theta_n
        L *= 0.9
    res, gap, xb, gb = best
    gamma[:] = xb
    u[:] = gb
    return CCPInfo(it, float(res), float(gap), bool(res <= tol))
