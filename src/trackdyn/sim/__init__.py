"""Simulation (the step loop), recorders and results."""

from .result import Result
from .simulation import Recorder, Simulation

__all__ = ["Simulation", "Recorder", "Result"]
