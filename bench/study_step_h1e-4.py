"""The step studies' step check (issue #33 item 2): five configurations of each step-climb study at h = 1e-4 s.

For each configuration (the design and the four corners of the 9 x 9 grid; a corner the assembly refuses is
replaced by the nearest assembled point of its row, as the half-round check did) the study's bisection at the
event's default step (2.5e-4 s) ended on a bracket [last pass, first fail) 5.5 mm wide, on the dyadic grid of
[0.3, 1.0] m. This script runs the two trials at the bracket's ends at h = 1e-4 s, with the study's options
otherwise (§5.1 tensioning, the same vehicle spec and terrain): when the lower end passes and the upper end
fails, a full bisection of [0.3, 1.0] m at 1e-4 s ends on the same bracket (its pass/fail answers at the grid's
points are then those of the default step at both ends, and a bisection's bracket is fixed by the grid point where
the answers change). This is the events' check of "the trials at each limit" (docs/events.md, "The time step of
the events"). When an end disagrees, the full bisection of [0.3, 1.0] m runs at 1e-4 s and its limit is the
answer at that step.

The design (0, 0) is one vehicle in both studies (the same spec, options and bisection): it runs once, under
sprocket-step, and the idler-step table reads it from there.

Each configuration is written to ``OUT/<study>/<point>.json`` when it finishes (atomic; a rerun skips it), and
the table of all of them to ``OUT/step_h1e-4.json``.

With ``--extra`` it runs one more configuration of each study whose default-step limit is set by track slip
(``EXTRA``): the design's is, and it is the answer that moved.

Usage: python bench/study_step_h1e-4.py [--study sprocket-step|idler-step ...] [--out docs/study/step-h1e-4]
       [--step 1e-4] [--extra] [--report]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from trackdyn.experiments.events import resolve_vehicle, step_climb_limit
from trackdyn.experiments.sweep import load_sweep, point_id
from trackdyn.io.results import write_json_atomic

STUDY = Path("docs/study")
# (study folder, axis prefix, configurations (dx, dz), substitutes named): the design, then the four corners
CONFIGS = {
    "sprocket-step": ("sprocket", [(0.0, 0.0), (0.2, 0.2), (0.2, -0.2), (-0.2, 0.2), (-0.1, -0.2)],
                      "(-0.2, -0.2) is refused (the sprocket intersects road wheel 1): (-0.1, -0.2), the nearest "
                      "assembled point of its row, as the half-round check"),
    "idler-step": ("idler", [(0.0, 0.0), (-0.2, -0.2), (-0.2, 0.2), (0.2, 0.2), (0.15, -0.2)],
                   "(0.2, -0.2) is refused (road wheel 5 intersects the idler): (0.15, -0.2), the nearest "
                   "assembled point of its row"),
}
# configurations whose default-step limit is set by track slip (the design's first failure, which moved at
# 1e-4 s): one more of each study, run with ``--extra`` (the full bisection when an end disagrees, as above)
EXTRA = {"sprocket-step": [(0.05, -0.05)], "idler-step": [(0.0, 0.1)]}


def _summary(folder: Path, pid: str) -> dict:
    """The study's summary of a point, following a point held for a shared run (``same_as``)."""
    rec = json.loads((folder / "points" / pid / "point.json").read_text())
    src = rec.get("same_as") or pid
    return json.loads((folder / "points" / src / "summary.json").read_text())


def _trial(t: dict) -> dict:
    return {k: t.get(k) for k in ("value", "passed", "mode", "limited_by", "stop_reason", "sim_time_s",
                                  "wall_time_s", "itt_N", "idler_x_m")}


def check(study: str, dx: float, dz: float, step: float) -> dict:
    folder = STUDY / study
    sweep = load_sweep(folder / "sweep.toml")
    axis = CONFIGS[study][0]
    params = {f"{axis}.dx": dx, f"{axis}.dz": dz}
    pid = point_id(params)
    ref = _summary(folder, pid)
    lo, hi = ref["bracket_m"]
    opts = {k: v for k, v in sweep.options.items() if k not in ("search", "lo", "hi", "tol")}
    spec = resolve_vehicle(sweep.vehicle, **{f"{axis}_dx": dx, f"{axis}_dz": dz})
    t0 = time.perf_counter()
    res = step_climb_limit(spec, search="values", values=[lo, hi], step=step, **opts)
    out = {"study": study, "point": pid, "params": params, "step_s": step,
           "default": {"step_s": ref.get("step_size_s"), "limit_m": ref["limit_m"], "bracket_m": [lo, hi],
                       "itt_N": ref.get("itt_N"), "idler_x_m": ref.get("idler_x_m"),
                       "ends": [_trial(t) for t in ref["trials"] if t["value"] in (lo, hi)]},
           "ends": [_trial(t) for t in res["trials"]], "itt_N": res.get("itt_N"), "idler_x_m": res.get("idler_x_m")}
    passed = {t["value"]: t["passed"] for t in res["trials"]}
    same = passed.get(lo) is True and passed.get(hi) is False
    out["same_bracket"] = same
    if not same:  # an end disagrees: the full bisection at this step
        full = step_climb_limit(spec, search="bisect", lo=sweep.options["lo"], hi=sweep.options["hi"],
                                tol=sweep.options["tol"], step=step, **opts)
        out["bisection"] = {"limit_m": full["limit_m"], "bracket_m": full["bracket_m"],
                            "search_status": full["search_status"], "trials": [_trial(t) for t in full["trials"]]}
    out["limit_m"] = lo if same else out["bisection"]["limit_m"]
    out["limit_change_m"] = None if out["limit_m"] is None else out["limit_m"] - ref["limit_m"]
    out["wall_time_s"] = time.perf_counter() - t0
    return out


