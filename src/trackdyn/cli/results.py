"""``trackdyn report``, and the helpers the result commands share (opening a folder, JSON output).

Register with ``results.register(app)``. Exit codes: 0 success, 1 invalid
input (a missing or incomplete folder, an unknown series), 2 usage (Typer).
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..io.results import _json_default, load, match_series
from ..viz.report import write_report

__all__ = ["register", "open_result", "print_json", "fail", "expand_series"]

DIR_HELP = "Results folder (timeseries.parquet + metadata.json)."
JSON_HELP = "Print one JSON object on stdout and nothing else."


def print_json(obj) -> None:
    """Write ``obj`` as one JSON line on stdout."""
    sys.stdout.write(json.dumps(obj, default=_json_default) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1):
    """Print ``message`` on stderr and exit with ``code`` (1: invalid input)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def open_result(directory: Path, series=None):
    """Load a results folder or exit 1 with the reason."""
    try:
        return load(directory, series=series)
    except (FileNotFoundError, ValueError, OSError) as err:
        fail(str(err))


def expand_series(result, patterns) -> list[str]:
    """Series names for patterns (exact names or globs); exit 1 naming a pattern that matches nothing."""
    names: list[str] = []
    for p in patterns:
        hit = match_series(result.columns, [p])
        if not hit:
            close = difflib.get_close_matches(p, result.columns, n=5, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else "; list them with `trackdyn plot DIR --list`"
            fail(f"no series matches {p!r} in {result.path}{hint}")
        names += [h for h in hit if h not in names]
    return names


def report(
    directory: Path = typer.Argument(..., help=DIR_HELP),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="HTML file to write (default: DIR/report.html)."),
    series: Optional[List[str]] = typer.Option(None, "--series", "-s",
                                               help="Series (or glob) to plot; repeat the option. "
                                                    "Default: position and speed of the heaviest body."),
    title: Optional[str] = typer.Option(None, "--title", help="Page title (default: the scenario name)."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """Write one self-contained HTML report of a results folder.

    Scenario, spec summary, solver settings, figures, event results
    (summary.json), warnings and the wall-time split; images are embedded, so
    the file works offline and can be shared on its own.
    """
    res = open_result(directory)
    names = expand_series(res, series) if series else None
    target = out or directory / "report.html"
    try:
        info = write_report(res, target, series=names, title=title)
    except ValueError as err:
        fail(str(err))
    if as_json:
        print_json(info)
    else:
        typer.echo(f"wrote {info['out']} ({info['bytes'] / 1e3:.0f} kB, run status {info['status']})")
        for w in info["warnings"]:
            typer.echo(f"warning: {w}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the ``trackdyn`` application."""
    app.command("report")(report)
