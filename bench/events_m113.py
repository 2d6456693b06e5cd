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

``--quick`` runs the reduced settings of :data:`QUICK`, ``--checks`` the trials at each limit of :data:`CHECKS`,
``--nsc`` the trials at the SMC limits under non-smooth contact of :data:`NSC` (issue #29). ``--step H`` runs the full procedures at the time step H
instead of the default (the parts are kept as ``NAME-hH`` in results.json, their folders are runs/events/NAME-hH and
their figures docs/events/hH/), e.g. the final figures at the converged step of issue #28::

    python bench/events_m113.py --step 2.5e-4 step-climb half-round-12in half-round-10in half-round-8in ride &
    python bench/events_m113.py --step 2.5e-4 gap-crossing trapezoid-barriers trapezoid-ditches half-round-6in half-round-4in &
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
def _event_of(part: str) -> str:
    """The event a part runs: its name's prefix (``half-round-8in`` -> ``half-round``, ``gap-crossing-at-limit`` ->
    ``gap-crossing``)."""
    return next((e for e in ("half-round", "trapezoid", "gap-crossing", "step-climb") if part.startswith(e)), part)


EVENT = {name: _event_of(name) for name in FULL}

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

#: The trials at each limit of the final figures (issue #28), to run at the thesis's step with
#: ``--checks --step 1e-4``: the gap's bracket at 2.5e-4 s and a bisection above it, each half-round's two
#: speeds around its limiting speed (and the 10 in at 4 m/s of the peak study), the failed barrier and ditch at 68°
#: with their passing neighbour (the step limit at 1e-4 s is the sensitivity sweep's, m113-step-timestep).
CHECKS = {
    "gap-crossing-at-limit": ["--search", "values", "--values", "1.8,1.81875,1.95"],
    "gap-crossing-above-limit": ["--search", "bisect", "--lo", "1.81875", "--hi", "1.95", "--tol", "0.03"],
    "half-round-12in-at-limit": ["--height-in", "12", "--speeds", "1.5,2"],
    "half-round-10in-at-limit": ["--height-in", "10", "--speeds", "2.5,3"],
    "half-round-8in-at-limit": ["--height-in", "8", "--speeds", "7.5,8"],
    "half-round-10in-4mps": ["--height-in", "10", "--speeds", "4"],
    "trapezoid-barriers-68": ["--speed", "2", "--set", 'kinds=["barrier"]', "--set", "top_lengths_in=[6,30]",
                              "--set", "slopes_deg=[68]"],
    "trapezoid-ditches-68": ["--speed", "2", "--set", 'kinds=["ditch"]', "--set", "top_lengths_in=[30,140]",
                             "--set", "slopes_deg=[68]"],
}
EVENT.update({name: _event_of(name) for name in CHECKS})

#: The M113 under non-smooth contact (issue #29, docs/contact-nsc.md), ``--nsc``: the trials at the SMC limits of
#: the final figures (2.5e-4 s), with ``contact.method = "nsc"`` (stepped by nsc-euler at its 1e-3 s), on the
#: same hull, geometry and materials: the step at 0.852 m, the gap at 1.80 m, the 12 in half-round at the two
#: speeds around its SMC limit (1.56 m/s); and the step and gap limits by the procedures of FULL.
_APGD = ["--set", "integrator.contact_solver=apgd"]  # the contact solver of the first NSC trials (stop 30)
NSC = {
    "step-climb-nsc": ["--search", "values", "--values", "0.852", "--set", "contact.method=nsc", *_APGD],
    "gap-crossing-nsc": ["--search", "values", "--values", "1.8", "--set", "contact.method=nsc", *_APGD],
    "half-round-12in-nsc": ["--height-in", "12", "--speeds", "1.5,2", "--set", "contact.method=nsc", *_APGD],
    # the step trial again with the vehicle's NSC solver since stop 31, Newton: the same answer, its cost
    "step-climb-nsc-newton": ["--search", "values", "--values", "0.852", "--set", "contact.method=nsc"],
    # the full procedures of FULL under NSC (Newton; minutes a trial)
    "step-climb-nsc-limit": FULL["step-climb"] + ["--set", "contact.method=nsc"],
    "gap-crossing-nsc-limit": FULL["gap-crossing"] + ["--set", "contact.method=nsc"],
    "half-round-12in-nsc-limit": FULL["half-round-12in"] + ["--set", "contact.method=nsc"],
    "half-round-10in-nsc-limit": FULL["half-round-10in"] + ["--set", "contact.method=nsc"],
    "half-round-8in-nsc-limit": FULL["half-round-8in"] + ["--set", "contact.method=nsc"],
}
EVENT.update({name: _event_of(name) for name in NSC})
COMMANDS = FULL
STEP = None  # ``--step H``: the procedures at step H (a string, as typed) instead of the events' default


def _key(name: str) -> str:
    """The part's name in results.json and its folder's name under runs/events/."""
    return name if STEP is None else f"{name}-h{STEP}"


def _args(name: str) -> list:
    return COMMANDS[name] + ([] if STEP is None else ["--step", STEP])


def _cli():
    exe = shutil.which("trackdyn")
    probe = subprocess.run([exe, "event", "--help"], capture_output=True) if exe else None
    if probe is not None and probe.returncode == 0:
        return [exe, "event"]
    return [sys.executable, "-m", "trackdyn.cli.event"]


def run(name: str, collect: bool = False) -> dict:
    key = _key(name)
    out = RUNS / key
    cmd = _cli() + [EVENT[name], "--vehicle", "m113", *_args(name), "--out", str(out), "--json"]
    if collect:  # an event folder written by an earlier run of the same command
        res_text = (out / "summary.json").read_text()
        p = subprocess.CompletedProcess(cmd, 0, stdout=json.dumps(json.loads(res_text)), stderr="")
        wall = json.loads(res_text)["wall_time_s"]
    else:
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    shown = [f"'{a}'" if any(c in a for c in '[]"') else a for a in _args(name)]
    rec = {"event": EVENT[name], "part": key,
           "command": " ".join(["trackdyn", "event", EVENT[name], "--vehicle", "m113", *shown,
                                "--out", f"runs/events/{key}", "--json"]),
           "exit_code": p.returncode, "wall_time_s": wall, "settings": _settings(),
           "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if p.returncode == 0:
        res = json.loads(p.stdout.strip().splitlines()[-1])
        rec["result"] = {k: v for k, v in res.items() if k not in ("paths", "terrain_profile", "search", "trace",
                                                                   "spectrum", "runs", "trials", "table")}
        if "out" in rec["result"]:  # the event's folder, relative to the repository (no machine paths)
            rec["result"]["out"] = f"runs/events/{key}"
        figs = DOCS if STEP is None else DOCS / f"h{STEP}"
        figs.mkdir(exist_ok=True)
        for f in res.get("figures", []):
            shutil.copy(out / f, figs / f"{name}-{f}")
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
    rec = (json.loads(path.read_text()) if path.exists() else {}).get(_key(name)) or {}
    if not (rec.get("settings") == _settings() and rec.get("exit_code") == 0 and rec.get("args") == _args(name)):
        return False
    # and at the step this command runs at now: the parts without --step ran at the events' default of their
    # day (5e-4 s until stop 29, 2.5e-4 s since), so a run at today's default does not skip them
    from trackdyn.formulations.contract import event_step

    default = event_step("links", {"contact.method": "nsc"} if COMMANDS is NSC else {})
    return (rec.get("result") or {}).get("step_size_s") == (float(STEP) if STEP is not None else default)


def _settings() -> str:
    return {id(QUICK): "quick", id(CHECKS): "checks", id(NSC): "nsc"}.get(id(COMMANDS), "full")


def main(names):
    DOCS.mkdir(parents=True, exist_ok=True)
    global COMMANDS, STEP
    if "--step" in names:
        k = names.index("--step")
        STEP = names[k + 1]
        float(STEP)  # a number, or the run stops here
        names = names[:k] + names[k + 2:]
    collect = "--collect" in names
    redo = "--redo" in names
    if "--quick" in names:
        COMMANDS = QUICK
    if "--checks" in names:
        COMMANDS = CHECKS
    if "--nsc" in names:
        COMMANDS = NSC
    names = [n for n in names if n not in ("--collect", "--quick", "--checks", "--nsc", "--redo")]
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        raise SystemExit(f"unknown part(s) {unknown}; choose from {list(COMMANDS)}")
    for name in names or list(COMMANDS):
        if COMMANDS is not QUICK and not (redo or collect) and _done(name):
            print(json.dumps({"event": name, "skipped": "finished earlier with the same command (--redo reruns)"}))
            continue
        rec = run(name, collect)
        rec["args"] = _args(name)
        _update(_key(name), rec)
        print(json.dumps({"event": _key(name), "exit_code": rec["exit_code"], "wall_time_s": round(rec["wall_time_s"], 1)}),
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
