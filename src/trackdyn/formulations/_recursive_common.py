"""What the planar and the spatial recursive formulations share (:mod:`.recursive`, :mod:`.recursive_spatial`).

Both turn a :class:`~trackdyn.mbs.model.Model` into a spanning tree of
joint coordinates plus cut joints (han-sander-mao §3) and differ in their
kinematics (planar 3-vectors ``(ṙ1, ṙ2, ω)`` against spatial 6-vectors
``(ṙ, ω)``) and in their kernels. What does not depend on that lives here:

- :func:`joint_graph`, :func:`spanning_tree`: the breadth-first spanning
  tree from the ground, the floating bases of the bodies it does not reach,
  and the cut joints (the joints left out of the tree);
- :func:`root_path_flags`: the tree nodes on the root paths of a cut's two
  bodies (the closure Jacobian's fixed pattern);
- :class:`RecursiveBase`: the drivers of the tree motors, the force
  elements evaluated by an absolute system, and the methods that only
  combine a formulation's stages (accelerations, inverse dynamics, the
  compiled RK4 step, the projection, the absolute body states, the state).

A subclass provides the stages: ``kinematics``, ``applied_forces``,
``_load`` (what :meth:`RecursiveBase.accelerations` runs before the
articulated solve), ``_solve_call`` (the bound articulated solve),
``_rnea`` (the recursive Newton-Euler pass), ``_bind_rk4`` (the bound
compiled RK4 step), ``_project_kernel`` and ``_absolute_from_kinematics``.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..mbs.joints import RevoluteMotor
from ..mbs.model import Model, State


def joint_graph(model: Model, joints, nb: int, tree_joint=None):
    """``(ends, adj)``: the two body indices of every joint (``nb``: the ground) and, per body and the ground,
    the joints that may join the tree (all, or those for which ``tree_joint(joint)`` holds)."""
    ends = []
    adj = [[] for _ in range(nb + 1)]
    for k, jt in enumerate(joints):
        a, b = model._index(jt.body_a), model._index(jt.body_b)
        a = nb if a < 0 else a
        b = nb if b < 0 else b
        ends.append((a, b))
        if tree_joint is None or tree_joint(jt):
            adj[a].append(k)
            adj[b].append(k)
    return ends, adj


def spanning_tree(nb: int, ends, adj, tree_node, floating_base):
    """The spanning tree found by breadth-first search from the ground, then from every body it did not reach.

    ``tree_node(k, u, w, parent)`` makes the node of body ``w`` joined by
    joint ``k`` to body ``u`` (``nb``: the ground), ``parent`` the node of
    ``u`` (−1: the ground); ``floating_base(b, first)`` the node(s) that put
    an unreached body ``b`` on the ground, the first at index ``first``, the
    last one ``b``'s. A node is a tuple whose first two items are its body
    and parent node and whose last two its joint's name and index (−1: a
    virtual joint). Returns ``(nodes, node_of, cuts, floating)``: the nodes
    in tree order, the node of every body (index ``nb``: −1), the indices of
    the cut joints and the floating bodies.
    """
    node_of = np.full(nb + 1, -1, dtype=np.int64)
    used = np.zeros(len(ends), dtype=bool)
    visited = np.zeros(nb + 1, dtype=bool)
    nodes = []

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
                nodes.append(tree_node(k, u, w, node_of[u] if u < nb else -1))
                node_of[w] = len(nodes) - 1
                queue.append(w)

    visited[nb] = True
    bfs(nb)
    floating = []
    for b in range(nb):
        if visited[b]:
            continue
        nodes.extend(floating_base(b, len(nodes)))
        node_of[b] = len(nodes) - 1
        visited[b] = True
        floating.append(b)
        bfs(b)
    cuts = [k for k in range(len(ends)) if not used[k]]
    return nodes, node_of, cuts, floating


def root_path_flags(node_parent, end_nodes) -> dict:
    """``{node: bits}`` over the root paths of two nodes (−1: the ground, no path): bit 1 on the first's path,
    bit 2 on the second's (a node on both keeps both)."""
    flags = {}
    for s_, nd in enumerate(end_nodes):
        while nd >= 0:
            flags[nd] = flags.get(nd, 0) | (1 << s_)
            nd = node_parent[nd]
    return flags


