"""``trackdyn study synthesis``: Table 3 as JSON, the figures, refused options."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from trackdyn.cli.main import app


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_study_synthesis_json_and_figures(tmp_path):
    r = _run("study", "synthesis", "--vehicle", "robot-1-6", "--t-end", "2", "--steps", "7e-4,1.4e-3,0.049",
             "--repeats", "1", "--out", tmp_path, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out["table3"]) == {"cartesian explicit", "cartesian explicit-implicit", "joint explicit",
                                  "joint explicit-implicit"}
    assert out["table3"]["joint explicit"]["ratio"] == 1.0
    assert out["table3"]["joint explicit"]["rms_pos_m"] is None
    # the 49 ms step is far past AB3's limit (0.545 / 49.7 1/s = 11 ms): the explicit models' largest stable
    # step is the 1.4 ms of this sweep
    assert out["fig8"]["joint explicit"]["largest_stable_step_s"] == 1.4e-3
    assert [row["stable"] for row in out["fig8"]["joint explicit"]["rows"]] == [True, True, False]
    for name in ("fig7", "fig8"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    assert json.loads((tmp_path / "synthesis.json").read_text())["status"] == "complete"


def test_study_synthesis_refuses_unbuilt_vehicles_and_bad_alpha(tmp_path):
    r = _run("study", "synthesis", "--vehicle", "m113", "--out", tmp_path)
    assert r.exit_code == 1 and "robot-1-6" in r.output
    r = _run("study", "synthesis", "--alpha", "0.3", "--out", tmp_path)
    assert r.exit_code == 1 and "alpha" in r.output


def test_study_synthesis_refuses_a_sweep_step_off_the_reference_grid(tmp_path):
    r = _run("study", "synthesis", "--t-end", "0.1", "--steps", "1e-3", "--repeats", "1", "--out", tmp_path)
    assert r.exit_code == 1 and "not a multiple" in r.output
