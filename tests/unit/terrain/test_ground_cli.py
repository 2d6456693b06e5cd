"""``--ground`` and ``--set terrain.*`` of ``trackdyn run`` and ``trackdyn event`` reach the scenario."""

from typer.testing import CliRunner

import trackdyn as td
from trackdyn.cli.main import app
from trackdyn.experiments import events, scenarios


def test_event_ground_flag_reaches_every_trial_scenario(monkeypatch):
    seen = {}

    def fake(name, spec, **opts):
        seen.update(opts)
        sc = td.Scenario(vehicle=spec, **opts["scenario_options"])  # what _Context.scenario makes of it
        return events.EventResult({"event": name, "ground": sc.terrain.material.kind})

    monkeypatch.setattr(events, "run_event", fake)
    r = CliRunner().invoke(app, ["event", "ride", "--road", "trough", "--ground", "winkler",
                                 "--set", "terrain.stiffness=1.5e7", "--json"])
    assert r.exit_code == 0, r.output
    assert seen["scenario_options"] == {"options": {"terrain.stiffness": 1.5e7, "terrain.ground": "winkler"}}
    assert '"ground": "winkler"' in r.output


def test_run_ground_flag_reaches_the_scenario(monkeypatch):
    seen = {}

    def fake(vehicle="m113", out=None, **kw):
        seen["terrain"] = td.Scenario(vehicle=vehicle, options=kw["options"]).terrain
        return {"scenario": "settle", "status": "complete"}, None

    monkeypatch.setitem(scenarios.SCENARIOS, "settle", fake)
    r = CliRunner().invoke(app, ["run", "settle", "--ground", "winkler", "--set", "terrain.road=bump", "--json"])
    assert r.exit_code == 0, r.output
    t = seen["terrain"]
    assert t.material.kind == "winkler" and t.pieces[0].height == 0.10


def test_a_wrong_ground_exits_1_naming_the_option():
    r = CliRunner().invoke(app, ["run", "settle", "--ground", "mud"])
    assert r.exit_code == 1
    assert "terrain.ground'] = 'mud': choose one of ['rigid', 'winkler']" in r.output
