"""Results folders: streaming in chunks, atomic finalisation, decimation, lazy loading, scene and summary."""

import json
import tracemalloc

import numpy as np
import pyarrow.parquet as pq
import pytest

import trackdyn as td
from trackdyn.io.results import INCOMPLETE_MARKER, is_complete, load, match_series, write_summary
from trackdyn.io.scene import terrain_to_scene
from trackdyn.sim.recorder import parse_record
from trackdyn.testing import problems as P
from trackdyn.viz import shapes as S


def chain_sim(n=4, **kw):
    return td.Simulation(P.chain(n_links=n, mass=1.0, pitch=0.2, inertia=(0.01, 0.01, 0.01)), step=2e-3,
                         output_step=1e-2, **kw)


def test_streamed_run_equals_the_in_memory_run(tmp_path):
    mem = chain_sim().run(0.5)
    sim = chain_sim()
    sim.recorder.chunk_rows = 7  # several row groups
    res = sim.run(0.5, out=tmp_path / "run")
    assert res.path == tmp_path / "run" and res.status == "complete"
    assert pq.ParquetFile(tmp_path / "run" / "timeseries.parquet").metadata.num_row_groups == 8  # ceil(51 / 7)
    assert res.columns == mem.columns
    assert np.array_equal(res.t, mem.t) and np.array_equal(res.values, mem.values)
    back = td.load(tmp_path / "run")
    assert np.array_equal(back["link[3].pos.z"], mem["link[3].pos.z"])
    assert np.array_equal(back.values, mem.values)
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["n_samples"] == 51 and meta["n_series"] == len(mem.columns) and meta["status"] == "complete"
    assert not (tmp_path / "run" / INCOMPLETE_MARKER).exists()
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["metadata.json", "timeseries.parquet"]


