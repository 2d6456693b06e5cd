"""Re-create the figures and tables of docs/ from the project's own commands, and write what they measured.

Each *producer* below runs trackdyn (its Python API or its command line) and
writes ``OUT/NAME.json``: the figures, the command that makes them, the docs
they stand in, the wall time, the machine and the date. ``OUT/index.md`` lists
every producer run. A figure in docs/ names its producer (``python
docs/figures.py NAME``); docs/figures.md lists which figures each reproduces.

Usage::

    python docs/figures.py --list                # the producers, quick ones marked
    python docs/figures.py --quick               # the quick subset (minutes; CI runs it)
    python docs/figures.py                       # everything (hours: links-model runs and benchmarks)
    python docs/figures.py NAME [NAME ...] [--out DIR]

``--out`` defaults to ``docs/figures/``. Exit code 1 when a producer fails or
a figure it checks disagrees with what the docs state (``mismatches`` in its
JSON), so that a stale figure is caught where it is produced.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
PRODUCERS = {}


def producer(name: str, docs: str, quick: bool = False):
    """Register ``fn() -> dict`` as the producer ``name`` of the figures listed in ``docs``."""

    def deco(fn):
        PRODUCERS[name] = {"fn": fn, "docs": docs, "quick": quick, "summary": (fn.__doc__ or "").strip()}
        return fn

    return deco


def _trackdyn(*args) -> dict:
    """``trackdyn ARGS --json`` in a subprocess; its one JSON object."""
    cmd = [sys.executable, "-m", "trackdyn.cli.main", *args, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(args)}: exit {out.returncode}: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def _doc_says(path: str, text: str) -> bool:
    return text in (HERE / path).read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------- quick
@producer("fidelities", "docs/formulation.md (Fidelities: the `trackdyn fidelities` listing)", quick=True)
def fidelities():
    """The registered fidelities with their defaults (`trackdyn fidelities --json`)."""
    r = _trackdyn("fidelities")
    rows = {f["name"]: (f["cost"], f["default_step_s"], f["default_integrator"], f["paper"]) for f in r["fidelities"]}
    mism = [n for n, (cost, h, integ, _) in rows.items()
            if not _doc_says("formulation.md", f"{n:<10} {cost:<10} h = {h:g} s, {integ}")]
    return {"command": "trackdyn fidelities --json", "figures": rows, "mismatches": mism}


@producer("geometry-grid", "docs/vehicle.md (sprocket / idler offsets: assembled and refused positions)",
          quick=True)
def geometry_grid():
    """How many of the thesis's 9 x 9 sprocket and idler offsets (±0.2 m in 0.05 m) the M113 assembles."""
    from trackdyn.assembly.builder import vehicle_geometry
    from trackdyn.assembly.geometry import GeometryError
    from trackdyn.spec.io import get

    spec = get("m113")
    d = np.round(np.arange(-0.2, 0.2001, 0.05), 3)
    out = {}
    for wheel in ("sprocket", "idler"):
        ok, refused = 0, {}
        for dx in d:
            for dz in d:
                s = (spec.with_sprocket_offset(dx=dx, dz=dz) if wheel == "sprocket"
                     else spec.with_idler_offset(dx=dx, dz=dz))
                try:
                    vehicle_geometry(s)
                    ok += 1
                except (GeometryError, ValueError) as err:
                    key = str(err).split(":")[0]
                    refused[key] = refused.get(key, 0) + 1
        out[wheel] = {"assembled": ok, "refused": int(sum(refused.values())), "reasons": refused}
    sp, idl = out["sprocket"], out["idler"]
    mism = []
    if not _doc_says("vehicle.md", f"sprocket {sp['assembled']} assemble, {sp['refused']} refused"):
        mism.append("vehicle.md: sprocket count")
    if not _doc_says("vehicle.md", f"idler {idl['assembled']} / {idl['refused']}"):
        mism.append("vehicle.md: idler count (table)")
    if not _doc_says("vehicle.md", f"{idl['assembled']} of 81 idler"):
        mism.append("vehicle.md: idler count (text)")
    return {"command": "vehicle_geometry over the 9 x 9 grids", "figures": out, "mismatches": mism}


