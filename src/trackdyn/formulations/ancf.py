"""ANCF cable elements (wallin-shabana-2013 §8): a mesh of 3-D cable elements, its constant mass matrix,
gravity and elastic forces with their Jacobian, static equilibrium and linear modes.

A mesh is nodes with 6 coordinates each (position ``r`` and gradient
``r_x``, world frame) and elements between pairs of nodes: two elements that
share a node are joined by the paper's ANCF pin (``r^i = r^j``,
``r_x^i = r_x^j``), linear connectivity applied once, when the mesh is
numbered, so a closed track loop is a ring of elements whose last shares its
end node with the first's start (:meth:`CableMesh.closed_loop`). The mass
matrix is constant (eq. 17-18, no centrifugal or Coriolis terms), gravity a
constant force (eq. 20), the elastic force and its Jacobian come from
:func:`._ancf_kernels.cable_elastic` (eq. 19).

In a Model (:class:`CableForces`): the nodes become point bodies of the
absolute-coordinate system (one carries ``r``, one ``r_x`` as its
position), with HRZ-lumped constant masses (:func:`lumped_masses`), eq. 20's
gravity, and the elastic forces with their exact Jacobian in the Newton
matrix, so the generic integrators step a cable (joints to bodies act on the
node bodies: a :class:`~trackdyn.mbs.joints.Spherical` pins ``r``). The
bodies' rotations are idle coordinates: the price of not yet having a block
of *vector* coordinates after the bodies' in :mod:`.absolute` (``q = [bodies
; nodes]``, advanced additively, with eq. 18's consistent mass block), which
remains the planned form.

The vehicle: :mod:`trackdyn.assembly.ancf_track` builds the APC on pinned
cable loops (:meth:`CableMesh.pinned_loop`) with their contact
(:mod:`trackdyn.contact.cable`), registered as the ``ancf`` fidelity
(:mod:`trackdyn.assembly.fidelities`; docs/joints/ancf.md). Under the
linearised Euler step the elastic force is linearised about the step's
predicted end (:class:`CableForces`, ``predictor``), so a turning element
does not stretch by the step's tangent motion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .._compiled import bound_call
from . import _ancf_kernels as AK

__all__ = ["CableMaterial", "CableMesh", "CableForces", "STEEL", "GAUSS_POINTS", "element_mass", "gauss_legendre",
           "lumped_masses"]

#: Gauss-Legendre points per element for the elastic forces: 5, exact for the axial term's degree-8
#: polynomial integrand (ε ∂ε/∂e of the cubic field) and for the curvature term of a straight element
GAUSS_POINTS = 5


@dataclass(frozen=True)
class CableMaterial:
    """Elastic and inertial properties: E (Pa), G (Pa; a cable has no torsion, kept for the record), ρ (kg/m³)."""

    E: float
    G: float
    rho: float


#: wallin-shabana-2013 §9: the steel of its ANCF track (E 200 GPa, G 76.9 GPa, ρ 7800 kg/m³)
STEEL = CableMaterial(E=200e9, G=76.9e9, rho=7800.0)


def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n-point Gauss-Legendre points on [0, 1] and weights summing to 1."""
    x, w = np.polynomial.legendre.leggauss(int(n))
    return 0.5 * (x + 1.0), 0.5 * w


def element_mass(l: float, rho_a: float) -> np.ndarray:
    """Constant mass matrix (12, 12) of a cable element of length l and mass per length ρA (eq. 17-18):
    ``ρA l ∫ Sᵀ S dξ``, the cubic Hermite coefficients times the 3x3 identity."""
    c = np.array([[13 / 35, 11 * l / 210, 9 / 70, -13 * l / 420],
                  [11 * l / 210, l**2 / 105, 13 * l / 420, -l**2 / 140],
                  [9 / 70, 13 * l / 420, 13 / 35, -11 * l / 210],
                  [-13 * l / 420, -l**2 / 140, -11 * l / 210, l**2 / 105]])
    return rho_a * l * np.kron(c, np.eye(3))


