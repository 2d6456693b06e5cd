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
    # the hull's nose (the lower front plate's top edge, foremost at x = hull_front_x, 0.95 m above the settled
    # ground) counts only for obstacles reaching up to its plates: a 0.5 m step meets the track first
    hull_x = max(v[0] for h in spec.chassis.hull for v in h.vertices)
    assert ext.hull_front_x == pytest.approx(hull_x)
    assert ext.front_below(0.5) == ext.front_x
    assert ext.front_below(1.2) == pytest.approx(hull_x)  # above the nose (0.99-1.0 m at the design pose)
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


# ---------------------------------------------------------------------------------------------- mechanism
from trackdyn.experiments.trials import LIMITED_BY, G, mechanism_summary, slip_ratio

T_MAX = 9519.0  # N m, korner-2024 Table 3.10 at a standing sprocket


def _history(track_v, ground_v, torque, limit=T_MAX, **cols):
    """A monitor history of the last 2 s with per-track columns, as the Monitor samples them."""
    slip = slip_ratio(track_v, ground_v)
    per_track = {}
    for side in ("left", "right"):
        per_track.update({f"{side}_track_v": track_v, f"{side}_ground_v": ground_v, f"{side}_slip": slip,
                          f"{side}_torque": torque, f"{side}_torque_limit": limit})
    return _Samples(track_v=track_v, v=ground_v, **per_track, **cols)


def test_slip_ratio_of_a_track():
    assert slip_ratio(1.5, 0.0) == 1.0              # the track runs, the hull stands
    assert slip_ratio(2.0, 2.0) == 0.0              # rolling without slip
    assert slip_ratio(2.0, 1.0) == pytest.approx(0.5)
    assert slip_ratio(1.0, 2.0) == pytest.approx(-0.5)  # the track slower than the ground: a skid
    assert slip_ratio(0.0, 0.0) == 0.0              # a standing vehicle with standing tracks


def test_slip_limited_history_is_track_slip():
    # full throttle (the torque at the map's limit at the track's 1.5 m/s), tracks running, hull standing
    mon = _history(track_v=1.5, ground_v=0.05, torque=8000.0, limit=8000.0)
    mode = classify_failure(mon, EXT, M)
    assert mode == "track slip" and LIMITED_BY[mode] == "track slip"
    s = mechanism_summary(mon, M)
    assert s["left"]["slip"] == pytest.approx(1.45 / 1.5) and s["left"]["torque_fraction"] == pytest.approx(1.0)


def test_stalled_sprockets_at_the_map_limit_are_torque_limited():
    mon = _history(track_v=0.02, ground_v=0.0, torque=T_MAX)
    mode = classify_failure(mon, EXT, M)
    assert mode == "torque-limited" and LIMITED_BY[mode] == "torque-limited"
    assert mechanism_summary(mon, M)["tracks"] == "stalled at the map's limit"


def test_stalled_sprockets_below_the_map_limit_are_not_torque_limited():
    # the driver does not ask for the torque the map could give: the limit is not the powertrain's
    assert classify_failure(_history(track_v=0.02, ground_v=0.0, torque=0.3 * T_MAX), EXT, M) == "stalled"


@pytest.mark.parametrize("x_hull, mode", [(0.2, "nose-in"), (-2.0, "high-centred")])
def test_hull_contact_history_is_geometry_even_with_slipping_tracks(x_hull, mode):
    # the hull carries 20 kN (26 % of the chassis weight): the hull's geometry limits, not the tracks
    mon = _history(track_v=1.5, ground_v=0.05, torque=8000.0, limit=8000.0, hull_fn=20e3, hull_x_v=x_hull)
    got = classify_failure(mon, EXT, M)
    assert got == mode and LIMITED_BY[got] == "geometry"
    s = mechanism_summary(mon, M)
    assert s["tracks"] == "slipping"  # what the tracks did under the hull's limit
    assert s["hull_force_N"] == pytest.approx(20e3) and s["hull_x_m"] == pytest.approx(x_hull)
    assert s["hull_force_fraction"] == pytest.approx(20e3 / (M * G))
