"""Sweep files: validation, grid points, ids; the combined table of a folder (no cluster needed)."""

import json

import pytest

from trackdyn.experiments.sweep import load_sweep, point_id, sweep_from_dict, sweep_table

BASE = {"vehicle": "m113", "event": "step-climb", "grid": {"sprocket.dx": [-0.2, 0.0, 0.2],
                                                           "sprocket.dz": {"start": -0.2, "stop": 0.2, "step": 0.1}}}


def test_grid_points_in_order_with_unique_readable_ids():
    s = sweep_from_dict(BASE)
    pts = s.points()
    assert len(pts) == 3 * 5
    assert pts[0]["params"] == {"sprocket.dx": -0.2, "sprocket.dz": -0.2}
    assert pts[1]["params"] == {"sprocket.dx": -0.2, "sprocket.dz": -0.1}
    ids = [p["id"] for p in pts]
    assert len(set(ids)) == len(ids)
    assert ids[0] == "sprocket.dx=m0.2_sprocket.dz=m0.2"
    assert point_id({"sprocket.dx": 0.0}) == "sprocket.dx=p0"
    assert s.values[0] == "limit_m"


def test_sweep_file(tmp_path):
    p = tmp_path / "idler.toml"
    p.write_text('vehicle = "m113"\nevent = "half-round"\n[grid]\n"idler.dz" = [0.0, 0.1]\n'
                 '"event.height_in" = [8, 10]\n[options]\nspeeds = [2.0, 3.0]\n')
    s = load_sweep(p)
    assert s.name == "idler" and len(s.points()) == 4 and s.options == {"speeds": [2.0, 3.0]}


@pytest.mark.parametrize("change, msg", [
    ({"event": "wading"}, "sweep.event"),
    ({"grid": {"sprocket.dy": [0.1]}}, "unknown parameter"),
    ({"grid": {"event.heigth": [0.1]}}, "no option 'heigth'"),
    ({"grid": {"sprocket.dx": []}}, "non-empty list"),
    ({"grid": {"sprocket.dx": {"start": 0, "stop": 1}}}, "one of step or num"),
    ({"options": {"speeds": [1.0]}}, "no option"),
    ({"fidelity": "fem"}, "sweep.fidelity"),
    ({"colour": "red"}, "unknown field"),
])
def test_bad_sweep_files_name_the_field(change, msg):
    with pytest.raises(ValueError, match=msg):
        sweep_from_dict({**BASE, **change})


def test_table_has_one_row_per_finished_point(tmp_path):
    s = sweep_from_dict({**BASE, "grid": {"sprocket.dx": [0.0, 0.1], "sprocket.dz": [0.0]}})
    a, b = s.points()
    (tmp_path / "points" / a["id"]).mkdir(parents=True)
    (tmp_path / "points" / a["id"] / "summary.json").write_text(json.dumps({"event": "step-climb", "limit_m": 0.5,
                                                                           "trials": [1, 2]}))
    # an unfinished attempt of the other point (a temporary folder) is not a row
    (tmp_path / "points" / f".{b['id']}.tmp-1-abc").mkdir()
    df = sweep_table(s, tmp_path)
    assert list(df["point"]) == [a["id"]] and df["limit_m"][0] == 0.5 and "trials" not in df


class _Prepared(Exception):
    """Raised by the spy in place of building the model."""


