"""Terrains: flat and inclined ground, analytic obstacles, road profiles, height fields, meshes.

Any terrain can be the ground of a run (``ContactSystem(model, terrain=...)``)
and terrains compose with ``+``::

    import numpy as np
    from trackdyn import terrain as tt
    ground = tt.Flat() + tt.Step(0.6, x=3.0, material=timber) + tt.HalfRound(0.2, x=8.0)
    x, z = ground.profile(-1.0, 12.0)          # drawing polyline along x

A Winkler (flexible) ground is a terrain whose material is
``Material.winkler(...)`` (han-sander-mao §5): ``with_ground(terrain,
"winkler")`` makes any terrain of the default soil (:mod:`.ground`). The
named road profiles of han-sander-mao Table 2 (as read here) are
``road(name, x)`` (:mod:`.roads`).
"""

from .base import DEFAULT_MATERIAL, Composite, Flat, Plane, ProfileTerrain, Terrain, as_terrain
from .mesh import HeightField, TriangleMesh
from .profile import (
    Bump,
    Gap,
    HalfRound,
    Piece,
    RandomRoad,
    Sinusoid,
    Step,
    TrapezoidBarrier,
    TrapezoidDitch,
    Trough,
)
from .stairs import Stairs
from .ground import GROUNDS, SOILS, WinklerSoil, ground_material, is_winkler, with_ground
from .roads import ROADS, road

__all__ = [
    "Terrain", "Flat", "Plane", "ProfileTerrain", "Composite", "as_terrain", "DEFAULT_MATERIAL",
    "Piece", "HalfRound", "Step", "Gap", "TrapezoidBarrier", "TrapezoidDitch", "Bump", "Trough", "Sinusoid",
    "RandomRoad", "HeightField", "TriangleMesh", "Stairs",
    "GROUNDS", "SOILS", "WinklerSoil", "ground_material", "is_winkler", "with_ground", "ROADS", "road",
]
