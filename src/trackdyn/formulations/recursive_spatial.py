"""Relative joint coordinates with cut joints in three dimensions: the spatial recursive formulation.

:class:`RecursiveSpatialSystem` is the spatial counterpart of
:class:`~trackdyn.formulations.recursive.RecursiveSystem` (han-sander-mao
§3 writes the planar case). It turns any :class:`~trackdyn.mbs.model.Model`
whose joints are revolutes (any axis), prismatics, sphericals and welds (a
tree plus closed loops) into:

- a spanning tree found by breadth-first search from the ground over the
  joints that can be tree joints (``Revolute``, ``RevoluteMotor``,
  ``Prismatic``, ``Spherical``, ``Fixed``); a body with no path to the ground
  gets a *free* joint (6 coordinates: its centre's displacement in the world
  frame, m, and a world rotation vector φ, rad, ``R = exp([φ]×) R0``); the
  joints left out are the *cut joints*, one per independent loop;
- one coordinate per joint degree of freedom: a revolute's relative angle
  (rad), a prismatic's slide (m), a spherical's rotation vector relative to
  the parent (rad, ``R_j = R_i exp([φ]×) C0``), none for a weld (a 0-dof
  node: the child moves with its parent). Rotation vectors use the exact
  kinematic map ``ω = J_l(φ) φ̇`` (so ``q̇`` is the time derivative of ``q``
  and the steppers integrate ``(q, q̇)`` as for the planar system); ``J_l``
  is singular at |φ| = 2π, so the steppers re-chart a rotation vector past
  half a turn (:meth:`RecursiveSpatialSystem.rechart`);
- the cut joints' own constraint rows, the thesis's primitives (appendix B)
  that :class:`~trackdyn.formulations.absolute.AbsoluteSystem` uses: 3 CD +
  2 DP1 for a revolute, 3 CD for a spherical, 3 CD + 3 DP1 for a weld, 3 CD +
  1 DP1 for a universal joint. Rows that depend on the others at the initial
  pose (the out-of-plane rows of a planar loop) are found by a rank-revealing
  QR of Φ_q and dropped, with a
  :class:`~trackdyn.formulations.absolute.RedundantConstraintWarning`
  naming the joints, as the absolute formulation does;
- the recursive kinematics, the O(n m) articulated-body pass for the joint
  accelerations and the cut-row multipliers, the recursive Newton-Euler
  mass-matrix product, and the closure Jacobian on a fixed pattern
  (:mod:`._recursive_spatial_kernels`).

The equations are ``M(q) q̈ + Φ_qᵀ λ = Q(q, q̇, t)``, ``Φ(q) = 0``. ``Q``
holds gravity, the gyroscopic terms and the model's force elements,
evaluated by an :class:`~trackdyn.formulations.absolute.AbsoluteSystem` on
the absolute body states. A ``RevoluteMotor`` in the tree adds a driver row
``q_j = θ(t)`` after the cut rows, as in the planar system.

Its steppers are :class:`trackdyn.integrators.recursive.RecursiveRK4` and
:class:`~trackdyn.integrators.recursive.RecursiveABM`; states carry the
absolute body states and the joint coordinates in ``extra["recursive.q"]``
and ``extra["recursive.qd"]``.

Example
-------
>>> from trackdyn.testing.problems import chain
>>> sys = RecursiveSpatialSystem(chain(5))
>>> sys.n, sys.nc
(5, 0)
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

from .._compiled import bound_call
from ..math.quaternion import quat_conj, quat_mul, quat_to_matrix
from ..mbs import _kernels as MK
from ..mbs.joints import Fixed, Prismatic, Revolute, RevoluteMotor, Spherical
from ..mbs.model import Model, State
from . import _recursive_spatial_kernels as SK
from ._recursive_common import RecursiveBase, joint_graph, refuse_cut_motors, root_path_flags, spanning_tree
from .absolute import RedundantConstraintWarning

__all__ = ["RecursiveSpatialSystem"]

_TREE_TYPES = {Revolute: SK.REVOLUTE, RevoluteMotor: SK.REVOLUTE, Prismatic: SK.PRISMATIC,
               Spherical: SK.SPHERICAL, Fixed: SK.FIXED}
_NDOF = {SK.FIXED: 0, SK.REVOLUTE: 1, SK.PRISMATIC: 1, SK.SPHERICAL: 3, SK.FREE: 6}
_ROW_TYPES = {MK.CD: SK.ROW_CD, MK.DP1: SK.ROW_DP1}


def _jl_matrix(phi) -> np.ndarray:
    """``J_l(φ) = I + a [φ]× + b [φ]×²`` (3, 3), the map ω = J_l(φ) φ̇ of a rotation vector."""
    a, b, _, _ = SK._jl_coeffs(float(phi[0]), float(phi[1]), float(phi[2]))
    S = np.array([[0.0, -phi[2], phi[1]], [phi[2], 0.0, -phi[0]], [-phi[1], phi[0], 0.0]])
    return np.eye(3) + a * S + b * (S @ S)


class RecursiveSpatialSystem(RecursiveBase):
    """A spatial model in relative joint coordinates with cut joints (see the module docstring).

    Parameters
    ----------
    model : Model
        Bodies joined by revolute, prismatic, spherical and fixed joints (a
        tree plus loops; universal joints may close loops).
    redundant_tol : float
        Relative size of a pivot of Φ_qᵀ's pivoted QR below which a cut row
        counts as dependent at the initial pose.
    providers : sequence
        Force providers (contact, drivetrain, outputs), evaluated by the
        embedded absolute system on the absolute body states.
    implicit_damping : sequence
        Stiff torque laws taken backward-Euler over the step of
        :meth:`begin_step` on their rotors' 1-dof joint coordinates (the
        recursive fidelity's brake and speed servo under ``recursive-rk4``; see
        :meth:`accelerations` and :meth:`_init_implicit_damping`).

    Attributes
    ----------
    n : int
        Number of joint coordinates.
    nc : int
        Number of constraint rows kept: cut rows, then one driver row per motor.
    n_node : int
        Tree nodes (one per body).
    node_body, node_parent, node_q, node_nd : ndarray (n_node,)
        Body, parent node (−1: ground), first coordinate and dof count of every node.
    node_joint : list of str
        Name of every node's inboard joint (``BODY.free`` for a floating base).
    cut_joints : list of str
        Names of the cut joints.
    removed_rows : list of (str, int)
        Cut joints with rows dropped as redundant, and how many.
    """

    joint_reactions = True

    def __init__(self, model: Model, redundant_tol: float = 1e-9, providers=(), implicit_damping=()):
        joints = self._init_bodies(model)
        nb_ = self.nb
        self.gravity = model.gravity.copy()
        R0 = np.array([quat_to_matrix(self.q0[b, 3:]) for b in range(nb_)]).reshape(nb_, 3, 3)
        ends, adj = joint_graph(model, joints, nb_, lambda jt: type(jt) in _TREE_TYPES)
        # ---------------------------------------------------------------- spanning tree (breadth first)
        def frame(body):
            if body == nb_:
                return np.eye(3), np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
            return R0[body], self.q0[body, :3], self.q0[body, 3:]

        def tree_node(k, u, w, parent):
            # (body, parent node, type, sp, sc, axis (parent frame), c0, name, joint index)
            jt = joints[k]
            Rp, rp, ep = frame(u)
            Rc, rc, ec = frame(w)
            c = jt.point
            axis = getattr(jt, "axis", np.zeros(3))
            return (w, parent, _TREE_TYPES[type(jt)], Rp.T @ (c - rp), Rc.T @ (c - rc), Rp.T @ axis,
                    quat_mul(quat_conj(ep), ec), jt.name, k)

        def floating_base(b, first):
            return [(b, -1, SK.FREE, self.q0[b, :3].copy(), np.zeros(3), np.zeros(3), self.q0[b, 3:].copy(),
                     f"{self.body_names[b]}.free", -1)]

        nodes, node_of, cuts, floating = spanning_tree(nb_, ends, adj, tree_node, floating_base)
        self._init_tree(joints, nodes, node_of, cuts, floating)
        self.n_node = nn = len(nodes)
        self.joint_sp = np.array([x[3] for x in nodes], dtype=float).reshape(nn, 3)
        self.joint_sc = np.array([x[4] for x in nodes], dtype=float).reshape(nn, 3)
        self.joint_ax = np.array([x[5] for x in nodes], dtype=float).reshape(nn, 3)
        self.node_c0 = np.array([x[6] for x in nodes], dtype=float).reshape(nn, 4)
        self.node_nd = np.array([_NDOF[t] for t in self.joint_type], dtype=np.int64)
        self.node_q = np.concatenate([[0], np.cumsum(self.node_nd)[:-1]]).astype(np.int64)
        self._rot_nodes = [j for j in range(nn) if self.joint_type[j] in (SK.SPHERICAL, SK.FREE)]
        self.n = n = int(self.node_nd.sum())
        self.node_mass = self.mass[self.node_body].copy()
        self.node_inertia = self.inertia[self.node_body].copy()
        # ---------------------------------------------------------------- cut joints and their rows
        refuse_cut_motors(joints, cuts)
        rows = []
        for k in cuts:
            jt = joints[k]
            for pr in jt._rows_cache:
                if pr.type not in _ROW_TYPES:
                    raise ValueError(f"recursive formulation: joint {jt.name!r} ({type(jt).__name__}) is a cut joint "
                                     "and its rows are not CD/DP1 primitives; cut joints may be Revolute, Spherical, "
                                     "Fixed or Universal")
                rows.append((k, pr))
        row_cut_joint = np.array([k for k, _ in rows], dtype=np.int64)
        self._set_rows(rows)
        # redundant rows at the initial pose (a planar loop's out-of-plane rows)
        self.removed_rows: list = []
        if rows:
            self._bind_rows()
            _, J = self._cut_closure(np.zeros(n))
            _, Rq, piv = sla.qr(J.T, mode="economic", pivoting=True)
            d = np.abs(np.diag(Rq))
            rank = int(np.sum(d > redundant_tol * max(d.max(initial=0.0), 1e-300)))
            keep = np.sort(piv[:rank])
            if rank < len(rows):
                dropped = sorted(set(range(len(rows))) - set(keep.tolist()))
                counts = {}
                for r in dropped:
                    nm = joints[row_cut_joint[r]].name
                    counts[nm] = counts.get(nm, 0) + 1
                self.removed_rows = sorted(counts.items())
                warnings.warn(f"{len(dropped)} redundant cut-joint row(s) removed: "
                              + ", ".join(f"{a} ({c})" for a, c in self.removed_rows),
                              RedundantConstraintWarning, stacklevel=2)
                self._set_rows([rows[r] for r in keep])
        # ---------------------------------------------------------------- drivers: prescribed tree coordinates
        self.drv_q = self._init_drivers([(int(self.node_q[j]), 1.0 if child_is_b else -1.0, jt)
                                         for j, child_is_b, jt in self._tree_motors(joints, ends)])
        self.nc = m = self.n_row + self.n_drv
        # joint reactions (recorded as NAME.force / NAME.torque: on the joint's second body, world frame, torque
        # about its point on that body), refreshed by evaluate_outputs
        self.joint_names = [jt.name for jt in joints]
        self.joint_body_b = np.array([jt._ib for jt in joints], dtype=np.int64)
        self.joint_point_b = np.array([jt._point_b for jt in joints], dtype=float).reshape(-1, 3)
        self._react_F = np.zeros((len(joints), 3))
        self._react_T = np.zeros((len(joints), 3))
        self._init_force_elements(model, providers)
        # ---------------------------------------------------------------- buffers (reused every evaluation)
        self._init_buffers(n, nn, 6, m)
        self.joint_damping = np.zeros(n)
        self._init_implicit_damping(implicit_damping)
        self.pos = np.zeros((nn, 3))
        self.quat = np.zeros((nn, 4))
        self.R = np.zeros((nn, 3, 3))
        self.H = np.zeros((nn, 6, 6))
        self.r_pc = np.zeros((nn, 3))
        self._U = np.zeros((nn, 6, 6))
        self._Dinv = np.zeros((nn, 6, 6))
        self._work = np.zeros((6, 6, 6))
        self._id_W = np.zeros((3, 3))
        self._kin_args = (self.node_parent, self.joint_type, self.node_q, self.joint_sp, self.joint_sc, self.joint_ax,
                          self.node_c0, self.pos, self.quat, self.R, self.vel, self.bias, self.H, self.r_pc)
        self._bind_rows()
        self._fk_call = bound_call(SK.forward_kinematics, self.q_step, self.qd_step, *self._kin_args)
        self._solve_call = bound_call(
            SK.evaluate, self.q_step, self.qd_step, self.node_parent, self.joint_type, self.node_q, self.node_nd,
            self.joint_sp, self.joint_sc, self.joint_ax, self.node_c0, self.pos, self.quat, self.R, self.vel,
            self.bias, self.H, self.r_pc, *self._row_args, self.node_mass, self.node_inertia, self.node_force,
            self.gravity, self.tau, self.joint_damping, self.drv_q, self.drv_acc, *self._solve_bufs)

    # ------------------------------------------------------------------ implicit joint damping
    def _init_implicit_damping(self, laws) -> None:
        """The stiff torque laws made implicit on their rotors' joint coordinates (see :meth:`accelerations`).

        A law has ``body`` (E, 2: stator and rotor body of each element), ``axis_b`` (3,: the axis of the
        element's speed in the stator's frame) and ``implicit_torque(e, ws) -> (T, dT/dws)``: the stiff part of
        element e's torque (N m, on the rotor about the axis, reacting on the stator) at the rotor's speed ``ws``
        relative to the stator (rad/s), e.g. the drivetrain's brake; only its change over the step and its slope
        enter, so a law may leave out a part that does not depend on ``ws``. A law may also have
        ``torque_offset(e, t, t_step, h) -> float``: a torque (N m, same sense) added to the providers' on the
        rotor's coordinate at an evaluation at time t of the step from t_step of size h, in both passes (the
        drivetrain's speed servo: its reference moved from the providers' t_step + h to the evaluation's t + h,
        :meth:`accelerations`). The rotor's tree joint must have one coordinate and the stator must not hang
        below it (a unit rate of the joint then turns the rotor's subtree only).
        """
        self._implicit = []
        for law in laws:
            ax = np.asarray(law.axis_b, dtype=float)
            for e, (stator, rotor) in enumerate(np.asarray(law.body, dtype=np.int64)):
                j = int(self.node_of_body[rotor])
                if self.node_nd[j] != 1:
                    raise ValueError(f"recursive formulation: implicit torque element {e} acts on body "
                                     f"{self.body_names[rotor]!r}, whose tree joint has {self.node_nd[j]} "
                                     "coordinates; implicit damping needs a 1-dof joint")
                ns = int(self.node_of_body[stator]) if stator >= 0 else -1
                nd = ns
                while nd >= 0 and nd != j:
                    nd = int(self.node_parent[nd])
                if nd == j:
                    raise ValueError(f"recursive formulation: implicit torque element {e}: its stator "
                                     f"{self.body_names[stator]!r} hangs below its rotor's joint")
                self._implicit.append((law, e, j, int(self.node_q[j]), ns, ax))
        self._offsets = [x for x in self._implicit if hasattr(x[0], "torque_offset")]
        #: per coordinate: the secant slope c (N m s/rad) of the last evaluation's implicit torques, and h c
        self.joint_damping_slope = np.zeros(self.n)
        self.implicit_evaluations = 0  # evaluations that re-solved with a nonzero h c

    def _implicit_slopes(self, h: float) -> bool:
        """Fill ``joint_damping`` with ``h s² c`` per implicit element from the explicit solve just made (its q̈
        and pivots): the backward-Euler speed change of the element's stiff torque over h, solved on the rotor's
        coordinate alone, and c its secant slope. Returns whether any is nonzero."""
        self.joint_damping[:] = 0.0
        self.joint_damping_slope[:] = 0.0
        any_ = False
        for law, e, j, k, ns, ax in self._implicit:
            s, ws0 = self._rotor_rate(j, ns, ax)
            D = 1.0 / self._Dinv[j, 0, 0]  # the coordinate's articulated pivot (explicit solve)
            xe = float(self.qdd[k])
            T0, dT0 = law.implicit_torque(e, ws0)
            if s == 0.0 or (T0 == 0.0 and dT0 == 0.0):
                continue
            x = self._backward_euler_rate(law, e, ws0, T0, s, h, D, xe)
            dws = s * h * x
            if abs(dws) > 1e-12 * (abs(ws0) + 1e-3):
                T1, _ = law.implicit_torque(e, ws0 + dws)
                c = -(T1 - T0) / dws
            else:
                c = -dT0
            c = max(c, 0.0)
            self.joint_damping_slope[k] += s * s * c
            self.joint_damping[k] += h * s * s * c
            any_ = any_ or c > 0.0
        return any_

    def _rotor_rate(self, j: int, ns: int, ax) -> tuple[float, float]:
        """``(s, ws)``: the rate ∂ws/∂q̇ of node j's coordinate in the speed of its rotor relative to stator node
        ns about the stator's axis ``ax``, and that speed at the current kinematics."""
        ay = self.R[ns] @ ax if ns >= 0 else ax
        w_s = self.vel[ns, 3:] if ns >= 0 else np.zeros(3)
        return float(ay @ self.H[j, 3:, 0]), float(ay @ (self.vel[j, 3:] - w_s))

    @staticmethod
    def _backward_euler_rate(law, e, ws0, T0, s, h, D, xe) -> float:
        """The root x of ``g(x) = D (x − xe) − s (T(ws0 + s h x) − T0)``: the coordinate's acceleration with the
        element's stiff torque taken at the end of a backward-Euler step h. g rises (g' = D − s² h T' ≥ D for a
        law that brakes, T' ≤ 0), so the root is bracketed from xe and found by Newton steps kept inside the
        bracket, bisecting when one leaves it (plain Newton cycles between the saturated ends of a tanh)."""
        def g_of(x):
            T, dT = law.implicit_torque(e, ws0 + s * h * x)
            return D * (x - xe) - s * (T - T0), D - s * s * h * dT

        ge, dge = g_of(xe)
        if ge == 0.0:
            return xe
        step = abs(ge) / D
        direction = 1.0 if ge < 0.0 else -1.0
        other = xe + direction * step
        for _ in range(200):
            go, _ = g_of(other)
            if go * ge <= 0.0:
                break
            step *= 2.0
            other = xe + direction * step
        lo, hi = (xe, other) if ge < 0.0 else (other, xe)
        x, (g, dg) = xe, (ge, dge)
        for _ in range(100):
            xn = x - g / dg if dg > 0.0 else 0.5 * (lo + hi)
            if not (lo < xn < hi):
                xn = 0.5 * (lo + hi)
            x = xn
            g, dg = g_of(x)
            if g < 0.0:
                lo = x
            else:
                hi = x
            if g == 0.0 or hi - lo <= 1e-14 * (abs(lo) + abs(hi)) + 1e-300 or abs(g) <= 1e-13 * D * (abs(x) + 1.0):
                break
        return x

    def accelerations(self, t: float, q, qd, tau=None):
        """Joint accelerations and multipliers (:meth:`RecursiveBase.accelerations`); with implicit torque laws
        (``implicit_damping``) and a step h from :meth:`begin_step`, their stiff torques act backward-Euler over
        h on their rotors' coordinates: the explicit pass, then each law's speed change over h solved on its
        coordinate and the pass again with its secant slope c as joint damping, ``(M + h C) q̈ = Q + τ``
        (docs/recursive.md, "The braked sprocket"). Laws with a ``torque_offset`` (the speed servo) add it to
        ``τ`` on their coordinates in both passes: the servo's reference at t + h, the end of the backward-Euler
        step from this evaluation, as the links' implicit Euler takes it at the end of its step (docs/recursive.md,
        "Prescribed sprocket speeds")."""
        if not self._implicit:
            return super().accelerations(t, q, qd, tau)
        self.joint_damping[:] = 0.0  # the explicit pass first
        h = self._step_h
        if h > 0.0 and self._offsets:
            self._load(t, q, qd)
            if self.n_drv:
                self.update_drivers(t)
            self.tau[:] = 0.0 if tau is None else tau
            t_step = float(self._step_state.t)
            for law, e, j, k, ns, ax in self._offsets:
                self.tau[k] += self._rotor_rate(j, ns, ax)[0] * law.torque_offset(e, t, t_step, h)
            self._solve_call()
            qdd, lam = self.qdd, self.lam
        else:
            qdd, lam = super().accelerations(t, q, qd, tau)
        if h > 0.0 and self._implicit_slopes(h):
            self._solve_call()
            self.implicit_evaluations += 1
        return qdd, lam

    # ------------------------------------------------------------------ rows
    def _set_rows(self, rows) -> None:
        """Row arrays and the Jacobian pattern of the cut rows ``rows`` ((joint index, PrimitiveRow) pairs)."""
        m = len(rows)
        self.n_row = m
        self.row_type = np.array([_ROW_TYPES[pr.type] for _, pr in rows], dtype=np.int64)
        node = np.full((m, 2), -1, dtype=np.int64)
        for r, (_, pr) in enumerate(rows):
            for s_, b in enumerate((pr.body_i, pr.body_j)):
                node[r, s_] = self.node_of_body[b] if b >= 0 else -1
        self.row_node = node
        self.row_si = np.array([pr.s_i for _, pr in rows], dtype=float).reshape(m, 3)
        self.row_sj = np.array([pr.s_j for _, pr in rows], dtype=float).reshape(m, 3)
        self.row_ai = np.array([pr.a_i for _, pr in rows], dtype=float).reshape(m, 3)
        self.row_aj = np.array([pr.a_j for _, pr in rows], dtype=float).reshape(m, 3)
        self.row_c = np.array([pr.c for _, pr in rows], dtype=float).reshape(m, 3)
        self.row_f = np.array([pr.f0 for _, pr in rows], dtype=float).reshape(m)
        self._row_joint_names = [self.model.joints[k].name for k, _ in rows]
        self.row_joint = np.array([k for k, _ in rows], dtype=np.int64)
        ptr, ent_node, ent_col, ent_side = [0], [], [], []
        for r in range(m):
            flags = root_path_flags(self.node_parent, node[r])
            for nd in sorted(flags):
                for c in range(self.node_nd[nd]):
                    ent_node.append(nd)
                    ent_col.append(c)
                    ent_side.append(flags[nd])
            ptr.append(len(ent_node))
        self.row_ptr = np.array(ptr, dtype=np.int64)
        self.ent_node = np.array(ent_node, dtype=np.int64)
        self.ent_col = np.array(ent_col, dtype=np.int64)
        self.ent_side = np.array(ent_side, dtype=np.int64)
        self.ent_q = (self.node_q[self.ent_node] + self.ent_col) if ent_node else np.zeros(0, dtype=np.int64)
        self.Jval = np.zeros(len(ent_node))
        self._psi = np.zeros((m, 2, 6))
        self._gamma = np.zeros(m)
        self._phi_rows = np.zeros(m)

    def _bind_rows(self) -> None:
        self._row_args = (self.row_type, self.row_node, self.row_si, self.row_sj, self.row_ai, self.row_aj,
                          self.row_c, self.row_f, self.phi if hasattr(self, "phi") and len(self.phi) >= self.n_row
                          else self._phi_rows, self._psi, self._gamma)
        if hasattr(self, "_Ia"):
            self._solve_bufs = (self._Ia, self._pA, self._Pl, self._U, self._Dinv, self._u0, self._ul, self._acc0,
                                self._accl, self._qdd0, self._qddl, self._G, self._rhs, self._work, self.qdd,
                                self.lam, self.acc)

    def _cut_closure(self, q):
        """Φ (n_row,) and dense Φ_q (n_row, n) of the cut rows at q (the redundancy check's)."""
        nn = self.n_node
        pos, quat, R = np.zeros((nn, 3)), np.zeros((nn, 4)), np.zeros((nn, 3, 3))
        vel, bias, H, r_pc = np.zeros((nn, 6)), np.zeros((nn, 6)), np.zeros((nn, 6, 6)), np.zeros((nn, 3))
        SK.forward_kinematics(np.asarray(q, float), np.zeros(self.n), self.node_parent, self.joint_type, self.node_q,
                              self.joint_sp, self.joint_sc, self.joint_ax, self.node_c0, pos, quat, R, vel, bias, H,
                              r_pc)
        phi = np.zeros(self.n_row)
        SK.cut_rows(self.row_type, self.row_node, self.row_si, self.row_sj, self.row_ai, self.row_aj, self.row_c,
                    self.row_f, pos, R, vel, phi, self._psi, self._gamma)
        SK.closure_jacobian(self.row_node, self.row_ptr, self.ent_node, self.ent_col, self.ent_side, pos, H,
                            self._psi, self.Jval)
        J = np.zeros((self.n_row, self.n))
        r = np.repeat(np.arange(self.n_row), np.diff(self.row_ptr))
        np.add.at(J, (r, self.ent_q), self.Jval)
        return phi, J

    # ------------------------------------------------------------------ stages
    def kinematics(self, q, qd) -> None:
        """Recursive positions, orientations, velocities, H and D of (q, q̇)."""
        self.q_step[:] = q
        self.qd_step[:] = qd
        self._fk_call()

    def _absolute_from_kinematics(self, acc=None):
        SK.to_absolute(self.node_body, self.pos, self.quat, self.R, self.vel, self.acc if acc is None else acc,
                       self.q_abs, self.v_abs, self.a_abs)

    def applied_forces(self, t: float) -> np.ndarray:
        """``node_force`` (n_node, 6): the force elements' world force and torque about each centre (gravity and
        the gyroscopic terms are added by the kernels). Needs :meth:`kinematics` at the current state."""
        nf = self.node_force
        if not self._has_forces:
            return nf
        f = self._element_forces(t)
        w = self.v_abs[:, 3:]
        gyro = np.cross(w, np.einsum("bij,bj->bi", self.inertia, w))
        tw = np.einsum("bij,bj->bi", self._abs.kin.R[:-1], f[:, 3:] + gyro)
        nodes = self.node_of_body
        nf[nodes, :3] = f[:, :3] - self.mass[:, None] * self.gravity[None, :]
        nf[nodes, 3:] = tw
        return nf

    def _load(self, t: float, q, qd) -> None:
        # without force elements the kinematics run inside the compiled evaluation
        if self._has_forces:
            self.kinematics(q, qd)
            self.applied_forces(t)
        else:
            self.q_step[:] = q
            self.qd_step[:] = qd

    def _bind_rk4(self, h: float):
        """:func:`~._recursive_spatial_kernels.rk4_step` bound to the step buffers."""
        return bound_call(
            SK.rk4_step, h, self._rk_in[0], self._rk_in[1], self._rk_in[2], self.node_parent,
            self.joint_type, self.node_q, self.node_nd, self.joint_sp, self.joint_sc, self.joint_ax, self.node_c0,
            self.pos, self.quat, self.R, self.vel, self.bias, self.H, self.r_pc, *self._row_args, self.node_mass,
            self.node_inertia, self.node_force, self.gravity, self.tau, self.joint_damping, self.drv_q, self.drv_acc,
            self._rk_drv,
            *self._solve_bufs, self._rk_k[0], self._rk_k[1], self._rk_s[0], self._rk_s[1], self._rk_out[0],
            self._rk_out[1])

    def _rnea(self, x, with_bias, acc, tau):
        SK.inverse_dynamics(self.node_parent, self.node_q, self.node_nd, self.H, self.r_pc, self.bias, self.vel,
                            self.R, self.node_mass, self.node_inertia,
                            self.node_force if with_bias else self._zero_force, self.gravity,
                            np.ascontiguousarray(x, dtype=float), with_bias, self._id_W, acc, self._id_F, tau)

    def closure(self, q, dense: bool = True, t: float = 0.0):
        """Constraints Φ (nc,) and their Jacobian Φ_q at (t, q): dense (nc, n), or the cut rows' pattern values
        ``Jval`` (entries ``row_ptr[r]:row_ptr[r+1]`` of row r, coordinates ``ent_q``) with ``dense=False``.
        The cut rows come first (CD rows in m, DP1 rows dimensionless), then one row per motor, ``q_j − θ(t)``."""
        self.kinematics(q, self._zero_n)
        SK.cut_rows(*self._row_args[:8], self.pos, self.R, self.vel, self.phi, self._psi, self._gamma)
        SK.closure_jacobian(self.row_node, self.row_ptr, self.ent_node, self.ent_col, self.ent_side, self.pos,
                            self.H, self._psi, self.Jval)
        if self.n_drv:
            self.update_drivers(t)
            self.phi[self.n_row:] = np.asarray(q)[self.drv_q] - self.drv_pos
        if not dense:
            return self.phi, self.Jval
        J = np.zeros((self.nc, self.n))
        r = np.repeat(np.arange(self.n_row), np.diff(self.row_ptr))
        np.add.at(J, (r, self.ent_q), self.Jval)
        J[self.n_row + np.arange(self.n_drv), self.drv_q] = 1.0
        return self.phi, J

    def cut_point_error(self, q) -> float:
        """Largest separation of the cut joints' points (the CD rows), m."""
        phi, _ = self.closure(q, dense=False)
        cd = self.row_type == SK.ROW_CD
        return float(np.max(np.abs(phi[:self.n_row][cd]), initial=0.0))

    def _project_kernel(self, q, qd, tol: float, max_iter: int) -> int:
        """:func:`~._recursive_spatial_kernels.project` on the step buffers."""
        return SK.project(q, qd, tol, max_iter, *self._kin_args, *self._row_args, self.row_ptr,
                          self.ent_node, self.ent_col, self.ent_side, self.Jval, self.drv_q, self.drv_pos,
                          self.drv_vel, self._pj_Jd, self._pj_A, self._pj_b, self._pj_y)

    def rechart(self, q, qd) -> bool:
        """Re-chart the rotation vectors past half a turn, in place: a spherical or free joint's φ with
        |φ| = θ > π becomes ``φ (1 − 2π/θ)`` (the same rotation, |φ'| = 2π − θ < π) and its rates
        ``φ̇' = J_l(φ')⁻¹ J_l(φ) φ̇`` (the same angular velocity). Keeps every rotation vector away from
        J_l's singularity at 2π, so a free base or a ball joint may turn without limit. Returns whether a
        coordinate changed (the steppers then re-evaluate the accelerations and restart any multistep
        history)."""
        changed = False
        for j in self._rot_nodes:
            k = int(self.node_q[j]) + (3 if self.joint_type[j] == SK.FREE else 0)
            phi = np.array(q[k:k + 3], dtype=float)
            th = float(np.linalg.norm(phi))
            if th <= np.pi:
                continue
            new = phi * (1.0 - 2.0 * np.pi / th)
            w = _jl_matrix(phi) @ qd[k:k + 3]
            q[k:k + 3] = new
            qd[k:k + 3] = np.linalg.solve(_jl_matrix(new), w)
            changed = True
        return changed

    def initial_state(self) -> State:
        """The model's initial pose (q = 0) with the joint rates fitted to its initial velocities, projected; with
        force providers, their initial ``extra`` (contact history, driver memory)."""
        q, qd = self._initial_coordinates()
        extra = self._provider_start(q, qd)
        qdd, lam = self.accelerations(0.0, q, qd)
        return self.state(0.0, q, qd, qdd, lam, extra, evaluated=True)

    def evaluate_outputs(self, state: State, elements: bool = True) -> None:
        """Bring the joints' reactions and the force elements', providers' and markers' recorded outputs up to date
        with ``state`` (its joint coordinates, accelerations and multipliers). The reactions come first: an output
        provider may read them (the links vehicle's shoe tensions, bound to this system)."""
        ex = state.extra
        self.joint_reaction_forces(state.t, ex["recursive.q"], ex["recursive.qd"], ex["recursive.qdd"], state.lam)
        super().evaluate_outputs(state, elements)

    def joint_reaction_forces(self, t: float, q, qd, qdd, lam):
        """Reaction force and torque of every model joint on its second body, world frame, the torque about the
        joint's point on that body (as :meth:`AbsoluteSystem.reactions`): ``(F (nj, 3), T (nj, 3))`` (buffers).

        A tree joint transmits the spatial force that the recursive Newton-Euler pass finds at its child's centre
        (every load of the subtree: inertia, gravity, force elements, the cut rows' ``−ψ λ``, a motor's torque); a
        cut joint's reaction is its rows' ``−ψ λ``; a dropped redundant row carries none.
        """
        self.kinematics(q, qd)
        self.applied_forces(t)
        F, T = self._react_F, self._react_T
        F[:] = 0.0
        T[:] = 0.0
        lam = np.asarray(lam, dtype=float)
        psi = np.zeros((self.n_row, 2, 6))
        if self.n_row:
            SK.cut_rows(*self._row_args[:8], self.pos, self.R, self.vel, np.zeros(self.n_row), psi, self._gamma)
        nf = self.node_force.copy()
        cut_load = np.zeros((len(self.joint_names), 2, 6))  # per cut joint and side: −ψ λ at the side's centre
        for r in range(self.n_row):
            for side in range(2):
                nd = self.row_node[r, side]
                if nd >= 0:
                    nf[nd] -= psi[r, side] * lam[r]
                    cut_load[self.row_joint[r], side] -= psi[r, side] * lam[r]
        acc, Fn = np.zeros((self.n_node, 6)), np.zeros((self.n_node, 6))
        SK.inverse_dynamics(self.node_parent, self.node_q, self.node_nd, self.H, self.r_pc, self.bias, self.vel,
                            self.R, self.node_mass, self.node_inertia, nf, self.gravity,
                            np.ascontiguousarray(qdd, dtype=float), True, self._id_W, acc, Fn, np.zeros(self.n))

        def point_b(k):
            b = self.joint_body_b[k]
            if b < 0:
                return self.joint_point_b[k]
            nd = self.node_of_body[b]
            return self.pos[nd] + self.R[nd] @ self.joint_point_b[k]

        for j in range(self.n_node):
            k = self.node_joint_index[j]
            if k < 0:
                continue
            sg = 1.0 if self.node_body[j] == self.joint_body_b[k] else -1.0
            f = sg * Fn[j, :3]
            F[k] = f
            T[k] = sg * Fn[j, 3:] + np.cross(self.pos[j] - point_b(k), f)
        for k in set(self.row_joint.tolist()):
            p = point_b(k)
            jt = self.model.joints[k]
            ends = (self.model._index(jt.body_a), self.model._index(jt.body_b))
            side = 1 if ends[1] >= 0 else 0
            sg = 1.0 if side == 1 else -1.0
            nd = self.node_of_body[ends[side]]
            f = sg * cut_load[k, side, :3]
            F[k] = f
            T[k] = sg * cut_load[k, side, 3:] + np.cross(self.pos[nd] - p, f)
        return F, T

    def reactions(self, lam):
        """The joints' reactions of the last :meth:`evaluate_outputs` (``lam`` is that state's)."""
        return self._react_F, self._react_T
