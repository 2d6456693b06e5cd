"""Iterative saddle-point solvers: MINRES on the full KKT, PSOR and Barzilai-Borwein on the dual.

All three solve the KKT system of a :class:`~trackdyn.linsolve.kkt.KKTPattern`,

.. math::

    \\begin{bmatrix} H & J^T \\\\ J & -δI \\end{bmatrix}
    \\begin{bmatrix} x \\\\ y \\end{bmatrix} = \\begin{bmatrix} a \\\\ b \\end{bmatrix},

behind the same interface as the direct solver (``factor(data)``,
``solve(rhs, out)``), and report per solve ``last_iterations``,
``last_residual`` (``‖rhs − K [x; y]‖₂ / ‖rhs‖₂``, always the true residual)
and ``last_converged``; totals in ``n_factor``, ``n_solve``, ``n_iterations``,
``n_unconverged``. A solve that misses its tolerance returns its best iterate
and does not raise (as Chrono's iterative solvers).

- ``minres``: preconditioned MINRES (Paige & Saunders 1975) on the full,
  symmetric indefinite KKT matrix. The preconditioner is symmetric positive
  definite: the inverse 6×6 body blocks of ``H`` and, for each joint, the
  inverse of its block of the approximate Schur complement
  ``J H_b⁻¹ Jᵀ + δI``. Needs no inverse of ``H``.
- ``psor``: projected successive over-relaxation on the dual (Schur
  complement) ``N y = J H⁻¹ a − b``, ``N = J H⁻¹ Jᵀ + δI``, row by row as
  Chrono's ``ChSolverPSOR``, keeping ``x = H⁻¹(a − Jᵀ y)`` up to date. With
  bilateral constraints only, the projection is the identity.
- ``bb``: Barzilai-Borwein spectral gradient on the same dual quadratic, with
  the Jacobi (diagonal) preconditioner and a non-monotone (Grippo-Lampariello-
  Lucidi) safeguard, as Chrono's ``ChSolverBB``.

``H⁻¹`` for the dual methods (option ``hessian``):

- ``"exact"`` (default): ``H`` alone is factored with the fixed-pattern LDLᵀ
  (a :class:`KKTPattern` without rows, so the pair blocks of force elements
  and joint stiffness are kept); PSOR forms ``E = H⁻¹ Jᵀ`` (dense, nd × nc,
  one solve per row) and BB applies ``H⁻¹`` by one solve per iteration. Exact
  for any ``H``; memory of PSOR grows as nd·nc.
- ``"block"``: ``H`` is replaced by its 6×6 body blocks ``H_b`` (Chrono's
  iterative solvers see only the mass blocks); the inner dual iteration is
  then sparse and cheap, and an outer defect correction on the true KKT
  residual restores the exact solution. The outer loop converges when the
  dropped coupling is small against the body blocks (``h² K`` ≪ ``M``); it
  stops with ``last_converged = False`` otherwise.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .kkt import DirectSolver, KKTPattern

__all__ = ["MinresSolver", "PSORSolver", "BBSolver", "KKTBlocks"]


# =========================================================================== block view of the KKT values
class KKTBlocks:
    """The KKT values of a :class:`KKTPattern` in block form (original unknown order).

    ``load(data)`` fills ``Hb`` (nb, 6, 6) body blocks of H, ``Hp`` (n_pair, 6,
    6) coupling blocks ``H[6i:6i+6, 6j:6j+6]`` of ``pair`` (n_pair, 2), ``Jr``
    (nc, 12) Jacobian rows on ``(body_i, body_j)`` = ``row_body`` and ``delta``
    (nc,) with the lower-right block equal to ``−δ``.
    """

    def __init__(self, pattern: KKTPattern):
        self.pattern = p = pattern
        self.nb = int(p.n_body)
        self.nd = 6 * self.nb
        self.nc = int(p.n) - self.nd
        self.pair = np.asarray(p.pair_blocks, dtype=np.int64).reshape(-1, 2)
        keep = (self.pair[:, 0] >= 0) & (self.pair[:, 1] >= 0) & (self.pair[:, 0] != self.pair[:, 1])
        self._pair_keep = np.nonzero(keep)[0]
        self.pair = self.pair[keep]
        self.row_body = np.asarray(p.row_body, dtype=np.int64).reshape(-1, 2)
        self.row_unit = np.asarray(p.row_unit, dtype=np.int64)
        self._row_slot = np.where(p.row_slot >= 0, p.row_slot, 0)
        self._row_mask = p.row_slot >= 0
        self.Hb = np.zeros((self.nb, 6, 6))
        self.Hp = np.zeros((len(self.pair), 6, 6))
        self.Jr = np.zeros((self.nc, 12))
        self.delta = np.zeros(self.nc)

    def load(self, data):
        p = self.pattern
        self.Hb[:] = data[p.body_slot]
        if len(self.pair):
            self.Hp[:] = data[p.pair_slot[self._pair_keep]]
        self.Jr[:] = np.where(self._row_mask, data[self._row_slot], 0.0)
        self.delta[:] = -data[p.reg_slot]

    def matvec(self, x, y):
        """y = K x (original order, length nd + nc)."""
        _kkt_matvec(self.Hb, self.pair, self.Hp, self.Jr, self.row_body, self.delta, x, y)
        return y

    def residual_norm(self, rhs, x, work) -> float:
        """‖rhs − K x‖₂ / ‖rhs‖₂ (0 for a zero right-hand side solved by x = 0)."""
        self.matvec(x, work)
        nb_ = np.linalg.norm(rhs)
        r = np.linalg.norm(rhs - work)
        return float(r / nb_) if nb_ > 0 else float(r)

    def body_block_inverses(self, owner: str):
        """Inverses of the body blocks of H; ``np.linalg.LinAlgError`` naming the body if one is not SPD."""
        try:
            L = np.linalg.cholesky(self.Hb)
        except np.linalg.LinAlgError:
            bad = [b for b in range(self.nb) if not np.all(np.linalg.eigvalsh(self.Hb[b]) > 0)]
            raise np.linalg.LinAlgError(
                f"{owner}: the 6x6 block of H of body {bad[0] if bad else '?'} is not positive definite") from None
        Linv = np.linalg.inv(L)
        return np.einsum("bki,bkj->bij", Linv, Linv)


# =========================================================================== kernels
@nb.njit(cache=True)
def _kkt_matvec(Hb, pair, Hp, Jr, row_body, delta, x, y):
    """y = [[H, Jᵀ], [J, −δ]] x with H given by body blocks and pair blocks."""
    nb_ = Hb.shape[0]
    nd = 6 * nb_
    for i in range(y.shape[0]):
        y[i] = 0.0
    for b in range(nb_):
        for a in range(6):
            s = 0.0
            for c in range(6):
                s += Hb[b, a, c] * x[6 * b + c]
            y[6 * b + a] = s
    for p in range(pair.shape[0]):
        i = pair[p, 0]
        j = pair[p, 1]
        for a in range(6):
            for c in range(6):
                hv = Hp[p, a, c]
                y[6 * i + a] += hv * x[6 * j + c]
                y[6 * j + c] += hv * x[6 * i + a]
    for r in range(Jr.shape[0]):
        lm = x[nd + r]
        acc = -delta[r] * lm
        for side in range(2):
            b = row_body[r, side]
            if b >= 0:
                for k in range(6):
                    jv = Jr[r, 6 * side + k]
                    acc += jv * x[6 * b + k]
                    y[6 * b + k] += jv * lm
        y[nd + r] = acc


@nb.njit(cache=True)
def _block_apply(Binv, v, out):
    """out = blockdiag(Binv) v for (nb, 6, 6) blocks."""
    for b in range(Binv.shape[0]):
        for a in range(6):
            s = 0.0
            for c in range(6):
                s += Binv[b, a, c] * v[6 * b + c]
            out[6 * b + a] = s


@nb.njit(cache=True)
def _precond_apply(Hinv, unit_rows, unit_len, Sinv, r, z, nd):
    """MINRES preconditioner: z = blockdiag(H_b⁻¹, S_u⁻¹) r."""
    _block_apply(Hinv, r, z)
    for u in range(unit_rows.shape[0]):
        m = unit_len[u]
        for a in range(m):
            s = 0.0
            for c in range(m):
                s += Sinv[u, a, c] * r[nd + unit_rows[u, c]]
            z[nd + unit_rows[u, a]] = s


@nb.njit(cache=True)
def _schur_unit_blocks(Jr, row_body, Hinv, delta, unit_rows, unit_len, S):
    """S_u = J_u H_b⁻¹ J_uᵀ + δ I for the rows of each joint unit (blocks of the approximate Schur complement)."""
    for u in range(unit_rows.shape[0]):
        m = unit_len[u]
        for a in range(m):
            ra = unit_rows[u, a]
            for c in range(m):
                rc = unit_rows[u, c]
                s = 0.0
                for sa in range(2):
                    ba = row_body[ra, sa]
                    if ba < 0:
                        continue
                    for sc in range(2):
                        if row_body[rc, sc] != ba:
                            continue
                        for i in range(6):
                            ji = Jr[ra, 6 * sa + i]
                            if ji == 0.0:
                                continue
                            for k in range(6):
                                s += ji * Hinv[ba, i, k] * Jr[rc, 6 * sc + k]
                S[u, a, c] = s + (delta[ra] if a == c else 0.0)


@nb.njit(cache=True)
def _minres(Hb, pair, Hp, Jr, row_body, delta, Hinv, unit_rows, unit_len, Sinv, b, x, tol, max_iter,
            r1, r2, y, v, w, w1, w2, tmp):
    """Preconditioned MINRES from the initial x (in place); returns (iterations, preconditioned residual estimate).

    Stops when the recurrence's estimate of ``‖r‖_{P⁻¹}`` falls below
    ``tol · β₁`` (β₁ the initial one) or after ``max_iter`` iterations.
    """
    nd = 6 * Hb.shape[0]
    n = b.shape[0]
    _kkt_matvec(Hb, pair, Hp, Jr, row_body, delta, x, tmp)
    for i in range(n):
        r1[i] = b[i] - tmp[i]
    _precond_apply(Hinv, unit_rows, unit_len, Sinv, r1, y, nd)
    beta1 = 0.0
    for i in range(n):
        beta1 += r1[i] * y[i]
    if beta1 <= 0.0:
        return 0, 0.0
    beta1 = math.sqrt(beta1)
    oldb = 0.0
    beta = beta1
    dbar = 0.0
    epsln = 0.0
    phibar = beta1
    cs = -1.0
    sn = 0.0
    for i in range(n):
        w[i] = 0.0
        w2[i] = 0.0
        r2[i] = r1[i]
    itn = 0
    while itn < max_iter:
        itn += 1
        s = 1.0 / beta
        for i in range(n):
            v[i] = s * y[i]
        _kkt_matvec(Hb, pair, Hp, Jr, row_body, delta, v, y)
        if itn >= 2:
            f = beta / oldb
            for i in range(n):
                y[i] -= f * r1[i]
        alfa = 0.0
        for i in range(n):
            alfa += v[i] * y[i]
        f = alfa / beta
        for i in range(n):
            y[i] -= f * r2[i]
            r1[i] = r2[i]
            r2[i] = y[i]
        _precond_apply(Hinv, unit_rows, unit_len, Sinv, r2, y, nd)
        oldb = beta
        beta = 0.0
        for i in range(n):
            beta += r2[i] * y[i]
        if beta < 0.0:
            beta = 0.0
        beta = math.sqrt(beta)
        oldeps = epsln
        dlt = cs * dbar + sn * alfa
        gbar = sn * dbar - cs * alfa
        epsln = sn * beta
        dbar = -cs * beta
        gamma = math.sqrt(gbar * gbar + beta * beta)
        if gamma < 1e-300:
            gamma = 1e-300
        cs = gbar / gamma
        sn = beta / gamma
        phi = cs * phibar
        phibar = sn * phibar
        denom = 1.0 / gamma
        for i in range(n):
            w1[i] = w2[i]
            w2[i] = w[i]
            w[i] = (v[i] - oldeps * w1[i] - dlt * w2[i]) * denom
            x[i] += phi * w[i]
        if phibar <= tol * beta1 or beta == 0.0:
            break
    return itn, phibar / beta1


@nb.njit(cache=True, inline="always")
def _row_gap(Jr, row_body, delta, bvec, x, y, r):
    """Row r of J x − δ y − b (J stored per row on its two bodies: Jr (nc, 12), row_body (nc, 2))."""
    gr = -delta[r] * y[r] - bvec[r]
    for side in range(2):
        b = row_body[r, side]
        if b >= 0:
            for k in range(6):
                gr += Jr[r, 6 * side + k] * x[6 * b + k]
    return gr


@nb.njit(cache=True)
def _psor_dense(Jr, row_body, delta, Et, Ndiag, bvec, x, y, omega, tol_abs, max_iter, g):
    """PSOR sweeps on the dual with x = H⁻¹(a − Jᵀy) maintained; E stored densely as Et (nc, nd).

    Returns (sweeps, ‖J x − δ y − b‖₂) with the residual of the last full sweep.
    """
    nc = Jr.shape[0]
    nd = x.shape[0]
    res = 0.0
    it = 0
    while it < max_iter:
        it += 1
        for r in range(nc):
            gr = _row_gap(Jr, row_body, delta, bvec, x, y, r)
            d = omega * gr / Ndiag[r]
            y[r] += d
            for i in range(nd):
                x[i] -= d * Et[r, i]
        res = _dual_residual(Jr, row_body, delta, bvec, x, y, g)
        if res <= tol_abs:
            break
    return it, res


@nb.njit(cache=True)
def _psor_block(Jr, row_body, delta, Eb, Ndiag, bvec, x, y, omega, tol_abs, max_iter, g):
    """PSOR sweeps as :func:`_psor_dense` with E = H_b⁻¹ Jᵀ stored per row on its two bodies (nc, 12)."""
    nc = Jr.shape[0]
    res = 0.0
    it = 0
    while it < max_iter:
        it += 1
        for r in range(nc):
            gr = _row_gap(Jr, row_body, delta, bvec, x, y, r)
            d = omega * gr / Ndiag[r]
            y[r] += d
            for side in range(2):
                b = row_body[r, side]
                if b >= 0:
                    for k in range(6):
                        x[6 * b + k] -= d * Eb[r, 6 * side + k]
        res = _dual_residual(Jr, row_body, delta, bvec, x, y, g)
        if res <= tol_abs:
            break
    return it, res


@nb.njit(cache=True)
def _dual_residual(Jr, row_body, delta, bvec, x, y, g):
    """g = J x − δ y − b (the second block of the KKT residual, sign flipped); returns ‖g‖₂."""
    s2 = 0.0
    for r in range(Jr.shape[0]):
        gr = _row_gap(Jr, row_body, delta, bvec, x, y, r)
        g[r] = gr
        s2 += gr * gr
    return math.sqrt(s2)


@nb.njit(cache=True)
def _jt_times(Jr, row_body, y, out):
    """out (nd,) = Jᵀ y."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    for r in range(Jr.shape[0]):
        for side in range(2):
            b = row_body[r, side]
            if b >= 0:
                for k in range(6):
                    out[6 * b + k] += Jr[r, 6 * side + k] * y[r]


