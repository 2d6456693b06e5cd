"""The events' default step per fidelity, and sweep folders that know the step their points ran at."""

import json

import pytest

import trackdyn as td
from trackdyn.experiments.events import _Context
from trackdyn.experiments.sweep import normalised_identity, run_sweep, sweep_from_dict
from trackdyn.formulations.contract import event_step, get_formulation


def test_links_events_run_at_their_converged_step_and_scenarios_at_the_default():
    # docs/events.md, "The time step of the events": 5e-4 s moves the step, gap and 8 in answers; 2.5e-4 agrees
    # with 1e-4 s. Scenarios keep the default step; NSC contact keeps its own; the massless model its 10 ms.
    assert get_formulation("links").info.default_step == 5e-4
    assert event_step("links") == 2.5e-4 == td.events.DEFAULT_STEP
    assert event_step("links", {"contact.method": "nsc"}) == get_formulation("links").defaults(
        {"contact.method": "nsc"})[1] == 1e-3
    assert event_step("massless") == get_formulation("massless").info.default_step == 1e-2
    assert _Context("step-climb", "m113", "links", None, 0.01, None, None, None, None).step == 2.5e-4
    assert _Context("step-climb", "m113", "links", 5e-4, 0.01, None, None, None, None).step == 5e-4
    # an event's scenario_options are Scenario fields: NSC is their options' contact.method
    nsc = {"options": {"contact.method": "nsc"}}
    assert _Context("step-climb", "m113", "links", None, 0.01, None, None, None, nsc).step == 1e-3
    listing = get_formulation("links").info.to_dict()
    assert listing["default_step_s"] == 5e-4 and listing["event_step_s"] == 2.5e-4


BASE = {"vehicle": "m113", "event": "step-climb", "grid": {"sprocket.dx": [0.0]},
        "options": {"search": "values", "values": [0.1]}}


def test_a_sweep_identity_names_the_step_its_points_run_at():
    assert sweep_from_dict(BASE).identity()["step"] == 2.5e-4
    pinned = sweep_from_dict({**BASE, "options": {**BASE["options"], "step": 5e-4}})
    assert pinned.identity()["step"] == 5e-4 and "step" not in pinned.identity()["options"]
    swept = sweep_from_dict({**BASE, "grid": {"event.step": [5e-4, 1e-3]}})
    assert swept.identity()["step"] is None
    assert sweep_from_dict({**BASE, "fidelity": "massless"}).identity()["step"] == 1e-2


def test_a_folder_of_an_older_default_step_is_not_continued_at_the_new_one(tmp_path):
    # a manifest written before the identity named its step: its points ran at the links default of then (5e-4)
    old = {k: v for k, v in sweep_from_dict(BASE).identity().items() if k != "step"}
    assert normalised_identity(old)["step"] == 5e-4
    assert normalised_identity({**old, "options": {**old["options"], "step": 1e-3}})["step"] == 1e-3
    (tmp_path / "manifest.json").write_text(json.dumps({"identity": old}))
    with pytest.raises(ValueError, match=r"step differ: the folder's step = 0.0005, this sweep's step = 0.00025"):
        run_sweep(sweep_from_dict(BASE), tmp_path)
