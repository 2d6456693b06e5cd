"""The vehicle benchmarks reject bad options before any model is built or settled."""

import pytest

from trackdyn.testing.benchmarks_vehicle import m113_stepsize


@pytest.mark.parametrize("kw, msg", [({"record": "some"}, "record must be 'all' or 'wheels', got 'some'"),
                                     ({"repeats": 0}, "repeats must be a positive integer, got 0"),
                                     ({"repeats": 2.5}, "repeats must be a positive integer, got 2.5"),
                                     ({"perturb": -1e-6}, r"perturb must be a number in \[0, 0.01\), got -1e-06"),
                                     ({"perturb": 0.5}, r"perturb must be a number in \[0, 0.01\), got 0.5"),
                                     ({"perturb": "1e-5"}, r"perturb must be a number in \[0, 0.01\), got '1e-5'")])
def test_stepsize_rejects_bad_options(kw, msg):
    with pytest.raises(ValueError, match=msg):
        m113_stepsize(**kw)