def _file(out_dir: Path, study: str, dx: float, dz: float) -> Path:
    if (dx, dz) == (0.0, 0.0):  # the design: one vehicle in both studies, run once
        study = "sprocket-step"
    axis = CONFIGS[study][0]
    return out_dir / study / f"{point_id({f'{axis}.dx': dx, f'{axis}.dz': dz})}.json"


def report(out_dir: Path) -> list[dict]:
    rows = []
    for study, (axis, configs, note) in CONFIGS.items():
        for dx, dz in configs + EXTRA[study]:
            f = _file(out_dir, study, dx, dz)
            if not f.exists():
                print(f"{study} ({dx:+.2f}, {dz:+.2f}): not run")
                continue
            r = json.loads(f.read_text())
            d = r["default"]
            trials = r["ends"] + (r.get("bisection") or {}).get("trials", [])
            # the first failure at this step: the trial at the upper end of the bracket found (the ends', or the
            # bisection's when it ran)
            hi = (r.get("bisection") or {}).get("bracket_m", d["bracket_m"])[1]
            mode = next((t["mode"] for t in trials if not t["passed"] and abs(t["value"] - hi) < 1e-9), None)
            dmode = [t["mode"] for t in d["ends"] if not t["passed"]]
            # the trials' own wall times (a trial's wall includes any time the process was paused)
            wall = sum(t["wall_time_s"] for t in trials)
            rows.append({"study": study, "dx": dx, "dz": dz, "extra": (dx, dz) in EXTRA[study],
                         "limit_default_m": d["limit_m"], "bracket_default_m": d["bracket_m"],
                         "limit_h_m": r["limit_m"],
                         "change_m": r["limit_change_m"], "same_bracket": r["same_bracket"],
                         "mode_default": dmode[0] if dmode else None, "mode_h": mode, "trials_h": len(trials),
                         "itt_default_N": d["itt_N"], "itt_h_N": r["itt_N"], "trials_wall_s": wall})
            print(f"{study:14s} ({dx:+.2f}, {dz:+.2f}): default {d['limit_m']:.4f} m [{d['bracket_m'][0]:.4f}, "
                  f"{d['bracket_m'][1]:.4f})  h={r['step_s']:g}: {r['limit_m']:.4f} m "
                  f"({'same bracket' if r['same_bracket'] else 'moved %+.4f m' % r['limit_change_m']}); "
                  f"first fail {rows[-1]['mode_default']} / {mode}; ITT {d['itt_N']:.0f} / {r['itt_N']:.0f} N; "
                  f"{len(trials)} trials, {wall:.0f} s")
        print(f"  {study}: {note}")
    write_json_atomic(out_dir / "step_h1e-4.json", {"rows": rows, "substitutes": {k: v[2] for k, v in CONFIGS.items()}})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--out", type=Path, default=STUDY / "step-h1e-4")
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--report", action="store_true", help="only print and write the table of what has run")
    ap.add_argument("--extra", action="store_true", help="run the track-slip configurations (EXTRA) instead")
    a = ap.parse_args(argv)
    if not a.report:
        for study in a.study:
            for dx, dz in (EXTRA[study] if a.extra else CONFIGS[study][1]):
                f = _file(a.out, study, dx, dz)
                if f.exists() or (study != "sprocket-step" and (dx, dz) == (0.0, 0.0)):
                    continue
                print(f"{study} ({dx:+.2f}, {dz:+.2f}) at h = {a.step:g} s ...", flush=True)
                r = check(study, dx, dz, a.step)
                f.parent.mkdir(parents=True, exist_ok=True)
                write_json_atomic(f, r)
                print(f"  limit {r['limit_m']} m (default {r['default']['limit_m']:.4f}; same bracket: "
                      f"{r['same_bracket']}), {r['wall_time_s']:.0f} s", flush=True)
    return report(a.out)


if __name__ == "__main__":
    main()
