"""The fidelity contract: the registry, the refusals before anything runs, and a toy fidelity registered in a
few lines that then runs through ``td.run``, ``trackdyn run``, ``trackdyn event`` and the conformance harness
without any other module knowing about it."""

import json
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

import trackdyn as td
from trackdyn.cli.main import app
from trackdyn.contact import ContactSystem, Material, shapes
from trackdyn.formulations.contract import (Build, FormulationInfo, formulation_names, get_formulation,
                                            register_formulation, unregister_formulation)
from trackdyn.sim.run import prepare
from trackdyn.terrain import Flat


class BoxFormulation:
    """A rigid box of the hull's mass and size sliding on the ground: no running gear at all."""

    name = "toy-box"
    info = FormulationInfo(models="a rigid box of the hull's mass sliding on the ground (test toy)", cost="toy",
                           paper="none", default_step=2e-3, default_integrator="euler-implicit-linearized",
                           integrators=("euler-implicit-linearized",))

    def defaults(self, options):
        return self.info.default_integrator, self.info.default_step

    def check(self, scenario):
        pass

    def build(self, sc):
        spec = sc.vehicle_spec()
        size = np.array([4.0, 2.5, 1.0])
        mass = spec.chassis.mass
        m = td.Model()
        box = m.add_body("chassis", mass=mass, inertia=mass / 12 * (size[[1, 0, 0]] ** 2 + size[[2, 2, 1]] ** 2),
                         pos=[sc.start_x, 0.0, 0.5 * size[2] + sc.drop], vel=[sc.speed, 0.0, 0.0])
        m.add_marker("driver", box, [sc.start_x + 1.0, 0.5, 0.5 * size[2] + sc.drop + 0.5])
        contact = ContactSystem(m, terrain=sc.terrain if sc.terrain is not None else Flat())
        contact.add_shape(box, shapes.Box(size), material=Material("steel", young=2e9, poisson=0.3, friction=0.5))
        return Build(spec, None, td.formulations.AbsoluteSystem(m, providers=[contact]), contact, None,
                     sc.integrator)


@pytest.fixture
def toy():
    f = register_formulation(BoxFormulation())
    yield f
    unregister_formulation("toy-box")


def test_registry_lists_the_built_in_fidelities_with_their_own_defaults():
    assert formulation_names()[:2] == ("links", "massless")
    assert td.Scenario(vehicle="m113").step == get_formulation("links").info.default_step == 5e-4
    sc = td.Scenario(vehicle="m113", fidelity="massless")
    assert (sc.step, sc.integrator) == (1e-2, "massless-realtime")
    # a step left to the fidelity follows a change of fidelity; a given one stays
    assert sc.replace(fidelity="links").step == 5e-4
    assert td.Scenario(vehicle="m113", step=1e-3).replace(fidelity="massless").step == 1e-3
    with pytest.raises(ValueError, match="fidelity 'toy-box'|scenario.fidelity = 'toy-box'"):
        td.Scenario(vehicle="m113", fidelity="toy-box")


def test_unsupported_combinations_are_refused_before_anything_is_built():
    with pytest.raises(ValueError, match=r"'links' fidelity accepts .*euler-implicit-linearized"):
        prepare(td.Scenario(vehicle="m113", integrator="massless-realtime"))
    with pytest.raises(ValueError, match=r"massless\.planes.*applies to the massless fidelity only, not to 'links'"):
        prepare(td.Scenario(vehicle="m113", options={"massless.planes": 1}))
    with pytest.raises(ValueError, match=r"contact\.implicit.*applies to the links fidelity only, not to 'massless'"):
        prepare(td.Scenario(vehicle="m113", fidelity="massless", options={"contact.implicit": False}))
    with pytest.raises(ValueError, match=r"takes no integrator options"):
        prepare(td.Scenario(vehicle="m113", fidelity="massless", options={"max_recovery_speed": 1.0}))
    with pytest.raises(ValueError, match="does not implement Formulation"):
        register_formulation(object())
    with pytest.raises(ValueError, match="registered already"):
        register_formulation(type("Links2", (BoxFormulation,), {"name": "links"})())


