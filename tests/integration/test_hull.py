"""The M113's hull from its public dimensions, in the settled pose and against a 0.5 m step (issue #28, item 1).

The hull (spec comment of ``m113.toml``): two convex polyhedra, the floor at the 0.43 m ground clearance,
the lower front plate 30 deg and the upper front plate 45 deg from vertical. Heights were placed above the
ground of the settled pose (where the published figures are measured); these tests hold the settled
vehicle to them, and run the 0.5 m step that the three-box hull failed "nose-in" on a box corner.
"""

import warnings

import numpy as np
import pytest

import trackdyn.spec as S
from trackdyn.experiments.events import step_climb
from trackdyn.experiments.scenarios import settle
from trackdyn.math.quaternion import quat_to_matrix


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _settled_heights(name, points):
    """Height above the flat ground (world z = 0) of vehicle-frame points after settling 1.5 s."""
    summ, res = settle(name, t_end=1.5, step=5e-4, tension=False)
    assert summ["status"] == "complete"
    df = res.frame()
    spec = S.get(name)
    p = np.array([df[f"chassis.pos.{c}"].iloc[-1] for c in "xyz"])
    R = quat_to_matrix(np.array([df[f"chassis.quat.e{i}"].iloc[-1] for i in range(4)]))
    return (p + (np.asarray(points, float) - spec.chassis.com) @ R.T)[:, 2]


def test_m113_settled_front_plate_lower_edge_is_at_the_published_ground_clearance():
    """The lower front plate's lower edge (the belly's front edge, both ends) stands at the published
    ground clearance, 0.43 m (17.1 in = 0.434 m, M113A1-A3), the nose at its estimated 0.95 m and the roof
    at the published 1.85 m hull height (within the 0.76 deg static pitch over the hull's length)."""
    spec = S.get("m113")
    lower = np.asarray(spec.chassis.hull[0].vertices)
    belly = lower[lower[:, 2] == lower[:, 2].min()]  # the floor's 4 corners
    edge = belly[belly[:, 0] == belly[:, 0].max()]  # the two ends of the belly's front edge
    nose = lower[lower[:, 0] == lower[:, 0].max()]
    roof = lower[lower[:, 2] == lower[:, 2].max()]
    z = _settled_heights("m113", np.concatenate([edge, nose, roof, belly]))
    z_edge, z_nose, z_roof, z_belly = z[:2], z[2:4], z[4:8], z[8:]
    assert np.all(np.abs(z_edge - 0.43) < 0.005), z_edge
    assert np.all(np.abs(z_nose - 0.95) < 0.005), z_nose
    assert np.all(np.abs(z_roof - 1.85) < 0.07), z_roof
    # the belly is lowest at its front edge (nose-down static pitch): the clearance is the smallest there
    assert z_edge.min() == pytest.approx(z_belly.min(), abs=1e-12)


def test_m113_climbs_a_half_metre_step():
    """The 0.5 m step that the three-box hull failed "nose-in" (a square box corner 0.43 m up, 0.2 m ahead
    of the sprocket axis, not on the real vehicle): with the hull of the real vehicle the track meets the
    step face ahead of the lower front plate (the track's front at 0.5 m height is at x 0.29 m, the plate
    at 0.18 m) and the M113 climbs it, the hull never touching the step (measured: on top 2.55 s after
    the 1 s settle, pitch up to 17.7 deg, both sprockets at the torque map's limit, slip 0.28 / 0.15).

    Settled 1 s, not the event's 2 s: with 2 s this trial diverges at t = 3.22 s (h = 5e-4 and 2.5e-4) on a
    kinetic-energy jump of a shoe at the step edge (left.shoe[46]), as the hull-less vehicle does at
    3.90 s (right.shoe[62]): the impact instability of issue #28 item 3, not the hull."""
    # at 5e-4 s, where the figures above were measured (the events' default is 2.5e-4 s since stop 29)
    res = step_climb("m113", height=0.5, settle_time=1.0, climb_time=10.0, refine=0, step=5e-4)
    (trial,) = res["trials"]
    assert trial["passed"], trial
    assert res["limit_m"] == pytest.approx(0.5)
    assert trial["mechanism"]["hull_force_max_N"] == 0.0
