"""Results on disk: ``timeseries.parquet/`` (a dataset of parts), ``metadata.json``, ``scene.json``, ``summary.json``.

Layout of a results folder::

    timeseries.parquet/  a Parquet dataset folder, one row per recorded sample: column "t" (s) and dotted
      part-00000.parquet series names, split into part files of a bounded number of samples each
      part-00001.parquet (read as one table by pandas.read_parquet, pyarrow.dataset and load)
      ...
    metadata.json        status, settings, counters, wall time and its split, warnings; written LAST
    scene.json           visual shapes per body and the terrain (when the model has any)
    summary.json         an event's figures (events only)
    INCOMPLETE           present while a run writes the folder, or after it crashed

Why parts: pyarrow keeps the metadata of every row group of an open Parquet
file until it closes (≈ 0.9 kB per column chunk: 4 MiB per row group of the
M113's 4900 series), so one file written for the whole run grows the
writer's memory with the run's length. A part is closed once it holds
``part_rows`` samples, and its metadata goes with it.

Every file is written under a temporary name in the same folder and renamed
into place (``os.replace`` is atomic on POSIX); a part is written as a hidden
``.part-NNNNN.parquet.tmp`` (which dataset readers skip) and renamed when
closed, so no reader ever sees a half-written part. A streamed run
(:class:`ResultWriter`) first removes the old ``metadata.json`` and
time series and writes an ``INCOMPLETE`` marker, adds parts while it runs,
and on success writes the other files, removes the marker and writes
``metadata.json`` last. A run that raises closes its open part as a last,
shorter part: the folder keeps every sample recorded so far, readable, and
stays marked incomplete. So: **a folder is complete exactly when it has
metadata.json**; :func:`load` refuses any other folder and says why.

Results written before the dataset layout (``timeseries.parquet`` one file)
load as before.

:class:`Result` (the recorded time series of a run, in memory or read lazily
from a results folder) is defined here, below the simulation that makes it,
so that reading results needs nothing from :mod:`trackdyn.sim`;
``trackdyn.sim.Result`` and ``trackdyn.Result`` are the same class.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import numpy as np

from ._glob import match_series
from .scene import read_scene

__all__ = ["Result", "save_result", "load", "write_json_atomic", "write_summary", "ResultWriter",
           "match_series", "is_complete", "part_files", "default_part_rows", "INCOMPLETE_MARKER", "TIMESERIES"]

INCOMPLETE_MARKER = "INCOMPLETE"
TIMESERIES = "timeseries.parquet"
_PART = "part-{:05d}.parquet"
_PART_RE = re.compile(r"part-(\d+)\.parquet")
_OLD_PARTIAL = ".timeseries.parquet.partial"  # an aborted run's samples before the dataset layout
# default bound of a part: 2**23 values (64 MiB), e.g. 1716 samples of the M113's 4888 series (one full
# recorder chunk), 16 912 of the massless M113's 495
_PART_VALUES = 1 << 23
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


def _mark_incomplete(d: Path, reason: str) -> None:
    text = (f"{reason}\nwritten {time.strftime('%Y-%m-%dT%H:%M:%S')} by pid {os.getpid()}\n"
            "This folder is not a complete result: metadata.json is written last, when a run finishes.\n")
    tmp = d / f".{INCOMPLETE_MARKER}.tmp-{os.getpid()}"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, d / INCOMPLETE_MARKER)


def part_files(directory) -> list[Path]:
    """The Parquet files of a results folder's time series, in sample order.

    ``[folder/timeseries.parquet]`` for a result written before the dataset
    layout; otherwise the parts of the ``timeseries.parquet/`` folder (hidden
    and temporary files skipped), ordered by their number. ``[]`` when there
    is no time series.
    """
    ts = Path(directory) / TIMESERIES
    if ts.is_file():
        return [ts]
    if not ts.is_dir():
        return []
    parts = []
    for p in ts.iterdir():
        if p.name.startswith((".", "_")) or not p.name.endswith(".parquet") or not p.is_file():
            continue
        m = _PART_RE.fullmatch(p.name)
        parts.append(((0, int(m.group(1)), "") if m else (1, 0, p.name), p))
    return [p for _, p in sorted(parts)]


def _remove_timeseries(d: Path) -> None:
    """Remove the time series of an old result in ``d``: the single file, or the dataset folder's parts."""
    ts = d / TIMESERIES
    if ts.is_dir():
        for p in ts.iterdir():
            if p.is_file() and (p.name.endswith(".parquet") or p.name.endswith(".parquet.tmp")):
                p.unlink()
        try:
            ts.rmdir()
        except OSError as err:
            raise OSError(f"{ts}: holds files other than Parquet parts; move them before writing a result "
                          f"into {d}") from err
    elif ts.exists():
        ts.unlink()
    old = d / _OLD_PARTIAL
    if old.exists():
        old.unlink()


