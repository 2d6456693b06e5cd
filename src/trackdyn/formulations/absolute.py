"""Absolute coordinates with Lagrange multipliers (thesis §2.4.1, eq. 2.7-2.8).

:class:`AbsoluteSystem` turns a :class:`~trackdyn.mbs.model.Model` into arrays
and evaluates, for a state ``(t, q, v)``:

- body kinematics (world positions, rotation matrices, velocities);
- the generalized forces ``f(q, v, t)`` (gravity, gyroscopic torque, force
  elements and any registered force provider such as contact) and their
  Jacobians, added as ``-cK ∂f/∂q - cD ∂f/∂v`` into the KKT values;
- the constraints ``C``, their Jacobian ``J = ∇_q C L(q)`` w.r.t. ``(r, π̄)``,
  ``∂C/∂t`` and the acceleration right-hand side ``γ``.

It knows nothing about time stepping; integrators combine these stages.
Redundant constraint rows (e.g. a planar loop of 3-D revolutes) are found once
at build time by a rank-revealing QR of the Jacobian and removed, with a
warning naming the joints (as Adams does): each loop's from the joint that
closes it (``_rows_by_joint``), a choice that stays independent as the loop
moves (docs/recursive.md, "The rows kept of redundant loops").
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Iterable, Protocol

import numba as nb
import numpy as np
import scipy.linalg as sla
from threadpoolctl import threadpool_limits

from .._compiled import bound_call
from ..linsolve.kkt import KKTPattern
from ..mbs import _force_kernels as FK
from ..mbs import _kernels as MK
from ..mbs.forces import BLOCK_TYPES
from ..mbs.model import Model, State

__all__ = ["AbsoluteSystem", "Kinematics", "RedundantConstraintWarning", "ForceProvider", "ForceContext"]


class RedundantConstraintWarning(UserWarning):
    """Some constraint rows depend on others and were removed."""


@dataclass
class ForceContext:
    """What a :class:`ForceProvider` gets each time forces are evaluated.

    ``f`` (nb, 6) and ``Dv`` (nb, 6) are added to; ``data`` holds the KKT
    values, to which a provider adds ``-cK ∂Q/∂q - cD ∂Q/∂v`` (symmetric
    part) through slot maps obtained from ``system.pattern`` in ``bind``
    (``trackdyn.mbs._force_kernels.scatter_elements`` does all of it for
    12-vector elements). Jacobian terms a provider leaves out of the matrix
    (coupling blocks it does not store) go, for positions, into
    ``Kxv += ∂Q/∂q v`` so the right-hand side keeps the exact linearisation.
    ``data`` is None when only outputs are wanted. ``hist_weight`` is the share
    of the step by which forces with a displacement history look ahead: the
    contact shear spring acts on ``P H + hist_weight · h · v_t`` (1 for Euler;
    θ for the θ-method, so the spring's force is the θ-weighted mean of the
    step's two ends) while the stored history still advances by ``h v_t``.
    ``linearized_step`` is True when the step is one linear solve with ``q^{l+1} = q^l ⊕ h v̄`` and the
    force ``θ f^{l+1} + (1-θ) f^l``, ``f^{l+1}`` linearised about the step's start (Euler implicit
    linearised, θ = 1, and the linearised θ-method; θ is ``hist_weight``): a provider may then evaluate its
    force at a predicted end ``q_p = q^l + h v^l`` and return ``θ (f(q_p) - h K_p v^l) + (1-θ) f(q^l)``
    with ``K_p`` in the matrix: the same linearisation for a linear force, and for a nonlinear one exact
    to O(h²|Δv|²) where the start's linearisation is O(h²|v|²).
    """

    t: float
    h: float
    state: State
    kin: "Kinematics"
    f: np.ndarray
    Dv: np.ndarray
    data: np.ndarray | None
    cK: float
    cD: float
    Kxv: np.ndarray | None = None
    hist_weight: float = 1.0
    linearized_step: bool = False


class ForceProvider(Protocol):
    """A source of forces evaluated every step (contact, terrain, tyres).

    Lifecycle: ``coupling_pairs()`` is asked once, before the KKT pattern is
    built, for the body pairs whose force Jacobian couples them; ``bind(system)``
    is called once the pattern exists; ``initial_extra()`` returns plain arrays
    added to the initial ``State.extra`` (e.g. contact history);
    ``accumulate(ctx)`` adds forces and Jacobians and may stage an updated
    history; ``commit(state)`` writes the staged history into the new state's
    ``extra`` after a step is accepted. ``series()`` maps recorded names to
    ``(array, index)`` pairs refreshed by ``accumulate``.
    """

    name: str

    def coupling_pairs(self) -> Iterable[tuple[int, int]]: ...

    def bind(self, system: "AbsoluteSystem") -> None: ...

    def initial_extra(self) -> dict: ...

    def accumulate(self, ctx: ForceContext) -> None: ...

    def commit(self, state: State) -> None: ...

    def series(self) -> dict: ...


@dataclass
class Kinematics:
    """World-frame body quantities of the current state (last row: ground)."""

    pos: np.ndarray
    R: np.ndarray
    vel: np.ndarray
    omega_w: np.ndarray
    q_ext: np.ndarray


@dataclass(frozen=True)
class _StepCalls:
    """The step's kernels bound by :meth:`AbsoluteSystem.bind_step` (zero-argument compiled calls)."""

    cK: float
    cD: float
    data: np.ndarray
    body_forces: object
    blocks: tuple  # (block, bound evaluation or None for the general path, bound scatter)
    stiffness: object  # None without constraint rows
    jacobian: object


