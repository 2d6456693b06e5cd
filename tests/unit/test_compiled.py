"""trackdyn._compiled: kernels typed once and called through their entry points."""

import numba as nb
import numpy as np

from trackdyn._compiled import bound_call, entry_point


@nb.njit(cache=False)
def _axpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] += a * x[i]
    return y.shape[0]


def test_entry_point_compiles_a_missing_overload_and_runs_it():
    x, y = np.arange(3.0), np.ones(3)
    n_before = len(_axpy.overloads)
    ep = entry_point(_axpy, (2.0, x, y))
    assert len(_axpy.overloads) == n_before + 1  # typed and compiled without a call
    assert ep(2.0, x, y) == 3 and np.array_equal(y, [1.0, 3.0, 5.0])
    assert entry_point(_axpy, (2.0, x, y)) is ep  # the same overload for the same types
    # another layout is another overload, never the C-contiguous one
    xs = np.arange(6.0)[::2]
    assert entry_point(_axpy, (2.0, xs, y)) is not ep


def test_bound_call_reads_the_current_values_of_its_arrays():
    x, y = np.arange(3.0), np.zeros(3)
    call = bound_call(_axpy, 1.0, x, y)
    assert call() == 3 and np.array_equal(y, x)
    x[:] = 10.0  # in-place changes are seen: the arrays are bound by reference
    call()
    assert np.array_equal(y, [10.0, 11.0, 12.0])
