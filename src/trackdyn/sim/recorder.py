"""Recorder: samples named series of a system and a state at output times."""

from __future__ import annotations

import fnmatch

import numpy as np

from ..mbs.model import State
from .result import Result

__all__ = ["Recorder"]


class Recorder:
    """Samples named series of a system and state into a preallocated table.

    Parameters
    ----------
    system : AbsoluteSystem
    patterns : list of str or None
        Glob patterns (``*``, ``?``) of the series to keep (``None``: all);
        brackets are literal, as in ``left.roadwheel[0].pos.z``.
    """

    def __init__(self, system, patterns=None):
        self.system = system
        s = system
        cols = []
        for b, nm in enumerate(s.body_names):
            for part, comps in (("pos", "xyz"), ("quat", ("e0", "e1", "e2", "e3")), ("vel", "xyz"),
                                ("omega", "xyz"), ("acc", "xyz")):
                cols.extend(f"{nm}.{part}.{c}" for c in comps)
        self._n_body_cols = len(cols)
        for nm in s.joint_names:
            cols.extend(f"{nm}.force.{c}" for c in "xyz")
            cols.extend(f"{nm}.torque.{c}" for c in "xyz")
        self._n_joint_cols = len(cols) - self._n_body_cols
        self._elem = []
        for blk in list(s.blocks) + list(s.providers):
            for name, (arr, k) in blk.series().items():
                cols.append(name)
                self._elem.append((arr, k))
        self.all_columns = cols
        if patterns is None:
            self.keep = np.arange(len(cols))
        else:
            pats = [patterns] if isinstance(patterns, str) else list(patterns)
            pats = [p.replace("[", "[[]") for p in pats]  # brackets are literal in series names
            keep = [k for k, c in enumerate(cols) if any(fnmatch.fnmatchcase(c, p) for p in pats)]
            if not keep:
                raise ValueError(f"record: no series matches {pats}")
            self.keep = np.array(keep, dtype=np.int64)
        self.columns = [cols[k] for k in self.keep]
        self._need_joints = bool(np.any((self.keep >= self._n_body_cols)
                                        & (self.keep < self._n_body_cols + self._n_joint_cols)))
        self._row = np.zeros(len(cols))
        self.t: list[float] = []
        self.rows: list[np.ndarray] = []

    def sample(self, state: State):
        s = self.system
        s.evaluate_outputs(state)
        row = self._row
        nb_ = s.nb
        body = np.concatenate([state.q, state.v, state.acc[:, :3]], axis=1)  # (nb, 16)
        row[: 16 * nb_] = body.ravel()
        if self._need_joints and s.joint_names:
            F, T = s.reactions(state.lam)
            row[self._n_body_cols: self._n_body_cols + self._n_joint_cols] = np.concatenate([F, T], 1).ravel()
        off = self._n_body_cols + self._n_joint_cols
        for n, (arr, k) in enumerate(self._elem):
            row[off + n] = arr[k]
        self.t.append(state.t)
        self.rows.append(row[self.keep].copy())

    def result(self, metadata) -> Result:
        vals = np.array(self.rows) if self.rows else np.zeros((0, len(self.columns)))
        return Result(np.array(self.t), self.columns, vals, metadata)
