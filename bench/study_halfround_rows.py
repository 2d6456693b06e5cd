"""The half-round study's tables by row (issue #33: the trends of a layer, each with its mechanism).

For a half-round sweep folder (``thesis-sprocket-halfround`` or ``thesis-idler-halfround`` and their layer
files; every recorded point, whichever file of the study's identity ran it) and each obstacle height: per
value of the moved wheel's dz, the points with a limit, its range and mean, the points above and below the
searched speeds, and the phase of the crossing that set the limit (``study_limit_phases.phase``: the hull,
or which road wheel, where, on its jounce stop or not); the same per value of dx; and Spearman's rank
correlation of the limiting speed with dx, dz, the initial track tension and the idler's settled x. With
``--against FOLDER`` (another half-round folder, e.g. the sprocket's) the two studies' limits at their
common design point (dx = dz = 0) per height.

Usage: python bench/study_halfround_rows.py [SWEEP_DIR] [--against DIR] [--json PATH]
(default docs/study/idler-halfround)
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

import pandas as pd
from scipy.stats import spearmanr
from study_limit_phases import phase

from trackdyn.experiments.events import resolve_vehicle
from trackdyn.experiments.sweep import load_sweep, sweep_table
from trackdyn.io.results import write_json_atomic


def _table(folder: Path) -> tuple[pd.DataFrame, str, int]:
    sweep = load_sweep(folder / "sweep.toml")
    wheel = next(k for k in sweep.grid if k.endswith(".dz")).split(".")[0]
    n_wheels = len(resolve_vehicle(sweep.vehicle).suspension.stations)
    return sweep_table(sweep, folder, every_point=True), wheel, n_wheels


def _phase(r: pd.Series, n_wheels: int) -> str:
    ls = {k: None if pd.isna(r.get(k)) else r.get(k)
          for k in ("limit_source", "limit_source_body", "limit_source_x_from_obstacle_m",
                    "limit_source_on_jounce_stop")}
    if ls["limit_source"]:
        return phase(ls, float(r["event.height_in"]), n_wheels)
    return {"above-range": "no speed above the limit", "below-range": "above the limit at the first speed"}.get(
        str(r.get("limit_status")), str(r.get("limit_status")))


def by_value(ok: pd.DataFrame, axis: str, n_wheels: int) -> dict:
    """Per value of ``axis`` (descending): points, limits' range and mean, out-of-range counts, phases."""
    out = {}
    for v in sorted(ok[axis].unique(), reverse=True):
        sel = ok[ok[axis] == v]
        lim = sel["limiting_speed_mps"].dropna()
        out[f"{v:+.2f}"] = {
            "points": int(len(sel)), "with_limit": int(len(lim)),
            "min": float(lim.min()) if len(lim) else None, "max": float(lim.max()) if len(lim) else None,
            "mean": float(lim.mean()) if len(lim) else None,
            "above_range": int((sel["limit_status"] == "above-range").sum()),
            "below_range": int((sel["limit_status"] == "below-range").sum()),
            "phases": dict(collections.Counter(_phase(r, n_wheels) for _, r in sel.iterrows()).most_common()),
        }
    return out


def ranks(ok: pd.DataFrame, keys: list[str]) -> dict:
    """Spearman's rank correlation of the limiting speed with each of ``keys`` over the points with a limit."""
    sel = ok.dropna(subset=["limiting_speed_mps"])
    out = {}
    for k in keys:
        if len(sel) >= 3 and sel[k].nunique() > 1:
            res = spearmanr(sel[k], sel["limiting_speed_mps"])
            out[k] = {"rho": float(res.statistic), "p": float(res.pvalue), "points": int(len(sel))}
    return out


def _print_rows(title: str, rows: dict) -> None:
    print(f"  by {title}")
    for v, s in rows.items():
        rng = f"{s['min']:.2f}-{s['max']:.2f} ({s['mean']:.2f})" if s["with_limit"] else "-"
        print(f"    {v}  {s['points']:2d} pts, {s['with_limit']:2d} with a limit  {rng:>20}  above {s['above_range']}  below {s['below_range']}  "
              + "; ".join(f"{p} ({n})" for p, n in s["phases"].items()))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=Path("docs/study/idler-halfround"))
    ap.add_argument("--against", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    table, wheel, n_wheels = _table(a.folder)
    other = _table(a.against) if a.against else None
    out: dict = {"folder": str(a.folder), "wheel": wheel, "heights": {}}
    for h in sorted(table["event.height_in"].unique(), reverse=True):
        layer = table[table["event.height_in"] == h]
        ok = layer[layer["status"] == "ok"]
        shared = int(ok["same_as"].notna().sum()) if "same_as" in ok else 0
        res = {"points": int(len(layer)), "computed": int(len(ok)) - shared, "shared": shared,
               "refused": int((layer["status"] == "refused").sum()),
               "point_time_s": float(ok["point_wall_time_s"].sum()),
               "by_dz": by_value(ok, f"{wheel}.dz", n_wheels), "by_dx": by_value(ok, f"{wheel}.dx", n_wheels),
               "spearman": ranks(ok, [f"{wheel}.dx", f"{wheel}.dz", "itt_N", "idler_x_m"]),
               "itt_N": [float(ok["itt_N"].min()), float(ok["itt_N"].max())] if len(ok) else None}
        if other is not None:
            ot, ow, _ = other
            d = ot[(ot["event.height_in"] == h) & (ot[f"{ow}.dx"] == 0) & (ot[f"{ow}.dz"] == 0)]
            mine = ok[(ok[f"{wheel}.dx"] == 0) & (ok[f"{wheel}.dz"] == 0)]
            res["design"] = {wheel: float(mine["limiting_speed_mps"].iloc[0]) if len(mine) else None,
                             ow: float(d["limiting_speed_mps"].iloc[0]) if len(d) else None}
        out["heights"][f"{h:g}"] = res
        print(f"{h:g} in: {res['points']} points, {res['computed']} computed, {res['shared']} shared, "
              f"{res['refused']} refused, {res['point_time_s']:.0f} s of point time")
        _print_rows(f"{wheel}.dz", res["by_dz"])
        _print_rows(f"{wheel}.dx", res["by_dx"])
        for k, s in res["spearman"].items():
            print(f"  rho(limit, {k}) = {s['rho']:+.2f} (p {s['p']:.1e}, {s['points']} points)")
        if res["itt_N"]:
            print(f"  initial track tension {res['itt_N'][0]:.0f}-{res['itt_N'][1]:.0f} N")
        if "design" in res:
            print(f"  design point: {res['design']}")
    if a.json:
        write_json_atomic(a.json, out)
    return out


if __name__ == "__main__":
    main()
