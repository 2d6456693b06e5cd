"""A study slice on a hand-started Dask cluster, with a worker and the driver killed mid-study (issue #33).

What a user of a real cluster does, on loopback: ``dask scheduler`` and two ``dask worker`` processes (one
thread each) started by hand, then ``trackdyn sweep FILE --scheduler tcp://127.0.0.1:PORT --out DIR``. While it
runs, this script

1. SIGKILLs the worker process computing a point (found from the ``worker.json`` of the point's unfinished
   attempt), once that point has run for ``--kill-after`` seconds: its nanny starts a new worker process and
   the scheduler hands the task to a worker again;
2. SIGKILLs the sweep driver once ``--driver-after`` points are finished, and starts
   ``trackdyn sweep --resume DIR --scheduler ...``, which keeps the finished points and runs the rest.

Then it checks that every point of the grid has exactly one record and that the table equals, value for value,
the table of a reference run (timings and worker ids aside), e.g. the 2-worker LocalCluster run of
``bench/sweep_speedup.py``::

    python bench/sweep_speedup.py --file bench/study_slice_halfround12.toml --json docs/study/speedup.json
    python bench/sweep_cluster.py --file bench/study_slice_halfround12.toml \\
        --reference runs/sweep-bench-study_slice_halfround12-2 --json docs/study/cluster.json

The record (commands, times, pids killed, the checks) goes to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]

#: columns of a sweep table that differ between runs of the same points (times, processes)
TIMING = {"point_wall_time_s", "worker_pid", "wall_time_s", "run_wall_time_s", "build_wall_time_s", "wall_per_sim"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _finished(out: Path) -> list[str]:
    return sorted(p.parent.name for p in (out / "points").glob("*/point.json"))


def _attempts(out: Path) -> list[dict]:
    """The unfinished attempts under way: their worker.json (pid, started, point)."""
    rows = []
    for w in (out / "points").glob(".*.tmp-*/worker.json"):
        try:
            rows.append(json.loads(w.read_text()))
        except (OSError, ValueError):
            pass  # being written or just renamed
    return rows


def _sweep(args, out, address, resume=False):
    cmd = [sys.executable, "-m", "trackdyn.cli.sweep"]
    cmd += ["--resume", str(out)] if resume else [str(args.file), "--out", str(out)]
    cmd += ["--scheduler", address, "--json"]
    return cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, default=ROOT / "bench" / "study_slice_halfround12.toml")
    ap.add_argument("--reference", type=Path, help="a finished run of the same points to compare tables with")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "sweep-cluster")
    ap.add_argument("--kill-after", type=float, default=15.0, help="s a point has run before its worker is killed")
    ap.add_argument("--driver-after", type=int, default=4, help="finished points before the driver is killed")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    shutil.rmtree(args.out, ignore_errors=True)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ}
    procs = [subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
    time.sleep(3)
    for k in (1, 2):
        procs.append(subprocess.Popen(["dask", "worker", address, "--nthreads", "1", "--nworkers", "1",
                                       "--no-dashboard", "--name", f"w{k}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
    time.sleep(5)
    rec = {"file": str(args.file.relative_to(ROOT)) if args.file.is_relative_to(ROOT) else str(args.file),
           "scheduler": "dask scheduler --host 127.0.0.1 --port PORT --no-dashboard",
           "workers": "dask worker tcp://127.0.0.1:PORT --nthreads 1 --nworkers 1 --no-dashboard (twice)",
           "events": []}
    t0 = time.perf_counter()
    try:
        cmd, drv = _sweep(args, args.out, address)
        rec["sweep"] = " ".join(["trackdyn sweep", *cmd[3:]]).replace(address, "tcp://127.0.0.1:PORT")
        worker_killed = driver_killed = False
        while drv.poll() is None:
            time.sleep(0.5)
            now = time.time()
            if not worker_killed:
                for a in _attempts(args.out):
                    if now - a.get("started", now) >= args.kill_after:
                        os.kill(int(a["pid"]), signal.SIGKILL)
                        rec["events"].append({"t_s": time.perf_counter() - t0, "killed": "worker",
                                              "pid": int(a["pid"]), "point": a["point"]["id"]})
                        worker_killed = True
                        break
            if worker_killed and not driver_killed and len(_finished(args.out)) >= args.driver_after:
                drv.send_signal(signal.SIGKILL)
                drv.wait()
                rec["events"].append({"t_s": time.perf_counter() - t0, "killed": "driver",
                                      "finished_points": len(_finished(args.out))})
                driver_killed = True
        first = drv.communicate()
        if not driver_killed:
            rec["events"].append({"t_s": time.perf_counter() - t0, "note": "the sweep ended before the driver "
                                  "was killed", "stderr": first[1][-2000:]})
        cmd, drv = _sweep(args, args.out, address, resume=True)
        rec["resume"] = " ".join(["trackdyn sweep", *cmd[3:]]).replace(address, "tcp://127.0.0.1:PORT")
        stdout, stderr = drv.communicate()
        rec["resume_exit_code"] = drv.returncode
        rec["resume_result"] = json.loads(stdout.strip().splitlines()[-1]) if drv.returncode == 0 else stderr[-3000:]
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
    rec["wall_time_s"] = time.perf_counter() - t0
    # every point exactly once, no attempt left over
    folders = [p.name for p in (args.out / "points").iterdir()]
    table = pd.read_parquet(args.out / "results.parquet")
    rec["points_in_table"] = int(len(table))
    rec["each_point_once"] = bool(table["point"].is_unique and len(folders) == len(set(folders)) == len(table)
                                  and not any(f.startswith(".") for f in folders))
    if args.reference is not None:
        ref = pd.read_parquet(args.reference / "results.parquet")
        cols = [c for c in ref.columns if c not in TIMING]
        a = table[cols].sort_values("point").reset_index(drop=True)
        b = ref[cols].sort_values("point").reset_index(drop=True)
        try:
            pd.testing.assert_frame_equal(a, b, check_exact=True)
            rec["equals_reference"] = True
        except AssertionError as err:
            rec["equals_reference"] = False
            rec["difference"] = str(err)[:2000]
        rec["reference"] = str(args.reference.relative_to(ROOT)) if args.reference.is_relative_to(ROOT) else \
            str(args.reference)
        rec["compared_columns"] = len(cols)
    # no machine paths or ports in the record: paths relative to the repository, the port as PORT
    text = json.dumps(rec, indent=1, default=str).replace(str(ROOT) + "/", "").replace(address, "tcp://127.0.0.1:PORT")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text)
    print(text)
    return rec


if __name__ == "__main__":
    main()
