"""Results on disk: ``timeseries.parquet`` + ``metadata.json`` (+ ``summary.json``).

Every file is written under a temporary name in the same folder and renamed
into place (``os.replace`` is atomic on POSIX), and ``metadata.json`` is written
last: a folder whose ``metadata.json`` is missing is incomplete.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

__all__ = ["save_result", "load", "write_json_atomic"]


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    return repr(o)


def write_json_atomic(path, obj) -> Path:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2, default=_json_default, allow_nan=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def save_result(result, directory) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta_path = d / "metadata.json"
    if meta_path.exists():
        meta_path.unlink()  # the folder is incomplete until the new metadata lands
    arrays = [pa.array(result.t)] + [pa.array(result.values[:, k]) for k in range(len(result.columns))]
    table = pa.Table.from_arrays(arrays, names=["t"] + list(result.columns))
    tmp = d / f".timeseries.parquet.tmp-{os.getpid()}"
    pq.write_table(table, tmp)
    os.replace(tmp, d / "timeseries.parquet")
    meta = dict(result.metadata)
    meta.setdefault("status", "complete")
    meta["n_samples"] = int(len(result.t))
    meta["n_series"] = int(len(result.columns))
    write_json_atomic(meta_path, meta)
    return d


def load(directory):
    """Load a results folder written by :func:`save_result` as a :class:`~trackdyn.sim.result.Result`."""
    import pyarrow.parquet as pq

    from ..sim.result import Result

    d = Path(directory)
    meta_path = d / "metadata.json"
    if not meta_path.exists():
        raise FileNotFoundError(f"{d}: no metadata.json, the results folder is missing or incomplete")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    table = pq.read_table(d / "timeseries.parquet")
    names = table.column_names
    t = table.column("t").to_numpy()
    cols = [c for c in names if c != "t"]
    values = np.column_stack([table.column(c).to_numpy() for c in cols]) if cols else np.zeros((len(t), 0))
    return Result(t, cols, values, meta)
