"""The M113's step-climb limit against the settings that might move it (issue #28 item 3), from its sweeps.

Runs (or resumes) the five built-in sensitivity sweeps ``m113-step-hull``, ``-pad-modulus``, ``-friction``,
``-contact`` and ``-timestep`` into ``docs/events/sensitivity/<name>/`` (one worker each, one after the
other: a point is a 1 cm bisection of the step height, about 15-20 min on a free core, 5x that at
h = 1e-4), then writes ``docs/events/sensitivity/summary.json`` (one row per finished point: setting,
limit, bracket, failure mode, the mechanism of the last success and the first failure) and
``docs/events/sensitivity/step-limit.png`` (every finished point against the design's limit).

``python bench/m113_sensitivity.py [--summary-only] [NAME ...]``: ``--summary-only`` runs nothing and
redraws from the folders; names restrict the sweeps run. The sweep folders hold only small per-point
summaries (no time series), so a partial study is committed and resumed in a later sitting: a point
already finished is never run again (``trackdyn sweep --resume``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "events" / "sensitivity"
SWEEPS = ("m113-step-hull", "m113-step-pad-modulus", "m113-step-friction", "m113-step-contact", "m113-step-timestep")
#: The design's setting on each sweep's axis (the m113 spec and the events' defaults).
DESIGN = {"hull": True, "spec.materials.pad.youngs_modulus": 8.0e5, "friction": 0.8,
          "scenario.contact.implicit": True, "event.step": 5.0e-4}


def run(name: str) -> int:
    folder = OUT / name
    cmd = [sys.executable, "-m", "trackdyn.cli.main", "sweep"]
    cmd += (["--resume", str(folder)] if (folder / "manifest.json").exists() else [name, "--out", str(folder)])
    cmd += ["--workers", "1", "--json"]
    return subprocess.run(cmd).returncode


def _side(summary: dict) -> dict:
    out = {"value_m": summary.get("value"), "passed": summary.get("passed"), "mode": summary.get("mode")}
    s = summary.get("summary") or {}
    for side in ("left", "right"):
        d = s.get(side) or {}
        out[f"slip_{side}"] = d.get("slip")
        out[f"torque_fraction_{side}"] = d.get("torque_fraction")
    out["hull_force_max_N"] = s.get("hull_force_max_N")
    out["pitch_max_deg"] = s.get("pitch_max_deg")
    return out


def rows() -> list[dict]:
    table = []
    for name in SWEEPS:
        pdir = OUT / name / "points"
        if not pdir.is_dir():
            continue
        for folder in sorted(p for p in pdir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            summary = json.loads((folder / "summary.json").read_text())
            point = json.loads((folder / "point.json").read_text()) if (folder / "point.json").exists() else {}
            res = summary.get("result", summary)
            params = point.get("params") or summary.get("params") or {}
            (key, value), = params.items()
            mech = res.get("mechanism") or {}
            table.append({"sweep": name, "setting": key, "value": value, "design": DESIGN.get(key) == value,
                          "limit_m": res.get("limit_m"), "bracket_m": res.get("bracket_m"),
                          "search_status": res.get("search_status"), "failure_mode": res.get("failure_mode"),
                          "limited_by": res.get("limited_by"), "trials_run": res.get("trials_run"),
                          "wall_time_s": res.get("wall_time_s"),
                          "last_success": _side(mech.get("last_success") or {}),
                          "first_failure": _side(mech.get("first_failure") or {})})
    return table


def figure(table: list[dict]):
    from trackdyn.viz.plots import new_figure, save_figure

    fig, ax = new_figure(8.0, 0.45 * max(len(table), 4) + 1.2)
    labels, values, colours = [], [], []
    for r in table:
        labels.append(f"{r['setting']} = {r['value']}" + (" (design)" if r["design"] else ""))
        values.append(r["limit_m"] if r["limit_m"] is not None else float("nan"))
        colours.append("0.55" if r["design"] else "tab:blue")
    y = range(len(table))
    ax.barh(list(y), values, color=colours, edgecolor="k")
    for k, r in enumerate(table):
        if r["limit_m"] is not None:
            ax.text(r["limit_m"] + 0.01, k, f"{r['limit_m']:.3f} m, {r['failure_mode'] or r['search_status']}",
                    va="center", fontsize=7)
    design = [r["limit_m"] for r in table if r["design"] and r["limit_m"] is not None]
    if design:
        d = design[0]
        ax.axvspan(d - 0.011, d + 0.011, color="0.85", zorder=0, label="design ± 1.1 cm (round-off, docs/events.md)")
        ax.axvline(0.61, color="tab:red", ls="--", lw=1, label="real M113: 0.61 m (Hunnicutt)")
        ax.legend(loc="lower right", fontsize=7)
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0.0, 1.6)
    ax.set_xlabel("step-climb limit [m] (1 cm bisection in [0.3, 1.0] m)")
    ax.set_title("M113 step-climb limit: one setting changed at a time")
    return save_figure(fig, OUT / "step-limit.png", dpi=100)


def markdown(table: list[dict]) -> str:
    """The table of docs/events.md: one row per finished point."""
    def f(x, fmt="{:.2f}"):
        return "—" if x is None else fmt.format(x)
    out = ["| setting | limit | failure (first failure) | last success: slip L / R, hull peak, pitch max | "
           "first failure: slip L / R, hull peak | wall |", "|---|---|---|---|---|---|"]
    for r in table:
        ls, ff = r["last_success"], r["first_failure"]
        out.append(
            f"| {r['setting']} = {r['value']}{' (design)' if r['design'] else ''} | "
            f"**{f(r['limit_m'], '{:.3f}')}** m | {r['failure_mode'] or r['search_status']} | "
            f"{f(ls['slip_left'])} / {f(ls['slip_right'])}, {f(ls['hull_force_max_N'] and ls['hull_force_max_N'] / 1e3, '{:.0f}')} kN, "
            f"{f(ls['pitch_max_deg'], '{:.1f}')}° | {f(ff['slip_left'])} / {f(ff['slip_right'])}, "
            f"{f(ff['hull_force_max_N'] is not None and ff['hull_force_max_N'] / 1e3, '{:.0f}')} kN | "
            f"{f(r['wall_time_s'], '{:.0f}')} s |")
    return "\n".join(out)


def main(args: list[str]) -> None:
    only = [a for a in args if not a.startswith("--")]
    if "--summary-only" not in args:
        for name in only or SWEEPS:
            run(name)
    table = rows()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "summary.json").write_text(json.dumps(table, indent=1))
    if table:
        figure(table)
        (OUT / "table.md").write_text(markdown(table) + "\n")
    for r in table:
        print(json.dumps({k: r[k] for k in ("sweep", "setting", "value", "limit_m", "failure_mode", "wall_time_s")}))


if __name__ == "__main__":
    main(sys.argv[1:])