def _begin(d: Path, reason: str, keep_samples: bool = False) -> None:
    """Make ``d`` an incomplete folder: old metadata, scene and summary go (and the old samples unless
    ``keep_samples``), the marker comes."""
    d.mkdir(parents=True, exist_ok=True)
    for name in ("metadata.json", "summary.json", "scene.json"):
        p = d / name
        if p.exists():
            p.unlink()
    _mark_incomplete(d, reason)
    if not keep_samples:
        _remove_timeseries(d)


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


def _finish_metadata(metadata, n_samples, columns, files, n_parts=None):
    meta = dict(metadata)
    meta.setdefault("status", "complete")
    meta["n_samples"] = int(n_samples)
    meta["n_series"] = int(len(columns))
    if n_parts is not None:
        meta["timeseries"] = {"layout": "dataset", "parts": int(n_parts)}
    meta["files"] = files
    return meta


def default_part_rows(n_columns: int) -> int:
    """Samples per part by default: about 2**23 values (64 MiB of float64), at least 64 samples."""
    return int(max(64, _PART_VALUES // max(int(n_columns) + 1, 1)))


class ResultWriter:
    """Streams samples into the ``timeseries.parquet/`` dataset folder, part by part, and finalises atomically.

    Samples go into the open part, one row group per :meth:`write` (split at
    a part's end); a part is closed and renamed from its hidden temporary name
    once it holds ``part_rows`` samples. The writer keeps no per-part state
    after a part is closed (counters only), so its memory is that of one part
    whatever the run's length. Until :meth:`close` the folder holds an
    ``INCOMPLETE`` marker and no ``metadata.json``.

    Parameters
    ----------
    directory : path
        The results folder (created when missing; an old result in it is
        removed at once: its metadata and samples).
    columns : list of str
        Series names (without ``t``).
    part_rows : int, optional
        Samples per part (default :func:`default_part_rows`: about 64 MiB of
        samples). A part's row groups are the chunks written into it.
    reason : str
        The first line of the ``INCOMPLETE`` marker while the folder is written.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> d = tempfile.mkdtemp()
    >>> w = ResultWriter(d, ["x"], part_rows=2)
    >>> w.write(np.arange(5.0), np.arange(5.0)[:, None])
    >>> _ = w.close({"status": "complete"})
    >>> [p.name for p in part_files(d)]
    ['part-00000.parquet', 'part-00001.parquet', 'part-00002.parquet']
    """

    def __init__(self, directory, columns, part_rows: int | None = None, reason: str = "a run is writing this folder"):
        import pyarrow as pa

        self.directory = Path(directory)
        self.columns = list(columns)
        if part_rows is None:
            part_rows = default_part_rows(len(self.columns))
        if int(part_rows) != part_rows or part_rows < 1:
            raise ValueError(f"ResultWriter: part_rows must be a positive integer, got {part_rows!r}")
        self.part_rows = int(part_rows)
        _begin(self.directory, reason)
        self._schema = pa.schema([pa.field("t", pa.float64())] + [pa.field(c, pa.float64()) for c in self.columns])
        self.dataset = self.directory / TIMESERIES
        self.dataset.mkdir()
        self._writer = None  # the open part's pyarrow.parquet.ParquetWriter
        self._tmp: Path | None = None
        self._part_rows_written = 0
        self.n_parts = 0  # parts closed and renamed into place
        self.n_rows = 0
        self.closed = False

    def _open_part(self) -> None:
        import pyarrow.parquet as pq

        self._tmp = self.dataset / f".{_PART.format(self.n_parts)}.tmp"
        self._writer = pq.ParquetWriter(self._tmp, self._schema, **_PARQUET_OPTIONS)
        self._part_rows_written = 0

    def _close_part(self) -> None:
        """Close the open part and rename it into place (``os.replace``: readers see all of it or nothing)."""
        if self._writer is None:
            return
        w, self._writer = self._writer, None
        w.close()
        os.replace(self._tmp, self.dataset / _PART.format(self.n_parts))
        self._tmp = None
        self.n_parts += 1

    def write(self, t, values) -> None:
        """Append samples: ``t`` (k,) s and ``values`` (k, n_columns); a part holds at most ``part_rows``."""
        import pyarrow as pa

        if self.closed:
            raise RuntimeError(f"ResultWriter({self.directory}): already closed")
        t = np.asarray(t, dtype=float)
        k = len(t)
        if k == 0:
            return
        # Arrow wraps each contiguous column without copying it (a recorder's column-major chunk: no copy at
        # all; a row-major one: one contiguous copy)
        v = np.asarray(values, dtype=float).reshape(k, len(self.columns)).T
        if v.strides[1] != v.itemsize:
            v = np.ascontiguousarray(v)
        a = 0
        while a < k:
            if self._writer is None:
                self._open_part()
            b = min(k, a + self.part_rows - self._part_rows_written)
            arrays = [pa.array(t[a:b])] + [pa.array(v[j, a:b]) for j in range(v.shape[0])]
            self._writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self._schema))
            self._part_rows_written += b - a
            self.n_rows += b - a
            if self._part_rows_written >= self.part_rows:
                self._close_part()
            a = b

    def _files(self, scene, summary) -> list[str]:
        return [TIMESERIES, "metadata.json"] + (["scene.json"] if scene is not None else []) \
            + (["summary.json"] if summary is not None else [])

    def close(self, metadata: dict, scene=None, summary=None) -> Path:
        """Close the last part and write the other files, ``metadata.json`` last."""
        if self.closed:
            raise RuntimeError(f"ResultWriter({self.directory}): already closed")
        if self.n_parts == 0 and self._writer is None:
            self._open_part()  # no sample at all: one empty part still names the columns
        self._close_part()
        self.closed = True
        d = self.directory
        meta = _finish_metadata(metadata, self.n_rows, self.columns, self._files(scene, summary), self.n_parts)
        _finish(d, meta, scene, summary)
        self.metadata = meta
        return d

    def abort(self, reason: str) -> None:
        """Close the open part as a last, shorter one (readable) and keep the folder marked incomplete."""
        if self.closed:
            return
        try:
            self._close_part()
        finally:
            self.closed = True
            _mark_incomplete(self.directory, f"the run stopped before it finished: {reason}\n"
                                             f"{self.n_rows} samples are in {TIMESERIES}/ ({self.n_parts} parts)")


