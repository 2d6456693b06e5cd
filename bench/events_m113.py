"""Run every mobility event on the M113 with the project's own command and time it (docs/events.md).

Each event runs as ``trackdyn event NAME --vehicle m113 ... --out runs/events/NAME --json``
(``python -m trackdyn.cli.event`` until the command is wired into ``trackdyn``); the
JSON line, the wall time and the settings go to ``docs/events/results.json`` and the
event's figure(s) are copied to ``docs/events/``. Long: hours of simulated obstacle
runs on one core. The full procedures (:data:`FULL`) run as parts; a part already in
results.json with the same command is skipped (``--redo`` reruns it), so the study can
be continued in a later sitting. Run one group per core, e.g.::

    python bench/events_m113.py step-climb half-round-12in half-round-10in half-round-8in ride &
    python bench/events_m113.py gap-crossing trapezoid-barriers trapezoid-ditches half-round-6in half-round-4in &

``--quick`` runs the reduced settings of :data:`QUICK`.
"""

from __future__ import annotations

import fcntl
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

def _speeds(lo: float, hi: float, inc: float = 0.5) -> str:
    n = int(round((hi - lo) / inc))
    return ",".join(f"{lo + k * inc:g}" for k in range(n + 1))


#: The thesis's full procedures (korner-2024 §4.2), at the events' default step (5e-4 s), split into parts
#: that run (and are kept) one by one: the step climb by 1 cm bisection, the gap by 3 cm bisection, the
#: half-round ride-limiting speed over 4-12 in in 0.5 m/s increments from 1 m/s up to the first speed whose
#: unfiltered peak exceeds 2.5 g (``stop_after_limit``), the 12 barriers and 12 ditches, and the ride.
#: Trapezoids at 2 m/s: the thesis gives no speed (§4.2.4); NG-NRMM's obstacle crossings are slow, steady
#: crossings, and 2 m/s (7.2 km/h) is slow enough that the hull meets a barrier's or ditch's edges quasi-
#: statically (the outcome is geometry and traction, not an impact) while a 140 in top is crossed in 10 s.
FULL = {
    "step-climb": ["--search", "bisect", "--lo", "0.3", "--hi", "1.0", "--tol", "0.01"],
    "gap-crossing": ["--search", "bisect", "--lo", "1.2", "--hi", "2.4", "--tol", "0.03"],
    **{f"half-round-{h}in": ["--height-in", str(h), "--speeds", _speeds(1.0, 12.0),
                             "--set", "stop_after_limit=true"] for h in (12, 10, 8, 6, 4)},
    "trapezoid-barriers": ["--speed", "2", "--set", 'kinds=["barrier"]'],
    "trapezoid-ditches": ["--speed", "2", "--set", 'kinds=["ditch"]'],
    "ride": ["--road", "iso8608", "--class", "D", "--speed", "5", "--length", "30"],
}

#: The event each part runs.
EVENT = {name: ("half-round" if name.startswith("half-round") else
                "trapezoid" if name.startswith("trapezoid") else name) for name in FULL}

#: What fits in an hour of a shared machine (``--quick``): the step and gap limits bracketed by a few
#: listed values instead of a bisection to 1 / 3 cm, three half-round speeds, and 2 of the 12 barriers
#: and ditches. Every trial uses the procedure's own settings.
QUICK = {
    "step-climb": ["--search", "values", "--values", "0.4,0.5,0.6"],
    "half-round": ["--height-in", "10", "--speeds", "2,3,4"],
    "gap-crossing": ["--search", "values", "--values", "1.5,1.8"],
    "trapezoid": ["--speed", "2", "--set", "top_lengths_in=[30]", "--set", "slopes_deg=[26,68]"],
    "ride": FULL["ride"],
}
EVENT.update({name: name for name in QUICK})
COMMANDS = FULL


def _cli():
    exe = shutil.which("trackdyn")
    probe = subprocess.run([exe, "event", "--help"], capture_output=True) if exe else None
    if probe is not None and probe.returncode == 0:
        return [exe, "event"]
    return [sys.executable, "-m", "trackdyn.cli.event"]


def run(name: str, collect: bool = False) -> dict:
    out = RUNS / name
    cmd = _cli() + [EVENT[name], "--vehicle", "m113", *COMMANDS[name], "--out", str(out), "--json"]
    if collect:  # an event folder written by an earlier run of the same command
        res_text = (out / "summary.json").read_text()
        p = subprocess.CompletedProcess(cmd, 0, stdout=json.dumps(json.loads(res_text)), stderr="")
        wall = json.loads(res_text)["wall_time_s"]
    else:
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    shown = [f"'{a}'" if any(c in a for c in '[]"') else a for a in COMMANDS[name]]
    rec = {"event": EVENT[name], "part": name,
           "command": " ".join(["trackdyn", "event", EVENT[name], "--vehicle", "m113", *shown,
                                "--out", f"runs/events/{name}", "--json"]),
           "exit_code": p.returncode, "wall_time_s": wall, "settings": "quick" if COMMANDS is QUICK else "full",
           "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if p.returncode == 0:
        res = json.loads(p.stdout.strip().splitlines()[-1])
        rec["result"] = {k: v for k, v in res.items() if k not in ("paths", "terrain_profile", "search", "trace",
                                                                   "spectrum", "runs", "trials", "table")}
        if "out" in rec["result"]:  # the event's folder, relative to the repository (no machine paths)
            rec["result"]["out"] = f"runs/events/{name}"
        for f in res.get("figures", []):
            shutil.copy(out / f, DOCS / f"{name}-{f}")
    else:
        rec["stderr"] = p.stderr[-4000:]
    return rec


def _update(name, rec):
    """Add one part's record to docs/events/results.json (locked: two groups may run at once)."""
    path = DOCS / "results.json"
    with open(DOCS / ".results.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(path.read_text()) if path.exists() else {}
        data[name] = rec
        tmp = path.with_name(f".results.json.{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1, default=str))
        os.replace(tmp, path)


def _done(name) -> bool:
    """A part already finished with this command (a later sitting resumes after it)."""
    path = DOCS / "results.json"
    rec = (json.loads(path.read_text()) if path.exists() else {}).get(name) or {}
    return rec.get("settings") == "full" and rec.get("exit_code") == 0 and rec.get("args") == COMMANDS[name]


def main(names):
    DOCS.mkdir(parents=True, exist_ok=True)
    global COMMANDS
    collect = "--collect" in names
    redo = "--redo" in names
    if "--quick" in names:
        COMMANDS = QUICK
    names = [n for n in names if n not in ("--collect", "--quick", "--redo")]
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        raise SystemExit(f"unknown part(s) {unknown}; choose from {list(COMMANDS)}")
    for name in names or list(COMMANDS):
        if COMMANDS is FULL and not (redo or collect) and _done(name):
            print(json.dumps({"event": name, "skipped": "finished earlier with the same command (--redo reruns)"}))
            continue
        rec = run(name, collect)
        rec["args"] = COMMANDS[name]
        _update(name, rec)
        print(json.dumps({"event": name, "exit_code": rec["exit_code"], "wall_time_s": round(rec["wall_time_s"], 1)}),
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
