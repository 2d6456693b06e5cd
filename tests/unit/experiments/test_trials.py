"""Trial machinery: vehicle extent, moving average, failure classification, the driver-seat acceleration."""

import numpy as np
import pytest

from trackdyn import spec as S
from trackdyn.assembly.builder import vehicle_geometry
from trackdyn.experiments.trials import VehicleExtent, classify_failure, moving_average, vehicle_extent


def test_m113_extent_from_its_geometry():
    spec = S.get("m113")
    ext = vehicle_extent(spec)
    geo = vehicle_geometry(spec)
    assert ext.ground_z == pytest.approx(geo.ground_z())
    # the foremost pins wrap the sprocket's pin circle (radius 0.245 m, 10 pins): within the chord's sagitta
    r = spec.sprocket.assembly_radius
    assert r * np.cos(np.pi / 10) - 1e-9 <= ext.front_x - spec.shoes.bottom <= r + 1e-9
    assert ext.sprocket_height == pytest.approx(spec.sprocket.location[1] - geo.ground_z())
    # the hull nose (x 0 .. 0.3, underside 0.83 m above the ground) counts only for obstacles above it
    assert ext.front_below(0.5) == ext.front_x
    assert ext.front_below(1.0) == pytest.approx(0.3)
    assert ext.length > 4.4


def test_refused_geometry_raises_before_anything_runs():
    from trackdyn.assembly.geometry import GeometryError

    with pytest.raises(GeometryError, match="intersects"):
        vehicle_extent(S.get("m113").with_sprocket_offset(dx=-0.2, dz=-0.2))


def test_moving_average_keeps_linear_signals_and_averages_noise():
    t = np.linspace(0, 1, 201)
    y = 3.0 * t + 1.0
    m = moving_average(y, 11)
    assert np.allclose(m[5:-5], y[5:-5], atol=1e-12)
    alt = np.where(np.arange(200) % 2 == 0, 1.0, -1.0)
    assert np.max(np.abs(moving_average(alt, 10)[5:-5])) < 1e-12
    assert np.array_equal(moving_average(y, 1), y)


class _Samples:
    """Monitor samples of a constructed last window (the classifier's input)."""

    def __init__(self, **cols):
        n = 201
        base = {"t": np.linspace(0.0, 2.0, n), "x": np.zeros(n), "z": np.full(n, 1.0), "v": np.zeros(n),
                "track_v": np.zeros(n), "hull_fn": np.zeros(n), "hull_x_v": np.full(n, np.nan)}
        base.update({k: np.broadcast_to(v, (n,)).astype(float) for k, v in cols.items()})
        self.samples = base

    def arr(self, k):
        return np.asarray(self.samples[k], float)


EXT = VehicleExtent(front_x=0.28, rear_x=-4.3, ground_z=-0.58, com=(-1.98, 0.0, 0.48), hull_front_x=0.3,
                    hull_rear_x=-4.45, hull_boxes=(), sprocket_height=0.58, idler_x=-3.95, idler_z=-0.12,
                    wheel_x=(-0.6,), n_shoes=63)
M = 7800.0


@pytest.mark.parametrize("cols, mode", [
    ({"hull_fn": 20e3, "hull_x_v": 0.2}, "nose-in"),            # hull front pressed on the obstacle
    ({"hull_fn": 20e3, "hull_x_v": -2.0}, "high-centred"),       # belly on the edge
    ({"track_v": 1.5, "v": 0.05}, "track slip"),                 # tracks run, the hull does not move
    ({"track_v": 0.01, "v": 0.0}, "stalled"),                    # nothing turns
    ({"hull_fn": 1e3, "hull_x_v": 0.2, "track_v": 1.0}, "track slip"),  # a light touch is not a failure mode
])
def test_failure_modes(cols, mode):
    assert classify_failure(_Samples(**cols), EXT, M) == mode


def test_fell_in_only_when_asked():
    mon = _Samples(z=np.linspace(1.0, 0.2, 201))
    assert classify_failure(mon, EXT, M, fall_depth=0.4, z_start=1.0) == "fell in"
    assert classify_failure(mon, EXT, M) == "stalled"


@pytest.mark.parametrize("dx, dz", [(0.1, 0.0), (0.2, 0.2), (-0.1, 0.1), (0.0, -0.1)])
def test_geometry_offsets_give_a_closed_loop_of_whole_shoes(dx, dz):
    # korner-2024 §5.1: a moved sprocket changes the loop length; the shoe count is re-derived and the
    # idler's tensioner travel takes up the rest, so the pins still close the loop at the shoe pitch
    from trackdyn.experiments.events import resolve_vehicle

    base = S.get("m113")
    spec = resolve_vehicle(base, sprocket_dx=dx, sprocket_dz=dz)
    assert spec.sprocket.location == pytest.approx((base.sprocket.location[0] + dx, base.sprocket.location[1] + dz))
    geo = vehicle_geometry(spec)
    t = geo.tracks["left"]
    pins = np.vstack([t.pins, t.pins[:1]])
    gaps = np.linalg.norm(np.diff(pins, axis=0), axis=1)
    assert np.allclose(gaps, spec.shoes.pitch, rtol=0, atol=1e-9)
    assert t.n_shoes == len(t.pins) and abs(t.idler_shift) <= spec.idler.tensioner.travel
    # the shoe count follows the loop length: a whole number of pitches within one shoe
    n0 = vehicle_geometry(base).tracks["left"].n_shoes
    assert abs(t.n_shoes - n0) <= int(np.ceil((abs(dx) + abs(dz)) * 2 / spec.shoes.pitch)) + 1
    assert vehicle_extent(spec).n_shoes == t.n_shoes
