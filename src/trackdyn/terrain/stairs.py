"""A flight of stairs as a profile piece: vertical risers, horizontal treads, sharp nosings.

:class:`Stairs` is a :class:`~trackdyn.terrain.profile.Piece`, so it composes
with the other profile pieces along a path (``Flat() + Stairs(n=5, x=2.0)``)
and its edges are exact convex corners for the contact system and the track
planes of the massless model. The first riser stands at ``x``; the ground
continues at the top landing (``n * riser`` higher) after the last riser.

Example
-------
>>> from trackdyn import terrain as tt
>>> ground = tt.Flat() + tt.Stairs(riser=0.17, tread=0.28, n=5, x=2.0)
>>> float(ground.height(2.0 + 0.28 * 4 + 0.1))
0.8500000000000001
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .profile import Piece, _num

__all__ = ["Stairs"]


@dataclass(frozen=True)
class Stairs(Piece):
    """``n`` steps of height ``riser`` (m) and depth ``tread`` (m), the first riser at ``x``.

    A negative ``riser`` makes a flight going down. Defaults: 0.17 m / 0.28 m
    (a common building stair, 31.3° pitch), 5 steps.
    """

    riser: float = 0.17
    tread: float = 0.28
    n: int = 5

    def __post_init__(self):
        _num(self.riser, "Stairs: riser", allow_negative=True)
        if self.riser == 0:
            raise ValueError("Stairs: riser must not be zero")
        _num(self.tread, "Stairs: tread")
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise ValueError(f"Stairs: n must be a positive integer, got {self.n!r}")
        _num(self.x, "Stairs: x", allow_negative=True)

    @property
    def extent(self) -> float:
        """From the first to the last riser, m (the top landing is the ground after the piece)."""
        return (self.n - 1) * self.tread

    @property
    def pitch(self) -> float:
        """Angle of the line through the nosings, rad."""
        return math.atan2(self.riser, self.tread)

    def level_change(self) -> float:
        return self.n * self.riser

    def nosings(self, base: float = 0.0):
        """(x, z) of the top corner of every riser, m."""
        return [(self.x + k * self.tread, base + (k + 1) * self.riser) for k in range(self.n)]

    def curve(self, base):
        out = []
        for k in range(self.n):
            x = self.x + k * self.tread
            z0 = base + k * self.riser
            out.append(("seg", (x, z0, x, z0 + self.riser)))
            if k < self.n - 1:
                out.append(("seg", (x, z0 + self.riser, x + self.tread, z0 + self.riser)))
        return out
