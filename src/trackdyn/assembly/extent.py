"""Where a vehicle's parts are in its own frame, from the derived geometry, before anything is built.

:func:`vehicle_extent` gives the :class:`VehicleExtent` of a spec: the ends
of its track loops, its lowest pad, its hull's extent, its wheels: what an
event needs to place the vehicle just in front of an obstacle and what a
classifier needs to tell the hull's nose from its belly. Frames: the spec's
vehicle frame (origin on the left sprocket axis at the centreline, x forward,
z up).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spec.vehicle import ConvexSpec, hull_part_extent
from .builder import vehicle_geometry

__all__ = ["VehicleExtent", "vehicle_extent"]


@dataclass(frozen=True)
class VehicleExtent:
    """Extent of a vehicle at its design pose, in the vehicle frame (m).

    ``front_x``/``rear_x``: the foremost/rearmost point of the track loops
    (pin line plus the pad below it); ``ground_z``: the lowest pad face;
    ``com``: the chassis centre of mass; ``hull_front_x``/``hull_rear_x``:
    the hull's extent (boxes and polyhedra); ``hull_boxes``: the boxes as
    (centre x, centre z, length, height); ``hull_polyhedra``: the convex
    polyhedra as their vertices ((x, y, z), ...); ``sprocket_height``: sprocket centre
    above the ground; ``wheel_x``: road-wheel centres of the left side.
    """

    front_x: float
    rear_x: float
    ground_z: float
    com: tuple
    hull_front_x: float
    hull_rear_x: float
    hull_boxes: tuple
    sprocket_height: float
    idler_x: float
    idler_z: float
    wheel_x: tuple
    n_shoes: int
    hull_polyhedra: tuple = ()

    @property
    def length(self) -> float:
        return self.front_x - self.rear_x

    @property
    def com_height(self) -> float:
        """Chassis centre of mass above the ground at the design pose, m."""
        return self.com[2] - self.ground_z

    def front_below(self, height: float) -> float:
        """Foremost point (vehicle frame x) of everything lower than ``height`` above the ground:
        the track, the hull boxes whose underside is below that height, and the parts of the hull
        polyhedra below it (a sloped nose counts only as far forward as it reaches below ``height``)."""
        x = self.front_x
        for cx, cz, sx, sz in self.hull_boxes:
            if cz - 0.5 * sz - self.ground_z < height:
                x = max(x, cx + 0.5 * sx)
        zc = self.ground_z + height
        for V in self.hull_polyhedra:
            x = max(x, _front_below(np.asarray(V, float), zc))
        return x


def _front_below(V, zc) -> float:
    """Largest x of the convex hull of V (n, 3) below the plane z = zc (-inf if none): its vertices below
    and the points where its edges (every vertex pair: a superset) cross the plane."""
    below = V[:, 2] < zc
    xs = [V[below, 0].max()] if below.any() else []
    for i in np.nonzero(below)[0]:
        for j in np.nonzero(~below)[0]:
            t = (zc - V[i, 2]) / (V[j, 2] - V[i, 2])
            xs.append(V[i, 0] + t * (V[j, 0] - V[i, 0]))
    return float(max(xs)) if xs else -np.inf


def vehicle_extent(spec) -> VehicleExtent:
    """The :class:`VehicleExtent` of a spec; raises :class:`~trackdyn.assembly.geometry.GeometryError`
    for an inconsistent geometry (before anything is simulated). A wheeled vehicle's:
    :func:`~trackdyn.assembly.wheeled.wheeled_extent`."""
    if getattr(spec, "running_gear", "tracks") == "wheels":
        from .wheeled import wheeled_extent

        return wheeled_extent(spec)
    geo = vehicle_geometry(spec)
    pad = spec.shoes.bottom
    xs = np.concatenate([t.pins[:, 0] for t in geo.tracks.values()])
    gz = geo.ground_z()
    parts = spec.chassis.hull
    boxes = tuple((b.center[0], b.center[2], b.size[0], b.size[2]) for b in parts if not isinstance(b, ConvexSpec))
    # plain tuples (not arrays): the extent stays comparable and hashable
    polys = tuple(tuple(tuple(float(c) for c in v) for v in p.vertices) for p in parts if isinstance(p, ConvexSpec))
    ext = [hull_part_extent(p) for p in parts]
    hf = max((hi[0] for _, hi in ext), default=float(xs.max()))
    hr = min((lo[0] for lo, _ in ext), default=float(xs.min()))
    left = geo.tracks["left"]
    ix, iz = geo.layouts["left"].idler_center(left.idler_shift)
    return VehicleExtent(
        front_x=float(xs.max()) + pad, rear_x=float(xs.min()) - pad, ground_z=float(gz),
        com=tuple(float(c) for c in spec.chassis.com), hull_front_x=float(hf), hull_rear_x=float(hr),
        hull_boxes=boxes, sprocket_height=float(spec.sprocket.location[1] - gz), idler_x=float(ix),
        idler_z=float(iz), wheel_x=tuple(float(w[0]) for w in geo.layouts["left"].wheels),
        n_shoes=int(left.n_shoes), hull_polyhedra=polys)
