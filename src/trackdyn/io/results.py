"""Results on disk: ``timeseries.parquet`` + ``metadata.json`` (+ ``scene.json``, ``summary.json``).

Layout of a results folder::

    timeseries.parquet   one row per recorded sample: column "t" (s) and dotted series names
    metadata.json        status, settings, counters, wall time and its split, warnings; written LAST
    scene.json           visual shapes per body and the terrain (when the model has any)
    summary.json         an event's figures (events only)
    INCOMPLETE           present while a run writes the folder, or after it crashed

Every file is written under a temporary name in the same folder and renamed
into place (``os.replace`` is atomic on POSIX). A streamed run
(:class:`ResultWriter`) first removes the old ``metadata.json`` and writes an
``INCOMPLETE`` marker, appends row groups to a hidden temporary Parquet file
while it runs, and on success renames it, writes the other files, removes the
marker and writes ``metadata.json`` last. So: **a folder is complete exactly
when it has metadata.json**; :func:`load` refuses any other folder and says
why.

:class:`Result` (the recorded time series of a run, in memory or read lazily
from a results folder) is defined here, below the simulation that makes it,
so that reading results needs nothing from :mod:`trackdyn.sim`;
``trackdyn.sim.Result`` and ``trackdyn.Result`` are the same class.
"""

from __future__ import annotations

import fnmatch
import json
import os
import time
from pathlib import Path

import numpy as np

from .scene import read_scene

__all__ = ["Result", "save_result", "load", "write_json_atomic", "write_summary", "ResultWriter",
           "match_series", "is_complete", "INCOMPLETE_MARKER"]

INCOMPLETE_MARKER = "INCOMPLETE"
_TMP_PARQUET = ".timeseries.parquet.partial"
# zstd level 1; no dictionary pages: float series rarely repeat, and on 1701 samples of the cruising M113
# (4888 series, row groups of 429) the plain encoding wrote 26 % faster (0.87 -> 0.65 ms per sample) into a
# 13 % smaller file (bench/README.md, m113-memory)
_PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 1, "use_dictionary": False}


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    if hasattr(o, "model_dump"):  # pydantic specs
        return o.model_dump(mode="json")
    if hasattr(o, "to_dict"):
        return o.to_dict()
    return repr(o)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_json_atomic(path, obj) -> Path:
    """Write ``obj`` as JSON to ``path`` through a temporary file and a rename."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2, default=_json_default, allow_nan=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def write_summary(directory, summary: dict) -> Path:
    """Write an event's ``summary.json`` into a results folder (atomically)."""
    if not isinstance(summary, dict):
        raise ValueError(f"write_summary: summary must be a dict, got {type(summary).__name__}")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    return write_json_atomic(d / "summary.json", summary)


def match_series(columns, patterns) -> list[str]:
    """Names in ``columns`` matching any glob pattern; an exact name always matches itself.

    ``*`` and ``?`` are wildcards; brackets are literal, as in
    ``left.roadwheel[0].pos.z``. The result keeps the order of ``columns``.
    """
    pats = [patterns] if isinstance(patterns, str) else list(patterns)
    exact = set(pats)
    globs = [p.replace("[", "[[]") for p in pats]
    return [c for c in columns if c in exact or any(fnmatch.fnmatchcase(c, g) for g in globs)]


def _mark_incomplete(d: Path, reason: str) -> None:
    text = (f"{reason}\nwritten {time.strftime('%Y-%m-%dT%H:%M:%S')} by pid {os.getpid()}\n"
            "This folder is not a complete result: metadata.json is written last, when a run finishes.\n")
    tmp = d / f".{INCOMPLETE_MARKER}.tmp-{os.getpid()}"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, d / INCOMPLETE_MARKER)


def _begin(d: Path, reason: str) -> None:
    """Make ``d`` an incomplete folder: old metadata, scene and summary go, the marker comes."""
    d.mkdir(parents=True, exist_ok=True)
    for name in ("metadata.json", "summary.json", "scene.json"):
        p = d / name
        if p.exists():
            p.unlink()
    _mark_incomplete(d, reason)


def _finish(d: Path, metadata: dict, scene=None, summary=None) -> None:
    if scene is not None:
        write_json_atomic(d / "scene.json", scene)
    if summary is not None:
        write_json_atomic(d / "summary.json", summary)
    marker = d / INCOMPLETE_MARKER
    if marker.exists():
        marker.unlink()
    write_json_atomic(d / "metadata.json", metadata)
    _fsync_dir(d)


def _finish_metadata(metadata, n_samples, columns, files):
    meta = dict(metadata)
    meta.setdefault("status", "complete")
    meta["n_samples"] = int(n_samples)
    meta["n_series"] = int(len(columns))
    meta["files"] = files
    return meta


