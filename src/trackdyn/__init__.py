"""trackdyn: multibody simulation of tracked vehicles.

The curated public API; everything else is private. See the README and
``docs/`` for a tour.
"""

from ._version import __version__
from .io.results import load
from .mbs import (
    TSDA,
    RSDA,
    Body,
    Bushing,
    Cylindrical,
    Distance,
    Fixed,
    LinearMotor,
    Model,
    PointForce,
    PointTorque,
    Prismatic,
    Profile,
    Revolute,
    RevoluteMotor,
    Spherical,
    State,
    Universal,
)
from .sim import Result, Simulation
from . import drivers, events, terrain, vehicles  # noqa: E402  (namespaces of the public API)
from .spec.scenario import Scenario  # noqa: E402
from .spec.vehicle import VehicleSpec  # noqa: E402
from .sim.run import run  # noqa: E402
from .viz.compare import compare  # noqa: E402

__all__ = [
    "__version__",
    "Model", "Body", "State", "Profile",
    "Spherical", "Revolute", "Universal", "Cylindrical", "Prismatic", "Fixed", "Distance",
    "RevoluteMotor", "LinearMotor",
    "TSDA", "RSDA", "Bushing", "PointForce", "PointTorque",
    "Simulation", "Result", "load",
    "vehicles", "drivers", "terrain", "events", "Scenario", "VehicleSpec", "run", "compare",
]