@producer("closure", "docs/vehicle.md (track closure error)", quick=True)
def closure():
    """Largest loop-closure error of the closed tracks of every built-in vehicle, m."""
    from trackdyn.assembly.builder import vehicle_geometry
    from trackdyn.spec.io import get, library_names

    err = {n: max(float(t.closure_error) for t in vehicle_geometry(get(n)).tracks.values())
           for n in library_names()}
    worst = max(err.values())
    return {"command": "vehicle_geometry(spec).tracks[side].closure_error", "figures": err,
            "mismatches": [] if worst < 1e-13 and _doc_says("vehicle.md", "closure error < 1e-13 m") else
            ["vehicle.md: closure error bound"]}


# ------------------------------------------------------------------------------------------------- full
@producer("conformance", "docs/massless.md (Cross-fidelity conformance table)")
def conformance():
    """Every fidelity against links on the conformance scenarios (`python -m trackdyn.testing.conformance`)."""
    from trackdyn.testing.conformance import conformance_report

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = conformance_report()
    mism = []
    for name, f in r["fidelities"].items():
        for c in f["checks"]:
            if not _doc_says("massless.md", f"| {c['scenario']} | {c['metric']} | {c['reference']:.4g} | "
                                            f"{c['value']:.4g} |"):
                mism.append(f"massless.md: {name} {c['scenario']}.{c['metric']}")
    return {"command": "python -m trackdyn.testing.conformance", "figures": r, "mismatches": mism}


@producer("vehicle-scenarios", "docs/vehicle.md (The M113 against the thesis: settle, cruise, accelerate rows)")
def vehicle_scenarios():
    """`trackdyn run settle|cruise|accelerate --vehicle m113 --json` (links, their default steps)."""
    return {"command": "trackdyn run settle|cruise|accelerate --vehicle m113 --json",
            "figures": {name: _trackdyn("run", name, "--vehicle", "m113") for name in ("settle", "cruise",
                                                                                       "accelerate")},
            "mismatches": []}


@producer("chain64-no-geometric-stiffness",
          "docs/validation.md (chain64 without the joints' geometric stiffness: ±2.5e-5 M g L, rising)")
def chain64_no_geometric_stiffness():
    """chain64, h = 1e-4, 2 s, Newton matrix without the joints' geometric stiffness: energy swing and growth."""
    from trackdyn.testing.validation import chain64

    r = chain64(constraint_stiffness=False)
    swing, growth = r["energy_swing_rel"], r["errors"]["energy_growth_rel"]
    mism = []
    if not (_doc_says("validation.md", f"±{swing:.1e} M g L".replace("e-0", "e-")) and growth > 0):
        mism.append(f"validation.md: swing {swing:.2e} M g L, growth {growth:.2e}")
    return {"command": "trackdyn.testing.validation.chain64(constraint_stiffness=False)",
            "figures": {"energy_swing_rel": swing, "energy_growth_rel": growth,
                        "pin_separation_m": r["errors"]["pin_separation_m"]}, "mismatches": mism}


@producer("corner-settling", "docs/vehicle.md (the extreme accepted sprocket / idler corners settle at 9.4–10.4 kN)")
def corner_settling():
    """`settle` (the §5.1 tensioning) at every accepted corner (±0.2 m in x and z) of the sprocket and idler grids."""
    from trackdyn.assembly.builder import vehicle_geometry
    from trackdyn.assembly.geometry import GeometryError
    from trackdyn.experiments.scenarios import settle
    from trackdyn.spec.io import get

    spec = get("m113")
    out, tensions = {}, []
    for wheel in ("sprocket", "idler"):
        for dx in (-0.2, 0.2):
            for dz in (-0.2, 0.2):
                s = spec.with_sprocket_offset(dx=dx, dz=dz) if wheel == "sprocket" else spec.with_idler_offset(
                    dx=dx, dz=dz)
                key = f"{wheel} dx {dx:+.1f} dz {dz:+.1f}"
                try:
                    vehicle_geometry(s)
                except (GeometryError, ValueError) as err:
                    out[key] = {"refused": str(err)}
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r, _ = settle(s)
                t = r["mean_shoe_tension_N"]
                out[key] = {"status": r["status"], "mean_shoe_tension_N": t}
                tensions.extend(t.values())
    lo, hi = min(tensions) / 1e3, max(tensions) / 1e3
    text = f"settle at {lo:.1f}–{hi:.1f} kN"
    return {"command": "trackdyn.experiments.scenarios.settle at each corner", "figures": out,
            "range_kN": [lo, hi], "mismatches": [] if _doc_says("vehicle.md", text) else [f"vehicle.md: {text}"]}


