"""``trackdyn`` command line.

Every command that prints figures accepts ``--json`` and then writes exactly
one JSON object on stdout. Exit codes: 0 success, 1 invalid input, failed
check or diverged run, 2 usage.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from .._version import __version__

app = typer.Typer(
    name="trackdyn",
    help="Multibody simulation of tracked vehicles.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_json(obj) -> None:
    from ..io.results import _json_default

    sys.stdout.write(json.dumps(obj, default=_json_default) + "\n")


def _version_callback(value: bool):
    if value:
        typer.echo(f"trackdyn {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(
        None, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
):
    """trackdyn: link-track multibody simulation, mobility events and studies."""


@app.command()
def validate(
    case: Optional[str] = typer.Argument(None, help="Case name; all cases when omitted."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """Run analytic validation cases (closed-form checks of the solver)."""
    import warnings

    from ..testing.validation import CASES, run_case

    if case is not None and case not in CASES:
        typer.echo(f"unknown case {case!r}; choose one of: {', '.join(sorted(CASES))}", err=True)
        raise typer.Exit(1)
    names = [case] if case else list(CASES)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in names:
            r = run_case(n)
            results.append(r)
            if not as_json:
                mark = "ok  " if r["passed"] else "FAIL"
                errs = ", ".join(f"{k}={v:.3g} (tol {r['tolerances'].get(k, float('nan')):.3g})"
                                 for k, v in r["errors"].items())
                typer.echo(f"{mark} {n:16s} {errs}  [{r['wall_time_s']:.1f} s]")
    passed = all(r["passed"] for r in results)
    if as_json:
        _print_json(results[0] if case else {"passed": passed, "cases": results})
    raise typer.Exit(0 if passed else 1)


@app.command()
def bench(
    name: str = typer.Argument("chain64", help="Benchmark name."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    peers: bool = typer.Option(False, "--peers", help="Also run the benchmark's MuJoCo peer, after trackdyn in "
                               "this process, and print both and their ratio (chain64, m113-flat; needs the "
                               "peers extra: pip install -e \".\\[peers]\")."),
    t_end: Optional[float] = typer.Option(None, "--t-end", help="Simulated seconds measured (default: the "
                                          "benchmark's)."),
    peer_step: Optional[float] = typer.Option(None, "--peer-step", help="With --peers: the peer's step, s "
                                              "(default: trackdyn's)."),
    fidelity: Optional[str] = typer.Option(None, "--fidelity", help="The vehicle's fidelity, for benchmarks "
                                           "that take one (m113-flat; default links)."),
    step: Optional[float] = typer.Option(None, "--step", help="Step size, s, for benchmarks that take one "
                                         "(default: the benchmark's)."),
):
    """Run a benchmark and print wall time per step and per simulated second.

    The headline is the mean over the whole measured run, recording included; the 10th percentile and the
    median of single steps follow in parentheses.
    """
    import inspect

    from ..testing.benchmarks import BENCHMARKS, run_benchmark

    if name not in BENCHMARKS:
        typer.echo(f"unknown benchmark {name!r}; choose one of: {', '.join(sorted(BENCHMARKS))}", err=True)
        raise typer.Exit(1)
    kwargs = {} if t_end is None else {"t_end": t_end}
    if peers and (fidelity is not None or step is not None):
        typer.echo("--peers compares the benchmark's own set-up (links, its step; --peer-step for the peer's): "
                   "drop --fidelity and --step", err=True)
        raise typer.Exit(1)
    if peers:
        from ..testing import benchmarks_peers as BP

        if name not in BP.PEERS:
            typer.echo(f"no peer for benchmark {name!r}; --peers runs for: {', '.join(sorted(BP.PEERS))}", err=True)
            raise typer.Exit(1)
        try:
            out = BP.side_by_side(name, peer_step=peer_step, **kwargs)
        except BP.PeerUnavailable as err:
            typer.echo(str(err), err=True)
            raise typer.Exit(1)
        if as_json:
            _print_json(out)
        else:
            for line in BP.text_lines(out):
                typer.echo(line)
        return
    if peer_step is not None:
        typer.echo("--peer-step needs --peers", err=True)
        raise typer.Exit(1)
    if kwargs and "t_end" not in inspect.signature(BENCHMARKS[name]).parameters:
        typer.echo(f"benchmark {name!r} takes no --t-end", err=True)
        raise typer.Exit(1)
    for flag, key, val in (("--fidelity", "fidelity", fidelity), ("--step", "step", step)):
        if val is None:
            continue
        if key not in inspect.signature(BENCHMARKS[name]).parameters:
            typer.echo(f"benchmark {name!r} takes no {flag}", err=True)
            raise typer.Exit(1)
        kwargs[key] = val
    if fidelity is not None:
        from ..formulations.contract import formulation_names

        if fidelity not in formulation_names():
            typer.echo(f"--fidelity {fidelity!r}: not a registered fidelity; choose one of "
                       f"{', '.join(formulation_names())}", err=True)
            raise typer.Exit(1)
    out = run_benchmark(name, **kwargs)
    rows = out.get("runs", [out])
    if as_json or not all("split_ms" in r and "ms_per_step" in r for r in rows):
        _print_json(out)  # a benchmark of accuracy against step (no per-step split) prints its record
        return
    for r in rows:
        split = "  ".join(f"{k} {v:.3f}" for k, v in r["split_ms"].items())
        label = f" {r['fidelity']}" if "fidelity" in r else ""
        ratio = f" ({r['ratio_to_links']:.2f}x links)" if "ratio_to_links" in r else ""
        typer.echo(f"{name}{label} h={r['step_size_s']:g}: {r['ms_per_step']:.3f} ms/step, "
                   f"{r['wall_per_sim']:.2f} s wall per simulated s{ratio} ({r['steps']} steps; mean of the whole run"
                   + (f"; single steps p10 {r['step_ms_p10']:.3f}, median {r['step_ms_median']:.3f} ms)"
                      if "step_ms_p10" in r else ")"))
        typer.echo(f"  split ms/step: {split}")


@app.command()
def demo(
    out: Path = typer.Option(Path("trackdyn-demo"), "--out", help="Results folder to write."),
    t_end: float = typer.Option(5.0, "--t-end", help="Simulated time, s."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
):
    """Drive the M113 over a 0.4 m step; write its results folder, animation and 3-D viewer page."""
    from ..demo import run_demo
    from .progress import RunProgress

    summary = run_demo(out, t_end=t_end, progress=None if as_json else RunProgress(t_end, label="demo"))
    if as_json:
        _print_json(summary)
    else:
        typer.echo(f"wrote {summary['out']} ({summary['steps']} steps, {summary['wall_time_s']:.1f} s wall)")
        for f in summary["files"]:
            typer.echo(f"  {f}")
    raise typer.Exit(0 if summary["status"] == "complete" else 1)


def _register_commands():
    from . import compare, event, fidelities, results, run, study, sweep, vehicles, viz

    vehicles.register(app)
    fidelities.register(app)
    run.register(app)
    event.register(app)
    sweep.register(app)
    study.register(app)
    viz.register(app)
    results.register(app)
    compare.register(app)


_register_commands()


def main():
    app()


if __name__ == "__main__":
    main()
