"""State checkpoints: save a :class:`~trackdyn.mbs.model.State` to one ``.npz`` file and restore it.

Everything a run needs to continue bit-identically lives in the state (time,
positions, velocities, multipliers, last accelerations, and ``extra``: contact
history, driver memory, multistep histories), so a checkpoint is that state,
written atomically. Continuing from it reproduces the uninterrupted run
exactly (``tests/integration/test_robustness.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..mbs.model import State

__all__ = ["save_state", "load_state"]

_FIELDS = ("q", "v", "lam", "acc")


def save_state(path, state: State) -> Path:
    """Write ``state`` to ``path`` (``.npz``), atomically."""
    path = Path(path)
    arrays = {f: np.asarray(getattr(state, f)) for f in _FIELDS}
    arrays["t"] = np.array(state.t, dtype=float)
    for k, v in state.extra.items():
        arr = np.asarray(v)
        if arr.dtype == object:
            raise ValueError(f"save_state: State.extra[{k!r}] is not a plain array")
        arrays["extra::" + k] = arr
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def load_state(path) -> State:
    """Read a state written by :func:`save_state`."""
    with np.load(Path(path), allow_pickle=False) as z:
        extra = {k[len("extra::"):]: z[k].copy() for k in z.files if k.startswith("extra::")}
        return State(float(z["t"]), z["q"].copy(), z["v"].copy(), z["lam"].copy(), z["acc"].copy(), extra)