def refuse_cut_motors(joints, cuts) -> None:
    """ValueError when a :class:`~trackdyn.mbs.joints.RevoluteMotor` is a cut joint (a motor must be a tree joint)."""
    for k in cuts:
        jt = joints[k]
        if type(jt) is RevoluteMotor:
            raise ValueError(f"recursive formulation: motor {jt.name!r} closes a loop (a cut joint); a motor "
                             "must be a tree joint")


class RecursiveBase:
    """The parts of a recursive system that do not depend on its kinematics (see the module docstring)."""

    formulation = "recursive"
    _closure_unit = ""  # the unit of the projection's error message (" m" when every row is a length)

    # ------------------------------------------------------------------ construction
    def _init_bodies(self, model: Model) -> list:
        """The model's body arrays; returns its joints."""
        self.model = model
        self.mass, self.inertia, self.q0, self.v0 = model.body_arrays()
        self.nb = len(self.mass)
        self.body_names = model.body_names
        return list(model.joints)

    def _init_tree(self, joints, nodes, node_of, cuts, floating) -> None:
        """The node arrays every recursive system has, from :func:`spanning_tree`'s result."""
        self.floating_bases = [self.body_names[b] for b in floating]
        self.node_body = np.array([x[0] for x in nodes], dtype=np.int64)
        self.node_parent = np.array([x[1] for x in nodes], dtype=np.int64)
        self.joint_type = np.array([x[2] for x in nodes], dtype=np.int64)
        self.node_joint = [x[-2] for x in nodes]
        self.node_joint_index = np.array([x[-1] for x in nodes], dtype=np.int64)
        self.node_of_body = node_of[:self.nb].copy()
        self.cut_joints = [joints[k].name for k in cuts]

    def _tree_motors(self, joints, ends) -> list:
        """``(node, child is body b, joint)`` of every motor (a tree joint: see :func:`refuse_cut_motors`)."""
        node_of_joint = {int(k): j for j, k in enumerate(self.node_joint_index) if k >= 0}
        out = []
        for k, jt in enumerate(joints):
            if type(jt) is RevoluteMotor:
                j = node_of_joint[k]
                out.append((j, self.node_body[j] == ends[k][1], jt))
        return out

    def _init_drivers(self, drv) -> np.ndarray:
        """Driver arrays of ``drv`` ((coordinate, sign, motor) triples); returns the coordinates."""
        self.n_drv = len(drv)
        self.drv_sign = np.array([d[1] for d in drv], dtype=float)
        self._drv_profiles = [(d[2].profile, d[2].kind) for d in drv]
        self.drivers = [d[2].name for d in drv]
        self.drv_pos = np.zeros(self.n_drv)
        self.drv_vel = np.zeros(self.n_drv)
        self.drv_acc = np.zeros(self.n_drv)
        return np.array([d[0] for d in drv], dtype=np.int64)

    def _init_force_elements(self, model: Model, providers=()) -> None:
        """Force elements, force providers (contact, drivetrain) and markers (for recording) are evaluated by an
        absolute system on the absolute states."""
        self._abs = None
        providers = list(providers)
        self._has_forces = bool(model.forces or providers)
        self.stateful_forces = bool(providers)
        self._step_state, self._step_h = None, 0.0
        self.blocks, self.providers = [], []
        if model.forces or model.markers or providers:
            from .absolute import AbsoluteSystem

            # "diagonal": the pattern is never factorised here (the providers only need one to bind)
            self._abs = AbsoluteSystem(model, remove_redundant=False, providers=providers, coupling="diagonal")
            self._abs_data = np.zeros(self._abs.pattern.nnz)
            self.blocks, self.providers = self._abs.blocks, self._abs.providers

    def _init_buffers(self, n: int, nn: int, width: int, m: int) -> None:
        """The buffers of every evaluation: n coordinates, nn nodes, ``width`` components of a node's velocity
        (3 planar, 6 spatial), m constraint rows."""
        self.vel = np.zeros((nn, width))
        self.bias = np.zeros((nn, width))
        self.node_force = np.zeros((nn, width))
        self.tau = np.zeros(n)
        self._Ia = np.zeros((nn, width, width))
        self._pA = np.zeros((nn, width))
        self._Pl = np.zeros((nn, width, m))
        self._u0 = np.zeros(n)
        self._ul = np.zeros((n, m))
        self._acc0 = np.zeros((nn, width))
        self._accl = np.zeros((nn, width, m))
        self._qdd0 = np.zeros(n)
        self._qddl = np.zeros((n, m))
        self._G = np.zeros((m, m))
        self._rhs = np.zeros(m)
        self.qdd = np.zeros(n)
        self.lam = np.zeros(m)
        self.acc = np.zeros((nn, width))
        self.phi = np.zeros(m)
        self._id_acc = np.zeros((nn, width))
        self._id_F = np.zeros((nn, width))
        self._zero_force = np.zeros((nn, width))
        self._zero_n = np.zeros(n)
        # absolute applied body forces of the last evaluation (world force, body torque; what the divergence
        # monitor weighs the energy change against): gravity, plus the elements' when there are some
        nb_ = self.nb
        self.f = np.zeros((nb_, 6))
        self.f[:, :3] = self.mass[:, None] * self.model.gravity[None, :]
        self.q_abs = self.q0.copy()
        self.v_abs = np.zeros((nb_, 6))
        self.a_abs = np.zeros((nb_, 6))
        self.q_step = np.zeros(n)
        self.qd_step = np.zeros(n)

    # ------------------------------------------------------------------ stages
    def update_drivers(self, t: float) -> None:
        """θ, θ̇, θ̈ of every motor at time t, as its tree coordinate (``drv_pos``, ``drv_vel``, ``drv_acc``)."""
        for d, (prof, kind) in enumerate(self._drv_profiles):
            sg = self.drv_sign[d]
            if kind == "value":
                vals = (prof.value(t), prof.d1(t), prof.d2(t))
            else:
                vals = (prof.integral(t), prof.value(t), prof.d1(t))
            self.drv_pos[d], self.drv_vel[d], self.drv_acc[d] = sg * vals[0], sg * vals[1], sg * vals[2]

    def _element_forces(self, t: float) -> np.ndarray:
        """The force elements' absolute body forces (nb, 6: world force, body torque; also in ``self.f``) at the
        current kinematics."""
        s = self._abs
        self._absolute_from_kinematics(self._zero_force)
        s.update_kinematics(self.q_abs, self.v_abs)
        self._abs_data[:] = 0.0
        if self.stateful_forces and self._step_state is None:
            raise ValueError("recursive formulation: force providers need the step's state; call begin_step first "
                             "(the recursive steppers do)")
        s.eval_forces(t, self.v_abs, 0.0, 0.0, self._abs_data, state=self._step_state, h=self._step_h)
        f = s.f
        self.f[:] = f
        return f

    def accelerations(self, t: float, q, qd, tau=None):
        """Joint accelerations and constraint multipliers at (t, q, q̇): ``(qdd (n,), lam (nc,))`` (buffers).

        ``tau`` (n,) adds joint forces (N m for a revolute, N for a prismatic).
        Leaves the body accelerations in ``self.acc`` (one row per node: planar
        ``(r̈1, r̈2, ω̇)``, spatial world ``(r̈, ω̇)`` at each centre).
        """
        self._load(t, q, qd)
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
        """One classical RK4 step of (q, q̇) from (t, q0, q̇0) with q̈0 given, in compiled code (the kernels'
        ``rk4_step``); returns new arrays ``(q, q̇)``, not projected. Only when :attr:`compiled_rk4`."""
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
            self._rk_call = self._bind_rk4(float(h))
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
        self._rnea(qdd, True, self._id_acc, out)
        return out

    def mass_times(self, q, x) -> np.ndarray:
        """``M(q) x`` (n,) in O(n) (recursive Newton-Euler without velocity, gravity or forces)."""
        self.kinematics(q, self._zero_n)
        out = np.zeros(self.n)
        self._rnea(x, False, self._id_acc, out)
        return out

    def mass_matrix(self, q) -> np.ndarray:
        """Dense ``M(q)`` (n, n) from n products (for tests and small models)."""
        return np.column_stack([self.mass_times(q, e) for e in np.eye(self.n)])

    def generalized_forces(self, t: float, q, qd) -> np.ndarray:
        """``Q(q, q̇, t)`` (n,): applied forces minus the velocity-product terms, projected on the joints."""
        return -self.inverse_dynamics(t, q, qd, np.zeros(self.n))

    def project(self, q, qd, tol: float = 1e-12, max_iter: int = 10, t: float = 0.0) -> int:
        """Put (q, q̇) back on the closure manifold in place: Newton on Φ(q) = 0 with the least-norm
        correction, then ``Φ_q q̇ = 0`` (compiled: the kernels' ``project``). Returns the Newton iterations;
        ValueError when it does not converge. Leaves Φ in ``self.phi``."""
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
        it = self._project_kernel(q, qd, float(tol), int(max_iter))
        if it < 0:
            raise ValueError(f"recursive formulation: cut-joint closure |Φ| = {np.max(np.abs(self.phi)):.3g}"
                             f"{self._closure_unit} after {max_iter} iterations")
        return int(it)

    def to_absolute(self, q, qd, qdd=None):
        """Absolute body states ``(q (nb, 7), v (nb, 6), acc (nb, 6))`` (copies) of (q, q̇[, q̈])."""
        self.kinematics(q, qd)
        acc = np.zeros_like(self.acc)
        if qdd is not None:
            self._rnea(qdd, True, acc, np.zeros(self.n))
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

    def _initial_coordinates(self):
        """``(q, q̇)`` of the model's initial pose (q = 0), the rates fitted to its initial velocities, projected."""
        q = np.zeros(self.n)
        qd = np.zeros(self.n)
        if np.any(self.v0):
            B = self.velocity_map(q)
            qd = np.linalg.lstsq(B, self.v0.ravel(), rcond=None)[0]
        self.project(q, qd)
        return q, qd

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
        states)."""
        if self._abs is not None and elements:
            self._abs.evaluate_outputs(state, elements=True)

    def begin_step(self, state: State, h: float) -> None:
        """The state a step starts from and its size, s, for the force providers (called by the steppers before a
        step's first evaluation). Every evaluation of the step hands them this state (contact history in its
        ``extra``, the driver's memory: a driver decides once per step from it, as in the absolute steppers) and
        ``h`` (the contact's tangential spring acts on its history plus ``h`` times the slip velocity of the
        evaluation, the look-ahead of the absolute steppers). Without providers it does nothing."""
        if self.stateful_forces:
            self._step_state, self._step_h = state, float(h)

    def commit(self, state: State) -> None:
        """Let the force providers write their staged history (contact, driver memory) into an accepted state; the
        last evaluation must be the one at that state (the steppers' end-of-step evaluation)."""
        if self._abs is not None:
            self._abs.commit(state)

    def _provider_start(self, q, qd) -> dict:
        """The providers' initial ``extra`` (contact history, driver memory), with a start state set for the first
        evaluation (:meth:`begin_step` with h = 0)."""
        if not self.stateful_forces:
            return {}
        extra = {}
        for prov in self.providers:
            extra.update(prov.initial_extra())
        qa, va, _ = self.to_absolute(q, qd)
        self.begin_step(State(0.0, qa, va, np.zeros(self.nc), np.zeros_like(va), dict(extra)), 0.0)
        return extra

    def project_velocities(self, state: State) -> State:
        """``state`` itself: the initial state's joint rates are fitted to the model's velocities and projected
        on ``Φ_q q̇ = 0`` already (:meth:`initial_state`), so a rolling start needs no further projection."""
        return state

    def kinetic_energy(self, q, qd) -> float:
        return float(0.5 * qd @ self.mass_times(q, qd))

    def potential_energy(self, q) -> float:
        """Gravitational potential energy (force elements not included)."""
        self.kinematics(q, self._zero_n)
        return float(-np.sum(self.node_mass * (self.pos @ self.gravity)))
