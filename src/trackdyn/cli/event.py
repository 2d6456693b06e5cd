"""CLI: ``trackdyn event NAME --vehicle V [--fidelity F] [event options] [--out DIR] [--json]``.

Events: ``half-round``, ``step-climb``, ``gap-crossing``, ``trapezoid``,
``ride`` (:mod:`trackdyn.experiments.events`). The common options are named
flags; any other keyword of the event's Python function is given as
``--set NAME=VALUE`` (VALUE parsed as JSON when it can be: numbers, lists,
true/false); a dotted NAME is a scenario option of the fidelity
(``--set contact.method=nsc``), and ``integrator.NAME`` an option of the stepper
(``--set integrator.contact_solver=apgd``). With ``--json`` one JSON object goes to stdout, e.g.
``{"event": "step-climb", "limit_m": 0.62, ...}``. Exit codes: 0 success,
1 invalid input or a diverged run, 2 usage.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

__all__ = ["register", "event"]


def _parse_list(text: str, what: str) -> list[float]:
    try:
        vals = [float(x) for x in text.replace(";", ",").split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(f"{what}: expected comma-separated numbers, got {text!r}") from None
    if not vals:
        raise typer.BadParameter(f"{what}: give at least one number")
    return vals


def _parse_set(items) -> dict:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise typer.BadParameter(f"--set {it!r}: expected NAME=VALUE")
        k, v = it.split("=", 1)
        k = k.strip().replace("-", "_")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def event(
    name: str = typer.Argument(..., help="Event: half-round, step-climb, gap-crossing, trapezoid, ride."),
    vehicle: str = typer.Option("m113", "--vehicle", help="Vehicle name or spec file."),
    fidelity: str = typer.Option("links", "--fidelity", help="Track model: a registered fidelity (trackdyn fidelities)."),
    step: Optional[float] = typer.Option(None, "--step", help="Time step, s (default: the fidelity's step for events; links 2.5e-4)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Event folder: trials, figure(s), summary.json."),
    height_in: Optional[float] = typer.Option(None, "--height-in", help="half-round: obstacle height, in "
                                              "(4, 6, 8, 10, 12); trapezoid: barrier height (30)."),
    speeds: Optional[str] = typer.Option(None, "--speeds", help="half-round: speeds, m/s, comma-separated."),
    speed: Optional[float] = typer.Option(None, "--speed", help="gap-crossing, trapezoid, ride: speed, m/s."),
    search: Optional[str] = typer.Option(None, "--search", help="step-climb, gap-crossing: bisect, stepped "
                                         "or values."),
    lo: Optional[float] = typer.Option(None, "--lo", help="Limit search: lowest value (bisect) or start, m."),
    hi: Optional[float] = typer.Option(None, "--hi", help="Limit search: highest value (bisect) or stop, m."),
    tol: Optional[float] = typer.Option(None, "--tol", help="Limit search: bracket width (bisect), m."),
    increment: Optional[float] = typer.Option(None, "--increment", help="Limit search: increment (stepped), m."),
    values: Optional[str] = typer.Option(None, "--values", help="Limit search 'values': heights/widths, m."),
    road: Optional[str] = typer.Option(None, "--road", help="ride: iso8608, bump, trough or sinusoid."),
    ground: Optional[str] = typer.Option(None, "--ground", help="Ground model: rigid or winkler (the scenario "
                                         "option terrain.ground; docs/terrain.md)."),
    road_class: Optional[str] = typer.Option(None, "--class", help="ride: ISO 8608 class A..H."),
    length: Optional[float] = typer.Option(None, "--length", help="ride: road length, m."),
    sprocket_dx: float = typer.Option(0.0, "--sprocket-dx", help="Sprocket offset x, m (thesis §5.1)."),
    sprocket_dz: float = typer.Option(0.0, "--sprocket-dz", help="Sprocket offset z, m."),
    idler_dx: float = typer.Option(0.0, "--idler-dx", help="Idler offset x, m."),
    idler_dz: float = typer.Option(0.0, "--idler-dz", help="Idler offset z, m."),
    tension: bool = typer.Option(False, "--tension/--no-tension", help="Apply the §5.1 tensioning procedure."),
    set_: Optional[List[str]] = typer.Option(None, "--set", help="Other event option NAME=VALUE (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout and nothing else."),
):
    """Run a mobility event (limit search, ride-limiting speed, pass/fail table) and print its result."""
    from ..assembly.geometry import GeometryError
    from ..experiments.events import EVENTS, EventDiverged, resolve_vehicle, run_event
    from ..spec import SpecError
    from .results import fail, print_json

    if name not in EVENTS:
        fail(f"unknown event {name!r}; choose one of: {', '.join(EVENTS)}")
    opts = {}
    named = {"step": step, "height_in": height_in, "speed": speed, "search": search, "lo": lo, "hi": hi,
             "tol": tol, "increment": increment, "road": road, "road_class": road_class, "length": length}
    try:
        if speeds is not None:
            named["speeds"] = _parse_list(speeds, "--speeds")
        if values is not None:
            named["values"] = _parse_list(values, "--values")
            if search is None:
                named["search"] = "values"
        opts.update({k: v for k, v in named.items() if v is not None})
        for k, v in _parse_set(set_).items():
            if k.startswith("integrator."):  # an option of the stepper (integrator.contact_solver=newton)
                opts.setdefault("scenario_options", {}).setdefault("options", {})[k[len("integrator."):]] = v
            elif "." in k:  # a scenario option of the fidelity (contact.method=nsc): Scenario(options=...)
                opts.setdefault("scenario_options", {}).setdefault("options", {})[k] = v
            else:
                opts[k] = v
    except typer.BadParameter as err:
        fail(str(err))
    if ground is not None:
        opts.setdefault("scenario_options", {}).setdefault("options", {})["terrain.ground"] = ground
    if fidelity != "links":
        opts["fidelity"] = fidelity
    if tension:
        opts["tension"] = True
    if out is not None:
        opts["out"] = out
    if not as_json:
        opts["progress"] = lambda msg: typer.echo(msg, err=True)
    try:
        spec = resolve_vehicle(vehicle, sprocket_dx, sprocket_dz, idler_dx, idler_dz)
        res = run_event(name, spec, **opts)
    except (SpecError, GeometryError, EventDiverged, ValueError, TypeError) as err:
        fail(str(err))
    if as_json:
        print_json(dict(res))
        return
    show = {k: v for k, v in res.items() if not isinstance(v, (list, dict))}
    for k in ("peaks", "barriers", "ditches", "peak_sources"):
        if k in res:
            show[k] = res[k]
    for k, v in show.items():
        typer.echo(f"{k}: {v}")


def register(app: typer.Typer) -> None:
    """Add ``event`` to the ``trackdyn`` application."""
    app.command("event")(event)


if __name__ == "__main__":  # python -m trackdyn.cli.event ... (before the command is wired into main)
    _app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    register(_app)

    @_app.callback()
    def _root():
        """trackdyn event."""

    _app(args=["event", *sys.argv[1:]])
