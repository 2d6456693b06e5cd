"""The M113's full procedures side by side at two time steps, from docs/events/results.json (docs/events.md).

``python bench/events_table.py [--step H]`` prints one markdown table: each part of :data:`events_m113.FULL` at
the events' default step (5e-4 s) and at H (default 2.5e-4 s, the parts ``NAME-hH`` that
``python bench/events_m113.py --step H`` writes), the answer's change, what limited it at H, the trials and the
wall time. It reads the records only; nothing is run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from events_m113 import DOCS, FULL  # noqa: E402


def answer(part: str, res: dict) -> tuple[str, float | None]:
    """The part's headline as the docs write it, and its number (None where there is none)."""
    ev = res.get("event")
    if ev in ("step-climb", "gap-crossing"):
        v = res.get("limit_m")
        return (f"{v:.3f} m" if v is not None else res.get("search_status", "-")), v
    if ev == "half-round":
        v = res.get("limiting_speed_mps")
        if v is None:
            top = max((p[1] for p in res.get("peaks", []) if p[1] is not None), default=None)
            return (f"{res.get('limit_status')} (peak {top:.2f} g)" if top is not None else res.get("limit_status")), None
        return f"{v:.2f} m/s", v
    if ev == "trapezoid":
        kind = "barriers" if "barriers" in res else "ditches"
        marks = res[kind]
        fails = [i for i, m in enumerate(marks) if m != "S"]
        tops, slopes = res["top_lengths_in"], res["slopes_deg"]
        where = ", ".join(f"{tops[i // len(slopes)]:g} in × {slopes[i % len(slopes)]:g}°" for i in fails)
        return f"{len(marks) - len(fails)} of {len(marks)} crossed" + (f" (F: {where})" if fails else ""), \
            float(len(marks) - len(fails))
    if ev == "ride":
        return f"RMS {res['rms_g']:.3f} g, peak {res['peak_g']:.2f} g", res["rms_g"]
    return "-", None


def mechanism(res: dict) -> str:
    if res.get("event") in ("step-climb", "gap-crossing"):
        return f"{res.get('limited_by')} ({res.get('failure_mode')})"
    if res.get("event") == "half-round" and res.get("limiting_speed_mps") is not None:
        # peaks: [speed, g]; peak_sources: [speed, body or "hull", t]; the first speed above the limit
        over = [v for v, g in res.get("peaks", []) if g is not None and g > res.get("limit_g", 2.5)]
        src = {row[0]: row[1] for row in res.get("peak_sources", []) if isinstance(row, list) and len(row) >= 2}
        if over:
            g = dict((v, g) for v, g in res["peaks"])[over[0]]
            return f"{g:.2f} g at {over[0]:g} m/s from {src.get(over[0], '?')}"
    return ""


def table(step: str = "2.5e-4") -> str:
    data = json.loads((DOCS / "results.json").read_text(encoding="utf-8"))
    rows = [f"| part | h = 5e-4 s (the default until stop 29) | h = {step} s | change | what limited it at {step} | trials | "
            f"steps of the trials | wall at {step} |", "|---|---|---|---|---|---|---|---|"]
    for part in FULL:
        a, b = data.get(part), data.get(f"{part}-h{step}")
        if b is None or b.get("exit_code") != 0:
            rows.append(f"| {part} | {answer(part, a['result'])[0] if a else '-'} | not run | | | | | |")
            continue
        ra, rb = (a or {}).get("result", {}), b["result"]
        (ta, va), (tb, vb) = answer(part, ra) if ra else ("-", None), answer(part, rb)
        change = f"{vb - va:+.3g}" if va is not None and vb is not None else ""
        rows.append(f"| {part} | {ta} | {tb} | {change} | {mechanism(rb)} | {rb.get('trials_run')} | "
                    f"{', '.join(f'{s:g}' for s in rb.get('steps_s', []))} | {b['wall_time_s']:.0f} s |")
    return "\n".join(rows)


if __name__ == "__main__":
    args = sys.argv[1:]
    print(table(args[args.index("--step") + 1] if "--step" in args else "2.5e-4"))
