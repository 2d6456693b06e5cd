"""A point-contact tyre on a road profile: the force law, its road, and a force provider for wheeled models.

The tyre of kim-2012's 1/6 robot ("a simple tire force model", Table 1: vertical
stiffness 200 kN/m). The contact point is the point of the tyre straight below
the wheel centre (world ``-z``, radius ``R``); the road under it has height
``z_r(x + V t)``, a profile moving backwards under the wheel at speed ``V`` (a
rig: the vehicle's forward motion is not modelled, its chassis moves vertically).

Vertical force, along world ``+z`` on the wheel (linear spring and damper, no
adhesion)::

    δ = z_r - (z_w - R)                       deflection, m (> 0 in contact)
    δ̇ = z_r'(s) (V + ẋ_w) - ż_w              its rate, m/s
    F_z = max(0, k δ + c δ̇)   if δ > 0,   0 otherwise

Longitudinal force (documented slip law, for wheels with a spin coordinate;
kim-2012 gives none and the 1/6 robot has no spin degree of freedom, so its
study does not use it)::

    κ = (ω R - v_x) / max(|v_x|, |ω R|, v_min)       longitudinal slip
    F_x = μ F_z tanh(κ / κ_ref)

a saturating curve with initial slope ``μ F_z / κ_ref`` (the tyre's slip
stiffness per unit load) and limit ``μ F_z``; ``v_min`` keeps κ defined at a
standstill.

On a vehicle (:class:`TerrainTyres`, the wheels of a
:class:`~trackdyn.spec.wheeled.WheeledVehicleSpec`) the wheel also slides
sideways, and the law is applied to the slip *vector* (isotropic combined
slip, a friction circle of radius ``μ F_z``)::

    σ = (ω R - v_x, -v_y) / max(|v_x|, |ω R|, v_min)
    (F_l, F_t) = μ F_z tanh(|σ| / κ_ref) σ / |σ|

with ``v_x``, ``v_y`` the wheel centre's velocity along the wheel's heading
``l`` and its axle ``t`` (both horizontal: ``l = a × e_z / |a × e_z|`` for the
axle ``a``) and ``ω`` the spin about the axle. With no side slip,
``σ = (κ, 0)`` and ``F_l`` is the longitudinal law above; the horizontal
force acts at the contact point, ``R`` below the centre. The road
is then the scenario's terrain under the wheel centre (flat ground or a
profile terrain, :func:`terrain_table`), and the force comes with its exact
Newton-matrix Jacobian (:mod:`trackdyn.contact._tyre_kernels`).

The road is a sum of sines ``z_r(s) = w(s) Σ_k A_k sin(κ_k s + φ_k)`` faded in
over ``fade`` metres by ``w(s) = (1 - cos(π s / fade)) / 2`` (so a run starts at
rest on level ground). :func:`iso8608_road` draws one realisation of an ISO
8608 class.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..mbs import _force_kernels as FK
from ..mbs.markers import body_points
from ._tyre_kernels import tyre_batch

__all__ = ["TyreForces", "TerrainTyres", "terrain_table", "iso8608_road", "longitudinal_force", "road_height",
           "vertical_force", "TABLE_SPACING"]

#: ISO 8608 (1995) geometric-mean displacement PSD G_d(n0) at n0 = 0.1 cycle/m, m³, per road class
ISO8608_GD = {"A": 16e-6, "B": 64e-6, "C": 256e-6, "D": 1024e-6, "E": 4096e-6}


@nb.njit(cache=True)
def road_height(s, road, fade):
    """Height and slope ``(z_r, dz_r/ds)`` of the faded sum-of-sines road at travel ``s`` (module docstring).

    ``road`` (m, 3): amplitude (m), wavenumber (rad/m), phase (rad) per sine.
    """
    z = 0.0
    dz = 0.0
    for k in range(road.shape[0]):
        arg = road[k, 1] * s + road[k, 2]
        z += road[k, 0] * math.sin(arg)
        dz += road[k, 0] * road[k, 1] * math.cos(arg)
    if fade > 0.0 and s < fade:
        if s <= 0.0:
            return 0.0, 0.0
        w = 0.5 * (1.0 - math.cos(math.pi * s / fade))
        dw = 0.5 * math.pi / fade * math.sin(math.pi * s / fade)
        return w * z, w * dz + dw * z
    return z, dz


@nb.njit(cache=True)
def vertical_force(x_w, z_w, vx_w, vz_w, t, radius, k, c, road, speed, fade):
    """Vertical tyre force F_z ≥ 0 (N) on a wheel centred at (x_w, z_w) moving at (vx_w, vz_w) (module docstring)."""
    s = x_w + speed * t
    zr, dzr = road_height(s, road, fade)
    delta = zr - (z_w - radius)
    if delta <= 0.0:
        return 0.0
    ddelta = dzr * (speed + vx_w) - vz_w
    f = k * delta + c * ddelta
    return max(0.0, f)


@nb.njit(cache=True)
def longitudinal_force(fz, omega, radius, vx, mu, kappa_ref, v_min):
    """Longitudinal force F_x (N) from the slip law of the module docstring."""
    u = omega * radius
    den = max(abs(vx), abs(u), v_min)
    kappa = (u - vx) / den
    return mu * fz * math.tanh(kappa / kappa_ref)


def iso8608_road(road_class="C", n_min=0.05, n_max=2.0, n_waves=24, seed=0):
    """One realisation of an ISO 8608 road class as sines for :func:`road_height`.

    ``G_d(n) = G_d(n0) (n / n0)^-2`` split into ``n_waves`` equal log-spaced
    bands between ``n_min`` and ``n_max`` cycles/m; amplitude ``sqrt(2 G_d Δn)``
    per band, phases uniform from ``seed``. Returns (n_waves, 3).
    """
    if road_class not in ISO8608_GD:
        raise ValueError(f"iso8608_road: road_class must be one of {sorted(ISO8608_GD)}, got {road_class!r}")
    edges = np.geomspace(n_min, n_max, n_waves + 1)
    n = np.sqrt(edges[:-1] * edges[1:])
    gd = ISO8608_GD[road_class] * (n / 0.1) ** -2
    amp = np.sqrt(2.0 * gd * np.diff(edges))
    phase = np.random.default_rng(seed).uniform(0.0, 2.0 * np.pi, n_waves)
    return np.column_stack([amp, 2.0 * np.pi * n, phase])


class TyreForces:
    """Force provider: point-contact tyres on wheel bodies of an absolute-coordinate model.

    Parameters
    ----------
    model : trackdyn Model
    wheels : sequence of (body, centre_w)
        The body carrying each tyre and the wheel centre (world, at the initial pose).
    radius, stiffness, damping : float
        Unloaded radius (m), vertical stiffness (N/m), vertical damping (N s/m).
    road : ndarray (m, 3)
        Sines of the road (:func:`road_height`); ``speed`` (m/s) and ``fade`` (m) as there.

    Forces only (no Newton-matrix terms): meant for explicit integrators and
    for evaluating accelerations; an implicit integrator would see the tyre's
    stiffness only through its residual. Recorded: ``NAME[k].force.z``.
    """

    def __init__(self, model, wheels, radius, stiffness, damping, road, speed=0.0, fade=0.0, name="tyre"):
        self.name = name
        wheels = list(wheels)
        self.body = np.array([model._index(b) for b, _ in wheels], dtype=np.int64)
        self.centre_b = np.array([model._local_point(b, np.asarray(c, float)) for b, c in wheels]).reshape(-1, 3)
        for what, val in (("radius", radius), ("stiffness", stiffness), ("damping", damping)):
            if not (np.isfinite(val) and val >= 0):
                raise ValueError(f"TyreForces: {what} = {val!r}: expected a finite number >= 0")
        self.radius, self.k, self.c = float(radius), float(stiffness), float(damping)
        self.road = np.ascontiguousarray(road, dtype=float).reshape(-1, 3)
        self.speed, self.fade = float(speed), float(fade)
        self.fz = np.zeros(len(wheels))

    def coupling_pairs(self):
        return []

    def bind(self, system):
        pass

    def initial_extra(self):
        return {}

    def accumulate(self, ctx):
        kin = ctx.kin
        arm, c, vc = body_points(kin, self.body, self.centre_b)
        for e, b in enumerate(self.body):
            fz = vertical_force(c[e, 0], c[e, 2], vc[e, 0], vc[e, 2], ctx.t, self.radius, self.k, self.c,
                                self.road, self.speed, self.fade)
            self.fz[e] = fz
            F = np.array([0.0, 0.0, fz])
            rc = arm[e] - np.array([0.0, 0.0, self.radius])  # contact point from the centre of mass
            ctx.f[b, :3] += F
            ctx.f[b, 3:] += kin.R[b].T @ np.cross(rc, F)

    def commit(self, state):
        pass

    def series(self):
        return {f"{self.name}[{e}].force.z": (self.fz, e) for e in range(len(self.body))}


#: Sampling interval of a profile terrain's height table for :class:`TerrainTyres`, m: the table is exact at
#: its samples and linear between them (a RandomRoad is itself linear between its 0.05 m samples; an arc of
#: radius r is off by at most spacing² / (8 r), 1.25e-7 m on the 1 m radius of a half-round).
TABLE_SPACING = 1e-3


def terrain_table(terrain, spacing: float = TABLE_SPACING):
    """``(origin (2,), u (2,), table_s, table_z)``: a terrain's height as a table along a straight path.

    Flat ground: one level. A :class:`~trackdyn.terrain.base.ProfileTerrain` (profile pieces on flat ground,
    what the events and the ``terrain.road`` option build): its exact heights every ``spacing`` m along its
    path, level beyond. Other terrains (meshes, inclines, composites, Winkler ground) are refused with a
    ValueError naming them: the point tyre pushes along world z and its ground is rigid.
    """
    from ..terrain.base import Plane, ProfileTerrain
    from ..materials import WINKLER

    kind = getattr(getattr(terrain, "material", None), "kind", None)
    if kind == WINKLER:
        raise ValueError("terrain: Winkler ground; the point tyre runs on rigid ground only (terrain.ground = 'rigid')")
    if isinstance(terrain, Plane):
        if not terrain.is_flat:
            raise ValueError(f"terrain: an inclined Plane (normal {terrain.normal.tolist()}); the point tyre's "
                             "vertical law needs level ground or a profile terrain on it")
        z = float(terrain.point[2])
        return np.zeros(2), np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([z, z])
    if isinstance(terrain, ProfileTerrain):
        ch = terrain.chain
        s0 = float(np.min(ch.prim_smax)) - 1.0
        s1 = float(np.max(ch.prim_smin)) + 1.0
        if not s1 > s0:
            s0, s1 = -1.0, 1.0
        n = int(math.ceil((s1 - s0) / spacing)) + 1
        ts = np.linspace(s0, s1, n)
        tz = terrain.height_along(ts)
        if not np.all(np.isfinite(tz)):
            raise ValueError("terrain: the profile terrain has no height at some points of its path")
        return terrain.origin[:2].copy(), terrain.u[:2].copy(), ts, np.ascontiguousarray(tz, dtype=float)
    raise ValueError(f"terrain: a {type(terrain).__name__}; the point tyre runs on flat ground and profile "
                     "terrains (Flat plus profile pieces: bumps, roads, obstacles)")


class TerrainTyres:
    """Force provider: a point tyre (module docstring) under every wheel body, on a terrain, with its Jacobian.

    Parameters
    ----------
    wheels : sequence of int
        Body indices of the wheels; each wheel's centre is its centre of mass and its axle its body y axis.
    names : sequence of str
        The wheels' names: series ``NAME.tyre.force.{x,y,z}`` (N, world, on the wheel), ``NAME.tyre.deflection``
        (m), ``NAME.tyre.slip`` (κ, longitudinal) and ``NAME.tyre.slip_lateral``.
    terrain : Terrain
        Flat ground or a profile terrain (:func:`terrain_table`).
    radius, stiffness, damping, friction, slip_ref, v_min : float
        R (m), k (N/m), c (N s/m), μ, κ_ref, v_min (m/s) of the law.

    The forces act on the wheels alone (each a one-body element against the ground), so their Jacobians sit
    in the wheels' diagonal blocks of the Newton matrix (``coupling_pairs`` is empty).
    """

    name = "tyres"

    def __init__(self, wheels, names, terrain, radius, stiffness, damping, friction, slip_ref, v_min=0.1):
        from ..errors import check_number

        self.body = np.ascontiguousarray(wheels, dtype=np.int64)
        self.names = list(names)
        if len(self.names) != len(self.body):
            raise ValueError(f"TerrainTyres: {len(self.body)} wheels but {len(self.names)} names")
        self.radius = check_number("tyre.radius", radius, positive=True)
        self.k = check_number("tyre.stiffness", stiffness, positive=True)
        self.c = check_number("tyre.damping", damping, nonneg=True)
        self.mu = check_number("tyre.friction", friction, positive=True)
        self.slip_ref = check_number("tyre.slip_ref", slip_ref, positive=True)
        self.v_min = check_number("tyre.v_min", v_min, positive=True)
        self.origin, self.u, self.table_s, self.table_z = terrain_table(terrain)
        n = len(self.body)
        self.Q = np.zeros((n, 12))
        self.Kx = np.zeros((n, 12, 12))
        self.Kv = np.zeros((n, 12, 12))
        self.out = np.zeros((n, 6))
        self._scratch = [np.zeros((3, 12)) for _ in range(5)]
        self.elem = np.column_stack([np.full(n, -1, dtype=np.int64), self.body])
        self.slot = None

    def coupling_pairs(self):
        return []

    def bind(self, system):
        self.slot = np.array([system.pattern.element_slots(b) for b in self.elem])

    def initial_extra(self):
        return {}

    def evaluate(self, kin):
        """Forces and Jacobians of the state in ``kin`` into ``Q``, ``Kx``, ``Kv`` and ``out``."""
        tyre_batch(self.body, kin.R, kin.pos, kin.vel, kin.omega_w, self.radius, self.k, self.c, self.mu,
                   self.slip_ref, self.v_min, self.origin, self.u, self.table_s, self.table_z, self.Q, self.Kx,
                   self.Kv, self.out, *self._scratch)

    def accumulate(self, ctx):
        self.evaluate(ctx.kin)
        if ctx.data is None:
            return
        FK.scatter_elements(self.elem, self.Q, self.Kx, self.Kv, self.slot, ctx.cK, ctx.cD, ctx.state.v, ctx.f,
                            ctx.data, ctx.Dv, ctx.Kxv if ctx.Kxv is not None else np.zeros_like(ctx.Dv))

    def commit(self, state):
        pass

    def loads(self) -> np.ndarray:
        """Vertical tyre forces (N) of the last evaluation, one per wheel."""
        return self.out[:, 2].copy()

    def series(self):
        out = {}
        for e, nm in enumerate(self.names):
            for k, ax in enumerate("xyz"):
                out[f"{nm}.tyre.force.{ax}"] = (self.out[:, k], e)
            out[f"{nm}.tyre.deflection"] = (self.out[:, 3], e)
            out[f"{nm}.tyre.slip"] = (self.out[:, 4], e)
            out[f"{nm}.tyre.slip_lateral"] = (self.out[:, 5], e)
        return out
