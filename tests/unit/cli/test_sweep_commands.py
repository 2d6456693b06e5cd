"""`trackdyn sweep --list`, a built-in sweep run by name, `--resume DIR`, `sweep status DIR` and the
per-point progress lines; the sweep itself is stubbed (run_sweep), nothing is simulated."""

import json

import pytest
from typer.testing import CliRunner

import trackdyn.experiments.sweep as SW
from trackdyn.cli.main import app
from trackdyn.cli.sweep import _Live, format_duration


def _run(args):
    return CliRunner().invoke(app, ["sweep", *args])


def test_list_names_every_built_in_sweep_with_event_grid_and_description():
    r = _run(["--list"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split()[:4] == ["name", "event", "grid", "points"]
    row = next(ln for ln in lines if ln.startswith("thesis-sprocket-step "))
    assert "step-climb" in row and "9 x 9" in row and " 81 " in row and "1 cm bisection" in row
    row = next(ln for ln in lines if ln.startswith("thesis-idler-halfround "))
    assert "half-round" in row and "9 x 9 x 3" in row and "243" in row
    assert len(lines) == 1 + len(SW.builtin_sweeps())
    js = json.loads(_run(["--list", "--json"]).output)
    assert {d["name"] for d in js["sweeps"]} == set(SW.builtin_sweeps())


@pytest.fixture
def fake_run(monkeypatch):
    seen = {}

    def fake_run_sweep(spec, out, **kw):
        seen.update(spec=spec, out=out, **kw)
        snap = {"total": 2, "done": 1, "ok": 0, "failed": 0, "refused": 1, "running": 1, "left": 1, "ran": 1,
                "elapsed_s": 3.0, "eta_s": 125.0}
        kw["on_update"](snap)
        kw["progress"](1, 2, {"id": "a", "status": "refused", "error": "GeometryError: inside wheel 1"})
        return {"points": 2, "ok": 1, "failed": 0, "refused": 1, "skipped": 0, "ran": 2, "wall_time_s": 1.0,
                "workers": 1, "scheduler": None, "table": "t", "figures": [], "failures": {},
                "refusals": {"a": "GeometryError: inside wheel 1"}, "missing": 0}

    monkeypatch.setattr(SW, "run_sweep", fake_run_sweep)
    return seen


def test_a_built_in_sweep_runs_by_name_into_sweeps_name(fake_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = _run(["thesis-sprocket-step", "--workers", "2"])
    assert r.exit_code == 0, r.output
    assert fake_run["spec"] == "thesis-sprocket-step" and str(fake_run["out"]) == "sweeps/thesis-sprocket-step"
    assert fake_run["workers"] == 2 and fake_run["series"] is False
    # not a terminal: one line per point, with the ETA of the latest snapshot
    assert "[1/2] a: REFUSED (GeometryError: inside wheel 1); ETA 2 min 05 s" in r.output
    assert "1 refused" in r.output


def test_unknown_sweep_name_is_refused_before_anything_runs(fake_run):
    r = _run(["thesis-sprocket-stepp"])
    assert r.exit_code == 1 and "no built-in sweep of that name" in r.output and not fake_run


def test_resume_continues_the_folder_with_its_own_sweep_file(fake_run, tmp_path):
    d = tmp_path / "study"
    d.mkdir()
    r = _run(["--resume", str(d)])
    assert r.exit_code == 1 and "not a sweep folder (no manifest.json)" in r.output and not fake_run
    (d / "manifest.json").write_text("{}")
    (d / "sweep.toml").write_text((SW.SWEEPS_DIR / "m113-step-hull.toml").read_text())
    r = _run(["--resume", str(d), "--series"])
    assert r.exit_code == 0, r.output
    assert fake_run["spec"] == str(d / "sweep.toml") and fake_run["out"] == d and fake_run["series"] is True
    r = _run(["m113-step-hull", "--resume", str(d), "--out", str(tmp_path / "other")])
    assert r.exit_code == 1 and "give one output folder" in r.output


def test_status_prints_the_counts_the_reasons_and_the_eta(monkeypatch, tmp_path):
    s = SW.sweep_from_dict({"vehicle": "m113", "event": "step-climb", "grid": {"sprocket.dx": [-0.2, 0.0, 0.1]}})
    SW.write_json_atomic(tmp_path / "manifest.json", SW._manifest(s, tmp_path, s.points(), {}, 0.0, 2, None))
    a, b, c = s.points()
    for p, name, body, wall in ((a, "refused.json", {"error": "intersects roadwheel 0", "error_type": "GeometryError"},
                                 0.5),
                                (b, "summary.json", {"limit_m": 0.44}, 600.0)):
        d = tmp_path / "points" / p["id"]
        d.mkdir(parents=True)
        (d / name).write_text(json.dumps(body))
        (d / "point.json").write_text(json.dumps({"wall_time_s": wall}))
    (tmp_path / "sweep.lock").write_text(json.dumps({"pid": 4242, "host": "another-machine"}))
    r = _run(["status", str(tmp_path)])
    assert r.exit_code == 0, r.output
    out = r.output
    assert "driver   pid 4242 on another-machine: on another host" in out
    assert "done     1" in out and "failed   0" in out and "refused  1" in out and "left     1" in out
    assert "ETA      5 min 00 s on 2 worker(s)" in out  # 1 left x 600 s / 2 workers
    assert f"refused {a['id']}: intersects roadwheel 0" in out and "--resume" in out
    js = json.loads(_run(["status", str(tmp_path), "--json", "--workers", "1"]).output)
    assert (js["done"], js["refused"], js["left"], js["eta_s"]) == (1, 1, 1, 600.0)
    r = _run(["status", str(tmp_path / "nothing")])
    assert r.exit_code == 1 and "not a sweep folder" in r.output
    r = _run(["status"])
    assert r.exit_code == 1 and "give the sweep's output folder" in r.output


def test_a_folder_argument_belongs_to_status_and_compare_only(fake_run, tmp_path):
    r = _run(["m113-step-hull", str(tmp_path)])
    assert r.exit_code == 1 and "only 'trackdyn sweep status DIR' and 'trackdyn sweep compare DIR DIR' take folders" \
        in r.output and not fake_run
    r = _run(["status", str(tmp_path), str(tmp_path)])
    assert r.exit_code == 1 and "one folder, got 2" in r.output and not fake_run


def test_live_line_and_durations():
    snap = {"total": 81, "done": 30, "ok": 18, "failed": 2, "refused": 10, "running": 2, "left": 51,
            "elapsed_s": 4000.0, "eta_s": 90000.0}
    assert _Live.render_text(snap) == ("30/81 points: 18 done, 2 failed, 10 refused, 2 running, 51 left; "
                                       "elapsed 1 h 06 min, ETA 1 d 01 h")
    assert [format_duration(x) for x in (None, 59.4, 61, 3600)] == ["unknown", "59 s", "1 min 01 s", "1 h 00 min"]
