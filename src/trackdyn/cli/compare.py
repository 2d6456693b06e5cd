"""``trackdyn compare DIR DIR...``: runs or fidelities side by side (:func:`trackdyn.viz.compare.compare`).

Register with ``compare.register(app)``. Prints the tables (runs and their
cost, settings that differ, RMS and largest difference per series against
the first run, event headlines and trials), writes one figure per series
group into ``--out``; ``--json`` prints one JSON object instead. Exit codes:
0 success, 1 invalid input, 2 usage.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..viz.compare import ALIGN, compare as run_compare
from .results import JSON_HELP, fail, print_json

__all__ = ["register", "compare"]


def compare(
    directories: List[Path] = typer.Argument(..., help="Two or more results folders (or event folders); the "
                                             "first is the reference."),
    series: Optional[List[str]] = typer.Option(None, "--series", "-s", help="Series name or glob (brackets "
                                               "literal: 'left.roadwheel[*].pos.z'); repeat the option; one "
                                               "figure per option. Default: chassis position, speed, pitch "
                                               "rate and driver acceleration."),
    on: str = typer.Option("t", "--on", help="Align on time (t) or on distance travelled by the chassis (x)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for the figures and tables "
                                       "(default: ./compare)."),
    label: Optional[List[str]] = typer.Option(None, "--label", help="Name of each run in tables and legends, "
                                              "in order; repeat the option (default: folder names)."),
    fmt: str = typer.Option("png", "--format", "-f", help="Figure format: png or svg."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
):
    """Compare runs against the first: overlaid series, RMS and max differences, cost, event trials.

    Example: trackdyn compare runs/base runs/sprocket+5cm --series chassis.pos.z --series 'left.roadwheel[*].pos.z'
    --on x --out runs/compare
    """
    if len(directories) < 2:
        fail(f"give at least two folders to compare, got {len(directories)}", code=2)
    if on not in ALIGN:
        fail(f"--on must be t or x, got {on!r}", code=2)
    if fmt.lower() not in ("png", "svg"):
        fail(f"--format must be png or svg, got {fmt!r}", code=2)
    for d in directories:
        if not d.is_dir():
            fail(f"{d}: no such folder")
    try:
        comp = run_compare(directories, series=series or None, on=on, out=out or Path("compare"),
                           labels=label or None, formats=(fmt.lower(),))
    except (FileNotFoundError, ValueError, OSError) as err:
        fail(str(err))
    if as_json:
        print_json(comp.to_dict())
    else:
        typer.echo(comp.text(), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``compare`` to the ``trackdyn`` application."""
    app.command("compare")(compare)
