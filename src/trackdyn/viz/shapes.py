"""Visual shapes attached to bodies with :meth:`Model.add_visual <trackdyn.mbs.model.Model.add_visual>`.

The shapes are plain data of a model's bodies, so they live in
:mod:`trackdyn.mbs.visuals` (below ``assembly``, which attaches them to a
vehicle); this module re-exports them for plots, animations, the viewer and
user code. Tessellation and projection live in :mod:`trackdyn.viz.geometry`.

Example
-------
>>> import trackdyn as td
>>> from trackdyn.viz import shapes as S
>>> m = td.Model()
>>> wheel = m.add_body("wheel", mass=30.0, inertia=[1.0, 2.0, 1.0])
>>> m.add_visual(wheel, S.Cylinder(radius=0.3, length=0.2, axis=(0, 1, 0), color="#404040"))
>>> m.add_visual(wheel, S.sprocket(n_teeth=10, outer_radius=0.26, arc_radius=0.089,
...                                arc_center_radius=0.3, width=0.05, offset=0.12))
"""

from ..mbs.visuals import (
    EXTRUSION_PLANES,
    SHAPES,
    Box,
    Cylinder,
    Extrusion,
    Mesh,
    Polyline,
    Sphere,
    shape_from_dict,
    sprocket,
    sprocket_outline,
)

__all__ = [
    "Box",
    "Cylinder",
    "Sphere",
    "Extrusion",
    "Polyline",
    "Mesh",
    "SHAPES",
    "shape_from_dict",
    "sprocket_outline",
    "sprocket",
    "EXTRUSION_PLANES",
]
