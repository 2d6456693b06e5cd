"""``trackdyn study ...``: studies over many runs: ``study convergence SCENARIO``, ``study synthesis``,
``study joints``, ``study crawler --track-only``.

Wired into the main command by :func:`register` (``register(app)`` in
``cli/main.py``). Exit codes as everywhere: 0 success, 1 invalid input or a
diverged run, 2 usage.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import warnings
from pathlib import Path
from typing import List, Optional

import typer

from ..experiments.convergence import SCENARIOS, convergence_study, get_scenario

__all__ = ["register", "study_app"]

study_app = typer.Typer(
    name="study",
    help="Studies over many runs (convergence over step size x integrator x solver).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_json(obj) -> None:
    def default(o):
        import numpy as np

        if isinstance(o, (np.integer,)):
            return int(o)
        if isinstance(o, (np.floating,)):
            return float(o)
        if isinstance(o, np.ndarray):
            return o.tolist()
        return str(o)

    sys.stdout.write(json.dumps(obj, default=default) + "\n")


def _floats(text: str, what: str) -> list[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{what}: expected comma-separated numbers, got {text!r}") from None
    if not vals:
        raise ValueError(f"{what}: no values in {text!r}")
    return vals


def _names(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


def _options(pairs: list[str], integrators, solvers):
    """``KEY=VALUE`` (every run) or ``NAME:KEY=VALUE`` (runs of one integrator or solver).

    Values are parsed as JSON (numbers, true/false, null) or kept as strings.
    Returns ``(options, integrator_options, solver_options)``.
    """
    common, per_integ, per_solver = {}, {}, {}
    for p in pairs:
        if "=" not in p:
            raise ValueError(f"--option {p!r}: expected KEY=VALUE or NAME:KEY=VALUE")
        k, v = p.split("=", 1)
        target = common
        if ":" in k:
            name, k = k.split(":", 1)
            name = name.strip()
            if name in integrators:
                target = per_integ.setdefault(name, {})
            elif name in solvers:
                target = per_solver.setdefault(name, {})
            else:
                raise ValueError(f"--option {p!r}: {name!r} is neither an integrator nor a solver of this study")
        k = k.strip().replace("-", "_")
        try:
            target[k] = json.loads(v)
        except json.JSONDecodeError:
            target[k] = v
    return common, per_integ, per_solver


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@study_app.command("convergence")
def convergence(
    scenario: str = typer.Argument(..., help="Scenario name: pendulum, double-pendulum, slider-crank, "
                                             "slider-crank-free, chain64, m113-half-round (a vehicle "
                                             "scenario, korner-2024 §4.1)."),
    vehicle: Optional[str] = typer.Option(None, "--vehicle", help="Vehicle of a vehicle scenario: a built-in "
                                                                  "name (trackdyn vehicles) or a spec file."),
    steps: Optional[str] = typer.Option(None, "--steps", help="Comma-separated step sizes, s (default: the "
                                                              "scenario's)."),
    integrators: Optional[str] = typer.Option(None, "--integrators", help="Comma-separated integrator names."),
    solvers: Optional[str] = typer.Option(None, "--solvers", help="Comma-separated solver names (direct, "
                                                                  "minres, psor, bb)."),
    t_end: Optional[float] = typer.Option(None, "--t-end", help="Simulated time, s."),
    series: Optional[str] = typer.Option(None, "--series", help="Series to compare, e.g. 'link[63].pos.z'."),
    output_step: Optional[float] = typer.Option(None, "--output-step", help="Common sampling interval, s."),
    option: List[str] = typer.Option([], "--option", "-o", help="Option for every run, KEY=VALUE, or for one "
                                                                 "integrator or solver, NAME:KEY=VALUE "
                                                                 "(repeatable), e.g. -o hht:alpha=-0.1 "
                                                                 "-o bb:max_iter=200."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for convergence.csv, convergence.json and "
                                                           "the figures (default: convergence-SCENARIO)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """Run SCENARIO over step sizes x integrators x solvers; deviation of each run from the finest run of
    its combination (max, RMS), a table and the thesis's Figs. 4.1/4.2."""
    try:
        sc = get_scenario(scenario)
        build = sc.build
        if sc.vehicle is not None:
            from ..spec import get as get_spec

            spec = get_spec(vehicle or sc.vehicle)  # an unknown vehicle is refused before anything runs
            build = functools.partial(sc.build, vehicle=spec)
        elif vehicle is not None:
            raise ValueError(f"--vehicle applies to vehicle scenarios only; {scenario!r} is a reference problem")
        integ_names = _names(integrators) if integrators else list(sc.integrators)
        solver_names = _names(solvers) if solvers else list(sc.solvers)
        common, per_integ, per_solver = _options(option, integ_names, solver_names)
        kw = dict(
            steps=_floats(steps, "--steps") if steps else list(sc.steps),
            integrators=integ_names,
            solvers=solver_names,
            t_end=sc.t_end if t_end is None else t_end,
            series=series or sc.series,
            output_step=output_step,
            options=common,
            integrator_options=per_integ,
            solver_options=per_solver,
        )
    except ValueError as err:
        msg = str(err)
        if "unknown scenario" in msg:
            msg = f"unknown scenario {scenario!r}; choose one of: {', '.join(sorted(SCENARIOS))}"
        typer.echo(msg, err=True)
        raise typer.Exit(1)

    def progress(i, n, integ, solver, h):
        if not as_json:
            typer.echo(f"[{i + 1}/{n}] {integ} + {solver}, h = {h:g} s", err=True)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study = convergence_study(build, scenario=sc.name, progress=progress, **kw)
    except (ValueError, TypeError) as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(1)
    folder = Path(out) if out is not None else Path(f"convergence-{sc.name}")
    folder.mkdir(parents=True, exist_ok=True)
    study.plot(folder / "convergence",
               title=(f"Convergence: {study.series} of {spec.name} ({sc.name})" if sc.vehicle is not None else None))
    table_path = folder / "convergence.csv"
    _write_atomic(table_path, study.table.to_csv(index=False))
    summary = study.to_dict()
    if sc.vehicle is not None:
        summary["vehicle"] = spec.name
    summary["table"] = str(table_path)
    summary["out"] = str(folder)
    diverged = [r for r in summary["runs"] if r["status"] != "complete"]
    summary["status"] = "complete" if not diverged else "diverged"
    _write_atomic(folder / "convergence.json", json.dumps(summary, default=str, indent=1))
    if as_json:
        _print_json(summary)
    else:
        cols = ["integrator", "solver", "step_s", "status", "max_dev", "rms_dev", "wall_per_sim"]
        typer.echo(study.table[cols].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        typer.echo(f"wrote {table_path}, " + ", ".join(study.figures))
    raise typer.Exit(1 if diverged else 0)


@study_app.command("synthesis")
def synthesis(
    vehicle: str = typer.Option("robot-1-6", "--vehicle", help="Vehicle: robot-1-6 (kim-2012's 1/6 robot)."),
    t_end: Optional[float] = typer.Option(None, "--t-end", help="Simulated time, s (default the paper's 35)."),
    step: Optional[float] = typer.Option(None, "--step", help="Table 3's step, s (default the paper's 7e-4)."),
    steps: Optional[str] = typer.Option(None, "--steps", help="Fig. 8's steps, comma-separated, s (multiples of "
                                                              "--step; default 1-60 times it)."),
    repeats: int = typer.Option(3, "--repeats", help="Timed repeats of each Table 3 run (best kept)."),
    alpha: float = typer.Option(-0.2, "--alpha", help="HHT-α of the explicit-implicit models, in [-1/3, 0]."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for synthesis.json and the figures "
                                                           "(default: synthesis-VEHICLE)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """kim-2012's four subsystem-synthesis models (Cartesian / joint x explicit / explicit-implicit): Table 3
    (RMS errors against joint explicit, CPU time, CPU / sim) and Fig. 7 / Fig. 8 (CPU and acceleration error
    against step, largest stable step)."""
    from ..experiments.synthesis import MODELS, plot_fig7, plot_fig8, robot_1_6, synthesis_study

    if vehicle != "robot-1-6":
        typer.echo(f"study synthesis: --vehicle {vehicle!r}: only 'robot-1-6' is built so far", err=True)
        raise typer.Exit(1)
    if not -1.0 / 3.0 - 1e-12 <= alpha <= 0.0:
        typer.echo(f"study synthesis: --alpha must be in [-1/3, 0], got {alpha}", err=True)
        raise typer.Exit(1)
    try:
        sweep = _floats(steps, "--steps") if steps else None
        robot = robot_1_6()

        def progress(name, row):
            if not as_json:
                typer.echo(f"{name}: h = {1e3 * row['step_s']:g} ms, stable {row['stable']}", err=True)

        res = synthesis_study(t_end=t_end, step=step, sweep=sweep, repeats=repeats, alpha=alpha, robot=robot,
                              progress=progress)
    except (ValueError, RuntimeError) as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(1)
    folder = Path(out) if out is not None else Path(f"synthesis-{vehicle}")
    folder.mkdir(parents=True, exist_ok=True)
    sys_ = robot.synthesis()
    runs = {f"{c} {s}": sys_.run(c, s, res["step_s"], res["t_end_s"], alpha=alpha) for c, s in MODELS}
    figures = plot_fig8(res, str(folder / "fig8")) + plot_fig7(res, runs, str(folder / "fig7"))
    res.pop("reference")
    res["figures"] = figures
    res["out"] = str(folder)
    unstable = [n for n, r in res["table3"].items() if not r["stable"]]
    res["status"] = "complete" if not unstable else "diverged"
    _write_atomic(folder / "synthesis.json", json.dumps(res, default=float, indent=1))
    if as_json:
        _print_json(res)
    else:
        typer.echo(f"Table 3 (1/6 robot, {res['t_end_s']:g} s simulated, h = {1e3 * res['step_s']:g} ms; "
                   "RMS errors of chassis z against joint explicit)")
        typer.echo(f"{'model':<30} {'pos, m':>9} {'vel, m/s':>9} {'acc, m/s2':>9} {'CPU, s':>7} "
                   f"{'CPU/sim %':>9} {'ratio':>6} {'paper':>6}")
        for name, r in res["table3"].items():
            e = [f"{r[k]:9.2e}" if r[k] is not None else f"{'—':>9}" for k in ("rms_pos_m", "rms_vel_mps",
                                                                              "rms_acc_mps2")]
            typer.echo(f"{name:<30} {' '.join(e)} {r['cpu_s']:7.3f} {r['cpu_per_sim_pct']:9.2f} "
                       f"{r['ratio']:6.2f} {res['paper']['table3'][name][5]:6.2f}")
        typer.echo("largest stable step (Fig. 8 sweep): " + ", ".join(
            f"{n} {1e3 * v['largest_stable_step_s']:g} ms" if v["largest_stable_step_s"] else f"{n} none"
            for n, v in res["fig8"].items()))
        typer.echo(f"wrote {folder / 'synthesis.json'}, " + ", ".join(figures))
    raise typer.Exit(1 if unstable else 0)


@study_app.command("joints")
def joints(
    vehicle: str = typer.Option("apc", "--vehicle", help="Vehicle (default the paper's APC, 'apc')."),
    t_end: float = typer.Option(10.0, "--t-end", help="Simulated time, s."),
    ramp: str = typer.Option("1,8", "--ramp", help="Sprocket ramp start,end (s): 0 rad/s until start, the full "
                                                   "speed at end (the paper's Fig. 7: 1,8)."),
    speed: float = typer.Option(25.0, "--speed", help="Sprocket speed after the ramp, rad/s (paper: 25)."),
    step: float = typer.Option(5e-5, "--step", help="Time step of every run, s (default 5e-5: at the fidelities' "
                                                    "own 5e-4 the linearised Euler step puts kN of error on a pin "
                                                    "turning round the sprocket, docs/joints.md)."),
    side: str = typer.Option("left", "--side", help="Track of the recorded shoe and pin."),
    shoe: int = typer.Option(10, "--shoe", help="Index of the recorded shoe (its pin's force, its path)."),
    cutoff: float = typer.Option(30.0, "--cutoff", help="Low-pass cut-off of the pin forces, Hz (paper: 30)."),
    runs: Optional[str] = typer.Option(None, "--runs", help="Comma-separated runs (default all whose fidelity is "
                                                            "registered): constrained, no-suspension, "
                                                            "penalty-1e9, penalty-1e7, bushing, ancf."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for joints.json and the figures "
                                                           "(default: joints-VEHICLE)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """wallin-shabana-2013's track-joint comparison (Figs. 8-16): the vehicle driven by its sprockets' speed ramp
    with ideal, penalty (1e9 and 1e7 N/m), bushing (and ANCF, once registered) pins, and without suspension;
    every figure with all formulations overlaid, and a CPU-time table (sequential runs)."""
    from ..experiments.joints import joints_study, write_joints_study

    try:
        r0, r1 = _floats(ramp, "--ramp")
    except ValueError:
        typer.echo(f"study joints: --ramp = {ramp!r}: expected two times start,end in s", err=True)
        raise typer.Exit(1)
    try:
        def progress(key, row):
            if not as_json:
                typer.echo(f"{key}: {row['status']}, {row['wall_per_sim']:.2f} s wall per simulated s", err=True)

        res = joints_study(vehicle=vehicle, t_end=t_end, ramp=(r0, r1), speed=speed, step=step, side=side,
                           shoe=shoe, cutoff_hz=cutoff, runs=_names(runs) if runs else None, progress=progress)
    except (ValueError, RuntimeError) as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(1)
    folder = Path(out) if out is not None else Path(f"joints-{vehicle}")
    figures = write_joints_study(res, folder)
    doc = {k: res[k] for k in ("settings", "runs", "summary", "paper")}
    doc["figures"] = [Path(f).name for f in figures]
    doc["out"] = str(folder)
    failed = [k for k, r in res["runs"].items() if r["status"] != "complete"]
    doc["status"] = "complete" if not failed else "diverged"
    _write_atomic(folder / "joints.json", json.dumps(doc, default=float, indent=1))
    if as_json:
        _print_json(doc)
    else:
        typer.echo(f"{'run':<16} {'fidelity':<9} {'status':<9} {'wall/sim':>9} {'CPU/sim':>8} {'CPU ratio':>9} "
                   f"{'x end, m':>9} {'vx end':>7}")
        for k, r in res["runs"].items():
            s = res["summary"]["runs"][k]
            typer.echo(f"{k:<16} {r['fidelity']:<9} {r['status']:<9} {r['wall_per_sim']:9.2f} {r['cpu_per_sim']:8.2f} "
                       f"{r['cpu_ratio']:9.2f} {s['x_end_m']:9.3f} {s['vx_end_mps']:7.3f}")
        for k in ("constrained", "no-suspension"):
            d = res["summary"].get(f"drop_{k}")
            if d:
                typer.echo(f"chassis drop before the drive, {k}: largest {1e3 * d['largest_m']:.2f} mm, "
                           f"settled {1e3 * d['settled_m']:.2f} mm")
        typer.echo(f"wrote {folder / 'joints.json'}, " + ", ".join(figures))
    raise typer.Exit(1 if failed else 0)


@study_app.command("crawler")
def crawler(
    track_only: bool = typer.Option(False, "--track-only", help="The track subsystem alone on flat ground, forward "
                                                                 "and reverse (han-sander-mao Figs. 13-14): the "
                                                                 "undercarriage frames welded to the chassis."),
    vehicle: str = typer.Option("crawler", "--vehicle", help="Vehicle (default the built-in 'crawler')."),
    speed: float = typer.Option(3.14, "--speed", help="Sprocket speed after the ramp, rad/s (paper: 3.14)."),
    ramp: float = typer.Option(0.75, "--ramp", help="Ramp duration from rest, s (paper: 0.75)."),
    settle: float = typer.Option(0.5, "--settle", help="Settling with the sprocket held before the ramp, s."),
    hold: float = typer.Option(2.5, "--hold", help="Time at full speed after the ramp, s (>= 1: the steady "
                                                   "figures average the last second)."),
    fidelity: str = typer.Option("links", "--fidelity", help="Track model: a registered fidelity that takes "
                                                              "prescribed sprocket speeds (links, recursive)."),
    step: Optional[float] = typer.Option(None, "--step", help="Time step, s (default: the fidelity's own)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for crawler.json and the figures "
                                                           "(default: crawler-VEHICLE)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """han-sander-mao's crawler: with --track-only, its §6 runs (Figs. 13-14): the sprocket ramped linearly from
    rest to --speed in --ramp seconds, forward and reverse, on flat ground; the track's side view, the sprocket,
    track and undercarriage speeds, the strand tensions and a link's path, with the track speed against
    n p ω / 2π (docs/crawler.md)."""
    from ..experiments.crawler import track_only_study, write_track_only_study

    if not track_only:
        typer.echo("study crawler: only --track-only is built so far (the integrated vehicle's seat runs, "
                   "Fig. 15, wait for the recursive fidelity's registration)", err=True)
        raise typer.Exit(1)
    try:
        def progress(direction, row):
            if not as_json:
                typer.echo(f"{direction}: {row['status']}, {row['wall_per_sim']:.2f} s wall per simulated s", err=True)

        res = track_only_study(vehicle=vehicle, speed=speed, ramp=ramp, settle=settle, hold=hold, step=step,
                               progress=progress, fidelity=fidelity)
    except (ValueError, RuntimeError) as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(1)
    folder = Path(out) if out is not None else Path(f"crawler-{vehicle}")
    figures = write_track_only_study(res, folder)
    doc = {k: res[k] for k in ("settings", "runs", "summary", "closed_form", "paper")}
    doc["command"] = ("trackdyn study crawler --track-only" + (f" --vehicle {vehicle}" if vehicle != "crawler" else "")
                      + (f" --fidelity {fidelity}" if fidelity != "links" else "")
                      + (f" --out {out}" if out is not None else ""))
    doc["figures"] = [Path(f).name for f in figures]
    doc["out"] = str(folder)
    failed = [k for k, r in res["runs"].items() if r["status"] != "complete"]
    doc["status"] = "complete" if not failed else "diverged"
    _write_atomic(folder / "crawler.json", json.dumps(doc, default=float, indent=1))
    if as_json:
        _print_json(doc)
    else:
        cf = res["closed_form"]
        typer.echo(f"track speed closed form n p ω / 2π = {cf['track_speed_mps']:.4f} m/s "
                   f"(pitch circle r_p ω = {cf['pitch_circle_speed_mps']:.4f})")
        typer.echo(f"{'run':<8} {'status':<9} {'track, m/s':>10} {'/closed':>8} {'vehicle':>8} {'slip %':>7} "
                   f"{'top kN':>7} {'bottom kN':>9}")
        for k, s in res["summary"].items():
            typer.echo(f"{k:<8} {s['status']:<9} {s['track_speed_mps']:10.4f} {s['track_speed_over_closed_form']:8.4f} "
                       f"{s['undercarriage_speed_mps']:8.4f} {100 * s['slip']:7.2f} "
                       f"{1e-3 * s['top_strand_tension_steady_N']:7.2f} {1e-3 * s['bottom_strand_tension_steady_N']:9.2f}")
        typer.echo(f"wrote {folder / 'crawler.json'}, " + ", ".join(figures))
    raise typer.Exit(1 if failed else 0)


def register(app: typer.Typer) -> None:
    """Add the ``study`` command group to the main ``trackdyn`` app."""
    app.add_typer(study_app, name="study")
