"""WHAT: validated, frozen, serialisable descriptions of vehicles (and later scenarios and sweeps).

No numerics here; :mod:`trackdyn.assembly` turns a spec into a model.
"""

from .io import dump_json, dump_toml, get, library_names, load_spec, loads_spec
from .vehicle import SpecError, VehicleSpec, validate_spec

__all__ = ["VehicleSpec", "SpecError", "validate_spec", "load_spec", "loads_spec", "dump_toml", "dump_json",
           "get", "library_names"]
