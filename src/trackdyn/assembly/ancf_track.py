"""The ANCF cable track of a vehicle (wallin-shabana-2013 §8-9): the hull and running gear of the links
builder, each track a closed loop of ANCF cable elements instead of shoe bodies (issue #30).

:func:`build_ancf_vehicle` builds the vehicle without shoes (:func:`~trackdyn.assembly.builder.build_vehicle`
on the geometry with its loops' shoe counts set to 0: the same hull, sprockets, tensioned idlers and
suspension), then per side a cable
through the wrapped loop's pins (one element per shoe, nodes at the pins, gradients along the loop),
stretched to the tensioner's target tension, stepped as point bodies by
:class:`~trackdyn.formulations.ancf.CableForces`, and its contact with the side's road wheels, idler and
sprocket and with flat ground on the shoes' pin and pad points
(:class:`~trackdyn.contact.cable.CableContact`, the spec's Kelvin-Voigt materials: wallin-shabana Table 2).

The cable's section (:func:`cable_section`): the spec gives none. Its mass per length is the shoes'
(ρA = shoe mass / pitch), so the loop weighs what the shoes weigh; its bending stiffness is the link
chain's (EI = the shoes' bending spring × pitch: a chain of rotational springs k every p bends like EI =
k p), since a solid steel section of that area could not wrap the sprocket; E, G and ρ are the paper's
steel. By default the sprocket acts on the cable as a circle through the pins (its assembly radius), which
holds and drives the loop by friction only (μ of its material); its tooth gaps on the pin points
(``sprocket="teeth"``, :class:`~trackdyn.contact.cable.CableSprocket`) are built and unit-tested but the APC
on them does not settle yet. The ``ancf`` fidelity is therefore not registered (docs/joints/ancf.md).

Recorded: ``SIDE.track.element[k].tension`` (element k spans shoe k's place, between pins k and k+1),
``SIDE.track.node[k].pos.*``, and the contact's ``SIDE.track-contact.ground.force.*`` and
``SIDE.track-contact.WHEEL.force.*`` (the cable's load on the ground and on each wheel).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..contact.cable import CableContact, CableSprocket, CableWheel
from ..formulations.absolute import AbsoluteSystem
from ..formulations.ancf import STEEL, CableForces, CableMesh
from ..formulations.contract import Build
from ..formulations.penalty import PAPER_C
from ..terrain.base import Flat
from .builder import build_vehicle
from .contact import contact_material, vehicle_contact
from .placement import vehicle_drivetrain, vehicle_placement

__all__ = ["ANCF_POINTS", "chain_velocities", "CONTACT_WEIGHTS", "ChainOutputs", "SPROCKET_CONTACTS", "build_ancf_vehicle", "cable_section",
           "check_materials", "check_terrain", "track_chain"]


def cable_section(spec, material=STEEL) -> tuple[float, float]:
    """``(area m², second moment m⁴)`` of a track link's cable element: ``spec.shoes.section_area`` and
    ``section_inertia``, by default the shoes' mass per length (A = shoe mass / (ρ pitch), so the loop weighs
    what the shoes weigh) and a solid rectangle of the shoe's width w holding that area
    (I = w t³ / 12, t = A / w: the APC's 0.0150 m² over 0.379 m, t = 39.6 mm, EI = 3.9e5 N m²)."""
    sh = spec.shoes
    area = sh.section_area if sh.section_area is not None else sh.mass / (material.rho * sh.pitch)
    if sh.section_inertia is not None:
        return float(area), float(sh.section_inertia)
    t = area / sh.width
    return float(area), float(sh.width * t**3 / 12.0)


def track_chain(vm, side: str, tension: float, material=STEEL) -> CableMesh:
    """The side's closed chain of cable elements at the assembled pose (world): element k is shoe k, straight
    from pin k to pin k+1 of the wrapped loop, its neighbours pinned to it (:meth:`CableMesh.pinned_loop`),
    every element stretched to carry ``tension`` N (stress-free length the chord / (1 + T / EA))."""
    trk = vm.geometry.tracks[side]
    y = vm.sides[side].y
    P = vm.origin + np.c_[trk.pins[:, 0], np.full(len(trk.pins), y), trk.pins[:, 1]]
    area, inertia = cable_section(vm.spec, material)
    return CableMesh.pinned_loop(P, area, inertia, material, strain=tension / (material.E * area))


def chain_velocities(vm, side: str, mesh: CableMesh, speed: float) -> tuple:
    """``(node_velocity (n_pos, 3), grad_velocity (n_node, 3))`` of a chain rolling with its vehicle at ``speed``
    m/s (the links' rolling start, :func:`~trackdyn.assembly.builder._set_speed`): the hull forward at
    ``speed``, every pin moving backwards along the loop's path at ``speed`` relative to it (the bottom strand at
    rest), each straight element's gradient turning with its chord, ``ġ = (1 + ε) (I - t tᵀ) ḋ / |d|``."""
    if not speed:
        return None, None
    from .builder import _pin_arclengths

    trk = vm.geometry.tracks[side]
    dt = 1e-6
    s_now = _pin_arclengths(trk)
    ahead = np.array([trk.path.point(x - speed * dt) for x in s_now])
    rel = (ahead - trk.pins) / dt
    nv = np.c_[speed + rel[:, 0], np.zeros(len(rel)), rel[:, 1]]
    gv = np.zeros((mesh.n_node, 3))
    for k, (a, b) in enumerate(mesh.conn):
        pa, pb = mesh.position[a], mesh.position[b]
        d = mesh.q0[b, :3] - mesh.q0[a, :3]
        L = np.linalg.norm(d)
        t = d / L
        dd = nv[pb] - nv[pa]
        g = np.linalg.norm(mesh.q0[a, 3:]) * (dd - t * (t @ dd)) / L
        gv[a] = gv[b] = g
    return nv, gv


def _law(ms, weight: float = 1.0) -> tuple:
    """A material's Kelvin-Voigt law ``(k, c, μ, v_s)`` for one cable point, k and c times ``weight``: the
    number of the links model's contact points that the cable point stands for (:data:`CONTACT_WEIGHTS`)."""
    m = contact_material("cable", ms)
    if m.kind != "kelvin-voigt":
        raise ValueError(f"ancf track: material law {ms.law!r}: the cable's contact takes Kelvin-Voigt materials "
                         "(the APC's, wallin-shabana Table 2), not smooth Hertz/Hooke ones")
    return (weight * m.stiffness, weight * m.damping, m.friction, m.slip_speed)


def check_terrain(terrain) -> None:
    """Refuse a terrain the cable's contact cannot take: flat ground, or a profile along +x (the events'
    obstacles and roads), naming it."""
    from ..terrain.base import ProfileTerrain

    if isinstance(terrain, Flat):
        return
    if isinstance(terrain, ProfileTerrain) and terrain.heading == 0.0:
        return
    raise ValueError(f"scenario.terrain: {type(terrain).__name__}: the 'ancf' fidelity's track contact takes flat "
                     "ground and profile terrains along +x (steps, gaps, half-rounds, trapezoids, roads) only")


def check_sprocket(spec) -> None:
    """Refuse a sprocket whose gaps the cable's sprocket contact cannot take (it seats the pins in the arc
    gaps of the single-pin profile), naming the field."""
    if getattr(spec.sprocket, "tooth", None) is not None:
        raise ValueError("vehicle sprocket.tooth: the 'ancf' fidelity's sprocket contact seats the pins in the "
                         "arc gaps of sprocket.arc_centre_radius / arc_radius, not han-sander-mao's tooth profile")


def check_materials(spec) -> None:
    """Refuse a spec whose track-contact materials the cable's contact cannot take (Kelvin-Voigt only), naming
    the material and its law."""
    sh, sus = spec.shoes, spec.suspension
    for role, name in (("shoes.material", sh.material), ("suspension.wheel_material", sus.wheel_material),
                       ("idler.material", spec.idler.material), ("sprocket.material", spec.sprocket.material)):
        law = spec.materials[name].law
        if law != "kelvin-voigt":
            raise ValueError(f"vehicle {role} = {name!r} has law {law!r}: the 'ancf' fidelity's track contact takes "
                             "Kelvin-Voigt materials only (the APC's, wallin-shabana Table 2)")


#: Table 2's k and c act per contact point, so a shoe's contact stiffness is the law's times the points its
#: geometry presents. The cable's points stand for the links model's (:mod:`trackdyn.assembly.contact`):
#: a road wheel or the idler meets a shoe's plate with its two halves either side of the guide gap (2), the
#: sprocket a pin with its gear pair (2), and the ground a pad at its four bottom corners, which the
#: :data:`ANCF_POINTS` points per element share (4 / points each); a terrain's convex edge meets a pad at two
#: stations across it (2).
CONTACT_WEIGHTS = {"wheel": 2.0, "sprocket": 2.0, "pad": 4.0, "edge": 2.0}
#: N s/m: a dashpot along each element's chord, the damping wallin-shabana-2013 §9 gives its compliant joints
#: (c = 1e5 N s/m, :data:`~trackdyn.formulations.penalty.PAPER_C`); the steel element has no damping of its own,
#: and without it the chain's axial modes (7.5 kHz: EA / l = 2e10 N/m on 9 kg) ring undamped at small steps
AXIAL_DAMPING = PAPER_C
#: contact points per element (ξ = 0, 1/4, 1/2, 3/4: the pin first); 4 keeps a road wheel within 0.6 mm of the
#: plate between two points (the sag of its 0.305 m circle over 38.5 mm)
ANCF_POINTS = 4


#: how the sprocket meets the chain: "teeth" (default: its tooth gaps on the pin points, the links model's
#: drive) or "circle" (its pin circle, a friction drive: slips under full throttle)
SPROCKET_CONTACTS = ("teeth", "circle")


class ChainOutputs:
    """Output provider: the link series every track fidelity records, from a pinned chain's elements
    (element k is shoe k): ``SIDE.shoe[k].pos.{x,y,z}`` (the element's middle, where a shoe body's origin
    sits), ``SIDE.shoe[k].tension`` (the axial force EA ε there) and ``SIDE.shoe[k].pin.force.{x,y,z}`` (the
    world force on the next element at the pin it shares with element k: minus element k+1's elastic force
    on that node, as an ideal pin's reaction on the next shoe)."""

    def __init__(self, cable, side: str):
        self.cable, self.side = cable, side
        n = cable.mesh.n_el
        self.mid = np.zeros((n, 3))
        self.pin_force = np.zeros((n, 3))

    def coupling_pairs(self):
        return []

    def bind(self, system) -> None:
        pass

    def initial_extra(self) -> dict:
        return {}

    def accumulate(self, ctx) -> None:
        if ctx.data is not None:
            return
        q, conn = self.cable.q, self.cable.mesh.conn  # gathered by the cable's own evaluation, just before
        self.mid[:] = 0.5 * (q[conn[:, 0], :3] + q[conn[:, 1], :3]) + 0.125 * self.cable.mesh.length[:, None] * (
            q[conn[:, 0], 3:] - q[conn[:, 1], 3:])
        self.pin_force[:] = -np.roll(self.cable.mesh._Qe[:, 0:3], -1, axis=0)

    def commit(self, state) -> None:
        pass

    def series(self) -> dict:
        out = {}
        for k in range(self.cable.mesh.n_el):
            s = f"{self.side}.shoe[{k}]"
            for a, ax in enumerate("xyz"):
                out[f"{s}.pos.{ax}"] = (self.mid[:, a], k)
                out[f"{s}.pin.force.{ax}"] = (self.pin_force[:, a], k)
            out[f"{s}.tension"] = (self.cable.tension, k)
        return out


def build_ancf_vehicle(sc, sprocket: str = "teeth", points: int = ANCF_POINTS, integrator_options=None) -> Build:
    """The scenario's vehicle with ANCF cable tracks, as a :class:`Build` for the generic runner (module
    docstring). Flat ground only; ``sprocket``: :data:`SPROCKET_CONTACTS`; ``points``: contact points per
    element, equally spaced from its pin (ξ = 0, 1/points, ...)."""
    if sprocket not in SPROCKET_CONTACTS:
        raise ValueError(f"ancf track: sprocket = {sprocket!r}: choose one of {list(SPROCKET_CONTACTS)}")
    if not (isinstance(points, (int, np.integer)) and points >= 1):
        raise ValueError(f"ancf track: points = {points!r}: expected an integer >= 1 (contact points per element)")
    spec, terrain, geo, z0 = vehicle_placement(sc)
    check_terrain(terrain)
    # the links builder on a copy of the geometry whose loops hold no shoes: the same hull, sprockets (turned
    # to the pins), tensioned idlers (the spring's anchor from the loop's pins) and suspension, no shoe bodies
    bare = replace(geo, tracks={s: replace(t, n_shoes=0) for s, t in geo.tracks.items()})
    vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=bare, speed=sc.speed)
    vm.geometry = geo
    m = vm.model
    sh, sus, ms = spec.shoes, spec.suspension, spec.materials
    T = spec.idler.tensioner.target_tension
    pad = _law(ms[sh.material], CONTACT_WEIGHTS["pad"] / points)
    if isinstance(terrain, Flat):
        ground, profile = (terrain.z, pad), None
    else:  # the profile's polyline over every x the run can reach (30 m/s at most), its convex edges
        x0 = sc.start_x - 30.0
        xs, zs = terrain.profile(x0 - terrain.origin[0], x0 + 60.0 + 30.0 * sc.t_end - terrain.origin[0])
        ground, profile = None, (xs + terrain.origin[0], zs, pad, _law(ms[sh.material], CONTACT_WEIGHTS["edge"]))
    ww, sw = CONTACT_WEIGHTS["wheel"], CONTACT_WEIGHTS["sprocket"]
    cables, contacts = [], []
    for side, info in vm.sides.items():
        mesh = track_chain(vm, side, T)
        cf = CableForces(mesh, f"{side}.track", pin_stiffness=sh.bending_stiffness,
                         pin_damping=sh.bending_damping, lateral=("chassis", (0.0, 1.0, 0.0)),
                         axial_damping=AXIAL_DAMPING)
        nv, gv = chain_velocities(vm, side, mesh, sc.speed)
        cf.add_to(m, node_velocity=nv, grad_velocity=gv)
        half = 0.5 * sus.wheel_width
        wheels = [CableWheel(w, sus.wheel_radius, _law(ms[sus.wheel_material], ww), half_width=half)
                  for w in info.wheels]
        wheels.append(CableWheel(info.idler, spec.idler.radius, _law(ms[spec.idler.material], ww),
                                 half_width=0.5 * spec.idler.width))
        sp = spec.sprocket
        teeth = []
        if sprocket == "teeth":
            teeth.append(CableSprocket(info.sprocket, sp.n_teeth, sp.arc_centre_radius, sp.arc_radius,
                                       sh.pin_radius, _law(ms[sp.material], sw), half_width=0.5 * sh.width,
                                       tip_radius=sp.addendum_radius))
        else:  # its pin circle, through the pin points (reach = the assembly radius)
            wheels.append(CableWheel(info.sprocket, sp.assembly_radius - sh.top, _law(ms[sp.material], sw),
                                     half_width=0.5 * sh.width))
        contacts.append(CableContact(cf, wheels, ground=ground, top=sh.top, bottom=sh.bottom,
                                     lateral=("chassis", (0.0, 1.0, 0.0)), name=f"{side}.track-contact",
                                     sprockets=teeth, xi=tuple(np.arange(points) / points), profile=profile))
        cables.append(cf)
    hull = vehicle_contact(vm, terrain)  # the hull and the wheels themselves against the ground
    idx = {n: k for k, n in enumerate(m.body_names)}
    drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
    providers = [hull]
    for side, cf, cc in zip(vm.sides, cables, contacts, strict=True):
        providers += [cf, cc, ChainOutputs(cf, side)]
    system = AbsoluteSystem(m, providers=providers + [drivetrain, *getattr(vm, "providers", [])], coupling="diagonal")
    return Build(spec, vm, system, hull, drivetrain, sc.integrator,
                 dict(sc.options or {}) if integrator_options is None else dict(integrator_options))
