"""Contact of an ANCF cable track with wheels and flat ground, on points of the cable (issue #30).

:class:`CableContact` is a force provider beside :class:`~trackdyn.formulations.ancf.CableForces`: every
element's points at ``xi`` (default the pin, ξ = 0, and the pad's middle, ξ = 0.5) are mapped by the
shape functions (wallin-shabana-2013 eq. 16) and meet circles on wheel bodies and a flat ground with the
Kelvin-Voigt law and tanh friction of Table 2 (:mod:`._cable_kernels` states the geometry). The shoe's
inner face lies ``top`` from the pin line towards the wheels and its pad ``bottom`` on the other side.
The cable side's stiffness, damping and friction Jacobians enter the Newton matrix in the cable's own
coupling blocks; the wheels' side stays out of the matrix with its position terms in ``Kxv``.

Sprockets (:class:`CableSprocket`) act on the pin points (ξ = 0) through their tooth gaps.

Recorded: ``NAME.ground.force.{x,y,z}`` (the cable's load on the ground, world) and, per wheel or sprocket
body ``W``, ``NAME.W.force.{x,y,z}`` (the cable's load on it).
"""

from __future__ import annotations

import numpy as np

from . import _cable_kernels as CK

__all__ = ["CableContact", "CableSprocket", "CableWheel"]

#: contacts a point can have with wheels at once (a pin between two wheels, or a wheel's rim and the next)
MAX_WHEELS_PER_POINT = 2


def _hermite(xi: float, l: float) -> tuple[np.ndarray, np.ndarray]:
    """The cable element's shape functions s1..s4 at ξ and their x-derivatives (wallin-shabana-2013 eq. 16;
    the element's own kernels live in :mod:`trackdyn.formulations`, a layer above this one)."""
    s = np.array([1 - 3 * xi**2 + 2 * xi**3, l * (xi - 2 * xi**2 + xi**3), 3 * xi**2 - 2 * xi**3, l * (xi**3 - xi**2)])
    sx = np.array([6 * (xi**2 - xi) / l, 1 - 4 * xi + 3 * xi**2, 6 * (xi - xi**2) / l, 3 * xi**2 - 2 * xi])
    return s, sx


class CableWheel:
    """A circle on a body: its body's name, radius (m), axis in the body frame, half-width (m) and
    Kelvin-Voigt parameters ``(k N/m, c N s/m, μ, slip speed m/s)``."""

    def __init__(self, body: str, radius: float, law, axis=(0.0, 1.0, 0.0), half_width: float = 0.5):
        if not radius > 0 or not half_width > 0:
            raise ValueError(f"CableWheel {body!r}: radius and half_width must be > 0")
        self.body, self.radius, self.half_width = body, float(radius), float(half_width)
        a = np.asarray(axis, float)
        self.axis = a / np.linalg.norm(a)
        self.law = tuple(float(x) for x in law)


class CableSprocket:
    """A sprocket's tooth gaps on a body, acting on the cable's pin points (ξ = 0): the body's name, the
    :class:`~trackdyn.contact.shapes.Sprocket` profile (teeth, arc-centre radius, arc radius, phase; the
    gaps' axis the body's y), the half width (m) over which it acts, the pins' radius (m) and the
    Kelvin-Voigt law ``(k, c, μ, v_s)``; ``tip_radius``: the tooth tips' (addendum) circle, which holds a pin
    out between the gaps (0: no tips)."""

    def __init__(self, body: str, teeth: int, arc_centre_radius: float, arc_radius: float, pin_radius: float,
                 law, phase: float = 0.0, half_width: float = 0.5, tip_radius: float = 0.0):
        if not (int(teeth) >= 3 and arc_radius > pin_radius > 0 and arc_centre_radius > 0 and half_width > 0):
            raise ValueError(f"CableSprocket {body!r}: need teeth >= 3, arc_radius > pin_radius > 0, "
                             "arc_centre_radius > 0, half_width > 0")
        self.body = body
        if not tip_radius >= 0:
            raise ValueError(f"CableSprocket {body!r}: tip_radius must be >= 0 (0: no tooth tips)")
        self.par = np.array([int(teeth), arc_centre_radius, arc_radius, phase, half_width, pin_radius, tip_radius],
                            float)
        self.law = tuple(float(x) for x in law)


