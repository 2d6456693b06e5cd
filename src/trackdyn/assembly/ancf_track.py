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
from ..terrain.base import Flat
from .builder import build_vehicle
from .contact import contact_material, vehicle_contact
from .placement import vehicle_drivetrain, vehicle_placement

__all__ = ["SPROCKET_CONTACTS", "build_ancf_vehicle", "cable_section", "track_cable"]


def cable_section(spec, material=STEEL) -> tuple[float, float]:
    """``(area m², second moment m⁴)`` of the track cable (module docstring): ρA of the shoes, EI of the chain."""
    sh = spec.shoes
    rho_a = sh.mass / sh.pitch
    ei = sh.bending_stiffness * sh.pitch
    if not ei > 0:
        raise ValueError("ancf track: spec.shoes.bending_stiffness must be > 0 (the cable's EI is the chain's)")
    return rho_a / material.rho, ei / material.E


def track_cable(vm, side: str, tension: float, material=STEEL, samples: int = 64, per_shoe: int = 1) -> CableMesh:
    """The side's closed cable loop at the assembled pose (world), stretched to carry ``tension`` N.

    The loop's centre line is the smooth curve through the pins (cubic Hermite pieces with the tangents
    along the chords of the neighbouring pins: round the sprocket and the idler, arcs of their pin circles,
    not the chain's chords); its nodes are spaced equally along it, one element per shoe, each element's
    stress-free length its arc length / (1 + ε0) and the gradients (1 + ε0) t, ε0 = T / EA, so that the loop
    starts at the uniform tension T. The curve is 0.2-0.4 % longer than the chain's polygon (the arcs over
    the chords), which is the cable's own length at T, not a strain. ``per_shoe`` elements per shoe
    (default 1: the nodes then sit on the pins round the sprocket).
    """
    if not (isinstance(per_shoe, int) and per_shoe >= 1):
        raise ValueError(f"track_cable: per_shoe = {per_shoe!r}: expected an integer >= 1")
    trk = vm.geometry.tracks[side]
    y = vm.sides[side].y
    P = vm.origin + np.c_[trk.pins[:, 0], np.full(len(trk.pins), y), trk.pins[:, 1]]
    area, inertia = cable_section(vm.spec, material)
    eps0 = tension / (material.E * area)
    t = np.roll(P, -1, axis=0) - np.roll(P, 1, axis=0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    chords = np.linalg.norm(np.roll(P, -1, axis=0) - P, axis=1)
    n = len(P) * per_shoe
    # dense samples of the smooth curve through the pins, then n nodes equally spaced along it
    xi = np.linspace(0.0, 1.0, samples, endpoint=False)
    h00, h10 = 1 - 3 * xi**2 + 2 * xi**3, xi - 2 * xi**2 + xi**3
    h01, h11 = 3 * xi**2 - 2 * xi**3, -xi**2 + xi**3
    Q = (h00[None, :, None] * P[:, None] + h10[None, :, None] * (chords[:, None] * t)[:, None]
         + h01[None, :, None] * np.roll(P, -1, axis=0)[:, None]
         + h11[None, :, None] * (chords[:, None] * np.roll(t, -1, axis=0))[:, None]).reshape(-1, 3)
    seg = np.linalg.norm(np.roll(Q, -1, axis=0) - Q, axis=1)
    s = np.r_[0.0, np.cumsum(seg)]
    total = s[-1]
    Qc = np.vstack([Q, Q[:1]])
    # start at the pin in the middle of the sprocket's wrap, so the nodes there sit on pins, in its gaps
    lay = vm.geometry.layouts[side]
    r = np.hypot(trk.pins[:, 0] - lay.sprocket[0], trk.pins[:, 1] - lay.sprocket[1])
    on = np.nonzero(np.abs(r - vm.spec.sprocket.assembly_radius) < 0.01)[0]
    start = int(on[len(on) // 2]) if len(on) else 0
    target = (s[start * samples] + np.arange(n) * total / n) % total
    nodes = np.array([np.interp(target, s, Qc[:, c]) for c in range(3)]).T
    ahead = np.array([np.interp((target + 1e-4 * total / n) % total, s, Qc[:, c]) for c in range(3)]).T
    behind = np.array([np.interp((target - 1e-4 * total / n) % total, s, Qc[:, c]) for c in range(3)]).T
    tang = ahead - behind
    tang /= np.linalg.norm(tang, axis=1, keepdims=True)
    conn = np.c_[np.arange(n), (np.arange(n) + 1) % n]
    mesh = CableMesh(np.hstack([nodes, (1.0 + eps0) * tang]), conn, area, inertia, material,
                     length=np.full(n, total / n / (1.0 + eps0)))
    # the gradients relaxed with the nodes held (a cubic round 0.6 rad of sprocket per element cannot run at
    # uniform speed: docs/joints/ancf.md), so the loop starts with its stiffest modes at rest
    q = mesh.static(np.array([6 * k + c for k in range(n) for c in range(3)]), gravity=(0.0, 0.0, 0.0))
    return CableMesh(q, conn, area, inertia, material, length=mesh.length)


def _law(ms) -> tuple:
    m = contact_material("cable", ms)
    if m.kind != "kelvin-voigt":
        raise ValueError(f"ancf track: material law {ms.law!r}: the cable's contact takes Kelvin-Voigt materials "
                         "(the APC's, wallin-shabana Table 2), not smooth Hertz/Hooke ones")
    return (m.stiffness, m.damping, m.friction, m.slip_speed)


#: how the sprocket meets the cable: "circle" (its pin circle, friction only: the settled figures of
#: tests/integration/test_ancf_vehicle.py) or "teeth" (its tooth gaps on the pin points; the APC on them did not
#: settle yet: 6-15 mm/s at 1.5 s, tensioners at 5.4 / 7.7 kN against 15.0 / 15.6 kN on the circle, the cable
#: bowing between pins that sink into the gap roots, 0.225-0.233 m against the 0.249 m pitch circle)
SPROCKET_CONTACTS = ("circle", "teeth")


def build_ancf_vehicle(sc, sprocket: str = "circle") -> Build:
    """The scenario's vehicle with ANCF cable tracks, as a :class:`Build` for the generic runner (module
    docstring). Flat ground only; ``sprocket``: :data:`SPROCKET_CONTACTS`."""
    if sprocket not in SPROCKET_CONTACTS:
        raise ValueError(f"ancf track: sprocket = {sprocket!r}: choose one of {list(SPROCKET_CONTACTS)}")
    spec, terrain, geo, z0 = vehicle_placement(sc)
    if not isinstance(terrain, Flat):
        raise ValueError(f"ancf track: terrain {type(terrain).__name__}: the cable's ground contact is flat "
                         "ground only (yet)")
    if sc.speed:
        raise ValueError("ancf track: scenario.speed: the cable loop starts at rest")
    # the links builder on a copy of the geometry whose loops hold no shoes: the same hull, sprockets (turned
    # to the pins), tensioned idlers (the spring's anchor from the loop's pins) and suspension, no shoe bodies
    bare = replace(geo, tracks={s: replace(t, n_shoes=0) for s, t in geo.tracks.items()})
    vm = build_vehicle(spec, origin=(sc.start_x, 0.0, z0), geometry=bare)
    vm.geometry = geo
    m = vm.model
    sh, sus, ms = spec.shoes, spec.suspension, spec.materials
    T = spec.idler.tensioner.target_tension
    ground = (terrain.z, _law(ms[sh.material]))
    cables, contacts = [], []
    for side, info in vm.sides.items():
        cf = CableForces(track_cable(vm, side, T), f"{side}.track").add_to(m)
        half = 0.5 * sus.wheel_width
        wheels = [CableWheel(w, sus.wheel_radius, _law(ms[sus.wheel_material]), half_width=half)
                  for w in info.wheels]
        wheels.append(CableWheel(info.idler, spec.idler.radius, _law(ms[spec.idler.material]),
                                 half_width=0.5 * spec.idler.width))
        sp = spec.sprocket
        teeth = []
        if sprocket == "teeth":
            teeth.append(CableSprocket(info.sprocket, sp.n_teeth, sp.arc_centre_radius, sp.arc_radius,
                                       sh.pin_radius, _law(ms[sp.material]), half_width=0.5 * sh.width))
        else:  # its pin circle, through the pin points (reach = the assembly radius)
            wheels.append(CableWheel(info.sprocket, sp.assembly_radius - sh.top, _law(ms[sp.material]),
                                     half_width=0.5 * sh.width))
        contacts.append(CableContact(cf, wheels, ground=ground, top=sh.top, bottom=sh.bottom,
                                     lateral=("chassis", (0.0, 1.0, 0.0)), name=f"{side}.track-contact",
                                     sprockets=teeth))
        cables.append(cf)
    hull = vehicle_contact(vm, terrain)  # the hull and the wheels themselves against the ground
    idx = {n: k for k, n in enumerate(m.body_names)}
    drivetrain = vehicle_drivetrain(spec, idx, vm.sides, sc.driver)
    providers = [hull]
    for cf, cc in zip(cables, contacts, strict=True):
        providers += [cf, cc]
    system = AbsoluteSystem(m, providers=providers + [drivetrain, *getattr(vm, "providers", [])], coupling="diagonal")
    return Build(spec, vm, system, hull, drivetrain, sc.integrator, dict(sc.options or {}))