@nb.njit(cache=True)
def _j_times(Jr, row_body, x, out):
    """out (nc,) = J x."""
    for r in range(Jr.shape[0]):
        s = 0.0
        for side in range(2):
            b = row_body[r, side]
            if b >= 0:
                for k in range(6):
                    s += Jr[r, 6 * side + k] * x[6 * b + k]
        out[r] = s


# =========================================================================== H⁻¹ operators for the dual methods
class _ExactHInverse:
    """H⁻¹ by the fixed-pattern LDLᵀ of H alone (pair blocks kept)."""

    exact = True

    def __init__(self, pattern: KKTPattern, blocks: KKTBlocks):
        self.blocks = blocks
        self.hp = KKTPattern(pattern.n_body, blocks.pair, np.zeros((0, 2), dtype=np.int64),
                             np.zeros(0, dtype=np.int64))
        self.direct = DirectSolver(self.hp, refine=1)
        self.src = np.concatenate([pattern.body_slot.ravel(), pattern.pair_slot[blocks._pair_keep].ravel()])
        self.dst = np.concatenate([self.hp.body_slot.ravel(), self.hp.pair_slot.ravel()])
        self.hdata = np.zeros(self.hp.nnz)
        self.n_solve = 0

    def factor(self, data, owner):
        self.hdata[self.dst] = data[self.src]
        try:
            self.direct.factor(self.hdata)
        except np.linalg.LinAlgError as err:
            raise np.linalg.LinAlgError(f"{owner}: H alone cannot be factored ({err})") from None
        if np.any(self.direct.D <= 0):
            raise np.linalg.LinAlgError(f"{owner}: H is not positive definite; the dual (Schur complement) "
                                        "methods need it, use 'direct' or 'minres'")

    def apply(self, v, out):
        self.direct.solve(v, out)
        self.n_solve += 1
        return out