class ResultWriter:
    """Streams samples into ``timeseries.parquet`` in row groups and finalises a folder atomically.

    Memory stays at one chunk whatever the run's length. Until :meth:`close`
    the folder holds an ``INCOMPLETE`` marker and no ``metadata.json``.

    Parameters
    ----------
    directory : path
        The results folder (created when missing; an old result in it is
        invalidated at once and replaced on :meth:`close`).
    columns : list of str
        Series names (without ``t``).
    """

    def __init__(self, directory, columns):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.directory = Path(directory)
        self.columns = list(columns)
        _begin(self.directory, "a run is writing this folder")
        self._schema = pa.schema([pa.field("t", pa.float64())] + [pa.field(c, pa.float64()) for c in self.columns])
        self._tmp = self.directory / _TMP_PARQUET
        self._writer = pq.ParquetWriter(self._tmp, self._schema, **_PARQUET_OPTIONS)
        self.n_rows = 0
        self.closed = False

    def write(self, t, values) -> None:
        """Append samples: ``t`` (k,) s and ``values`` (k, n_columns) as one row group."""
        import pyarrow as pa

        if self.closed:
            raise RuntimeError(f"ResultWriter({self.directory}): already closed")
        t = np.asarray(t, dtype=float)
        if len(t) == 0:
            return
        # Arrow wraps each contiguous column without copying it (a recorder's column-major chunk: no copy at
        # all; a row-major one: one contiguous copy)
        v = np.asarray(values, dtype=float).T
        if v.strides[1] != v.itemsize:
            v = np.ascontiguousarray(v)
        arrays = [pa.array(t)] + [pa.array(v[k]) for k in range(v.shape[0])]
        self._writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self._schema))
        self.n_rows += len(t)

    def close(self, metadata: dict, scene=None, summary=None) -> Path:
        """Finish the Parquet file, rename it into place and write the other files, ``metadata.json`` last."""
        if self.closed:
            raise RuntimeError(f"ResultWriter({self.directory}): already closed")
        self._writer.close()
        self.closed = True
        d = self.directory
        os.replace(self._tmp, d / "timeseries.parquet")
        files = ["timeseries.parquet", "metadata.json"] + (["scene.json"] if scene is not None else []) \
            + (["summary.json"] if summary is not None else [])
        meta = _finish_metadata(metadata, self.n_rows, self.columns, files)
        _finish(d, meta, scene, summary)
        self.metadata = meta
        return d

    def abort(self, reason: str) -> None:
        """Close the partial file (left as ``.timeseries.parquet.partial``) and keep the folder incomplete."""
        if self.closed:
            return
        try:
            self._writer.close()
        finally:
            self.closed = True
            _mark_incomplete(self.directory, f"the run stopped before it finished: {reason}\n"
                                             f"{self.n_rows} samples are in {_TMP_PARQUET}")


def save_result(result, directory) -> Path:
    """Write a :class:`Result` into ``directory`` atomically (see the module docstring)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = Path(directory)
    same = (result.path is not None and d.exists() and d.resolve() == result.path.resolve()
            and (d / "timeseries.parquet").exists())
    if same:  # the samples are already there: refresh metadata, scene and summary only
        _begin(d, "a result's metadata is being rewritten")
    else:
        values = result.values
        _begin(d, "a result is being saved into this folder")
        cols = np.ascontiguousarray(values.T)
        arrays = [pa.array(result.t)] + [pa.array(cols[k]) for k in range(len(result.columns))]
        table = pa.Table.from_arrays(arrays, names=["t"] + list(result.columns))
        tmp = d / f".timeseries.parquet.tmp-{os.getpid()}"
        pq.write_table(table, tmp, **_PARQUET_OPTIONS)
        os.replace(tmp, d / "timeseries.parquet")
    scene = getattr(result, "scene", None)
    summary = getattr(result, "summary", None)
    files = ["timeseries.parquet", "metadata.json"] + (["scene.json"] if scene is not None else []) \
        + (["summary.json"] if summary is not None else [])
    meta = _finish_metadata(result.metadata, len(result.t), result.columns, files)
    _finish(d, meta, scene, summary)
    result.metadata = meta
    result.path = d
    return d


def is_complete(directory) -> bool:
    """True when ``directory`` holds a finished result (its ``metadata.json``)."""
    return (Path(directory) / "metadata.json").is_file()


def load(path, series=None):
    """Open a results folder as a :class:`Result`.

    Parameters
    ----------
    path : path
        The folder, or its ``timeseries.parquet`` / ``metadata.json``.
    series : str or list of str, optional
        Glob patterns of the series to keep (default: all). Samples are read
        lazily: ``res[name]`` reads one column, ``res.values`` all of them.

    Raises
    ------
    FileNotFoundError
        When the folder is missing or incomplete (no ``metadata.json``; the
        ``INCOMPLETE`` marker's reason is quoted).
    """
    import pyarrow.parquet as pq

    d = Path(path)
    if d.is_file():
        d = d.parent
    meta_path = d / "metadata.json"
    if not meta_path.exists():
        if not d.exists():
            raise FileNotFoundError(f"{d}: no such results folder")
        marker = d / INCOMPLETE_MARKER
        why = marker.read_text(encoding="utf-8").splitlines()[0] if marker.exists() else "no metadata.json"
        raise FileNotFoundError(f"{d}: the results folder is incomplete ({why})")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    pf = pq.ParquetFile(d / "timeseries.parquet")
    names = [c for c in pf.schema_arrow.names if c != "t"]
    if series is not None:
        keep = match_series(names, series)
        if not keep:
            raise ValueError(f"load: no series in {d} matches {series!r}")
        names = keep
    t = pq.read_table(d / "timeseries.parquet", columns=["t"]).column(0).to_numpy()
    summary_path = d / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else None
    return Result(t, names, None, meta, summary=summary, scene=read_scene(d), path=d)


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
        return save_result(self, directory)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path is not None else ""
        return f"Result({len(self.t)} samples x {len(self.columns)} series, status={self.status!r}{where})"
