"""Step-size check of the event figures on the M113 (docs/events.md, "Numerical settings").

The half-round peak driver acceleration (10 in, 4 m/s; unfiltered and 10 ms moving average)
and a step-climb trial (0.5 m) at h = 1e-3, 5e-4 and 2.5e-4 s, each with the event's own
code (``trackdyn event``). Prints one JSON line per run and writes docs/events/step_check.json.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from trackdyn.experiments.events import half_round, step_climb

OUT = Path(__file__).resolve().parents[1] / "docs" / "events" / "step_check.json"


def main(steps=(1e-3, 5e-4, 2.5e-4)):
    rows = []
    for h in steps:
        t0 = time.perf_counter()
        r = half_round("m113", height_in=10, speeds=[4.0], step=h)
        rows.append({"event": "half-round 10 in, 4 m/s", "step_s": h, "peak_g": r["peaks"][0][1],
                     "peak_filtered_g": r["peaks_filtered"][0][1], "wall_time_s": time.perf_counter() - t0,
                     "sim_time_s": r["sim_time_s"]})
        print(json.dumps(rows[-1]), flush=True)
        OUT.write_text(json.dumps(rows, indent=1))
    for h in steps:
        t0 = time.perf_counter()
        r = step_climb("m113", height=float(sys.argv[1]) if len(sys.argv) > 1 else 0.5, step=h)
        t = r["trials"][0]
        rows.append({"event": f"step-climb {t['value']} m", "step_s": h, "passed": t["passed"], "mode": t["mode"],
                     "t_success_s": t["t_success_s"], "wall_time_s": time.perf_counter() - t0,
                     "sim_time_s": r["sim_time_s"]})
        print(json.dumps(rows[-1]), flush=True)
        OUT.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