class CableMesh:
    """Nodes and cable elements (module docstring).

    Parameters
    ----------
    nodes : (n_node, 6) array
        Initial ``(r, r_x)`` of every node, world frame, m and 1.
    conn : (n_el, 2) int array
        The start and end node of each element.
    area, inertia : float
        Cross-section area (m²) and second moment of area for bending (m⁴).
    material : CableMaterial
    length : (n_el,) array, optional
        Stress-free element lengths (m); default the straight distance between the element's nodes.
    gauss : int
        Gauss points per element (:data:`GAUSS_POINTS`).
    """

    def __init__(self, nodes, conn, area: float, inertia: float, material: CableMaterial = STEEL, length=None,
                 gauss: int = GAUSS_POINTS, position=None, joints=None):
        self.q0 = np.ascontiguousarray(np.asarray(nodes, dtype=float).reshape(-1, 6))
        self.conn = np.ascontiguousarray(np.asarray(conn, dtype=np.int64).reshape(-1, 2))
        self.n_node, self.n_el = self.q0.shape[0], self.conn.shape[0]
        if self.conn.min() < 0 or self.conn.max() >= self.n_node:
            raise ValueError(f"CableMesh: conn refers to nodes outside 0..{self.n_node - 1}")
        # pins: nodes that share a position index share r (r^i = r^j), their gradients stay their own
        pos = np.arange(self.n_node) if position is None else np.asarray(position, dtype=np.int64).reshape(-1)
        if pos.shape != (self.n_node,) or set(pos.tolist()) != set(range(int(pos.max()) + 1)):
            raise ValueError(f"CableMesh: position must give every one of the {self.n_node} nodes an index, "
                             "the indices 0..n_pos-1 each used")
        self.position = np.ascontiguousarray(pos)
        self.n_pos = int(pos.max()) + 1
        for a in range(self.n_pos):
            same = self.q0[pos == a, :3]
            if np.ptp(same, axis=0).max() > 1e-12 * max(1.0, np.abs(same).max()):
                raise ValueError(f"CableMesh: the nodes at position {a} must start at one point (a pin)")
        self.joints = (np.zeros((0, 2), dtype=np.int64) if joints is None
                       else np.ascontiguousarray(np.asarray(joints, dtype=np.int64).reshape(-1, 2)))
        if not (area > 0 and inertia > 0):
            raise ValueError(f"CableMesh: area = {area!r} and inertia = {inertia!r} must be > 0")
        self.material = material
        self.area, self.inertia = float(area), float(inertia)
        self.EA, self.EI = material.E * area, material.E * inertia
        self.rho_a = material.rho * area
        if length is None:
            length = np.linalg.norm(self.q0[self.conn[:, 1], :3] - self.q0[self.conn[:, 0], :3], axis=1)
        self.length = np.ascontiguousarray(np.asarray(length, dtype=float).reshape(self.n_el))
        if np.any(self.length <= 0):
            raise ValueError("CableMesh: every element needs a positive length")
        self.gauss = int(gauss)
        self.gauss_x, self.gauss_w = gauss_legendre(self.gauss)
        self.n_dof = 6 * self.n_node
        # element dof map (n_el, 12) into the mesh's coordinates
        self.dof = np.array([np.r_[6 * a + np.arange(6), 6 * b + np.arange(6)] for a, b in self.conn],
                            dtype=np.int64).reshape(self.n_el, 12)
        self._Qe = np.zeros((self.n_el, 12))
        self._Ke = np.zeros((self.n_el, 12, 12))
        self._U = np.zeros(self.n_el)
        rows = np.repeat(self.dof, 12, axis=1).ravel()
        cols = np.tile(self.dof, (1, 12)).ravel()
        self._rows, self._cols = rows, cols
        self.M = self._assemble(np.array([element_mass(l, self.rho_a) for l in self.length]))
        # the pins' linear connectivity, applied once (the paper's preprocessing elimination): mesh dof i is
        # reduced dof rep[i], q = T q_red; without pins T is the identity
        rep = np.empty(self.n_dof, dtype=np.int64)
        first_pos: dict = {}
        n_red = 0
        for n in range(self.n_node):
            a = int(pos[n])
            if a not in first_pos:
                first_pos[a] = n_red
                n_red += 3
            rep[6 * n:6 * n + 3] = first_pos[a] + np.arange(3)
            rep[6 * n + 3:6 * n + 6] = n_red + np.arange(3)
            n_red += 3
        self.rep, self.n_red = rep, n_red
        self.T = sp.csr_matrix((np.ones(self.n_dof), (np.arange(self.n_dof), rep)), shape=(self.n_dof, n_red))
        self._first = np.zeros(n_red, dtype=np.int64)
        self._first[rep[::-1]] = np.arange(self.n_dof)[::-1]

    @property
    def closed(self) -> bool:
        """Whether the last element ends where the first starts (a closed loop)."""
        return bool(self.position[self.conn[-1, 1]] == self.position[self.conn[0, 0]])

    # ------------------------------------------------------------------ constructors
    @classmethod
    def straight(cls, start, end, n_el: int, area: float, inertia: float, material: CableMaterial = STEEL,
                 gauss: int = GAUSS_POINTS) -> "CableMesh":
        """A straight cable of ``n_el`` equal elements from ``start`` to ``end``, stress-free."""
        start, end = np.asarray(start, float), np.asarray(end, float)
        t = (end - start) / np.linalg.norm(end - start)
        s = np.linspace(0.0, 1.0, n_el + 1)
        nodes = np.hstack([start + s[:, None] * (end - start), np.tile(t, (n_el + 1, 1))])
        conn = np.c_[np.arange(n_el), np.arange(1, n_el + 1)]
        return cls(nodes, conn, area, inertia, material, gauss=gauss)

    @classmethod
    def closed_loop(cls, points, area: float, inertia: float, material: CableMaterial = STEEL,
                    gauss: int = GAUSS_POINTS) -> "CableMesh":
        """A closed loop through ``points`` (n, 3) in order (a track's pins): node k at point k with the unit
        gradient along the chord from point k-1 to k+1, element k from node k to node k+1 (the last one ends
        at node 0), stress-free lengths the chords."""
        P = np.asarray(points, float)
        n = len(P)
        t = np.roll(P, -1, axis=0) - np.roll(P, 1, axis=0)
        t /= np.linalg.norm(t, axis=1, keepdims=True)
        conn = np.c_[np.arange(n), (np.arange(n) + 1) % n]
        length = np.linalg.norm(np.roll(P, -1, axis=0) - P, axis=1)
        return cls(np.hstack([P, t]), conn, area, inertia, material, length=length, gauss=gauss)

    @classmethod
    def pinned_loop(cls, points, area: float, inertia: float, material: CableMaterial = STEEL,
                    gauss: int = GAUSS_POINTS, strain: float = 0.0) -> "CableMesh":
        """A closed chain of straight elements pinned at ``points`` (n, 3), in order: element k from pin k to
        pin k+1 (the last back to pin 0), its own gradients at both ends along its chord, ``(1 + strain)``
        long, its stress-free length the chord / (1 + strain). Neighbouring elements share the pin's
        position only (``r^i = r^j``, the paper's §8 ANCF pin; a cable element carries no transverse
        gradient, so the pin is free to turn, as a link's pin does), so each element is a flexible link.
        Mesh node 2k is element k's start, 2k+1 its end; ``joints`` pairs each element's end with the next
        element's start (the pins' springs of :class:`CableForces`)."""
        P = np.asarray(points, float)
        n = len(P)
        nxt = np.roll(P, -1, axis=0)
        chord = nxt - P
        length = np.linalg.norm(chord, axis=1)
        t = (1.0 + strain) * chord / length[:, None]
        nodes = np.empty((2 * n, 6))
        nodes[0::2, :3], nodes[1::2, :3] = P, nxt
        nodes[0::2, 3:], nodes[1::2, 3:] = t, t
        conn = np.c_[2 * np.arange(n), 2 * np.arange(n) + 1]
        position = np.empty(2 * n, dtype=np.int64)
        position[0::2], position[1::2] = np.arange(n), (np.arange(n) + 1) % n
        joints = np.c_[2 * np.arange(n) + 1, (2 * np.arange(n) + 2) % (2 * n)]
        return cls(nodes, conn, area, inertia, material, length=length / (1.0 + strain), gauss=gauss,
                   position=position, joints=joints)

    # ------------------------------------------------------------------ forces
    def _assemble(self, blocks) -> sp.csr_matrix:
        return sp.csr_matrix((np.asarray(blocks).ravel(), (self._rows, self._cols)),
                             shape=(self.n_dof, self.n_dof))

    def gravity_force(self, gravity=(0.0, 0.0, -9.81)) -> np.ndarray:
        """Generalised gravity force (n_dof,): ``ρA l g [1/2, l/12, 1/2, -l/12]`` per element (eq. 20)."""
        g = np.asarray(gravity, float)
        Q = np.zeros(self.n_dof)
        for k, l in enumerate(self.length):
            w = self.rho_a * l * np.array([0.5, l / 12.0, 0.5, -l / 12.0])
            np.add.at(Q, self.dof[k], np.kron(w, g))
        return Q

    def elastic(self, q) -> tuple[np.ndarray, sp.csr_matrix]:
        """Elastic force ``Q = -∂U/∂q`` (n_dof,) and its Jacobian ``∂Q/∂q`` (sparse, symmetric)."""
        qq = np.ascontiguousarray(np.asarray(q, float).reshape(self.n_node, 6))
        AK.cable_elastic(self.conn, qq, self.length, self.EA, self.EI, self.gauss_x, self.gauss_w, self._Qe,
                         self._Ke, self._U)
        Q = np.zeros(self.n_dof)
        np.add.at(Q, self.dof.ravel(), self._Qe.ravel())
        return Q, self._assemble(self._Ke)

    def elastic_energy(self, q) -> float:
        self.elastic(q)
        return float(self._U.sum())

    # ------------------------------------------------------------------ solvers
    def static(self, fixed, gravity=(0.0, 0.0, -9.81), q=None, tol=1e-10, max_iter=50) -> np.ndarray:
        """Static equilibrium ``Q_s(q) + Q_g = 0`` with the coordinates ``fixed`` (indices into the flat
        n_dof vector) held at their values; Newton from ``q`` (default the initial nodes) until the residual is
        below ``tol`` times the largest gravity force or the increment at round-off. Returns (n_node, 6).
        """
        x = (self.q0 if q is None else np.asarray(q, float)).ravel()[self._first].copy()
        free = self._free(fixed)
        T = self.T
        Qg = T.T @ self.gravity_force(gravity)
        scale = max(1.0, np.abs(Qg).max())
        for _ in range(max_iter):
            Q, K = self.elastic(x[self.rep])
            r = (T.T @ Q + Qg)[free]
            if np.abs(r).max() < tol * scale:
                return x[self.rep].reshape(self.n_node, 6)
            Kf = (T.T @ K @ T)[free][:, free]
            dx = spla.spsolve(Kf.tocsc(), r)
            x[free] -= dx
            if np.abs(dx).max() < 1e-13 * max(1.0, np.abs(x).max()):  # at the residual's round-off floor (EA ε_mach)
                return x[self.rep].reshape(self.n_node, 6)
        raise RuntimeError(f"CableMesh.static: no equilibrium within {max_iter} Newton iterations")

    def _free(self, fixed) -> np.ndarray:
        """The reduced coordinates not held: ``fixed`` are indices into the flat n_dof vector (a pin's
        position held through any of its nodes)."""
        return np.setdiff1d(np.arange(self.n_red), self.rep[np.asarray(fixed, dtype=np.int64)])

    def newmark(self, fixed, h: float, n_steps: int, load=None, gravity=(0.0, 0.0, 0.0), q=None, v=None,
                tol=1e-10, max_iter=20):
        """Trapezoidal-rule (Newmark β = 1/4, γ = 1/2: no numerical damping) time history of the free
        coordinates, Newton at every step on ``M a = Q_s(q) + Q_g + load(t)`` (``load(t) -> (n_dof,)`` or
        None). Returns ``(t (n_steps + 1,), q (n_steps + 1, n_node, 6))``."""
        x = (self.q0 if q is None else np.asarray(q, float)).ravel()[self._first].copy()
        u = np.zeros(self.n_red) if v is None else np.asarray(v, float).ravel()[self._first].copy()
        free = self._free(fixed)
        u[np.setdiff1d(np.arange(self.n_red), free)] = 0.0
        T = self.T
        Qg = self.gravity_force(gravity)
        Mf = (T.T @ self.M @ T)[free][:, free].tocsc()

        def rhs(t, xx):
            Q, K = self.elastic(xx[self.rep])
            f = T.T @ (Q + Qg + (load(t) if load is not None else 0.0))
            return f[free], (T.T @ K @ T)[free][:, free]

        f0, _ = rhs(0.0, x)
        a = spla.spsolve(Mf, f0)
        out = np.empty((n_steps + 1, self.n_node, 6))
        out[0] = x[self.rep].reshape(self.n_node, 6)
        for n in range(n_steps):
            t1 = (n + 1) * h
            xf0, uf0 = x[free].copy(), u[free].copy()
            a1 = a.copy()
            for _ in range(max_iter):
                x[free] = xf0 + h * uf0 + 0.25 * h * h * (a + a1)
                f1, K1 = rhs(t1, x)
                r = Mf @ a1 - f1
                da = spla.spsolve((Mf - 0.25 * h * h * K1).tocsc(), -r)
                a1 += da
                if np.abs(da).max() <= tol * max(1.0, np.abs(a1).max()):
                    break
            x[free] = xf0 + h * uf0 + 0.25 * h * h * (a + a1)
            u[free] = uf0 + 0.5 * h * (a + a1)
            a = a1
            out[n + 1] = x[self.rep].reshape(self.n_node, 6)
        return h * np.arange(n_steps + 1), out

    def modes(self, fixed, q=None, n: int = 6) -> np.ndarray:
        """The lowest ``n`` natural frequencies (Hz) about the configuration ``q`` (default the initial one)
        with the coordinates ``fixed`` held: ``(-∂Q/∂q) φ = ω² M φ``."""
        x = (self.q0 if q is None else np.asarray(q, float)).ravel()
        free = self._free(fixed)
        _, K = self.elastic(x)
        import scipy.linalg as sla

        T = self.T
        Kf = -(T.T @ K @ T).toarray()[np.ix_(free, free)]
        Mf = (T.T @ self.M @ T).toarray()[np.ix_(free, free)]
        w2 = sla.eigh(Kf, Mf, eigvals_only=True)
        return np.sqrt(np.clip(np.sort(w2)[:n], 0.0, None)) / (2.0 * np.pi)


