"""bench/perf_m113.py: the JIT symbol map it writes for ``perf`` and the grouping of ``perf report`` lines."""

import os
from pathlib import Path

import numpy as np


def test_map_names_compiled_kernels_and_their_wrappers(bench_script):
    from trackdyn.integrators.base import _finite

    assert _finite(np.zeros((2, 7)), np.zeros((2, 6)))
    pm = bench_script("perf_m113")
    path = f"/tmp/perf-{os.getpid()}.map"
    try:
        n = pm.write_perf_map()
        rows = [line.split(" ", 2) for line in Path(path).read_text().splitlines()]
    finally:
        if os.path.exists(path):
            os.remove(path)
    assert n == len(rows) > 0
    names = {r[2] for r in rows}
    assert {"base._finite", "wrap:base._finite"} <= names
    starts = [int(r[0], 16) for r in rows]
    sizes = [int(r[1], 16) for r in rows]
    assert starts == sorted(starts) and all(s > 0 for s in sizes)
    # a symbol's range ends where the next one starts: no sample is attributed twice
    assert all(a + s <= b for a, s, b in zip(starts, sizes, starts[1:]))


def test_report_lines_are_grouped_by_runtime_and_kernel(bench_script):
    pm = bench_script("perf_m113")
    report = """
# Overhead  Shared Object  Symbol
    20.00%  [JIT] tid 15402                                    [.] wrap:_stage.evaluate
    10.50%  libpython3.11.so.1.0                               [.] _PyEval_EvalFrameDefault
     1.50%  libpython3.11.so.1.0                               [.] _PyType_Lookup
     2.00%  [JIT] tid 15402                                    [.] 0x00007f0de123f069
     1.00%  [JIT] tid 15402                                    [.] nrt:NRT_decref
     0.50%  _nrt_python.cpython-311-x86_64-linux-gnu.so        [.] NRT_MemInfo_new
     0.75%  libc.so.6                                          [.] _int_malloc
     0.25%  libc.so.6                                          [.] cfree@GLIBC_2.2.5
     1.25%  libc.so.6                                          [.] __memset_avx512_unaligned_erms
     0.40%  _dispatcher.cpython-311-x86_64-linux-gnu.so        [.] typeof_typecode
"""
    g = pm.group(report)
    assert g["wrap:_stage.evaluate"] == 20.0
    assert abs(g["python"] - 12.0) < 1e-12
    assert abs(g["nrt"] - 1.5) < 1e-12
    assert g["jit (unmapped)"] == 2.0
    assert abs(g["malloc"] - 1.0) < 1e-12
    assert g["libc:__memset_avx512_unaligned_erms"] == 1.25
    assert g["dispatch"] == 0.40
    assert abs(sum(g.values()) - 38.15) < 1e-9
