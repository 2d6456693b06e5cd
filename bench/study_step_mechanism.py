"""The mechanism at each point of a step-climb sweep folder (issue #33: the failure mode per point).

For every computed point of the folder (every point recorded there, whichever sweep file of the study's
identity ran it): the step-climb limit, and of the first failing trial of its bisection the failure mode
(``trials.classify_failure``: nose-in, high-centred, track slip, torque-limited, stalled) with the figures
that decide it over the trial's last 2 s: the largest pitch, the hull's largest contact force, its mean as a fraction
of the vehicle's weight, and where it acts (x from the step's edge, z above the ground, m), the tracks' state
and mean slip; and the largest pitch of the last
trial that passed. Read from each point's summary.json (the bisection's ``mechanism`` record).

Then the points by each axis's value (limit range, mean, first failures by count) and Spearman's rank
correlation of the limit with each axis, the initial track tension and the idler's x.

Usage: python bench/study_step_mechanism.py [SWEEP_DIR] [--json PATH]   (default docs/study/sprocket-step)
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import pandas as pd
from scipy.stats import spearmanr

from trackdyn.experiments.sweep import load_sweep, sweep_table
from trackdyn.io.results import write_json_atomic


def point_mechanism(summary: dict) -> dict:
    """The first failure's and the last success's figures of one point's summary."""
    mech = summary.get("mechanism") or {}
    ff, ls = mech.get("first_failure") or {}, mech.get("last_success") or {}
    f = ff.get("summary") or {}
    slips = [f[s]["slip"] for s in ("left", "right")
             if isinstance(f.get(s), dict) and f[s].get("slip") is not None]
    return {
        "limit_m": summary.get("limit_m"), "search_status": summary.get("search_status"),
        "failed_at_m": ff.get("value"), "mode": ff.get("mode"), "limited_by": ff.get("limited_by"),
        "pitch_max_deg": f.get("pitch_max_deg"), "hull_force_max_N": f.get("hull_force_max_N"),
        "hull_weight_fraction": f.get("hull_force_fraction"), "hull_x_m": f.get("hull_x_m"),
        "hull_z_m": f.get("hull_z_m"), "tracks": f.get("tracks"),
        "slip_mean": sum(slips) / len(slips) if slips else None,
        "passed_at_m": ls.get("value"), "passed_pitch_max_deg": (ls.get("summary") or {}).get("pitch_max_deg"),
        "sprocket_height_m": summary.get("sprocket_height_m"), "itt_N": summary.get("itt_N"),
    }


def summarise_by(rows: list[dict], axis: str) -> dict:
    """Per value of ``axis``: the points with a limit, its range and mean, and the first failures by count."""
    out = {}
    for v in sorted({r[axis] for r in rows}, reverse=True):
        sel = [r for r in rows if r[axis] == v and r["limit_m"] is not None]
        if not sel:
            continue
        lim = [r["limit_m"] for r in sel]
        out[v] = {"points": len(sel), "min": min(lim), "max": max(lim), "mean": sum(lim) / len(lim),
                  "modes": dict(Counter(str(r["mode"]) for r in sel).most_common())}
    return out


def rank_with_limit(rows: list[dict], keys: list[str]) -> dict:
    """Spearman's rank correlation of the limit with each of ``keys`` over the points that have both."""
    out = {}
    for k in keys:
        sel = [(r[k], r["limit_m"]) for r in rows if r.get(k) is not None and r["limit_m"] is not None]
        if len(sel) < 3:
            continue
        res = spearmanr([x for x, _ in sel], [y for _, y in sel])
        out[k] = {"rho": float(res.statistic), "p": float(res.pvalue), "points": len(sel)}
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=Path("docs/study/sprocket-step"))
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    sweep = load_sweep(a.folder / "sweep.toml")
    table = sweep_table(sweep, a.folder, every_point=True)
    axes = sorted(sweep.grid)
    rows = []
    for _, r in table[table["status"] == "ok"].iterrows():
        summary = json.loads((a.folder / "points" / r["point"] / "summary.json").read_text(encoding="utf-8"))
        rows.append({**{k: float(r[k]) for k in axes}, **point_mechanism(summary),
                     "idler_x_m": None if pd.isna(r.get("idler_x_m")) else float(r["idler_x_m"])})
    rows.sort(key=lambda r: tuple(r[k] for k in axes))

    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    print("  ".join(f"{k:>11}" for k in axes)
          + "   limit   mode           pitch°  hull kN  /weight  hull x,z (m)   tracks")
    for r in rows:
        print("  ".join(f"{r[k]:>+11.2f}" for k in axes)
              + f"  {f(r['limit_m'], '.3f'):>6}  {str(r['mode']):<13} {f(r['pitch_max_deg'], '5.1f'):>6}"
              f"  {f(r['hull_force_max_N'] and r['hull_force_max_N'] / 1e3, '6.1f'):>7}"
              f"  {f(r['hull_weight_fraction'], '.2f'):>7}  {f(r['hull_x_m'], '+.2f'):>6},"
              f"{f(r['hull_z_m'], '.2f'):>5}   {r['tracks']}")
    by = {axis: summarise_by(rows, axis) for axis in axes}
    for axis in reversed(axes):
        print(f"\nby {axis}: points, limit range (mean) m, first failure")
        for v, s in by[axis].items():
            modes = ", ".join(f"{m} {n}" for m, n in s["modes"].items())
            print(f"{v:>+6.2f}  {s['points']:>2}  {s['min']:.3f}-{s['max']:.3f} ({s['mean']:.3f})  {modes}")
    ranks = rank_with_limit(rows, [*axes, "itt_N", "idler_x_m"])
    print("\nSpearman's rho of the limit with: "
          + ", ".join(f"{k} {v['rho']:+.3f} (p {v['p']:.2g}, {v['points']} points)" for k, v in ranks.items()))
    if a.json:
        write_json_atomic(a.json, {"folder": str(a.folder), "axes": axes, "rows": rows,
                                   **{"by_" + axis: {f"{v:+.2f}": s for v, s in by[axis].items()} for axis in axes},
                                   "spearman_with_limit": ranks})
    return {"rows": rows, "by": by, "spearman_with_limit": ranks}


if __name__ == "__main__":
    main()
