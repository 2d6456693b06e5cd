"""The built-in crawler (han-sander-mao's crawler on a PC200-class undercarriage, links fidelity): it settles on
its tracks with the ground carrying its weight, its frames hold the chassis on their pivots and springs, and the
track-only study's track speed is the chain's n p ω / 2π (docs/crawler.md)."""

import math
import warnings

import numpy as np
import pytest

import trackdyn as td
from trackdyn.assembly.builder import frame_spring_force
from trackdyn.driver import SprocketSpeed
from trackdyn.experiments.crawler import track_only_study
from trackdyn.sim.run import prepare
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat


@pytest.fixture(scope="module")
def settled():
    """The crawler, sprockets held, 1.2 s on flat rigid ground; then 0.3 s more with the ground's vertical
    force sampled every step."""
    spec = td.vehicles.get("crawler")
    sc = Scenario(vehicle=spec, fidelity="links", terrain=Flat(), driver=SprocketSpeed(0.0), t_end=1.5, step=5e-4,
                  record=("chassis.pos.z",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep = prepare(sc)
        sim = prep.sim
        cs = [p for p in sim.system.providers if type(p).__name__ == "ContactSystem"][0]
        while sim.state.t < 1.2 - 1e-9:
            sim.step()
        fz, spring = [], []
        names = sim.model.body_names
        while sim.state.t < 1.5 - 1e-9:
            sim.step()
            c = cs.contacts()
            g = (c["body_a"] < 0) | (c["body_b"] < 0)
            # the normal force on body_b along the normal; the ground's reaction on the vehicle is upwards
            F = c["normal"][g] * c["normal_force"][g][:, None] + c["tangential_force"][g]
            sgn = np.where(c["body_b"][g] < 0, -1.0, 1.0)  # the force on the vehicle's body
            fz.append(float(np.sum(sgn * F[:, 2])))
    mass = float(np.sum(sim.model.body_arrays()[0]))
    return spec, sim, np.asarray(fz), mass, names


def test_crawler_ground_load_is_its_weight(settled):
    """Over the last 0.3 s of settling the ground carries the crawler's weight, M g = 19,900 kg x 9.81 m/s^2,
    within 0.5 % (the mean of the vertical contact force; what is left over accelerates the settling mass)."""
    spec, sim, fz, mass, _ = settled
    assert mass == pytest.approx(19900.0, abs=1e-6)  # [PC200] operating weight, the spec's mass budget
    W = mass * 9.81
    assert np.mean(fz) == pytest.approx(W, rel=5e-3)


def test_crawler_frames_hold_the_chassis(settled):
    """The frames turn on their pivots by less than 0.5 degrees from the assembled pose, and the chassis stays
    level within 0.5 degrees: the springs (sized by frame_spring_force to hold the chassis side's weight
    moment about the pivots) carry it."""
    spec, sim, _, _, names = settled
    q = sim.state.q
    idx = {n: i for i, n in enumerate(names)}

    def pitch(i):
        e0, e1, e2, e3 = q[i, 3:7]
        return math.degrees(math.asin(max(-1.0, min(1.0, 2 * (e0 * e2 - e3 * e1)))))

    assert frame_spring_force(spec) > 0
    assert abs(pitch(idx["chassis"])) < 0.5
    for side in ("left", "right"):
        assert abs(pitch(idx[f"{side}.frame"]) - pitch(idx["chassis"])) < 0.5


@pytest.fixture(scope="module")
def study():
    return track_only_study(settle=0.3, ramp=0.75, hold=1.5)


@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_track_only_track_speed_is_the_chain_speed(study, direction):
    """After the ramp the pins cross the top run at n p ω / 2π (one pitch per tooth) within 0.5 %, the
    undercarriage moves with the track (slip within 1 %), in the run's direction."""
    s, cf = study["summary"][direction], study["closed_form"]
    assert s["status"] == "complete"
    assert cf["track_speed_mps"] == pytest.approx(11 * 0.190 * 3.14 / (2 * math.pi), rel=1e-12)
    assert s["sprocket_speed_end_radps"] == pytest.approx((1 if direction == "forward" else -1) * 3.14, rel=2e-3)
    assert s["track_speed_over_closed_form"] == pytest.approx(1.0, abs=5e-3)
    assert abs(s["slip"]) < 0.01
    assert np.sign(s["undercarriage_speed_mps"]) == (1 if direction == "forward" else -1)
