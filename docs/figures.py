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
import re
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


def _e(x: float) -> str:
    """``x`` as the docs write it: two significant digits, ``9.7e-13``, ``2.3e-4``."""
    m, e = f"{x:.1e}".split("e")
    return f"{m}e{int(e)}"


def _doc_says(path: str, text: str) -> bool:
    return text in (HERE / path).read_text(encoding="utf-8")


#: A stated timing: a wall or CPU time, a cost per step, sample or simulated second, a real-time factor.
TIMING = re.compile(r"\d\s*µs|\d\s*(?:ms|us)\s*(?:/|per\b|of (?:a|an|wall|cpu|the (?:step|run|wall))\b)|"  # 1.8 ms/step, 53 µs
                    r"\b(?:wall|cpu)\b[^|.;]*?\d[\d.]*\s*s\b|\d[\d.]*\s*s\b[^|.;]*?\b(?:wall|cpu)\b|"  # 0.92 s of wall
                    r"\d\s*(?:×|x)\s*(?:faster than )?real[- ]time|\d\s*(?:×|x) the wall|"  # 118× real time
                    r"^\|.*(?:wall time|wall /|wall s|\| wall \||ms/step|µs/step|cpu / sim).*\|$",  # timing column
                    re.IGNORECASE)


def unproduced_timings(docs: Path = HERE) -> list:
    """Sections of ``docs/*.md`` that state a timing but name no producer (``docs/figures.py NAME``).

    A section is the text under one heading down to the next heading of any level. Returns
    ``(file, heading, line)`` of the first timing of every such section.
    """
    found = []
    for path in sorted(docs.glob("*.md")):
        if path.name == "figures.md":
            continue
        sections, heading, lines = [], "(top)", []
        in_code = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                in_code = not in_code
            if line.startswith("#") and not in_code:
                sections.append((heading, lines))
                heading, lines = line.strip("# ").strip(), []
            else:
                lines.append(line)
        sections.append((heading, lines))
        for heading, lines in sections:
            text = "\n".join(lines)
            named = set(re.findall(r"figures\.py\s+([a-z0-9-]+)", text))
            if named & set(PRODUCERS):
                continue
            hit = next((ln for ln in lines if TIMING.search(ln)), None)
            if hit is not None:
                found.append((path.name, heading, hit.strip()[:120]))
    return found


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
    """Largest loop-closure error of the closed tracks of every built-in tracked vehicle, m."""
    from trackdyn.assembly.builder import vehicle_geometry
    from trackdyn.spec.io import get, library_names

    err = {n: max(float(t.closure_error) for t in vehicle_geometry(get(n)).tracks.values())
           for n in library_names() if get(n).running_gear == "tracks"}
    worst = max(err.values())
    return {"command": "vehicle_geometry(spec).tracks[side].closure_error", "figures": err,
            "mismatches": [] if worst < 1e-12 and _doc_says("vehicle.md", "closure error < 1e-12 m") else
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


def _script(path: str, *args) -> list:
    """``python PATH ARGS`` (a script of the repository) in a subprocess; every JSON line it prints."""
    out = subprocess.run([sys.executable, str(HERE.parent / path), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{path} {' '.join(args)}: exit {out.returncode}: {out.stderr[-2000:]}")
    lines = []
    for line in out.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    if not lines:  # an indented JSON document
        lines.append(json.loads(out.stdout))
    return lines


# ------------------------------------------------------------------------------------------------- timings
# Wall times depend on the machine and its load: these producers re-measure them and record the machine;
# they do not compare with the docs (the docs give each timing with its date, machine and load).

@producer("bench-massless", "docs/massless.md (Benchmarks: the current figures table, CPU and wall per "
                            "simulated second at h = 0.01, 0.02, 0.005, 0.002 s)")
def bench_massless():
    """`python bench/massless.py --step 0.01 0.02 0.005 0.002 --repeats 3` (flat and 10 in half-round, 4 s)."""
    rows = _script("bench/massless.py", "--step", "0.01", "0.02", "0.005", "0.002", "--repeats", "3")
    return {"command": "python bench/massless.py --step 0.01 0.02 0.005 0.002 --repeats 3", "figures": rows,
            "mismatches": []}


@producer("massless-halfround-steps", "docs/massless.md (peak driver a_z over the 10 in half-round against the "
                                      "step: the accuracy of the real-time step)")
def massless_halfround_steps():
    """`trackdyn event half-round --vehicle m113 --fidelity massless --speeds 2,3,4 --step H` for six steps."""
    steps = ("0.0005", "0.001", "0.002", "0.005", "0.01", "0.02")
    out = {}
    for h in steps:
        r = _trackdyn("event", "half-round", "--vehicle", "m113", "--fidelity", "massless", "--speeds", "2,3,4",
                      "--step", h, "--out", str(HERE.parent / "runs" / "figures" / f"halfround-massless-{h}"))
        r.pop("trials", None)
        out[h] = r
    return {"command": "trackdyn event half-round --vehicle m113 --fidelity massless --speeds 2,3,4 --step H --json",
            "figures": out, "mismatches": []}


@producer("massless-vs-links", "docs/massless.md (side by side with the link-track model: the four events, "
                               "their results and wall times)")
def massless_vs_links():
    """The events of docs/massless.md's side-by-side table with each fidelity (links: hours)."""
    runs = {"half-round": ["--height-in", "10", "--speeds", "2,3,4"],
            "step-climb": ["--search", "values", "--values", "0.4,0.5,0.6"],
            "gap-crossing": ["--search", "values", "--values", "1.5,1.8,2.4"],
            "ride": ["--road", "iso8608", "--class", "D", "--speed", "5", "--length", "30"]}
    out = {}
    for fid, step in (("massless", "0.002"), ("links", "0.0005")):
        for name, args in runs.items():
            t0 = time.perf_counter()
            r = _trackdyn("event", name, "--vehicle", "m113", "--fidelity", fid, "--step", step, *args,
                          "--out", str(HERE.parent / "runs" / "figures" / f"{name}-{fid}"))
            r.pop("trials", None)
            out[f"{name} {fid}"] = {"result": r, "command_wall_time_s": time.perf_counter() - t0}
    return {"command": "trackdyn event NAME --vehicle m113 --fidelity F --step H ... --json", "figures": out,
            "mismatches": []}


@producer("bench-chain64-integrators", "docs/integrators.md (chain64: each integrator at its largest step within "
                                       "1e-3 m; ms/step, wall per simulated second, split)")
def bench_chain64_integrators():
    """`trackdyn bench chain64-integrators --json` (hours: the first-order schemes search down to 7.8e-5 s)."""
    return {"command": "trackdyn bench chain64-integrators --json",
            "figures": _trackdyn("bench", "chain64-integrators"), "mismatches": []}


@producer("m113-stepsize", "docs/integrators.md (the θ-method's largest step on the M113 within 1 mm; its wall "
                           "time per simulated second)")
def m113_stepsize():
    """`python bench/m113_stepsize.py --integrator theta-linearized --theta 0.5 --steps 1/1100 --repeats 3`."""
    rows = _script("bench/m113_stepsize.py", "--integrator", "theta-linearized", "--theta", "0.5", "--steps",
                   "1/1100", "1e-3", "--repeats", "3")
    return {"command": "python bench/m113_stepsize.py --integrator theta-linearized --theta 0.5 --steps 1/1100 1e-3 "
                       "--repeats 3", "figures": rows, "mismatches": []}


@producer("bench-contact-loop", "docs/contact.md (Cost: the 63-shoe loop, full and diagonal coupling; the "
                                "coupling's pattern and factor sizes)")
def bench_contact_loop():
    """`trackdyn bench contact-loop --json`."""
    return {"command": "trackdyn bench contact-loop --json", "figures": _trackdyn("bench", "contact-loop"),
            "mismatches": []}


@producer("constraint-treatment", "docs/integrators.md (partitioning against Baumgarte on chain64: max|C|, "
                                  "max|J v + C_t|, tip deviation, ms/step)")
def constraint_treatment():
    """chain64, 2 s, RK4 at 1.67e-3 s and AB3 at 6.25e-4 s with coordinate partitioning and Baumgarte (ω = 10, 100/s)."""
    from trackdyn.sim.simulation import Simulation
    from trackdyn.testing import problems as P
    from trackdyn.testing.benchmarks_integrators import GRID, chain_tip

    rec = ["link[63].pos.*", "link[63].quat.*"]

    def run(integrator, h, **opts):
        sim = Simulation(P.chain(**P.CHAIN64), integrator=integrator, step=h, output_step=GRID, record=rec, **opts)
        s = sim.system
        worst = {"C": 0.0, "Jv": 0.0}

        def cb(sim):
            st = sim.state
            s.update_kinematics(st.q, st.v)
            s.eval_constraints()
            jv = s.phi_t.copy()
            for side in range(2):
                b = s.row_body[:, side]
                on = b >= 0
                vb = st.v.reshape(-1, 6)[b[on]]
                jv[on] += np.einsum("ij,ij->i", s.J[on, 6 * side:6 * side + 6], vb)
            worst["C"] = max(worst["C"], float(np.abs(s.phi).max()))
            worst["Jv"] = max(worst["Jv"], float(np.abs(jv).max()))

        res = sim.run(2.0, callback=cb)
        # the integrator's own time per step (its laps), without the callback's measurement
        return chain_tip(res), worst, 1e3 * sum(sim.integrator.timing.values()) / max(1, sim.steps)

    ref, _, _ = run("rk4", 2.5e-4)
    out, mism = {}, []
    for integrator, h in (("rk4", 0.01 / 6), ("ab3", 6.25e-4)):
        for label, opts in (("partitioning", {}),
                            ("baumgarte 10/s", {"constraints": "baumgarte", "baumgarte_frequency": 10.0}),
                            ("baumgarte 100/s", {"constraints": "baumgarte", "baumgarte_frequency": 100.0})):
            tip, worst, ms = run(integrator, h, **opts)
            n = min(len(tip), len(ref))
            dev = float(np.abs(tip[:n] - ref[:n]).max())
            out[f"{integrator} {label}"] = {"max_C": worst["C"], "max_Jv_plus_Ct": worst["Jv"],
                                            "tip_deviation_m": dev, "ms_per_step": ms}
            row = f"| {label.replace('baumgarte', 'Baumgarte ω =')} | {_e(worst['C'])} | {_e(worst['Jv'])} | {_e(dev)} |"
            if not _doc_says("integrators.md", row):
                mism.append(f"integrators.md: {integrator} {row}")
    return {"command": "python docs/figures.py constraint-treatment (chain64, Simulation(..., constraints=...))",
            "figures": out, "mismatches": mism}


@producer("solver-hessian", "docs/integrators.md (saddle-point solvers: PSOR and BB with the exact coupled H "
                            "against hessian='block': sweeps, iterations, wall)")
def solver_hessian():
    """PSOR and BB on chain64's coupled KKT system (tol 1e-8, cold start) with ``hessian="exact"`` and ``"block"``."""
    from trackdyn.linsolve import make_solver
    from trackdyn.testing.validation_integrators import chain64_saddle_point

    s, data, rhs = chain64_saddle_point()
    out = {}
    for name in ("psor", "bb"):
        for hessian in ("exact", "block"):
            sol = make_solver(name, s.pattern, tol=1e-8, warm_start=False, max_iter=100000, hessian=hessian)
            x = np.zeros(s.pattern.n)
            t0 = time.perf_counter()
            sol.factor(data)
            sol.solve(rhs, x)
            out[f"{name} {hessian}"] = {"iterations": int(sol.last_iterations), "wall_time_s": time.perf_counter() - t0,
                                        "residual_rel": float(sol.last_residual)}
    mism = [f"integrators.md: {k} {v['iterations']}" for k, v in out.items()
            if not _doc_says("integrators.md", f"{v['iterations']} ")]
    return {"command": "python docs/figures.py solver-hessian", "figures": out, "mismatches": mism}


@producer("convergence", "docs/integrators.md (Convergence studies: the chain64 and double-pendulum figures, "
                         "their deviations and minres's wall time against direct)")
def convergence():
    """`trackdyn study convergence chain64|double-pendulum ... --json` (the figures go to docs/integrators/)."""
    runs = HERE.parent / "runs" / "figures"
    cases = {"chain64": ["chain64", "--steps", "1e-3,5e-4,2.5e-4", "--integrators",
                         "euler-implicit-linearized,euler-implicit-projected", "--solvers", "direct,minres"],
             "double_pendulum": ["double-pendulum", "--steps", "2e-3,1e-3,5e-4,2.5e-4"]}
    out = {}
    for name, args in cases.items():
        r = _trackdyn("study", "convergence", *args, "--out", str(runs / f"convergence-{name}"))
        out[name] = r
        for ext in ("png", "svg"):
            src = runs / f"convergence-{name}" / f"convergence.{ext}"
            if src.exists():
                (HERE / "integrators" / f"convergence_{name}.{ext}").write_bytes(src.read_bytes())
    return {"command": "trackdyn study convergence chain64|double-pendulum ... --json", "figures": out,
            "mismatches": []}


@producer("events-m113", "docs/events.md (M113 results: the event table, figures, wall times; "
                         "`python bench/events_m113.py --quick`)")
def events_m113():
    """`python bench/events_m113.py --quick`: every event's reduced procedure on the M113 (hours)."""
    rows = _script("bench/events_m113.py", "--quick")
    return {"command": "python bench/events_m113.py --quick", "figures": rows, "mismatches": []}


@producer("events-m113-full", "docs/events.md (M113 results, the thesis's full procedures: docs/events/results.json, "
                              "figures, wall times; `python bench/events_m113.py`)")
def events_m113_full():
    """`python bench/events_m113.py`: the thesis's full procedures on the M113, part by part (many hours on one core;
    parts already in docs/events/results.json with the same command are kept, so a later sitting continues)."""
    rows = _script("bench/events_m113.py")
    return {"command": "python bench/events_m113.py", "figures": rows, "mismatches": []}


@producer("ground-roads", "docs/terrain.md (Road profiles of han-sander-mao Table 2: the M113 over the four roads on "
                          "rigid and Winkler ground)")
def ground_roads():
    """`trackdyn event ride --vehicle m113 --road R --ground G [--length 10] --json` for the four roads on both grounds
    (eight runs of 35-100 s of wall each)."""
    rows = []
    for road in ("bump", "trough", "sinusoid", "iso8608"):
        for ground in ("rigid", "winkler"):
            args = ["event", "ride", "--vehicle", "m113", "--road", road, "--ground", ground]
            if road in ("sinusoid", "iso8608"):
                args += ["--length", "10"]
            t0 = time.perf_counter()
            r = _trackdyn(*args)
            rows.append({"road": road, "ground": ground, "rms_g": r.get("rms_g"), "peak_g": r.get("peak_g"),
                         "dominant_frequency_hz": r.get("dominant_frequency_hz"),
                         "wall_time_s": time.perf_counter() - t0})
    return {"command": "trackdyn event ride --vehicle m113 --road R --ground G [--length 10] --json", "rows": rows,
            "mismatches": []}


@producer("step-sensitivity", "docs/events.md (Why the model climbs higher: the step limit against hull, pad modulus, "
                              "friction, contact treatment and time step; docs/events/sensitivity/; "
                              "`python bench/m113_sensitivity.py`)")
def step_sensitivity():
    """`python bench/m113_sensitivity.py`: the five step-limit sensitivity sweeps, one worker each (hours per sweep;
    finished points in docs/events/sensitivity/ are kept, so a later sitting continues)."""
    rows = _script("bench/m113_sensitivity.py")
    return {"command": "python bench/m113_sensitivity.py", "figures": rows, "mismatches": []}


@producer("impact-stability", "docs/events.md (Stability at impacts: trials with and without the joints' geometric "
                              "stiffness, the pin-tension drift; `python bench/m113_impact_stability.py --drift`)")
def impact_stability():
    """`python bench/m113_impact_stability.py --drift`: six event trials of the M113 run with and without the joints'
    geometric stiffness at h = 5e-4 s, and the pin-tension drift of the 0.55 m step (about half an hour)."""
    rows = _script("bench/m113_impact_stability.py", "--drift")
    return {"command": "python bench/m113_impact_stability.py --drift", "figures": rows, "mismatches": []}


@producer("sweep-speedup", "docs/events.md (Sweep: 1 and 2 workers)")
def sweep_speedup():
    """`python bench/sweep_speedup.py --file docs/events/sweep_short.toml 1 2`."""
    _script("bench/sweep_speedup.py", "--file", str(HERE / "events" / "sweep_short.toml"), "1", "2")
    return {"command": "python bench/sweep_speedup.py --file docs/events/sweep_short.toml 1 2",
            "figures": json.loads((HERE / "events" / "sweep_benchmark.json").read_text(encoding="utf-8")),
            "mismatches": []}


def _recorded(script: str, record: str, *args) -> dict:
    """``python SCRIPT ARGS --json RECORD`` (paths relative to the repository); the JSON record it writes."""
    root = HERE.parent
    _script(script, *[str(root / a) if (root / a).exists() else a for a in args], "--json", str(root / record))
    return {"command": " ".join(["python", script, *args, "--json", record]),
            "figures": json.loads((root / record).read_text(encoding="utf-8")), "mismatches": []}


@producer("synthesis-cost", "docs/synthesis.md (Cost: robot-6x6 on the synthesis fidelity, explicit and "
                           "explicit-implicit at their largest stable steps, against links; "
                           "docs/synthesis/robot6x6_cost.json; a few minutes)")
def synthesis_cost():
    """`python bench/synthesis_robot6x6.py --t-end 2 --repeats 3 --json` into docs/synthesis/robot6x6_cost.json."""
    root = HERE.parent
    args = ["--t-end", "2", "--repeats", "3", "--json"]
    out = subprocess.run([sys.executable, str(root / "bench" / "synthesis_robot6x6.py"), *args], capture_output=True,
                         text=True, check=True)
    rec = {"command": "python bench/synthesis_robot6x6.py " + " ".join(args),
           **json.loads(out.stdout.strip().splitlines()[-1])}
    (HERE / "synthesis" / "robot6x6_cost.json").write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    return {"command": rec["command"], "figures": rec, "mismatches": []}


@producer("study-speedup", "docs/study/README.md and bench/README.md (a 12-point slice of the thesis's half-round "
                           "study on 1 and 2 workers: docs/study/speedup.json; a free machine, about 15 min)")
def study_speedup():
    """`python bench/sweep_speedup.py --file bench/study_slice_halfround12.toml --json docs/study/speedup.json`."""
    return _recorded("bench/sweep_speedup.py", "docs/study/speedup.json", "--file", "bench/study_slice_halfround12.toml")


@producer("study-cluster", "docs/study/README.md (the slice on a hand-started dask scheduler and two dask workers, "
                           "a worker and the driver killed mid-study, resumed, the table against the 2-worker run: "
                           "docs/study/cluster.json; run study-speedup first)")
def study_cluster():
    """`python bench/sweep_cluster.py --reference runs/sweep-bench-study_slice_halfround12-2 --json
    docs/study/cluster.json`."""
    return _recorded("bench/sweep_cluster.py", "docs/study/cluster.json",
                     "--reference", "runs/sweep-bench-study_slice_halfround12-2")


@producer("events-m113-final", "docs/events.md (M113 results at h = 2.5e-4 s, the converged step: "
                               "docs/events/results.json parts NAME-h2.5e-4, figures in docs/events/h2.5e-4/; "
                               "`python bench/events_m113.py --step 2.5e-4`)")
def events_m113_final():
    """`python bench/events_m113.py --step 2.5e-4`: the thesis's full procedures at the step where the step limit
    agrees with the thesis's 1e-4 s (parts already in docs/events/results.json are kept)."""
    rows = _script("bench/events_m113.py", "--step", "2.5e-4")
    return {"command": "python bench/events_m113.py --step 2.5e-4", "figures": rows, "mismatches": []}


@producer("nsc-stepsize", "docs/contact-nsc.md (The M113 under NSC: the largest step within 1 mm of the h = 5e-4 s "
                          "road-wheel heights over 2 s of cruise, rigid contact: docs/nsc/stepsize_rigid.json; "
                          "about 30 min)")
def nsc_stepsize():
    """`python bench/m113_stepsize.py --nsc --compliance 0 --t-end 2 --settle 0.5 --steps 1e-3 2e-3 2.5e-3 5e-3
    --record wheels --json docs/nsc/stepsize_rigid.json`."""
    return _recorded("bench/m113_stepsize.py", "docs/nsc/stepsize_rigid.json", "--nsc", "--compliance", "0",
                     "--t-end", "2", "--settle", "0.5", "--steps", "1e-3", "2e-3", "2.5e-3", "5e-3",
                     "--record", "wheels")


@producer("nsc-stepsize-newton", "docs/contact-nsc.md (The M113 under NSC: the largest step within 1 mm of the h = 5e-4 s "
                                 "road-wheel heights over 2 s of cruise with the vehicle's NSC settings, Newton and the "
                                 "terrain's compliance: docs/nsc/stepsize_newton.json; about 10 min)")
def nsc_stepsize_newton():
    """`python bench/m113_stepsize.py --nsc --t-end 2 --settle 0.5 --steps 1e-3 2e-3 2.5e-3 5e-3 --record wheels
    --json docs/nsc/stepsize_newton.json`."""
    return _recorded("bench/m113_stepsize.py", "docs/nsc/stepsize_newton.json", "--nsc", "--t-end", "2", "--settle",
                     "0.5", "--steps", "1e-3", "2e-3", "2.5e-3", "5e-3", "--record", "wheels")


@producer("nsc-compliance", "docs/contact-nsc.md and bench/README.md (the NSC M113's cruise at three contact "
                            "compliances of the terrain's contacts, 1e-7 m/N to rigid: iterations, cost, speed; docs/nsc/compliance.json; "
                            "about 10 min)")
def nsc_compliance():
    """`python bench/nsc_compliance.py --compliance 1e-7 1e-8 0 --t-end 0.2 --json
    docs/nsc/compliance.json`."""
    return _recorded("bench/nsc_compliance.py", "docs/nsc/compliance.json", "--compliance", "1e-7", "1e-8", "0",
                     "--t-end", "0.2")


@producer("nsc-newton", "docs/contact-nsc.md and bench/README.md (the Newton contact solver against APGD on one "
                        "settled state of the NSC M113's cruise, and Newton's regularisation scan; docs/nsc/newton.json; "
                        "about 5 min)")
def nsc_newton():
    """`python bench/nsc_newton.py --settle 0.5 --steps 100 --json docs/nsc/newton.json`."""
    return _recorded("bench/nsc_newton.py", "docs/nsc/newton.json", "--settle", "0.5", "--steps", "100")


@producer("nsc-newton-levers", "docs/contact-nsc.md (the Newton solver's cost against the friction model, Coulomb or "
                               "Anitescu's relaxation, and the tolerance, 1e-5 or 1e-4 m/s; docs/nsc/levers_*.json; "
                               "about 5 min)")
def nsc_newton_levers():
    """`python bench/nsc_perf.py --friction F --tolerance TOL --settle 0.5 --settle-solver newton --variants newton
    --steps 100 --max-iterations 5000 --json docs/nsc/levers_F_TOL.json` for the four pairs."""
    rows = {}
    for fr in ("coulomb", "anitescu"):
        for tol in ("1e-5", "1e-4"):
            rows[f"{fr} {tol}"] = _recorded("bench/nsc_perf.py", f"docs/nsc/levers_{fr}_{tol}.json", "--friction", fr,
                                            "--tolerance", tol, "--settle", "0.5", "--settle-solver", "newton",
                                            "--variants", "newton", "--steps", "100", "--max-iterations", "5000")
    return {"command": "python bench/nsc_perf.py --friction F --tolerance TOL ... (four runs)",
            "figures": {k: v["figures"] for k, v in rows.items()}, "mismatches": []}


@producer("nsc-cruise", "docs/contact-nsc.md and bench/README.md (the NSC M113's 2 s cruise at 4.2 m/s with the "
                        "vehicle's solver, Newton: speed range, steps above the tolerance, cost; docs/nsc/cruise_newton.json; "
                        "a few minutes)")
def nsc_cruise():
    """`trackdyn bench m113-flat-nsc --t-end 2 --json` into docs/nsc/cruise_newton.json."""
    r = _trackdyn("bench", "m113-flat-nsc", "--t-end", "2")
    r = {"command": "trackdyn bench m113-flat-nsc --t-end 2 --json", **r}
    (HERE / "nsc" / "cruise_newton.json").write_text(json.dumps(r, indent=1) + "\n", encoding="utf-8")
    return {"command": r["command"], "figures": r, "mismatches": []}


@producer("nsc-settle", "docs/contact-nsc.md (the NSC M113 at rest on flat ground: the ground's force against the "
                        "weight over the last 0.5 and 1 s of 6 s, Newton, Coulomb friction; docs/nsc/settle_newton.json; "
                        "about 1 min)")
def nsc_settle():
    """`python bench/nsc_settle_m113.py --t-end 6 --step 2e-3 --friction coulomb --contact-solver newton --json
    docs/nsc/settle_newton.json`."""
    return _recorded("bench/nsc_settle_m113.py", "docs/nsc/settle_newton.json", "--t-end", "6", "--step", "2e-3",
                     "--friction", "coulomb", "--contact-solver", "newton")


@producer("nsc-validation-newton", "docs/contact-nsc.md (Validation: the Newton solver's incline, slide and stack "
                                   "figures; docs/nsc/validation_newton.json; about 1 min)")
def nsc_validation_newton():
    """`python bench/nsc_validation_newton.py --json docs/nsc/validation_newton.json`."""
    return _recorded("bench/nsc_validation_newton.py", "docs/nsc/validation_newton.json")


@producer("nsc-throttle", "docs/contact-nsc.md (Contact compliance: the M113 under full throttle on flat ground, the "
                          "sprocket's spin with the compliance on every contact, on the terrain's, and rigid; "
                          "docs/nsc/throttle.json; a few minutes)")
def nsc_throttle():
    """`python bench/nsc_throttle_m113.py --json docs/nsc/throttle.json`."""
    return _recorded("bench/nsc_throttle_m113.py", "docs/nsc/throttle.json")


@producer("nsc-jam", "docs/contact-nsc.md (Contact compliance: the rigid M113 jammed on the 0.852 m step's edge at "
                     "2.68 s and the steps after it at four compliances; docs/nsc/jam.json; about 20 min)")
def nsc_jam():
    """`python bench/nsc_jam_m113.py --json docs/nsc/jam.json`."""
    return _recorded("bench/nsc_jam_m113.py", "docs/nsc/jam.json")


@producer("nsc-events", "docs/contact-nsc.md (the M113 under NSC at the SMC limits: the step, the gap, the 12 in "
                        "half-round; docs/events/results.json parts NAME-nsc; an hour or more)")
def nsc_events():
    """`python bench/events_m113.py --nsc`: the trials at the SMC limits with contact.method = nsc (parts already
    in docs/events/results.json are kept)."""
    rows = _script("bench/events_m113.py", "--nsc")
    return {"command": "python bench/events_m113.py --nsc", "figures": rows, "mismatches": []}


@producer("synthesis", "docs/synthesis.md (kim-2012 Table 3 and Figs. 7-8 on the 1/6 robot: RMS errors, CPU "
                       "ratios, largest stable steps; the figures go to docs/synthesis/)")
def synthesis():
    """`trackdyn study synthesis --vehicle robot-1-6 --json`: the four models, 35 s, and the step sweep."""
    runs = HERE.parent / "runs" / "figures" / "synthesis"
    r = _trackdyn("study", "synthesis", "--vehicle", "robot-1-6", "--out", str(runs))
    root = str(HERE.parent) + "/"  # paths relative to the repository, never the machine's
    r["out"] = r.get("out", "").replace(root, "")
    r["figures"] = [f.replace(root, "") for f in r.get("figures", [])]
    (HERE / "synthesis").mkdir(exist_ok=True)
    for name in ("fig7", "fig8"):
        for ext in ("png", "svg"):
            src = runs / f"{name}.{ext}"
            if src.exists():
                (HERE / "synthesis" / f"{name}.{ext}").write_bytes(src.read_bytes())
    mism = [f"synthesis.md: {n} largest stable step" for n, v in r.get("fig8", {}).items()
            if v["largest_stable_step_s"] and
            not _doc_says("synthesis.md", f"{n}: {1e3 * v['largest_stable_step_s']:g} ms")]
    return {"command": "trackdyn study synthesis --vehicle robot-1-6 --json", "figures": r, "mismatches": mism}


@producer("apc-joints-stepsize", "docs/joints.md and bench/README.md (each track-joint fidelity's largest step within "
                                 "1 mm of its own h = 1e-5 s run on the APC, and its CPU ratio to links there; "
                                 "docs/joints/stepsize.json; about 20 min)")
def apc_joints_stepsize():
    """`trackdyn bench apc-joints-stepsize --json` into docs/joints/stepsize.json."""
    r = _trackdyn("bench", "apc-joints-stepsize")
    r = {"command": "trackdyn bench apc-joints-stepsize --json", **r}
    (HERE / "joints" / "stepsize.json").write_text(json.dumps(r, indent=1) + "\n", encoding="utf-8")
    mism = [f"joints.md: {f['fidelity']} largest step" for f in r["fidelities"]
            if f["largest_step_s"] and not _doc_says("joints.md", f"| {f['fidelity']} | {f['largest_step_s']:g} s |")]
    return {"command": r["command"], "figures": r, "mismatches": mism}


@producer("apc-joints-cost", "docs/joints.md and docs/joints/ancf.md (the ancf fidelity's cost against links, both at "
                             "1e-4 s, their largest steps within 1 mm; side by side, the segments alternating; "
                             "docs/joints/cost_ancf_1e-4.json; about 3 min)")
def apc_joints_cost():
    """`python bench/apc_joints_cost.py --fidelities ancf --step 1e-4 --segments 8 --t-end 0.25` into
    docs/joints/cost_ancf_1e-4.json."""
    args = ["--fidelities", "ancf", "--step", "1e-4", "--segments", "8", "--t-end", "0.25",
            "--json", "docs/joints/cost_ancf_1e-4.json"]
    out = subprocess.run([sys.executable, "bench/apc_joints_cost.py", *args], capture_output=True, text=True,
                         cwd=HERE.parent)
    if out.returncode != 0:
        raise RuntimeError(f"bench/apc_joints_cost.py: exit {out.returncode}: {out.stderr[-2000:]}")
    r = json.loads((HERE / "joints" / "cost_ancf_1e-4.json").read_text(encoding="utf-8"))
    ratio = {x["fidelity"]: x["ratio_to_links"] for x in r["runs"]}
    return {"command": r["command"], "figures": {"wall_ratio_to_links": ratio,
                                                 "cpu_ratio_median": r["cpu_ratio_median"]}, "mismatches": []}


@producer("synthesis-m113-cost", "docs/synthesis.md (The M113 on synthesis: synthesis at 2.5e-4 s against links' "
                                 "Euler at 5e-4 s, their largest steps within 1 mm; side by side, the segments "
                                 "alternating; docs/synthesis/m113_cost.json; about 2 min)")
def synthesis_m113_cost():
    """`python bench/synthesis_m113_cost.py --segments 4 --t-end 0.5` into docs/synthesis/m113_cost.json."""
    args = ["--segments", "4", "--t-end", "0.5", "--json", "docs/synthesis/m113_cost.json"]
    out = subprocess.run([sys.executable, "bench/synthesis_m113_cost.py", *args], capture_output=True, text=True,
                         cwd=HERE.parent)
    if out.returncode != 0:
        raise RuntimeError(f"bench/synthesis_m113_cost.py: exit {out.returncode}: {out.stderr[-2000:]}")
    r = json.loads((HERE / "synthesis" / "m113_cost.json").read_text(encoding="utf-8"))
    fig = {x["fidelity"]: {"step_s": x["step_size_s"], "wall_per_sim": x["wall_per_sim"],
                           "cpu_per_sim": x["cpu_per_sim"], "cpu_ratio_to_links": x["cpu_ratio_to_links"]}
           for x in r["runs"]}
    return {"command": r["command"], "figures": fig, "mismatches": []}


@producer("joints-study", "docs/joints.md (wallin-shabana-2013 Figs. 8-16 on the APC: the chassis, a link's path, "
                          "a pin's raw and 30 Hz filtered forces, the penalty deformation, the CPU-time table; "
                          "docs/joints/joints.json and the figures in docs/joints/; about 30 min)")
def joints_study():
    """`trackdyn study joints --vehicle apc --step 5e-5 --out docs/joints --json`: constrained (with and without
    suspension), penalty 1e9 and 1e7, bushing; 10 s each at 5e-5 s (the pin forces' step error, docs/formulation.md)."""
    args = ["study", "joints", "--vehicle", "apc", "--step", "5e-5", "--out", "docs/joints"]
    out = subprocess.run([sys.executable, "-m", "trackdyn.cli.main", *args, "--json"], capture_output=True,
                         text=True, cwd=HERE.parent)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(args)}: exit {out.returncode}: {out.stderr[-2000:]}")
    r = json.loads(out.stdout)
    s = r["summary"]
    mism = []
    for key, text in (("constrained", "with suspension"), ("no-suspension", "without suspension")):
        d = s.get(f"drop_{key}")
        if d and not _doc_says("joints.md", f"{1e3 * d['settled_m']:.1f} mm {text}"):
            mism.append(f"joints.md: settled drop {text}")
    for key, row in r["runs"].items():
        if not _doc_says("joints.md", f"| {key} | {row['fidelity']} | {row['cpu_per_sim']:.2f} |"):
            mism.append(f"joints.md: CPU row of {key}")
    return {"command": "trackdyn " + " ".join(args) + " --json", "figures": r, "mismatches": mism}


@producer("chain64-recursive", "docs/recursive.md (Speed: chain64 in joint coordinates against MuJoCo's kinematic "
                               "tree, implicitfast and Euler, side by side at h = 1e-4 s; about 1 min)")
def chain64_recursive():
    """`trackdyn bench chain64-recursive --json`: µs per step and tip error of trackdyn's recursive chain64 and of
    MuJoCo's tree in one process (needs the peers extra for MuJoCo)."""
    r = _trackdyn("bench", "chain64-recursive")
    return {"command": "trackdyn bench chain64-recursive --json", "figures": r, "mismatches": []}


@producer("crawler-study", "docs/crawler.md (han-sander-mao Figs. 13-14's runs: the crawler's track subsystem alone "
                           "on flat ground, forward and reverse; docs/crawler/crawler.json and the figures in "
                           "docs/crawler/; about 1 min)")
def crawler_study():
    """`trackdyn study crawler --track-only --out docs/crawler --json`: the sprocket ramped 0 -> ±3.14 rad/s in
    0.75 s after a 0.5 s hold, 2.5 s at speed; checks the track speed, slip, ripple and strand tensions that
    docs/crawler.md states."""
    args = ["study", "crawler", "--track-only", "--out", "docs/crawler"]
    out = subprocess.run([sys.executable, "-m", "trackdyn.cli.main", *args, "--json"], capture_output=True,
                         text=True, cwd=HERE.parent)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(args)}: exit {out.returncode}: {out.stderr[-2000:]}")
    r = json.loads(out.stdout)
    mism = []
    for d, s in r["summary"].items():
        row = (f"| {d} | {s['track_speed_mps']:.4f} | {s['track_speed_over_closed_form']:.4f} | "
               f"{s['undercarriage_speed_mps']:.4f} | {100 * s['slip']:.2f} | "
               f"{100 * s['speed_ripple_over_pitch_circle_speed']:.2f} | "
               f"{1e-3 * s['top_strand_tension_steady_N']:.1f} | {1e-3 * s['bottom_strand_tension_steady_N']:.1f} |")
        if not _doc_says("crawler.md", row):
            mism.append(f"crawler.md: the {d} row")
    return {"command": "trackdyn " + " ".join(args) + " --json", "figures": r, "mismatches": mism}


#: han-sander-mao Fig. 15 (docs/crawler.md): the crawler with its seat over the four roads of Table 2 on Winkler
#: ground, as docs/terrain.md reads the table (the ride event's default sizes).
CRAWLER_RIDE_ROADS = ("bump", "trough", "sinusoid", "iso8608")
#: m/s: the chain speed n p ω / 2π of the crawler's 11-valley sprocket at the paper's operating sprocket speed,
#: 3.14 rad/s (§6; the text gives no vehicle speed for its Fig. 15): 11 x 0.190 x 3.14 / 2π = 1.0445 m/s.
CRAWLER_RIDE_SPEED = 1.04
#: s: the links fidelity's own step on the crawler (docs/crawler.md); the producer checks the trough at half of it.
CRAWLER_RIDE_STEP = 5e-4
#: s: start of the flat-ground window: the seat's transient from the vehicle's settling on the soil at the start
#: (0.8 Hz, 0.3 of critical: e^(-ζ ω t) = 0.9 % by 2.5 s) has died out.
CRAWLER_RIDE_SETTLED = 2.5


def _fresh_runs(name: str) -> Path:
    """An empty ``runs/NAME`` folder of the repository (``runs/`` is not tracked)."""
    import shutil

    d = HERE.parent / "runs" / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def _crawler_ride_event(road: str, step: float, out: Path, *extra: str) -> dict:
    """``trackdyn event ride --vehicle crawler --road ROAD --ground winkler`` at the producer's speed and ``step``
    (and ``extra`` arguments) into ``out``; its JSON, the wall time and the 1-minute load average before and
    after."""
    import os

    args = ["event", "ride", "--vehicle", "crawler", "--road", road, "--ground", "winkler",
            "--speed", f"{CRAWLER_RIDE_SPEED:g}", "--step", f"{step:g}", *extra, "--out", str(out)]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "trackdyn.cli.main", *args, "--json"], capture_output=True,
                          text=True, cwd=HERE.parent)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(args)}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    r = json.loads(proc.stdout)
    return {"result": r, "wall_time_s": wall, "load_1min": [load0, os.getloadavg()[0]], "folder": out / r["folder"]}


