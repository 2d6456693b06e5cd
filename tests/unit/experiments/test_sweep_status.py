"""Sweep folders without a cluster: a point's record (ok / failed / refused) with a small summary, the
status of a folder (done, failed, refused, left, unfinished attempts, ETA) and a run on an in-process Dask
cluster with a stub event (the live snapshots, resume, the CSV table)."""

import json

import pytest

import trackdyn.experiments.sweep as SW
from trackdyn.assembly.geometry import GeometryError
from trackdyn.experiments.events import EventDiverged
from trackdyn.experiments.sweep import run_point, sweep_from_dict, sweep_status

BASE = {"vehicle": "m113", "event": "step-climb", "options": {"search": "values", "values": [0.4]},
        "grid": {"spec.shoes.bending_stiffness": [1.0, 2.0, 3.0, 4.0, 5.0]}}


def _stub(outcomes, calls=None):
    """A stand-in for run_event: the outcome per bending stiffness (a limit, or an exception to raise)."""

    def run_event(name, vehicle, out=None, **opts):
        k = vehicle.shoes.bending_stiffness
        if calls is not None:
            calls.append({"k": k, "out": out, **opts})
        o = outcomes[k]
        if isinstance(o, BaseException):
            raise o
        return {"event": name, "limit_m": o, "failure_mode": "nose-in",
                "paths": {"0.4 m (pass)": [[0.0, 0.1]] * 500}, "terrain_profile": [[0, 0]] * 100,
                "mechanism": {"first_failure": {"value": 0.5, "summary": {"pitch_deg": 3.0},
                                                "series": {"t": list(range(400))}}},
                "trials": [{"value": 0.4, "passed": True, "path": [[0, 0]] * 300}]}

    return run_event


OUTCOMES = {1.0: 0.4, 2.0: 0.45, 3.0: EventDiverged("diverged at t = 3.2 s"),
            4.0: GeometryError("the sprocket intersects roadwheel 0 on the left side"), 5.0: 0.5}


def _write_manifest(spec, out, workers=2):
    out.mkdir(parents=True, exist_ok=True)
    SW.write_json_atomic(out / "manifest.json", SW._manifest(spec, out, spec.points(), {}, 0.0, workers, None))


def test_a_point_keeps_a_small_summary_and_its_state(monkeypatch, tmp_path):
    monkeypatch.setattr(SW, "run_event", _stub(OUTCOMES))
    s = sweep_from_dict(BASE)
    recs = [run_point(s.to_dict(), p, str(tmp_path)) for p in s.points()]
    assert [r["status"] for r in recs] == ["ok", "ok", "failed", "refused", "ok"]
    assert recs[2]["error"].startswith("EventDiverged") and recs[3]["error"].startswith("GeometryError")
    summary = json.loads((tmp_path / "points" / s.points()[0]["id"] / "summary.json").read_text())
    # the time series are left out, the figures and the mechanism's summary kept
    assert summary["limit_m"] == 0.4 and summary["failure_mode"] == "nose-in"
    assert "paths" not in summary and "terrain_profile" not in summary
    assert "series" not in summary["mechanism"]["first_failure"] and "path" not in summary["trials"][0]
    assert summary["mechanism"]["first_failure"]["summary"] == {"pitch_deg": 3.0}
    assert not (tmp_path / "points" / s.points()[3]["id"] / "summary.json").exists()
    refused = json.loads((tmp_path / "points" / s.points()[3]["id"] / "refused.json").read_text())
    assert refused["error_type"] == "GeometryError" and "roadwheel 0" in refused["error"]
    df = SW.sweep_table(s, tmp_path)
    assert list(df["status"]) == ["ok", "ok", "failed", "refused", "ok"]
    assert df["error"][3] == "the sprocket intersects roadwheel 0 on the left side"


