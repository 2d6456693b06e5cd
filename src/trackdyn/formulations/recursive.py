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

import numpy as np

from .._compiled import bound_call
from ..mbs.joints import Revolute, RevoluteMotor
from ..mbs.model import Model, State
from . import _recursive_kernels as RK
from ._recursive_common import RecursiveBase, joint_graph, refuse_cut_motors, root_path_flags, spanning_tree

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


class RecursiveSystem(RecursiveBase):
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

    joint_reactions = False
    _closure_unit = " m"

    def __init__(self, model: Model, planar_tol: float = 1e-9):
        joints = self._init_bodies(model)
        nb_ = self.nb
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
        ends, adj = joint_graph(model, joints, nb_)

        def planar_pt(jt):
            return E @ jt.point

        def tree_node(k, u, w, parent):
            # (body, parent node, joint type, sp (2,), sc (2,), dir (2,), name, joint index)
            c = planar_pt(joints[k])
            sp = c - (p0[u] if u < nb_ else 0.0)
            sc = c - p0[w]
            return (w, parent, RK.REVOLUTE, sp, sc, np.zeros(2), joints[k].name, k)

        def floating_base(b, first):
            # slides along e1, e2 and a turn, through massless virtual bodies at its centre
            nm = self.body_names[b]
            return [(-1, -1, RK.PRISMATIC, p0[b].copy(), np.zeros(2), np.array([1.0, 0.0]), f"{nm}.x", -1),
                    (-1, first, RK.PRISMATIC, np.zeros(2), np.zeros(2), np.array([0.0, 1.0]), f"{nm}.z", -1),
                    (b, first + 1, RK.REVOLUTE, np.zeros(2), np.zeros(2), np.zeros(2), f"{nm}.rot", -1)]

        nodes, node_of, cuts, floating = spanning_tree(nb_, ends, adj, tree_node, floating_base)
        self._init_tree(joints, nodes, node_of, cuts, floating)
        if self.floating_bases and abs(g @ n_ax) > planar_tol * (1.0 + np.linalg.norm(g)):
            raise ValueError("recursive formulation: gravity has a component along the joint axis and bodies "
                             f"{self.floating_bases} float; nothing would hold them in the plane")
        self.n = n = len(nodes)
        self.joint_sp = np.array([x[3] for x in nodes], dtype=float).reshape(n, 2)
        self.joint_sc = np.array([x[4] for x in nodes], dtype=float).reshape(n, 2)
        self.joint_dir = np.array([x[5] for x in nodes], dtype=float).reshape(n, 2)
        real = self.node_body >= 0
        self.node_mass = np.where(real, self.mass[np.maximum(self.node_body, 0)], 0.0)
        self.node_inertia = np.where(real, self.body_inertia_n[np.maximum(self.node_body, 0)], 0.0)
        self.removed_rows: list = []  # the cut rows are independent (no redundant rows to remove, unlike 3-D joints)
        # ---------------------------------------------------------------- drivers: prescribed tree coordinates
        refuse_cut_motors(joints, cuts)
        self.drv_node = self._init_drivers([(j, float(np.sign(jt.axis @ n_ax)) * (1.0 if child_is_b else -1.0), jt)
                                            for j, child_is_b, jt in self._tree_motors(joints, ends)])
        # ---------------------------------------------------------------- cut joints and their pattern
        self.n_cut = len(cuts)
        self.nc = 2 * self.n_cut + self.n_drv  # cut rows, then one row per motor
        self.cut_node = np.zeros((self.n_cut, 2), dtype=np.int64)
        self.cut_s = np.zeros((self.n_cut, 2, 2))
        ptr, col, side = [0], [], []
        for c, k in enumerate(cuts):
            c_pt = planar_pt(joints[k])
            for s_, body in enumerate(ends[k]):
                if body == nb_:
                    self.cut_node[c, s_] = -1
                    self.cut_s[c, s_] = c_pt
                else:
                    self.cut_node[c, s_] = node_of[body]
                    self.cut_s[c, s_] = c_pt - p0[body]
            flags = root_path_flags(self.node_parent, self.cut_node[c])
            for nd in sorted(flags):
                col.append(nd)
                side.append(flags[nd])
            ptr.append(len(col))
        self.cut_ptr = np.array(ptr, dtype=np.int64)
        self.cut_col = np.array(col, dtype=np.int64)
        self.cut_side = np.array(side, dtype=np.int64)
        nnz = len(col)
        self._init_force_elements(model)
        # ---------------------------------------------------------------- buffers (reused every evaluation)
        m = self.nc
        self._init_buffers(n, n, 3, m)
        self.pos = np.zeros((n, 2))
        self.ang = np.zeros(n)
        self.b2 = np.zeros((n, 3))
        self.r_pc = np.zeros((n, 2))
        self.joint_pt = np.zeros((n, 2))
        self.joint_axis = np.zeros((n, 2))
        self.cut_pw = np.zeros((self.n_cut, 2, 2))
        self._U = np.zeros((n, 3))
        self._dinv = np.zeros(n)
        self._piv = np.zeros(m, dtype=np.int64)
        self.Jval = np.zeros((nnz, 2))
        self.body_quat0 = self.q0[:, 3:].copy()
        # the evaluation's kernels bound once to the step buffers (trackdyn._compiled: no per-call type dispatch)
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
        f = self._element_forces(t)
        # gravity and the gyroscopic torque of body_forces are dropped: the kernels add m g, and a rotation
        # about n has no gyroscopic torque about n
        fw = f[:, :3] - self.mass[:, None] * self._abs.gravity[None, :]
        tw = np.einsum("bij,bj->bi", self._abs.kin.R[:-1], f[:, 3:])
        nf[:] = 0.0
        nodes = self.node_of_body
        nf[nodes, 0] = fw @ self.plane_e1
        nf[nodes, 1] = fw @ self.plane_e2
        nf[nodes, 2] = tw @ self.plane_n
        return nf

    def _load(self, t: float, q, qd) -> None:
        self.kinematics(q, qd)
        self.applied_forces(t)

    def _bind_rk4(self, h: float):
        """:func:`~trackdyn.formulations._recursive_kernels.rk4_step` bound to the step buffers."""
        return bound_call(
            RK.rk4_step, h, self._rk_in[0], self._rk_in[1], self._rk_in[2], self.node_parent,
            self.joint_type, self.joint_sp, self.joint_sc, self.joint_dir, self.pos, self.ang, self.vel, self.bias,
            self.b2, self.r_pc, self.joint_pt, self.joint_axis, self.cut_node, self.cut_s, self.cut_pw,
            self.drv_node, self.drv_acc, self._rk_drv, self.node_mass, self.node_inertia, self.node_force, self.gravity,
            self.tau, self._Ia, self._pA, self._Pl, self._U, self._dinv, self._u0, self._ul, self._acc0, self._accl,
            self._qdd0, self._qddl, self._G, self._rhs, self._piv, self.qdd, self.lam, self.acc, self._rk_k[0],
            self._rk_k[1], self._rk_s[0], self._rk_s[1], self._rk_out[0], self._rk_out[1])

    def _rnea(self, x, with_bias, acc, tau):
        RK.inverse_dynamics(self.node_parent, self.b2, self.r_pc, self.bias, self.node_mass, self.node_inertia,
                            self.node_force if with_bias else self._zero_force, self.gravity,
                            np.ascontiguousarray(x, dtype=float), with_bias, acc, self._id_F, tau)

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

    def _project_kernel(self, q, qd, tol: float, max_iter: int) -> int:
        """:func:`~trackdyn.formulations._recursive_kernels.project` on the step buffers."""
        return RK.project(q, qd, tol, max_iter, self.node_parent, self.joint_type, self.joint_sp,
                          self.joint_sc, self.joint_dir, self.pos, self.ang, self.vel, self.bias, self.b2, self.r_pc,
                          self.joint_pt, self.joint_axis, self.cut_node, self.cut_s, self.cut_pw, self.cut_ptr,
                          self.cut_col, self.cut_side, self.drv_node, self.drv_pos, self.drv_vel, self.phi, self.Jval,
                          self._pj_Jd, self._pj_A, self._pj_b, self._pj_y)

    def initial_state(self) -> State:
        """The model's initial pose (q = 0) with the joint rates fitted to its initial velocities, projected."""
        q, qd = self._initial_coordinates()
        qdd, lam = self.accelerations(0.0, q, qd)
        return self.state(0.0, q, qd, qdd, lam)
