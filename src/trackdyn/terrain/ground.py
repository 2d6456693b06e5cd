"""Ground models of a run: rigid ground, or a Winkler foundation of springs and dampers (han-sander-mao §5).

The ground model is a property of the terrain's *material*, not a terrain
type: every terrain (flat, inclined, profile obstacles and roads, meshes,
composites) can be rigid or a Winkler foundation, and the contact system picks
the law from the material (:mod:`trackdyn.contact.materials`: Winkler wins
over any shape material). :func:`with_ground` turns a terrain into the same
geometry made of a given ground; :func:`ground_material` gives the Winkler
material of a named soil, optionally with its stiffness, damping or friction
replaced.

The Winkler foundation (han-sander-mao Fig. 12: springs and dampers under the
track, distributed contact where a link lies flat) carries a pressure
``p = k_w z + c_w ż`` under each contact patch (``z`` the local sinkage,
``k_w`` the modulus of subgrade reaction, N/m³, ``c_w`` the damping per unit
area, N s/m³). The paper gives no values; the soil here is cited instead:

``medium-dense-sand``
    ``k_w``: Bowles, *Foundation Analysis and Design* (5th ed., 1996),
    Table 9-1: medium dense sand 9 600 - 80 000 kN/m³; the geometric mean of
    the range (the range spans a factor of 8), 2.77e7 N/m³.
    ``c_w = ρ V_La``, the dashpot per unit area of a surface foundation in
    vertical motion (Lysmer's analog, Gazetas 1991, "Foundation vibrations",
    Foundation Engineering Handbook ch. 15; Wolf 1994's cone model in the
    high-frequency limit), ``V_La = 3.4 V_s / (π (1 - ν))``, with
    ``V_s = 255 m/s`` (EN 1998-1 Table 3.1 ground type C, "deep deposits of
    dense or medium-dense sand", v_s,30 = 180 - 360 m/s: the geometric
    mean), ``ν = 0.3`` (Bowles Table 2-7, sand 0.2 - 0.4) and
    ``ρ = 1800 kg/m³`` (a medium dense sand's unit weight, 17 - 19 kN/m³):
    ``c_w`` = 7.1e5 N s/m³.
    Friction ``μ = tan φ`` with ``φ = 33°`` (Meyerhof 1956: medium dense
    sand 30 - 36°), 0.65.

Example
-------
>>> from trackdyn import terrain as tt
>>> soft = tt.with_ground(tt.Flat() + tt.Bump(0.1, 1.0, x=5.0), "winkler")
>>> soft.material.kind, round(soft.material.stiffness)
('winkler', 27712813)
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

from ..materials import WINKLER, Material
from .base import Composite, Plane, ProfileTerrain, Terrain, as_terrain

__all__ = ["GROUNDS", "SOILS", "WinklerSoil", "ground_material", "with_ground", "is_winkler"]

#: the ground models of ``scenario.options['terrain.ground']``
GROUNDS = ("rigid", "winkler")


@dataclass(frozen=True)
class WinklerSoil:
    """A soil as a Winkler foundation: modulus of subgrade reaction and the soil data of its damping.

    Parameters
    ----------
    name : str
    stiffness : float
        Modulus of subgrade reaction ``k_w``, N/m³.
    density : float
        Mass density ρ, kg/m³.
    shear_wave_speed : float
        ``V_s``, m/s.
    poisson : float
        Poisson's ratio ν.
    friction_angle : float
        Angle of internal friction φ, rad (track-soil friction ``tan φ``).
    source : str
        Where the numbers come from.
    """

    name: str
    stiffness: float
    density: float
    shear_wave_speed: float
    poisson: float
    friction_angle: float
    source: str = ""

    @property
    def lysmer_speed(self) -> float:
        """Lysmer's analog wave speed ``V_La = 3.4 V_s / (π (1 - ν))``, m/s (Gazetas 1991)."""
        return 3.4 * self.shear_wave_speed / (math.pi * (1.0 - self.poisson))

    @property
    def damping(self) -> float:
        """Dashpot per unit area ``c_w = ρ V_La``, N s/m³."""
        return self.density * self.lysmer_speed

    @property
    def friction(self) -> float:
        return math.tan(self.friction_angle)

    def material(self) -> Material:
        return Material.winkler(self.name, stiffness=self.stiffness, damping=self.damping, friction=self.friction)


