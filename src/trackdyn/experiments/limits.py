"""Limit searches: the largest value of an obstacle parameter that a vehicle still passes.

A limit search calls a *trial* — ``trial(value) -> (passed, info)``, one
simulation of an event at that obstacle size — at a sequence of values and
returns the largest passed value below the smallest failed one. Two
strategies:

- ``"stepped"`` (korner-2024 §4.2.2/§4.2.3): start at ``start`` and increase
  by ``increment`` (2 cm for steps, 3 cm for gaps) until the first failure;
  the limit is the last success. Cost: one trial per increment up to the limit.
- ``"bisect"``: check that ``lo`` passes and ``hi`` fails, then halve the
  bracket until it is at most ``tol`` wide; the limit is the bracket's lower
  end. Cost: ``2 + ceil(log2((hi - lo) / tol))`` trials.

Both assume that passing is monotonic in the parameter (a vehicle that fails
a 0.6 m step fails a 0.7 m one). Real vehicles are not always monotonic (a
faster approach can carry momentum over a larger obstacle); the trials table
of the result shows every outcome so a non-monotonic case is visible. Search
results are plain data (:class:`LimitSearch`) so events can put them into
their JSON.

Example
-------
>>> from trackdyn.experiments.limits import limit_search
>>> s = limit_search(lambda h: (h <= 0.537, {}), lo=0.2, hi=1.0, tol=0.01)
>>> round(s.limit, 3), s.bracket[1] - s.bracket[0] <= 0.01
(0.531, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import check_number

__all__ = ["Trial", "LimitSearch", "limit_search", "stepped_search", "bisect_search", "values_search", "SEARCHES"]

SEARCHES = ("bisect", "stepped", "values")


@dataclass
class Trial:
    """One trial of a search: the parameter value, whether it passed and the trial's own figures."""

    value: float
    passed: bool
    info: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"value": self.value, "passed": self.passed, **self.info}


@dataclass
class LimitSearch:
    """Outcome of a limit search.

    Attributes
    ----------
    limit : float or None
        Largest passed value below the smallest failed one; ``None`` when
        nothing passed (the limit is below every value tried).
    bracket : (float or None, float or None)
        (largest pass, smallest fail) around the limit; ``None`` on a side
        that was never observed (e.g. ``hi`` passed: the limit is at least ``hi``).
    trials : list of Trial
        In the order they were run.
    method : str
    status : str
        ``"found"`` (bracket closed), ``"above-range"`` (every value passed),
        ``"below-range"`` (the smallest value failed), ``"max-trials"``.
    """

    limit: float | None
    bracket: tuple
    trials: list
    method: str
    status: str

    @property
    def first_failure(self) -> Trial | None:
        """The failed trial at the upper end of the bracket (for figures like korner-2024 Fig. 4.14)."""
        hi = self.bracket[1]
        return next((t for t in self.trials if not t.passed and t.value == hi), None)

    @property
    def last_success(self) -> Trial | None:
        lo = self.bracket[0]
        return next((t for t in self.trials if t.passed and t.value == lo), None)

    def to_dict(self) -> dict:
        return {"limit": self.limit, "bracket": list(self.bracket), "method": self.method, "status": self.status,
                "trials": [t.to_dict() for t in self.trials]}


def _check(name, x, positive=False):
    return check_number(f"limit search: {name}", x, positive=positive)


def _run(trial, value, trials, cache):
    key = round(value, 12)
    if key in cache:
        return cache[key]
    passed, info = trial(value)
    t = Trial(float(value), bool(passed), dict(info or {}))
    trials.append(t)
    cache[key] = t
    return t


def _result(trials, method, status):
    ok = [t.value for t in trials if t.passed]
    bad = [t.value for t in trials if not t.passed]
    hi = min(bad) if bad else None
    below = [v for v in ok if hi is None or v < hi]
    lo = max(below) if below else None
    return LimitSearch(lo, (lo, hi), trials, method, status)


