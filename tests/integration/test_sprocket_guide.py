"""The sprocket's lateral guide, wired from ``sprocket.lateral_backlash`` (assembly/contact.py).

A steady skid-steer turn of the M113 (full throttle, full steering: the inner track braked, the outer
driven) at h = 5e-4: the lateral offset of each shoe's guide sphere from its sprocket's mid-plane, taken
over the shoes within the sprocket's addendum radius in the steady part of the turn (2-3 s).
"""

import warnings

import numpy as np
import pytest

import trackdyn as td
from trackdyn.assembly.contact import sprocket_guide_clearance
from trackdyn.contact.shapes import S_SPROCKET
from trackdyn.driver import Scripted
from trackdyn.experiments.scenarios import guide_offset, guide_slot_tolerance, tracking
from trackdyn.math.quaternion import quat_to_matrix
from trackdyn.mbs.profiles import Profile
from trackdyn.sim.run import prepare

T_END = 3.0
STEADY = 2.0  # yaw rate 0.91 -> 0.82 rad/s, inner sprocket at rest from here on (measured)
RECORD = ("chassis.*", "*.shoe[*].pos.*", "*.shoe[*].quat.*", "*.sprocket.pos.*", "*.sprocket.quat.*",
          "*.sprocket.speed", "*.roadwheel[*].pos.*", "*.idler.pos.*")


def _turn(backlash):
    spec = td.vehicles.get("m113").replace({"sprocket.lateral_backlash": backlash})
    driver = Scripted(throttle=Profile.table([0.5, 0.8], [0.0, 1.0]), steering=Profile.table([0.8, 1.2], [0.0, 1.0]),
                      braking=Profile.table([0.45, 0.5], [1.0, 0.0]))
    sc = td.Scenario(vehicle=spec, driver=driver, t_end=T_END, step=5e-4, output_step=0.01, record=RECORD)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = prepare(sc)
    res = prep.sim.run(T_END)
    assert res.status == "complete"
    return prep, res


def sprocket_offsets(prep, res, t0=STEADY) -> dict:
    """Per side: the guide spheres' lateral offsets (m) from the sprocket mid-plane, shoes within the addendum."""
    spec = prep.spec
    sh = spec.shoes
    knob = np.array([0.0, 0.0, sh.top + sh.guide_height - 0.5 * sh.guide_width])  # assembly/contact.py's sphere
    w = res.t >= t0 - 1e-9
    out = {}
    for name, side in prep.vehicle.sides.items():
        ps = np.column_stack([res[f"{side.sprocket}.pos.{c}"][w] for c in "xyz"])
        Rs = quat_to_matrix(np.column_stack([res[f"{side.sprocket}.quat.e{k}"][w] for k in range(4)]))
        offs = []
        for shoe in side.shoes:
            p = np.column_stack([res[f"{shoe}.pos.{c}"][w] for c in "xyz"])
            R = quat_to_matrix(np.column_stack([res[f"{shoe}.quat.e{k}"][w] for k in range(4)]))
            local = np.einsum("tji,tj->ti", Rs, p + R @ knob - ps)  # sprocket frame
            near = np.hypot(local[:, 0], local[:, 2]) < spec.sprocket.addendum_radius
            offs.append(local[near, 1])
        out[name] = np.concatenate(offs)
    return out


@pytest.fixture(scope="module")
def turns():
    # off: no lateral guide at the sprocket; tight: a 1 mm backlash, below the offsets measured without the
    # guide, so that the guide must act
    return {"off": _turn(None), "tight": _turn(0.001)}


def test_the_built_sprockets_carry_the_specs_guide(turns):
    for key, backlash in (("off", None), ("tight", 0.001)):
        prep, _ = turns[key]
        shapes = prep.contact.shapes
        par = shapes.s_par[shapes.s_type == S_SPROCKET]
        assert len(par) == 2
        # the guide face: the backlash plus the guide sphere's radius (guide_width / 2) off the mid-plane
        expected = -1.0 if backlash is None else backlash + 0.5 * prep.spec.shoes.guide_width
        assert np.allclose(par[:, 6], expected)
    assert sprocket_guide_clearance(td.vehicles.get("m113")) == pytest.approx(0.04)  # Chrono's 0.02 + 0.02


def test_a_steady_turn_with_and_without_the_sprocket_guide(turns):
    prep, res = turns["off"]
    yaw_rate = np.gradient(np.unwrap(2 * np.arctan2(res["chassis.quat.e3"], res["chassis.quat.e0"])), res.t)
    steady = res.t >= STEADY
    assert 0.7 < yaw_rate[steady].min() and yaw_rate[steady].max() < 1.0  # a turning vehicle (0.82-0.91 rad/s)
    assert np.abs(res["left.sprocket.speed"][steady]).max() < 0.1  # the inner, braked sprocket stands still
    off = {s: np.abs(v).max() for s, v in sprocket_offsets(prep, res).items()}
    on = {s: np.abs(v).max() for s, v in sprocket_offsets(*turns["tight"]).items()}
    print(f"largest guide-sphere offset from the sprocket plane, mm: off {1e3 * off['left']:.2f} / "
          f"{1e3 * off['right']:.2f}, 1 mm guide {1e3 * on['left']:.2f} / {1e3 * on['right']:.2f} (left / right)")
    # without the guide the road wheels alone place the track: measured 2.6 mm (left) and 6.7 mm (right)
    assert off["right"] > 0.004 and off["left"] > 0.002
    # ...which stays within the M113's own 20 mm backlash: there its guide is a stop, not reached in this turn
    assert max(off.values()) < td.vehicles.get("m113").sprocket.lateral_backlash
    # the turn pushes the horns against the road wheels and idler (5.5 mm of free play, measured 6.4 mm:
    # bearing on a wheel half) but not out of their slots (25.5 mm)
    horn = guide_offset(prep, res)
    print(f"largest guide-horn offset at a road wheel or the idler: {1e3 * horn:.2f} mm")
    assert 0.5 * (prep.spec.suspension.wheel_gap - prep.spec.shoes.guide_width) < horn < guide_slot_tolerance(prep.spec)
    assert tracking(prep, res)["detracked"] is False
    # with a 1 mm backlash the guide holds the spheres there (measured 1.2 / 1.7 mm: the contact's
    # penetration on top), well inside where they ran without it
    for s in ("left", "right"):
        assert on[s] < 0.001 + 0.001, (s, on[s])
        assert on[s] < 0.7 * off[s], (s, on[s], off[s])
