"""The sprocket is turned at assembly so that its tooth gaps hold the track's pins on it."""

import math
import warnings

import numpy as np
import pytest

import trackdyn as td
from trackdyn.assembly.builder import vehicle_geometry
from trackdyn.assembly.geometry import sprocket_mesh_angle


def _pin_offsets_deg(spec, side):
    """Angles (deg) of the pins on the sprocket from the nearest tooth-gap centre, sprocket turned as built."""
    geo = vehicle_geometry(spec)
    lay, trk = geo.layouts[side], geo.tracks[side]
    theta = sprocket_mesh_angle(spec, lay, trk)
    sx, sz = lay.sprocket
    d = trk.pins - np.array([sx, sz])
    on = np.abs(np.hypot(d[:, 0], d[:, 1]) - spec.sprocket.assembly_radius) < 0.01
    phi = np.arctan2(d[on, 0], -d[on, 1]) + theta  # world angle -> body angle of the turned sprocket
    pitch = 2 * math.pi / spec.sprocket.n_teeth
    off = (phi + 0.5 * pitch) % pitch - 0.5 * pitch
    return np.degrees(off), trk.n_shoes


@pytest.mark.parametrize("name", ["m113", "apc", "marder"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_pins_sit_in_the_tooth_gaps(name, side):
    spec = td.vehicles.get(name)
    off, n = _pin_offsets_deg(spec, side)
    assert len(off) >= 3
    # the chord of the pitch is not exactly the tooth pitch (check_layout allows 5 %): the pins fan out around
    # the mean by up to a few degrees; unturned, the M113's 63-shoe right loop put them 15.6-18.0 deg off (half
    # a pitch is 18 deg: on the tooth tips)
    assert np.abs(off).max() < 2.0, (name, side, n, off)


def test_the_m113_starts_without_the_teeth_in_the_shoes():
    from trackdyn.sim.run import prepare

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = prepare(td.Scenario(vehicle=td.vehicles.get("m113"), t_end=0.01, step=5e-4))
    s, st = prep.sim.system, prep.sim.state
    s.update_kinematics(st.q, st.v)
    s.data[:] = s.base_data
    s.eval_forces(0.0, st.v, 0.0, 0.0, s.data, st, 5e-4)
    c = prep.contact.contacts()
    names = s.body_names
    pen = {side: [float(p) for a, b, p in zip(c["body_a"], c["body_b"], c["penetration"])
                  if f"{side}.sprocket" in (names[a] if a >= 0 else "", names[b] if b >= 0 else "")]
           for side in ("left", "right")}
    # before the fix: right 8 contacts at 30.5 mm (3.7 MN on the sprocket), left none
    assert max(pen["left"], default=0.0) < 1e-6 and max(pen["right"], default=0.0) < 1e-6, pen
    assert np.abs(s.f.reshape(-1, 6)).max() < 2e5  # the chassis's weight and the tensioner's push, no kick
