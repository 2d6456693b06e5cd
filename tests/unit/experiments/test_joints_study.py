"""wallin-shabana-2013's track-joint study (issue #30): the welded suspension, and a short study through the CLI."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import trackdyn as td
from trackdyn.cli.main import app
from trackdyn.driver import SprocketSpeed
from trackdyn.math.quaternion import quat_to_matrix
from trackdyn.spec import SpecError
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat
from trackdyn.vehicles import get


def _arm_angle(r, k):
    """The left arm k's pitch relative to the chassis (rad) over the record."""
    out = []
    for i in range(len(r.t)):
        qc = [r[f"chassis.quat.e{j}"][i] for j in range(4)]
        qa = [r[f"left.arm[{k}].quat.e{j}"][i] for j in range(4)]
        R = quat_to_matrix(qc).T @ quat_to_matrix(qa)
        out.append(np.arctan2(R[0, 2], R[0, 0]))
    return np.array(out)


def test_locked_suspension_welds_the_arms():
    spec = get("apc")
    rows = {}
    for locked in (False, True):
        sc = Scenario(vehicle=spec.replace({"suspension.locked": locked}), terrain=Flat(), t_end=0.3, step=5e-4,
                      record=("chassis.quat.*", "left.arm[0].quat.*", "left.roadwheel[0].omega.y"))
        r = td.run(sc)
        a = _arm_angle(r, 0)
        rows[locked] = float(np.ptp(a))
    # welded: the arm keeps its design angle to round-off (the Fixed joint's rows, stabilised every step)
    assert rows[True] < 1e-6, rows
    # free: the same drop onto the ground turns the arm (the torsion bar takes the load)
    assert rows[False] > 1e-3, rows


def test_locked_needs_arms_and_the_massless_tree_refuses_it():
    spec = get("apc")
    with pytest.raises(SpecError, match="locked"):
        get("robot").replace({"suspension.locked": True})
    sc = Scenario(vehicle=spec.replace({"suspension.locked": True}), fidelity="massless", terrain=Flat(), t_end=0.1)
    with pytest.raises(ValueError, match="suspension.locked"):
        td.run(sc)


def test_study_joints_short_run(tmp_path):
    """Four runs of 0.25 s through the CLI: the figures and joints.json are written, and the penalty pins behave as
    springs of stiffness k: their deformation is the force over k, so it grows 100-fold from k = 1e9 to 1e7."""
    out = tmp_path / "joints"
    res = CliRunner().invoke(app, ["study", "joints", "--t-end", "0.25", "--ramp", "0.05,0.25", "--step", "5e-4",
                                   "--runs", "constrained,no-suspension,penalty-1e9,penalty-1e7", "--out", str(out),
                                   "--json"])
    assert res.exit_code == 0, res.output[-2000:]
    doc = json.loads((out / "joints.json").read_text())
    assert doc["status"] == "complete"
    assert set(doc["runs"]) == {"constrained", "no-suspension", "penalty-1e9", "penalty-1e7"}
    for f in doc["figures"]:
        assert (out / f).stat().st_size > 1000
    assert len(doc["figures"]) == 9
    runs = doc["summary"]["runs"]
    for key in ("penalty-1e9", "penalty-1e7"):
        # d = |F| / k for a stiff spring with light damping (c ḋ small): within 10 % on the means
        assert runs[key]["deformation_k_over_force"] == pytest.approx(1.0, abs=0.1), runs[key]
    # the paper's finding (Figs. 12-15): the stiff penalty pin carries the ideal pin's force, the soft one does not;
    # on the 30 Hz filtered force, the soft pin's RMS difference from the ideal one is over twice the stiff one's
    for a in "xz":
        stiff = runs["penalty-1e9"][f"pin_force_{a}_filtered_rel_rms_diff"]
        soft = runs["penalty-1e7"][f"pin_force_{a}_filtered_rel_rms_diff"]
        assert stiff < 0.5 * soft, (a, stiff, soft)
    assert runs["penalty-1e9"]["deformation_max_m"] < 1e-4
    assert runs["penalty-1e7"]["deformation_max_m"] > 30 * runs["penalty-1e9"]["deformation_max_m"]
    # the chassis drops before the drive starts with and without suspension, and reaches the ground either way
    assert doc["summary"]["drop_no-suspension"]["largest_m"] > 0.0
    assert doc["runs"]["constrained"]["cpu_ratio"] == 1.0


def test_study_joints_bad_input(tmp_path):
    r = CliRunner().invoke(app, ["study", "joints", "--runs", "constrained,warp", "--out", str(tmp_path)])
    assert r.exit_code == 1 and "unknown runs ['warp']" in r.output
    r = CliRunner().invoke(app, ["study", "joints", "--ramp", "8,1", "--out", str(tmp_path)])
    assert r.exit_code == 1 and "ramp" in r.output
    r = CliRunner().invoke(app, ["study", "joints", "--shoe", "500", "--out", str(tmp_path)])
    assert r.exit_code == 1 and "shoe" in r.output
