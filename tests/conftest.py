import importlib.util
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    config.addinivalue_line("markers", "layers: the import-linter layers contract (run alone: -m layers)")


@pytest.fixture
def bench_script():
    """``load(name)``: the script ``bench/<name>.py`` as a module (the tools there are tested like library code)."""
    root = Path(__file__).resolve().parents[1]

    def load(name):
        spec = importlib.util.spec_from_file_location(name, root / "bench" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load


@pytest.fixture
def newton_block():
    """``block(system, data, dof)``: the Newton-matrix values ``data`` of an absolute system as the dense
    block over the global coordinates ``dof`` (upper-triangle slots mirrored; 0 where the pattern has no
    entry), with the sign of a force Jacobian (``-data``)."""
    import numpy as np

    def block(system, data, dof):
        K = np.zeros((len(dof), len(dof)))
        for i, gi in enumerate(dof):
            for j, gj in enumerate(dof):
                try:
                    K[i, j] = -data[system.pattern.slots(min(gi, gj), max(gi, gj))]
                except KeyError:
                    pass
        return K

    return block
