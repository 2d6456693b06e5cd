"""Recorded time series of a run, their metadata, and (when stored) the scene and event summary."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["Result"]


class Result:
    """Named time series sampled at output times, with the run's metadata.

    A result either holds its samples in memory (a run without an output
    folder) or reads them from a results folder's ``timeseries.parquet`` on
    first use (a streamed run, :func:`trackdyn.load`): ``res[name]`` then
    reads one column, ``values`` and ``frame()`` read them all.

    Series recorded with a coarser interval than the run's output step
    (per-pattern decimation) hold NaN between their samples; :meth:`series`
    returns only the samples.

    Attributes
    ----------
    t : ndarray (n,)
        Sample times, s.
    columns : list of str
        Dotted series names (``chassis.pos.z``, ``pin.force.x``...).
    values : ndarray (n, n_columns)
        The samples.
    metadata : dict
        Solver settings, counters, wall time, status, warnings.
    summary : dict or None
        An event's figures (``summary.json``).
    scene : dict or None
        Visual shapes per body and the terrain (``scene.json``, :mod:`trackdyn.io.scene`).
    path : Path or None
        The results folder this result was written to or read from.
    """

    def __init__(self, t, columns, values=None, metadata=None, summary=None, scene=None, path=None):
        self.t = np.asarray(t, dtype=float).reshape(-1)
        self.columns = list(columns)
        self.metadata = dict(metadata or {})
        self.summary = summary
        self.scene = scene
        self.path = None if path is None else Path(path)
        self._index = {c: k for k, c in enumerate(self.columns)}
        self._cache: dict[str, np.ndarray] = {}
        self._file = None
        if values is None:
            if self.path is None:
                raise ValueError("Result: give the values or the results folder to read them from")
            self._values = None
        else:
            self._values = np.asarray(values, dtype=float).reshape(len(self.t), len(self.columns))

    # ------------------------------------------------------------------ data
    @property
    def values(self) -> np.ndarray:
        if self._values is None:
            self.prefetch(self.columns)
            cols = [self._cache[c] for c in self.columns]
            self._values = np.column_stack(cols) if cols else np.zeros((len(self.t), 0))
            self._cache.clear()
        return self._values

    @values.setter
    def values(self, v):
        self._values = np.asarray(v, dtype=float).reshape(len(self.t), len(self.columns))

    def _column(self, name) -> np.ndarray:
        col = self._cache.get(name)
        if col is None:
            self.prefetch([name])
            col = self._cache[name]
        return col

    def prefetch(self, names) -> None:
        """Read several series from disk in one pass (a no-op for a result held in memory)."""
        if self._values is not None:
            return
        want = [n for n in dict.fromkeys(names) if n in self._index and n not in self._cache]
        if not want:
            return
        import pyarrow.parquet as pq

        if getattr(self, "_file", None) is None:
            self._file = pq.ParquetFile(self.path / "timeseries.parquet")
        tab = self._file.read(columns=want)
        for k, n in enumerate(want):
            self._cache[n] = tab.column(k).to_numpy().astype(float, copy=False)

    def __contains__(self, name) -> bool:
        return name == "t" or name in self._index

    def __getitem__(self, name) -> np.ndarray:
        if name == "t":
            return self.t
        k = self._index.get(name)
        if k is None:
            raise KeyError(f"no series {name!r} in this result") from None
        if self._values is not None:
            return self._values[:, k]
        return self._column(name)

    def series(self, name):
        """``(t, y)`` of one series at the times it was sampled (decimated series skip NaN rows)."""
        y = self[name]
        if name == "t":
            return self.t, y
        ok = ~np.isnan(y)
        if ok.all():
            return self.t, y
        return self.t[ok], y[ok]

    def match(self, patterns) -> list[str]:
        """Series names matching glob patterns (``*``, ``?``; brackets literal), in recorded order."""
        from ..io.results import match_series

        return match_series(self.columns, patterns)

    @property
    def status(self) -> str:
        return self.metadata.get("status", "complete")

    def frame(self):
        """A pandas DataFrame with column ``t`` and one column per series."""
        import pandas as pd

        df = pd.DataFrame(self.values, columns=self.columns)
        df.insert(0, "t", self.t)
        return df

    def save(self, directory):
        """Write ``timeseries.parquet`` and ``metadata.json`` (+ ``scene.json``, ``summary.json``) atomically."""
        from ..io.results import save_result

        return save_result(self, directory)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path is not None else ""
        return f"Result({len(self.t)} samples x {len(self.columns)} series, status={self.status!r}{where})"
