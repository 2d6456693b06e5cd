r"""The primal Newton solver of the NSC step's cone complementarity problem (``contact_solver="newton"``).

First-order solvers (PSOR, BB, APGD) iterate on the contact impulses with products by the Delassus
operator ``N``; on the M113 ``N`` has rank ~150 (the vehicle's freedom once its pins are exact) against
1 600+ contact unknowns, its slow collective modes set their iteration count (thousands per step,
docs/contact-nsc.md). This solver works in the bodies' velocities instead, as MuJoCo's Newton solver does,
but with the joints exact and the contacts rigid in the limit:

- the step's problem ``min_{γ∈K} ½ γᵀ(N + C)γ + rᵀγ`` (``C`` the contact compliance) gets a proximal term
  ``½ ρ |γ - γ̂|²`` about the last round's impulses ``γ̂``; its dual, in the velocities ``v``, is
  ``F(v) = ½ (v - v_f)ᵀ H (v - v_f) + Σ ψ_i(D_i v + b_i)`` (:mod:`trackdyn.contact._nsc_newton_kernels`),
  convex and once differentiable;
- Newton's method on ``F``: each iteration factorises the step's saddle-point matrix plus the contacts'
  generalized Hessian ``Σ D_iᵀ W_i D_i`` (a second KKT pattern with a coupling block for every body pair
  that may touch) and takes the exact minimiser along the Newton direction (a 1-D convex line search);
- when the velocities have settled, the impulses ``γ`` are checked on the exact step (one solve with the
  step's own factorisation, ``u = Nγ + r``): the CCP's natural-map residual (the same measure and the same
  tolerance as the other solvers) ends the solve; otherwise ``γ̂ ← γ`` (a proximal round) and Newton
  continues from where it is. Proximal rounds converge to the CCP's solution whatever ``ρ``; a small
  ``ρ`` (``ρ_i = newton_regularization · η_i``, η_i the contact's inverse-mass scale) makes one or two
  rounds enough.
"""

from __future__ import annotations

import numpy as np

from ..contact import _nsc_kernels as NK
from ..contact import _nsc_newton_kernels as NN
from ..linsolve import DirectSolver
from ..linsolve.kkt import KKTPattern


