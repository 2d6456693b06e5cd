"""Detracking: a shoe's guide horn leaving the guide slot of the wheel it is on (experiments.scenarios).

Results are built from the assembled M113's design pose (no simulation), then the shoes are moved.
"""

from types import SimpleNamespace

import numpy as np
import pytest

import trackdyn as td
from trackdyn.assembly.builder import build_vehicle
from trackdyn.math.quaternion import quat_to_matrix
from trackdyn.experiments.scenarios import detracked, guide_offset, guide_slot_tolerance, tracking


@pytest.fixture(scope="module")
def m113():
    spec = td.vehicles.get("m113")
    vm = build_vehicle(spec)
    _, _, q0, _ = vm.model.body_arrays()
    return SimpleNamespace(spec=spec, vehicle=vm), dict(zip(vm.model.body_names, q0))


def _result(poses, shift=None, yaw=0.0):
    """A two-sample result of the poses; ``shift`` {body: dy (m)} moves bodies sideways (world y), ``yaw``
    (rad) turns the whole vehicle about the vertical through the chassis' centre of mass."""
    c = poses["chassis"][:3]
    Rz = quat_to_matrix([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
    qz = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
    res = {}
    for name, q in poses.items():
        p = q[:3] + np.array([0.0, (shift or {}).get(name, 0.0), 0.0])
        p = c + Rz @ (p - c)
        e = q[3:]
        # qz * e (scalar first): the body turned with the vehicle
        quat = np.array([qz[0] * e[0] - qz[3] * e[3], qz[0] * e[1] - qz[3] * e[2], qz[0] * e[2] + qz[3] * e[1],
                         qz[0] * e[3] + qz[3] * e[0]])
        for k, v in zip("xyz", p):
            res[f"{name}.pos.{k}"] = np.full(2, v)
        for k, v in zip(("e0", "e1", "e2", "e3"), quat):
            res[f"{name}.quat.{k}"] = np.full(2, v)
    return res


def test_the_tolerance_is_half_the_gap_between_the_wheel_halves(m113):
    prep, _ = m113
    spec = prep.spec
    # M113: halves 0.051 m apart, horn 0.04 m wide: 5.5 mm of free play, the horn's centre line reaches a
    # half's inner face at 25.5 mm
    assert 0.5 * (spec.suspension.wheel_gap - spec.shoes.guide_width) == pytest.approx(0.0055)
    assert guide_slot_tolerance(spec) == pytest.approx(0.0255)
    with pytest.raises(ValueError, match="no slot for the guide horn"):
        guide_slot_tolerance(spec.replace({"suspension.wheel_gap": 0.04}))


def test_the_assembled_track_is_in_its_slots(m113):
    prep, poses = m113
    res = _result(poses)
    assert guide_offset(prep, res) < 1e-9
    assert detracked(prep, res) is False


def test_a_track_pushed_sideways_beyond_the_slot_is_detracked_and_within_it_is_not(m113):
    prep, poses = m113
    left = prep.vehicle.sides["left"].shoes
    tol = guide_slot_tolerance(prep.spec)
    # 20 mm: past the 5.5 mm free play (the horn bears on a wheel half) but its centre line still in the slot
    within = _result(poses, {n: 0.020 for n in left})
    assert guide_offset(prep, within) == pytest.approx(0.020, abs=1e-9)
    assert detracked(prep, within) is False
    beyond = _result(poses, {n: -(tol + 0.002) for n in left})
    assert guide_offset(prep, beyond) == pytest.approx(tol + 0.002, abs=1e-9)
    assert detracked(prep, beyond) is True
    assert tracking(prep, beyond) == {"detracked": True, "max_guide_offset_m": pytest.approx(tol + 0.002),
                                      "guide_slot_tolerance_m": tol}


def test_only_shoes_on_a_wheel_count(m113):
    prep, poses = m113
    side = prep.vehicle.sides["right"]
    wheel = poses[side.wheels[2]][:3]
    d = {n: np.hypot(*(poses[n][:3] - wheel)[[0, 2]]) for n in side.shoes}
    under = min(d, key=d.get)  # the shoe under the middle road wheel
    assert detracked(prep, _result(poses, {under: 0.03})) is True
    # a shoe of the upper strand, far from every wheel: no slot to leave
    centres = [poses[w][:3] for w in (*side.wheels, side.idler, side.sprocket)]
    far = max(side.shoes, key=lambda n: min(np.hypot(*(poses[n][:3] - c)[[0, 2]]) for c in centres))
    assert min(np.hypot(*(poses[far][:3] - c)[[0, 2]]) for c in centres) > 0.5
    assert detracked(prep, _result(poses, {far: 0.03})) is False


def test_the_chassis_heading_does_not_count(m113):
    # a vehicle that has turned 0.3 rad: its shoes 4 m behind the centre of mass have moved ~1 m in world y
    prep, poses = m113
    res = _result(poses, yaw=0.3)
    assert np.ptp([res[f"{n}.pos.y"][0] for n in prep.vehicle.sides["left"].shoes]) > 1.0
    assert guide_offset(prep, res) < 1e-9
    assert detracked(prep, res) is False


def test_no_recorded_shoes_nothing_to_judge(m113):
    prep, poses = m113
    res = {k: v for k, v in _result(poses).items() if ".shoe[" not in k}
    assert detracked(prep, res) is None
    assert tracking(prep, res) == {"detracked": None, "max_guide_offset_m": None, "guide_slot_tolerance_m": None}