class _BlockHInverse:
    """H⁻¹ approximated by the inverse body blocks (Chrono's iterative solvers)."""

    exact = False

    def __init__(self, pattern: KKTPattern, blocks: KKTBlocks):
        self.blocks = blocks
        self.Binv = np.zeros((blocks.nb, 6, 6))
        self.n_solve = 0

    def factor(self, data, owner):
        self.Binv[:] = self.blocks.body_block_inverses(owner)

    def apply(self, v, out):
        _block_apply(self.Binv, v, out)
        return out


# =========================================================================== solvers
class _IterativeSolver:
    """Common bookkeeping of the iterative solvers (see the module docstring)."""

    name = "iterative"

    def __init__(self, pattern: KKTPattern, tol: float = 1e-8, max_iter: int = 1000, warm_start: bool = True):
        owner = f"solver {self.name!r}"
        try:
            self.tol = float(tol)
        except (TypeError, ValueError):
            raise ValueError(f"{owner}: tol must be a number, got {tol!r}") from None
        if not (np.isfinite(self.tol) and self.tol > 0):
            raise ValueError(f"{owner}: tol must be positive, got {tol!r}")
        if isinstance(max_iter, bool) or not float(max_iter).is_integer() or int(max_iter) < 1:
            raise ValueError(f"{owner}: max_iter must be a positive integer, got {max_iter!r}")
        self.max_iter = int(max_iter)
        self.warm_start = bool(warm_start)
        self.pattern = pattern
        self.blocks = KKTBlocks(pattern)
        self.n = int(pattern.n)
        self.nd, self.nc = self.blocks.nd, self.blocks.nc
        self.data = None
        self.last_iterations = 0
        self.last_residual = float("nan")
        self.last_converged = True
        self.n_factor = 0
        self.n_solve = 0
        self.n_iterations = 0
        self.n_unconverged = 0
        self._work = np.zeros(self.n)
        self._x_prev = np.zeros(self.n)

    def factor(self, data):
        self.data = data
        self.blocks.load(data)
        self._setup()
        self.n_factor += 1

    def solve(self, rhs, out):
        rhs = np.asarray(rhs, dtype=float)
        # warm start from the last solution (the dual methods use its multipliers only)
        out[:] = self._x_prev if self.warm_start else 0.0
        its = self._solve(rhs, out)
        self.last_iterations = int(its)
        self.last_residual = self.blocks.residual_norm(rhs, out, self._work)
        self.last_converged = bool(self.last_residual <= self.tol)
        self.n_unconverged += not self.last_converged
        self.n_solve += 1
        self.n_iterations += int(its)
        self._x_prev[:] = out
        return out

    def _setup(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _solve(self, rhs, out) -> int:  # pragma: no cover - abstract
        raise NotImplementedError


class MinresSolver(_IterativeSolver):
    """Preconditioned MINRES on the full KKT matrix (see the module docstring).

    Parameters
    ----------
    pattern : KKTPattern
    tol : float
        Target relative residual ``‖rhs − K x‖₂/‖rhs‖₂`` (default 1e-8).
    max_iter : int
        Iteration limit per solve (default 5000).
    warm_start : bool
        Start from the last solve's solution (default True).
    """

    name = "minres"

    def __init__(self, pattern: KKTPattern, tol: float = 1e-8, max_iter: int = 5000, warm_start: bool = True):
        super().__init__(pattern, tol, max_iter, warm_start)
        blk = self.blocks
        units, inverse = np.unique(blk.row_unit, return_inverse=True)
        lens = np.bincount(inverse, minlength=len(units)) if blk.nc else np.zeros(0, dtype=np.int64)
        width = int(lens.max()) if len(lens) else 1
        self.unit_rows = np.full((len(units), width), 0, dtype=np.int64)
        self.unit_len = lens.astype(np.int64)
        fill = np.zeros(len(units), dtype=np.int64)
        for r in range(blk.nc):
            u = inverse[r]
            self.unit_rows[u, fill[u]] = r
            fill[u] += 1
        self.S = np.zeros((len(units), width, width))
        self.Sinv = np.zeros_like(self.S)
        self.Hinv = np.zeros((blk.nb, 6, 6))
        n = self.n
        self._vecs = [np.zeros(n) for _ in range(8)]

    def _setup(self):
        blk = self.blocks
        self.Hinv[:] = blk.body_block_inverses(f"solver {self.name!r}")
        _schur_unit_blocks(blk.Jr, blk.row_body, self.Hinv, blk.delta, self.unit_rows, self.unit_len, self.S)
        self.Sinv[:] = 0.0
        for m in np.unique(self.unit_len):
            sel = np.nonzero(self.unit_len == m)[0]
            self.Sinv[sel, :m, :m] = np.linalg.inv(self.S[sel, :m, :m])

    def _solve(self, rhs, out) -> int:
        blk = self.blocks
        total = 0
        if np.linalg.norm(rhs) == 0.0:
            out[:] = 0.0
            return 0
        safety = 0.5
        # restarts on the true residual: the recurrence measures it in the P⁻¹ norm, relative to its start
        while total < self.max_iter:
            rel = blk.residual_norm(rhs, out, self._work)
            if rel <= self.tol:
                break
            its, _ = _minres(blk.Hb, blk.pair, blk.Hp, blk.Jr, blk.row_body, blk.delta, self.Hinv, self.unit_rows,
                             self.unit_len, self.Sinv, rhs, out, safety * self.tol / rel, self.max_iter - total,
                             *self._vecs)
            total += its
            if its == 0:
                break
            safety *= 0.1
        return total


class _DualSolver(_IterativeSolver):
    """Shared set-up of the dual (Schur complement) methods: H⁻¹, E, diag(N), outer defect correction."""

    def __init__(self, pattern, tol, max_iter, warm_start, hessian, max_outer=50):
        super().__init__(pattern, tol, max_iter, warm_start)
        if hessian not in ("exact", "block"):
            raise ValueError(f"solver {self.name!r}: hessian must be 'exact' or 'block', got {hessian!r}")
        self.hessian = hessian
        self.hinv = _ExactHInverse(pattern, self.blocks) if hessian == "exact" else _BlockHInverse(pattern,
                                                                                                    self.blocks)
        self.max_outer = int(max_outer)
        self.Ndiag = np.zeros(self.nc)
        self._g = np.zeros(self.nc)
        self._u = np.zeros(self.nd)
        self._t = np.zeros(self.nd)
        self._r = np.zeros(self.n)
        self._d = np.zeros(self.n)

    def _setup(self):
        owner = f"solver {self.name!r}"
        self.hinv.factor(self.data, owner)
        self._setup_dual()

    def _setup_dual(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _inner(self, a, b, x, y, tol_abs, max_iter) -> int:  # pragma: no cover - abstract
        """Solve the dual approximately: y (in place, warm), x = H̃⁻¹(a − Jᵀy); returns iterations."""
        raise NotImplementedError

    def _solve(self, rhs, out) -> int:
        nd = self.nd
        bnorm = float(np.linalg.norm(rhs))
        target = self.tol * bnorm
        if bnorm == 0.0:
            out[:] = 0.0
            return 0
        if self.hinv.exact:
            x, y = out[:nd], out[nd:]
            return self._inner(rhs[:nd], rhs[nd:], x, y, target, self.max_iter)
        # defect correction: K̃ d = rhs − K out with K̃ the block-diagonal-H approximation
        total = 0
        r, d = self._r, self._d
        d[:] = 0.0
        d[nd:] = out[nd:]
        out[:] = 0.0
        r[:] = rhs
        for _ in range(self.max_outer):
            rn = np.linalg.norm(r)
            if rn <= target or total >= self.max_iter:
                break
            dx, dy = d[:nd], d[nd:]
            total += self._inner(r[:nd], r[nd:], dx, dy, max(0.1 * rn, 0.5 * target), self.max_iter - total)
            out += d
            self.blocks.matvec(out, self._work)
            r[:] = rhs - self._work
            d[:] = 0.0
        return total


class PSORSolver(_DualSolver):
    """Projected SOR on the dual, as Chrono's ``ChSolverPSOR`` (see the module docstring).

    Parameters
    ----------
    pattern : KKTPattern
    tol : float
        Target relative KKT residual (default 1e-8).
    max_iter : int
        Sweeps per solve (default 20000).
    omega : float
        Over-relaxation factor in (0, 2) (default 1.0; the thesis used 0.8).
    warm_start : bool
        Start from the last solve's multipliers (default True).
    hessian : {"exact", "block"}
        How H⁻¹ is applied (default ``"exact"``).
    """

    name = "psor"

    def __init__(self, pattern: KKTPattern, tol: float = 1e-8, max_iter: int = 20000, omega: float = 1.0,
                 warm_start: bool = True, hessian: str = "exact"):
        super().__init__(pattern, tol, max_iter, warm_start, hessian)
        om = float(omega)
        if not (0.0 < om < 2.0):
            raise ValueError(f"solver 'psor': omega must be in (0, 2), got {omega!r}")
        self.omega = om
        self.Et = np.zeros((self.nc, self.nd)) if self.hinv.exact else np.zeros((self.nc, 12))

    def _setup_dual(self):
        blk = self.blocks
        col = np.zeros(self.nd)
        if self.hinv.exact:
            for r in range(self.nc):
                col[:] = 0.0
                for side in range(2):
                    b = blk.row_body[r, side]
                    if b >= 0:
                        col[6 * b: 6 * b + 6] += blk.Jr[r, 6 * side: 6 * side + 6]
                self.hinv.apply(col, self.Et[r])
            for r in range(self.nc):
                s = blk.delta[r]
                for side in range(2):
                    b = blk.row_body[r, side]
                    if b >= 0:
                        s += blk.Jr[r, 6 * side: 6 * side + 6] @ self.Et[r, 6 * b: 6 * b + 6]
                self.Ndiag[r] = s
        else:
            Binv = self.hinv.Binv
            for side in range(2):
                b = blk.row_body[:, side]
                ok = b >= 0
                self.Et[ok, 6 * side: 6 * side + 6] = np.einsum("rij,rj->ri", Binv[b[ok]],
                                                                blk.Jr[ok, 6 * side: 6 * side + 6])
            self.Ndiag[:] = blk.delta + np.einsum("ri,ri->r", blk.Jr, self.Et)
        if np.any(self.Ndiag <= 0):
            raise np.linalg.LinAlgError("solver 'psor': a diagonal entry of the Schur complement is not positive")

    def _inner(self, a, b, x, y, tol_abs, max_iter) -> int:
        blk = self.blocks
        kernel = _psor_dense if self.hinv.exact else _psor_block
        its = 0
        while True:
            # x = H̃⁻¹(a − Jᵀ y) recomputed from y: the sweeps update it incrementally and rounding drifts
            _jt_times(blk.Jr, blk.row_body, y, self._t)
            self.hinv.apply(a - self._t, x)
            res = _dual_residual(blk.Jr, blk.row_body, blk.delta, b, x, y, self._g)
            if res <= tol_abs or its >= max_iter:
                return its
            k, _ = kernel(blk.Jr, blk.row_body, blk.delta, self.Et, self.Ndiag, b, x, y, self.omega,
                          tol_abs, max_iter - its, self._g)
            its += k


class BBSolver(_DualSolver):
    """Barzilai-Borwein on the dual, as Chrono's ``ChSolverBB`` (see the module docstring).

    Minimises ``φ(y) = ½ yᵀN y − yᵀ(J H⁻¹ a − b)`` with Jacobi-scaled BB steps
    ``α = sᵀD s / sᵀN s`` (D = diag N), accepting a step when φ is below the
    largest of the last 10 values plus ``1e-4 α gᵀd`` (GLL) and otherwise taking
    the exact minimiser along the direction. One ``N``·vector product (one
    ``H⁻¹`` application) per iteration.

    Parameters
    ----------
    pattern : KKTPattern
    tol : float
        Target relative KKT residual (default 1e-8).
    max_iter : int
        Iterations per solve (default 20000).
    warm_start : bool
        Start from the last solve's multipliers (default True).
    hessian : {"exact", "block"}
        How H⁻¹ is applied (default ``"exact"``).
    memory : int
        Non-monotone memory of the safeguard (default 10).
    """

    name = "bb"

    def __init__(self, pattern: KKTPattern, tol: float = 1e-8, max_iter: int = 20000, warm_start: bool = True,
                 hessian: str = "exact", memory: int = 10):
        super().__init__(pattern, tol, max_iter, warm_start, hessian)
        if isinstance(memory, bool) or int(memory) < 1:
            raise ValueError(f"solver 'bb': memory must be a positive integer, got {memory!r}")
        self.memory = int(memory)
        self._Eb = np.zeros((self.nc, 12))

    def _setup_dual(self):
        blk = self.blocks
        if self.hinv.exact:
            # diag(N) needs H⁻¹ J_rᵀ per row: one solve per row at set-up (the preconditioner only)
            col = np.zeros(self.nd)
            out = np.zeros(self.nd)
            for r in range(self.nc):
                col[:] = 0.0
                for side in range(2):
                    b = blk.row_body[r, side]
                    if b >= 0:
                        col[6 * b: 6 * b + 6] += blk.Jr[r, 6 * side: 6 * side + 6]
                self.hinv.apply(col, out)
                self.Ndiag[r] = blk.delta[r] + col @ out
        else:
            Binv = self.hinv.Binv
            for side in range(2):
                b = blk.row_body[:, side]
                ok = b >= 0
                self._Eb[ok, 6 * side: 6 * side + 6] = np.einsum("rij,rj->ri", Binv[b[ok]],
                                                                 blk.Jr[ok, 6 * side: 6 * side + 6])
            self.Ndiag[:] = blk.delta + np.einsum("ri,ri->r", blk.Jr, self._Eb)
        if np.any(self.Ndiag <= 0):
            raise np.linalg.LinAlgError("solver 'bb': a diagonal entry of the Schur complement is not positive")

    def _N_times(self, d, out):
        blk = self.blocks
        _jt_times(blk.Jr, blk.row_body, d, self._t)
        self.hinv.apply(self._t, self._u)
        _j_times(blk.Jr, blk.row_body, self._u, out)
        out += blk.delta * d
        return out

    def _inner(self, a, b, x, y, tol_abs, max_iter) -> int:
        blk = self.blocks
        hinv = self.hinv
        nc = self.nc
        # dual right-hand side c = J H̃⁻¹ a − b
        u0 = np.zeros(self.nd)
        hinv.apply(a, u0)
        c = np.zeros(nc)
        _j_times(blk.Jr, blk.row_body, u0, c)
        c -= b
        its = 0
        while True:
            its += self._bb_run(c, y, tol_abs, max_iter - its)
            # the gradient was updated incrementally: check the true one before stopping
            g = self._N_times(y, np.zeros(nc)) - c
            if float(np.linalg.norm(g)) <= tol_abs or its >= max_iter:
                break
        _jt_times(blk.Jr, blk.row_body, y, self._t)
        hinv.apply(a - self._t, x)
        return its

    def _bb_run(self, c, y, tol_abs, max_iter) -> int:
        """BB iterations from y (in place) until ‖N y − c‖ ≤ tol_abs; returns the iteration count."""
        nc = self.nc
        Ny = np.zeros(nc)
        self._N_times(y, Ny)
        g = Ny - c
        phi = 0.5 * y @ Ny - y @ c
        Dinv = 1.0 / self.Ndiag
        hist = [phi]
        Nd = np.zeros(nc)
        alpha = None
        its = 0
        best_y, best_g = y.copy(), float(np.linalg.norm(g))
        while its < max_iter:
            gn = float(np.linalg.norm(g))
            if gn < best_g:
                best_y[:], best_g = y, gn
            if gn <= tol_abs:
                break
            its += 1
            p = -Dinv * g
            self._N_times(p, Nd)
            if alpha is None:
                pNp = float(p @ Nd)
                alpha = float(-(g @ p) / pNp) if pNp > 0 else 1.0
            Nd *= alpha
            d = alpha * p
            gd = float(g @ d)
            dNd = float(d @ Nd)
            phi_new = phi + gd + 0.5 * dNd
            theta = 1.0
            if phi_new > max(hist) + 1e-4 * gd and dNd > 0:
                theta = -gd / dNd
                phi_new = phi + theta * gd + 0.5 * theta * theta * dNd
            y += theta * d
            g += theta * Nd
            phi = phi_new
            hist.append(phi)
            if len(hist) > self.memory:
                hist.pop(0)
            # BB step in the D-metric: α = sᵀD s / sᵀN s with s = θ d
            sDs = theta * theta * float(d @ (self.Ndiag * d))
            sNs = theta * theta * dNd
            alpha = sDs / sNs if sNs > 0 else 1.0
        if float(np.linalg.norm(g)) > best_g:
            y[:] = best_y
        return its
