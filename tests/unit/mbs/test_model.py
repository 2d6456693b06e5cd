

def test_a_model_owns_its_gravity_vector():
    """Changing one model's gravity in place must not change the default for models made afterwards."""
    import numpy as np

    from trackdyn.conventions import GRAVITY
    from trackdyn.mbs import Model

    m = Model()
    m.gravity[:] = (0.0, 0.0, -1.62)
    assert np.array_equal(GRAVITY, [0.0, 0.0, -9.81])
    assert np.array_equal(Model().gravity, [0.0, 0.0, -9.81])