class AbsoluteSystem:
    """Arrays and stage functions of a model in absolute coordinates.

    Parameters
    ----------
    model : Model
    regularization : float
        ``δ`` of the KKT matrix (units of 1/mass); keeps the factorisation
        defined if a redundant row survives. Its effect on the solution is of
        order ``δ λ``.
    remove_redundant : bool
        Detect and remove dependent constraint rows at the initial pose.
    providers : sequence of ForceProvider
        Extra force sources (contact, terrain) evaluated after the elements.
    coupling : {"full", "diagonal"}
        How force elements between two bodies enter the Newton matrix:
        ``"full"`` (exact) stores their body-body coupling block;
        ``"diagonal"`` keeps only each body's own block, which approximates
        the Newton matrix (never the equations: forces are exact) and removes
        the coupling from the sparsity pattern — much less fill for long
        chains. An element's own ``coupling`` attribute overrides this.
    joint_coupling : {"full", "diagonal"}
        The same for the joints' geometric stiffness (see
        :meth:`add_constraint_stiffness`).
    """

    formulation = "absolute"

    def __init__(self, model: Model, regularization: float = 1e-12, remove_redundant: bool = True,
                 providers=(), coupling: str = "full", joint_coupling: str = "diagonal"):
        self.model = model
        self.mass, self.inertia, self.q0, self.v0 = model.body_arrays()
        self.nb = nb_ = len(self.mass)
        self.body_names = model.body_names
        self.gravity = model.gravity.copy()
        self.regularization = float(regularization)
        self.providers = list(providers)
        if model.markers:
            from ..mbs.markers import MarkerOutputs

            self.providers.append(MarkerOutputs(model.markers))
        for name, val in (("coupling", coupling), ("joint_coupling", joint_coupling)):
            if val not in ("full", "diagonal"):
                raise ValueError(f"AbsoluteSystem: {name} must be 'full' or 'diagonal', got {val!r}")
        self.coupling = coupling
        self.joint_coupling = joint_coupling
        # ---------------------------------------------------------- rows
        rows, row_joint = [], []
        for jk, joint in enumerate(model.joints):
            for r in joint._rows_cache:
                rows.append(r)
                row_joint.append(jk)
        self._all_rows = rows
        self._all_row_joint = np.array(row_joint, dtype=np.int64)
        keep = np.arange(len(rows))
        self.removed_rows: list[tuple[str, int]] = []
        self.kin = Kinematics(
            np.zeros((nb_ + 1, 3)), np.zeros((nb_ + 1, 3, 3)), np.zeros((nb_ + 1, 3)),
            np.zeros((nb_ + 1, 3)), np.zeros((nb_ + 1, 7)),
        )
        self.kin.q_ext[-1, 3] = 1.0  # the ground's pose (identity quaternion), set once
        # the step buffers and bound kernels (end of __init__); the stages run the general path until then
        self.q_step = self.v_step = self.lam_step = self._ceval_calls = self._step_calls = None
        self._set_rows(keep)
        if remove_redundant and len(rows):
            keep = self._independent_rows()
            if len(keep) < len(rows):
                dropped = sorted(set(range(len(rows))) - set(keep.tolist()))
                names = {}
                for r in dropped:
                    jn = model.joints[row_joint[r]].name
                    names[jn] = names.get(jn, 0) + 1
                self.removed_rows = sorted(names.items())
                warnings.warn(
                    f"{len(dropped)} redundant constraint row(s) removed: "
                    + ", ".join(f"{n} ({c})" for n, c in self.removed_rows),
                    RedundantConstraintWarning,
                    stacklevel=3,
                )
                self._set_rows(keep)
        # ---------------------------------------------------------- force blocks
        self.blocks = []
        for cls, block_cls in BLOCK_TYPES:
            elems = [e for e in model.forces if isinstance(e, cls)]
            if elems:
                self.blocks.append(block_cls(elems, model))
        # ---------------------------------------------------------- KKT pattern
        pairs = set()
        for blk in self.blocks:
            blk.full = np.array([getattr(blk, "coupled", True) and
                                 (blk.elem_coupling[e] or coupling) == "full" for e in range(blk.n)], dtype=bool)
            for e, (i, j) in enumerate(blk.body):
                if blk.full[e] and i >= 0 and j >= 0 and i != j:
                    pairs.add((min(i, j), max(i, j)))
        for prov in self.providers:
            for i, j in prov.coupling_pairs():
                if i >= 0 and j >= 0 and i != j:
                    pairs.add((min(int(i), int(j)), max(int(i), int(j))))
        # joints couple their bodies through the geometric stiffness of their forces
        if joint_coupling == "full":
            for i, j in self.row_body:
                if i >= 0 and j >= 0 and i != j:
                    pairs.add((min(i, j), max(i, j)))
        self.pair_blocks = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
        self.pattern = KKTPattern(nb_, self.pair_blocks, self.row_body, self.row_joint)
        for blk in self.blocks:
            for e in range(blk.body.shape[0]):
                blk.slot[e] = self._slots(blk.body[e], blk.full[e])
            if blk.rotational:
                blk.slot_rot = FK.rotational_slots(blk.slot)
        for prov in self.providers:
            prov.bind(self)
        self.row_slot12 = np.full((self.nc, 12, 12), -1, dtype=np.int64)
        for r in range(self.nc):
            self.row_slot12[r] = self._slots(self.row_body[r], joint_coupling == "full")
        # compact int32 copies of the rotational blocks that the closed-form rows (CD, DP1) use
        # (FK.constraint_stiffness_add): the per-step traffic of the full map costs more than its arithmetic
        iu, ju = np.triu_indices(3)
        self.row_rot_slot = np.stack([self.row_slot12[:, 3 + iu, 3 + ju], self.row_slot12[:, 9 + iu, 9 + ju]],
                                     axis=1).astype(np.int32).reshape(self.nc, 2, 6)
        self.row_cpl_slot = np.ascontiguousarray(self.row_slot12[:, 3:6, 9:12]).astype(np.int32)
        self.row_end = self._dp1_groups()
        self._cs_Q = np.zeros((self.nc, 12))
        self._cs_Kx = np.zeros((self.nc, 12, 12))
        self._cs_Kv = np.zeros((self.nc, 12, 12))
        self._cs_Q1 = np.zeros((1, 12))
        self._cs_Kx1 = np.zeros((1, 12, 12))
        self._cs_Kv1 = np.zeros((1, 12, 12))
        self._cs_work = np.zeros((6, 3, 12))  # constraint_stiffness_add's work space (it allocates nothing)
        self._cs_w33 = np.zeros((4, 3, 3))
        self._scratch_f = np.zeros((nb_, 6))
        self._scratch_v = np.zeros((nb_, 6))
        self._scratch_kxv = np.zeros((nb_, 6))
        # base values: mass matrix and -δ
        self.base_data = np.zeros(self.pattern.nnz)
        bs = self.pattern.body_slot
        for b in range(nb_):
            for k in range(3):
                self.base_data[bs[b, k, k]] += self.mass[b]
            for k in range(3):
                for m in range(k, 3):
                    self.base_data[bs[b, 3 + k, 3 + m]] += self.inertia[b, k, m]
        self.base_data[self.pattern.reg_slot] -= self.regularization
        # buffers
        self.f = np.zeros((nb_, 6))
        self.Dv = np.zeros((nb_, 6))
        self.Kxv = np.zeros((nb_, 6))  # position Jacobian terms left out of the matrix, times v
        self.provider_time = 0.0  # wall time in force providers (contact...), s
        self.data = np.zeros(self.pattern.nnz)
        # the step's state buffers (load_step) and the kernels bound to them once (trackdyn._compiled: no
        # per-call type dispatch nor argument gathering; the stage methods below use them when given these
        # very arrays, and the general path otherwise)
        self.q_step = self.kin.q_ext[:-1]
        self.v_step = np.zeros((nb_, 6))
        self.lam_step = np.zeros(self.nc)
        self._bind_kinematics()

    def _bind_kinematics(self) -> None:
        """Bind the kinematics (to the step buffers) and the constraint evaluation (to the system's arrays)."""
        k = self.kin
        self._kin_call = bound_call(MK.body_kinematics, self.q_step, self.v_step, k.pos, k.R, k.vel, k.omega_w)
        self._ceval_calls = tuple(
            bound_call(MK.constraint_eval, self.row_type, self.row_body, self.row_a, self.row_s, self.row_c,
                       self.row_u, self.row_f, k.pos, k.R, k.vel, k.omega_w, g, self.phi, self.J, self.phi_t,
                       self.gamma)
            for g in (False, True))

    def _slots(self, bodies, full: bool):
        """Slot map (12, 12) of a two-body element; without ``full`` only the diagonal blocks."""
        if full or bodies[0] < 0 or bodies[1] < 0:
            return self.pattern.element_slots(bodies)
        return np.maximum(self.pattern.element_slots((bodies[0], -1)), self.pattern.element_slots((-1, bodies[1])))

    # ------------------------------------------------------------------ rows
    def _set_rows(self, keep):
        rows = [self._all_rows[k] for k in keep]
        n = len(rows)
        self.nc = n
        self.row_index = np.asarray(keep, dtype=np.int64)
        self.row_type = np.array([r.type for r in rows], dtype=np.int64)
        self.row_body = np.array([[r.body_i, r.body_j] for r in rows], dtype=np.int64).reshape(n, 2)
        self.row_a = np.array([[r.a_i, r.a_j] for r in rows], dtype=float).reshape(n, 2, 3)
        self.row_s = np.array([[r.s_i, r.s_j] for r in rows], dtype=float).reshape(n, 2, 3)
        self.row_c = np.array([r.c for r in rows], dtype=float).reshape(n, 3)
        self.row_u = np.array([[r.u, r.w] for r in rows], dtype=float).reshape(n, 2, 3)
        self.row_f0 = np.array([r.f0 for r in rows], dtype=float)
        self.row_f = np.zeros((n, 3))
        self.row_f[:, 0] = self.row_f0
        self.row_joint = self._all_row_joint[self.row_index] if n else np.zeros(0, np.int64)
        self.drivers = [(k, r.profile, r.profile_kind) for k, r in enumerate(rows) if r.profile is not None]
        self.driver_rows = np.array([k for k, _, _ in self.drivers], dtype=np.int64)
        self.phi = np.zeros(n)
        self.J = np.zeros((n, 12))
        self.phi_t = np.zeros(n)
        self.gamma = np.zeros(n)
        # joint -> rows
        self.joint_rows = [np.nonzero(self.row_joint == jk)[0] for jk in range(len(self.model.joints))]
        self.joint_names = [j.name for j in self.model.joints]
        self.joint_body_b = np.array([j._ib for j in self.model.joints], dtype=np.int64)
        self.joint_point_b = np.array([j._point_b for j in self.model.joints], dtype=float).reshape(-1, 3)

    def dense_jacobian(self) -> np.ndarray:
        """The constraint Jacobian as a dense (nc, 6 nb) array, from the rows' 12-column blocks ``J`` as last
        evaluated (``eval_constraints``)."""
        Jd = np.zeros((self.nc, 6 * self.nb))
        for r in range(self.nc):
            for side in range(2):
                b = self.row_body[r, side]
                if b >= 0:
                    Jd[r, 6 * b: 6 * b + 6] = self.J[r, 6 * side: 6 * side + 6]
        return Jd

    def _independent_rows(self):
        """Indices of a maximal independent set of rows at the initial state."""
        self.update_kinematics(self.q0, self.v0)
        self.update_drivers(0.0)
        self.eval_constraints(want_gamma=False)
        Jd = self.dense_jacobian()
        norms = np.linalg.norm(Jd, axis=1)
        if np.any(norms == 0):
            bad = [self.model.joints[self.row_joint[r]].name for r in np.nonzero(norms == 0)[0]]
            raise ValueError(f"constraint rows of joints {sorted(set(bad))} have a zero Jacobian at the initial pose")
        Js = Jd / norms[:, None]
        # drivers first so they are never the ones removed
        order = np.concatenate([self.driver_rows, np.setdiff1d(np.arange(self.nc), self.driver_rows)])
        # A closed loop's redundant rows are exactly equivalent, so the pivots choose among them by round-off,
        # and threaded BLAS rounds differently from one thread (Dask workers run one): the M113 dropped
        # right.shoe[11] and [57] with two threads, [52] and [62] with one, and a 0.803 m step trial passed
        # in one and failed in the other. One thread here makes the choice the same in every process.
        with threadpool_limits(limits=1):
            _, Rm, piv = sla.qr(Js[order].T, mode="economic", pivoting=True)
        d = np.abs(np.diag(Rm))
        tol = 1e-9 * max(d[0], 1.0) if len(d) else 0.0
        rank = int(np.sum(d > tol)) if len(d) else 0
        keep = np.sort(order[piv[:rank]])
        if rank < len(order):
            # the left null space of the rows (one column per redundancy), from the same factorisation
            R11, R12 = Rm[:rank, :rank], Rm[:rank, rank:]
            N = np.zeros((len(order), len(order) - rank))
            N[order[piv[:rank]]] = -sla.solve_triangular(R11, R12)
            N[order[piv[rank:]]] = np.eye(len(order) - rank)
            with threadpool_limits(limits=1):  # as above: the same choice in every process
                by_joint = self._rows_by_joint(np.linalg.qr(N)[0], order)
            if by_joint is not None:
                keep = by_joint
        return self.row_index[keep]

    def _rows_by_joint(self, N, order, tol=1e-8):
        """Independent rows that drop a closed loop's redundant rows together from the joint that closes it.

        ``N`` (nc, r): an orthonormal basis of the rows' left null space (``Nᵀ J = 0``, one column per
        redundancy); ``order``: the rows, drivers first. Going back from the last joint (in ``order``), each
        joint's rows on which the null vectors left are not zero are dropped, those with the largest
        components first (pivoted QR of its block of N, ``tol`` on its pivots), and the null vectors that do
        not vanish on them are removed. The dropped set D then has ``N_D`` block-triangular with square
        non-singular diagonal blocks, so the rows kept are independent; None if r rows could not be so
        dropped (a rank at the tolerance: the caller keeps the pivoted set).

        Why by joint: the kept rows stay independent exactly while ``N_D`` is non-singular, and N moves with
        the pose. A planar loop of revolutes has three redundancies, its self-equilibrated out-of-plane
        reactions (a force along the loop's normal n, two moments in its plane). Dropping the closing joint's
        out-of-plane translation row and its two perpendicularity (DP1) rows, as the recursive formulation drops
        its cut joint's, gives ``N_D ~ [[n_c, 0], [ℓ_1, u_1], [ℓ_2, u_2]]`` with ``u_1 ⊥ u_2`` the DP1 rows'
        moment axes through the one joint point: determinant ``±n_c`` (n's component on the dropped row's world
        axis c), whatever the loop does. Three DP1 rows of three joints (which a global pivoted QR picks among
        a loop's equivalent rows by round-off) give three moment axes through three joint points in the loop's
        plane, singular whenever the three lines meet in one point, which the links, turning round the loop,
        bring about (the sprung hull's at 0.182 s, docs/recursive.md).
        """
        groups = [order[:len(self.driver_rows)]] if len(self.driver_rows) else []
        free = order[len(self.driver_rows):]
        joint = self.row_joint[free]
        groups += [free[joint == jk] for jk in np.unique(joint)]
        dropped = []
        for g in reversed(groups):
            if N.shape[1] == 0:
                break
            A = N[g]
            if not np.max(np.abs(A)) > tol:
                continue
            _, Ra, pa = sla.qr(A.T, mode="economic", pivoting=True)
            m = int(np.sum(np.abs(np.diag(Ra)) > tol))
            dropped.extend(g[pa[:m]].tolist())
            # the null vectors left: those vanishing on the rows just dropped
            _, _, Vt = np.linalg.svd(A[pa[:m]])
            N = np.linalg.qr(N @ Vt[m:].T)[0]
        if N.shape[1]:
            return None
        return np.setdiff1d(np.arange(len(order)), dropped)

    def _dp1_groups(self) -> np.ndarray:
        """``end[r]``: one past the last row summed with row r in the joints' geometric stiffness
        (FK.constraint_stiffness_add): consecutive DP1/DP1R rows with the same bodies and ā_j (a revolute's two
        perpendicularity rows); ``r + 1`` for every other row."""
        n = self.nc
        end = np.arange(1, n + 1, dtype=np.int64)
        dp1 = np.isin(self.row_type, (MK.DP1, MK.DP1R))
        r = 0
        while r < n:
            e = r + 1
            if dp1[r]:
                while (e < n and dp1[e] and np.array_equal(self.row_body[e], self.row_body[r])
                       and np.array_equal(self.row_a[e, 1], self.row_a[r, 1])):
                    e += 1
            end[r] = e
            r = e
        return end

    # ------------------------------------------------------------------ stages
    def load_step(self, state: State):
        """Copy ``state``'s q, v and λ into the step buffers ``q_step`` (a view of ``kin.q_ext``), ``v_step``
        and ``lam_step`` and return them. A stepper that passes these buffers to the stage methods (with the
        ``cK``, ``cD`` and ``data`` of :meth:`bind_step`) runs the kernels bound to them."""
        try:
            self.q_step[:] = state.q
            self.v_step[:] = state.v
            self.lam_step[:] = state.lam
        except (ValueError, TypeError) as err:
            for name, buf in (("q", self.q_step), ("v", self.v_step), ("lam", self.lam_step)):
                got = np.shape(getattr(state, name))
                if got != buf.shape:
                    raise ValueError(f"state.{name}: expected shape {buf.shape} for this model, got {got}") from None
            raise ValueError(f"state: q, v and lam must be real numbers ({err})") from None
        return self.q_step, self.v_step, self.lam_step

    def bind_step(self, cK: float, cD: float, data) -> None:
        """Bind the step's force, constraint-stiffness and Jacobian kernels to the step buffers, the Newton
        matrix factors ``cK``, ``cD`` and the KKT values ``data`` (replacing an earlier binding)."""
        kin, v = self.kin, self.v_step
        cK, cD = float(cK), float(cD)
        blocks = []
        for blk in self.blocks:
            ev = blk.step_call(kin, v)
            if blk.rotational:
                sc = bound_call(FK.scatter_rotational, blk.body, blk.Q, blk.Kx, blk.Kv, blk.slot_rot, cK, cD, v,
                                self.f, data, self.Dv, self.Kxv)
            else:
                sc = bound_call(FK.scatter_elements, blk.body, blk.Q, blk.Kx, blk.Kv, blk.slot, cK, cD, v, self.f,
                                data, self.Dv, self.Kxv)
            blocks.append((blk, ev, sc))
        stiff = None
        if self.nc:
            stiff = bound_call(
                FK.constraint_stiffness_add, self.row_type, self.row_body, self.row_a, self.row_s, self.row_c,
                self.row_u, self.row_f, self.lam_step, kin.pos, kin.R, self.row_slot12, self.row_rot_slot,
                self.row_cpl_slot, self.row_end, cK, v, True, data, self.Kxv, self._cs_Q1, self._cs_Kx1,
                self._cs_Kv1, self._cs_work, self._cs_w33)
        self._step_calls = _StepCalls(
            cK, cD, data, bound_call(FK.body_forces, self.mass, self.inertia, v, self.gravity, self.f),
            tuple(blocks), stiff, bound_call(_scatter_rows, self.J, self.pattern.row_slot, data))

    def set_regularization(self, value: float) -> None:
        """Change ``δ`` of the KKT matrix (the ``regularization`` parameter) of a built system, e.g. one a
        fidelity built: its bias on the multipliers, of order ``δ λ``, is what separates the absolute and the
        recursive formulations' tight-tolerance runs (docs/recursive.md)."""
        d = float(value)
        if not (np.isfinite(d) and d >= 0.0):
            raise ValueError(f"regularization = {value!r}: expected a finite number >= 0")
        self.base_data[self.pattern.reg_slot] += self.regularization - d
        self.regularization = d

    def update_kinematics(self, q, v):
        k = self.kin
        if q is self.q_step and v is self.v_step:
            self._kin_call()  # q_step is q_ext's view: nothing to copy
            return
        MK.body_kinematics(q, v, k.pos, k.R, k.vel, k.omega_w)
        k.q_ext[:-1] = q

    def _driver_values(self, t: float, out):
        """f, ḟ, f̈ of every driver row at time t into out (n_driver, 3)."""
        for n, (k, prof, kind) in enumerate(self.drivers):
            if kind == "value":
                out[n] = (self.row_f0[k] + prof.value(t), prof.d1(t), prof.d2(t))
            else:
                out[n] = (self.row_f0[k] + prof.integral(t), prof.value(t), prof.d1(t))

    def update_drivers(self, t: float):
        """Set f, ḟ, f̈ of the driver rows at time t."""
        if self.drivers:
            vals = np.empty((len(self.drivers), 3))
            self._driver_values(t, vals)
            self.row_f[self.driver_rows] = vals

    def eval_constraints(self, want_gamma: bool = False):
        calls = self._ceval_calls
        if calls is not None:
            calls[1 if want_gamma else 0]()
            return
        MK.constraint_eval(
            self.row_type, self.row_body, self.row_a, self.row_s, self.row_c, self.row_u, self.row_f,
            self.kin.pos, self.kin.R, self.kin.vel, self.kin.omega_w, want_gamma,
            self.phi, self.J, self.phi_t, self.gamma,
        )

    def driver_phi_at(self, t: float) -> np.ndarray:
        """C of the driver rows at the current positions and time t (for exact time secants)."""
        idx = self.driver_rows
        nd = len(idx)
        if nd == 0:
            return np.zeros(0)
        vals = np.empty((nd, 3))
        self._driver_values(t, vals)
        phi = np.zeros(nd)
        MK.constraint_eval(
            self.row_type[idx], self.row_body[idx], self.row_a[idx], self.row_s[idx], self.row_c[idx],
            self.row_u[idx], vals, self.kin.pos, self.kin.R, self.kin.vel, self.kin.omega_w, False,
            phi, np.zeros((nd, 12)), np.zeros(nd), np.zeros(nd),
        )
        return phi

    def eval_forces(self, t: float, v, cK: float, cD: float, data, state: State | None = None, h: float = 0.0,
                    hist_weight: float = 1.0, linearized_step: bool = False):
        """f (nb, 6), Dv (nb, 6) and ``-cK ∂f/∂q - cD ∂f/∂v`` into ``data``.

        ``state``, ``h``, ``hist_weight`` and ``linearized_step`` are passed to force providers (contact
        history, predicted linearisation; see :class:`ForceContext`).
        """
        self.Dv[:] = 0.0
        self.Kxv[:] = 0.0
        sc = self._step_calls
        if sc is not None and v is self.v_step and data is sc.data and cK == sc.cK and cD == sc.cD:
            sc.body_forces()
            for blk, ev, scatter in sc.blocks:
                if ev is None:
                    blk.evaluate(t, self.kin, v)
                else:
                    ev()
                scatter()
        else:
            self._eval_elements(t, v, cK, cD, data)
        if self.providers:
            t0 = time.perf_counter()
            ctx = ForceContext(t, h, state, self.kin, self.f, self.Dv, data, cK, cD, self.Kxv, hist_weight,
                               linearized_step)
            for prov in self.providers:
                prov.accumulate(ctx)
            self.provider_time += time.perf_counter() - t0
        return self.f

    def _eval_elements(self, t: float, v, cK: float, cD: float, data):
        """Gravity, gyroscopic terms and force elements (the general path of :meth:`eval_forces`; Dv and Kxv
        zeroed by the caller)."""
        FK.body_forces(self.mass, self.inertia, v, self.gravity, self.f)
        for blk in self.blocks:
            blk.evaluate(t, self.kin, v)
            if blk.rotational:
                FK.scatter_rotational(blk.body, blk.Q, blk.Kx, blk.Kv, blk.slot_rot, cK, cD, v, self.f, data, self.Dv,
                                      self.Kxv)
            else:
                FK.scatter_elements(blk.body, blk.Q, blk.Kx, blk.Kv, blk.slot, cK, cD, v, self.f, data, self.Dv,
                                    self.Kxv)

    def commit(self, state: State) -> None:
        """Let force providers store their staged history in an accepted state."""
        for prov in self.providers:
            prov.commit(state)

    def constraint_forces(self, lam):
        """Generalized constraint forces ``-Jᵀλ`` per row (nc, 12) and their position Jacobian."""
        FK.constraint_stiffness_eval(
            self.row_type, self.row_body, self.row_a, self.row_s, self.row_c, self.row_u, self.row_f, lam,
            self.kin.pos, self.kin.R, self._cs_Q, self._cs_Kx, self._cs_Kv,
        )
        return self._cs_Q, self._cs_Kx

    def add_constraint_stiffness(self, lam, cK: float, data, v=None):
        """Add ``-cK ∂(-Jᵀλ)/∂q`` (symmetric part) to the KKT values: the joints' geometric stiffness.

        With ``v`` (the step's velocities), coupling terms left out of the
        pattern (``joint_coupling="diagonal"``) times v are added to ``Kxv``.
        """
        if self.nc == 0:
            return
        sc = self._step_calls
        if sc is not None and lam is self.lam_step and v is self.v_step and data is sc.data and cK == sc.cK:
            sc.stiffness()
            return
        want_kxv = v is not None
        FK.constraint_stiffness_add(
            self.row_type, self.row_body, self.row_a, self.row_s, self.row_c, self.row_u, self.row_f, lam,
            self.kin.pos, self.kin.R, self.row_slot12, self.row_rot_slot, self.row_cpl_slot, self.row_end, float(cK),
            v if want_kxv else self._scratch_v, want_kxv,
            data, self.Kxv if want_kxv else self._scratch_kxv, self._cs_Q1, self._cs_Kx1, self._cs_Kv1,
            self._cs_work, self._cs_w33,
        )

    def fill_jacobian(self, data):
        sc = self._step_calls
        if sc is not None and data is sc.data:
            sc.jacobian()
            return
        _scatter_rows(self.J, self.pattern.row_slot, data)

    def evaluate_outputs(self, state, elements: bool = True):
        """Bring element outputs (forces, lengths) and J up to date with ``state`` for recording
        (``elements=False``: only J, for joint reactions)."""
        self.update_kinematics(state.q, state.v)
        if not elements:
            self.update_drivers(state.t)
            self.eval_constraints(want_gamma=False)
            return
        for blk in self.blocks:
            blk.evaluate(state.t, self.kin, state.v)
        if self.providers:
            f, dv = np.zeros_like(self.f), np.zeros_like(self.Dv)
            ctx = ForceContext(state.t, 0.0, state, self.kin, f, dv, None, 0.0, 0.0)
            for prov in self.providers:
                prov.accumulate(ctx)
        self.update_drivers(state.t)
        self.eval_constraints(want_gamma=False)

    def reactions(self, lam):
        """Reaction force and torque (about the joint point) on each joint's second body, world frame.

        Returns arrays (n_joint, 3), (n_joint, 3).
        """
        nj = len(self.joint_names)
        F = np.zeros((nj, 3))
        T = np.zeros((nj, 3))
        _reactions(self.J, lam, self.row_joint, self.joint_body_b, self.joint_point_b, self.kin.R,
                   self.row_body, F, T, nj)
        return F, T

    def project_velocities(self, state: State) -> State:
        """The velocities closest to ``state.v`` (mass-weighted) that satisfy the joints: ``J v = -∂C/∂t``.

        One KKT solve with ``H = M``; used to start a run exactly on the
        velocity constraint manifold after velocities were set by hand.
        """
        from ..linsolve.kkt import DirectSolver

        self.update_kinematics(state.q, state.v)
        self.update_drivers(state.t)
        self.eval_constraints()
        data = self.base_data.copy()
        self.fill_jacobian(data)
        solver = DirectSolver(self.pattern)
        solver.factor(data)
        nd = 6 * self.nb
        rhs = np.zeros(self.pattern.n)
        Mv = np.zeros((self.nb, 6))
        Mv[:, :3] = self.mass[:, None] * state.v[:, :3]
        Mv[:, 3:] = np.einsum("bij,bj->bi", self.inertia, state.v[:, 3:])
        rhs[:nd] = Mv.ravel()
        rhs[nd:nd + self.nc] = -self.phi_t
        x = np.zeros(self.pattern.n)
        solver.solve(rhs, x)
        new = state.copy()
        new.v = x[:nd].reshape(self.nb, 6).copy()
        return new

    def initial_state(self) -> State:
        extra = {}
        for prov in self.providers:
            extra.update(prov.initial_extra())
        return State(0.0, self.q0.copy(), self.v0.copy(), np.zeros(self.nc), np.zeros((self.nb, 6)), extra)

    # ------------------------------------------------------------------ energy
    def kinetic_energy(self, v) -> float:
        w = v[:, 3:]
        return float(0.5 * np.sum(self.mass * np.sum(v[:, :3] ** 2, axis=1))
                     + 0.5 * np.einsum("bi,bij,bj->", w, self.inertia, w))

    def potential_energy(self, q) -> float:
        """Gravitational potential energy (force elements not included)."""
        return float(-np.sum(self.mass * (q[:, :3] @ self.gravity)))

    def angular_momentum(self, q, v) -> np.ndarray:
        """Total angular momentum about the world origin, world frame."""
        self.update_kinematics(q, v)
        L = np.zeros(3)
        for b in range(self.nb):
            Jw = self.kin.R[b] @ (self.inertia[b] @ v[b, 3:])
            L += Jw + self.mass[b] * np.cross(q[b, :3], v[b, :3])
        return L


