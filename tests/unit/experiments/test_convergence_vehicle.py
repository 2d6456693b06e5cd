"""The §4.1 stepper x solver x step-size study on a vehicle (``trackdyn study convergence m113-half-round``).

A tiny configuration (two steps, one stepper, 50 ms); the full study is the documented command in
docs/events.md ("Convergence study on the M113").
"""

import json

import pytest
from typer.testing import CliRunner

from trackdyn.cli.main import app
from trackdyn.experiments.convergence import (
    HALF_ROUND_STUDY,
    get_scenario,
    m113_half_round,
)


def test_the_scenario_is_the_thesis_run():
    sc = get_scenario("m113-half-round")
    assert sc.vehicle == "m113" and sc.series == "left.roadwheel[0].pos.z"
    assert set(sc.integrators) == {"euler-implicit-linearized", "euler-implicit-projected"}
    run = m113_half_round("m113-alternative")
    assert run.speed == HALF_ROUND_STUDY["speed"] == 4.2
    # a 12 in half-round (korner-2024 §4.1: 30.48 cm)
    assert HALF_ROUND_STUDY["height_in"] * 0.0254 == pytest.approx(0.3048)
    assert max(run.terrain.height(x, 0.0) for x in [i * 0.01 for i in range(800)]) == pytest.approx(0.3048,
                                                                                                       abs=1e-3)


def test_vehicle_convergence_study_tiny(tmp_path):
    out = tmp_path / "cv"
    r = CliRunner().invoke(app, ["study", "convergence", "m113-half-round", "--vehicle", "m113-alternative",
                                 "--steps", "1e-3,5e-4", "--integrators", "euler-implicit-linearized",
                                 "--t-end", "0.05", "--output-step", "1e-3", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout.strip().splitlines()[-1])
    assert d["vehicle"] == "m113-alternative" and d["status"] == "complete"
    coarse, fine = sorted(d["runs"], key=lambda row: -row["step_s"])
    assert (coarse["step_s"], fine["step_s"]) == (1e-3, 5e-4) and fine["max_dev"] == 0.0
    assert coarse["steps"] == 50 and fine["steps"] == 100
    # the front road wheel's height at the two steps: the runs differ, by millimetres (measured 2.3 mm)
    assert 0.0 < coarse["max_dev"] < 0.01
    assert (out / "convergence.png").stat().st_size > 1000 and (out / "convergence.csv").exists()


@pytest.mark.parametrize("args, message", [
    (["pendulum", "--vehicle", "m113"], "vehicle scenarios only"),
    (["m113-half-round", "--vehicle", "no-such-vehicle"], "unknown vehicle"),
])
def test_vehicle_option_refused(args, message):
    r = CliRunner().invoke(app, ["study", "convergence", *args, "--t-end", "0.01"])
    assert r.exit_code == 1 and message in r.output
