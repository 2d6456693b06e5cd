"""Fixtures of the viz tests: small drawable results folders, and a real headless Chromium.

The browser tests drive Debian's ``chromium`` (a system requirement named in
the README) through Playwright's Python API (the ``playwright`` wheel of the
``test`` extra, used as a driver only: it never downloads a browser). When
``chromium`` is missing and the tests run as root with apt-get (as CI does),
the fixture installs it with ``apt-get install chromium`` and says so on one
line (under pytest-xdist, as in CI, in the warnings summary); otherwise the browser tests are skipped with the command to run, or
fail when ``TRACKDYN_REQUIRE_BROWSER=1``. An exclusive file lock keeps
parallel pytest workers from installing twice.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

import trackdyn as td
from viz_test_helpers import pendulum_chain_model

CACHE = Path(os.environ.get("TRACKDYN_TEST_CACHE", Path.home() / ".cache" / "trackdyn-tests"))
WHY = "the 3-D viewer's tests drive a real headless browser"


@contextmanager
def _install_lock():
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "install.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _unavailable(reason: str):
    """Skip (or fail with TRACKDYN_REQUIRE_BROWSER=1) a browser test that cannot run here."""
    if os.environ.get("TRACKDYN_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (TRACKDYN_REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(reason)


def _say(config, line: str) -> None:
    """One line on the terminal, past pytest's capture; under xdist (whose workers' output is not shown) a
    warning, which the run's warnings summary shows."""
    tr = config.pluginmanager.get_plugin("terminalreporter")
    cm = config.pluginmanager.get_plugin("capturemanager")
    if hasattr(config, "workerinput") or tr is None or cm is None:
        import warnings

        warnings.warn(line, UserWarning, stacklevel=2)
        return
    with cm.global_and_fixture_disabled():
        tr.write_line(line)


def _ensure_chromium(config) -> str:
    exe = shutil.which("chromium")
    if exe:
        return exe
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        _unavailable(f"{WHY}: Debian's chromium is not installed and cannot be installed here (needs root and "
                     "apt-get): run `apt-get install -y chromium`")
    with _install_lock():
        exe = shutil.which("chromium")
        if exe:
            return exe
        _say(config, f"trackdyn viz tests: installing Debian's chromium with apt-get (not on PATH; {WHY})")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1200)
            if r.returncode != 0:
                _unavailable(f"`{' '.join(cmd)}` failed: {r.stderr.strip()[-500:]}")
    exe = shutil.which("chromium")
    if not exe:
        _unavailable("apt-get installed chromium but no `chromium` is on PATH")
    return exe


@pytest.fixture(scope="session")
def browser(pytestconfig):
    """``dict(chromium=...)``: the system's Chromium, for :func:`viewer_driver.drive_viewer`."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable(f"{WHY}: the Python package playwright (the driver) is missing: pip install -e \".[test]\"")
    return {"chromium": _ensure_chromium(pytestconfig)}


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
