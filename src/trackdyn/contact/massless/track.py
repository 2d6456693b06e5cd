"""The massless track as a force provider (agapov-kovalev-pogorelov §3.3-3.5).

:class:`MasslessTrack` adds to a :class:`~trackdyn.formulations.absolute.AbsoluteSystem`
every step the forces of the tracks of a vehicle built by
:func:`~trackdyn.assembly.massless.build_massless` on a terrain, and their exact
Jacobians (contact stiffness, Hunt-Crossley damping, friction), so the
implicit step stays stable at large steps. The physics is in
:mod:`trackdyn.contact.massless._kernels` (docstring: the model) and
:mod:`trackdyn.contact.massless._area` (eq. 1-3); parameters in :class:`MasslessOptions`.

Recorded series (``left`` and ``right``; ``W`` a contact wheel: ``left.sprocket``,
``left.idler``, ``left.roadwheel[k]``):

- ``W.track.normal`` normal force of the track on the wheel (N, incl. its share
  of factitious irregularities), ``W.track.penetration`` (m);
- ``left.track.traction`` (N, along the track, on the vehicle), ``left.track.lateral``
  (N, along the hull's y), ``left.track.slip`` (m/s, normal-force-weighted
  longitudinal slip velocity of the track's ground side; > 0: the vehicle is
  faster than its track), ``left.track.speed`` (m/s, r_s (ω_sprocket - ω_hull)),
  ``left.track.irregularity`` (m, deepest factitious irregularity),
  ``left.track.load`` (N, total normal load), ``left.track.contacts``;
- ``hull.contact.force.{x,y,z}`` (N, ground on hull), ``hull.contact.penetration`` (m),
  ``hull.contact.count``, ``hull.contact.x`` (m, vehicle-frame x of the centre of the hull's contact
  forces, NaN without contact); ``track.ground.force.{x,y,z}`` (N, total ground force on the vehicle).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ...conventions import G0 as G
from . import _kernels as K
from ._area import EXACT, PARABOLIC, depth_area
from ._slice import new_slice_buffer
from .slicing import pack_terrain

__all__ = ["MasslessOptions", "MasslessTrack"]



@dataclass(frozen=True)
class MasslessOptions:
    """Parameters of the massless track model.

    Parameters
    ----------
    planes : {1, 2, 3}
        Track planes per track, at the Gauss points across the track width
        (2: ``±w/(2√3)``; the paper's inner and outer edge, §3.5 Fig. 11).
    track_mass : bool
        Lump each track loop's mass into the hull and its circulation into the
        sprocket's inertia (:func:`~trackdyn.assembly.massless.build_massless`).
    static_sinkage : float, optional
        Penetration (m) of a road wheel at the static load ``m g / n_wheels``
        that calibrates the contact stiffness ``κ`` (eq. 1). Default: 25.4 mm
        scaled with the road-wheel radius (korner-2024 §3.2.4: the M113's
        wheel and pad deflect 1 in at rest, 8.3 % of its 0.305 m radius).
    area : {"exact", "parabolic"}
        Penetration area: the exact circular segment or the paper's
        small-angle parabola (eq. 2-3 exactly).
    damping : float, optional
        Hunt-Crossley ``α`` (s/m): normal force ``κ S (1 + α δ̇)``. Default
        ``1.5 (1 - e)`` per m/s, ``e`` the restitution of the track pad material.
    slip_speed : float
        Slip velocity (m/s) at which friction reaches ``tanh(1) = 76 %`` of ``μ N``.
    irregularity_exponent : float
        ``p`` of the irregularity stiffness ``κ (1 - ξ)^p`` at the wheel at
        ``ξ = 0`` (and ``κ ξ^p`` at the other): stiffest at the wheel, softest
        mid-way (Figs. 8-9).
    irregularities : bool
        Factitious irregularities between adjacent wheels (Fig. 8).
    hull : bool
        The hull collides with the terrain (its section in two planes across each convex part).
    hull_sinkage : float
        Penetration (m) of one hull corner carrying the whole vehicle weight.
    arc_tolerance : float
        Sagitta (m) of the chords of convex profile arcs.
    window_margin : float
        Margin (m) of the slicing window around the wheels and hull, in the hull frame.
    capacity : int
        Segments per slice before the buffer grows.
    """

    planes: int = 2
    track_mass: bool = True
    static_sinkage: float | None = None
    area: str = "exact"
    damping: float | None = None
    slip_speed: float = 0.1
    irregularity_exponent: float = 2.0
    irregularities: bool = True
    hull: bool = True
    hull_sinkage: float = 0.01
    arc_tolerance: float = 5e-4
    window_margin: float = 0.3
    capacity: int = 256

    def __post_init__(self):
        if self.planes not in (1, 2, 3):
            raise ValueError(f"MasslessOptions.planes = {self.planes!r}: choose 1, 2 or 3")
        if self.area not in ("exact", "parabolic"):
            raise ValueError(f"MasslessOptions.area = {self.area!r}: choose 'exact' or 'parabolic'")
        for name in ("slip_speed", "irregularity_exponent", "hull_sinkage", "arc_tolerance", "window_margin"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"MasslessOptions.{name} = {v!r}: must be positive")
        for name in ("static_sinkage", "damping"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"MasslessOptions.{name} = {v!r}: must be a non-negative number")
        if self.static_sinkage is not None and self.static_sinkage <= 0:
            raise ValueError(f"MasslessOptions.static_sinkage = {self.static_sinkage!r}: must be positive")
        if self.irregularity_exponent < 1:
            raise ValueError(f"MasslessOptions.irregularity_exponent = {self.irregularity_exponent!r}: must be >= 1")
        if not (isinstance(self.capacity, int) and self.capacity >= 16):
            raise ValueError(f"MasslessOptions.capacity = {self.capacity!r}: must be an integer >= 16")

    @classmethod
    def from_dict(cls, d: dict) -> "MasslessOptions":
        known = set(cls.__dataclass_fields__)
        bad = set(d) - known
        if bad:
            raise ValueError(f"massless options: unknown {sorted(bad)}; known: {sorted(known)}")
        return cls(**d)


class MasslessTrack:
    """Force provider of the massless tracks of a vehicle on a terrain (see the module docstring).

    Parameters
    ----------
    vehicle : MasslessVehicle
        From :func:`~trackdyn.assembly.massless.build_massless`.
    terrain : Terrain
        Any terrain of :mod:`trackdyn.terrain` (planes, profiles, stairs, meshes, composites).
    options : MasslessOptions
    """

    name = "massless-track"

    def __init__(self, vehicle, terrain, options: MasslessOptions | None = None):
        if not hasattr(vehicle, "layout"):
            raise ValueError(f"MasslessTrack: expected a MasslessVehicle (build_massless), got {type(vehicle).__name__}")
        from ...terrain.ground import is_winkler

        if is_winkler(terrain):  # its κ (eq. 1) is the wheel and pad's compliance on rigid ground
            name = next(m.name for p in terrain.parts() for m in getattr(p, "materials", [p.material])
                        if m.kind == "winkler")
            raise ValueError(f"the massless fidelity's track-terrain law (agapov-kovalev-pogorelov eq. 1-3) takes "
                             f"the ground as rigid; Winkler ground (material {name!r}) needs shoe bodies: run it "
                             "with the links, penalty or bushing fidelity")
        self.vehicle = vehicle
        self.terrain = terrain
        self.options = opt = options if options is not None else MasslessOptions()
        spec = vehicle.spec
        model = vehicle.model
        idx = {nm: k for k, nm in enumerate(model.body_names)}
        lay = vehicle.layout
        self.law = EXACT if opt.area == "exact" else PARABOLIC
        # ---- stiffness from the static sinkage of a road wheel (eq. 1)
        n_road = sum(1 for k in lay.wheel_kind if k == "roadwheel")
        total = float(sum(model._mass))
        Rw = spec.suspension.wheel_radius + spec.shoes.top + spec.shoes.bottom
        sink = opt.static_sinkage if opt.static_sinkage is not None else 0.0254 * spec.suspension.wheel_radius / 0.305
        S0, _ = depth_area(self.law, Rw, sink)
        self.kappa = total * G / n_road / S0
        self.alpha = opt.damping if opt.damping is not None else 1.5 * (1.0 - spec.materials[spec.shoes.material].restitution)
        self.static_load = total * G / n_road
        com = vehicle.com
        # ---- elements: per wheel (C, wheel, -, sprocket), per pair (C, A, B, sprocket), hull (C)
        C = idx["chassis"]
        sides = list(vehicle.sides.values())
        spr = np.array([idx[s.sprocket] for s in sides], np.int64)
        roles = []
        wheel_elem = []
        for w, s in zip(lay.wheel_body, lay.wheel_side):
            wheel_elem.append(len(roles))
            roles.append([C, idx[w], -1, spr[s]])
        pair_elem = []
        for a, b in lay.pairs:
            pair_elem.append(len(roles))
            roles.append([C, idx[lay.wheel_body[a]], idx[lay.wheel_body[b]], spr[lay.wheel_side[a]]])
        hull_elem = len(roles)
        roles.append([C, -1, -1, -1])
        roles = np.array(roles, np.int64)
        blk = np.zeros_like(roles)
        for e in range(len(roles)):
            for k in range(4):
                blk[e, k] = k
                for k2 in range(k):
                    if roles[e, k] >= 0 and roles[e, k2] == roles[e, k]:
                        blk[e, k] = k2
                        break
        self.roles, self.blk = roles, blk
        cols = np.zeros((len(roles), K.NC_ABS), np.int64)
        ncols = np.zeros(len(roles), np.int64)
        for e in range(len(roles)):
            for k in range(4):
                if roles[e, k] >= 0 and blk[e, k] == k:
                    for i in range(6):
                        cols[e, ncols[e]] = 6 * k + i
                        ncols[e] += 1
        self._cols, self._ncols = cols, ncols
        # ---- hull planes (two Gauss planes across each convex part), their sections, and window (hull frame)
        K_hull = total * G / opt.hull_sinkage ** 1.5
        hp_y, hp_ptr, hp_dmax, hp_ctr, hp_reach, poly_v, poly_n = [], [0], [], [], [], [], []
        if opt.hull:
            for part in lay.hull_parts:
                Vp = np.asarray(part, float) - com
                ylo, yhi = Vp[:, 1].min(), Vp[:, 1].max()
                for off in (-1.0, 1.0):
                    y = 0.5 * (ylo + yhi) + off * 0.5 * (yhi - ylo) / math.sqrt(3.0)
                    P = hull_section(Vp, y)
                    if P is None:
                        continue
                    cen = P.mean(axis=0)
                    for k in range(len(P)):
                        d = P[(k + 1) % len(P)] - P[k]
                        nrm = np.array([d[1], -d[0]]) / np.linalg.norm(d)
                        if nrm @ (cen - P[k]) > 0:
                            nrm = -nrm
                        poly_v.append(P[k])
                        poly_n.append([nrm[0], nrm[1], nrm @ P[k]])
                    lo, hi = P.min(axis=0), P.max(axis=0)
                    mid, half_ext = 0.5 * (lo + hi), 0.5 * (hi - lo)
                    hp_y.append(y)
                    hp_ptr.append(len(poly_v))
                    hp_dmax.append(float(half_ext.min()))
                    hp_ctr.append(mid)
                    hp_reach.append(float(np.linalg.norm(P - mid, axis=1).max() + half_ext.min()))
        pts = []
        for w, r in zip(lay.wheel_body, lay.wheel_radius):
            p = model._q0[idx[w]][:3] - vehicle.origin - com
            pts += [p[[0, 2]] - r, p[[0, 2]] + r]
        for part in lay.hull_parts:
            pts += list((np.asarray(part, float) - com)[:, [0, 2]])
        pts = np.array(pts)
        m_ = opt.window_margin
        win_lo = pts.min(axis=0) - m_
        win_hi = pts.max(axis=0) + m_
        win_lo[1] -= m_  # the wheels hang lower when the suspension unloads
        self.V = K.VehiclePack(
            C, spr, np.full(2, lay.sprocket_radius),
            np.array(lay.plane_side, np.int64), np.array(lay.plane_y, float) - com[1],
            np.array(lay.plane_weight, float) * self.kappa,
            np.array([idx[w] for w in lay.wheel_body], np.int64), np.array(lay.wheel_side, np.int64),
            np.array(lay.wheel_radius, float), np.array(lay.wheel_y, float) - com[1], np.array(wheel_elem, np.int64),
            np.array([a for a, _ in lay.pairs], np.int64), np.array([b for _, b in lay.pairs], np.int64),
            np.array([lay.wheel_side[a] for a, _ in lay.pairs], np.int64), np.array(pair_elem, np.int64),
            np.array(hp_y, float), np.full(len(hp_y), 0.5 * K_hull), np.array(hp_ptr, np.int64),
            np.array(hp_dmax, float), np.array(hp_ctr, float).reshape(-1, 2), np.array(hp_reach, float),
            np.array(poly_v, float).reshape(-1, 2), np.array(poly_n, float).reshape(-1, 3), int(hull_elem),
            win_lo, win_hi, roles,
        )
        mu_track = spec.materials[spec.shoes.material].friction
        mu_hull = spec.materials[spec.chassis.material].friction
        half = 0.5 * float(win_hi[0] - win_lo[0]) + 1.0
        self.P = K.Params(self.law, float(self.alpha), float(opt.slip_speed), float(opt.irregularity_exponent),
                          float(mu_track), float(mu_hull), bool(opt.irregularities), 0.02, half)
        self.pack, n_edges, self._stack = pack_terrain(terrain, opt.arc_tolerance)
        self._n_edges = n_edges
        self._cap = int(opt.capacity)
        self.buf = new_slice_buffer(self._cap, n_edges, self._stack)
        nE = len(roles)
        self.work = K.new_work(K.NC_ABS, blk, cols, ncols, self._cap)
        self.Q = np.zeros((nE, K.NC_ABS))
        self.Kx = np.zeros((nE, K.NC_ABS, K.NC_ABS))
        self.Kv = np.zeros((nE, K.NC_ABS, K.NC_ABS))
        self.on = np.zeros(nE, np.bool_)
        self.wout = np.zeros((len(lay.wheel_body), 6))
        self.sout = np.zeros((2, 8))
        self.hout = np.zeros(5 + 4 * 64)
        self.tout = np.zeros(3)
        self.hull_x = np.full(1, np.nan)
        self.flags = np.zeros(2)
        self._dummy_T = np.zeros((1, 3, 7))
        self._warned = False
        self._body_names = model.body_names
        self._side_names = [s.name for s in sides]

    # ------------------------------------------------------------------ ForceProvider
    def coupling_pairs(self):
        pairs = set()
        for e in range(len(self.roles)):
            bs = sorted({int(b) for b in self.roles[e] if b >= 0})
            for i in range(len(bs)):
                for j in range(i + 1, len(bs)):
                    pairs.add((bs[i], bs[j]))
        return sorted(pairs)

    def bind(self, system) -> None:
        self.system = system
        pat = system.pattern
        nE = len(self.roles)
        slot = np.full((nE, 24, 24), -1, np.int64)
        for e in range(nE):
            gl = []
            for k in range(4):
                b = self.roles[e, k]
                ok = b >= 0 and self.blk[e, k] == k
                gl.extend([6 * b + i if ok else -1 for i in range(6)])
            for a in range(24):
                for c in range(a, 24):
                    if gl[a] >= 0 and gl[c] >= 0:
                        try:
                            slot[e, a, c] = pat.slots(gl[a], gl[c])
                        except KeyError:
                            slot[e, a, c] = -1
        self.slot = slot
        self._dummy_data = np.zeros(1)
        self._dummy_kxv = np.zeros((system.nb, 6))

    def initial_extra(self) -> dict:
        return {}

    def evaluate(self, kin, mode=K.ABSOLUTE, jac=K.FULL, body_T=None, body_W=None, work=None, Q=None, Kx=None,
                 Kv=None, on=None):
        """Run the kernel on world kinematics ``kin`` (pos, R, vel, omega_w with a ground row); grows buffers.

        The defaults (absolute coordinates, exact Jacobians) serve the provider;
        the real-time stepper passes its own reduced-coordinate bases and arrays.
        """
        while True:
            K.evaluate(mode, jac, self.pack, self.V, self.P, kin.pos, kin.R, kin.vel, kin.omega_w,
                       self._dummy_T if body_T is None else body_T, self._dummy_T if body_W is None else body_W,
                       self.buf, self.work if work is None else work, self.Q if Q is None else Q,
                       self.Kx if Kx is None else Kx, self.Kv if Kv is None else Kv, self.on if on is None else on,
                       self.wout, self.sout, self.hout, self.tout, self.flags)
            if self.flags[1] == 0.0:
                break
            self._cap = int(max(2 * self._cap, self.flags[1] + 16))
            self.buf = new_slice_buffer(self._cap, self._n_edges, self._stack)
            self.work = K.new_work(K.NC_ABS, self.blk, self._cols, self._ncols, self._cap)
            if work is not None:
                raise SliceGrew(self._cap)
        if self.flags[0] and not self._warned:
            self._warned = True
            warnings.warn("massless track: a track plane ran within 1° of parallel to a profile terrain's lateral "
                          "lines; that profile was left out of the slice (use a mesh or height field for driving "
                          "along a profile)", RuntimeWarning, stacklevel=3)

    def accumulate(self, ctx) -> None:
        stepping = ctx.data is not None
        # outputs only (recording): the same forces without the exact Jacobians
        self.evaluate(ctx.kin, jac=K.FULL if stepping else K.STIFF)
        if not stepping:
            self._hull_point(ctx.kin)
        st = ctx.state
        if st is not None:
            v = st.v if st.v.flags.c_contiguous else np.ascontiguousarray(st.v)
        else:
            v = np.zeros((self.system.nb, 6))
        K.scatter_absolute(self.roles, self.blk, self.Q, self.Kx, self.Kv, self.on, self.slot, float(ctx.cK),
                           float(ctx.cD), v, ctx.f, ctx.data if stepping else self._dummy_data, ctx.Dv,
                           ctx.Kxv if ctx.Kxv is not None else self._dummy_kxv, stepping)

    def commit(self, state) -> None:
        pass

    def refresh_outputs(self, kin) -> None:
        """Outputs of a state whose forces a compiled step evaluated already (the recording short-cut of
        :class:`~trackdyn.formulations.tree.TreeSystem`): only the hull's centre of force is left to compute."""
        self._hull_point(kin)

    def _hull_point(self, kin):
        """Vehicle-frame x of the centre of the hull's contact forces (NaN without contact)."""
        n_h = min(int(self.hout[4]), (len(self.hout) - 5) // 4)
        if n_h == 0:
            self.hull_x[0] = np.nan
            return
        hr = self.hout[5:5 + 4 * n_h].reshape(n_h, 4)
        f = hr[:, 3]
        p = (hr[:, :3] * f[:, None]).sum(axis=0) / max(f.sum(), 1e-12)
        C = self.V.chassis
        self.hull_x[0] = float((kin.R[C].T @ (p - kin.pos[C]))[0] + self.vehicle.com[0])

    def series(self) -> dict:
        lay = self.vehicle.layout
        out = {}
        for k, w in enumerate(lay.wheel_body):
            out[f"{w}.track.normal"] = (self.wout[k], 0)
            out[f"{w}.track.penetration"] = (self.wout[k], 1)
        for s, nm in enumerate(self._side_names):
            for j, q in enumerate(("traction", "lateral", "slip", "speed", "irregularity", "load", "contacts")):
                out[f"{nm}.track.{q}"] = (self.sout[s], j)
        for j, c in enumerate("xyz"):
            out[f"hull.contact.force.{c}"] = (self.hout, j)
            out[f"track.ground.force.{c}"] = (self.tout, j)
        out["hull.contact.penetration"] = (self.hout, 3)
        out["hull.contact.count"] = (self.hout, 4)
        out["hull.contact.x"] = (self.hull_x, 0)
        return out

    # ------------------------------------------------------------------ inspection
    def contacts(self) -> dict:
        """Contacts of the last evaluation (a step or a recorded sample), as arrays.

        Keys (as :meth:`trackdyn.contact.ContactSystem.contacts`): ``body_a``
        (-1: ground, or the chassis for hull contacts), ``body_b``, ``point``
        (n, 3, world; for a wheel the normal-force-weighted mean of its contact
        points), ``normal_force`` (N) and ``penetration`` (m; largest, per wheel).
        One row per wheel in contact, then one per hull contact.
        """
        lay = self.vehicle.layout
        idx = {nm: k for k, nm in enumerate(self._body_names)}
        C = idx["chassis"]
        act = np.nonzero(self.wout[:, 0] > 0)[0]
        n_h = min(int(self.hout[4]), (len(self.hout) - 5) // 4)
        hr = self.hout[5:5 + 4 * n_h].reshape(n_h, 4)
        wp = self.wout[act, 3:6] / self.wout[act, 0:1]
        return {"body_a": np.concatenate([np.full(len(act), -1, np.int64), np.full(n_h, C, np.int64)]),
                "body_b": np.concatenate([np.array([idx[lay.wheel_body[k]] for k in act], np.int64),
                                          np.full(n_h, -1, np.int64)]),
                "point": np.concatenate([wp.reshape(-1, 3), hr[:, :3]]),
                "normal_force": np.concatenate([self.wout[act, 0], hr[:, 3]]),
                "penetration": np.concatenate([self.wout[act, 1], np.full(n_h, self.hout[3])])}


def hull_section(V, y):
    """Section of the convex hull of V (n, 3; hull frame) by the plane at hull y = ``y``: its corners (x, z),
    counter-clockwise, or None if the plane misses it or cuts it in a line.

    The section of a convex hull is the convex hull of the points where the segments between its vertices
    (every pair on opposite sides, and the vertices on the plane) cross the plane.
    """
    from scipy.spatial import ConvexHull, QhullError

    d = V[:, 1] - y
    tol = 1e-12 * max(1.0, float(np.abs(V).max()))
    pts = [V[i, [0, 2]] for i in np.nonzero(np.abs(d) <= tol)[0]]
    for i in np.nonzero(d < -tol)[0]:
        for j in np.nonzero(d > tol)[0]:
            t = d[i] / (d[i] - d[j])
            pts.append(V[i, [0, 2]] + t * (V[j, [0, 2]] - V[i, [0, 2]]))
    if len(pts) < 3:
        return None
    P = np.array(pts)
    try:
        h = ConvexHull(P)
    except QhullError:
        return None
    return P[h.vertices]


class SliceGrew(Exception):
    """The slice buffer grew: a caller with its own scratch must rebuild it (with ``capacity``) and retry."""

    def __init__(self, capacity):
        super().__init__(capacity)
        self.capacity = capacity
