"""`trackdyn run` on a run that blows up: exit 1, the diagnostic, partial results marked diverged."""

import json
import subprocess
import sys

from trackdyn.io.checkpoint import load_state

SCENARIO = """
[scenario]
name = "blow-up"
vehicle = "m113"
integrator = "rk4"   # explicit with h = 5 ms on stiff contact and a 63-shoe loop: cannot hold
step = 0.005
t_end = 1.0
output_step = 0.005

[driver]
type = "idle"
"""


def test_a_diverging_run_exits_1_with_the_diagnostic_and_keeps_its_partial_results(tmp_path):
    f = tmp_path / "blow.toml"
    f.write_text(SCENARIO)
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "trackdyn.cli.main", "run", str(f), "--out", str(out), "--json"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 1, p.stderr
    summary = json.loads(p.stdout)
    assert summary["status"] == "diverged" and summary["error"].startswith("t = ")
    assert "run diverged: t = " in p.stderr
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["status"] == "diverged" and meta["error"] == summary["error"]
    assert meta["last_good_state"] == "last_good_state.npz"
    good = load_state(out / meta["last_good_state"])
    assert good.t == meta["last_good_t"] and good.q.shape[1] == 7
    assert (out / "timeseries.parquet").exists() and not (out / "INCOMPLETE").exists()