def test_default_chunks_grow_from_128_samples(tmp_path):
    """Default chunking: 128 samples, then twice as many each time, up to about 64 MB; the samples are the
    same streamed or in memory."""
    mem = chain_sim().run(5.0)  # 501 samples
    sim = chain_sim()
    assert sim.recorder.chunk_rows == min((1 << 23) // (len(sim.recorder.columns) + 1), 65536)
    res = sim.run(5.0, out=tmp_path / "run")
    md = pq.ParquetFile(tmp_path / "run" / "timeseries.parquet").metadata
    assert [md.row_group(k).num_rows for k in range(md.num_row_groups)] == [128, 256, 117]
    assert np.array_equal(res.t, mem.t) and np.array_equal(td.load(tmp_path / "run").values, mem.values)


def _peak_python_memory(run):
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_of_a_streamed_run_stays_flat(tmp_path):
    """Peak Python memory of a streamed run does not grow with its length; an in-memory run's does."""
    def streamed(t_end, k):
        def go():
            sim = chain_sim(n=8)
            sim.recorder.chunk_rows = 64
            sim.run(t_end, out=tmp_path / f"s{k}")
        return go

    def in_memory(t_end):
        return lambda: chain_sim(n=8).run(t_end)

    chain_sim(n=8).run(0.02)  # compile and warm caches outside the measurement
    short_s, long_s = _peak_python_memory(streamed(2.0, 0)), _peak_python_memory(streamed(8.0, 1))
    short_m, long_m = _peak_python_memory(in_memory(2.0)), _peak_python_memory(in_memory(8.0))
    row_bytes = 8 * (1 + 8 * 22)
    assert long_m - short_m > 0.8 * 600 * row_bytes  # 600 more samples are held in memory...
    assert long_s - short_s < 0.1 * (long_m - short_m)  # ...but not when streamed


def test_a_crash_leaves_the_folder_marked_incomplete(tmp_path):
    d = tmp_path / "run"
    chain_sim().run(0.1, out=d)
    assert is_complete(d)

    def boom(sim):
        if sim.state.t > 0.05:
            raise RuntimeError("solver exploded")

    with pytest.raises(RuntimeError, match="exploded"):
        chain_sim().run(0.2, callback=boom, out=d)
    assert not is_complete(d)
    assert "solver exploded" in (d / INCOMPLETE_MARKER).read_text()
    with pytest.raises(FileNotFoundError, match="incomplete.*stopped before it finished"):
        td.load(d)
    # the partial samples are kept under the temporary name and readable
    part = pq.read_table(d / ".timeseries.parquet.partial")
    assert 0 < part.num_rows < 21
    # a new complete run makes the folder whole again
    chain_sim().run(0.1, out=d)
    assert is_complete(d) and not (d / INCOMPLETE_MARKER).exists()


def test_a_stopped_run_is_complete_with_its_status(tmp_path):
    res = chain_sim().run(0.2, callback=lambda sim: sim.state.t >= 0.1 - 1e-9, out=tmp_path / "r")
    assert res.status == "stopped" and td.load(tmp_path / "r").status == "stopped"
    assert np.isclose(res.t[-1], 0.1)


def test_per_pattern_decimation(tmp_path):
    sim = chain_sim(record=["link[0].pos.*", ("pin[*].force.*", 0.05), ("link[3].vel.z", 0.1)])
    res = sim.run(0.5, out=tmp_path / "r")
    assert len(res.t) == 51
    t, y = res.series("pin[2].force.z")
    assert np.allclose(t, np.arange(0, 0.5001, 0.05))
    assert np.isnan(res["pin[2].force.z"]).sum() == 51 - 11
    t3, _ = res.series("link[3].vel.z")
    assert np.allclose(t3, np.arange(0, 0.5001, 0.1))
    full = chain_sim().run(0.5)
    k = np.searchsorted(full.t, t - 1e-9)
    assert np.array_equal(full["pin[2].force.z"][k], res.series("pin[2].force.z")[1])
    assert json.loads((tmp_path / "r" / "metadata.json").read_text())["record"][1] == {
        "pattern": "pin[*].force.*", "interval_s": 0.05}


def test_global_decimation_writes_only_due_rows():
    res = chain_sim(record=[("*", 0.1)]).run(0.5)
    assert np.allclose(res.t, np.arange(0, 0.5001, 0.1)) and not np.isnan(res.values).any()


@pytest.mark.parametrize("record, msg", [
    ([("x", -1.0)], "positive"),
    ([("x", "fast")], "number of seconds"),
    ([3], "neither a pattern"),
    ([], "no pattern"),
])
def test_bad_record_entries(record, msg):
    with pytest.raises(ValueError, match=msg):
        parse_record(record)


def test_bad_chunk_rows():
    with pytest.raises(ValueError, match="chunk_rows"):
        chain_sim().recorder.chunk_rows = 0


def test_a_pattern_matching_nothing_warns_and_none_matching_raises():
    with pytest.warns(UserWarning, match="nothing.pos"):
        chain_sim(record=["link[0].pos.z", "nothing.pos"])
    with pytest.raises(ValueError, match="no series matches"):
        chain_sim(record=["nothing.*"])


def test_scene_is_stored_and_poses_of_drawn_bodies_are_recorded(tmp_path):
    m = P.chain(n_links=3, mass=1.0, pitch=0.2, inertia=(0.01, 0.01, 0.01))
    m.add_visual("link[1]", S.Box(size=(0.2, 0.1, 0.05), color="#123456"))
    m.add_visual(m.ground, S.Sphere(0.05))
    sim = td.Simulation(m, step=2e-3, output_step=1e-2, record=["pin[0].force.z"])
    terrain = {"type": "profile", "x": [0, 1, 1, 2], "z": [0, 0, 0.5, 0.5]}
    sim.recorder.open(tmp_path / "r", terrain=terrain, summary={"limit_m": 0.61})
    res = sim.run(0.1)
    assert set(res.columns) == {"pin[0].force.z"} | {f"link[1].pos.{c}" for c in "xyz"} | {
        f"link[1].quat.e{k}" for k in range(4)}
    back = td.load(tmp_path / "r")
    assert back.scene["bodies"] == [{"name": "link[1]", "mass": 1.0, "shapes": [
        S.Box(size=(0.2, 0.1, 0.05), color="#123456").to_dict()]}]
    assert back.scene["ground_shapes"][0]["type"] == "sphere"
    assert back.scene["terrain"]["x"] == [0, 1, 1, 2] and back.scene["terrain"]["y"] == [-2.0, 2.0]
    assert back.summary == {"limit_m": 0.61}
    assert S.shape_from_dict(back.scene["bodies"][0]["shapes"][0]) == S.Box(size=(0.2, 0.1, 0.05), color="#123456")


def test_a_terrain_with_a_profile_is_drawn_over_the_run(tmp_path):
    """A terrain exposing profile(x0, x1) (trackdyn.terrain.Terrain) is sampled over the bodies' range."""
    calls = []

    class Ramp:
        def profile(self, x0, x1, y=0.0, n=50):
            calls.append((x0, x1))
            x = np.linspace(x0, x1, n)
            return x, 0.1 * x - 2.0

    sim = chain_sim()
    sim.recorder.open(tmp_path / "r", terrain=Ramp())
    sim.run(0.1)
    ter = td.load(tmp_path / "r").scene
    assert ter is not None and ter["terrain"]["name"] == "Ramp"
    (x0, x1), = calls
    res = td.load(tmp_path / "r")
    xs = np.concatenate([res[f"link[{k}].pos.x"] for k in range(4)])
    assert np.isclose(x0, xs.min() - 10.0) and np.isclose(x1, xs.max() + 10.0)  # the run's range + 10 m
    assert np.allclose(ter["terrain"]["z"], 0.1 * np.asarray(ter["terrain"]["x"]) - 2.0)


def test_a_bad_terrain_costs_the_scene_not_the_run(tmp_path):
    sim = chain_sim()
    sim.recorder.open(tmp_path / "r", terrain={"type": "profile", "x": [0, 1], "z": [0, 0]})
    sim.recorder._terrain = {"type": "lava"}
    res = sim.run(0.05)
    assert res.status == "complete" and td.load(tmp_path / "r").scene is None
    assert any("scene.json not written" in w for w in res.metadata["warnings"])


def test_terrain_from_a_force_provider_is_found():
    from trackdyn.io.scene import find_terrain

    class Ground:
        def to_scene(self):
            return {"type": "profile", "x": [0, 3], "z": [0, 0.3], "name": "ramp"}

    class Provider:
        terrain = Ground()

    class System:
        providers = [object(), Provider()]

    class Profiled:
        def profile(self, x0, x1):
            return [x0, x1], [0.0, 0.0]

    class Provider2:
        terrain = Profiled()

    class System2:
        providers = [Provider2()]

    assert isinstance(find_terrain(System2()), Profiled)
    t = find_terrain(System())
    assert terrain_to_scene(t) == {"type": "profile", "x": [0.0, 3.0], "z": [0.0, 0.3], "y": [-2.0, 2.0],
                                   "name": "ramp"}


@pytest.mark.parametrize("terrain, msg", [
    ({"type": "profile", "x": [0, 1], "z": [0]}, "x has 2 points and z 1"),
    ({"type": "profile", "x": [0, np.nan], "z": [0, 0]}, "finite"),
    ({"type": "heightfield", "x": [0, 1], "y": [0, 1], "z": [[0, 0]]}, "shape"),
    ({"type": "lava"}, "unknown type"),
    (42, "expected a dict"),
])
def test_bad_terrains(terrain, msg):
    with pytest.raises(ValueError, match=msg):
        terrain_to_scene(terrain)


def test_result_api_is_backward_compatible(tmp_path):
    res = td.Result([0.0, 0.1], ["a.pos.x", "b.force"], [[1.0, 2.0], [3.0, 4.0]], {"status": "complete"})
    assert list(res["a.pos.x"]) == [1.0, 3.0] and "t" in res and "b.force" in res and "c" not in res
    assert list(res.frame().columns) == ["t", "a.pos.x", "b.force"]
    res.save(tmp_path / "r")
    back = td.load(tmp_path / "r")
    assert back.values.tolist() == [[1.0, 2.0], [3.0, 4.0]] and back.metadata["n_samples"] == 2
    with pytest.raises(KeyError, match="no series"):
        back["nope"]
    back.metadata["note"] = "re-saved"
    back.save(tmp_path / "r")  # same folder: metadata refreshed, samples untouched
    assert td.load(tmp_path / "r").metadata["note"] == "re-saved"
    back.save(tmp_path / "copy")
    assert td.load(tmp_path / "copy").values.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_load_selects_series_and_accepts_the_file_path(tmp_path):
    chain_sim().run(0.1, out=tmp_path / "r")
    res = load(tmp_path / "r" / "timeseries.parquet", series=["link[1].pos.*"])
    assert res.columns == ["link[1].pos.x", "link[1].pos.y", "link[1].pos.z"]
    with pytest.raises(ValueError, match="no series"):
        load(tmp_path / "r", series="zzz")
    with pytest.raises(FileNotFoundError, match="no such results folder"):
        load(tmp_path / "missing")


def test_match_series_treats_brackets_literally():
    cols = ["left.roadwheel[0].pos.z", "left.roadwheel[1].pos.z", "left.roadwheel0.pos.z"]
    assert match_series(cols, "left.roadwheel[*].pos.z") == cols[:2]
    assert match_series(cols, ["left.roadwheel[1].pos.z"]) == [cols[1]]


def test_write_summary_is_atomic_json(tmp_path):
    write_summary(tmp_path, {"limit_m": 0.6, "trials": [0.5, 0.7]})
    assert json.loads((tmp_path / "summary.json").read_text()) == {"limit_m": 0.6, "trials": [0.5, 0.7]}
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]
    with pytest.raises(ValueError, match="dict"):
        write_summary(tmp_path, [1, 2])
