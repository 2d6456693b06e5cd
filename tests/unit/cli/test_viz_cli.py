"""``trackdyn plot | animate | view | report`` and the progress bars."""

import json
import os
import pty
import select
import subprocess
import sys

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

import trackdyn as td
from trackdyn.cli import results as results_cli
from trackdyn.cli import viz as viz_cli
from trackdyn.cli.progress import PointsProgress, RunProgress, progress_enabled
from trackdyn.testing import problems as P
from trackdyn.viz import shapes as S


def make_app():
    """The ``trackdyn`` app with the result commands (registered here until cli/main.py wires them)."""
    from trackdyn.cli.main import app

    names = {c.name for c in app.registered_commands}
    if "plot" not in names:
        viz_cli.register(app)
    if "report" not in names:
        results_cli.register(app)
    return app


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli") / "run"
    m = P.chain(n_links=3, mass=1.0, pitch=0.2, inertia=(0.01, 0.01, 0.01))
    for k in range(3):
        m.add_visual(f"link[{k}]", S.Box(size=(0.18, 0.05, 0.03)))
    td.Simulation(m, step=2e-3, output_step=1e-2).run(0.4, out=d)
    return d


def invoke(*args):
    r = CliRunner().invoke(make_app(), [str(a) for a in args])
    return r


def one_json(r):
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1, r.stdout
    return json.loads(lines[0])


def test_plot_json_and_files(run_dir, tmp_path):
    r = invoke("plot", run_dir, "link[2].pos.z", "pin[*].force.z", "--json")
    assert r.exit_code == 0, r.stderr
    obj = one_json(r)
    assert obj["series"] == ["link[2].pos.z", "pin[0].force.z", "pin[1].force.z", "pin[2].force.z"]
    assert obj["out"].endswith(".png") and os.path.exists(obj["out"])
    r = invoke("plot", run_dir, "link[0].pos.x", "--out", tmp_path / "f.svg", "--json")
    assert r.exit_code == 0 and one_json(r)["format"] == "svg" and (tmp_path / "f.svg").exists()
    r = invoke("plot", run_dir, "--list", "--json")
    assert "link[1].quat.e0" in one_json(r)["series"]


@pytest.mark.parametrize("args, code, msg", [
    (["plot", "{run}", "link[0].pos.q"], 1, "did you mean"),
    (["plot", "{missing}", "x"], 1, "no such results folder"),
    (["plot", "{run}", "link[0].pos.x", "--format", "pdf"], 2, "--format"),
    (["plot", "{run}"], 2, "at least one SERIES"),
    (["plot", "{run}", "link[0].pos.x", "--t0", "0.3", "--t1", "0.1"], 1, "before"),
    (["plot", "{run}", "link[0].pos.x", "--no-such-option"], 2, ""),
    (["animate", "{run}", "--out", "{tmp}/a.avi"], 1, ".gif or .mp4"),
    (["animate", "{run}", "--fps", "0"], 1, "positive"),
    (["animate", "{run}", "--follow", "nobody"], 1, "cannot follow"),
    (["view", "{run}", "--max-frames", "1"], 1, "max-frames"),
    (["report", "{run}", "--series", "zzz"], 1, "no series"),
])
def test_bad_input_exit_codes(run_dir, tmp_path, args, code, msg):
    args = [a.format(run=run_dir, missing=tmp_path / "nope", tmp=tmp_path) for a in args]
    r = invoke(*args)
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert msg in r.stderr or msg in r.stdout
    assert r.stdout.strip() == "" or code == 0


def test_animate_view_report_json(run_dir, tmp_path):
    r = invoke("animate", run_dir, "--out", tmp_path / "a.gif", "--fps", "10", "--width", "200", "--height",
               "160", "--json")
    assert r.exit_code == 0, r.stderr
    obj = one_json(r)
    assert obj["frames"] == 5 and obj["size"] == [200, 160] and (tmp_path / "a.gif").exists()
    r = invoke("view", run_dir, "--out", tmp_path / "v.html", "--json")
    assert r.exit_code == 0 and one_json(r)["bodies"] == 3
    r = invoke("report", run_dir, "--out", tmp_path / "r.html", "-s", "link[2].pos.*", "--json")
    assert r.exit_code == 0, r.stderr
    assert one_json(r)["status"] == "complete" and "link[2].pos.z" in (tmp_path / "r.html").read_text()
    r = invoke("view", run_dir, "--out", tmp_path / "v2.html")
    assert r.exit_code == 0 and r.stdout.startswith("wrote ")


def test_help_names_every_option():
    for cmd, opts in {"plot": ["--out", "--format", "--json", "--list"],
                      "animate": ["--out", "--fps", "--t0", "--t1", "--speed", "--follow", "--json"],
                      "view": ["--out", "--max-frames", "--json"], "report": ["--out", "--series", "--json"]}.items():
        r = CliRunner().invoke(make_app(), [cmd, "--help"], env={"COLUMNS": "200", "TERM": "dumb"})
        assert r.exit_code == 0
        for o in opts:
            assert o in r.stdout, (cmd, o)


def test_progress_is_silent_without_a_terminal(capsys):
    assert progress_enabled() is False  # pytest captures stdout: not a TTY
    assert progress_enabled(json=True) is False
    sim = td.Simulation(P.pendulum(), step=1e-3)
    with RunProgress(0.05) as bar:
        res = sim.run(0.05, callback=bar)
    assert res.status == "complete"
    with PointsProgress(3) as pts:
        for _ in range(3):
            pts.advance()
    assert pts.done == 3
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


PTY_SCRIPT = r"""
import trackdyn as td
from trackdyn.cli.progress import RunProgress, progress_enabled
from trackdyn.testing import problems as P
sim = td.Simulation(P.chain(n_links=16), step=1e-3)
print("enabled", progress_enabled(), flush=True)
with RunProgress(0.6, label="chain16", min_interval=0.0) as bar:
    sim.run(0.6, callback=bar)
print("done", flush=True)
"""


def test_progress_draws_on_a_terminal():
    """On a pseudo-terminal the bar shows the label, the simulated time and the ETA column."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", PTY_SCRIPT], stdin=slave, stdout=slave, stderr=slave,
                            env={**os.environ, "COLUMNS": "120", "TERM": "xterm"}, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0, text
    assert "enabled True" in text and "done" in text
    assert "chain16" in text and "ETA" in text and "0.600/0.600 s" in text
