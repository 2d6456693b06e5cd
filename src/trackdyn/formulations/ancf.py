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

Why this is not yet a vehicle fidelity: the absolute-coordinate system
(:mod:`.absolute`) has per body 7 position coordinates (position and unit
quaternion) and 6 velocity coordinates advanced on the rotation manifold; an
ANCF node is 6 plain vector coordinates, with position and velocity of the
same size and positions advanced by addition. The planned extension keeps
both in one Newton matrix: a block of *vector* coordinates after the bodies'
(``q = [bodies ; nodes]``), advanced additively, with its constant mass
block, and force providers that see the nodes (contact on points of the
cable mapped by ``S(x)``; joints between a node and a body, e.g. the
sprocket's drive, as rows whose Jacobian has node columns). Until that
exists the cable runs only through this module's own solvers (statics and
modes), and the ``ancf`` fidelity is not registered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from . import _ancf_kernels as AK

__all__ = ["CableMaterial", "CableMesh", "STEEL", "GAUSS_POINTS", "element_mass", "gauss_legendre"]

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
                 gauss: int = GAUSS_POINTS):
        self.q0 = np.ascontiguousarray(np.asarray(nodes, dtype=float).reshape(-1, 6))
        self.conn = np.ascontiguousarray(np.asarray(conn, dtype=np.int64).reshape(-1, 2))
        self.n_node, self.n_el = self.q0.shape[0], self.conn.shape[0]
        if self.conn.min() < 0 or self.conn.max() >= self.n_node:
            raise ValueError(f"CableMesh: conn refers to nodes outside 0..{self.n_node - 1}")
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
        x = (self.q0 if q is None else np.asarray(q, float)).ravel().copy()
        free = np.setdiff1d(np.arange(self.n_dof), np.asarray(fixed, dtype=np.int64))
        Qg = self.gravity_force(gravity)
        scale = max(1.0, np.abs(Qg).max())
        for _ in range(max_iter):
            Q, K = self.elastic(x)
            r = (Q + Qg)[free]
            if np.abs(r).max() < tol * scale:
                return x.reshape(self.n_node, 6)
            Kf = K[free][:, free]
            dx = spla.spsolve(Kf.tocsc(), r)
            x[free] -= dx
            if np.abs(dx).max() < 1e-13 * max(1.0, np.abs(x).max()):  # at the residual's round-off floor (EA ε_mach)
                return x.reshape(self.n_node, 6)
        raise RuntimeError(f"CableMesh.static: no equilibrium within {max_iter} Newton iterations")

    def newmark(self, fixed, h: float, n_steps: int, load=None, gravity=(0.0, 0.0, 0.0), q=None, v=None,
                tol=1e-10, max_iter=20):
        """Trapezoidal-rule (Newmark β = 1/4, γ = 1/2: no numerical damping) time history of the free
        coordinates, Newton at every step on ``M a = Q_s(q) + Q_g + load(t)`` (``load(t) -> (n_dof,)`` or
        None). Returns ``(t (n_steps + 1,), q (n_steps + 1, n_node, 6))``."""
        x = (self.q0 if q is None else np.asarray(q, float)).ravel().copy()
        u = np.zeros(self.n_dof) if v is None else np.asarray(v, float).ravel().copy()
        free = np.setdiff1d(np.arange(self.n_dof), np.asarray(fixed, dtype=np.int64))
        u[np.asarray(fixed, dtype=np.int64)] = 0.0
        Qg = self.gravity_force(gravity)
        Mf = self.M[free][:, free].tocsc()

        def rhs(t, xx):
            Q, K = self.elastic(xx)
            f = Q + Qg + (load(t) if load is not None else 0.0)
            return f[free], K[free][:, free]

        f0, _ = rhs(0.0, x)
        a = spla.spsolve(Mf, f0)
        out = np.empty((n_steps + 1, self.n_node, 6))
        out[0] = x.reshape(self.n_node, 6)
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
            out[n + 1] = x.reshape(self.n_node, 6)
        return h * np.arange(n_steps + 1), out

    def modes(self, fixed, q=None, n: int = 6) -> np.ndarray:
        """The lowest ``n`` natural frequencies (Hz) about the configuration ``q`` (default the initial one)
        with the coordinates ``fixed`` held: ``(-∂Q/∂q) φ = ω² M φ``."""
        x = (self.q0 if q is None else np.asarray(q, float)).ravel()
        free = np.setdiff1d(np.arange(self.n_dof), np.asarray(fixed, dtype=np.int64))
        _, K = self.elastic(x)
        import scipy.linalg as sla

        Kf = -K.toarray()[np.ix_(free, free)]
        Mf = self.M.toarray()[np.ix_(free, free)]
        w2 = sla.eigh(Kf, Mf, eigvals_only=True)
        return np.sqrt(np.clip(np.sort(w2)[:n], 0.0, None)) / (2.0 * np.pi)
