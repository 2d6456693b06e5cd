"""Contact geometry of a built vehicle: shoe pads, guides and pins, wheels, sprockets, hull.

Shapes in each body's frame (origin at its centre of mass):

- shoe (frame: x from rear pin to front pin, z towards the wheels): the ground
  pad ``pad_length x width x bottom`` below the pin line, the wheel path plate
  ``0.98 pitch x width x top`` above it, the centre guide horn, a capsule at
  the front pin for the sprocket teeth and a sphere on the horn for the
  sprocket's lateral guide;
- road wheels and idler: two cylinder halves either side of the guide gap;
- rollers: one cylinder; sprocket: the parametric gear pair;
- hull: the spec's boxes and convex polyhedra (:func:`hull_shapes`).

Collision families keep the pair count bounded (an M113 has 250 shoes):
shoes never touch shoes, wheels touch shoes and the ground, the hull touches
the ground only. Contact Jacobians couple a shoe only with itself and the
ground ("diagonal" coupling), so the KKT pattern stays that of the track
chains.
"""

from __future__ import annotations

import numpy as np

from ..contact import ContactSystem, Material, shapes

__all__ = ["vehicle_contact", "CONTACT_METHODS", "contact_material", "terrain_materials", "sprocket_guide_clearance",
           "sprocket_shape", "hull_shapes"]


def hull_shapes(spec) -> list:
    """The collision shapes of a spec's hull in the chassis body frame (origin at its centre of mass)."""
    from ..spec.vehicle import ConvexSpec

    com = np.asarray(spec.chassis.com, float)
    out = []
    for part in spec.chassis.hull:
        if isinstance(part, ConvexSpec):
            out.append(shapes.ConvexPolyhedron(np.asarray(part.vertices, float) - com))
        else:
            out.append(shapes.Box(part.size, pos=np.asarray(part.center) - com))
    return out


def terrain_materials(terrain) -> list:
    """Every contact material a terrain (or a composite of terrains) uses."""
    out, seen, stack = {}, set(), [terrain]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        for m in list(getattr(t, "materials", []) or []) + [getattr(t, "material", None)]:
            if m is not None:
                out[m.name] = m
        parts = getattr(t, "parts", None)
        stack.extend(parts() if callable(parts) else (parts or []))
    return list(out.values())



def contact_material(name: str, ms) -> Material:
    """A contact :class:`Material` from a spec :class:`~trackdyn.spec.vehicle.MaterialSpec`."""
    if ms.law == "kelvin-voigt":
        return Material.kelvin_voigt(name, stiffness=ms.kn or 2e6, damping=ms.gn or 5e3, friction=ms.friction)
    return Material(name, young=ms.youngs_modulus, poisson=ms.poisson_ratio, restitution=max(ms.restitution, 1e-3),
                    friction=ms.friction, kn=ms.kn, kt=ms.kt, gn=ms.gn, gt=ms.gt)


def sprocket_shape(spec):
    """The sprocket's contact shape: :class:`~trackdyn.contact.shapes.Sprocket` (arc profile, with its lateral
    guide) or, with ``[sprocket.tooth]``, :class:`~trackdyn.contact.shapes.ToothSprocket` (no lateral guide)."""
    sp = spec.sprocket
    if sp.tooth is not None:
        t = sp.tooth
        if sp.lateral_backlash is not None:
            raise ValueError(f"vehicle {spec.name!r}: sprocket.lateral_backlash = {sp.lateral_backlash}: the "
                             "seven-parameter tooth sprocket has no lateral guide yet; remove it")
        return shapes.ToothSprocket(sp.n_teeth, t.face_angle, t.root_radius, t.tip_radius, t.tip_round_radius,
                                    t.seating_radius, t.flat_width, sp.gear_separation)
    return shapes.Sprocket(sp.n_teeth, sp.addendum_radius, sp.arc_centre_radius, sp.arc_radius, sp.gear_separation,
                           guide_clearance=sprocket_guide_clearance(spec))


def sprocket_guide_clearance(spec) -> float | None:
    """Distance (m) from the sprocket's mid-plane to its lateral guide face, or None (no guide).

    The guide acts on the sphere of radius ``guide_width/2`` on each shoe's horn: the face lies the spec's
    ``sprocket.lateral_backlash`` (the play of the sphere's centre, Chrono's backlash) plus that radius
    from the mid-plane.
    """
    b = spec.sprocket.lateral_backlash
    return None if b is None else b + 0.5 * spec.shoes.guide_width


#: the contact methods of :func:`vehicle_contact` (scenario option ``contact.method``)
CONTACT_METHODS = ("smc", "nsc")


