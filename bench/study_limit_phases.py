"""When in the crossing the half-round limit is set (issue #33: the mechanism per point, summed up by layer).

For every computed point of a half-round sweep folder, the first speed whose driver peak exceeds the limit and
the body that made that peak (``limit_source`` of the sweep table), sorted into the phase of the crossing by
where that body was: the hull striking the obstacle; a road wheel (or the idler or sprocket) meeting or leaving the obstacle (its centre
within 0.3 m of the half-round, which spans 0 .. 2 H from its leading edge); or a road wheel past it, hit while
the hull pitches after the other wheels crossed; and whether the wheel's arm was on its jounce stop. Counted
per obstacle height and the moved wheel's dz (the sweep's ``sprocket.dz`` or ``idler.dz`` axis).

Usage: python bench/study_limit_phases.py [SWEEP_DIR] [--json PATH]   (default docs/study/sprocket-halfround)
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

import pandas as pd

from trackdyn.conventions import INCH
from trackdyn.experiments.events import resolve_vehicle
from trackdyn.experiments.sweep import load_sweep, sweep_table
from trackdyn.io.results import write_json_atomic


def phase(ls: dict, height_in: float, n_wheels: int) -> str:
    """The phase of the crossing in which ``ls`` (the limit-source columns of one row) set the limit; road
    wheels are numbered front to rear, 0 .. ``n_wheels`` - 1, as the spec's suspension stations."""
    if ls["limit_source"] == "hull":
        return "hull strikes the obstacle"
    body, x = ls["limit_source_body"], ls.get("limit_source_x_from_obstacle_m")
    if body.endswith((".idler", ".sprocket")):  # the track's end wheels: no arm, no jounce stop
        wheel = body.rsplit(".", 1)[1]
    else:
        wheel = ("front" if body.endswith("[0]") else "rear" if body.endswith(f"[{n_wheels - 1}]")
                 else "middle") + " road wheel"
    if x is None:
        return wheel
    where = "on the obstacle" if -0.3 <= x <= 2 * height_in * INCH + 0.3 else "past the obstacle"
    stop = ", on its jounce stop" if ls.get("limit_source_on_jounce_stop") else ""
    return f"{wheel} {where}{stop}"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=Path("docs/study/sprocket-halfround"))
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    sweep = load_sweep(a.folder / "sweep.toml")
    n_wheels = len(resolve_vehicle(sweep.vehicle).suspension.stations)
    table = sweep_table(sweep, a.folder, every_point=True)
    dz_axis = next(k for k in sweep.grid if k.endswith(".dz"))
    counts = collections.Counter()
    for _, r in table[table["status"] == "ok"].iterrows():
        ls = {k: None if pd.isna(r.get(k)) else r.get(k)
              for k in ("limit_source", "limit_source_body", "limit_source_x_from_obstacle_m",
                        "limit_source_on_jounce_stop")}
        h = float(r["event.height_in"])
        what = phase(ls, h, n_wheels) if ls["limit_source"] else "no speed above the limit"
        counts[(h, float(r[dz_axis]), what)] += 1
    rows = [{"height_in": h, dz_axis.replace(".", "_") + "_m": dz, "phase": p, "points": n}
            for (h, dz, p), n in sorted(counts.items(), key=lambda kv: (-kv[0][0], -kv[0][1], kv[0][2]))]
    for r in rows:
        print(f"{r['height_in']:>4g} in  {dz_axis} {r[dz_axis.replace('.', '_') + '_m']:+.2f}  {r['points']:3d}  {r['phase']}")
    if a.json:
        write_json_atomic(a.json, {"folder": str(a.folder), "axis": dz_axis, "rows": rows})
    return {"rows": rows}


if __name__ == "__main__":
    main()