def stepped_search(trial, start: float, increment: float, stop: float, max_trials: int = 200) -> LimitSearch:
    """Increase the value by ``increment`` from ``start`` until a trial fails (thesis §4.2.2).

    Values are ``start + k increment`` up to ``stop`` inclusive.
    """
    start = _check("start", start)
    increment = _check("increment", increment, positive=True)
    stop = _check("stop", stop)
    if stop < start:
        raise ValueError(f"limit search: stop = {stop} is below start = {start}")
    trials, cache = [], {}
    k = 0
    while True:
        v = start + k * increment
        if v > stop + 1e-9 * max(1.0, abs(stop)):
            return _result(trials, "stepped", "above-range")
        if len(trials) >= max_trials:
            return _result(trials, "stepped", "max-trials")
        t = _run(trial, round(v, 10), trials, cache)
        if not t.passed:
            return _result(trials, "stepped", "below-range" if k == 0 else "found")
        k += 1


def bisect_search(trial, lo: float, hi: float, tol: float, max_trials: int = 60) -> LimitSearch:
    """Bisection of [lo, hi] until the bracket (last pass, first fail) is at most ``tol`` wide.

    ``lo`` is tried first: when it fails the search stops (``below-range``).
    ``hi`` next: when it passes the search stops (``above-range``).
    """
    lo = _check("lo", lo)
    hi = _check("hi", hi)
    tol = _check("tol", tol, positive=True)
    if not hi > lo:
        raise ValueError(f"limit search: hi = {hi} must exceed lo = {lo}")
    trials, cache = [], {}
    if not _run(trial, lo, trials, cache).passed:
        return _result(trials, "bisect", "below-range")
    if _run(trial, hi, trials, cache).passed:
        return _result(trials, "bisect", "above-range")
    a, b = lo, hi
    while b - a > tol * (1 + 1e-9):
        if len(trials) >= max_trials:
            return _result(trials, "bisect", "max-trials")
        m = 0.5 * (a + b)
        if _run(trial, m, trials, cache).passed:
            a = m
        else:
            b = m
    return _result(trials, "bisect", "found")


def values_search(trial, values) -> LimitSearch:
    """Try the given values in increasing order until one fails (a coarse grid, or a single check)."""
    vals = sorted({_check("values[]", v) for v in values})
    if not vals:
        raise ValueError("limit search: values is empty")
    trials, cache = [], {}
    for k, v in enumerate(vals):
        if not _run(trial, v, trials, cache).passed:
            return _result(trials, "values", "below-range" if k == 0 else "found")
    return _result(trials, "values", "above-range")


def limit_search(trial, method: str = "bisect", lo: float = None, hi: float = None, tol: float = None,
                 start: float = None, increment: float = None, stop: float = None, values=None) -> LimitSearch:
    """Run a limit search by name (``"bisect"``: lo, hi, tol; ``"stepped"``: start, increment, stop;
    ``"values"``: the listed values in increasing order until the first failure)."""
    if method == "values":
        if values is None:
            raise ValueError("limit search: method 'values' needs values")
        return values_search(trial, values)
    if method == "bisect":
        missing = [n for n, v in (("lo", lo), ("hi", hi), ("tol", tol)) if v is None]
        if missing:
            raise ValueError(f"limit search: bisect needs {', '.join(missing)}")
        return bisect_search(trial, lo, hi, tol)
    if method == "stepped":
        start = lo if start is None else start
        stop = hi if stop is None else stop
        increment = tol if increment is None else increment
        missing = [n for n, v in (("start", start), ("increment", increment), ("stop", stop)) if v is None]
        if missing:
            raise ValueError(f"limit search: stepped needs {', '.join(missing)}")
        return stepped_search(trial, start, increment, stop)
    raise ValueError(f"limit search: method = {method!r}: choose one of {SEARCHES}")
