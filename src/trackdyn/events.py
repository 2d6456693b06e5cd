"""``td.events``: mobility events and limit searches (korner-2024 chapters 4-5, NG-NRMM).

A namespace over :mod:`trackdyn.experiments.events`; every function returns
an :class:`EventResult` (a JSON-ready dict) and, with ``out=``, writes an
event folder (trial results folders, figures, ``summary.json``).

>>> import trackdyn as td                                            # doctest: +SKIP
>>> td.events.step_climb_limit(td.vehicles.get("m113"))["limit_m"]
>>> td.events.half_round("m113", height_in=10, speeds=[2, 3, 4, 5])["limiting_speed_mps"]
"""

from .experiments.events import (
    DEFAULT_STEP,
    EVENTS,
    EventDiverged,
    EventResult,
    event_figures,
    gap_crossing,
    gap_crossing_limit,
    half_round,
    resolve_vehicle,
    ride,
    run_event,
    step_climb,
    step_climb_limit,
    trapezoid,
)
from .experiments.limits import LimitSearch, limit_search
from .experiments.sweep import SweepSpec, load_sweep, run_sweep
from .experiments.tensioning import Tensioning

__all__ = [
    "EventResult", "EventDiverged", "EVENTS", "DEFAULT_STEP", "run_event", "resolve_vehicle", "event_figures",
    "half_round", "step_climb", "step_climb_limit", "gap_crossing", "gap_crossing_limit", "trapezoid", "ride",
    "LimitSearch", "limit_search", "Tensioning", "SweepSpec", "load_sweep", "run_sweep",
]
