"""Simulation (the step loop), recorders and results."""

from .result import Result
from .recorder import Recorder
from .simulation import Simulation

__all__ = ["Simulation", "Recorder", "Result"]
