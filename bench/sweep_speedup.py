"""Wall time of the 3 x 3 sprocket-offset step-climb sweep on 1 and on 2 workers (issue #7, item 9).

Runs ``trackdyn sweep bench/sweep_sprocket_step.toml --workers N --out runs/sweep-bench-N --json``
for N = 1 and 2 from empty folders and writes docs/events/sweep_benchmark.json and the heatmaps.

``python bench/sweep_speedup.py [--file SWEEP.toml] [--json OUT.json] [N ...]``: another sweep file (e.g. the
12-point slice of the thesis's half-round study, ``bench/study_slice_halfround12.toml``, issue #33) and where its
figures go (default docs/events/sweep_benchmark.json; the heatmaps are copied beside it only for the default).
The load average before and after each run is recorded: on a shared machine the speed-up is bounded by
the cores actually free.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "bench" / "sweep_sprocket_step.toml"
DOCS = ROOT / "docs" / "events"


def _rel(path) -> str:
    """A path as the repository sees it (no machine paths in committed records)."""
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(path)


def main(workers=(1, 2), file=FILE, json_out=DOCS / "sweep_benchmark.json"):
    rows = {"file": _rel(file)}
    for n in workers:
        out = ROOT / "runs" / f"sweep-bench-{file.stem}-{n}"
        shutil.rmtree(out, ignore_errors=True)
        cmd = [sys.executable, "-m", "trackdyn.cli.sweep", str(file), "--workers", str(n), "--out", str(out), "--json"]
        load0 = os.getloadavg()
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        load1 = os.getloadavg()
        info = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"stderr": p.stderr[-3000:]}
        for k in ("out", "table"):
            if info.get(k):
                info[k] = _rel(info[k])
        rows[n] = {"workers": n, "command_wall_time_s": wall, "exit_code": p.returncode,
                   "loadavg_before": load0, "loadavg_after": load1, **info}
        print(json.dumps({"workers": n, "wall_time_s": round(wall, 1), "ok": info.get("ok")}), flush=True)
        for f in info.get("figures", []) if json_out == DOCS / "sweep_benchmark.json" else []:
            shutil.copy(out / f, DOCS / f"sweep-{Path(f).stem}.png")
    if 1 in rows and 2 in rows:
        rows["speedup"] = rows[1]["command_wall_time_s"] / rows[2]["command_wall_time_s"]
    json_out.parent.mkdir(parents=True, exist_ok=True)
    json_out.write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    args = sys.argv[1:]
    f = FILE
    if "--file" in args:
        k = args.index("--file")
        f = Path(args[k + 1]).resolve()
        del args[k:k + 2]
    j = DOCS / "sweep_benchmark.json"
    if "--json" in args:
        k = args.index("--json")
        j = Path(args[k + 1]).resolve()
        del args[k:k + 2]
    main(tuple(int(a) for a in args) or (1, 2), f, j)
