"""Drivers (``td.drivers.PID(speed=4.2)``...): see :mod:`trackdyn.driver`."""

from .driver import PID, Brake, Driver, FullThrottle, Idle, Observation, Scripted, SideSpeed, SprocketSpeed

__all__ = ["Driver", "Observation", "FullThrottle", "Idle", "Brake", "PID", "Scripted", "SprocketSpeed",
           "SideSpeed"]