# ---------------------------------------------------------------------------------------------- in a Model
def lumped_masses(mesh: CableMesh) -> tuple[np.ndarray, np.ndarray]:
    """HRZ-lumped masses (Hinton, Rock & Zienkiewicz 1976) of the nodes' positions and gradients.

    The consistent matrix's diagonal (eq. 18: 13/35 ρAl on r, l²/105 ρAl on r_x per element end), scaled so
    that the positions carry the element's mass: ρAl/2 on each end's r and ρAl³/78 (kg m²) on each end's
    r_x. Returns ``(m_r, m_rx)``, (n_node,) each, summed over the elements that share a node.
    """
    m_r = np.zeros(mesh.n_node)
    m_rx = np.zeros(mesh.n_node)
    for (a, b), l in zip(mesh.conn, mesh.length):
        m = mesh.rho_a * l
        for n in (a, b):
            m_r[n] += 0.5 * m
            m_rx[n] += m * l * l / 78.0
    return m_r, m_rx


class CableForces:
    """A :class:`CableMesh` stepped by the absolute-coordinate system: its nodes as point bodies of a Model,
    its elastic forces and their exact Jacobian in the Newton matrix (a force provider).

    Each node is two bodies of the model (:meth:`add_to`): ``NAME.node[k]``, whose position is the node's
    ``r``, and ``NAME.grad[k]``, whose position holds the gradient ``r_x`` (dimensionless). The absolute
    system advances a body's position additively and its velocity is the position's rate, so the pair
    carries the node's six ANCF coordinates through every generic integrator unchanged; the bodies'
    rotations are free and untouched by any force (three idle coordinates per body: the cost of not having
    a vector-coordinate block in :mod:`.absolute` yet). The mass matrix is constant and lumped
    (:func:`lumped_masses`) rather than eq. 18's consistent one, because the system's mass blocks are per
    body. Gravity: the system puts ``m g`` on every body; this provider takes it off the gradient bodies and
    puts on them the consistent load's gradient terms ``±ρA l² g / 12`` (eq. 20), so the generalised gravity
    force is eq. 20's exactly. Elastic forces: :func:`._ancf_kernels.cable_elastic` (eq. 19, the mesh's Gauss
    points), scattered with their symmetric Jacobian into the coupling blocks between the element's four
    bodies (declared in :meth:`coupling_pairs`).

    Recorded: ``NAME.element[k].tension`` (N), the axial force ``EA ε`` at the element's middle.
    """

    def __init__(self, mesh: CableMesh, name: str = "cable", pin_stiffness: float = 0.0, pin_damping: float = 0.0,
                 lateral=(None, (0.0, 1.0, 0.0)), pin_free_angle=0.0, axial_damping: float = 0.0,
                 predictor: bool = True):
        self.mesh = mesh
        self.predictor = bool(predictor)
        self.axial_c = float(axial_damping)
        if not self.axial_c >= 0:
            raise ValueError(f"CableForces: axial_damping = {axial_damping!r}: expected a number >= 0")
        ne = mesh.n_el if self.axial_c > 0 else 0
        self._dF, self._dK = np.zeros((ne, 6)), np.zeros((ne, 6, 6))
        self._dD, self._dKv = np.zeros((ne, 6, 6)), np.zeros((ne, 6))
        self._free_angle = np.asarray(pin_free_angle, float)
        self.name = name
        self.node_names = [f"{name}.node[{k}]" for k in range(mesh.n_pos)]
        self.grad_names = [f"{name}.grad[{k}]" for k in range(mesh.n_node)]
        self.m_r, self.m_rx = lumped_masses(mesh)
        self.pin_k, self.pin_c = float(pin_stiffness), float(pin_damping)
        if not (self.pin_k >= 0 and self.pin_c >= 0):
            raise ValueError(f"CableForces: pin_stiffness = {pin_stiffness!r}, pin_damping = {pin_damping!r}: "
                             "expected numbers >= 0")
        self._lateral = lateral
        self._model = None
        self.q = np.zeros((mesh.n_node, 6))
        self.qd = np.zeros((mesh.n_node, 6))
        self._qp = np.zeros((mesh.n_node, 6))
        self._Q0, self._K0 = np.zeros((mesh.n_el, 12)), np.zeros((mesh.n_el, 12, 12))  # θ-method: f at the start
        self.tension = np.zeros(mesh.n_el)
        self._no_data = np.zeros(0)
        _, self._sx_mid, _ = (np.asarray(a) for a in AK.hermite(0.5, 1.0))
        nj = len(mesh.joints) if self.pin_k > 0 or self.pin_c > 0 else 0
        self._jF, self._jK = np.zeros((nj, 6)), np.zeros((nj, 6, 6))
        self._jD, self._jKv = np.zeros((nj, 6, 6)), np.zeros((nj, 6))
        self.pin_angle = np.zeros(nj)

    def add_to(self, model, velocity=(0.0, 0.0, 0.0), node_velocity=None, grad_velocity=None) -> "CableForces":
        """Add the node and gradient bodies to ``model`` at the mesh's initial coordinates (all moving at
        ``velocity``, m/s, gradients at rest; or each node at ``node_velocity`` (n_pos, 3) and each gradient
        changing at ``grad_velocity`` (n_node, 3), 1/s); returns self. A pin's node body carries the lumped
        masses of every element end it joins."""
        q0, pos = self.mesh.q0, self.mesh.position
        # the idle rotations get the inertia of a ring of the body's mass at a tenth of the element length
        lk = float(np.mean(self.mesh.length))
        m_pos = np.bincount(pos, weights=self.m_r, minlength=self.mesh.n_pos)
        first = {int(a): n for n, a in reversed(list(enumerate(pos)))}
        nv = np.tile(np.asarray(velocity, float), (self.mesh.n_pos, 1)) if node_velocity is None else \
            np.asarray(node_velocity, float).reshape(self.mesh.n_pos, 3)
        gv = np.zeros((self.mesh.n_node, 3)) if grad_velocity is None else \
            np.asarray(grad_velocity, float).reshape(self.mesh.n_node, 3)
        for a in range(self.mesh.n_pos):
            model.add_body(self.node_names[a], mass=m_pos[a], inertia=np.full(3, m_pos[a] * (0.1 * lk) ** 2),
                           pos=q0[first[a], :3], vel=nv[a])
        for k in range(self.mesh.n_node):
            model.add_body(self.grad_names[k], mass=self.m_rx[k], inertia=np.full(3, self.m_rx[k]),
                           pos=q0[k, 3:], vel=gv[k])
        self._model = model
        # the pins' springs act about the lateral axis (in the frame of body ``lateral[0]``)
        body, axis = self._lateral
        self._axis_b = np.asarray(axis, float) / np.linalg.norm(axis)
        self._lat_body = body
        self.pin_angle0 = np.broadcast_to(self._free_angle, self.pin_angle.shape).copy()
        return self

    # -- provider protocol
    def _element_bodies(self, index) -> np.ndarray:
        nb = np.array([index[self.node_names[a]] for a in self.mesh.position], dtype=np.int64)
        gb = np.array([index[n] for n in self.grad_names], dtype=np.int64)
        a, b = self.mesh.conn[:, 0], self.mesh.conn[:, 1]
        return nb, gb, np.ascontiguousarray(np.stack([nb[a], gb[a], nb[b], gb[b]], axis=1))

    def coupling_pairs(self):
        if self._model is None:
            raise RuntimeError("CableForces: add_to(model) first")
        index = {n: k for k, n in enumerate(self._model.body_names)}
        _, gb, eb = self._element_bodies(index)
        pairs = {(int(min(x, y)), int(max(x, y))) for row in eb for x in row for y in row if x != y}  # incl. dashpots
        if len(self.pin_angle):
            pairs |= {(int(min(gb[i], gb[j])), int(max(gb[i], gb[j]))) for i, j in self.mesh.joints}
        return sorted(pairs)

    def bind(self, system) -> None:
        index = {n: k for k, n in enumerate(system.body_names)}
        self.node_body, self.grad_body, self.elem_body = self._element_bodies(index)
        n_el = self.mesh.n_el
        self.slot = np.full((n_el, 12, 12), -1, dtype=np.int64)
        iu, ju = np.triu_indices(12)
        for k in range(n_el):
            gl = 6 * self.elem_body[k][np.arange(12) // 3] + np.arange(12) % 3
            self.slot[k, iu, ju] = system.pattern.slots(gl[iu], gl[ju])
        nj = len(self.pin_angle)
        self.pair_body = np.ascontiguousarray(self.grad_body[self.mesh.joints]) if nj else np.zeros((0, 2), np.int64)
        self.pair_slot = np.full((nj, 6, 6), -1, dtype=np.int64)
        iu, ju = np.triu_indices(6)
        for p in range(nj):
            gl = 6 * self.pair_body[p][np.arange(6) // 3] + np.arange(6) % 3
            self.pair_slot[p, iu, ju] = system.pattern.slots(gl[iu], gl[ju])
        self.lat_index = -1 if self._lat_body is None else index[self._lat_body]
        self._joints = np.ascontiguousarray(self.mesh.joints, dtype=np.int64).reshape(-1, 2) if nj else \
            np.zeros((0, 2), np.int64)
        self._bound_key = self._bound = None
        self._kxv_scratch = np.zeros((len(system.body_names), 6))  # a system without Kxv (its terms dropped)
        ne = len(self._dF)
        self.dash_body = np.ascontiguousarray(self.node_body[self.mesh.conn]) if ne else np.zeros((0, 2), np.int64)
        self.dash_slot = np.full((ne, 6, 6), -1, dtype=np.int64)
        for p in range(ne):
            gl = 6 * self.dash_body[p][np.arange(6) // 3] + np.arange(6) % 3
            self.dash_slot[p, iu, ju] = system.pattern.slots(gl[iu], gl[ju])
        # gravity: off the gradient bodies (lumped m g), the consistent ±ρA l² g/12 on them (eq. 20)
        g = np.asarray(system.gravity, float)
        self.grad_gravity = np.outer(-self.m_rx, g)
        for (a, b), l in zip(self.mesh.conn, self.mesh.length):
            w = self.mesh.rho_a * l * l / 12.0
            self.grad_gravity[a] += w * g
            self.grad_gravity[b] -= w * g

    def initial_extra(self) -> dict:
        return {}

    def _step_call(self, ctx, predict):
        """The fused step kernel (:func:`._ancf_kernels.cable_forces_step`) bound to this evaluation's arrays
        and scalars; bound again only when one of them changes (the system's step buffers are the same
        arrays from step to step)."""
        kxv = ctx.Kxv if ctx.Kxv is not None else self._kxv_scratch
        kin = ctx.kin
        key = (id(kin.pos), id(kin.vel), id(kin.R), id(ctx.f), id(ctx.data), id(ctx.Dv), id(kxv),
               float(ctx.cK), float(ctx.cD), float(ctx.h), float(ctx.hist_weight), predict)
        if self._bound_key != key:
            m = self.mesh
            self._bound = bound_call(
                AK.cable_forces_step, self.node_body, self.grad_body, kin.pos, kin.vel, kin.R, m.conn, m.length,
                float(m.EA), float(m.EI), m.gauss_x, m.gauss_w, m._Qe, m._Ke, m._U, self.q, self.qd, self._qp,
                float(ctx.h), predict, float(ctx.hist_weight), self._Q0, self._K0, self.elem_body, self.slot,
                float(ctx.cK), float(ctx.cD), ctx.f, ctx.data, ctx.Dv, kxv, self.grad_gravity, self.dash_body,
                self.axial_c, self._dF, self._dK, self._dD, self._dKv, self.dash_slot, self._joints,
                int(self.lat_index), self._axis_b, self.pin_angle0, self.pin_k, self.pin_c, self._jF, self._jK,
                self._jD, self._jKv, self.pin_angle, self.pair_body, self.pair_slot)
            self._bound_key = key
        return self._bound

    def accumulate(self, ctx) -> None:
        m = self.mesh
        if ctx.data is not None:  # a step: one compiled call
            predict = self.predictor and ctx.linearized_step and ctx.h > 0
            self._step_call(ctx, bool(predict))()
            return
        AK.cable_gather(self.node_body, self.grad_body, ctx.kin.pos, self.q)
        if len(self.pin_angle) or len(self._dF):
            AK.cable_gather(self.node_body, self.grad_body, ctx.kin.vel, self.qd)
        AK.cable_elastic(m.conn, self.q, m.length, m.EA, m.EI, m.gauss_x, m.gauss_w, m._Qe, m._Ke, m._U)
        data = ctx.data if ctx.data is not None else self._no_data
        AK.cable_scatter(self.elem_body, m._Qe, m._Ke, self.slot, float(ctx.cK), ctx.f, data)
        ctx.f[self.grad_body, :3] += self.grad_gravity
        kxv = ctx.Kxv if ctx.Kxv is not None else self._kxv_scratch
        if len(self._dF):
            AK.element_dashpot(m.conn, self.q, self.qd, self.axial_c, self._dF, self._dD, self._dKv)
            AK.pair_scatter(self.dash_body, self._dF, self._dK, self._dD, self._dKv, ctx.kin.vel, self.dash_slot,
                            float(ctx.cK), float(ctx.cD), ctx.f, data, ctx.Dv, kxv)
        if len(self.pin_angle):
            axis = self._axis_b if self.lat_index < 0 else ctx.kin.R[self.lat_index] @ self._axis_b
            AK.joint_bending(m.joints, self.q, self.qd, axis, self.pin_angle0, self.pin_k, self.pin_c, self._jF,
                             self._jK, self._jD, self._jKv, self.pin_angle)
            AK.pair_scatter(self.pair_body, self._jF, self._jK, self._jD, self._jKv, ctx.kin.vel, self.pair_slot,
                            float(ctx.cK), float(ctx.cD), ctx.f, data, ctx.Dv, kxv)
        if ctx.data is None:  # outputs: the axial force at the elements' middles
            e = self.q[m.conn]  # (n_el, 2, 6)
            rx = (self._sx_mid[0] / m.length[:, None] * e[:, 0, :3] + self._sx_mid[1] * e[:, 0, 3:]
                  + self._sx_mid[2] / m.length[:, None] * e[:, 1, :3] + self._sx_mid[3] * e[:, 1, 3:])
            self.tension[:] = m.EA * 0.5 * (np.einsum("ij,ij->i", rx, rx) - 1.0)

    def commit(self, state) -> None:
        pass

    def series(self) -> dict:
        return {f"{self.name}.element[{k}].tension": (self.tension, k) for k in range(self.mesh.n_el)}
