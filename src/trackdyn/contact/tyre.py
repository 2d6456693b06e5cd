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

The road is a sum of sines ``z_r(s) = w(s) Σ_k A_k sin(κ_k s + φ_k)`` faded in
over ``fade`` metres by ``w(s) = (1 - cos(π s / fade)) / 2`` (so a run starts at
rest on level ground). :func:`iso8608_road` draws one realisation of an ISO
8608 class.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..mbs.markers import body_points

__all__ = ["TyreForces", "iso8608_road", "longitudinal_force", "road_height", "vertical_force"]

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