SOILS = {
    "medium-dense-sand": WinklerSoil(
        "medium-dense-sand", stiffness=math.sqrt(9.6e6 * 8.0e7), density=1800.0,
        shear_wave_speed=math.sqrt(180.0 * 360.0), poisson=0.3, friction_angle=math.radians(33.0),
        source="k_w: Bowles 1996 Table 9-1 (geometric mean of 9 600-80 000 kN/m³); c_w = ρ V_La (Gazetas 1991) "
               "with V_s from EN 1998-1 Table 3.1 type C (geometric mean of 180-360 m/s), ν 0.3, ρ 1800 kg/m³; "
               "μ = tan 33° (Meyerhof 1956, medium dense sand 30-36°)"),
}
#: the soil of ``terrain.ground = "winkler"`` unless ``terrain.soil`` names another
DEFAULT_SOIL = "medium-dense-sand"


def ground_material(soil: str = DEFAULT_SOIL, stiffness=None, damping=None, friction=None,
                    where: str = "terrain") -> Material:
    """The Winkler :class:`Material` of a named soil, with any of its stiffness (N/m³), damping
    (N s/m³) or friction replaced; errors name ``where`` and the field."""
    if soil not in SOILS:
        raise ValueError(f"{where}.soil = {soil!r}: choose one of {sorted(SOILS)}")
    m = SOILS[soil].material()
    changes = {}
    for name, v, allow_zero in (("stiffness", stiffness, False), ("damping", damping, True),
                                ("friction", friction, True)):
        if v is None:
            continue
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{where}.{name} = {v!r}: expected a number") from None
        if isinstance(v, bool) or not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
            raise ValueError(f"{where}.{name} = {v!r}: must be {'non-negative' if allow_zero else 'positive'} "
                             "and finite")
        changes[name] = x
    return m.with_(**changes) if changes else m


def is_winkler(terrain) -> bool:
    """Whether any part of the terrain (or any profile piece) is Winkler ground."""
    for part in as_terrain(terrain).parts():
        mats = getattr(part, "materials", [part.material])
        if any(m is not None and m.kind == WINKLER for m in mats):
            return True
    return False


def with_ground(terrain: Terrain | None, ground: str = "winkler", material: Material | None = None) -> Terrain:
    """The same terrain geometry made of ``ground``: ``"rigid"`` leaves it as it is, ``"winkler"`` makes
    every part and every profile piece (obstacles included) of the Winkler ``material`` (default: the
    default soil, :data:`DEFAULT_SOIL`). ``None`` is the flat ground at z = 0."""
    from .base import Flat

    if ground not in GROUNDS:
        raise ValueError(f"terrain.ground = {ground!r}: choose one of {list(GROUNDS)}")
    t = Flat() if terrain is None else as_terrain(terrain)
    if ground == "rigid":
        return t
    mat = ground_material() if material is None else material
    if mat.kind != WINKLER:
        raise ValueError(f"with_ground: material {mat.name!r} is a {mat.kind!r} material, not a Winkler ground")
    return _remake(t, mat)


def _remake(t, mat):
    if isinstance(t, Composite):
        return Composite([_remake(p, mat) for p in t.parts()])
    if isinstance(t, ProfileTerrain):
        pieces = [dataclasses.replace(p, material=None) for p in t.pieces]
        return ProfileTerrain(pieces, t.base, mat, t.origin[:2], t.heading)
    if isinstance(t, Plane) or hasattr(t, "material"):
        out = copy.copy(t)  # planes and meshes: the geometry arrays are shared, only the material differs
        out.material = mat
        return out
    raise ValueError(f"terrain.ground: cannot remake a {type(t).__name__} of Winkler ground")  # pragma: no cover
