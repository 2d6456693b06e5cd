"""A vehicle on Winkler ground (issue #31 item 3): the M113 settles on the default soil and the ground
carries its weight; the fidelities that cannot model it say so.

The run is 3 s simulated at the links fidelity's own step (about 1.5 min of wall time on a loaded
2-core machine).
"""

import numpy as np
import pytest

import trackdyn as td
from trackdyn.driver import Brake
from trackdyn.sim.run import prepare

G = 9.81


def _ground_force_z(prep):
    """Vertical force of the ground on the vehicle, N (sum over the active terrain contacts)."""
    c = prep.contact.contacts()
    on_ground = c["target"] >= prep.contact.n_shapes
    f = c["normal"] * c["normal_force"][:, None] + c["tangential_force"]  # on side B, the ground
    return -float(f[on_ground, 2].sum()), c["penetration"][on_ground]


def test_m113_settles_on_winkler_ground_carrying_its_weight():
    """Brakes on, dropped 5 mm onto the default soil (medium dense sand, k_w 2.77e7 N/m³): over the last
    second of a 3 s settle the ground's vertical force, averaged, equals the weight of every body within
    0.5 %, and the pads sink by millimetres (the track's mean pressure over k_w: ~1e5 N over ~2 m² of
    two track contact patches gives ~2 mm; the pads under the road wheels carry more)."""
    sc = td.Scenario(vehicle="m113", driver=Brake(), t_end=3.0, output_step=0.05,
                     options={"terrain.ground": "winkler"})
    prep = prepare(sc)
    weight = float(np.sum(prep.sim.system.mass)) * G
    forces = []

    def collect(sim):
        if sim.state.t >= 2.0 - 1e-9:
            forces.append(_ground_force_z(prep)[0])
        return False

    res = prep.sim.run(sc.t_end, callback=collect)
    assert res.status == "complete"
    mean = float(np.mean(forces))
    assert abs(mean / weight - 1) < 0.005, (mean, weight)
    _, pen = _ground_force_z(prep)
    assert 1e-4 < pen.max() < 0.02
    # a Winkler contact: the pads' bottom-face probes, several per pad, carry the load
    assert len(pen) > 100


def test_massless_refuses_winkler_ground():
    sc = td.Scenario(vehicle="robot", fidelity="massless", driver=Brake(), t_end=0.1, step=5e-3,
                     output_step=0.05, options={"terrain.ground": "winkler"})
    with pytest.raises(ValueError, match=r"massless.*Winkler ground.*'medium-dense-sand'.*links"):
        prepare(sc)


def test_nsc_contact_refuses_winkler_ground():
    sc = td.Scenario(vehicle="m113", driver=Brake(), t_end=0.1,
                     options={"terrain.ground": "winkler", "contact.method": "nsc"})
    with pytest.raises(ValueError, match=r"Winkler .* compliant-contact laws; NSC contact is rigid"):
        prepare(sc)
