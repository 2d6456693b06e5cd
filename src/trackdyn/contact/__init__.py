"""Smooth contact: shapes on bodies, materials, laws with friction history, and the terrain.

Public API::

    from trackdyn.contact import ContactSystem, Material, shapes
    cs = ContactSystem(model, terrain=trackdyn.terrain.Flat())
    cs.add_shape(body, shapes.Cylinder(0.305, 0.18), material=steel, family="wheels")
    sim = td.Simulation(model, providers=[cs])

See ``docs/contact.md`` for the laws (thesis eq. 2.16-2.19, Chrono's SMC
conventions, han-sander-mao eq. 28, Winkler ground) and the geometry.
"""

from . import shapes
from .materials import Material, effective_moduli
from .shapes import Box, Capsule, ConvexPolyhedron, Cylinder, PointCircle, Segment, Sphere, Sprocket
from .system import ContactSystem

__all__ = ["ContactSystem", "Material", "effective_moduli", "shapes", "Sphere", "Box", "ConvexPolyhedron", "Cylinder",
           "Capsule", "PointCircle", "Segment", "Sprocket"]