def vehicle_contact(vm, terrain, method: str = "smc", **options) -> ContactSystem:
    """The contact of a built vehicle on ``terrain``: shapes, materials, families and exclusions.

    ``method="smc"`` (default): a :class:`ContactSystem` (smooth contact, a force provider; ``options`` go to
    it). ``method="nsc"``: an :class:`~trackdyn.contact.nsc.NscContact` with the same shapes, materials,
    families and exclusions (rigid contact, stepped by ``nsc-euler``; ``options`` go to it). NSC refuses
    what its narrow phase cannot correct for its envelope (profile and mesh terrains, Kelvin-Voigt
    materials) when the system is built, naming it (docs/contact-nsc.md).
    """
    if method not in CONTACT_METHODS:
        raise ValueError(f"contact.method = {method!r}: choose one of {list(CONTACT_METHODS)}")
    spec = vm.spec
    if method == "nsc":
        from ..contact.nsc import NscContact

        cs = NscContact(vm.model, terrain=terrain, **options)
    else:
        law = "hooke" if any(m.law == "hooke" for m in spec.materials.values()) else "hertz"
        # Chrono's SMC damping formula (korner-2024 ran Chrono): with the force clamped at zero it
        # rebounds livelier than the nominal restitution (e = 0.1 gives 0.25, docs/contact.md)
        options.setdefault("damping", "chrono")
        cs = ContactSystem(vm.model, terrain=terrain, law=law, **options)
    mats = {k: contact_material(k, v) for k, v in spec.materials.items()}
    sh, sus = spec.shoes, spec.suspension
    # the pad box spans the whole shoe height: only its bottom face meets the ground, and box corners are
    # resolved against the nearer face, so a thin box would cap the penetration at half its thickness
    pad = shapes.Box((sh.pad_length, sh.width, sh.bottom + sh.top), pos=(0.0, 0.0, 0.5 * (sh.top - sh.bottom)))
    plate = shapes.Box((0.98 * sh.pitch, sh.width, sh.top), pos=(0.0, 0.0, 0.5 * sh.top))
    horn = shapes.Box((sh.guide_length, sh.guide_width, sh.guide_height),
                      pos=(0.0, 0.0, sh.top + 0.5 * sh.guide_height))
    # the sprocket's lateral guide acts on spheres: one on top of the guide horn
    knob = shapes.Sphere(0.5 * sh.guide_width, pos=(0.0, 0.0, sh.top + sh.guide_height - 0.5 * sh.guide_width))
    pin = shapes.Capsule(sh.pin_radius, spec.sprocket.gear_separation + 0.04, pos=(0.5 * sh.pitch, 0.0, 0.0))
    half = 0.5 * (sus.wheel_width - sus.wheel_gap)
    off = 0.25 * (sus.wheel_width + sus.wheel_gap)
    iw = spec.idler.width
    ihalf = 0.5 * (iw - sus.wheel_gap)
    ioff = 0.25 * (iw + sus.wheel_gap)
    for side in vm.sides.values():
        for name in side.shoes:
            cs.add_shape(name, pad, material=mats[sh.material], family="pads")
            cs.add_shape(name, plate, material=mats[sh.body_material], family="plates", terrain=False)
            cs.add_shape(name, horn, material=mats[sh.body_material], family="guides", terrain=False)
            if spec.sprocket.tooth is None:  # the seven-parameter tooth sprocket has no lateral guide
                cs.add_shape(name, knob, material=mats[sh.body_material], family="sprocket-guides", terrain=False)
            cs.add_shape(name, pin, material=mats[sh.body_material], family="pins", terrain=False)
        for name in side.wheels:
            for y in (off, -off):
                cs.add_shape(name, shapes.Cylinder(sus.wheel_radius, half, pos=(0.0, y, 0.0)),
                             material=mats[sus.wheel_material], family="wheels")
        for y in (ioff, -ioff):
            cs.add_shape(side.idler, shapes.Cylinder(spec.idler.radius, ihalf, pos=(0.0, y, 0.0)),
                         material=mats[spec.idler.material], family="wheels")
        for name in side.rollers:
            cs.add_shape(name, shapes.Cylinder(spec.rollers.radius, spec.rollers.width),
                         material=mats[spec.rollers.material], family="wheels")
        cs.add_shape(side.sprocket, sprocket_shape(spec), material=mats[spec.sprocket.material], family="sprocket")
    for shape in hull_shapes(spec):
        cs.add_shape("chassis", shape, material=mats[spec.chassis.material], family="hull")
    families = ["pads", "plates", "guides", "sprocket-guides", "pins", "wheels", "sprocket", "hull"]
    for a in families:
        for b in families:
            cs.collide(a, b, False)
    cs.collide("wheels", "plates", True)
    cs.collide("wheels", "guides", True)
    cs.collide("sprocket", "pins", True)
    cs.collide("sprocket", "sprocket-guides", True)
    # Kelvin-Voigt vehicle materials (wallin-shabana Table 2) meet any ground with their own parameters
    for mat in mats.values():
        if mat.kind != "smc":  # (NSC refuses these pairs by name: its contact is rigid)
            for gm in terrain_materials(terrain):
                if gm.kind == "smc":
                    cs.set_pair(mat, gm, mat)
    cs.coupling("wheels", "plates", "diagonal")
    cs.coupling("wheels", "guides", "diagonal")
    cs.coupling("sprocket", "pins", "full")
    cs.coupling("sprocket", "sprocket-guides", "full")
    # a track never reaches the other side's wheels and sprocket (2.5 m across the hull). Without this
    # the "full" sprocket coupling declares a block for every shoe with *both* sprockets: 124 more pattern
    # blocks and two 6-row units in every shoe's factor column (1.42 -> 1.0 Mflop per factorisation)
    sides = list(vm.sides.values())
    for side in sides:
        rolling = [side.sprocket, side.idler, *side.wheels, *side.rollers]
        for other in sides:
            if other is not side:
                for shoe in other.shoes:
                    for body in rolling:
                        cs.exclude(shoe, body)
    return cs
