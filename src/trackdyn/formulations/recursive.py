"""Relative joint coordinates with cut joints: the planar recursive formulation (han-sander-mao §3).

:class:`RecursiveSystem` turns a planar :class:`~trackdyn.mbs.model.Model`
(revolute joints whose axes are parallel: a tree plus closed loops) into:

- a spanning tree found by breadth-first search from the ground (a body
  connected to the ground by no path gets a floating base: two prismatic
  joints and a revolute through massless virtual bodies); the joints left out
  of the tree are the *cut joints*, one per independent loop. Breadth-first
  order cuts a closed chain hung from one pin opposite the pin, into the two
  open chains of the paper's Fig. 3;
- one coordinate per tree joint: the relative angle (rad) of the child about
  the joint axis ``n`` (zero at the model's initial pose), or a slide (m);
- the recursive kinematics (eqs. 1-6), the O(n m) forward/backward pass of
  the paper's Table 1 for the joint accelerations and the cut-joint
  multipliers (m = 2 rows per cut revolute), the recursive Newton-Euler
  mass-matrix product, and the cut-joint constraints with their Jacobian on a
  fixed pattern (:mod:`._recursive_kernels`).

The equations are ``M(q) q̈ + Φ_qᵀ λ = Q(q, q̇, t)``, ``Φ(q) = 0`` with ``Φ``
the cut joints' point coincidence in the plane (eq. 10). Applied forces are
gravity and the model's force elements (evaluated by an
:class:`~trackdyn.formulations.absolute.AbsoluteSystem` on the absolute
body states and reduced to the plane). The planar restriction: every joint a
:class:`~trackdyn.mbs.joints.Revolute` (or a
:class:`~trackdyn.mbs.joints.RevoluteMotor` in the tree: its coordinate is
prescribed by one more constraint row, ``q_j = θ(t)``) about the same axis,
every initial velocity in the plane; the out-of-plane reactions are not
computed.

Its stepper is :class:`trackdyn.integrators.recursive.RecursiveRK4`; the
states it returns carry the absolute body states (``q`` (nb, 7), ``v``
(nb, 6), ``acc``) for recording and the joint coordinates in
``extra["recursive.q"]`` / ``extra["recursive.qd"]``.

Example
-------
>>> from trackdyn.testing.problems import chain
>>> sys = RecursiveSystem(chain(5))
>>> sys.n, sys.nc
(5, 0)
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .._compiled import bound_call
from ..mbs.joints import Revolute, RevoluteMotor
from ..mbs.model import Model, State
from . import _recursive_kernels as RK

__all__ = ["RecursiveSystem"]


def _plane_basis(n):
    """(e1, e2) with e1 × e2 = n."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    e1 = helper - (helper @ n) * n
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


def _quat_matrix(e):
    e0, e1, e2, e3 = e
    return np.array([
        [1 - 2 * (e2 * e2 + e3 * e3), 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2)],
        [2 * (e1 * e2 + e0 * e3), 1 - 2 * (e1 * e1 + e3 * e3), 2 * (e2 * e3 - e0 * e1)],
        [2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), 1 - 2 * (e1 * e1 + e2 * e2)],
    ])


