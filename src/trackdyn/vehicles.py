"""Built-in vehicle specs: ``td.vehicles.get("m113")``, ``td.vehicles.names()``."""

from .spec.io import get
from .spec.io import library_names as names

__all__ = ["get", "names"]