def test_series_are_written_only_when_asked(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(SW, "run_event", _stub(OUTCOMES, calls))
    s = sweep_from_dict({**BASE, "grid": {"spec.shoes.bending_stiffness": [1.0, 2.0]}})
    a, b = s.points()
    run_point(s.to_dict(), a, str(tmp_path))
    run_point(s.to_dict(), b, str(tmp_path), series=True)
    assert calls[0]["out"] is None and calls[1]["out"] is not None  # the event writes its trial folders


def test_status_counts_every_state_and_projects_the_eta(monkeypatch, tmp_path):
    monkeypatch.setattr(SW, "run_event", _stub(OUTCOMES))
    s = sweep_from_dict(BASE)
    _write_manifest(s, tmp_path, workers=2)
    pts = s.points()
    for p in pts[:4]:
        run_point(s.to_dict(), p, str(tmp_path))
    # measured point times (the stub takes none): 60 s, 120 s and 180 s for the ok and failed points
    for p, w in zip(pts[:3], (60.0, 120.0, 180.0)):
        f = tmp_path / "points" / p["id"] / "point.json"
        f.write_text(json.dumps({**json.loads(f.read_text()), "wall_time_s": w}))
    # an unfinished attempt of the last point (running, or left by a killed run)
    (tmp_path / "points" / f".{pts[4]['id']}.tmp-123-abcd").mkdir()
    st = sweep_status(tmp_path)
    assert (st["points"], st["done"], st["failed"], st["refused"], st["left"]) == (5, 2, 1, 1, 1)
    assert st["in_progress"] == [pts[4]["id"]] and not st["complete"]
    assert st["mean_point_s"] == pytest.approx(120.0) and st["computed"] == 3
    assert st["workers"] == 2 and st["eta_s"] == pytest.approx(60.0)  # 1 left x 120 s / 2 workers
    assert sweep_status(tmp_path, workers=1)["eta_s"] == pytest.approx(120.0)
    assert list(st["failures"]) == [pts[2]["id"]] and "diverged" in st["failures"][pts[2]["id"]]
    assert list(st["refusals"]) == [pts[3]["id"]]
    json.dumps(st)  # JSON-ready


def test_status_before_any_point_and_of_a_finished_sweep(monkeypatch, tmp_path):
    s = sweep_from_dict(BASE)
    _write_manifest(s, tmp_path)
    st = sweep_status(tmp_path)
    assert st["left"] == 5 and st["eta_s"] is None and st["mean_point_s"] is None
    monkeypatch.setattr(SW, "run_event", _stub(OUTCOMES))
    for p in s.points():
        run_point(s.to_dict(), p, str(tmp_path))
    st = sweep_status(tmp_path)
    assert st["left"] == 0 and st["complete"] and st["eta_s"] == 0.0


def test_status_of_a_folder_that_is_not_a_sweep(tmp_path):
    with pytest.raises(ValueError, match="not a sweep folder"):
        sweep_status(tmp_path)


def test_a_sweep_on_an_in_process_cluster_reports_live_and_resumes(monkeypatch, tmp_path):
    import logging

    from distributed import LocalCluster

    monkeypatch.setattr(SW, "run_event", _stub(OUTCOMES))
    s = sweep_from_dict({**BASE, "figures": {"values": []}})
    out = tmp_path / "out"
    # three points recorded by an earlier run; the others run now
    _write_manifest(s, out)
    for p in s.points()[:3]:
        run_point(s.to_dict(), p, str(out))
    (out / "points" / f".{s.points()[3]['id']}.tmp-9-dead").mkdir()  # a killed attempt's leftover
    for p in s.points()[:3]:  # the recorded points' times (the stub takes none): 100 s each
        f = out / "points" / p["id"] / "point.json"
        f.write_text(json.dumps({**json.loads(f.read_text()), "wall_time_s": 100.0}))
    snaps = []
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        info = SW.run_sweep(s, out, scheduler=cluster.scheduler_address, on_update=snaps.append)
    assert (info["ran"], info["skipped"], info["removed_partial"]) == (2, 3, 1)
    assert (info["ok"], info["failed"], info["refused"], info["missing"]) == (3, 1, 1, 0)
    assert list(info["refusals"]) == [s.points()[3]["id"]]
    first, last = snaps[0], snaps[-1]
    assert (first["done"], first["left"], first["running"]) == (3, 2, 1)
    # the resumed study's first ETA comes from the recorded times: 2 points left x 100 s on 1 worker
    assert first["eta_s"] == pytest.approx(200.0)
    assert (last["done"], last["ok"], last["failed"], last["refused"], last["left"], last["running"]) == \
        (5, 3, 1, 1, 0, 0)
    assert last["eta_s"] == 0.0 and len(snaps) == 3
    import pandas as pd

    csv = pd.read_csv(out / "results.csv")
    assert list(csv["status"]) == ["ok", "ok", "failed", "refused", "ok"]
    man = json.loads((out / "manifest.json").read_text())
    assert man["counts"] == {"ok": 3, "failed": 1, "refused": 1}


def test_a_second_sweep_on_a_running_folder_is_refused_and_a_dead_ones_lock_taken_over(tmp_path):
    import socket
    import subprocess
    import sys
    import time

    s = sweep_from_dict({**BASE, "grid": {"spec.shoes.bending_stiffness": [1.0]}, "figures": {"values": []}})
    out = tmp_path / "out"
    _write_manifest(s, out)
    p, = s.points()
    d = out / "points" / p["id"]
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"limit_m": 0.4}))  # nothing left: no cluster is started
    # a live sweep process on this host (here: a sleeping child) holds the folder
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / "sweep.lock").write_text(json.dumps({"pid": child.pid, "host": socket.gethostname()}))
        with pytest.raises(ValueError, match=f"a sweep is running on this folder \\(pid {child.pid}"):
            SW.run_sweep(s, out)
        st = sweep_status(out)
        assert st["driver"] == {"pid": child.pid, "host": socket.gethostname(), "running": True}
        # killed and not yet reaped (a zombie, as a killed sweep under a parent that has not waited): gone
        child.kill()
        for _ in range(200):
            if not SW._pid_alive(child.pid):
                break
            time.sleep(0.01)
        assert sweep_status(out)["driver"]["running"] is False
    finally:
        child.kill()
        child.wait()
    assert sweep_status(out)["driver"]["running"] is False
    info = SW.run_sweep(s, out)  # the dead process's lock is taken over, and released at the end
    assert info["ok"] == 1 and info["ran"] == 0 and not (out / "sweep.lock").exists()
    assert sweep_status(out)["driver"] is None