def _crawler_ride_windows(run: dict, spec) -> dict:
    """The recorded seat series of a ride and its windows: flat ground before the profile (from
    :data:`CRAWLER_RIDE_SETTLED` to the track's front reaching the profile) and the crossing (the track's front
    reaching the profile to its rear leaving it), with RMS and peak of each series there."""
    import trackdyn as td
    from trackdyn.experiments.trials import vehicle_extent

    res = td.load(run["folder"])
    t, rel, acc, xc = res.t, res["seat.rel.z"], res["seat.acc.z"], res["chassis.pos.x"]
    rp = run["result"]["road_params"]
    xs = [s.pivot[0] for s in spec.suspension.stations]  # the lower rollers' stations, vehicle frame
    ext = vehicle_extent(spec)  # the track's front (idler) and rear (sprocket), vehicle frame = world at t = 0
    front, rear = ext.front_x - spec.chassis.com[0], ext.rear_x - spec.chassis.com[0]
    t_in = float(t[np.argmax(xc + front >= rp["x0"])])
    past = xc + rear >= rp["x1"]
    t_out = float(t[np.argmax(past)]) if past.any() else float(t[-1])
    flat = (t >= CRAWLER_RIDE_SETTLED) & (t < t_in)
    on = (t >= t_in) & (t <= t_out)
    rest = float(rel[flat].mean())  # the seat's rest position on flat ground, relative to the cab

    # the mechanism: how far the lower rollers, the cab at the seat and the cab's pitch move from their flat-ground
    # means while over the profile
    cab = res["seat.pos.z"] - rel  # the seat's rest place in the cab (pitch < 1 deg: the cab's z axis is vertical)
    e0, e1, e2, e3 = (res[f"chassis.quat.e{i}"] for i in range(4))
    pitch = np.degrees(np.arcsin(np.clip(2 * (e0 * e2 - e3 * e1), -1.0, 1.0)))
    rollers = np.array([res[f"left.roadwheel[{i}].pos.z"] for i in range(len(xs))])
    dr = rollers[:, on] - rollers[:, flat].mean(axis=1, keepdims=True)
    motion = {"roller_z_range_m": [float(dr.min()), float(dr.max())],
              "cab_at_seat_z_range_m": [float((cab[on] - cab[flat].mean()).min()),
                                        float((cab[on] - cab[flat].mean()).max())],
              "pitch_range_deg": [float((pitch[on] - pitch[flat].mean()).min()),
                                  float((pitch[on] - pitch[flat].mean()).max())]}

    def stats(mask):
        d = rel[mask] - rest
        return {"rel_rms_m": float(np.sqrt(np.mean(d ** 2))), "rel_peak_m": float(np.max(np.abs(d))),
                "acc_rms_mps2": float(np.sqrt(np.mean(acc[mask] ** 2))),
                "acc_peak_mps2": float(np.max(np.abs(acc[mask])))}

    return {"t": t, "rel": rel, "acc": acc, "t_in": t_in, "t_out": t_out, "rest_rel_m": rest,
            "flat": {"window_s": [CRAWLER_RIDE_SETTLED, t_in], **stats(flat)},
            "crossing": {"window_s": [t_in, t_out], **stats(on), **motion}}


