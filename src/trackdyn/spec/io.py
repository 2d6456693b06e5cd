"""Spec files: TOML and JSON in and out, and the library of built-in vehicles."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

from .vehicle import SpecError, VehicleSpec, validate_spec

__all__ = ["load_spec", "loads_spec", "dump_toml", "dump_json", "library_names", "get"]


def _clean(obj):
    """TOML has no null: drop None values (they mean 'use the default / derive')."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def dump_toml(spec: VehicleSpec) -> str:
    import tomli_w

    return tomli_w.dumps(_clean(spec.model_dump(mode="json")))


def dump_json(spec: VehicleSpec) -> str:
    return json.dumps(spec.model_dump(mode="json"), indent=2)


def loads_spec(text: str, fmt: str = "toml", source: str | None = None) -> VehicleSpec:
    """Parse and validate a spec from TOML or JSON text; errors name the field path."""
    try:
        if fmt == "toml":
            data = tomllib.loads(text)
        elif fmt == "json":
            data = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{c} is not allowed")))
        else:
            raise ValueError(f"unknown spec format {fmt!r}")
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, ValueError, TypeError, RecursionError) as err:
        raise SpecError([("(file)", None, f"cannot parse {fmt.upper()}: {err}")], source) from None
    if not isinstance(data, dict):
        raise SpecError([("(file)", type(data).__name__, "the top level must be a table")], source)
    return validate_spec(data, source)


def load_spec(path) -> VehicleSpec:
    """Load a spec file (``.toml`` or ``.json``)."""
    p = Path(path)
    fmt = "json" if p.suffix.lower() == ".json" else "toml"
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SpecError([("(file)", str(p), f"cannot read: {err}")], str(p)) from None
    return loads_spec(text, fmt, source=str(p))


def library_names() -> list[str]:
    files = resources.files("trackdyn.spec").joinpath("library")
    return sorted(f.name[:-5] for f in files.iterdir() if f.name.endswith(".toml"))


def get(name: str) -> VehicleSpec:
    """A built-in vehicle by name (``trackdyn vehicles`` lists them), or a spec file path."""
    if name in library_names():
        text = resources.files("trackdyn.spec").joinpath("library", f"{name}.toml").read_text(encoding="utf-8")
        return loads_spec(text, "toml", source=f"library:{name}")
    p = Path(name)
    if p.suffix.lower() in (".toml", ".json") and p.exists():
        return load_spec(p)
    raise ValueError(f"unknown vehicle {name!r}; built-in: {', '.join(library_names())} (or a .toml/.json path)")

