"""Exceptions shared by every layer."""

from __future__ import annotations


class StepFailed(RuntimeError):
    """A time step produced non-finite values, a singular matrix or an invalid load.

    The simulation stops, keeps its partial results and reports ``status: diverged``.
    """


def check_number(label: str, value, positive: bool = False, nonneg: bool = False) -> float:
    """``value`` as a finite float, or a ValueError naming ``label``, the value and the reason.

    ``label`` is the field path as the user wrote it (``"scenario.step"``,
    ``"limit search: tol"``); ``positive`` refuses values <= 0, ``nonneg``
    values < 0.
    """
    import math

    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{label} = {value!r}: expected a number") from None
    if not math.isfinite(x):
        raise ValueError(f"{label} = {value!r}: must be finite")
    if positive and x <= 0:
        raise ValueError(f"{label} = {value!r}: must be positive")
    if nonneg and x < 0:
        raise ValueError(f"{label} = {value!r}: must be >= 0")
    return x
