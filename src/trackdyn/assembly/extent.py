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

from .builder import vehicle_geometry

__all__ = ["VehicleExtent", "vehicle_extent"]


@dataclass(frozen=True)
class VehicleExtent:
    """Extent of a vehicle at its design pose, in the vehicle frame (m).

    ``front_x``/``rear_x``: the foremost/rearmost point of the track loops
    (pin line plus the pad below it); ``ground_z``: the lowest pad face;
    ``com``: the chassis centre of mass; ``hull_front_x``/``hull_rear_x``:
    the hull boxes' extent; ``sprocket_height``: sprocket centre above the
    ground; ``wheel_x``: road-wheel centres of the left side.
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

    @property
    def length(self) -> float:
        return self.front_x - self.rear_x

    @property
    def com_height(self) -> float:
        """Chassis centre of mass above the ground at the design pose, m."""
        return self.com[2] - self.ground_z

    def front_below(self, height: float) -> float:
        """Foremost point (vehicle frame x) of everything lower than ``height`` above the ground:
        the track, and the hull boxes whose underside is below that height."""
        x = self.front_x
        for cx, cz, sx, sz in self.hull_boxes:
            if cz - 0.5 * sz - self.ground_z < height:
                x = max(x, cx + 0.5 * sx)
        return x


def vehicle_extent(spec) -> VehicleExtent:
    """The :class:`VehicleExtent` of a spec; raises :class:`~trackdyn.assembly.geometry.GeometryError`
    for an inconsistent geometry (before anything is simulated)."""
    geo = vehicle_geometry(spec)
    pad = spec.shoes.bottom
    xs = np.concatenate([t.pins[:, 0] for t in geo.tracks.values()])
    gz = geo.ground_z()
    boxes = tuple((b.center[0], b.center[2], b.size[0], b.size[2]) for b in spec.chassis.hull)
    hf = max((cx + 0.5 * sx for cx, _, sx, _ in boxes), default=float(xs.max()))
    hr = min((cx - 0.5 * sx for cx, _, sx, _ in boxes), default=float(xs.min()))
    left = geo.tracks["left"]
    ix, iz = geo.layouts["left"].idler_center(left.idler_shift)
    return VehicleExtent(
        front_x=float(xs.max()) + pad, rear_x=float(xs.min()) - pad, ground_z=float(gz),
        com=tuple(float(c) for c in spec.chassis.com), hull_front_x=float(hf), hull_rear_x=float(hr),
        hull_boxes=boxes, sprocket_height=float(spec.sprocket.location[1] - gz), idler_x=float(ix),
        idler_z=float(iz), wheel_x=tuple(float(w[0]) for w in geo.layouts["left"].wheels),
        n_shoes=int(left.n_shoes))
