"""Named road profiles: the four of han-sander-mao Table 2 as trackdyn reads them.

han-sander-mao run their crawler over "four types of road profiles"
(§7, Table 2) on Winkler ground and find that "a trough produce[s] the
greatest seat vibrations". Table 2 itself is a figure: the seed text carries
neither its drawings nor its numbers, and the text names only the trough.
trackdyn's reading, stated here and in ``docs/terrain.md`` so that it can be
replaced when the table's numbers are known:

``bump``
    Cosine bump ``z = h/2 (1 - cos(2π s/L))``, h = 0.10 m, L = 1.0 m.
``trough``
    Cosine trough, the bump upside down: depth 0.10 m over 1.0 m.
``sinusoid``
    A wavy road ``z = A sin(2π s/λ)``, A = 0.10 m, λ = 2.0 m, over 40 m.
``iso8608``
    A random road of ISO 8608 class D (the class of unpaved and rough roads),
    over 40 m, seed 0.

The shapes and sizes are those of the ``ride`` event's roads (the same names
and defaults, so ``trackdyn event ride --road NAME`` and a scenario's
``terrain.road = NAME`` give the same profile). Every profile is a
:class:`~trackdyn.terrain.profile.Piece`: it lies on rigid or on Winkler
ground (:func:`~trackdyn.terrain.ground.with_ground`).

Example
-------
>>> from trackdyn import terrain as tt
>>> ground = tt.Flat() + tt.road("trough", x=5.0)
>>> float(ground.height(5.5))
-0.1
"""

from __future__ import annotations

import dataclasses

from .profile import Bump, Piece, RandomRoad, Sinusoid, Trough

__all__ = ["ROADS", "ROAD_PARAMETERS", "road"]

#: the road names, in han-sander-mao Table 2's order as read here
ROADS = ("bump", "trough", "sinusoid", "iso8608")

#: name -> (piece class, default parameters (SI units), what it is)
ROAD_PARAMETERS = {
    "bump": (Bump, {"height": 0.10, "length": 1.0}, "cosine bump, 0.10 m high over 1.0 m"),
    "trough": (Trough, {"depth": 0.10, "length": 1.0}, "cosine trough, 0.10 m deep over 1.0 m"),
    "sinusoid": (Sinusoid, {"amplitude": 0.10, "wavelength": 2.0, "length": 40.0},
                 "sinusoidal road, amplitude 0.10 m, wavelength 2.0 m, over 40 m"),
    "iso8608": (RandomRoad, {"road_class": "D", "length": 40.0, "seed": 0},
                "ISO 8608 class D random road over 40 m, seed 0"),
}


def road(name: str, x: float = 0.0, **changes) -> Piece:
    """The named road profile starting at path coordinate ``x`` (m), with any default parameter changed.

    Raises ``ValueError`` naming the road, the parameter and the reason.
    """
    if name not in ROAD_PARAMETERS:
        raise ValueError(f"terrain.road = {name!r}: choose one of {list(ROADS)}")
    cls, params, _ = ROAD_PARAMETERS[name]
    fields = {f.name for f in dataclasses.fields(cls)} - {"x"}
    unknown = sorted(set(changes) - fields)
    if unknown:
        raise ValueError(f"terrain.road {name!r}: unknown parameter(s) {unknown}; known: {sorted(fields)}")
    try:
        return cls(**{**params, **changes}, x=x)
    except (TypeError, ValueError) as err:
        raise ValueError(f"terrain.road {name!r}: {err}") from None
