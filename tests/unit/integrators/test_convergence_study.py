"""Convergence studies (experiments/convergence.py) and ``trackdyn study convergence`` (cli/study.py)."""

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

import trackdyn as td
from trackdyn.cli.study import register
from trackdyn.experiments import SCENARIOS, StudyScenario, convergence_study, get_scenario, register_scenario
from trackdyn.testing import problems as P


def pendulum():
    return P.pendulum(theta0=1.0)


def test_deviations_shrink_with_the_step_at_the_schemes_order():
    study = convergence_study(pendulum, steps=[4e-3, 2e-3, 1e-3, 5e-4], integrators=["euler-implicit", "hht"],
                              t_end=1.0, series="bob.pos.x")
    t = study.table
    assert list(t.columns[:7]) == ["integrator", "solver", "step_s", "status", "max_dev", "rms_dev",
                                   "reference_step_s"]
    assert len(t) == 8 and (t["status"] == "complete").all()
    for name, p in (("euler-implicit", 1.0), ("hht", 2.0)):
        rows = t[t["integrator"] == name].sort_values("step_s", ascending=False)
        dev = rows["max_dev"].to_numpy()
        assert dev[-1] == 0.0 and np.all(np.diff(dev) < 0)  # the finest is the reference
        assert (rows["rms_dev"] <= rows["max_dev"]).all()
        # against the finest run e(h) ≈ C (h^p − h_f^p): the first two ratios give the order
        h = rows["step_s"].to_numpy()
        expected = (h[0] ** p - h[-1] ** p) / (h[1] ** p - h[-1] ** p)
        assert dev[0] / dev[1] == pytest.approx(expected, rel=0.15)
    assert {"residual_evals", "factorizations", "wall_per_sim"} <= set(t.columns)
    assert set(study.runs) == {(n, "direct", h) for n in ("euler-implicit", "hht") for h in (4e-3, 2e-3, 1e-3, 5e-4)}


def test_figures_are_written_in_both_formats(tmp_path):
    study = convergence_study(pendulum, steps=[4e-3, 2e-3], integrators=["hht", "rk4"], solvers=["direct", "minres"],
                              t_end=0.2, series="bob.pos.z", scenario="pendulum")
    files = study.plot(tmp_path / "fig")
    assert sorted(p.split(".")[-1] for p in files) == ["png", "svg"]
    for f in files:
        assert (tmp_path / f"fig.{f.split('.')[-1]}").stat().st_size > 1000
    assert len(study.combinations()) == 4
    d = study.to_dict()
    assert d["series"] == "bob.pos.z" and len(d["runs"]) == 8
    json.dumps(d)


@pytest.mark.parametrize("kw, match", [
    (dict(integrators=["no-such"]), "unknown integrator"),
    (dict(solvers=["cg"]), "unknown solver"),
    (dict(steps=[3e-3, 2e-3]), "not a multiple"),
    (dict(steps=[-1e-3]), "positive"),
    (dict(series="bob.pos.w"), "no series"),
    (dict(series=None), "give the series"),
    (dict(t_end=0.0), "t_end"),
])
def test_bad_input_is_refused_before_running(kw, match):
    args = dict(steps=[2e-3, 1e-3], integrators=["hht"], t_end=0.05, series="bob.pos.x")
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        convergence_study(pendulum, **args)


def test_scenarios_are_registered_and_extensible():
    for name in ("pendulum", "double-pendulum", "slider-crank", "slider-crank-free", "chain64"):
        sc = get_scenario(name)
        assert isinstance(sc.build(), td.Model)
    with pytest.raises(ValueError, match="choose one of"):
        get_scenario("no-such-scenario")  # m113-half-round is registered (tests/unit/experiments)
    register_scenario(StudyScenario("test-spring", _stiff_spring, "mass.pos.x", 0.1, (1e-2, 5e-3), ("rk4",)))
    assert "test-spring" in SCENARIOS


def _stiff_spring():
    m = td.Model(gravity=(0, 0, 0))
    b = m.add_body("mass", mass=1.0, inertia=[1, 1, 1], pos=[1.1, 0, 0])
    m.add_force(td.TSDA(m.ground, b, [0, 0, 0], [1.1, 0, 0], stiffness=1e6, free_length=1.0, name="spring"))
    return m


@pytest.fixture()
def app():
    a = typer.Typer()

    @a.callback()
    def root():
        """trackdyn"""

    register(a)
    return a


def test_cli_json_prints_one_object_and_writes_the_table(app, tmp_path):
    r = CliRunner().invoke(app, ["study", "convergence", "pendulum", "--steps", "4e-3,2e-3", "--integrators",
                                 "hht", "--solvers", "direct,minres", "--t-end", "0.2", "--out", str(tmp_path / "s"),
                                 "--json", "-o", "hht:alpha=-0.1", "-o", "minres:tol=1e-11"])
    assert r.exit_code == 0, r.output
    obj = json.loads(r.stdout)
    assert obj["status"] == "complete" and obj["series"] == "bob.pos.x" and len(obj["runs"]) == 4
    assert obj["runs"][0]["max_dev"] > 0 and obj["runs"][1]["max_dev"] == 0
    assert obj["runs"][2]["solver"] == "minres" and obj["runs"][2]["linear_iterations"] > 0
    for f in ("convergence.csv", "convergence.json", "convergence.png", "convergence.svg"):
        assert (tmp_path / "s" / f).exists()


def test_cli_exit_codes(app, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["study", "convergence", "no-such-scenario"])
    assert r.exit_code == 1 and "choose one of" in r.output
    r = runner.invoke(app, ["study", "convergence", "pendulum", "--steps", "abc"])
    assert r.exit_code == 1
    r = runner.invoke(app, ["study", "convergence", "pendulum", "--no-such-flag"])
    assert r.exit_code == 2
    r = runner.invoke(app, ["study", "convergence", "pendulum", "--t-end", "0.01", "-o", "max_iter=5"])
    assert r.exit_code == 1 and "max_iter" in r.output  # the direct solver has no such option
    r = runner.invoke(app, ["study", "convergence", "pendulum", "-o", "rk5:alpha=0"])
    assert r.exit_code == 1
    # an explicit scheme far beyond its stability limit diverges: the study completes, exit code 1
    register_scenario(StudyScenario("test-stiff", _stiff_spring, "mass.pos.x", 2.0, (1e-2, 5e-3), ("rk4",)))
    r = runner.invoke(app, ["study", "convergence", "test-stiff", "--out", str(tmp_path / "d"), "--json"])
    assert r.exit_code == 1
    obj = json.loads(r.stdout)
    assert obj["status"] == "diverged" and {x["status"] for x in obj["runs"]} == {"diverged"}