@producer("power-audit", "docs/vehicle.md (the power audit of a 2 s full-throttle run)")
def power_audit():
    """`trackdyn run accelerate --vehicle m113 --t-end 2 --json`: the energy balance of the run."""
    r = _trackdyn("run", "accelerate", "--vehicle", "m113", "--t-end", "2")
    return {"command": "trackdyn run accelerate --vehicle m113 --t-end 2 --json",
            "figures": {"final_speed_mps": r.get("final_speed_mps"), "power_audit": r.get("power_audit")},
            "mismatches": []}


@producer("validation", "docs/validation.md (every case's measured figures; the table is checked by "
                        "tests/validation/test_documented_figures.py)")
def validation():
    """`trackdyn validate --json`: every analytic and contact validation case."""
    r = _trackdyn("validate")
    return {"command": "trackdyn validate --json", "figures": r, "mismatches": []}


@producer("peers", "bench/README.md (trackdyn and MuJoCo side by side)")
def peers():
    """`trackdyn bench chain64 --peers --json` and `trackdyn bench m113-flat --peers --json`."""
    return {"command": "trackdyn bench chain64|m113-flat --peers --json",
            "figures": {n: _trackdyn("bench", n, "--peers") for n in ("chain64", "m113-flat")}, "mismatches": []}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="producers to run (default: all, or the quick ones with --quick)")
    ap.add_argument("--quick", action="store_true", help="only the quick producers")
    ap.add_argument("--list", action="store_true", help="list the producers and exit")
    ap.add_argument("--out", type=Path, default=HERE / "figures", help="output folder (default docs/figures)")
    a = ap.parse_args(argv)
    if a.list:
        for n, p in PRODUCERS.items():
            print(f"{n:<20} {'quick' if p['quick'] else 'full ':<6} {p['summary']}  [{p['docs']}]")
        return 0
    unknown = [n for n in a.names if n not in PRODUCERS]
    if unknown:
        print(f"unknown producer(s) {unknown}; choose from {list(PRODUCERS)}", file=sys.stderr)
        return 2
    names = a.names or [n for n, p in PRODUCERS.items() if p["quick"] or not a.quick]
    a.out.mkdir(parents=True, exist_ok=True)
    machine = {"cpu": platform.processor() or platform.machine(), "python": platform.python_version(),
               "system": platform.platform()}
    failed = []
    index = ["# Figures produced by `python docs/figures.py`", "",
             "| producer | docs | date | wall time, s | mismatches |", "|---|---|---|---|---|"]
    for n in names:
        p = PRODUCERS[n]
        t0 = time.perf_counter()
        try:
            r = p["fn"]()
        except Exception as err:  # a failed producer is reported, the others still run
            r = {"error": f"{type(err).__name__}: {err}", "mismatches": [f"{n} failed"]}
        r.update({"producer": n, "docs": p["docs"], "wall_time_s": round(time.perf_counter() - t0, 2),
                  "machine": machine, "date": datetime.now(timezone.utc).isoformat(timespec="seconds")})
        (a.out / f"{n}.json").write_text(json.dumps(r, indent=1, default=float) + "\n", encoding="utf-8")
        print(f"{n}: {r['wall_time_s']} s, mismatches: {r['mismatches'] or 'none'}")
        if r["mismatches"]:
            failed.append(n)
    # the index lists every producer whose output is in the folder, from this run or an earlier one
    for n, p in PRODUCERS.items():
        f = a.out / f"{n}.json"
        if f.exists():
            r = json.loads(f.read_text(encoding="utf-8"))
            index.append(f"| {n} | {p['docs']} | {r['date']} | {r['wall_time_s']} | "
                         f"{', '.join(r['mismatches']) or 'none'} |")
    (a.out / "index.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