def test_points_of_one_assembled_vehicle_count_no_run_in_the_eta(monkeypatch, tmp_path):
    """An idler grid's points that close onto one assembled vehicle run once (sweep.shared_points); the
    live ETA and ``sweep status`` count the runs left, not the points left."""
    import logging

    from distributed import LocalCluster

    monkeypatch.setattr(SW, "run_event", _stub(OUTCOMES))
    s = sweep_from_dict({**BASE, "figures": {"values": []}})
    pts = s.points()
    monkeypatch.setattr(SW, "shared_points", lambda sweep, points: {"k": [pts[0]["id"], pts[1]["id"]]})
    out = tmp_path / "out"
    _write_manifest(s, out, workers=1)
    run_point(s.to_dict(), pts[4], str(out))  # recorded by an earlier run, 100 s
    f = out / "points" / pts[4]["id"] / "point.json"
    f.write_text(json.dumps({**json.loads(f.read_text()), "wall_time_s": 100.0}))
    manifests, snaps = [], []

    def on_update(snap):
        snaps.append(snap)
        manifests.append(sweep_status(out, workers=1))

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        info = SW.run_sweep(s, out, scheduler=cluster.scheduler_address, on_update=on_update)
    first = snaps[0]
    # 4 points left, of which point 1 waits for point 0: 3 runs x 100 s on 1 worker
    assert (first["left"], first["runs_left"], first["eta_s"]) == (4, 3, pytest.approx(300.0))
    assert manifests[0]["to_share"] == 1 and manifests[0]["eta_s"] == pytest.approx(300.0)
    assert info["shared"] == 1 and info["ran"] == 4
    st = sweep_status(out)
    assert (st["done"], st["shared"], st["to_share"], st["left"], st["eta_s"]) == (3, 1, 0, 0, 0.0)
    rec = json.loads((out / "points" / pts[1]["id"] / "summary.json").read_text())
    assert rec["same_as"] == pts[0]["id"] and rec["limit_m"] == 0.4  # point 0's result, not its own 0.45


def test_geometries_the_assembly_refuses_are_recorded_first_and_count_no_run_in_the_eta(monkeypatch, tmp_path):
    """A point whose geometry the assembly refuses (the sprocket 0.2 m back and down intersects road wheel 1) is
    recorded as refused before any worker starts, without calling the event, so the first ETA counts only the
    points that run (an idler half-round layer has 7 such points of 39)."""
    import logging

    from distributed import LocalCluster

    calls = []

    def run_event(name, vehicle, out=None, **opts):
        calls.append(vehicle.sprocket.location[0])
        return {"event": name, "limit_m": 0.5, "failure_mode": "nose-in"}

    monkeypatch.setattr(SW, "run_event", run_event)
    s = sweep_from_dict({"vehicle": "m113", "event": "step-climb", "options": {"search": "values", "values": [0.4]},
                         "grid": {"sprocket.dx": [-0.2, 0.0, 0.05], "sprocket.dz": [-0.2]}, "figures": {"values": []}})
    refused, runs, prior = s.points()
    assert SW.assembly_refuses(s.to_dict(), refused["params"]) and not SW.assembly_refuses(s.to_dict(), runs["params"])
    out = tmp_path / "out"
    _write_manifest(s, out, workers=1)
    run_point(s.to_dict(), prior, str(out))  # recorded by an earlier run, 100 s
    f = out / "points" / prior["id"] / "point.json"
    f.write_text(json.dumps({**json.loads(f.read_text()), "wall_time_s": 100.0}))
    calls.clear()
    snaps = []
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        SW.run_sweep(s, out, scheduler=cluster.scheduler_address, workers=1, on_update=snaps.append)
    first = snaps[0]
    assert (first["refused"], first["left"], first["runs_left"], first["eta_s"]) == (1, 1, 1, pytest.approx(100.0))
    assert len(calls) == 1  # the event ran for the assembled point only
    rec = json.loads((out / "points" / refused["id"] / "refused.json").read_text())
    assert rec["error_type"] == "GeometryError" and "roadwheel 0" in rec["error"]
    assert sweep_status(out)["refused"] == 1
