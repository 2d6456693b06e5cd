"""Events on every compliant-pin fidelity (issue #30): one short step-climb trial of the APC per fidelity,
through the command line, held against the same trial on ``links``.

The trial is the procedure's own with shorter settings (``settle_time`` 0.3 s, ``climb_time`` 5 s,
``after_success`` 0.1 s): a 0.3 m step, half the APC's sprocket height, which the link model climbs in
about 3.2 s of full throttle. A compliant fidelity joins by registering with ``cost = "compliant"``.
"""

import json
import warnings

import pyarrow.dataset as pads
import pytest

from trackdyn.experiments import events as E
from trackdyn.formulations.contract import formulation_names, get_formulation

HEIGHT = 0.3
SHORT = {"settle_time": 0.3, "climb_time": 5.0, "give_up_after": 1.0, "after_success": 0.1}
COMPLIANT = [f for f in formulation_names() if get_formulation(f).info.cost == "compliant"]


def _cli_step_climb(fidelity, out):
    from typer.testing import CliRunner

    from trackdyn.cli.main import app

    # each fidelity at its own default step (5e-4 s for links and the compliant pins; the links events' default is
    # 2.5e-4 s; the ANCF chain's 1e-4 s on the θ-method: its largest step within 1 mm, ANCF_STEP)
    step = get_formulation(fidelity).info.default_step
    args = ["event", "step-climb", "--vehicle", "apc", "--fidelity", fidelity, "--search", "values",
            "--values", str(HEIGHT), "--step", f"{step:g}", "--out", str(out), "--json"]
    for k, v in SHORT.items():
        args += ["--set", f"{k}={v}"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout.strip().splitlines()[-1])
    assert printed["event"] == "step-climb" and printed["fidelity"] == fidelity
    return E.EventResult.load(out)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the closed loops' redundant pin rows
        return _cli_step_climb("links", tmp_path_factory.mktemp("links"))


def test_there_are_compliant_fidelities():
    assert {"penalty", "bushing"} <= set(COMPLIANT)


@pytest.mark.parametrize("fidelity", COMPLIANT)
def test_step_climb_runs_on_every_compliant_fidelity(fidelity, reference, tmp_path):
    res = _cli_step_climb(fidelity, tmp_path / fidelity)
    (trial,), (ref,) = res["trials"], reference["trials"]
    assert ref["passed"] and ref["stop_reason"] == "success"
    # the compliant chain climbs the same step, within a fraction of a second of the ideal pins
    assert trial["passed"] and trial["stop_reason"] == "success", trial
    assert trial["t_success_s"] == pytest.approx(ref["t_success_s"], abs=0.3)
    # the track tension the event reads at the end of the settle window (from the pins' own forces on
    # the compliant fidelities, from the joint reactions on links): the same loop, pins stretched by T/k; the ANCF
    # chain's from its elements' EA ε, on its own contact points (measured +3.6 %: docs/joints/ancf.md)
    assert res["itt_N"] == pytest.approx(reference["itt_N"], rel=0.06 if fidelity == "ancf" else 0.02)
    assert res["itt_N"] != reference["itt_N"]
    # the trial folder is a finished results folder with the pins' tension series
    folder = tmp_path / fidelity / "trials" / f"h{HEIGHT:.4f}"
    meta = json.loads((folder / "metadata.json").read_text())
    assert meta["status"] == "stopped" and meta["fidelity"]["name"] == fidelity  # stopped by the event at success
    names = pads.dataset(folder / "timeseries.parquet").schema.names
    assert "left.shoe[0].tension" in names and "chassis.pos.x" in names
