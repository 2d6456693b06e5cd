"""Recorded time series of a run and their metadata."""

from __future__ import annotations

import numpy as np

__all__ = ["Result"]


class Result:
    """Named time series sampled at output times, with the run's metadata.

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
    """

    def __init__(self, t, columns, values, metadata=None):
        self.t = np.asarray(t, dtype=float)
        self.columns = list(columns)
        self.values = np.asarray(values, dtype=float).reshape(len(self.t), len(self.columns))
        self.metadata = dict(metadata or {})
        self._index = {c: k for k, c in enumerate(self.columns)}

    def __contains__(self, name) -> bool:
        return name == "t" or name in self._index

    def __getitem__(self, name) -> np.ndarray:
        if name == "t":
            return self.t
        try:
            return self.values[:, self._index[name]]
        except KeyError:
            raise KeyError(f"no series {name!r} in this result") from None

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
        """Write ``timeseries.parquet`` and ``metadata.json`` atomically into ``directory``."""
        from ..io.results import save_result

        return save_result(self, directory)

    def __repr__(self) -> str:
        return f"Result({len(self.t)} samples x {len(self.columns)} series, status={self.status!r})"