def save_result(result, directory, part_rows: int | None = None) -> Path:
    """Write a :class:`Result` into ``directory`` atomically (see the module docstring).

    ``part_rows``: samples per part (default :func:`default_part_rows`).
    """
    d = Path(directory)
    same = (result.path is not None and d.exists() and d.resolve() == result.path.resolve()
            and (d / TIMESERIES).exists())
    scene = getattr(result, "scene", None)
    summary = getattr(result, "summary", None)
    if same:  # the samples are already there: refresh metadata, scene and summary only
        _begin(d, "a result's metadata is being rewritten", keep_samples=True)
        files = [TIMESERIES, "metadata.json"] + (["scene.json"] if scene is not None else []) \
            + (["summary.json"] if summary is not None else [])
        meta = dict(result.metadata)
        meta["files"] = files
        meta["n_samples"], meta["n_series"] = int(len(result.t)), int(len(result.columns))
        _finish(d, meta, scene, summary)
    else:
        values = result.values
        w = ResultWriter(d, result.columns, part_rows=part_rows, reason="a result is being saved into this folder")
        w.write(result.t, values)
        w.close(result.metadata, scene=scene, summary=summary)
        meta = w.metadata
    result.metadata = meta
    result.path = d
    return d


def is_complete(directory) -> bool:
    """True when ``directory`` holds a finished result (its ``metadata.json``)."""
    return (Path(directory) / "metadata.json").is_file()


def _results_folder(path) -> Path:
    """The results folder of ``path``: the folder itself, its ``timeseries.parquet`` (file or dataset folder),
    a part of it, or its ``metadata.json``."""
    d = Path(path)
    if d.is_file() and d.parent.name == TIMESERIES and d.name != TIMESERIES:
        return d.parent.parent  # a part
    if d.name == TIMESERIES or d.is_file():
        return d.parent
    return d