def _crawler_ride_rows(rec: dict, long: bool = False) -> list:
    """The rows of docs/crawler.md's Fig. 15 tables, as the producer formats them (checked against the page);
    ``long``: the roads of :func:`crawler_ride_lengths`, named with their length."""
    rows = []
    for name, r in rec["roads"].items():
        road = f"{name}, {CRAWLER_RIDE_LONG:g} m" if long else name
        e, c, f = r["event"], r["crossing"], r["flat"]
        rows.append(f"| `{road}` | {e['window_s'][1] - e['window_s'][0]:.2f} | {1e3 * e['rel_rms_m']:.2f} | "
                    f"{1e3 * e['rel_peak_m']:.2f} | {e['rel_peak_frequency_hz']:.2f} | {e['acc_rms_mps2']:.3f} | "
                    f"{e['acc_peak_mps2']:.3f} | {e['acc_peak_frequency_hz']:.2f} |")
        rows.append(f"| `{road}` | {c['window_s'][1] - c['window_s'][0]:.2f} | {1e3 * c['rel_rms_m']:.2f} | "
                    f"{1e3 * c['rel_peak_m']:.2f} | {c['acc_rms_mps2']:.3f} | {c['acc_peak_mps2']:.3f} | "
                    f"{1e3 * f['rel_rms_m']:.2f} | {f['acc_rms_mps2']:.3f} |")
        rows.append(f"| `{road}` | " + " | ".join(
            f"{sc * lo:+.1f} / {sc * hi:+.1f}" for (lo, hi), sc in
            ((c["roller_z_range_m"], 1e3), (c["cab_at_seat_z_range_m"], 1e3), (c["pitch_range_deg"], 1.0))) + " |")
    s = rec["step_check"]
    if s is None:
        return rows
    rows.append(f"| {s['road']} | {_e(s['step_s'][0])} / {_e(s['step_s'][1])} | "
                + " | ".join(f"{100 * s['relative_change'][k]:.2f}" for k in
                             ("rel_rms_m", "rel_peak_m", "acc_rms_mps2", "acc_peak_mps2")) + " |")
    return rows


