"""``trackdyn bench m113-flat --fidelity F --step H``: the options reach the benchmark, and the options that do
not apply are refused before anything runs (plumbing only: no timing is asserted)."""

import warnings

from typer.testing import CliRunner

from trackdyn.cli.main import app
from trackdyn.testing.benchmarks_vehicle import m113_flat


def test_options_that_do_not_apply_or_name_nothing_exit_1():
    r = CliRunner().invoke(app, ["bench", "chain64", "--fidelity", "synthesis"])
    assert r.exit_code == 1 and "takes no --fidelity" in r.output
    r = CliRunner().invoke(app, ["bench", "m113-flat", "--fidelity", "nonesuch"])
    assert r.exit_code == 1 and "'nonesuch': not a registered fidelity" in r.output
    r = CliRunner().invoke(app, ["bench", "m113-flat", "--peers", "--step", "1e-3"])
    assert r.exit_code == 1 and "drop --fidelity and --step" in r.output


def test_m113_flat_runs_on_the_synthesis_fidelity():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = m113_flat(t_end=0.005, settle=0.005, segments=1, step=2.5e-4, fidelity="synthesis")
    assert out["fidelity"] == "synthesis" and out["integrator"] == "synthesis-tracked"
    assert out["status"] == "complete" and out["steps"] == 20 and out["step_size_s"] == 2.5e-4
