"""CLI: ``trackdyn sweep FILE|NAME [--resume DIR] ...``, ``trackdyn sweep --list``, ``trackdyn sweep status DIR``.

- ``trackdyn sweep FILE|NAME [--scheduler ADDR] [--workers N] [--fidelity F] [--out DIR] [--json]`` runs
  (or continues) the sweep of a TOML sweep file or of a built-in sweep named NAME
  (:mod:`trackdyn.experiments.sweep`) on Dask: an embedded ``LocalCluster`` with ``--workers``
  single-thread worker processes (default: one per core), or an existing cluster at ``--scheduler``.
  Output in ``--out`` (default ``sweeps/<name>``).
- ``--resume DIR`` continues the sweep in DIR (it must hold a manifest): finished, failed and refused
  points are kept, the others run. FILE may then be left out (DIR's ``sweep.toml`` is used).
- ``--list`` prints the built-in sweeps: name, event, grid size and description.
- ``compare DIR DIR`` sets two sweep folders of the same axes side by side (e.g. ``--fidelity massless``
  against links): per value the points finished in both, Spearman's rank correlation, the mean and largest
  difference, and each folder's point wall time (:func:`~trackdyn.experiments.sweep.compare_sweeps`).
- ``status DIR`` prints the points done, failed (with the error), refused (with the reason) and left,
  the unfinished attempts, and the ETA from the measured point times (``--workers`` to project it for
  another worker count); it reads the folder only.

Progress on stderr: on a terminal a live display (Rich) of points done, failed, refused and running with
the ETA; otherwise one line per point. With ``--json`` one JSON object on stdout and nothing else. Exit
codes: 0 every point has a record (some may be failed or refused: see ``failed``, ``refused``), 1
invalid input or points left undone, 2 usage.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

__all__ = ["register", "sweep", "format_duration", "list_rows"]


def format_duration(seconds) -> str:
    """``3725`` -> ``"1 h 02 min"``; ``None`` -> ``"unknown"``."""
    if seconds is None:
        return "unknown"
    s = int(round(float(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    if s < 86400:
        return f"{s // 3600} h {(s % 3600) // 60:02d} min"
    return f"{s // 86400} d {(s % 86400) // 3600:02d} h"


def list_rows() -> list[dict]:
    """The built-in sweeps: ``[{"name", "event", "grid", "points", "description", "file"}, ...]``."""
    from ..experiments.sweep import builtin_sweeps, load_sweep

    rows = []
    for name, path in builtin_sweeps().items():
        s = load_sweep(path)
        rows.append({"name": name, "event": s.event, "grid": " x ".join(str(n) for n in s.shape()),
                     "axes": list(s.grid), "points": len(s.points()), "description": s.description,
                     "file": path.name})
    return rows


def _print_list(as_json: bool) -> None:
    from .results import print_json

    rows = list_rows()
    if as_json:
        print_json({"sweeps": rows})
        return
    w = max(len(r["name"]) for r in rows) if rows else 4
    typer.echo(f"{'name':<{w}}  {'event':<11}  {'grid':<10}  {'points':>6}  description")
    for r in rows:
        typer.echo(f"{r['name']:<{w}}  {r['event']:<11}  {r['grid']:<10}  {r['points']:>6}  {r['description']}")


def _print_status(directory: Optional[Path], workers: Optional[int], as_json: bool) -> None:
    from ..experiments.sweep import sweep_status
    from .results import fail, print_json

    if directory is None:
        fail("sweep status: give the sweep's output folder (trackdyn sweep status DIR)")
    if workers is not None and workers < 1:
        fail(f"--workers must be >= 1, got {workers}")
    try:
        st = sweep_status(directory, workers=workers)
    except ValueError as err:
        fail(str(err))
    if as_json:
        print_json(st)
        return
    typer.echo(f"sweep {st['sweep']} ({st['event']}, {st['vehicle']}) in {st['dir']}")
    drv = st.get("driver")
    if drv is not None:
        state = {True: "running", False: "gone (killed?)", None: "on another host"}[drv["running"]]
        typer.echo(f"  driver   pid {drv['pid']} on {drv['host']}: {state}")
    typer.echo(f"  points   {st['points']}")
    typer.echo(f"  done     {st['done']}" + (f" ({st['shared']} recorded from a point of the same assembled vehicle)"
                                             if st.get("shared") else ""))
    typer.echo(f"  failed   {st['failed']}")
    typer.echo(f"  refused  {st['refused']}")
    notes = ([f"{len(st['in_progress'])} with an unfinished attempt"] if st["in_progress"] else []) + \
        ([f"{st['to_share']} to be recorded from a point of the same assembled vehicle"] if st.get("to_share") else [])
    typer.echo(f"  left     {st['left']}" + (f" ({'; '.join(notes)})" if notes else ""))
    mean = st["mean_point_s"]
    typer.echo(f"  point time  {format_duration(mean)} mean over {st['computed']} computed point(s)"
               if mean is not None else "  point time  unknown (no point computed yet)")
    typer.echo(f"  ETA      {format_duration(st['eta_s'])} on {st['workers']} worker(s)"
               + ("" if st["complete"] else f"  (resume: trackdyn sweep --resume {st['dir']})"))
    for k, v in st["failures"].items():
        typer.echo(f"  failed  {k}: {v}")
    for k, v in st["refusals"].items():
        typer.echo(f"  refused {k}: {v}")


def _print_compare(dirs, as_json: bool) -> None:
    from ..experiments.sweep import compare_sweeps
    from .results import fail, print_json

    if len(dirs) != 2:
        fail(f"sweep compare: give two sweep folders (reference first), got {len(dirs)}")
    try:
        c = compare_sweeps(dirs[0], dirs[1])
    except ValueError as err:
        fail(str(err))
    if as_json:
        print_json(c)
        return
    fa, fb = c["fidelities"]
    typer.echo(f"{c['other']} ({fb}) against {c['reference']} ({fa}): {c['common_points']} points finished in both")
    typer.echo(f"  {'value':<22} {'points':>6} {'Spearman':>9} {'p':>9} {'mean diff':>11} {'max |diff|':>11}")
    for r in c["values"]:
        def f(x, fmt):
            return "-" if x is None else format(x, fmt)
        typer.echo(f"  {r['value']:<22} {r['points']:>6} {f(r['spearman'], '.3f'):>9} {f(r['p_value'], '.2g'):>9} "
                   f"{f(r['mean_difference'], '.4g'):>11} {f(r['max_abs_difference'], '.4g'):>11}")
    w = c["point_wall_s"]
    if w["ref"] is not None and w["other"] is not None:
        ratio = "-" if c["cost_ratio"] is None else f"{c['cost_ratio']:.3g}"
        typer.echo(f"  point wall time over these points: {w['ref']:.1f} s ({fa}), {w['other']:.1f} s ({fb}), "
                   f"ratio {ratio}")


class _Live:
    """Live display of a running sweep on stderr: points done / failed / refused / running, and the ETA."""

    def __init__(self, label: str, total: int, enabled: bool):
        self.label, self.total, self.enabled = label, int(total), enabled
        self._live = None
        self.last = None

    @staticmethod
    def render_text(snap: dict) -> str:
        return (f"{snap['done']}/{snap['total']} points: {snap['ok']} done, {snap['failed']} failed, "
                f"{snap['refused']} refused, {snap['running']} running, {snap['left']} left"
                + (f" ({snap['runs_left']} to run)" if snap.get("runs_left", snap["left"]) != snap["left"] else "")
                + "; "
                f"elapsed {format_duration(snap['elapsed_s'])}, ETA {format_duration(snap['eta_s'])}")

    def _renderable(self, snap):
        from rich.progress_bar import ProgressBar
        from rich.table import Table

        t = Table.grid(padding=(0, 1))
        t.add_row(f"[bold]sweep {self.label}[/bold]",
                  ProgressBar(total=max(1, snap["total"]), completed=snap["done"], width=20),
                  self.render_text(snap))
        return t

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(console=Console(file=sys.stderr, force_terminal=True), refresh_per_second=4,
                              transient=False)
            self._live.start()
        return self

    def __call__(self, snap: dict) -> None:
        self.last = snap
        if self._live is not None:
            self._live.update(self._renderable(snap))

    def __exit__(self, *exc):
        if self._live is not None:
            self._live.stop()
            self._live = None
        return False


def sweep(
    file: Optional[str] = typer.Argument(None, help="Sweep file (TOML), or a built-in sweep's name "
                                         "(trackdyn sweep --list); or 'status' followed by a sweep folder, or 'compare' followed by two."),
    directory: Optional[List[Path]] = typer.Argument(None, help="With 'status': the sweep's output folder; with "
                                                     "'compare': two sweep folders (reference first)."),
    list_: bool = typer.Option(False, "--list", help="List the built-in sweeps (name, event, grid, description)."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Continue the sweep in this folder (it holds a "
                                          "manifest): finished, failed and refused points are kept."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address "
                                            "(tcp://host:8786); default an embedded LocalCluster."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Worker processes of the embedded cluster "
                                          "(default: one per core); with 'status', the ETA's worker count."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder (default: sweeps/<name>)."),
    fidelity: Optional[str] = typer.Option(None, "--fidelity", help="Track model of every point: a registered "
                                           "fidelity (default: the file's, else links)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Re-run the points recorded as failed."),
    series: bool = typer.Option(False, "--series", help="Keep every point's trial folders (time series) and "
                                "figures; default only a small summary.json per point."),
    run_duplicates: bool = typer.Option(False, "--run-duplicates", help="Run every point, also those whose "
                                        "assembled vehicle equals another point's (by default such a point is "
                                        "run once and the others are recorded from it, with same_as)."),
    plot_only: bool = typer.Option(False, "--plot-only", help="Only rebuild the table and figures of DIR."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout and nothing else."),
):
    """Run a parameter sweep of an event on Dask (a file or a built-in name); --list the built-in sweeps;
    --resume a folder; 'status DIR' for its progress and ETA."""
    from ..experiments.sweep import load_sweep, run_sweep, sweep_figures, write_tables
    from .results import fail, print_json

    if list_:
        _print_list(as_json)
        return
    if file == "status" and not Path("status").is_file():
        if directory is not None and len(directory) > 1:
            fail(f"sweep status: one folder, got {len(directory)}")
        _print_status(directory[0] if directory else None, workers, as_json)
        return
    if file == "compare" and not Path("compare").is_file():
        _print_compare(directory or [], as_json)
        return
    if directory:
        fail(f"unexpected argument {str(directory[0])!r}: only 'trackdyn sweep status DIR' and 'trackdyn sweep "
             "compare DIR DIR' take folders (continue a sweep with --resume DIR)")
    if workers is not None and workers < 1:
        fail(f"--workers must be >= 1, got {workers}")
    if resume is not None:
        if out is not None and Path(out).resolve() != Path(resume).resolve():
            fail(f"--out {out} and --resume {resume}: give one output folder")
        if not (Path(resume) / "manifest.json").is_file():
            fail(f"--resume {resume}: not a sweep folder (no manifest.json); start a sweep with --out {resume}")
        if file is None:
            if not (Path(resume) / "sweep.toml").is_file():
                fail(f"--resume {resume}: the folder has no sweep.toml; give the sweep file or name too")
            file = str(Path(resume) / "sweep.toml")
    if file is None:
        fail("give a sweep file or a built-in sweep's name (trackdyn sweep --list), or --resume DIR")
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
    target = resume if resume is not None else (out if out is not None else Path("sweeps") / spec.name)
    if plot_only:
        df, _ = write_tables(spec, target)
        figs = sweep_figures(spec, df, target)
        info = {"sweep": spec.name, "rows": len(df), "figures": [f"figures/{k}.png" for k in figs]}
        print_json(info) if as_json else typer.echo(f"{len(df)} rows, {len(figs)} figures in {target}")
        return
    from .progress import progress_enabled

    live = _Live(spec.name, len(spec.points()), enabled=progress_enabled(json=as_json))

    def progress(done, total, rec):
        if not live.enabled and not as_json:
            mark = {"ok": "ok", "refused": f"REFUSED ({rec.get('error')})"}.get(rec["status"],
                                                                              f"FAILED ({rec.get('error')})")
            if rec.get("same_as"):
                mark = f"ok (the assembled vehicle of {rec['same_as']})"
            eta = "" if live.last is None else f"; ETA {format_duration(live.last['eta_s'])}"
            typer.echo(f"[{done}/{total}] {rec['id']}: {mark}{eta}", err=True)

    def on_update(snap):
        live(snap)

    try:
        with live:
            info = run_sweep(spec if fidelity is not None else file, target, scheduler=scheduler, workers=workers,
                             progress=progress, retry_failed=retry_failed, series=series, on_update=on_update,
                             share=not run_duplicates)
    except ValueError as err:
        fail(str(err))
    if as_json:
        print_json(info)
    else:
        typer.echo(f"{info['points']} points: {info['ok']} ok, {info['failed']} failed, "
                   f"{info.get('refused', 0)} refused, {info['skipped']} already recorded, "
                   f"{info.get('shared', 0)} recorded from a point of the same assembled vehicle; "
                   f"{info['ran'] - info.get('shared', 0)} run in "
                   f"{info['wall_time_s']:.1f} s on {info['workers'] or info['scheduler']} worker(s)")
        typer.echo(f"table: {info['table']}")
        for f in info["figures"]:
            typer.echo(f"figure: {target / f}")
        for k, v in info["failures"].items():
            typer.echo(f"failed {k}: {v}", err=True)
        for k, v in info.get("refusals", {}).items():
            typer.echo(f"refused {k}: {v}", err=True)
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
