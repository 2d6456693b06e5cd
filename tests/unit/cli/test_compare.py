"""``trackdyn compare``: tables on stdout, one JSON object with --json, figures in --out, exit codes."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import trackdyn as td
from trackdyn.cli.main import app
from trackdyn.testing import problems as P


@pytest.fixture(scope="module")
def chains(tmp_path_factory):
    """Three 0.4 s runs of a 2-link chain: two identical, one released from a steeper start."""
    d = tmp_path_factory.mktemp("cmpcli")
    for name, angle in (("a", 0.0), ("b", 0.0), ("steep", 0.3)):
        m = P.chain(n_links=2, mass=1.0, pitch=0.2, inertia=(0.01, 0.01, 0.01), angle=angle)
        td.Simulation(m, step=2e-3, output_step=1e-2).run(0.4, out=d / name)
    return d


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_compare_json(chains, tmp_path):
    r = invoke("compare", chains / "a", chains / "steep", chains / "b", "--series", "link[1].pos.z", "--series",
               "pin[*].force.z", "--out", tmp_path / "c", "--json")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["labels"] == ["a", "steep", "b"] and obj["on"] == "t"
    rows = {(m["series"], m["run"]): m for m in obj["metrics"]}
    assert set(rows) == {(s, k) for s in ("link[1].pos.z", "pin[0].force.z", "pin[1].force.z") for k in ("steep", "b")}
    assert all(rows[(s, "b")]["max_abs"] == 0 and rows[(s, "b")]["rms"] == 0 for s in ("link[1].pos.z", "pin[0].force.z"))
    za, zs = td.load(chains / "a")["link[1].pos.z"], td.load(chains / "steep")["link[1].pos.z"]
    assert rows[("link[1].pos.z", "steep")]["max_abs"] == pytest.approx(np.abs(zs - za).max())
    assert rows[("link[1].pos.z", "steep")]["max_abs"] > 0.01
    assert [x["d_steps"] for x in obj["runs"]] == [0, 0, 0]
    assert sorted(p.name for p in (tmp_path / "c").glob("*.png")) == ["link1.pos.z.png", "pin.force.z.png"]


def test_compare_prints_the_tables(chains, tmp_path):
    r = invoke("compare", chains / "a", chains / "steep", "-s", "link[0].pos.x", "--out", tmp_path / "c",
               "--label", "level", "--label", "steep", "--format", "svg")
    assert r.exit_code == 0, r.stderr
    assert "differences against 'level'" in r.stdout and "link[0].pos.x" in r.stdout
    assert (tmp_path / "c" / "link0.pos.x.svg").exists()


@pytest.mark.parametrize("args, code, msg", [
    (["{a}"], 2, "at least two"),
    (["{a}", "{b}", "--on", "y"], 2, "--on"),
    (["{a}", "{b}", "--format", "pdf"], 2, "--format"),
    (["{a}", "{missing}"], 1, "no such folder"),
    (["{a}", "{b}", "-s", "nothing*"], 1, "no series common"),
    (["{a}", "{b}", "--on", "x"], 1, "chassis.pos.x"),
])
def test_compare_errors(chains, tmp_path, args, code, msg):
    fill = {"a": chains / "a", "b": chains / "b", "missing": tmp_path / "nope"}
    r = invoke("compare", *[a.format(**fill) for a in args], "--out", tmp_path / "c")
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert msg in r.stderr
