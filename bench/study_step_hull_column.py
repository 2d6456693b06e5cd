"""The sprocket step study's dx = 0 column with and without the hull's collision shapes (issue #33).

korner-2024 Fig. 5.3 (left) finds the step-climb limit rising with the sprocket's height; thesis-sprocket-step
finds it falling above the design, every failure there nose-in (the hull's nose on the step's top edge).
This sets the two columns side by side: ``docs/study/sprocket-step`` (the study, hull on) and
``docs/study/sprocket-step-hull-off`` (``bench/study_step_sprocket_hull_off.toml``: the same points, same
procedure, ``hull = false``), with each point's first failure mode, and draws the limit over dz for both.

Usage: python bench/study_step_hull_column.py [--png PATH] [--json PATH]
       (defaults docs/study/step_hull_column.png, docs/study/step_hull_column.json)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from trackdyn.experiments.sweep import load_sweep, sweep_table
from trackdyn.io.results import write_json_atomic
from trackdyn.viz.plots import new_figure

STUDY = Path("docs/study/sprocket-step")
HULL_OFF = Path("docs/study/sprocket-step-hull-off")


def column(folder: Path, dx: float = 0.0) -> dict[float, dict]:
    """dz -> (limit_m, first failure mode) of the computed points at sprocket.dx == dx in a step sweep folder."""
    t = sweep_table(load_sweep(folder / "sweep.toml"), folder, every_point=True)
    t = t[(t["status"] == "ok") & ((t["sprocket.dx"] - dx).abs() < 1e-9)]
    return {round(float(dz), 3): (float(lim), mode)
            for dz, lim, mode in zip(t["sprocket.dz"], t["limit_m"], t["failure_mode"])}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--png", type=Path, default=Path("docs/study/step_hull_column.png"))
    ap.add_argument("--json", type=Path, default=Path("docs/study/step_hull_column.json"))
    a = ap.parse_args(argv)
    on, off = column(STUDY), column(HULL_OFF)
    none = (None, None)
    rows = [{"dz": dz, "hull_on_m": on.get(dz, none)[0], "hull_on_mode": on.get(dz, none)[1],
             "hull_off_m": off.get(dz, none)[0], "hull_off_mode": off.get(dz, none)[1]}
            for dz in sorted(set(on) | set(off))]
    print("  sprocket dz   hull on            hull off")
    for r in rows:
        cells = [("-" if r[f"{k}_m"] is None else f"{r[f'{k}_m']:.3f} m") + f" {r[f'{k}_mode'] or '':<11}"
                 for k in ("hull_on", "hull_off")]
        print(f"  {r['dz']:+10.2f}   " + "  ".join(cells))

    fig, ax = new_figure(6.0, 4.0)
    for key, label, style in (("hull_on", "hull shapes on (the study)", "o-"), ("hull_off", "hull shapes off", "s--")):
        pts = [(r["dz"], r[f"{key}_m"], r[f"{key}_mode"]) for r in rows if r[f"{key}_m"] is not None]
        if pts:
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
            for dz, lim, mode in pts:
                ax.annotate(mode or "", (dz, lim), textcoords="offset points", xytext=(3, 4), fontsize=6,
                            color=line.get_color())
    ax.set_xlabel("sprocket dz from the design, m (dx = 0)")
    ax.set_ylabel("step-climb limit, m")
    ax.set_title("M113 step-climb limit over the sprocket's height, with and without the hull")
    ax.title.set_fontsize(9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    a.png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.png, dpi=120)
    write_json_atomic(a.json, {"study": str(STUDY), "hull_off": str(HULL_OFF), "rows": rows})
    return {"rows": rows}


if __name__ == "__main__":
    main()