def load(path, series=None):
    """Open a results folder as a :class:`Result` (lazily: samples are read when asked for).

    Parameters
    ----------
    path : path
        The folder, its ``timeseries.parquet`` (a dataset folder of parts, or
        the single file of results written before it), a part, or its
        ``metadata.json``.
    series : str or list of str, optional
        Glob patterns of the series to keep (default: all; the pattern
        language of :func:`trackdyn.io.match_series`: ``left.roadwheel[*].pos.z``).
        Only the sample times are read now; ``res[name]`` reads one column,
        ``res.frame(patterns)`` the matching ones, ``res.values`` all of them.

    Raises
    ------
    FileNotFoundError
        When the folder is missing or incomplete (no ``metadata.json``; the
        ``INCOMPLETE`` marker's reason is quoted).

    Examples
    --------
    >>> res = td.load("runs/step060")                          # doctest: +SKIP
    >>> res.frame("left.roadwheel[*].pos.z")                   # doctest: +SKIP
    """
    import pyarrow.parquet as pq

    d = _results_folder(path)
    meta_path = d / "metadata.json"
    if not meta_path.exists():
        if not d.exists():
            raise FileNotFoundError(f"{d}: no such results folder")
        marker = d / INCOMPLETE_MARKER
        why = marker.read_text(encoding="utf-8").splitlines()[0] if marker.exists() else "no metadata.json"
        raise FileNotFoundError(f"{d}: the results folder is incomplete ({why})")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    parts = part_files(d)
    if not parts:
        raise FileNotFoundError(f"{d}: no {TIMESERIES} in this results folder")
    names = [c for c in pq.read_schema(parts[0]).names if c != "t"]
    if series is not None:
        keep = match_series(names, series)
        if not keep:
            raise ValueError(f"load: no series in {d} matches {series!r}")
        names = keep
    ts = [pq.read_table(p, columns=["t"]).column(0).to_numpy() for p in parts]
    t = np.concatenate(ts) if ts else np.zeros(0)
    summary_path = d / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else None
    return Result(t, names, None, meta, summary=summary, scene=read_scene(d), path=d)


class Result:
    """Named time series sampled at output times, with the run's metadata.

    A result either holds its samples in memory (a run without an output
    folder) or reads them from a results folder's ``timeseries.parquet`` on
    first use (a streamed run, :func:`trackdyn.load`): ``res[name]`` then
    reads one column from every part, ``frame(patterns)`` the matching
    columns, ``values`` and ``frame()`` all of them. Nothing of the files is
    kept open between reads (a part's footer is parsed, used and dropped), so
    a lazy result's memory is the columns it has read.

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
        """Read several series from disk in one pass over the parts (a no-op for a result held in memory)."""
        if self._values is not None:
            return
        want = [n for n in dict.fromkeys(names) if n in self._index and n not in self._cache]
        if not want:
            return
        import pyarrow.parquet as pq

        cols = {n: np.empty(len(self.t)) for n in want}
        row = 0
        for part in part_files(self.path):
            with pq.ParquetFile(part) as pf:
                tab = pf.read(columns=want, use_threads=False)
            k = tab.num_rows
            if row + k > len(self.t):
                raise ValueError(f"{self.path}: the time series has more samples than its {len(self.t)} times")
            for j, n in enumerate(want):
                cols[n][row: row + k] = tab.column(j).to_numpy()
            row += k
        if row != len(self.t):
            raise ValueError(f"{self.path}: the time series has {row} samples, its times {len(self.t)}")
        self._cache.update(cols)

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
        """Series names matching glob patterns, in recorded order (:func:`trackdyn.io.match_series`:
        ``left.roadwheel[*].pos.z``, ``left.shoe[0-9].tension``, ``chassis.pos.[xz]``)."""
        return match_series(self.columns, patterns)

    @property
    def status(self) -> str:
        return self.metadata.get("status", "complete")

    def frame(self, series=None):
        """A pandas DataFrame with column ``t`` and one column per series.

        ``series``: glob patterns (:meth:`match`) of the columns to keep,
        e.g. ``res.frame("left.roadwheel[*].pos.z")``; a lazy result reads
        only those from disk. Default: every series. ``ValueError`` when no
        series matches.
        """
        import pandas as pd

        if series is None:
            df = pd.DataFrame(self.values, columns=self.columns)
        else:
            names = self.match(series)
            if not names:
                raise ValueError(f"frame: no series matches {series!r}")
            self.prefetch(names)
            df = pd.DataFrame({n: self[n] for n in names}, columns=names)
        df.insert(0, "t", self.t)
        return df

    def save(self, directory, part_rows: int | None = None):
        """Write ``timeseries.parquet/`` and ``metadata.json`` (+ ``scene.json``, ``summary.json``) atomically."""
        return save_result(self, directory, part_rows=part_rows)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path is not None else ""
        return f"Result({len(self.t)} samples x {len(self.columns)} series, status={self.status!r}{where})"
