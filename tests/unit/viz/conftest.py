"""Fixtures of the viz tests: small drawable results folders, and a real headless Chromium.

The browser tests drive Debian's ``chromium`` (a system requirement named in
the README) through Playwright's Python API (the ``playwright`` wheel of the
``test`` extra, used as a driver only: it never downloads a browser). The
tests never install anything: the project's CI script (``.ci/run``) installs
``chromium`` with apt-get and sets ``TRACKDYN_REQUIRE_BROWSER=1``; elsewhere,
without ``chromium`` on PATH, the browser tests are skipped with the command
to run (or fail when ``TRACKDYN_REQUIRE_BROWSER=1``).
"""

from __future__ import annotations

import os
import shutil

import pytest

import trackdyn as td
from viz_test_helpers import pendulum_chain_model

WHY = "the 3-D viewer's tests drive a real headless browser"


def _unavailable(reason: str):
    """Skip (or fail with TRACKDYN_REQUIRE_BROWSER=1) a browser test that cannot run here."""
    if os.environ.get("TRACKDYN_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (TRACKDYN_REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(reason)


def _ensure_chromium() -> str:
    exe = shutil.which("chromium")
    if not exe:
        _unavailable(f"{WHY}: Debian's chromium is not on PATH: run `apt-get install -y chromium` (.ci/run does)")
    return exe


@pytest.fixture(scope="session")
def browser():
    """``dict(chromium=...)``: the system's Chromium, for :func:`viewer_driver.drive_viewer`."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable(f"{WHY}: the Python package playwright (the driver) is missing: pip install -e \".[test]\"")
    return {"chromium": _ensure_chromium()}


@pytest.fixture(scope="session")
def chain_run(tmp_path_factory):
    """A streamed 1.2 s run of a 4-link chain with shapes and a terrain profile below it."""
    d = tmp_path_factory.mktemp("viz") / "chain"
    m = pendulum_chain_model()
    sim = td.Simulation(m, step=2e-3, output_step=1e-2)
    terrain = {"type": "profile", "x": [-2.0, 0.3, 0.3, 2.0], "z": [-1.3, -1.3, -1.1, -1.1], "y": [-1.0, 1.0]}
    sim.recorder.open(d, metadata={"scenario": {"name": "test-chain4"}}, terrain=terrain)
    res = sim.run(1.2)
    assert res.status == "complete"
    return d




@pytest.fixture(scope="session")
def m113_run(tmp_path_factory):
    """0.6 s of the M113 (links fidelity: every shoe drawn) pulling away on flat ground, poses and contact forces."""
    from trackdyn.driver import FullThrottle

    d = tmp_path_factory.mktemp("viz") / "m113"
    sc = td.Scenario(vehicle="m113", driver=FullThrottle(delay=0.05), t_end=0.6, fidelity="links", output_step=0.02,
                     record=("*.pos.*", "*.quat.*", "chassis.vel.*", "*.contact.force.*"), name="viz-m113")
    res = td.run(sc, out=d)
    assert res.status == "complete"
    return d