def _crawler_ride_figures(rec: dict, series: dict, folder: Path) -> list:
    """docs/crawler/fig15-rel.png, fig15-acc.png (the seat over time, a panel per road) and fig15-spectra.png."""
    from trackdyn.viz import plots

    names = []
    for key, scale, unit, stem in (("rel", 1e3, "seat.rel.z [mm]", "fig15-rel"),
                                   ("acc", 1.0, "seat.acc.z [m/s²]", "fig15-acc")):
        fig, axes = plots.new_figure(7.5, 9.0, nrows=len(series))
        for ax, (road, s) in zip(np.atleast_1d(axes), series.items()):
            k = s["t"] >= CRAWLER_RIDE_SETTLED  # after the seat's transient from the settling on the soil
            y = scale * (s[key][k] - (s["rest_rel_m"] if key == "rel" else 0.0))
            ax.plot(s["t"][k], y, lw=0.6, color="C0" if key == "rel" else "C1")
            ax.axvspan(s["t_in"], s["t_out"], color="0.85", zorder=0, label="track over the profile")
            ax.axvline(rec["roads"][road]["event"]["window_s"][0], color="k", ls="--", lw=0.7,
                       label="seat reaches the profile")
            c = rec["roads"][road]["crossing"]
            pk = scale * (c["rel_peak_m"] if key == "rel" else c["acc_peak_mps2"])
            ax.set_title(f"{road}: peak {pk:.3g} {'mm' if key == 'rel' else 'm/s²'} while over the profile",
                         fontsize=9)
            ax.set_ylabel(unit)
            ax.grid(True, alpha=0.3)
        axes[0].legend(fontsize=7, loc="upper right")
        axes[-1].set_xlabel("t [s]")
        fig.suptitle(f"crawler seat on Winkler ground at {CRAWLER_RIDE_SPEED:g} m/s (han-sander-mao Fig. 15), "
                     f"from t = {CRAWLER_RIDE_SETTLED:g} s", fontsize=10)
        plots.save_figure(fig, folder / f"{stem}.png")
        names.append(f"{stem}.png")
    fig, axes = plots.new_figure(7.5, 6.5, nrows=2)
    for i, (road, r) in enumerate(rec["roads"].items()):
        for ax, key, scale in ((axes[0], "rel", 1e3), (axes[1], "acc", 1.0)):
            sp = r["spectra"][key]
            ax.semilogy(sp["f_hz"][1:], scale * np.asarray(sp["amplitude"][1:]), lw=0.9, color=f"C{i}",
                        label=f"{road} (peak {r['event'][key + '_peak_frequency_hz']:.2f} Hz)")
    axes[0].set_ylabel("seat.rel.z amplitude [mm]")
    axes[1].set_ylabel("seat.acc.z amplitude [m/s²]")
    axes[1].set_xlabel("frequency [Hz]")
    for ax in axes:
        ax.set_xlim(0.0, 20.0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_title("FFT amplitude (Hann) over the ride event's window: from the seat's reaching the profile "
                      "to the end", fontsize=9)
    plots.save_figure(fig, folder / "fig15-spectra.png")
    names.append("fig15-spectra.png")
    return names


@producer("crawler-ride", "docs/crawler.md (Fig. 15: the crawler's seat on the four roads on Winkler ground, "
                          "docs/crawler/fig15-*.png and docs/crawler/ride.json; five rides, 28 min at a load of 6-8 "
                          "on 2 CPUs)")
def crawler_ride():
    """`trackdyn event ride --vehicle crawler --road R --ground winkler --speed 1.04 --step 5e-4 --out DIR --json`
    for the four roads, one at a time, and the trough again at 2.5e-4 s (the step check); the seat's figures per
    road, over the event's window, the crossing and the flat ground before it; checks the tables of docs/crawler.md
    (not the wall times)."""
    import os

    import trackdyn as td

    spec = td.vehicles.get("crawler")
    folder = HERE / "crawler"
    rec = {"command": "trackdyn event ride --vehicle crawler --road R --ground winkler --speed "
                      f"{CRAWLER_RIDE_SPEED:g} --step {CRAWLER_RIDE_STEP:g} --json  (R: "
                      + ", ".join(CRAWLER_RIDE_ROADS) + ")",
           "speed_mps": CRAWLER_RIDE_SPEED, "step_s": CRAWLER_RIDE_STEP, "ground": "winkler",
           "seat": {**spec.seat.model_dump(),
                    "natural_frequency_hz": float(np.sqrt(spec.seat.stiffness / spec.seat.mass) / (2 * np.pi)),
                    "damping_ratio": float(spec.seat.damping / (2 * np.sqrt(spec.seat.stiffness * spec.seat.mass))),
                    "static_deflection_m": float(spec.seat.mass * 9.81 / spec.seat.stiffness)},
           "machine": {"cpus": os.cpu_count(), "cpu": platform.processor() or platform.machine()},
           "roads": {}}
    series = {}
    runs = _fresh_runs("crawler-ride")  # the event folders stay there (gitignored) for a later look at the series
    for road in CRAWLER_RIDE_ROADS:
        run = _crawler_ride_event(road, CRAWLER_RIDE_STEP, runs / road)
        r, seat = run["result"], run["result"]["seat"]
        w = _crawler_ride_windows(run, spec)
        series[road] = w
        rec["roads"][road] = {
            "road_params": {k: r["road_params"][k] for k in ("x0", "x1")}
            | {"length_m": r["road_params"]["x1"] - r["road_params"]["x0"]},
            "status": r["status"], "stop_reason": r["stop_reason"], "sim_time_s": r["sim_time_s"],
            "event": {"window_s": seat["window_s"], "rel_mean_m": seat["rel"]["mean"],
                      "rel_rms_m": seat["rel"]["rms"], "rel_peak_m": seat["rel"]["peak"],
                      "rel_peak_frequency_hz": seat["rel"]["peak_frequency_hz"],
                      "acc_rms_mps2": seat["acc"]["rms"], "acc_peak_mps2": seat["acc"]["peak"],
                      "acc_peak_frequency_hz": seat["acc"]["peak_frequency_hz"], "df_hz": seat["rel"]["df_hz"]},
            "crossing": w["crossing"], "flat": w["flat"], "rest_rel_m": w["rest_rel_m"],
            "spectra": {k: {"f_hz": [f for f in seat[k]["spectrum"]["f_hz"] if f <= 20.0],
                            "amplitude": seat[k]["spectrum"]["amplitude"][:sum(
                                f <= 20.0 for f in seat[k]["spectrum"]["f_hz"])], "unit": seat[k]["unit"]}
                        for k in ("rel", "acc")},
            "wall_time_s": run["wall_time_s"], "event_wall_time_s": r["wall_time_s"],
            "wall_per_sim_s": r["wall_per_sim"], "load_1min": run["load_1min"]}
    half = CRAWLER_RIDE_STEP / 2
    fine = _crawler_ride_event("trough", half, runs / "trough-half")
    fw = _crawler_ride_windows(fine, spec)
    base, seat_f = rec["roads"]["trough"], fine["result"]["seat"]
    fe = {"rel_rms_m": seat_f["rel"]["rms"], "rel_peak_m": seat_f["rel"]["peak"],
          "acc_rms_mps2": seat_f["acc"]["rms"], "acc_peak_mps2": seat_f["acc"]["peak"]}
    a, b = series["trough"], fw
    n = min(len(a["t"]), len(b["t"]))
    k = a["t"][:n] >= base["event"]["window_s"][0] - 1e-9
    rec["step_check"] = {
        "road": "trough", "step_s": [CRAWLER_RIDE_STEP, half], "event_at_half_step": fe,
        "relative_change": {q: abs(fe[q] - base["event"][q]) / abs(base["event"][q]) for q in fe},
        "max_abs_difference_over_event_window": {
            "rel_m": float(np.max(np.abs(a["rel"][:n][k] - b["rel"][:n][k]))),
            "acc_mps2": float(np.max(np.abs(a["acc"][:n][k] - b["acc"][:n][k])))},
        "crossing_at_half_step": fw["crossing"],
        "wall_time_s": fine["wall_time_s"], "load_1min": fine["load_1min"]}
    rec["figures"] = _crawler_ride_figures(rec, series, folder)
    (folder / "ride.json").write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    mism = [f"crawler.md: the row {row[:60]}..." for row in _crawler_ride_rows(rec) if not _doc_says("crawler.md", row)]
    return {"command": rec["command"], "figures": {k: v for k, v in rec.items() if k != "roads"}
            | {"roads": {r: {k: v for k, v in d.items() if k != "spectra"} for r, d in rec["roads"].items()}},
            "mismatches": mism}


#: m: the bump's and trough's length in :func:`crawler_ride_lengths`: longer than the crawler's track on the ground
#: (3.275 m, sprocket to idler), so that the track cannot bridge the trough.
CRAWLER_RIDE_LONG = 4.0


@producer("crawler-ride-lengths", "docs/crawler.md (Fig. 15, why the trough is the mildest road: the bump and the "
                                  "trough 4 m long instead of 1 m; docs/crawler/ride-lengths.json; two rides, about 5 min)")
def crawler_ride_lengths():
    """`trackdyn event ride --vehicle crawler --road bump|trough --ground winkler --speed 1.04 --step 5e-4
    --set bump_length=4 --out DIR --json`: the seat's figures (as crawler-ride: the event's window, the crossing,
    the rollers', cab's and pitch's ranges) with the profile longer than the track on the ground; checks the rows
    of docs/crawler.md."""
    import trackdyn as td

    spec = td.vehicles.get("crawler")
    rec = {"command": f"trackdyn event ride --vehicle crawler --road R --ground winkler --speed {CRAWLER_RIDE_SPEED:g}"
                      f" --step {CRAWLER_RIDE_STEP:g} --set bump_length={CRAWLER_RIDE_LONG:g} --json  (R: bump, trough)",
           "bump_length_m": CRAWLER_RIDE_LONG, "roads": {}}
    mism = []
    runs = _fresh_runs("crawler-ride-lengths")  # the event folders stay there (gitignored)
    for road in ("bump", "trough"):
        run = _crawler_ride_event(road, CRAWLER_RIDE_STEP, runs / road, "--set",
                                  f"bump_length={CRAWLER_RIDE_LONG:g}")
        r, seat = run["result"], run["result"]["seat"]
        w = _crawler_ride_windows(run, spec)
        rec["roads"][road] = {
            "status": r["status"], "stop_reason": r["stop_reason"], "sim_time_s": r["sim_time_s"],
            "event": {"window_s": seat["window_s"], "rel_rms_m": seat["rel"]["rms"],
                      "rel_peak_m": seat["rel"]["peak"], "rel_peak_frequency_hz": seat["rel"]["peak_frequency_hz"],
                      "acc_rms_mps2": seat["acc"]["rms"], "acc_peak_mps2": seat["acc"]["peak"],
                      "acc_peak_frequency_hz": seat["acc"]["peak_frequency_hz"]},
            "crossing": w["crossing"], "flat": w["flat"],
            "wall_time_s": run["wall_time_s"], "load_1min": run["load_1min"]}
    for row in _crawler_ride_rows({"roads": rec["roads"], "step_check": None}, long=True):
        if not _doc_says("crawler.md", row):
            mism.append(f"crawler.md: the row {row[:60]}...")
    (HERE / "crawler" / "ride-lengths.json").write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    return {"command": rec["command"], "figures": rec, "mismatches": mism}


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
