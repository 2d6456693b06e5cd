"""The M113 under non-smooth contact (issue #29, docs/contact-nsc.md): the links fidelity's
``contact.method = "nsc"``."""

from __future__ import annotations

import numpy as np
import pytest

import trackdyn as td
from trackdyn.sim.run import prepare

NSC = {"contact.method": "nsc"}


def test_contact_method_is_refused_by_name_before_anything_is_built():
    """A bad method names the field, the value and the choices when the scenario is made; options and
    integrators of the other method, and terrains NSC does not support, are refused at the check."""
    with pytest.raises(ValueError, match=r"contact\.method'\] = 'rigid': choose one of \['smc', 'nsc'\]"):
        td.Scenario(vehicle="m113", options={"contact.method": "rigid"})
    sc = td.Scenario(vehicle="m113", options=NSC)
    assert (sc.integrator, sc.step) == ("nsc-euler", 1e-3)  # issue #29's vehicle step
    assert td.Scenario(vehicle="m113").integrator != "nsc-euler"
    for scenario, msg in (
            (td.Scenario(vehicle="m113", options={**NSC, "contact.implicit": False}), "smooth-contact options"),
            (td.Scenario(vehicle="m113", options=NSC, integrator="euler-implicit-linearized"),
             "steps with 'nsc-euler' only"),
            (td.Scenario(vehicle="m113", integrator="nsc-euler"), "accepts"),
            (td.Scenario(vehicle="m113", options=NSC, terrain=td.terrain.Step(height=0.3, x=5.0)),
             "terrain part .* is not supported"),
    ):
        with pytest.raises(ValueError, match=msg):
            prepare(scenario)  # the fidelity's check runs before the vehicle is built