class RecursiveSystem:
    """A planar model in relative joint coordinates with cut joints (see the module docstring).

    Parameters
    ----------
    model : Model
        Bodies joined by :class:`~trackdyn.mbs.joints.Revolute` joints with
        parallel axes (a tree plus loops).
    planar_tol : float
        How far (relative) an axis, an initial velocity or gravity may stand
        from the plane before the model is refused.

    Attributes
    ----------
    n : int
        Number of joint coordinates (tree joints, virtual ones included).
    nc : int
        Number of cut-joint constraint rows (2 per cut revolute).
    node_body, node_parent : ndarray (n,)
        Body (−1: virtual) and parent node (−1: ground) of every tree node.
    node_joint : list of str
        Name of every node's inboard joint (``BASE.x``, ``BASE.z``,
        ``BASE.rot`` for a floating base's virtual joints).
    cut_joints : list of str
        Names of the cut joints.
    """

    formulation = "recursive"
    joint_reactions = False

    def __init__(self, model: Model, planar_tol: float = 1e-9):
        self.model = model
        self.mass, self.inertia, self.q0, self.v0 = model.body_arrays()
        self.nb = nb_ = len(self.mass)
        self.body_names = model.body_names
        joints = list(model.joints)
        for jt in joints:
            if type(jt) not in (Revolute, RevoluteMotor):
                raise ValueError(f"recursive formulation: joint {jt.name!r} is a {type(jt).__name__}; the planar "
                                 "recursive formulation takes Revolute and RevoluteMotor joints only")
        if not joints:
            raise ValueError("recursive formulation: the model has no joints")
        n_ax = joints[0].axis / np.linalg.norm(joints[0].axis)
        for jt in joints:
            if np.linalg.norm(np.cross(jt.axis, n_ax)) > planar_tol:
                raise ValueError(f"recursive formulation: joint {jt.name!r} axis {jt.axis.tolist()} is not parallel "
                                 f"to {n_ax.tolist()} (joint {joints[0].name!r}); the model is not planar")
        self.plane_n = n_ax
        self.plane_e1, self.plane_e2 = _plane_basis(n_ax)
        E = np.stack([self.plane_e1, self.plane_e2])  # (2, 3): world -> plane
        g = model.gravity
        self.gravity = E @ g
        R0 = np.array([_quat_matrix(self.q0[b, 3:]) for b in range(nb_)]).reshape(nb_, 3, 3)
        self.body_axis_b = np.einsum("bji,j->bi", R0, n_ax)
        self.body_inertia_n = np.einsum("bi,bij,bj->b", self.body_axis_b, self.inertia, self.body_axis_b)
        self.body_offset = np.outer(self.q0[:, :3] @ n_ax, n_ax)
        p0 = self.q0[:, :3] @ E.T  # (nb, 2) planar centres of mass
        for b in range(nb_):
            vw = self.v0[b, :3]
            ww = R0[b] @ self.v0[b, 3:]
            scale = 1.0 + np.linalg.norm(vw) + np.linalg.norm(ww)
            if abs(vw @ n_ax) > planar_tol * scale or np.linalg.norm(np.cross(ww, n_ax)) > planar_tol * scale:
                raise ValueError(f"recursive formulation: body {self.body_names[b]!r} has an initial velocity out of "
                                 "the plane")
        # ---------------------------------------------------------------- spanning tree (breadth first)
        adj = [[] for _ in range(nb_ + 1)]  # index nb_: the ground
        ends = []
        for k, jt in enumerate(joints):
            a, b = model._index(jt.body_a), model._index(jt.body_b)
            a = nb_ if a < 0 else a
            b = nb_ if b < 0 else b
            ends.append((a, b))
            adj[a].append(k)
            adj[b].append(k)
        node_of = np.full(nb_ + 1, -1, dtype=np.int64)
        used = np.zeros(len(joints), dtype=bool)
        nodes = []  # (body, parent node, joint type, sp (2,), sc (2,), dir (2,), name)
        visited = np.zeros(nb_ + 1, dtype=bool)

        def planar_pt(jt):
            return E @ jt.point

        def bfs(start):
            queue = deque([start])
            while queue:
                u = queue.popleft()
                for k in adj[u]:
                    if used[k]:
                        continue
                    a, b = ends[k]
                    w = b if a == u else a
                    if visited[w]:
                        continue
                    used[k] = True
                    visited[w] = True
                    c = planar_pt(joints[k])
                    sp = c - (p0[u] if u < nb_ else 0.0)
                    sc = c - p0[w]
                    nodes.append((w, node_of[u] if u < nb_ else -1, RK.REVOLUTE, sp, sc, np.zeros(2),
                                  joints[k].name, k))
                    node_of[w] = len(nodes) - 1
                    queue.append(w)

        visited[nb_] = True
        bfs(nb_)
        self.floating_bases = []
        for b in range(nb_):
            if visited[b]:
                continue
            # a floating base: slides along e1, e2 and a turn, through massless virtual bodies at its centre
            nm = self.body_names[b]
            nodes.append((-1, -1, RK.PRISMATIC, p0[b].copy(), np.zeros(2), np.array([1.0, 0.0]), f"{nm}.x", -1))
            nodes.append((-1, len(nodes) - 1, RK.PRISMATIC, np.zeros(2), np.zeros(2), np.array([0.0, 1.0]),
                          f"{nm}.z", -1))
            nodes.append((b, len(nodes) - 1, RK.REVOLUTE, np.zeros(2), np.zeros(2), np.zeros(2), f"{nm}.rot", -1))
            node_of[b] = len(nodes) - 1
            visited[b] = True
            self.floating_bases.append(nm)
            bfs(b)
        if self.floating_bases and abs(g @ n_ax) > planar_tol * (1.0 + np.linalg.norm(g)):
            raise ValueError("recursive formulation: gravity has a component along the joint axis and bodies "
                             f"{self.floating_bases} float; nothing would hold them in the plane")
        self.n = n = len(nodes)
        self.node_body = np.array([x[0] for x in nodes], dtype=np.int64)
        self.node_parent = np.array([x[1] for x in nodes], dtype=np.int64)
        self.joint_type = np.array([x[2] for x in nodes], dtype=np.int64)
        self.joint_sp = np.array([x[3] for x in nodes], dtype=float).reshape(n, 2)
        self.joint_sc = np.array([x[4] for x in nodes], dtype=float).reshape(n, 2)
        self.joint_dir = np.array([x[5] for x in nodes], dtype=float).reshape(n, 2)
        self.node_joint = [x[6] for x in nodes]
        self.node_of_body = node_of[:nb_].copy()
        real = self.node_body >= 0
        self.node_mass = np.where(real, self.mass[np.maximum(self.node_body, 0)], 0.0)
        self.node_inertia = np.where(real, self.body_inertia_n[np.maximum(self.node_body, 0)], 0.0)
        # ---------------------------------------------------------------- cut joints and their pattern
        cuts = [k for k in range(len(joints)) if not used[k]]
        self.cut_joints = [joints[k].name for k in cuts]
        self.removed_rows: list = []  # the cut rows are independent (no redundant rows to remove, unlike 3-D joints)
        # ---------------------------------------------------------------- drivers: prescribed tree coordinates
        node_of_joint = {x[7]: j for j, x in enumerate(nodes) if x[7] >= 0}
        drv = []
        for k, jt in enumerate(joints):
            if type(jt) is not RevoluteMotor:
                continue
            if k not in node_of_joint:
                raise ValueError(f"recursive formulation: motor {jt.name!r} closes a loop (a cut joint); a motor "
                                 "must be a tree joint")
            j = node_of_joint[k]
            child_is_b = self.node_body[j] == ends[k][1]
            sign = float(np.sign(jt.axis @ n_ax)) * (1.0 if child_is_b else -1.0)
            drv.append((j, sign, jt.profile, jt.kind, jt.name))
        self.n_drv = len(drv)
        self.drv_node = np.array([d[0] for d in drv], dtype=np.int64)
        self.drv_sign = np.array([d[1] for d in drv], dtype=float)
        self._drv_profiles = [(d[2], d[3]) for d in drv]
        self.drivers = [d[4] for d in drv]
        self.drv_pos = np.zeros(self.n_drv)
        self.drv_vel = np.zeros(self.n_drv)
        self.drv_acc = np.zeros(self.n_drv)
        self.n_cut = len(cuts)
        self.nc = 2 * self.n_cut + self.n_drv  # cut rows, then one row per motor
        self.cut_node = np.zeros((self.n_cut, 2), dtype=np.int64)
        self.cut_s = np.zeros((self.n_cut, 2, 2))
        ptr, col, side = [0], [], []
        for c, k in enumerate(cuts):
            c_pt = planar_pt(joints[k])
            paths = []
            for s_, body in enumerate(ends[k]):
                if body == nb_:
                    self.cut_node[c, s_] = -1
                    self.cut_s[c, s_] = c_pt
                    paths.append([])
                else:
                    nd = node_of[body]
                    self.cut_node[c, s_] = nd
                    self.cut_s[c, s_] = c_pt - p0[body]
                    path = []
                    while nd >= 0:
                        path.append(nd)
                        nd = self.node_parent[nd]
                    paths.append(path)
            flags = {}
            for s_ in range(2):
                for nd in paths[s_]:
                    flags[nd] = flags.get(nd, 0) | (1 << s_)
            for nd in sorted(flags):
                col.append(nd)
                side.append(flags[nd])
            ptr.append(len(col))
        self.cut_ptr = np.array(ptr, dtype=np.int64)
        self.cut_col = np.array(col, dtype=np.int64)
        self.cut_side = np.array(side, dtype=np.int64)
        nnz = len(col)
        # ---------------------------------------------------------------- forces
        # force elements (and markers, for recording) are evaluated by an absolute system on the absolute states
        self._abs = None
        self._has_forces = bool(model.forces)
        self.blocks, self.providers = [], []
        if model.forces or model.markers:
            from .absolute import AbsoluteSystem

            self._abs = AbsoluteSystem(model, remove_redundant=False)
            self._abs_data = np.zeros(self._abs.pattern.nnz)
            self.blocks, self.providers = self._abs.blocks, self._abs.providers
        # ---------------------------------------------------------------- buffers (reused every evaluation)
        m = self.nc
        self.pos = np.zeros((n, 2))
        self.ang = np.zeros(n)
        self.vel = np.zeros((n, 3))
        self.bias = np.zeros((n, 3))
        self.b2 = np.zeros((n, 3))
        self.r_pc = np.zeros((n, 2))
        self.joint_pt = np.zeros((n, 2))
        self.joint_axis = np.zeros((n, 2))
        self.cut_pw = np.zeros((self.n_cut, 2, 2))
        self.node_force = np.zeros((n, 3))
        self.tau = np.zeros(n)
        self._Ia = np.zeros((n, 3, 3))
        self._pA = np.zeros((n, 3))
        self._Pl = np.zeros((n, 3, m))
        self._U = np.zeros((n, 3))
        self._dinv = np.zeros(n)
        self._u0 = np.zeros(n)
        self._ul = np.zeros((n, m))
        self._acc0 = np.zeros((n, 3))
        self._accl = np.zeros((n, 3, m))
        self._qdd0 = np.zeros(n)
        self._qddl = np.zeros((n, m))
        self._G = np.zeros((m, m))
        self._rhs = np.zeros(m)
        self._piv = np.zeros(m, dtype=np.int64)
        self.qdd = np.zeros(n)
        self.lam = np.zeros(m)
        self.acc = np.zeros((n, 3))
        self.phi = np.zeros(m)
        self.Jval = np.zeros((nnz, 2))
        self._id_acc = np.zeros((n, 3))
        self._id_F = np.zeros((n, 3))
        self._zero_force = np.zeros((n, 3))
        self._zero_n = np.zeros(n)
        # absolute applied body forces of the last evaluation (world force, body torque; what the divergence
        # monitor weighs the energy change against): gravity, plus the elements' when there are some
        self.f = np.zeros((nb_, 6))
        self.f[:, :3] = self.mass[:, None] * model.gravity[None, :]
        self.q_abs = self.q0.copy()
        self.v_abs = np.zeros((nb_, 6))
        self.a_abs = np.zeros((nb_, 6))
        self.body_quat0 = self.q0[:, 3:].copy()
        # the evaluation's kernels bound once to the step buffers (trackdyn._compiled: no per-call type dispatch)
        self.q_step = np.zeros(n)
        self.qd_step = np.zeros(n)
        self._fk_call = bound_call(RK.forward_kinematics, self.q_step, self.qd_step, self.node_parent, self.joint_type,
                                   self.joint_sp, self.joint_sc, self.joint_dir, self.pos, self.ang, self.vel,
                                   self.bias, self.b2, self.r_pc, self.joint_pt, self.joint_axis)
        self._cut_call = bound_call(RK.cut_points, self.cut_node, self.cut_s, self.pos, self.ang, self.cut_pw)
        self._solve_call = bound_call(RK.articulated_solve, self.node_parent, self.b2, self.r_pc, self.bias, self.vel,
                                      self.node_mass, self.node_inertia, self.node_force, self.gravity, self.tau,
                                      self.cut_node, self.cut_pw, self.drv_node, self.drv_acc, self._Ia, self._pA,
                                      self._Pl, self._U, self._dinv,
                                      self._u0, self._ul, self._acc0, self._accl, self._qdd0, self._qddl, self._G,
                                      self._rhs, self._piv, self.qdd, self.lam, self.acc)
        self._entry_cut = np.repeat(np.arange(self.n_cut), np.diff(self.cut_ptr))

    # ------------------------------------------------------------------ stages
    def kinematics(self, q, qd) -> None:
        """Recursive positions, velocities, B2, D (eqs. 1-6) and the cut points of (q, q̇)."""
        self.q_step[:] = q
        self.qd_step[:] = qd
        self._fk_call()
        self._cut_call()

    def update_drivers(self, t: float) -> None:
        """θ, θ̇, θ̈ of every motor at time t, as its tree coordinate (``drv_pos``, ``drv_vel``, ``drv_acc``)."""
        for d, (prof, kind) in enumerate(self._drv_profiles):
            sg = self.drv_sign[d]
            if kind == "value":
                vals = (prof.value(t), prof.d1(t), prof.d2(t))
            else:
                vals = (prof.integral(t), prof.value(t), prof.d1(t))
            self.drv_pos[d], self.drv_vel[d], self.drv_acc[d] = sg * vals[0], sg * vals[1], sg * vals[2]

    def _absolute_from_kinematics(self, acc=None):
        RK.to_absolute(self.node_body, self.pos, self.ang, self.vel, self.acc if acc is None else acc,
                       self.plane_e1, self.plane_e2, self.plane_n, self.body_offset, self.body_quat0,
                       self.body_axis_b, self.q_abs, self.v_abs, self.a_abs)

    def applied_forces(self, t: float) -> np.ndarray:
        """``node_force`` (n, 3): the force elements' planar force and torque about n on every node (gravity
        is added by the kernels). Needs :meth:`kinematics` at the current state."""
        nf = self.node_force
        if not self._has_forces:
            return nf
        s = self._abs
        self._absolute_from_kinematics(self._zero_force)
        s.update_kinematics(self.q_abs, self.v_abs)
        self._abs_data[:] = 0.0
        s.eval_forces(t, self.v_abs, 0.0, 0.0, self._abs_data)
        f = s.f
        self.f[:] = f
        # gravity and the gyroscopic torque of body_forces are dropped: the kernels add m g, and a rotation
        # about n has no gyroscopic torque about n
        fw = f[:, :3] - self.mass[:, None] * self._abs.gravity[None, :]
        tw = np.einsum("bij,bj->bi", s.kin.R[:-1], f[:, 3:])
        nf[:] = 0.0
        nodes = self.node_of_body
        nf[nodes, 0] = fw @ self.plane_e1
        nf[nodes, 1] = fw @ self.plane_e2
        nf[nodes, 2] = tw @ self.plane_n
        return nf

    def accelerations(self, t: float, q, qd, tau=None):
        """Joint accelerations and cut-joint multipliers at (t, q, q̇): ``(qdd (n,), lam (nc,))`` (buffers).

        ``tau`` (n,) adds joint forces (N m for a revolute). Leaves the body
        accelerations in ``self.acc`` (n, 3).
        """
        self.kinematics(q, qd)
        self.applied_forces(t)
        if self.n_drv:
            self.update_drivers(t)
        if tau is None:
            self.tau[:] = 0.0
        else:
            self.tau[:] = tau
        self._solve_call()
        return self.qdd, self.lam

    @property
    def compiled_rk4(self) -> bool:
        """Whether :meth:`rk4_advance` can run the whole RK4 step compiled (no force elements: the applied
        forces are gravity only, constant over the step)."""
        return not self._has_forces

    def rk4_advance(self, h: float, q0, qd0, qdd0, t: float = 0.0):
        """One classical RK4 step of (q, q̇) from (t, q0, q̇0) with q̈0 given, in compiled code
        (:func:`~trackdyn.formulations._recursive_kernels.rk4_step`); returns new arrays ``(q, q̇)``, not
        projected. Only when :attr:`compiled_rk4`."""
        if not self.compiled_rk4:
            raise ValueError("recursive formulation: rk4_advance needs a model without force elements")
        n = self.n
        if getattr(self, "_rk_h", None) != h:
            self._rk_in = np.zeros((3, n))
            self._rk_k = np.zeros((2, 3, n))
            self._rk_s = np.zeros((2, n))
            self._rk_out = np.zeros((2, n))
            self._rk_drv = np.zeros((3, self.n_drv))
            self.node_force[:] = 0.0
            self.tau[:] = 0.0
            self._rk_call = bound_call(
                RK.rk4_step, float(h), self._rk_in[0], self._rk_in[1], self._rk_in[2], self.node_parent,
                self.joint_type, self.joint_sp, self.joint_sc, self.joint_dir, self.pos, self.ang, self.vel, self.bias,
                self.b2, self.r_pc, self.joint_pt, self.joint_axis, self.cut_node, self.cut_s, self.cut_pw,
                self.drv_node, self.drv_acc, self._rk_drv, self.node_mass, self.node_inertia, self.node_force, self.gravity, self.tau, self._Ia, self._pA,
                self._Pl, self._U, self._dinv, self._u0, self._ul, self._acc0, self._accl, self._qdd0, self._qddl,
                self._G, self._rhs, self._piv, self.qdd, self.lam, self.acc, self._rk_k[0], self._rk_k[1],
                self._rk_s[0], self._rk_s[1], self._rk_out[0], self._rk_out[1])
            self._rk_h = h
        self._rk_in[0] = q0
        self._rk_in[1] = qd0
        self._rk_in[2] = qdd0
        for k, c in enumerate((0.5, 0.5, 1.0)):
            if self.n_drv:
                self.update_drivers(t + c * h)
                self._rk_drv[k] = self.drv_acc
        self._rk_call()
        return self._rk_out[0].copy(), self._rk_out[1].copy()

    def inverse_dynamics(self, t: float, q, qd, qdd) -> np.ndarray:
        """``M(q) q̈ − Q(q, q̇, t)`` (n,) by the recursive Newton-Euler pass (cut joints not included)."""
        self.kinematics(q, qd)
        self.applied_forces(t)
        out = np.zeros(self.n)
        RK.inverse_dynamics(self.node_parent, self.b2, self.r_pc, self.bias, self.node_mass, self.node_inertia,
                            self.node_force, self.gravity, np.ascontiguousarray(qdd, dtype=float), True, self._id_acc,
                            self._id_F, out)
        return out

    def mass_times(self, q, x) -> np.ndarray:
        """``M(q) x`` (n,) in O(n) (recursive Newton-Euler without velocity, gravity or forces)."""
        self.kinematics(q, self._zero_n)
        out = np.zeros(self.n)
        RK.inverse_dynamics(self.node_parent, self.b2, self.r_pc, self.bias, self.node_mass, self.node_inertia,
                            self._zero_force, self.gravity, np.ascontiguousarray(x, dtype=float), False,
                            self._id_acc, self._id_F, out)
        return out

    def mass_matrix(self, q) -> np.ndarray:
        """Dense ``M(q)`` (n, n) from n products (for tests and small models)."""
        return np.column_stack([self.mass_times(q, e) for e in np.eye(self.n)])

    def generalized_forces(self, t: float, q, qd) -> np.ndarray:
        """``Q(q, q̇, t)`` (n,): applied forces minus the velocity-product terms, projected on the joints."""
        return -self.inverse_dynamics(t, q, qd, np.zeros(self.n))

    def closure(self, q, dense: bool = True, t: float = 0.0):
        """Constraints Φ (nc,) and their Jacobian Φ_q at (t, q): dense (nc, n), or the cut rows' pattern values
        ``Jval`` (nnz, 2) with ``dense=False`` (columns ``cut_col``, cut ``cut_ptr``). The cut rows come first,
        then one row per motor, ``q_j − θ(t)``."""
        self.kinematics(q, self._zero_n)
        if self.n_drv:
            self.update_drivers(t)
            self.phi[2 * self.n_cut:] = np.asarray(q)[self.drv_node] - self.drv_pos
        RK.closure(self.cut_node, self.cut_pw, self.pos, self.joint_type, self.joint_pt, self.joint_axis,
                   self.cut_ptr, self.cut_col, self.cut_side, self.phi, self.Jval)
        if not dense:
            return self.phi, self.Jval
        J = np.zeros((self.nc, self.n))
        r = 2 * self._entry_cut
        J[r, self.cut_col] = self.Jval[:, 0]
        J[r + 1, self.cut_col] = self.Jval[:, 1]
        J[2 * self.n_cut + np.arange(self.n_drv), self.drv_node] = 1.0
        return self.phi, J

    def project(self, q, qd, tol: float = 1e-12, max_iter: int = 10, t: float = 0.0) -> int:
        """Put (q, q̇) back on the closure manifold in place: Newton on Φ(q) = 0 with the least-norm
        correction, then ``Φ_q q̇ = 0`` (compiled: :func:`~._recursive_kernels.project`). Returns the Newton
        iterations; ValueError when it does not converge. Leaves Φ in ``self.phi``."""
        if self.nc == 0:
            return 0
        if q.dtype != np.float64 or qd.dtype != np.float64 or q.shape != (self.n,) or qd.shape != (self.n,):
            raise ValueError(f"recursive formulation: project needs float arrays of shape ({self.n},)")
        m = self.nc
        if self.n_drv:
            self.update_drivers(t)
        if not hasattr(self, "_pj_Jd"):
            self._pj_Jd = np.zeros((m, self.n))
            self._pj_A = np.zeros((m, m))
            self._pj_b = np.zeros(m)
            self._pj_y = np.zeros(m)
        it = RK.project(q, qd, float(tol), int(max_iter), self.node_parent, self.joint_type, self.joint_sp,
                        self.joint_sc, self.joint_dir, self.pos, self.ang, self.vel, self.bias, self.b2, self.r_pc,
                        self.joint_pt, self.joint_axis, self.cut_node, self.cut_s, self.cut_pw, self.cut_ptr,
                        self.cut_col, self.cut_side, self.drv_node, self.drv_pos, self.drv_vel, self.phi, self.Jval,
                        self._pj_Jd, self._pj_A, self._pj_b,
                        self._pj_y, self._piv)
        if it < 0:
            raise ValueError(f"recursive formulation: cut-joint closure |Φ| = {np.max(np.abs(self.phi)):.3g} m "
                             f"after {max_iter} iterations")
        return int(it)

    def to_absolute(self, q, qd, qdd=None):
        """Absolute body states ``(q (nb, 7), v (nb, 6), acc (nb, 6))`` (copies) of (q, q̇[, q̈])."""
        self.kinematics(q, qd)
        acc = np.zeros((self.n, 3))
        if qdd is not None:
            RK.inverse_dynamics(self.node_parent, self.b2, self.r_pc, self.bias, self.node_mass, self.node_inertia,
                                self._zero_force, self.gravity, np.ascontiguousarray(qdd, dtype=float), True, acc,
                                self._id_F, np.zeros(self.n))
        self._absolute_from_kinematics(acc)
        return self.q_abs.copy(), self.v_abs.copy(), self.a_abs.copy()

    def velocity_map(self, q) -> np.ndarray:
        """Dense ``B`` (6 nb, n): the absolute body velocities (ṙ world, ω̄ body) per unit joint rate."""
        B = np.zeros((6 * self.nb, self.n))
        for k in range(self.n):
            e = np.zeros(self.n)
            e[k] = 1.0
            _, v, _ = self.to_absolute(q, e)
            B[:, k] = v.ravel()
        return B

    def initial_state(self) -> State:
        """The model's initial pose (q = 0) with the joint rates fitted to its initial velocities, projected."""
        q = np.zeros(self.n)
        qd = np.zeros(self.n)
        if np.any(self.v0):
            B = self.velocity_map(q)
            qd = np.linalg.lstsq(B, self.v0.ravel(), rcond=None)[0]
        self.project(q, qd)
        qdd, lam = self.accelerations(0.0, q, qd)
        return self.state(0.0, q, qd, qdd, lam)

    def state(self, t: float, q, qd, qdd, lam, extra=None, evaluated: bool = False) -> State:
        """A :class:`State` with the absolute body states of (q, q̇, q̈) and the joint coordinates in ``extra``.

        ``evaluated``: :meth:`accelerations` was the last call, at these very (t, q, q̇) (its kinematics and
        body accelerations are reused).
        """
        if evaluated:
            self._absolute_from_kinematics()
            qa, va, aa = self.q_abs.copy(), self.v_abs.copy(), self.a_abs.copy()
        else:
            qa, va, aa = self.to_absolute(q, qd, qdd)
        ex = dict(extra or {})
        ex["recursive.q"] = np.array(q, dtype=float)
        ex["recursive.qd"] = np.array(qd, dtype=float)
        ex["recursive.qdd"] = np.array(qdd, dtype=float)
        ex["recursive.t"] = np.array([t])
        return State(float(t), qa, va, np.array(lam, dtype=float), aa, ex)

    def evaluate_outputs(self, state: State, elements: bool = True) -> None:
        """Bring the force elements' and markers' recorded outputs up to date with ``state`` (its absolute body
        states). The joints' reactions are not recorded (``joint_reactions = False``)."""
        if self._abs is not None and elements:
            self._abs.evaluate_outputs(state, elements=True)

    def commit(self, state: State) -> None:
        """Nothing is staged between steps (no contact history yet)."""

    def kinetic_energy(self, q, qd) -> float:
        return float(0.5 * qd @ self.mass_times(q, qd))

    def potential_energy(self, q) -> float:
        """Gravitational potential energy (force elements not included)."""
        self.kinematics(q, self._zero_n)
        return float(-np.sum(self.node_mass * (self.pos @ self.gravity)))
