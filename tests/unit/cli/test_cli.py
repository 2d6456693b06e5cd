import json
import subprocess
import sys

import pytest


def run(*args):
    return subprocess.run([sys.executable, "-m", "trackdyn.cli.main", *args], capture_output=True, text=True,
                          timeout=600)


def test_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("trackdyn ")


def test_validate_json_prints_one_object():
    r = run("validate", "pendulum-small", "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["case"] == "pendulum-small" and obj["passed"] is True
    assert set(obj) >= {"case", "errors", "tolerances", "passed"}


def test_unknown_case_is_invalid_input():
    r = run("validate", "no-such-case")
    assert r.returncode == 1 and "choose one of" in r.stderr


def test_usage_error_exit_code():
    r = run("validate", "--no-such-option")
    assert r.returncode == 2


def test_demo_writes_results(tmp_path):
    r = run("demo", "--out", str(tmp_path / "d"), "--t-end", "0.2", "--json")
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["status"] == "complete"
    assert (tmp_path / "d" / "timeseries.parquet").exists() and (tmp_path / "d" / "metadata.json").exists()
