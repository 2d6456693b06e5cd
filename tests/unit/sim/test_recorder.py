"""The recorder's compiled gather against its NumPy oracle (:meth:`Recorder.gather_python`), value for value."""

import numpy as np
import pytest

import trackdyn as td


class Odometer:
    """A force provider whose outputs live in a float32 array (not a flat float64 buffer: staged) and in a
    strided view of a 2-D buffer (resolved to the buffer's flat base)."""

    name = "odometer"

    def __init__(self):
        self.out32 = np.zeros(2, dtype=np.float32)
        self.table = np.zeros((3, 4))

    def coupling_pairs(self):
        return []

    def bind(self, system):
        pass

    def initial_extra(self):
        return {}

    def accumulate(self, ctx):
        self.out32[:] = ctx.state.q[0, 0], ctx.t
        self.table[:, 1] = ctx.state.q[0, :3]

    def commit(self, state):
        pass

    def series(self):
        col = self.table[:, 1]
        return {"odometer.x32": (self.out32, 0), "odometer.t32": (self.out32, 1),
                **{f"odometer.p{k}": (col, k) for k in range(3)}}


def _model():
    m = td.Model()
    a = m.add_body("a", mass=1.0, inertia=[0.1, 0.1, 0.1], pos=[0.4, 0, 0])
    b = m.add_body("b", mass=2.0, inertia=[0.1, 0.2, 0.1], pos=[0.8, 0, -0.1])
    m.add_joint(td.Revolute(m.ground, a, point=[0, 0, 0], axis=[0, 1, 0], name="pin"))
    m.add_force(td.TSDA(a, b, [0.4, 0, 0], [0.8, 0, -0.1], stiffness=300.0, damping=2.0, free_length=0.3,
                        name="spring"))
    m.add_force(td.Bushing(a, b, point=[0.6, 0, -0.05], stiffness=1e3, damping=1.0, rot_stiffness=50.0,
                           name="bush"))
    m.add_marker("tip", a, [0.3, 0, 0])
    return m


def _run(compiled, record=None, t_end=0.3):
    sim = td.Simulation(_model(), step=2e-3, output_step=1e-2, record=record, providers=(Odometer(),))
    sim.recorder.compiled = compiled
    sim.recorder.chunk_rows = 8  # several chunks: the gather writes into fresh buffers
    return sim, sim.run(t_end)


@pytest.mark.parametrize("record", [None, ["a.*", ("pin.force.*", 0.03), ("odometer.*", 0.05), ("spring.*", 0.02)]])
def test_compiled_gather_reproduces_the_python_gather(record):
    sim_c, comp = _run(True, record)
    sim_p, py = _run(False, record)
    assert comp.columns == py.columns and len(comp.columns) > 20
    assert {"odometer.x32", "odometer.p2"} <= set(comp.columns)
    assert sim_c.recorder._staged and len(sim_c.recorder._staged) == 2  # the float32 outputs
    assert np.array_equal(comp.t, py.t)
    assert np.array_equal(comp.values, py.values, equal_nan=True)
    assert np.array_equal(sim_c.recorder._extent, sim_p.recorder._extent)
    if record is not None:  # decimated series hold NaN between their samples, in both
        assert np.isnan(comp["odometer.x32"]).sum() == np.isnan(py["odometer.x32"]).sum() > 0
    # and the series hold what they name
    assert np.allclose(comp["odometer.p0"][~np.isnan(comp["odometer.p0"])],
                       comp["a.pos.x"][~np.isnan(comp["odometer.p0"])])


def test_compiled_gather_on_the_massless_m113_is_the_python_gather():
    """Every series of the massless M113 (bodies, track outputs, drivetrain, markers), compiled and NumPy."""
    from trackdyn.driver import PID
    from trackdyn.sim.run import prepare
    from trackdyn.spec.scenario import Scenario

    sc = Scenario(vehicle="m113", driver=PID(speed=4.2, y=0.0, delay=0.0), t_end=0.3, step=0.01,
                  output_step=0.01, speed=4.2, name="cruise", fidelity="massless")
    out = []
    for compiled in (True, False):
        prep = prepare(sc)
        prep.sim.recorder.compiled = compiled
        out.append(prep.sim.run(sc.t_end))
    comp, py = out
    assert comp.columns == py.columns and len(comp.columns) > 400
    assert np.array_equal(comp.t, py.t) and np.array_equal(comp.values, py.values, equal_nan=True)


def test_a_state_in_another_layout_is_gathered_the_same():
    """Non-contiguous state arrays (a view) are copied before the typed entry point, never misread."""
    sim, _ = _run(True, t_end=0.02)
    rec = sim.recorder
    st = sim.state.copy()
    wide = np.zeros((st.q.shape[0], 14))
    wide[:, ::2] = st.q
    st.q = wide[:, ::2]  # strided
    n = rec._n
    rec.sample(st)
    got = rec._buf[:, n].copy()
    rec._n = n
    rec.compiled = False
    rec.sample(st)
    assert np.array_equal(got, rec._buf[:, n], equal_nan=True)