def test_a_point_runs_the_event_with_its_geometry_options_and_the_sweep_fidelity(monkeypatch, tmp_path):
    import trackdyn.sim.run as run
    from trackdyn.experiments import trials
    from trackdyn.experiments.events import resolve_vehicle
    from trackdyn.experiments.sweep import run_point

    seen = []

    def spy(scenario, *args, **kwargs):
        seen.append(scenario)
        raise _Prepared

    # trials imports prepare at its top: replace it where it is looked up (and at its source)
    monkeypatch.setattr(run, "prepare", spy)
    monkeypatch.setattr(trials, "prepare", spy)
    s = sweep_from_dict({**BASE, "fidelity": "massless", "grid": {"sprocket.dz": [0.05], "event.settle_time": [0.7]},
                         "options": {"search": "values", "values": [0.2], "step": 2e-3}})
    p, = s.points()
    with pytest.raises(_Prepared):  # not a deterministic event failure: the task errs, the driver records it
        run_point(s.to_dict(), p, str(tmp_path))
    sc, = seen
    assert sc.fidelity == "massless" and sc.step == 2e-3
    assert sc.vehicle_spec().model_dump() == resolve_vehicle("m113", sprocket_dz=0.05).model_dump()
    assert sc.driver.delay == 0.7  # full throttle after the point's settle time
    assert not (tmp_path / "points" / p["id"]).exists()  # nothing recorded for an unfinished point


def test_deterministic_failures_are_recorded_once_with_their_error(tmp_path):
    from trackdyn.experiments.sweep import _record_failure, run_point

    s = sweep_from_dict({**BASE, "grid": {"sprocket.dx": [-0.2], "sprocket.dz": [0.0]}})
    p, = s.points()
    # the sprocket 0.2 m back intersects the first road wheel: refused before anything runs (thesis §5.2)
    rec = run_point(s.to_dict(), p, str(tmp_path))
    assert rec["status"] == "refused" and rec["error"].startswith("GeometryError") and not rec["reused"]
    assert "intersects roadwheel 0" in rec["error"]
    assert (tmp_path / "points" / p["id"] / "refused.json").exists()
    again = run_point(s.to_dict(), p, str(tmp_path))
    assert again["status"] == "refused" and again["reused"]
    # a task that raised on the cluster (e.g. it kept killing workers) is recorded by the driver
    s2 = sweep_from_dict({**BASE, "grid": {"sprocket.dx": [0.0], "sprocket.dz": [0.0]}})
    q, = s2.points()
    r = _record_failure(tmp_path, q, RuntimeError("worker died 3 times"))
    assert r["status"] == "failed" and "worker died" in r["error"]
    assert _record_failure(tmp_path, q, RuntimeError("again"))["reused"]
    df = sweep_table(s2, tmp_path)
    assert list(df["status"]) == ["failed"] and df["error"][0] == "worker died 3 times"
    assert [d.name for d in (tmp_path / "points").iterdir() if d.name.startswith(".")] == []


def test_table_holds_the_folders_points_off_this_files_grid(tmp_path):
    """Two files of one identity fill one folder (a study's layers, a step check): with ``every_point`` the table
    of either holds every recorded point of the axes, the file's own grid first; a record of other axes is not a
    row; without it, the file's grid alone."""
    a = sweep_from_dict({**BASE, "grid": {"sprocket.dx": [0.0], "sprocket.dz": [0.0]}})
    b = sweep_from_dict({**BASE, "grid": {"sprocket.dx": [0.1], "sprocket.dz": [0.2]}})
    pa, = a.points()
    pb, = b.points()
    for p, limit in ((pa, 0.5), (pb, 0.6)):
        d = tmp_path / "points" / p["id"]
        d.mkdir(parents=True)
        (d / "point.json").write_text(json.dumps({"id": p["id"], "params": p["params"], "status": "ok"}))
        (d / "summary.json").write_text(json.dumps({"event": "step-climb", "limit_m": limit}))
    other = tmp_path / "points" / "idler.dx=p0"
    other.mkdir()
    (other / "point.json").write_text(json.dumps({"id": other.name, "params": {"idler.dx": 0.0}}))
    (other / "summary.json").write_text(json.dumps({"event": "step-climb", "limit_m": 9.0}))
    df = sweep_table(b, tmp_path, every_point=True)
    assert list(df["point"]) == [pb["id"], pa["id"]] and list(df["limit_m"]) == [0.6, 0.5]
    assert list(df["sprocket.dx"]) == [0.1, 0.0]
    assert list(sweep_table(b, tmp_path)["point"]) == [pb["id"]]
