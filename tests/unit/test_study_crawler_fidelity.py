"""``trackdyn study crawler --track-only --fidelity``: the option reaches both scenarios, and a fidelity that cannot
run prescribed sprocket speeds is refused by name before any run (no simulation here: ``prepare`` is replaced)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import trackdyn.experiments.crawler as crawler
from trackdyn.cli.main import app
from trackdyn.formulations.contract import get_formulation


class _Stop(RuntimeError):
    pass


@pytest.fixture
def seen(monkeypatch):
    """The scenarios handed to ``prepare``, which stops the study at the first one (the CLI reports the error)."""
    got = []

    def fake_prepare(sc):
        got.append(sc)
        raise _Stop(f"stopped before running {sc.name}")

    monkeypatch.setattr(crawler, "prepare", fake_prepare)
    return got


@pytest.mark.parametrize("fidelity", ["links", "recursive"])
def test_fidelity_option_reaches_the_scenario(seen, fidelity):
    args = ["study", "crawler", "--track-only"] + ([] if fidelity == "links" else ["--fidelity", fidelity])
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 1 and "stopped before running crawler-track-only-forward" in r.output, r.output
    (sc,) = seen
    assert sc.fidelity == fidelity
    assert sc.step == get_formulation(fidelity).defaults({})[1]  # the fidelity's own step (recursive: 5e-4 s)
    assert type(sc.driver).__name__ == "SprocketSpeed" and sc.driver.kinematic


@pytest.mark.parametrize("fidelity, reason", [("massless", "SprocketSpeed drivers need the kinematic drive"),
                                              ("nosuch", "not a registered fidelity")])
def test_a_fidelity_that_cannot_run_it_is_refused_before_any_run(seen, fidelity, reason):
    with pytest.raises(ValueError, match=rf"crawler study: fidelity = '{fidelity}'.*{reason}"):
        crawler.track_only_study(fidelity=fidelity)
    r = CliRunner().invoke(app, ["study", "crawler", "--track-only", "--fidelity", fidelity])
    assert r.exit_code == 1 and f"fidelity = '{fidelity}'" in r.output, r.output
    assert seen == []  # refused before preparing either run