def _profile_arrays(xs, zs, law, edge_law, reach=0.05, min_turn_deg=10.0):
    """The kernel's arrays of a profile polyline (world x, z; x non-decreasing; the solid below): the
    vertices, the convex ones turning by more than ``min_turn_deg`` (an arc's 1° samples are not edges) with
    their outward normals (the mean of the two sides' left normals), the point law, the edge law and the
    largest penetration looked for (m)."""
    xs = np.ascontiguousarray(np.asarray(xs, float))
    zs = np.ascontiguousarray(np.asarray(zs, float))
    if xs.ndim != 1 or xs.shape != zs.shape or len(xs) < 2 or np.any(np.diff(xs) < 0):
        raise ValueError("CableContact: profile needs a polyline of >= 2 vertices with x non-decreasing")
    t = np.diff(np.c_[xs, zs], axis=0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    nrm = np.c_[-t[:, 1], t[:, 0]]  # left normals: up for a rightward side, the solid below
    cross = t[:-1, 0] * t[1:, 1] - t[:-1, 1] * t[1:, 0]
    convex = np.nonzero(cross < -np.sin(np.radians(min_turn_deg)))[0] + 1
    vn = nrm[convex - 1] + nrm[convex]
    vn /= np.linalg.norm(vn, axis=1, keepdims=True)
    return (xs, zs, np.ascontiguousarray(xs[convex]), np.ascontiguousarray(zs[convex]),
            np.ascontiguousarray(vn[:, 0]), np.ascontiguousarray(vn[:, 1]),
            np.array([float(v) for v in law]), np.array([float(v) for v in edge_law]), float(reach))


class CableContact:
    """Force provider: a cable's points against wheels and flat ground (module docstring).

    Parameters
    ----------
    cable : CableForces
        The cable, already added to its model.
    wheels : sequence of CableWheel
    ground : (z, (k, c, μ, v_s)) or None
        Flat ground at height z (m) and its law.
    top, bottom : float
        The shoe's inner face and pad from the pin line (m).
    lateral : (body name or None, axis in its frame)
        The track's lateral axis (the wheels' axis; None: the world's), orienting the inner normal.
    xi : sequence of float
        Points per element, in [0, 1).
    name : str
    """

    def __init__(self, cable, wheels=(), ground=None, top: float = 0.0, bottom: float = 0.0,
                 lateral=(None, (0.0, 1.0, 0.0)), xi=(0.0, 0.5), name: str = "cable-contact", sprockets=(),
                 profile=None):
        self.cable = cable
        self.name = name
        self.wheels = list(wheels)
        self.sprockets = list(sprockets)
        self.top, self.bottom = float(top), float(bottom)
        mesh = cable.mesh
        if np.ptp(mesh.length) > 1e-9 * mesh.length.max():
            raise ValueError("CableContact: the elements must share one length (the points' weights are per mesh)")
        l = float(mesh.length[0])
        self.pt_s = np.zeros((len(xi), 4))
        self.pt_sx = np.zeros((len(xi), 4))
        for p, x in enumerate(xi):
            if not 0.0 <= x < 1.0:
                raise ValueError(f"CableContact: xi = {x!r}: expected [0, 1)")
            self.pt_s[p], self.pt_sx[p] = _hermite(float(x), l)
        self.ground_z = 0.0 if ground is None else float(ground[0])
        self.ground_par = np.zeros(4) if ground is None else np.array([float(v) for v in ground[1]])
        self._lateral = lateral
        # the inner normal t x a points into a loop that turns clockwise about a (Σ P_k x P_k+1 · a < 0: the
        # track seen from its left, running rearward on top); an open cable's inner face is t x a
        a = np.asarray(lateral[1], float)
        P = mesh.q0[:, :3]
        closed = mesh.closed
        area = np.sum(np.cross(P, np.roll(P, -1, axis=0)) @ a) if closed else -1.0
        self.sign = 1.0 if area <= 0 else -1.0
        n_el, n_pt = mesh.n_el, len(xi)
        self.Kpp = np.zeros((n_el, n_pt, 2, 3, 3))
        self.n_active = np.zeros((n_el, n_pt), dtype=np.int64)
        self.point_force = np.zeros((n_el, n_pt, 3))
        self.pt_P = np.zeros((n_el, n_pt, 3))
        self.wheel_hits = np.full((n_el, n_pt, MAX_WHEELS_PER_POINT), -1, dtype=np.int64)
        self.Kw = np.zeros((n_el, n_pt, MAX_WHEELS_PER_POINT, 3, 3))
        self.wheel_force = np.zeros((len(self.wheels), 3))
        self.pt_pin = np.array([x == 0.0 for x in xi], dtype=np.bool_)
        self.sp_par = np.array([sp.par for sp in self.sprockets]).reshape(-1, 7)
        self.sp_law = np.array([sp.law for sp in self.sprockets]).reshape(-1, 4)
        self.sp_force = np.zeros((len(self.sprockets), 3))
        self.ground_force = np.zeros(3)
        self.profile = None
        if profile is not None:
            if ground is not None:
                raise ValueError("CableContact: give either ground (flat) or profile, not both")
            self.profile = _profile_arrays(*profile)
            n_c = n_el * (n_pt + 4)
            self.c_el = np.zeros(n_c, dtype=np.int64)
            self.c_w = np.zeros((n_c, 4))
            self.c_K = np.zeros((n_c, 2, 3, 3))
            self.c_kxv = np.zeros((n_c, 4, 3))
            self.n_profile = 0

    # -- provider protocol
    def coupling_pairs(self):
        return []  # the cable's own blocks (CableForces declares them); the wheels stay out of the matrix

    def bind(self, system) -> None:
        idx = {n: k for k, n in enumerate(system.body_names)}
        self.elem_body = self.cable.elem_body if hasattr(self.cable, "elem_body") else None
        if self.elem_body is None:
            raise RuntimeError("CableContact: bind after the cable's CableForces (list it first in providers)")
        self.slot = self.cable.slot
        self.wheel_body = np.array([idx[w.body] for w in self.wheels], dtype=np.int64)
        self.wheel_radius = np.array([w.radius for w in self.wheels])
        self.wheel_axis_b = np.array([w.axis for w in self.wheels]).reshape(-1, 3)
        self.wheel_half = np.array([w.half_width for w in self.wheels])
        self.wheel_par = np.array([w.law for w in self.wheels]).reshape(-1, 4)
        self.sp_body = np.array([idx[sp.body] for sp in self.sprockets], dtype=np.int64)
        body, axis = self._lateral
        self.lat_body = -1 if body is None else idx[body]
        self.lat_axis_b = np.asarray(axis, float)
        self._kxv_scratch = np.zeros((len(system.body_names), 6))  # a system without Kxv (its terms dropped)

    def initial_extra(self) -> dict:
        return {}

    def accumulate(self, ctx) -> None:
        k = ctx.kin
        CK.cable_contact(self.elem_body, self.pt_s, self.pt_sx, self.sign, self.top, self.bottom, k.pos, k.vel,
                         k.R, k.omega_w, self.wheel_body, self.wheel_radius, self.wheel_axis_b, self.wheel_half,
                         self.wheel_par, self.ground_z, self.ground_par, self.lat_body, self.lat_axis_b, ctx.f,
                         self.Kpp, self.n_active, self.point_force, self.wheel_force, self.ground_force, self.pt_P,
                         self.wheel_hits, self.Kw, self.pt_pin, self.sp_body, self.sp_par, self.sp_law, self.sp_force)
        if self.profile is not None:
            px, pz, vx, vz, vnx, vnz, law, edge_law, reach = self.profile
            self.n_profile = CK.cable_profile_contact(
                self.elem_body, self.cable.mesh.length, self.pt_s, self.pt_sx, self.sign, self.bottom, k.pos, k.vel,
                k.R, self.lat_body, self.lat_axis_b, px, pz, vx, vz, vnx, vnz, law, edge_law, reach, ctx.f,
                self.ground_force, self.c_el, self.c_w, self.c_K, self.c_kxv)
            if ctx.data is not None:
                CK.cable_weighted_scatter(self.elem_body, self.c_el, self.c_w, self.c_K, self.c_kxv, self.n_profile,
                                          k.vel, float(ctx.cK), float(ctx.cD), self.slot, ctx.data, ctx.Dv,
                                          ctx.Kxv if ctx.Kxv is not None else self._kxv_scratch)
        if ctx.data is None:
            return
        CK.cable_contact_scatter(self.elem_body, self.pt_s, self.Kpp, self.n_active, self.wheel_hits, self.Kw,
                                 k.vel, float(ctx.cK), float(ctx.cD), self.slot, ctx.data, ctx.Dv,
                                 ctx.Kxv if ctx.Kxv is not None else self._kxv_scratch)

    def commit(self, state) -> None:
        pass

    def contact_loads(self) -> tuple[np.ndarray, np.ndarray]:
        """``(bodies, forces)``: the wheel and sprocket bodies (system indices) and the cable's load on each
        (world, N, (n, 3)) at the last evaluation; the arrays are this provider's own (read, do not keep)."""
        return np.concatenate([self.wheel_body, self.sp_body]), np.concatenate([self.wheel_force, self.sp_force])

    def series(self) -> dict:
        out = {f"{self.name}.ground.force.{ax}": (self.ground_force, a) for a, ax in enumerate("xyz")}
        for w, wh in enumerate(self.wheels):
            for a, ax in enumerate("xyz"):
                out[f"{self.name}.{wh.body}.force.{ax}"] = (self.wheel_force[:, a], w)
        for q, sp in enumerate(self.sprockets):
            for a, ax in enumerate("xyz"):
                out[f"{self.name}.{sp.body}.force.{ax}"] = (self.sp_force[:, a], q)
        return out
