"""CLI: ``trackdyn fidelities [--json]`` — the registered fidelities (track models) with their defaults."""

from __future__ import annotations

import typer

from ..formulations.contract import formulations
from .results import print_json as _print_json


def fidelity_help() -> str:
    """The ``--fidelity`` option's help, from the registry."""
    return "Track model: " + ", ".join(formulations()) + " (trackdyn fidelities)."


def register(app: typer.Typer) -> None:
    @app.command()
    def fidelities(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")):
        """List the registered fidelities: what each models, its cost class, its paper, its default step (and its
        step for the mobility events where that differs)."""
        reg = formulations()
        if as_json:
            _print_json({"fidelities": [{"name": n} | f.info.to_dict() for n, f in reg.items()]})
            return
        for n, f in reg.items():
            i = f.info
            events = f" (events: h = {i.event_step:g} s)" if i.event_step is not None else ""
            typer.echo(f"{n:<10} {i.cost:<10} h = {i.default_step:g} s, {i.default_integrator:<26} {i.paper:<26} "
                       f"{i.models}{events}")
