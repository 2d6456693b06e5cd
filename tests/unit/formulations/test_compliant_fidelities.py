"""The ``penalty`` and ``bushing`` fidelities through the contract: their options are checked before
anything is built, they record links' series for the same parts, and their shoe tensions at the assembled
pose (no pin stretched yet, so only the damping of the initial velocities and nothing else acts) agree
with the pins they replace."""

import warnings

import numpy as np
import pytest

from trackdyn.formulations.contract import get_formulation
from trackdyn.sim.run import prepare
from trackdyn.spec.io import get
from trackdyn.spec.scenario import Scenario
from trackdyn.terrain import Flat


def scenario(fidelity, **kw):
    return Scenario(vehicle=get("m113"), fidelity=fidelity, terrain=Flat(), t_end=0.02, **kw)


@pytest.mark.parametrize("fidelity, key, value, message", [
    ("penalty", "penalty.k", -1.0, "expected a finite number >= 0"),
    ("penalty", "penalty.stiffness", 1e9, "unknown option of the 'penalty' fidelity"),
    ("penalty", "bushing.k", 1e9, "applies to the bushing fidelity only"),
    ("penalty", "massless.planes", "hull", "applies to the massless fidelity only"),
    ("bushing", "bushing.k", [1e9, 1e9], "expected a number or 3 numbers"),
    ("bushing", "penalty.c", 1e5, "applies to the penalty fidelity only"),
    ("links", "penalty.k", 1e9, "applies to the penalty fidelity only"),
])
def test_options_are_refused_before_anything_is_built(fidelity, key, value, message):
    with pytest.raises(ValueError, match=message):
        get_formulation(fidelity).check(scenario(fidelity, options={key: value}))


def test_defaults_are_the_papers_and_links_step():
    for name in ("penalty", "bushing"):
        f = get_formulation(name)
        assert f.defaults({}) == ("euler-implicit-linearized", 5e-4)
        assert f.info.paper == "wallin-shabana-2013" and len(f.info.conformance) == 6
    get_formulation("penalty").check(scenario("penalty", options={"penalty.k": 1e7, "penalty.c": 1e5,
                                                                  "contact.implicit": True}))
    get_formulation("bushing").check(scenario("bushing", options={"bushing.k": [1e9, 1e8, 1e9],
                                                                  "bushing.k_rot": 1e6}))


@pytest.fixture(scope="module")
def short_runs():
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # links' redundant loop rows
        for fid in ("links", "penalty", "bushing"):
            p = prepare(scenario(fid, record=("chassis.*", "left.shoe[*", "right.shoe[*")))
            out[fid] = (p, p.sim.run(0.02).frame())
    return out


def test_compliant_pins_record_links_series_and_no_joint_rows_for_the_pins(short_runs):
    links_cols = set(short_runs["links"][1].columns)
    for fid in ("penalty", "bushing"):
        p, df = short_runs[fid]
        assert {"left.shoe[3].pin.force.x", "left.shoe[3].tension", "chassis.pos.z"} <= set(df.columns)
        missing = {c for c in links_cols if c.startswith(("left.shoe", "right.shoe", "chassis"))} - set(df.columns)
        assert not missing, sorted(missing)[:5]
        s = p.sim.system
        assert not any(n.endswith(".pin") for n in s.joint_names)
        # the pins' rows are gone: links has 5 per pin less those its loops make redundant
        assert s.nc < short_runs["links"][0].sim.system.nc and not s.removed_rows


def test_shoe_tensions_follow_the_ideal_pins(short_runs):
    """20 ms after the assembly (tensioned loop, falling the 5 mm drop): each side's mean shoe tension within
    8 % of the ideal pins' (measured 1.4 % left, 5.0 % right). Shoe by shoe they differ more (up to 10 kN of
    47 kN near the right sprocket): the loop's load sharing between the sprocket teeth is statically
    indeterminate and depends on the pins' compliance, and the pins' longitudinal waves are still ringing."""
    ref = short_runs["links"][1]
    for side in ("left", "right"):
        cols = [c for c in ref.columns if c.startswith(side) and c.endswith(".tension")]
        T_ref = ref[cols].to_numpy()[-1].mean()
        assert T_ref > 1e3  # a tensioned loop
        for fid in ("penalty", "bushing"):
            T = short_runs[fid][1][cols].to_numpy()[-1].mean()
            assert T == pytest.approx(T_ref, rel=0.08), (fid, side, T, T_ref)
