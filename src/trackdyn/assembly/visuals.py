"""Visual shapes of a built vehicle (drawn by the animation and the 3-D viewer; no effect on dynamics)."""

from __future__ import annotations

import numpy as np

from ..contact.shapes import ConvexPolyhedron
from ..mbs import visuals as V
from .contact import hull_shapes, sprocket_shape

__all__ = ["add_vehicle_visuals"]

HULL = "#6b7a5a"
SHOE = "#3c4248"
WHEEL = "#2a2a2a"
HUB = "#8a8f94"
SPROCKET = "#9a8a60"


def add_vehicle_visuals(vm) -> None:
    """Attach the hull (boxes and convex polyhedra, as meshes), wheels, arms, sprockets and shoes to the bodies of ``vm.model``.

    The hull is drawn in the chassis body frame: a vehicle whose chassis centre of mass is not the spec's
    (the massless track lumps each loop's mass into the hull: ``vm.com``) has its hull shifted to match.
    A vehicle without shoe bodies (the massless track) gets its wheels, arms, sprockets and hull only.
    """
    spec, m = vm.spec, vm.model
    shift = np.asarray(spec.chassis.com, float) - np.asarray(getattr(vm, "com", spec.chassis.com), float)
    for shape in hull_shapes(spec):
        if isinstance(shape, ConvexPolyhedron):
            verts = shape.vertices @ shape.rot.T + np.asarray(shape.pos) + shift
            m.add_visual("chassis", V.Mesh(vertices=tuple(map(tuple, verts)),
                                           faces=tuple(map(tuple, shape.triangles())), color=HULL))
        else:
            m.add_visual("chassis", V.Box(size=tuple(2.0 * shape.half), center=tuple(np.asarray(shape.pos) + shift),
                                          color=HULL))
    sus, sh, sp = spec.suspension, spec.shoes, spec.sprocket
    half = 0.5 * (sus.wheel_width - sus.wheel_gap)
    off = 0.25 * (sus.wheel_width + sus.wheel_gap)
    shoe_pad = V.Box(size=(sh.pad_length, sh.width, sh.bottom), center=(0.0, 0.0, -0.5 * sh.bottom), color=SHOE)
    shoe_body = V.Box(size=(0.95 * sh.pitch, 0.8 * sh.width, sh.top), center=(0.0, 0.0, 0.5 * sh.top), color=SHOE)
    horn = V.Box(size=(sh.guide_length, sh.guide_width, sh.guide_height),
                 center=(0.0, 0.0, sh.top + 0.5 * sh.guide_height), color=HUB)
    for side in vm.sides.values():
        for name in side.shoes:
            for s in (shoe_pad, shoe_body, horn):
                m.add_visual(name, s)
        for name in side.wheels:
            for y in (off, -off):
                m.add_visual(name, V.Cylinder(radius=sus.wheel_radius, length=half, axis=(0, 1, 0),
                                              center=(0.0, y, 0.0), color=WHEEL))
        for name in side.arms:
            m.add_visual(name, V.Box(size=(sus.arm_length, 0.06, 0.06), color=HUB))
        m.add_visual(side.idler, V.Cylinder(radius=spec.idler.radius, length=spec.idler.width, axis=(0, 1, 0),
                                            color=WHEEL))
        for name in side.rollers:
            m.add_visual(name, V.Cylinder(radius=spec.rollers.radius, length=spec.rollers.width, axis=(0, 1, 0),
                                          color=WHEEL))
        for y in (0.5 * sp.gear_separation, -0.5 * sp.gear_separation):
            if sp.tooth is not None:  # han-sander-mao's seven-parameter tooth: the contact shape's outline
                m.add_visual(side.sprocket, V.Extrusion(tuple(map(tuple, sprocket_shape(spec).profile(6))), width=0.03,
                                                        offset=y, color=SPROCKET))
                continue
            m.add_visual(side.sprocket, V.sprocket(sp.n_teeth, sp.addendum_radius, sp.arc_radius, sp.arc_centre_radius,
                                                   width=0.03, offset=y, color=SPROCKET))
        if getattr(side, "frame", None):
            m.add_visual(side.frame, V.Box(size=(0.6 * geo_span(vm), 0.25, 0.25), color=HULL))


def geo_span(vm) -> float:
    """Distance (m) between the sprocket and idler centres of the left side (the frame's drawn length)."""
    lay = vm.geometry.layouts["left"]
    ix, iz = lay.idler_center(vm.geometry.tracks["left"].idler_shift)
    return float(np.hypot(ix - lay.sprocket[0], iz - lay.sprocket[1]))
