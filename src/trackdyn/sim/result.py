"""Recorded time series of a run: :class:`~trackdyn.io.results.Result`, re-exported.

The class lives in :mod:`trackdyn.io.results` (results sit below the
simulation that makes them, so reading a results folder needs nothing from
``sim``); ``trackdyn.sim.result.Result``, ``trackdyn.sim.Result`` and
``trackdyn.Result`` are the same class.
"""

from ..io.results import Result

__all__ = ["Result"]
