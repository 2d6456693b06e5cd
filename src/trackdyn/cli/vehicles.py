"""CLI: built-in vehicles and spec files (``vehicles``, ``spec show``, ``spec check``)."""

from __future__ import annotations

import sys

import typer

from ..assembly.builder import vehicle_geometry
from ..assembly.geometry import GeometryError
from ..spec import SpecError, dump_json, dump_toml, get, library_names
from .results import print_json

spec_app = typer.Typer(help="Show and check vehicle specs.", no_args_is_help=True)


def _load(name_or_file):
    try:
        return get(name_or_file)
    except SpecError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(1)
    except ValueError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(1)


def _summary(spec) -> dict:
    if spec.running_gear == "wheels":
        return _wheeled_summary(spec)
    out = {"name": spec.name, "description": spec.description, "chassis_mass_kg": spec.chassis.mass,
           "running_gear": "tracks",
           "road_wheels_per_side": len(spec.suspension.stations), "rollers_per_side": len(spec.rollers.locations)}
    try:
        g = vehicle_geometry(spec)
        out["shoes"] = {s: t.n_shoes for s, t in g.tracks.items()}
        out["idler_shift_m"] = {s: round(t.idler_shift, 6) for s, t in g.tracks.items()}
        out["track_length_m"] = {s: round(t.n_shoes * spec.shoes.pitch, 4) for s, t in g.tracks.items()}
        out["geometry"] = "ok"
    except GeometryError as err:
        out["geometry"] = f"invalid: {err}"
    return out


def _wheeled_summary(spec) -> dict:
    """A wheeled vehicle's row: wheels per side, static wheel loads and tyre deflections of its design pose."""
    from ..assembly.wheeled import static_loads

    out = {"name": spec.name, "description": spec.description, "chassis_mass_kg": spec.chassis.mass,
           "running_gear": "wheels", "wheels_per_side": len(spec.wheels.stations)}
    try:
        loads = static_loads(spec)
        out["static_wheel_load_N"] = {"left": loads[0].round(1).tolist(), "right": loads[1].round(1).tolist()}
        out["static_tyre_deflection_m"] = round(float(loads.mean()) / spec.tyre.stiffness, 6)
        out["geometry"] = "ok"
    except ValueError as err:
        out["geometry"] = f"invalid: {err}"
    return out


def register(app: typer.Typer) -> None:
    @app.command()
    def vehicles(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")):
        """List the built-in vehicle specs."""
        rows = [_summary(get(n)) for n in library_names()]
        if as_json:
            print_json({"vehicles": rows})
            return
        for r in rows:
            if r["running_gear"] == "wheels":
                typer.echo(f"{r['name']:10s} {r['chassis_mass_kg']:8.0f} kg chassis, {r['wheels_per_side']} wheels/side "
                           f"on tyres, no track  {r['description']}")
                continue
            shoes = "/".join(str(v) for v in r.get("shoes", {}).values())
            typer.echo(f"{r['name']:10s} {r['chassis_mass_kg']:8.0f} kg chassis, {r['road_wheels_per_side']} road "
                       f"wheels/side, shoes {shoes or '-'}  {r['description']}")

    @spec_app.command("show")
    def show(name: str = typer.Argument(..., help="Built-in vehicle name or a .toml/.json spec file."),
             as_json: bool = typer.Option(False, "--json", help="Print the spec as JSON instead of TOML.")):
        """Print a spec (TOML by default)."""
        spec = _load(name)
        sys.stdout.write(dump_json(spec) + "\n" if as_json else dump_toml(spec))

    @spec_app.command("check")
    def check(file: str = typer.Argument(..., help="Spec file (.toml or .json) or a built-in name."),
              as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")):
        """Validate a spec and its geometry; exit 1 with the reasons when invalid."""
        try:
            spec = get(file)
        except (SpecError, ValueError) as err:
            problems = getattr(err, "problems", None)
            if as_json:
                print_json({"valid": False, "errors": [
                    {"field": p, "value": repr(v), "reason": r} for p, v, r in (problems or [("(file)", file, str(err))])]})
            else:
                typer.echo(str(err), err=True)
            raise typer.Exit(1)
        summ = _summary(spec)
        valid = summ["geometry"] == "ok"
        if as_json:
            out = {"valid": valid, **summ}
            if not valid:
                out["errors"] = [{"field": "geometry", "value": None, "reason": summ["geometry"]}]
            print_json(out)
        else:
            if valid and summ["running_gear"] == "wheels":
                typer.echo(f"{spec.name}: valid; {summ['wheels_per_side']} wheels/side, static tyre deflection "
                           f"{summ['static_tyre_deflection_m']} m")
            elif valid:
                typer.echo(f"{spec.name}: valid; shoes {summ['shoes']}, idler shift {summ['idler_shift_m']} m")
            else:
                typer.echo(f"{spec.name}: {summ['geometry']}", err=True)
        raise typer.Exit(0 if valid else 1)

    app.add_typer(spec_app, name="spec")