@nb.njit(cache=True, _nrt=False)
def _scatter_rows(J, row_slot, data):
    for r in range(J.shape[0]):
        for k in range(12):
            s = row_slot[r, k]
            if s >= 0:
                data[s] += J[r, k]


@nb.njit(cache=True)
def _reactions(J, lam, row_joint, joint_body_b, joint_point_b, R, row_body, F, T, nj):
    for j in range(nj):
        for k in range(3):
            F[j, k] = 0.0
            T[j, k] = 0.0
    Tb = np.zeros((nj, 3))
    for r in range(J.shape[0]):
        j = row_joint[r]
        bb = joint_body_b[j]
        # the joint's second body is side 1 of its rows
        side = 1 if row_body[r, 1] == bb else 0
        for k in range(3):
            F[j, k] -= J[r, 6 * side + k] * lam[r]
            Tb[j, k] -= J[r, 6 * side + 3 + k] * lam[r]
    for j in range(nj):
        b = joint_body_b[j]
        # body-frame COM torque -> world; shift to the joint point: T_p = T_c + (r - p) × F = T_c - s × F
        tw0 = R[b, 0, 0] * Tb[j, 0] + R[b, 0, 1] * Tb[j, 1] + R[b, 0, 2] * Tb[j, 2]
        tw1 = R[b, 1, 0] * Tb[j, 0] + R[b, 1, 1] * Tb[j, 1] + R[b, 1, 2] * Tb[j, 2]
        tw2 = R[b, 2, 0] * Tb[j, 0] + R[b, 2, 1] * Tb[j, 1] + R[b, 2, 2] * Tb[j, 2]
        s0 = R[b, 0, 0] * joint_point_b[j, 0] + R[b, 0, 1] * joint_point_b[j, 1] + R[b, 0, 2] * joint_point_b[j, 2]
        s1 = R[b, 1, 0] * joint_point_b[j, 0] + R[b, 1, 1] * joint_point_b[j, 1] + R[b, 1, 2] * joint_point_b[j, 2]
        s2 = R[b, 2, 0] * joint_point_b[j, 0] + R[b, 2, 1] * joint_point_b[j, 1] + R[b, 2, 2] * joint_point_b[j, 2]
        T[j, 0] = tw0 - (s1 * F[j, 2] - s2 * F[j, 1])
        T[j, 1] = tw1 - (s2 * F[j, 0] - s0 * F[j, 2])
        T[j, 2] = tw2 - (s0 * F[j, 1] - s1 * F[j, 0])
