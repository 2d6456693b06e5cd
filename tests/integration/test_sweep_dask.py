"""Sweeps on a real Dask LocalCluster with 2 workers: a 3 x 3 sprocket-offset step-climb sweep, a killed
sweep process that is resumed, points refused by the geometry recorded as refused, the same table on 1
and on 2 workers, a killed worker whose point is re-run. Cheap event settings: one 10 cm step trial per
point, 0.3 s of simulated time at h = 1e-3 (with the §5.1 tensioning inside the 0.2 s settle)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

SWEEP = """
name = "{name}"
vehicle = "m113"
event = "step-climb"
[grid]
"sprocket.dx" = {dx}
"sprocket.dz" = {dz}
[options]
search = "values"
values = [0.1]
settle_time = 0.2
climb_time = 0.1
give_up_after = 0
step = 1e-3
tension = true
"""


def _sweep_file(tmp_path, name, dx, dz):
    p = tmp_path / f"{name}.toml"
    p.write_text(SWEEP.format(name=name, dx=dx, dz=dz))
    return p


def _cmd(file, out, workers=2):
    return [sys.executable, "-m", "trackdyn.cli.sweep", str(file), "--workers", str(workers), "--out", str(out),
            "--json"]


def _done(out: Path) -> set:
    d = out / "points"
    return {p.name for p in d.iterdir() if not p.name.startswith(".")} if d.exists() else set()


def _wait(cond, timeout, what):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > timeout:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _table(out):
    df = pd.read_parquet(out / "results.parquet")
    assert df["point"].is_unique
    return df


def test_killed_sweep_process_resumes_with_only_the_missing_points(tmp_path):
    f = _sweep_file(tmp_path, "sprocket", "[-0.2, 0.0, 0.2]", "[-0.2, 0.0, 0.2]")
    out = tmp_path / "out"
    proc = subprocess.Popen(_cmd(f, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        # two points are refused by the geometry at once; wait for two simulated ones too
        _wait(lambda: len(_done(out)) >= 4 or proc.poll() is not None, 600, "4 finished points")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    time.sleep(3.0)  # the cluster's worker processes notice their parent's death and exit
    before = _done(out)
    assert 4 <= len(before) < 9, "the sweep was killed too late to test resuming"
    r = subprocess.run(_cmd(f, out), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    info = json.loads(r.stdout.strip().splitlines()[-1])
    assert info["points"] == 9 and info["missing"] == 0
    assert info["skipped"] == len(before) and info["ran"] == 9 - len(before)
    assert info["workers"] == 2
    df = _table(out)
    assert len(df) == 9 and set(df["point"]) == _done(out)
    failed = df[df["status"] == "refused"]
    # the sprocket 0.2 m back and not raised intersects the first road wheel (thesis §5.2: discarded)
    assert set(failed["point"]) == {"sprocket.dx=m0.2_sprocket.dz=m0.2", "sprocket.dx=m0.2_sprocket.dz=p0"}
    assert (failed["error_type"] == "GeometryError").all() and failed["error"].str.contains("intersects").all()
    ok = df[df["status"] == "ok"]
    assert len(ok) == 7 and ok["itt_N"].notna().all() and ok["idler_x_m"].notna().all()
    assert (out / "figures" / "itt_N.png").exists() and (out / "manifest.json").exists()
    man = json.loads((out / "manifest.json").read_text())
    assert sorted(p["state"] for p in man["points"]) == ["ok"] * 7 + ["refused"] * 2
    # a third run has nothing left to do
    r = subprocess.run(_cmd(f, out), capture_output=True, text=True, timeout=300)
    info = json.loads(r.stdout.strip().splitlines()[-1])
    assert info["ran"] == 0 and info["skipped"] == 9
    # the same sweep from scratch on one worker gives the same table, value for value: where and in
    # which order a point ran (and whether its first attempt was killed) does not change its result
    out1 = tmp_path / "out1"
    r = subprocess.run(_cmd(f, out1, workers=1), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    info = json.loads(r.stdout.strip().splitlines()[-1])
    assert info["workers"] == 1 and info["ran"] == 9 and info["ok"] == 7 and info["refused"] == 2
    one = _table(out1)
    # the refused points are recorded by the sweep's driver before any worker starts; the others by the workers
    ran = one["status"] == "ok"
    assert one.loc[ran, "worker_pid"].nunique() == 1 and df.loc[df["status"] == "ok", "worker_pid"].nunique() >= 2
    driver = set(one.loc[~ran, "worker_pid"])
    assert len(driver) == 1 and driver.isdisjoint(one.loc[ran, "worker_pid"])
    timing = ["point_wall_time_s", "worker_pid", "wall_time_s", "run_wall_time_s", "build_wall_time_s",
              "wall_per_sim"]
    a = df.drop(columns=timing, errors="ignore").sort_values("point").reset_index(drop=True)
    b = one.drop(columns=timing, errors="ignore").sort_values("point").reset_index(drop=True)
    assert list(a.columns) == list(b.columns)
    # the compared values differ from one configuration to the next (the comparison is not vacuous)
    assert a["itt_N"].notna().sum() == 7 and a["itt_N"].nunique() == 7 and a["idler_x_m"].nunique() >= 3
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_killed_worker_loses_no_point_and_duplicates_none(tmp_path):
    f = _sweep_file(tmp_path, "kill", "[0.0, 0.05]", "[0.0, 0.1]")
    out = tmp_path / "out"
    proc = subprocess.Popen(_cmd(f, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    victim = {}

    def running():
        d = out / "points"
        if not d.exists():
            return False
        for p in d.iterdir():
            w = p / "worker.json"
            if p.name.startswith(".") and w.exists():
                victim.update(json.loads(w.read_text()))
                return True
        return False

    try:
        _wait(running, 600, "a running point")
        time.sleep(1.0)  # mid-task: building the vehicle or stepping
        os.kill(victim["pid"], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, stderr.decode()[-3000:]
    info = json.loads(stdout.decode().strip().splitlines()[-1])
    assert info["ok"] == 4 and info["missing"] == 0 and info["failed"] == 0
    df = _table(out)
    assert len(df) == 4
    pid = victim["pid"]
    redone = df[df["point"] == victim["point"]["id"]]
    assert len(redone) == 1 and int(redone["worker_pid"].iloc[0]) != pid  # re-run by another worker process
    assert len(_done(out)) == 4


def test_an_existing_scheduler_runs_the_points_and_records_refused_ones(tmp_path):
    # --scheduler ADDRESS: the sweep uses a cluster it did not start (and leaves it running); the two
    # configurations with the sprocket inside the first road wheel fail at once, deterministically
    import logging

    from distributed import Client, LocalCluster

    from trackdyn.experiments.sweep import run_sweep

    f = _sweep_file(tmp_path, "refused", "[-0.2]", "[-0.2, 0.0]")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        info = run_sweep(f, tmp_path / "out", scheduler=cluster.scheduler_address)
        with Client(cluster.scheduler_address) as c:  # still up after the sweep closed its client
            assert len(c.scheduler_info()["workers"]) == 1
    assert info["scheduler"] == cluster.scheduler_address and info["refused"] == 2 and info["missing"] == 0
    assert info["failed"] == 0
    assert set(info["refusals"]) == {"sprocket.dx=m0.2_sprocket.dz=m0.2", "sprocket.dx=m0.2_sprocket.dz=p0"}
    assert all(e.startswith("GeometryError") for e in info["refusals"].values())
    df = _table(tmp_path / "out")
    assert list(df["status"]) == ["refused", "refused"] and df["error"].str.contains("intersects").all()
