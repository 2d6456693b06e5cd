"""CLI: ``trackdyn run SCENARIO`` — a built-in scenario name or a scenario file."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def run(
        scenario: str = typer.Argument(..., help="Built-in scenario (settle, accelerate, cruise) or a .toml file."),
        vehicle: str = typer.Option("m113", "--vehicle", help="Vehicle name or spec file."),
        fidelity: str = typer.Option("links", "--fidelity", help="Track model: a registered fidelity (trackdyn fidelities)."),
        out: Optional[Path] = typer.Option(None, "--out", help="Results folder to write."),
        t_end: Optional[float] = typer.Option(None, "--t-end", help="Simulated time, s."),
        speed: float = typer.Option(4.2, "--speed", help="cruise: target speed, m/s."),
        distance: float = typer.Option(100.0, "--distance", help="cruise: distance, m."),
        step: Optional[float] = typer.Option(None, "--step", help="Time step, s (default: the fidelity's own)."),
        ground: Optional[str] = typer.Option(None, "--ground", help="Ground model: rigid or winkler (the scenario "
                                             "option terrain.ground; docs/terrain.md)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        set_: Optional[List[str]] = typer.Option(None, "--set", help="Scenario option NAME=VALUE, e.g. "
                                                 "contact.method=nsc (repeatable)."),
    ):
        """Run a scenario and print its figures."""
        from ..experiments.scenarios import SCENARIOS
        from ..spec import SpecError
        from ..spec.scenario import load_scenario
        from .main import _print_json

        from .event import _parse_set

        kw = {}
        if step is not None:
            kw["step"] = step
        try:
            options = _parse_set(set_)
            if ground is not None:
                options["terrain.ground"] = ground
        except typer.BadParameter as err:
            typer.echo(str(err), err=True)
            raise typer.Exit(2)
        try:
            if options and scenario in SCENARIOS:
                kw["options"] = options
            if scenario in SCENARIOS:
                if scenario in ("settle", "accelerate") and t_end is not None:
                    kw["t_end"] = t_end
                if scenario == "cruise":
                    kw.update(speed=speed, distance=distance)
                kw["fidelity"] = fidelity
                summary, res = SCENARIOS[scenario](vehicle=vehicle, out=out, **kw)
            else:
                from ..sim.run import run as run_scenario

                p = Path(scenario)
                if not p.exists():
                    typer.echo(f"unknown scenario {scenario!r}: not a built-in ({', '.join(SCENARIOS)}) "
                               "nor an existing file", err=True)
                    raise typer.Exit(1)
                sc = load_scenario(p)
                changes = {}
                if t_end is not None:
                    changes["t_end"] = t_end
                if step is not None:
                    changes["step"] = step
                if fidelity != sc.fidelity:
                    changes["fidelity"] = fidelity
                if options:
                    changes["options"] = {**sc.options, **options}
                sc = sc.replace(**changes) if changes else sc
                res = run_scenario(sc, out=out)
                md = res.metadata
                summary = {"scenario": sc.name, "status": res.status}
                for k in ("sim_time_s", "wall_time_s", "steps", "step_size_s", "wall_per_sim"):
                    summary[k] = md.get(k)
        except (SpecError, ValueError) as err:
            typer.echo(str(err), err=True)
            raise typer.Exit(1)
        summary.setdefault("status", "complete")
        if summary["status"] != "complete":
            # the diagnostic (time, worst body / joint, reason); the partial results stay in --out
            summary.setdefault("error", res.metadata.get("error"))
            typer.echo(f"run {summary['status']}: {summary['error']}", err=True)
        if out is not None:
            summary["out"] = str(out)
        if as_json:
            _print_json(summary)
        else:
            for k, v in summary.items():
                if k != "shoe_tension_N":
                    typer.echo(f"{k}: {v}")
        raise typer.Exit(0 if summary["status"] == "complete" else 1)