class PrimalNewton:
    """Newton's method on the primal of the NSC step (see the module docstring), bound to one system."""

    def __init__(self, system, contact, regularization=1e-3, max_iterations=50, line_search_iterations=30):
        self.system = system
        self.contact = contact
        self.eps = float(regularization)
        self.max_iter = int(max_iterations)
        self.ls_iter = int(line_search_iterations)
        s = system
        pairs = {tuple(p) for p in np.asarray(s.pair_blocks).reshape(-1, 2).tolist()}
        pairs |= set(contact.touch_pairs())
        self.pairs = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
        pat = KKTPattern(s.nb, self.pairs, s.row_body, s.row_joint)
        self.pattern = pat
        self.solver = DirectSolver(pat, refine=0)
        # the step matrix's stored entries (its own pattern) -> this pattern's slots
        base = s.pattern
        keys = base._keys
        col = keys // base.n
        row = keys % base.n
        self.to_w = pat.slots(base.perm[row], base.perm[col])
        self.pidx = np.full((max(s.nb, 1), max(s.nb, 1)), -1, np.int64)
        for p, (i, j) in enumerate(self.pairs):
            self.pidx[i, j] = self.pidx[j, i] = p
        n = pat.n
        self.nd = 6 * s.nb
        self.data = np.zeros(pat.nnz)
        self.base_w = np.zeros(pat.nnz)  # the step matrix's values in this pattern (mapped once per solve)
        self.rhs = np.zeros(n)
        self.x = np.zeros(n)
        self.counters = {"newton_iterations": 0, "proximal_rounds": 0, "factorizations": 0}

    def solve(self, m, kind, mu, eta, r, reg, gamma, u, base_data, exact, tol, slip_mu=None, max_total=None):
        """Solve the CCP on ``N + diag(reg)`` (reg may be None) with ``u = Nγ + r`` from the warm start γ, in
        place; ``exact(γ, out)`` writes ``G Dᵀ γ`` (the velocity increment of impulses γ, through the step's
        own factorisation) into out (nd,). Returns (Newton iterations, residual, gap, products), products
        counting the exact solves.

        ``slip_mu`` (m,), optional: Coulomb's law by de Saxcé's bias inside the iterations. Each Newton
        iteration shifts contact i's normal bias by ``slip_mu_i |u_t,i|`` of its current velocities (held
        through its line search), so that the fixed point on the slip speeds and Newton's iterations are one
        loop; ``self.last_slip`` then holds the slip speeds of the last shift and the residual is that of the
        CCP with it. ``max_total`` caps the Newton iterations of the call (default 10 ``max_iterations``)."""
        max_total = 10 * self.max_iter if max_total is None else int(max_total)
        cs = self.contact
        nd = self.nd
        c_body, c_D = cs.c_body, cs.c_D
        rho = self.eps * eta
        qn = rho.copy()
        qt = rho
        if reg is not None:
            qn = qn + reg[0::3]
        NK.project_cones(m, kind, mu, gamma, gamma)
        pg = np.repeat(rho, 3) * gamma
        dv = np.zeros(nd)
        w = np.zeros(nd)
        tmp = np.zeros(nd)
        if np.any(gamma):
            exact(gamma, dv)
            NK.scatter_Dt(0, m, c_body, c_D, NK.NO_PERM, gamma, w)
        n3 = 3 * m
        uv = np.empty(n3)
        du = np.empty(n3)
        wdu = np.empty(n3)
        W = np.empty((m, 3, 3))
        region = np.empty(m, np.int64)
        Wf = np.empty((m, 3, 3))  # the Hessian of the last factorisation
        region_f = np.full(m, -1, np.int64)
        refactor = True
        g_ls = np.empty(n3)
        xc = np.empty(nd)
        it = products = 0
        res = gap = np.inf
        rtol_v = 0.1 * tol
        data = self.data
        base_w = self.base_w
        base_w[self.to_w] = base_data  # the coupling slots stay zero: the step matrix has none
        pat = self.pattern
        r0 = r
        r = r0.copy()
        coulomb = slip_mu is not None
        self.last_slip = np.zeros(m)
        c_round0 = self.counters["proximal_rounds"]
        g_prev = gamma.copy()
        while True:
            # ---- Newton on F for the current γ̂
            for _ in range(min(self.max_iter, max_total - it)):
                NK.gather_D(m, c_body, c_D, NK.NO_PERM, dv, uv)
                if coulomb:
                    slip = np.sqrt((uv[1::3] + r0[1::3]) ** 2 + (uv[2::3] + r0[2::3]) ** 2)
                    r[0::3] = r0[0::3] + slip_mu * slip
                    self.last_slip = slip
                uv += r
                NN.cone_terms(m, kind, mu, qn, qt, pg, uv, gamma, W, region)
                # a new factorisation when a contact changed its piece of ψ or the last step was cut short;
                # otherwise the last one's Hessian still gives a descent direction (the exact line search
                # keeps the iteration convergent) at the cost of one solve
                if refactor or not np.array_equal(region, region_f):
                    data[:] = base_w
                    NN.scatter_hessian(m, c_body, c_D, W, pat.body_slot, self.pidx, pat.pair_slot, data)
                    self.solver.factor(data)
                    self.counters["factorizations"] += 1
                    Wf[:] = W
                    region_f[:] = region
                # Newton point: (H + Ŵ)(v_N - v_f) = Dᵀγ + Ŵ (v - v_f)
                NK.gather_D(m, c_body, c_D, NK.NO_PERM, dv, du)
                NN.weighted(m, Wf, du, wdu)
                self.rhs[:] = 0.0
                NK.scatter_Dt(0, m, c_body, c_D, NK.NO_PERM, gamma, self.rhs)
                NK.scatter_Dt(0, m, c_body, c_D, NK.NO_PERM, wdu, self.rhs)
                self.solver.solve(self.rhs, self.x)
                step = self.x[:nd] - dv
                NK.gather_D(m, c_body, c_D, NK.NO_PERM, step, du)
                # H Δ = -w + Dᵀγ - Dᵀ W D Δ (the Newton system), for the line search and w's update
                NN.weighted(m, Wf, du, wdu)
                tmp[:] = -w
                NK.scatter_Dt(0, m, c_body, c_D, NK.NO_PERM, gamma, tmp)
                wdu *= -1.0
                NK.scatter_Dt(0, m, c_body, c_D, NK.NO_PERM, wdu, tmp)
                a1 = float(step @ w)
                a2 = float(step @ tmp)
                alpha, _ = NN.line_search(m, kind, mu, qn, qt, pg, uv, du, a1, a2, g_ls, self.ls_iter, 1e-10)
                it += 1
                refactor = alpha < 0.999
                dv += alpha * step
                w += alpha * tmp
                # converged when the full Newton step would change no contact velocity by more than rtol_v, or
                # when no step along it descends (round-off)
                if alpha == 0.0 or float(np.max(np.abs(du))) <= rtol_v:
                    break
            # ---- the impulses at this point, checked on the exact step
            NK.gather_D(m, c_body, c_D, NK.NO_PERM, dv, uv)
            uv += r
            NN.cone_terms(m, kind, mu, qn, qt, pg, uv, gamma, W, region)
            exact(gamma, xc)
            products += 1
            NK.gather_D(m, c_body, c_D, NK.NO_PERM, xc, u)
            u += r
            if reg is not None:
                u += reg * gamma
            res, gap = NK.ccp_measures(m, kind, mu, eta, gamma, u)
            self.counters["proximal_rounds"] += 1
            if res <= tol or it >= max_total:
                break
            # the next round's centre: the impulses, extrapolated along the last rounds' change (Güler's
            # accelerated proximal point), projected back onto the cones
            k_round = self.counters["proximal_rounds"] - c_round0
            if k_round > 1:
                ext = gamma + (k_round - 1.0) / (k_round + 2.0) * (gamma - g_prev)
                NK.project_cones(m, kind, mu, ext, ext)
            else:
                ext = gamma.copy()
            g_prev = gamma.copy()
            pg = np.repeat(rho, 3) * ext
            # restart Newton from the exact step of these impulses
            dv[:] = xc
            w[:] = 0.0
            NK.scatter_Dt(0, m, c_body, c_D, NK.NO_PERM, gamma, w)
        self.counters["newton_iterations"] += it
        return it, float(res), float(gap), products
