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
            (td.Scenario(vehicle="m113", options=NSC,
                         terrain=td.terrain.HeightField([-20.0, 20.0], [-5.0, 5.0], np.zeros((2, 2)))),
             "terrain part HeightField is not supported .*mesh terrains"),
    ):
        with pytest.raises(ValueError, match=msg):
            prepare(scenario)  # the fidelity's check runs before the vehicle is built


def _settle(options, step, t_end):
    """The M113 dropped on flat ground (no throttle, no brake) for ``t_end`` s: (prep, result, per-step rows
    (t, total contact force z on the vehicle, N; vertical momentum of all bodies, kg m/s))."""
    import warnings

    from trackdyn.driver import Idle

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the redundant pin rows closing each track loop (expected)
        p = prepare(td.Scenario(vehicle="m113", driver=Idle(), t_end=t_end, step=step, output_step=1e-2,
                                options=options))
    mass = np.asarray(p.sim.system.mass, float)
    rows = []

    def cb(sim):
        # per-body contact totals of the step (NSC: impulse / h); contacts between two vehicle bodies cancel,
        # the last row is the ground's
        rows.append((sim.state.t, p.contact.body_out[:-1, 2].sum(), float(mass @ sim.state.v[:, 2])))
        return False

    res = p.sim.run(t_end, callback=cb)
    assert res.status == "complete"
    return p, res, np.array(rows)


def test_m113_settles_on_rigid_ground_under_nsc():
    """The M113 on flat ground under NSC (h = 2e-3, APGD to 1e-5 m/s, Anitescu friction) against SMC
    (h = 5e-4), 0.5 s after the drop.

    - Vertical balance: the ground's contact force on the vehicle, summed over its shoes, equals the weight
      plus the rate of the vehicle's vertical momentum, to 0.1 % of the weight over the last 0.3 s
      (measured 4e-5 at 1.5 s). Neither vehicle is at rest by then: their bounce on the suspension decays
      over seconds (at 1.5 s the window mean is still 0.1-0.3 % off the weight under NSC, from the momentum
      term, docs/contact-nsc.md), so the momentum term is kept rather than asserting rest.
    - Rigid contact: no road wheel sinks into its shoe nor the shoe into the ground (the wheel centre no
      lower than wheel radius + shoe height by 1 mm; measured: none lower, the lightly loaded ones up to 2 mm
      higher in the remaining bounce), where SMC's soft pads and wheel contacts compress 15-35 mm (measured
      22-28 mm; the thesis's calibrated ~25 mm).
    - So the chassis stands higher under NSC by SMC's mean wheel deflection: the difference of the chassis
      heights (means over the last 0.1 s) is SMC's mean deflection to 3 mm, the two vehicles' remaining
      bounce (1-3 mm each at 0.5 s; measured: 23.89 mm against 24.02 mm at 0.5 s, 23.0 against 24.8 mm at
      1.5 s).
    """
    nsc_opts = {**NSC, "contact_solver": "apgd", "contact_tolerance": 1e-5, "friction": "anitescu"}
    t_end = 0.5
    p, res, rows = _settle(nsc_opts, 2e-3, t_end)
    assert p.sim.integrator.name == "nsc-euler"
    g = 9.81
    W = float(np.sum(p.sim.system.mass)) * g
    t, F, P = rows.T
    h = p.sim.h
    win = t > t_end - 0.3 + 1e-9
    i0, i1 = np.nonzero(win)[0][0] - 1, np.nonzero(win)[0][-1]
    T = t[i1] - t[i0]
    balance = (F[win].sum() * h - W * T - (P[i1] - P[i0])) / (W * T)
    assert abs(balance) < 1e-3, balance
    spec = p.spec
    top = spec.suspension.wheel_radius + spec.shoes.top + spec.shoes.bottom
    wheels = [w for side in p.vehicle.sides.values() for w in side.wheels]
    defl_nsc = np.array([top - res[w + ".pos.z"][-1] for w in wheels])
    # no compression (the contacts are rigid: penetration within the solver's tolerance); lifts of up to 2 mm
    # are the bounce (measured at 0.5 s: -2.0 to 0.0 mm)
    assert np.all((defl_nsc < 1e-3) & (defl_nsc > -5e-3)), defl_nsc
    ps, rs, _ = _settle({}, 5e-4, t_end)
    defl_smc = np.array([top - rs[w + ".pos.z"][-1] for w in wheels])
    assert np.all((defl_smc > 0.015) & (defl_smc < 0.035)), defl_smc
    z_nsc = res["chassis.pos.z"][res.t > t_end - 0.1 + 1e-9].mean()
    z_smc = rs["chassis.pos.z"][rs.t > t_end - 0.1 + 1e-9].mean()
    print(f"\nNSC: ground force balance {balance:+.2e} W (window mean {F[win].mean() / W - 1:+.2e} W); "
          f"chassis z NSC {z_nsc:.5f} m, SMC {z_smc:.5f} m, difference {1e3 * (z_nsc - z_smc):.2f} mm; "
          f"SMC mean wheel deflection {1e3 * defl_smc.mean():.2f} mm, NSC {1e3 * defl_nsc.mean():.3f} mm")
    assert abs((z_nsc - z_smc) - defl_smc.mean()) < 3e-3


def test_command_line_passes_contact_method_to_the_scenario():
    """``--set contact.method=...`` on ``trackdyn run`` and ``trackdyn event`` reaches the scenario's options:
    a bad value comes back with the field, the value and the choices, exit code 1, before anything runs."""
    from typer.testing import CliRunner

    from trackdyn.cli.main import app

    for args in (["run", "settle", "--set", "contact.method=rigid"],
                 ["event", "step-climb", "--values", "0.3", "--set", "contact.method=rigid"]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 1, (args, r.output)
        assert "contact.method'] = 'rigid': choose one of ['smc', 'nsc']" in r.output, r.output


def test_vehicle_nsc_solves_to_the_vehicle_tolerance_unless_told():
    """On the vehicle the contact solver stops at 1e-5 m/s with a cap of 5 000 iterations (nsc-euler's own
    1e-9 m/s is out of the M113's reach: every round at the cap), with a contact compliance of 1e-7 m/N (rigid,
    a track jams on a step's edge); a scenario's own values win."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        it = prepare(td.Scenario(vehicle="m113", options=NSC)).sim.integrator
        assert (it.method, it.tol, it.max_iter, it.compliance, it.compliance_on) == ("newton", 1e-5, 5000, 1e-7,
                                                                                   "terrain")
        it = prepare(td.Scenario(vehicle="m113", options={**NSC, "contact_tolerance": 1e-6, "contact_compliance": 0.0,
                                                          "contact_max_iterations": 700,
                                                          "contact_solver": "apgd"})).sim.integrator
        assert (it.method, it.tol, it.max_iter, it.compliance) == ("apgd", 1e-6, 700, 0.0)


def test_event_set_passes_integrator_options_to_the_stepper():
    """``--set integrator.NAME=VALUE`` on ``trackdyn event`` reaches the stepper's options: a bad contact solver
    comes back naming the option and the choices, exit code 1, before anything runs."""
    from typer.testing import CliRunner

    from trackdyn.cli.main import app

    r = CliRunner().invoke(app, ["event", "step-climb", "--values", "0.3", "--set", "contact.method=nsc",
                                 "--set", "integrator.contact_solver=pgs"])
    assert r.exit_code == 1, r.output
    assert "contact_solver must be one of" in r.output and "'pgs'" in r.output, r.output
