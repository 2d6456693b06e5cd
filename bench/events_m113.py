"""Run every mobility event on the M113 with the project's own command and time it (docs/events.md).

Each event runs as ``trackdyn event NAME --vehicle m113 ... --out runs/events/NAME --json``
(``python -m trackdyn.cli.event`` until the command is wired into ``trackdyn``); the
JSON line, the wall time and the settings go to ``docs/events/results.json`` and the
event's figure(s) are copied to ``docs/events/``. Long: hours of simulated obstacle
runs on one core. Run one group per core, e.g.::

    python bench/events_m113.py step-climb half-round ride &
    python bench/events_m113.py gap-crossing trapezoid &

``--quick`` runs the reduced settings of :data:`QUICK` (what docs/events.md shows).
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
RUNS = ROOT / "runs" / "events"
DOCS = ROOT / "docs" / "events"

#: The full procedures (step 5e-4 s, the events' default, everywhere): hours of M113 simulation.
FULL = {
    "step-climb": ["--search", "bisect", "--lo", "0.3", "--hi", "0.6", "--tol", "0.01"],
    "half-round": ["--height-in", "10", "--speeds", "2,3,4,5,6"],
    "gap-crossing": ["--search", "bisect", "--lo", "1.2", "--hi", "2.4", "--tol", "0.03"],
    "trapezoid": ["--speed", "2"],
    "ride": ["--road", "iso8608", "--class", "D", "--speed", "5", "--length", "30"],
}

#: What fits in an hour of a shared machine (``--quick``; the runs of docs/events.md): the step and
#: gap limits bracketed by a few listed values instead of a bisection to 1 / 3 cm, three half-round
#: speeds, and 2 of the 12 barriers and ditches. Every trial uses the procedure's own settings.
QUICK = {
    "step-climb": ["--search", "values", "--values", "0.4,0.5,0.6"],
    "half-round": ["--height-in", "10", "--speeds", "2,3,4"],
    "gap-crossing": ["--search", "values", "--values", "1.5,1.8"],
    "trapezoid": ["--speed", "2", "--set", "top_lengths_in=[30]", "--set", "slopes_deg=[26,68]"],
    "ride": FULL["ride"],
}
COMMANDS = FULL


def _cli():
    exe = shutil.which("trackdyn")
    probe = subprocess.run([exe, "event", "--help"], capture_output=True) if exe else None
    if probe is not None and probe.returncode == 0:
        return [exe, "event"]
    return [sys.executable, "-m", "trackdyn.cli.event"]


def run(name: str, collect: bool = False) -> dict:
    out = RUNS / name
    cmd = _cli() + [name, "--vehicle", "m113", *COMMANDS[name], "--out", str(out), "--json"]
    if collect:  # an event folder written by an earlier run of the same command
        res_text = (out / "summary.json").read_text()
        p = subprocess.CompletedProcess(cmd, 0, stdout=json.dumps(json.loads(res_text)), stderr="")
        wall = json.loads(res_text)["wall_time_s"]
    else:
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    rec = {"event": name, "command": " ".join(["trackdyn", "event", name, "--vehicle", "m113", *COMMANDS[name],
                                               "--out", f"runs/events/{name}", "--json"]),
           "exit_code": p.returncode, "wall_time_s": wall, "settings": "quick" if COMMANDS is QUICK else "full"}
    if p.returncode == 0:
        res = json.loads(p.stdout.strip().splitlines()[-1])
        rec["result"] = {k: v for k, v in res.items() if k not in ("paths", "terrain_profile", "search", "trace",
                                                                   "spectrum", "runs", "trials", "table")}
        for f in res.get("figures", []):
            shutil.copy(out / f, DOCS / f"{name}-{f}")
    else:
        rec["stderr"] = p.stderr[-4000:]
    return rec


def main(names):
    DOCS.mkdir(parents=True, exist_ok=True)
    global COMMANDS
    collect = "--collect" in names
    if "--quick" in names:
        COMMANDS = QUICK
    names = [n for n in names if n not in ("--collect", "--quick")]
    for name in names or list(COMMANDS):
        rec = run(name, collect)
        path = DOCS / "results.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data[name] = rec
        tmp = path.with_name(f".results.json.{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1, default=str))
        os.replace(tmp, path)
        print(json.dumps({"event": name, "exit_code": rec["exit_code"], "wall_time_s": round(rec["wall_time_s"], 1)}),
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
