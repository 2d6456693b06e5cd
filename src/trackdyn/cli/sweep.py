"""CLI: ``trackdyn sweep FILE [--scheduler ADDR] [--workers N] [--fidelity F] [--out DIR] [--json]``.

Runs (or resumes) the sweep of a TOML sweep file on Dask
(:mod:`trackdyn.experiments.sweep`): an embedded ``LocalCluster`` with
``--workers`` single-thread worker processes (default: one per core), or an
existing cluster at ``--scheduler``. Progress on stderr (a bar on a
terminal); with ``--json`` one JSON object on stdout. Exit codes: 0 every
point done (some may be recorded as failed: see ``failed``), 1 invalid
input or points left undone, 2 usage.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

__all__ = ["register", "sweep"]


def sweep(
    file: Path = typer.Argument(..., help="Sweep file (TOML): vehicle, event, grid and options tables."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address "
                                            "(tcp://host:8786); default an embedded LocalCluster."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Worker processes of the embedded cluster "
                                          "(default: one per core)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder (default: sweeps/<name>)."),
    fidelity: Optional[str] = typer.Option(None, "--fidelity", help="Track model of every point: a registered "
                                           "fidelity (default: the file's, else links)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Re-run the points recorded as failed."),
    plot_only: bool = typer.Option(False, "--plot-only", help="Only rebuild the table and figures of DIR."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout and nothing else."),
):
    """Run a parameter sweep of an event on Dask; one result folder per point, a combined Parquet table and heatmaps."""
    from ..experiments.sweep import load_sweep, run_sweep, sweep_figures, sweep_table
    from .progress import PointsProgress
    from .results import fail, print_json

    if workers is not None and workers < 1:
        fail(f"--workers must be >= 1, got {workers}")
    try:
        spec = load_sweep(file)
        if fidelity is not None:
            from dataclasses import replace

            from ..spec.scenario import FIDELITIES

            if fidelity not in FIDELITIES:
                raise ValueError(f"--fidelity = {fidelity!r}: choose one of {FIDELITIES}")
            spec = replace(spec, fidelity=fidelity)
    except ValueError as err:
        fail(str(err))
    target = out if out is not None else Path("sweeps") / spec.name
    if plot_only:
        df = sweep_table(spec, target)
        figs = sweep_figures(spec, df, target)
        info = {"sweep": spec.name, "rows": len(df), "figures": [f"figures/{k}.png" for k in figs]}
        print_json(info) if as_json else typer.echo(f"{len(df)} rows, {len(figs)} figures in {target}")
        return
    bar = PointsProgress(total=len(spec.points()), label=f"sweep {spec.name}",
                         enabled=None if not as_json else False)

    def progress(done, total, rec):
        if bar.enabled:
            bar.advance(done - bar.done)  # points finished by an earlier run count as done
        elif not as_json:
            mark = "ok" if rec["status"] == "ok" else f"FAILED ({rec.get('error')})"
            typer.echo(f"[{done}/{total}] {rec['id']}: {mark}", err=True)

    try:
        with bar:
            info = run_sweep(spec if fidelity is not None else file, target, scheduler=scheduler, workers=workers, progress=progress,
                             retry_failed=retry_failed)
    except ValueError as err:
        fail(str(err))
    if as_json:
        print_json(info)
    else:
        typer.echo(f"{info['points']} points: {info['ok']} ok, {info['failed']} failed, {info['skipped']} already "
                   f"done; {info['ran']} run in {info['wall_time_s']:.1f} s on "
                   f"{info['workers'] or info['scheduler']} worker(s)")
        typer.echo(f"table: {info['table']}")
        for f in info["figures"]:
            typer.echo(f"figure: {target / f}")
        for k, v in info["failures"].items():
            typer.echo(f"failed {k}: {v}", err=True)
    raise typer.Exit(0 if info["missing"] == 0 else 1)


def register(app: typer.Typer) -> None:
    """Add ``sweep`` to the ``trackdyn`` application."""
    app.command("sweep")(sweep)


if __name__ == "__main__":  # python -m trackdyn.cli.sweep FILE ... (before the command is wired into main)
    _app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    register(_app)

    @_app.callback()
    def _root():
        """trackdyn sweep."""

    _app(args=["sweep", *sys.argv[1:]])
