"""Exceptions shared by every layer."""

from __future__ import annotations


class StepFailed(RuntimeError):
    """A time step produced non-finite values, a singular matrix or an invalid load.

    The simulation stops, keeps its partial results and reports ``status: diverged``.
    """
