"""The chapter-5 study's point time and its projection to N workers (issue #33, docs/study/README.md "Projection").

Sums ``point_wall_time_s`` over the computed points of the four study folders (a point recorded from another
point of the same assembled vehicle, ``same_as``, or refused by the assembly costs no simulation and is left
out), and projects a sweep's wall on N single-thread workers: from ``c + n t / N`` (the mean) to
``c + n t / N + t_max`` (greedy list scheduling: the last point may start just before the others finish),
with c the measured fixed cost of a sweep (5.3 s: "Two workers against one").

Usage: python bench/study_projection.py [--workers 1 2 16 64] [--json PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from trackdyn.io.results import write_json_atomic

STUDY = Path("docs/study")
FOLDERS = ("sprocket-halfround", "sprocket-step", "idler-step", "idler-halfround")
FIXED_S = 5.3  # the sweep's fixed cost (cluster start, table, figures), docs/study/speedup.json


def computed(folder: Path) -> pd.Series:
    df = pd.read_parquet(folder / "results.parquet")
    ok = df[(df["status"] == "ok") & (df["point_wall_time_s"] > 0)]
    return ok["point_wall_time_s"]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 2, 16, 64])
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    out = {"studies": {}}
    times = []
    for name in FOLDERS:
        t = computed(STUDY / name)
        times.append(t)
        out["studies"][name] = {"computed": int(len(t)), "point_time_s": float(t.sum()),
                                "mean_s": float(t.mean()), "max_s": float(t.max())}
        print(f"{name:20s} {len(t):4d} computed points, {t.sum():9.0f} s, mean {t.mean():5.0f} s, max {t.max():5.0f} s")
    t = pd.concat(times)
    n, total, tmax = len(t), float(t.sum()), float(t.max())
    out.update({"computed": n, "point_time_s": total, "mean_s": total / n, "max_s": tmax, "fixed_s": FIXED_S,
                "projection_s": {}})
    print(f"{'all':20s} {n:4d} computed points, {total:9.0f} s ({total / 3600:.1f} h on one core), "
          f"mean {total / n:.0f} s, max {tmax:.0f} s")
    for w in a.workers:
        lo, hi = FIXED_S + total / w, FIXED_S + total / w + tmax
        out["projection_s"][w] = [lo, hi]
        print(f"  {w:3d} workers: {lo / 3600:6.2f} h to {hi / 3600:6.2f} h ({lo / 60:.0f} to {hi / 60:.0f} min)")
    if a.json:
        write_json_atomic(a.json, out)
    return out


if __name__ == "__main__":
    main()
