"""Points of one assembled vehicle run once (issue #33: the idler grids). The assembly closes each track by
moving the idler along its tensioner, so idler inputs 0.05 m apart close onto one idler position when the
shoe count stays the same (korner-2024 §5.2 ran such configurations "multiple times"). The check is against
physics, not the bookkeeping: the point recorded from another one (``same_as``) must hold what an
independent run of it (``--run-duplicates``) computes. Cheap event settings: one 10 cm step trial, 0.3 s
simulated at h = 1e-3 with the §5.1 tensioning."""

import json
import math
import subprocess
import sys

import pytest

from trackdyn.experiments.sweep import assembled_key, load_sweep, shared_points

SWEEP = """
name = "idler-shared"
vehicle = "m113"
event = "step-climb"
[grid]
"idler.dx" = [0.0, 0.05]
"idler.dz" = [0.0]
[options]
search = "values"
values = [0.1]
settle_time = 0.2
climb_time = 0.1
give_up_after = 0
step = 1e-3
tension = true
"""

TIMING = {"wall_time_s", "run_wall_time_s", "build_wall_time_s", "wall_per_sim", "same_as"}


def _numbers(obj, prefix=""):
    """Flatten a summary into {path: number or str}, without the timings."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in TIMING and "wall" not in k:
                out.update(_numbers(v, f"{prefix}{k}."))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_numbers(v, f"{prefix}{i}."))
    else:
        out[prefix.rstrip(".")] = obj
    return out


def test_assembled_key_groups_idler_inputs_that_close_onto_one_position():
    sweep = {"vehicle": "m113", "event": "step-climb", "options": {"search": "values", "values": [0.1]},
             "grid": {"idler.dx": [0.0], "idler.dz": [0.0]}}
    key = {(dx, dz): assembled_key(sweep, {"idler.dx": dx, "idler.dz": dz})
           for dx, dz in [(0.0, 0.0), (0.05, 0.0), (0.15, 0.0), (-0.05, 0.0), (0.0, 0.05)]}
    assert key[(0.0, 0.0)] is not None
    assert key[(0.0, 0.0)] == key[(0.05, 0.0)] == key[(0.15, 0.0)]  # one shoe count, one closed idler x
    assert key[(-0.05, 0.0)] != key[(0.0, 0.0)]  # one shoe more: the idler closes 0.079 m further back
    assert key[(0.0, 0.05)] != key[(0.0, 0.0)]  # the tensioner is horizontal: dz is never absorbed
    other_event = {**sweep, "options": {"search": "values", "values": [0.2]}}
    assert assembled_key(other_event, {"idler.dx": 0.05, "idler.dz": 0.0}) != key[(0.0, 0.0)]
    assert assembled_key(sweep, {"idler.dx": 0.2, "idler.dz": 0.0}) is None  # refused: inside road wheel 5


def test_the_thesis_idler_grids_share_their_duplicate_configurations_and_the_sprocket_grids_none():
    step = load_sweep("thesis-idler-step")
    groups = shared_points(step.to_dict(), step.points())
    assert sum(len(ids) - 1 for ids in groups.values()) == 35  # 74 assembled: 39 distinct vehicles
    assert ["idler.dx=p0_idler.dz=p0", "idler.dx=p0.05_idler.dz=p0", "idler.dx=p0.1_idler.dz=p0",
            "idler.dx=p0.15_idler.dz=p0"] in groups.values()
    sprocket = load_sweep("thesis-sprocket-step")
    assert shared_points(sprocket.to_dict(), sprocket.points()) == {}


def _run(file, out, *extra):
    r = subprocess.run([sys.executable, "-m", "trackdyn.cli.sweep", str(file), "--workers", "1", "--out", str(out),
                        "--json", *extra], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_shared_point_holds_what_its_own_run_computes(tmp_path):
    f = tmp_path / "idler.toml"
    f.write_text(SWEEP)
    shared = _run(f, tmp_path / "shared")
    assert shared["ok"] == 2 and shared["shared"] == 1 and shared["ran"] == 2
    pid = "idler.dx=p0.05_idler.dz=p0"
    rec = json.loads((tmp_path / "shared" / "points" / pid / "summary.json").read_text())
    info = json.loads((tmp_path / "shared" / "points" / pid / "point.json").read_text())
    assert rec["same_as"] == info["same_as"] == "idler.dx=p0_idler.dz=p0" and info["wall_time_s"] == 0.0

    own = _run(f, tmp_path / "own", "--run-duplicates")
    assert own["ok"] == 2 and own["shared"] == 0
    ran = json.loads((tmp_path / "own" / "points" / pid / "summary.json").read_text())
    a, b = _numbers(rec), _numbers(ran)
    assert set(a) == set(b)
    numeric = [k for k in a if isinstance(a[k], (int, float)) and not isinstance(a[k], bool)
               and a[k] is not None and b[k] is not None]
    assert len(numeric) > 20
    worst = max(abs(a[k] - b[k]) / max(1.0, abs(b[k])) for k in numeric if math.isfinite(b[k]))
    assert worst < 1e-6, f"the shared record differs from the point's own run by {worst:.2e} (relative)"
    assert {k: a[k] for k in a if k not in numeric} == {k: b[k] for k in b if k not in numeric}
    import pandas as pd

    df = pd.read_parquet(tmp_path / "shared" / "results.parquet").set_index("point")
    assert df.loc[pid, "same_as"] == "idler.dx=p0_idler.dz=p0"
    assert df["itt_N"].nunique() == 1