def test_a_toy_fidelity_runs_through_td_run(toy, tmp_path):
    sc = td.Scenario(vehicle="m113", fidelity="toy-box", terrain=Flat(), speed=3.0, t_end=0.4)
    assert sc.step == 2e-3
    res = td.run(sc, out=tmp_path / "box")
    assert res.status == "complete"
    # it slides and slows down under Coulomb friction, mu = min(0.5, 0.8): a = mu g while it slides
    t, v = res.t, res["chassis.vel.x"]
    sliding = (t > 0.1) & (t < 0.3)
    a = np.polyfit(t[sliding], v[sliding], 1)[0]
    assert a == pytest.approx(-0.5 * 9.81, rel=0.02)
    assert "driver.acc.z" in res and not res.match(["left.*"])


def test_a_toy_fidelity_runs_through_the_cli(toy, tmp_path):
    runner = CliRunner()
    out = runner.invoke(app, ["run", "cruise", "--fidelity", "toy-box", "--speed", "2", "--distance", "1", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["step_size_s"] == 2e-3
    lst = runner.invoke(app, ["fidelities", "--json"])
    names = [f["name"] for f in json.loads(lst.stdout)["fidelities"]]
    assert names[:2] == ["links", "massless"] and "toy-box" in names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = runner.invoke(app, ["event", "step-climb", "--fidelity", "toy-box", "--search", "values",
                                 "--values", "0.3", "--json", "--set", "settle_time=0.3", "--set", "climb_time=1.0",
                                 "--set", "give_up_after=0.5", "--out", str(tmp_path / "ev")])
    assert ev.exit_code == 0, ev.output
    trials = json.loads(ev.stdout)["trials"]
    assert len(trials) == 1 and not trials[0]["passed"] and trials[0]["mode"]


def test_a_toy_fidelity_runs_through_the_conformance_harness(toy):
    from trackdyn.testing.conformance import compare, run_conformance

    got = run_conformance("toy-box", scenarios=("settle",))
    # the box's centre of mass rests 0.5 m up (less a sinkage of its 2 GPa face under the hull's weight);
    # the harness reports the vehicle frame's origin, which sits the spec's chassis centre-of-mass height below it
    assert got["settle"]["status"] == "complete"
    com_z = td.vehicles.get("m113").chassis.com[2]
    assert got["settle"]["height_m"] == pytest.approx(0.5 - com_z, abs=2e-3)
    assert abs(got["settle"]["pitch_deg"]) < 0.01 and abs(got["settle"]["speed_mps"]) < 1e-3
    assert compare("toy-box", got, {"settle": {}}) == []  # it declares no tolerance: nothing to hold it to


def test_the_old_massless_package_is_a_deprecated_alias():
    import importlib
    import sys

    sys.modules.pop("trackdyn.massless", None)
    with pytest.warns(DeprecationWarning, match="trackdyn.massless is deprecated"):
        alias = importlib.import_module("trackdyn.massless")
    from trackdyn.assembly.massless import build_massless
    from trackdyn.contact.massless import MasslessTrack
    from trackdyn.experiments.stairs import climb_stairs

    assert (alias.build_massless, alias.MasslessTrack, alias.climb_stairs) == (build_massless, MasslessTrack,
                                                                               climb_stairs)


def test_a_fidelity_records_no_series_it_cannot_have():
    """The massless tree has no shoes and no multipliers: no shoe tensions, no joint reactions -- absent, never
    NaN- or zero-filled; the parts both fidelities have carry the same names."""
    names = {}
    for fid in ("links", "massless"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prep = prepare(td.Scenario(vehicle="m113", fidelity=fid, t_end=0.01))
        names[fid] = set(prep.sim.recorder.all_columns)
    ml, lk = names["massless"], names["links"]
    assert not any(".shoe[" in n for n in ml) and any(n.endswith(".tension") for n in lk)
    assert not any(n.endswith((".force.x", ".torque.x")) and ".axle" in n for n in ml)
    assert any(n.endswith(".force.x") and ".axle" in n for n in lk)
    shared = {"chassis.pos.z", "driver.acc.z", "left.roadwheel[2].pos.z", "left.arm[2].omega.y",
              "left.sprocket.omega.y", "right.idler.pos.x"}
    assert shared <= ml and shared <= lk
