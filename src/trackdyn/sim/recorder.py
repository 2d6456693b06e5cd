"""Recorder: samples named series of a system and a state at output times.

What is kept is chosen by ``record`` entries (glob patterns over the series
names, :func:`trackdyn.io.match_series`, each with an optional sampling
interval for decimation); samples go into a preallocated chunk buffer, which
either collects chunks in memory (a run without an output folder) or is
written to a results folder's dataset of parts when full
(:meth:`Recorder.open`), so a long run's memory stays at one chunk and one
open part.

A sample is gathered by one compiled call
(:func:`trackdyn.sim._record_kernels.gather_sample`) from a plan built once:
for each kept series, the array it lives in (the state, the joint reactions
or an element's output buffer) and its index. :meth:`Recorder.gather_python`
is the same gather in NumPy, the oracle of the compiled one.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from .._compiled import entry_point
from ..io._glob import compile_glob
from ..io.results import Result, ResultWriter
from ..io.scene import find_terrain, scene_from_model, terrain_to_scene
from ..mbs.model import State
from . import _record_kernels as RK

__all__ = ["Recorder", "parse_record"]

# default chunk: at most 2**23 values (64 MiB) and at most _MAX_CHUNK samples unless they are fewer than
# _SMALL_CHUNK_VALUES values (512 samples, 20 MiB, for the link M113's 4888 series; 2114 samples, 8 MiB, for the
# massless M113's 495: a row group of fewer samples writes slower per sample, 60-86 against 25 µs); the first
# chunk holds _FIRST_CHUNK samples, every next one the full chunk; a streamed part holds _CHUNKS_PER_PART full
# chunks. A run reaches its steady memory once it has written a full chunk (640 samples): its high-water
# mark is the chunk buffer plus what pyarrow keeps after writing a chunk (about the chunk's size again, retained
# by the allocator) plus the open part's row-group metadata (bench/README.md, stop 26: with 1715-sample chunks a
# 10-s run never wrote a full one and peaked 7-14 % under the long runs)
_CHUNK_VALUES = 1 << 23
_MAX_CHUNK = 512
_SMALL_CHUNK_VALUES = 1 << 20
_FIRST_CHUNK = 128
_CHUNKS_PER_PART = 1  # a part per chunk: a 10-s run closes parts as a long one does (stop 26: 4 a part, +5.7 %)
_POSE_PARTS = (("pos", "xyz"), ("quat", ("e0", "e1", "e2", "e3")))


def _flat_source(arr, k):
    """(owner, flat float64 buffer, index) holding ``arr[k]``: the view's C-contiguous base when there is one
    (``owner`` identifies the buffer: a new flat view is made per call)."""
    base = arr
    while isinstance(base.base, np.ndarray):
        base = base.base
    if (arr.dtype == np.float64 and base.dtype == np.float64 and base.flags.c_contiguous and arr.ndim == 1
            and 0 <= k < arr.shape[0]):
        byte = arr.__array_interface__["data"][0] + int(k) * arr.strides[0] - base.__array_interface__["data"][0]
        if byte % 8 == 0 and 0 <= byte < base.nbytes:
            return base, base.reshape(-1), byte // 8
    return arr, arr, k


def _c_float(a) -> bool:
    return a.dtype == np.float64 and a.flags.c_contiguous


def parse_record(record) -> list[tuple[str, float | None]]:
    """Normalise a ``record=`` argument into ``[(pattern, interval_s or None), ...]``.

    Accepted forms: ``None`` (everything at every output sample); a pattern
    string; a list whose items are pattern strings or ``(pattern, interval)``
    pairs; a dict ``{pattern: interval or None}``. ``interval`` (s) keeps the
    matching series only every ``interval`` seconds of simulated time
    (decimation); ``None`` keeps them at every output sample.
    """
    if record is None:
        return [("*", None)]
    if isinstance(record, str):
        items = [record]
    elif isinstance(record, dict):
        items = list(record.items())
    else:
        try:
            items = list(record)
        except TypeError:
            raise ValueError(f"record: expected patterns, got {record!r}") from None
    out = []
    for item in items:
        if isinstance(item, str):
            pat, dt = item, None
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            pat, dt = item
        else:
            raise ValueError(f"record: entry {item!r} is neither a pattern nor a (pattern, interval) pair")
        if not pat:
            raise ValueError("record: empty pattern")
        if dt is not None:
            try:
                dt = float(dt)
            except (TypeError, ValueError):
                raise ValueError(f"record: interval of {pat!r} must be a number of seconds, got {dt!r}") from None
            if not math.isfinite(dt) or dt <= 0:
                raise ValueError(f"record: interval of {pat!r} must be positive and finite, got {dt!r}")
        out.append((pat, dt))
    if not out:
        raise ValueError("record: no pattern given")
    return out


class Recorder:
    """Samples named series of a system and state into a chunk buffer.

    Parameters
    ----------
    system : AbsoluteSystem
    patterns : see :func:`parse_record`
        Which series to keep and how often. Glob patterns (``*``, ``?``);
        brackets are literal, as in ``left.roadwheel[0].pos.z``. A series
        matched by several entries takes the shortest interval.
    chunk_rows : int, optional
        Samples per chunk (per Parquet row group when streaming); default
        at most 64 MB of samples and 512 samples (more when 512 samples are
        under 8 MiB), after a first chunk of 128 samples. Larger
        row groups write faster per sample and keep a part's footer small:
        pyarrow holds ≈ 0.9 kB of metadata per column chunk until a file is
        closed (4 MiB per row group for the M113's 4900 series), which is
        why a results folder's time series is a dataset of parts, each
        closed after :attr:`part_rows` samples.
    scene_poses : bool
        Also keep ``pos.*`` and ``quat.*`` of every body that carries a
        visual shape, at the finest recorded rate, so the results folder can
        be drawn (animation, 3-D viewer).

    Notes
    -----
    Rows are written only at output samples where at least one series is
    due; series not due in such a row hold NaN (see
    :meth:`Result.series <trackdyn.io.results.Result.series>`).
    """

    def __init__(self, system, patterns=None, chunk_rows: int | None = None, scene_poses: bool = True):
        self.system = system
        s = system
        cols = []
        for b, nm in enumerate(s.body_names):
            for part, comps in (("pos", "xyz"), ("quat", ("e0", "e1", "e2", "e3")), ("vel", "xyz"),
                                ("omega", "xyz"), ("acc", "xyz")):
                cols.extend(f"{nm}.{part}.{c}" for c in comps)
        self._n_body_cols = len(cols)
        # a system without multipliers (the massless model's tree) has no joint reactions: no such series at all,
        # rather than NaN-filled ones
        self._joint_names = list(s.joint_names) if getattr(s, "joint_reactions", True) else []
        for nm in self._joint_names:
            cols.extend(f"{nm}.force.{c}" for c in "xyz")
            cols.extend(f"{nm}.torque.{c}" for c in "xyz")
        self._n_joint_cols = len(cols) - self._n_body_cols
        self._elem = []
        for blk in list(s.blocks) + list(s.providers):
            for name, (arr, k) in blk.series().items():
                cols.append(name)
                self._elem.append((arr, k))
        self.all_columns = cols
        n_state_cols = len(cols) - len(self._elem)  # body and joint series; element series after them
        self._elem_gather = self._gather_plan(n_state_cols)
        self.record = parse_record(patterns)

        interval = np.full(len(cols), np.inf)  # inf: not kept; 0: every output sample
        unmatched = []
        for pat, dt in self.record:
            glob = compile_glob(pat)
            hit = np.array([c == pat or glob.fullmatch(c) is not None for c in cols], dtype=bool)
            if not hit.any():
                unmatched.append(pat)
                continue
            interval[hit] = np.minimum(interval[hit], 0.0 if dt is None else dt)
        if not np.isfinite(interval).any():
            raise ValueError(f"record: no series matches {[p for p, _ in self.record]}")
        for pat in unmatched:
            warnings.warn(f"record: pattern {pat!r} matches no series of this model", stacklevel=3)
        model = getattr(s, "model", None)
        if scene_poses and model is not None and model.visuals:
            finest = float(interval[np.isfinite(interval)].min())
            drawn = {model.body_names[i] for i, _ in model.visuals if i >= 0}
            for k, c in enumerate(cols[: self._n_body_cols]):
                name, part = c.rsplit(".", 2)[:2]
                if name in drawn and part in ("pos", "quat"):
                    interval[k] = min(interval[k], finest)
        self.keep = np.nonzero(np.isfinite(interval))[0]
        self.columns = [cols[k] for k in self.keep]
        kept_interval = interval[self.keep]
        self._groups = [(float(dt), np.nonzero(kept_interval == dt)[0]) for dt in np.unique(kept_interval)]
        self._next_due: list[float | None] = [None] * len(self._groups)
        self._origin: list[float] = [0.0] * len(self._groups)
        self._need_joints = bool(np.any((self.keep >= self._n_body_cols)
                                        & (self.keep < self._n_body_cols + self._n_joint_cols)))
        # element outputs are evaluated at a sample only when one of their series is kept (0.6 ms per sample on
        # the M113); body series come from the state itself
        self._need_elements = bool(np.any(self.keep >= n_state_cols))
        self._every = len(self._groups) == 1 and self._groups[0][0] == 0.0  # everything at every sample
        self._no_nan = np.zeros(0, dtype=np.intp)
        self._row = np.zeros(len(cols))
        self._plan = self._compiled_plan(n_state_cols)
        self._empty3 = np.zeros((0, 3))
        self._extent = np.array([np.inf, np.inf, -np.inf, -np.inf])  # x_min, y_min, x_max, y_max of the bodies
        self._lo, self._hi = self._extent[:2], self._extent[2:]
        self.compiled = True
        self._gather = None  # the compiled gather's entry point, typed at the first sample
        self._n = 0
        n = len(self.columns)
        if chunk_rows:
            self.chunk_rows = chunk_rows
        else:
            # the first chunk is small: the first sample writes a column of the column-major buffer, which faults
            # in (and zeroes) all of it — 72 ms for 64 MiB, a lot for a run of a second. The next one is the full
            # chunk, so that a 10-s run at 10 ms holds the same buffer as a 1000-s one and writes full chunks
            # (doubling up to 1715 samples took 1921 samples for the link M113: a 10-s run's peak RSS was 14 %
            # under a 100-s run's, bench/README.md stop 26)
            width = max(n + 1, 1)
            self._chunk_rows = int(np.clip(min(_CHUNK_VALUES // width, max(_MAX_CHUNK, _SMALL_CHUNK_VALUES // width)),
                                           64, 65536))
            self._alloc(min(self._chunk_rows, _FIRST_CHUNK))
        self._chunks: list[tuple[np.ndarray, np.ndarray]] = []
        self._writer = None
        self.part_rows: int | None = None  # samples per part of a results folder (None: a full chunk)
        self._t_streamed: list[np.ndarray] = []  # times of the samples written to the folder
        self._terrain = None
        self._summary = None
        self.extra_metadata: dict = {}
        self.last_t: float | None = None
        self.n_samples = 0

    def _gather_plan(self, off: int):
        """Element outputs grouped by the buffer they live in: (flat buffer, indices, row positions).

        A series is a 1-D array (often a column view of an output buffer) and an index; resolved to the
        view's base buffer, the M113's 1550 element series come from a few dozen buffers and are gathered
        with one fancy index each (a comprehension over the series cost 0.26 ms per recorded sample).
        """
        groups: dict[int, tuple] = {}
        for j, (arr, k) in enumerate(self._elem):
            owner, src, idx = _flat_source(arr, k)
            g = groups.setdefault(id(owner), (src, [], []))
            g[1].append(idx)
            g[2].append(off + j)
        return [(src, np.asarray(ix, dtype=np.intp), np.asarray(dst, dtype=np.intp))
                for src, ix, dst in groups.values()]

    def _compiled_plan(self, n_state_cols: int) -> tuple:
        """Where each kept series lives: the arguments of :func:`~trackdyn.sim._record_kernels.gather_sample`
        after the state and reactions (``elem``, then the body, joint and element index arrays).

        Element series come from the flat C-contiguous float64 buffer behind
        the series' view when there is one (a few dozen buffers hold the
        M113's 1550 element series), else from a staging buffer that
        :meth:`sample` fills from the series' own array first (``_staged``).
        """
        elem: list[np.ndarray] = []
        buffers: dict[int, int] = {}
        staged = []
        e_src, e_idx = [], []
        for arr, k in self._elem:
            owner, src, ix = _flat_source(arr, k)
            if isinstance(src, np.ndarray) and src.ndim == 1 and src.dtype == np.float64 and src.flags.c_contiguous:
                b = buffers.get(id(owner))
                if b is None:
                    b = buffers[id(owner)] = len(elem)
                    elem.append(src)
                e_src.append(b)
                e_idx.append(ix)
            else:
                e_src.append(-1)
                e_idx.append(len(staged))
                staged.append((arr, k))
        self._staged = staged
        self._stage = np.zeros(max(len(staged), 1))
        if staged:
            e_src = [len(elem) if b < 0 else b for b in e_src]
            elem.append(self._stage)
        if not elem:
            elem.append(np.zeros(1))  # the kernel's tuple of buffers is never empty: one type for every call
        body, joint, el = ([], [], []), ([], [], []), ([], [], [])
        for c, col in enumerate(self.keep):
            col = int(col)
            if col < self._n_body_cols:
                dst, src, part = body
                b, r = divmod(col, 16)
            elif col < self._n_body_cols + self._n_joint_cols:
                dst, src, part = joint
                b, r = divmod(col - self._n_body_cols, 6)
            else:
                dst, src, part = el
                j = col - n_state_cols
                b, r = e_src[j], e_idx[j]
            dst.append(c)
            src.append(b)
            part.append(r)
        order = np.argsort(np.asarray(el[1], dtype=np.intp), kind="stable")  # element series by buffer
        el_buf = np.asarray(el[1], dtype=np.intp)[order]
        elem_ptr = np.searchsorted(el_buf, np.arange(len(elem) + 1)).astype(np.intp)
        ints = [np.asarray(x, dtype=np.intp) for x in (*body, *joint)]
        # a tuple of same-typed arrays (Numba: UniTuple) costs less to pass and index than a typed List
        return (tuple(elem), *ints, elem_ptr, np.asarray(el[0], dtype=np.intp)[order],
                np.asarray(el[2], dtype=np.intp)[order])

    @property
    def chunk_rows(self) -> int:
        """Samples per chunk (per Parquet row group when streaming)."""
        return self._chunk_rows

    @chunk_rows.setter
    def chunk_rows(self, n) -> None:
        try:
            k = int(n)
        except (TypeError, ValueError):
            raise ValueError(f"Recorder: chunk_rows must be a positive integer, got {n!r}") from None
        if k < 1 or k != n:
            raise ValueError(f"Recorder: chunk_rows must be a positive integer, got {n!r}")
        if self._n:
            self._flush()
        self._chunk_rows = k
        self._alloc(k)

    def _alloc(self, k: int) -> None:
        """A chunk buffer of ``k`` samples."""
        # column-major: a flushed chunk's series are contiguous rows, handed to Arrow without a copy
        self._buf = np.empty((len(self.columns), k))
        self._tbuf = np.empty(k)
        self._cap = k

    # ------------------------------------------------------------------ sampling
    def _due(self, t: float):
        """Columns not due at ``t`` (an index array; ``None`` when no series is due) and advance the clocks."""
        nan_parts = []
        any_due = False
        for g, (dt, idx) in enumerate(self._groups):
            if dt == 0.0:
                any_due = True
                continue
            nxt = self._next_due[g]
            if nxt is None:
                self._origin[g] = t  # a decimated series' clock starts at its first sample
            elif t < nxt - 1e-6 * dt:
                nan_parts.append(idx)
                continue
            any_due = True
            origin = self._origin[g]
            self._next_due[g] = origin + dt * (math.floor((t - origin) / dt + 1e-6) + 1)
        if not any_due:
            return None
        return np.concatenate(nan_parts).astype(np.intp) if nan_parts else self._no_nan

    def sample(self, state: State):
        """Record the series of ``state`` at ``state.t`` (those due by their interval)."""
        t = float(state.t)
        self.last_t = t
        if self._every:
            nan_cols = self._no_nan
        else:
            nan_cols = self._due(t)
            if nan_cols is None:
                return
        s = self.system
        if self._need_elements:
            s.evaluate_outputs(state)
        elif self._need_joints:
            s.evaluate_outputs(state, elements=False)
        if self._need_joints and self._joint_names:
            F, T = s.reactions(state.lam)
        else:
            F = T = self._empty3
        if self.compiled:
            for j, (arr, k) in enumerate(self._staged):
                self._stage[j] = arr[k]
            q, v, acc = state.q, state.v, state.acc
            if not (_c_float(q) and _c_float(v) and _c_float(acc) and _c_float(F) and _c_float(T)):
                q, v, acc, F, T = (np.ascontiguousarray(a, dtype=np.float64) for a in (q, v, acc, F, T))
            if self._gather is None:
                # typed once (Numba's dispatch would type the 21 arguments at every sample, ≈ 6 µs): every array
                # passed is a C-contiguous float64 array of fixed dimension (checked above) or the recorder's own
                self._gather = entry_point(RK.gather_sample, (q, v, acc, F, T, *self._plan, nan_cols, self._buf,
                                                              self._n, t, self._tbuf, self._extent))
            self._gather(q, v, acc, F, T, *self._plan, nan_cols, self._buf, self._n, t, self._tbuf, self._extent)
        else:
            self.gather_python(state, F, T, nan_cols, t)
        self._n += 1
        self.n_samples += 1
        if self._n == self._cap:
            self._flush()

    def prime(self, state: State) -> None:
        """Type (and load from Numba's cache) the compiled gather now, for ``state``'s arrays.

        The first :meth:`sample` does it otherwise; a timed loop calls this before its clock starts, as the
        model build and compilation are outside it. Records nothing.
        """
        if not self.compiled or self._gather is not None:
            return
        q, v, acc = (np.ascontiguousarray(a, dtype=np.float64) for a in (state.q, state.v, state.acc))
        self._gather = entry_point(RK.gather_sample, (q, v, acc, self._empty3, self._empty3, *self._plan,
                                                      self._no_nan, self._buf, self._n, 0.0, self._tbuf,
                                                      self._extent))

    def gather_python(self, state: State, F, T, nan_cols, t: float) -> None:
        """The gather of :meth:`sample` in NumPy (the recorder before its compiled gather; the tests' oracle).

        Set :attr:`compiled` to ``False`` to record through it.
        """
        row = self._row
        nb_ = self.system.nb
        # the bodies' extent, for drawing the terrain under the whole run
        lo, hi = state.q[:, :2].min(axis=0), state.q[:, :2].max(axis=0)
        self._lo[:] = np.minimum(self._lo, lo)
        self._hi[:] = np.maximum(self._hi, hi)
        body = np.concatenate([state.q, state.v, state.acc[:, :3]], axis=1)  # (nb, 16)
        row[: 16 * nb_] = body.ravel()
        if self._need_joints and self._joint_names:
            row[self._n_body_cols: self._n_body_cols + self._n_joint_cols] = np.concatenate([F, T], 1).ravel()
        if self._need_elements:
            for arr, ks, dst in self._elem_gather:
                row[dst] = arr[ks]
        out = self._buf[:, self._n]
        out[:] = row[self.keep]
        out[nan_cols] = np.nan
        self._tbuf[self._n] = t

    def _flush(self):
        if self._n == 0:
            return
        t, v = self._tbuf[: self._n], self._buf[:, : self._n].T
        if self._writer is not None:
            self._writer.write(t, v)
            self._t_streamed.append(t.copy())
        else:
            self._chunks.append((t.copy(), np.ascontiguousarray(v)))
        self._n = 0
        if self._cap < self._chunk_rows:
            self._alloc(self._chunk_rows)

    @property
    def t(self) -> np.ndarray:
        """Sample times held in memory, s (empty while streaming to a folder)."""
        parts = [c[0] for c in self._chunks] + [self._tbuf[: self._n]]
        return np.concatenate(parts)

    # ------------------------------------------------------------------ output folder
    @property
    def streaming(self) -> bool:
        return self._writer is not None

    def open(self, directory, metadata: dict | None = None, terrain=None, summary: dict | None = None):
        """Stream samples into the results folder ``directory`` from now on.

        Samples already held in memory are written first. The folder is
        marked incomplete until :meth:`result` finalises it. Samples go into
        ``directory/timeseries.parquet/``, a dataset of parts of
        :attr:`part_rows` samples each (default: a full chunk, e.g. 512
        samples of the link M113, 2114 of the massless one).

        Parameters
        ----------
        directory : path
        metadata : dict, optional
            Extra entries for ``metadata.json`` (scenario, spec...).
        terrain : optional
            What to draw as the ground (:func:`trackdyn.io.scene.terrain_to_scene`);
            default: the ``terrain`` of a force provider that has ``to_scene()``.
        summary : dict, optional
            Contents of ``summary.json``.
        """
        if self._writer is not None:
            raise RuntimeError(f"Recorder: already writing to {self._writer.directory}")
        if isinstance(terrain, (dict, tuple, list)):
            terrain_to_scene(terrain)  # reject a bad description now, before the run
        part_rows = self.part_rows if self.part_rows is not None else _CHUNKS_PER_PART * self._chunk_rows
        self._writer = ResultWriter(directory, self.columns, part_rows=part_rows)
        self._terrain = terrain
        self._summary = summary
        if metadata:
            self.extra_metadata.update(metadata)
        for t, v in self._chunks:
            self._writer.write(t, v)
            self._t_streamed.append(t)
        self._chunks.clear()
        self._flush()
        return self._writer.directory

    def abort(self, error) -> None:
        """A run died: write the samples held so far as a last part and leave the folder marked incomplete."""
        if self._writer is not None:
            self._flush()
            self._writer.abort(f"{type(error).__name__}: {error}")
            self._writer = None

    def scene(self) -> dict | None:
        """Visual shapes and terrain of the recorded system (``scene.json``), or ``None``."""
        model = getattr(self.system, "model", None)
        if model is None:
            return None
        terrain = self._terrain if self._terrain is not None else find_terrain(self.system)
        if np.all(np.isfinite(self._lo)) and np.all(np.isfinite(self._hi)):
            x_range = (float(self._lo[0]) - 10.0, float(self._hi[0]) + 10.0)
            y_range = (min(-2.0, float(self._lo[1]) - 1.0), max(2.0, float(self._hi[1]) + 1.0))
        else:
            x_range, y_range = (-10.0, 10.0), (-2.0, 2.0)
        return scene_from_model(model, terrain, x_range, y_range)

    def result(self, metadata) -> Result:
        """The samples so far as a :class:`Result`; when streaming, finalise the folder first."""
        meta = {**dict(metadata), **self.extra_metadata}
        meta["record"] = [{"pattern": p, "interval_s": dt} for p, dt in self.record]
        try:
            scene = self.scene()
        except Exception as err:  # a drawing problem must not cost the run its results
            scene = None
            meta["warnings"] = list(meta.get("warnings", [])) + [f"scene.json not written: {err}"]
        if self._writer is not None:
            self._flush()
            w = self._writer
            self._writer = None
            d = w.close(meta, scene=scene, summary=self._summary)
            # the times kept while streaming, not read back: reading even one column parses the file's
            # footer (row groups x thousands of columns), +16 MiB after a 10 s M113 run, growing with its length
            t = np.concatenate(self._t_streamed) if self._t_streamed else np.zeros(0)
            self._t_streamed = []
            return Result(t, self.columns, None, w.metadata, summary=self._summary, scene=scene, path=d)
        parts_t = [c[0] for c in self._chunks] + [self._tbuf[: self._n]]
        parts_v = [c[1] for c in self._chunks] + [self._buf[:, : self._n].T]
        vals = np.concatenate(parts_v) if parts_v else np.zeros((0, len(self.columns)))
        return Result(np.concatenate(parts_t), self.columns, vals.copy(), meta, summary=self._summary,
                      scene=scene)
