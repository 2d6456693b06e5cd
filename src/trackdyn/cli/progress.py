"""Progress bars for the command line (Rich): simulated time, wall time and ETA; points of a sweep.

A bar is drawn only on a terminal: when stdout is not a TTY (a pipe, a file,
CI) or the command prints ``--json``, nothing is drawn and the callback costs
one comparison per step. Bars go to stderr so stdout keeps only the command's
own output.

Example
-------
>>> from trackdyn.cli.progress import RunProgress            # doctest: +SKIP
>>> with RunProgress(t_end=5.0, label="step 0.6 m") as bar:
...     res = sim.run(5.0, callback=bar)
"""

from __future__ import annotations

import sys
import time

__all__ = ["progress_enabled", "RunProgress", "PointsProgress"]


def progress_enabled(json: bool = False, stream=None) -> bool:
    """True when a progress bar should be drawn: not ``--json`` and stdout (and the bar's stream) a TTY."""
    if json:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(sys.stdout.isatty() and stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Bar:
    def __init__(self, label, total, enabled, stream, fields):
        self.enabled = progress_enabled(stream=stream) if enabled is None else bool(enabled)
        self.label = label
        self.total = total
        self._progress = None
        self._task = None
        self._stream = sys.stderr if stream is None else stream
        self._fields = fields

    def _columns(self):
        raise NotImplementedError

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import Progress

            console = Console(file=self._stream, force_terminal=True if self.enabled else None)
            self._progress = Progress(*self._columns(), console=console, transient=False,
                                      refresh_per_second=8)
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=self.total, **self._fields)
        return self

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        return False


class RunProgress(_Bar):
    """Progress of one run; an instance is a ``Simulation.run(callback=...)`` callback.

    Shows ``label``, a bar, simulated time ``t / t_end`` s, wall time and the
    estimated time left. Updates at most every ``min_interval`` wall seconds.

    Parameters
    ----------
    t_end : float
        Simulated end time, s.
    label : str
    t_start : float
        Simulated start time, s.
    enabled : bool, optional
        Force on or off (default: :func:`progress_enabled`).
    stream : file, optional
        Where the bar goes (default stderr).
    """

    def __init__(self, t_end: float, label: str = "run", t_start: float = 0.0, enabled: bool | None = None,
                 stream=None, min_interval: float = 0.1):
        span = float(t_end) - float(t_start)
        super().__init__(label, max(span, 1e-12), enabled, stream, {"sim": f"{t_start:.3f}/{t_end:.3f} s"})
        self.t_start = float(t_start)
        self.t_end = float(t_end)
        self.min_interval = float(min_interval)
        self._next = 0.0

    def _columns(self):
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        return (TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("sim {task.fields[sim]}"),
                TextColumn("wall"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())

    def update(self, t: float) -> None:
        """Show simulated time ``t`` (s)."""
        if self._progress is None:
            return
        self._progress.update(self._task, completed=min(t - self.t_start, self.total),
                              sim=f"{t:.3f}/{self.t_end:.3f} s")

    def __call__(self, sim) -> bool:
        if self._progress is None:
            return False
        now = time.perf_counter()
        if now >= self._next:
            self._next = now + self.min_interval
            self.update(sim.state.t)
        return False

    def __exit__(self, *exc):
        return super().__exit__(*exc)


class PointsProgress(_Bar):
    """Progress of a study: points (runs, sweep cells) done out of ``total``, wall time, ETA."""

    def __init__(self, total: int, label: str = "points", enabled: bool | None = None, stream=None):
        super().__init__(label, int(total), enabled, stream, {})
        self.done = 0

    def _columns(self):
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        return (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("wall"),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more points done."""
        self.done += n
        if self._progress is not None:
            self._progress.update(self._task, completed=self.done)
