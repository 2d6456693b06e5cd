"""Results folders: streaming in chunks, atomic finalisation, decimation, lazy loading, scene and summary."""

import json
import os
import tracemalloc
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import trackdyn as td
from trackdyn.io.results import (INCOMPLETE_MARKER, ResultWriter, is_complete, load, match_series, part_files,
                                 write_summary)
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
    parts = part_files(tmp_path / "run")
    assert [p.name for p in parts] == [f"part-{k:05d}.parquet" for k in range(8)]  # a chunk a part by default
    assert [pq.ParquetFile(p).metadata.num_rows for p in parts] == [7] * 7 + [2]  # 51 samples
    assert res.columns == mem.columns
    assert np.array_equal(res.t, mem.t) and np.array_equal(res.values, mem.values)
    back = td.load(tmp_path / "run")
    assert np.array_equal(back["link[3].pos.z"], mem["link[3].pos.z"])
    assert np.array_equal(back.values, mem.values)
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["n_samples"] == 51 and meta["n_series"] == len(mem.columns) and meta["status"] == "complete"
    assert meta["timeseries"] == {"layout": "dataset", "parts": 8}
    assert not (tmp_path / "run" / INCOMPLETE_MARKER).exists()
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["metadata.json", "timeseries.parquet"]


def test_a_run_split_into_parts_reads_back_as_one_table(tmp_path):
    """51 samples in parts of 20 (chunks of 7 split at the parts' ends): pandas, pyarrow.dataset and td.load
    read the folder as the in-memory run, bit for bit."""
    import pandas as pd
    import pyarrow.dataset as ds

    mem = chain_sim().run(0.5)
    sim = chain_sim()
    sim.recorder.chunk_rows = 7
    sim.recorder.part_rows = 20
    sim.run(0.5, out=tmp_path / "run")
    parts = part_files(tmp_path / "run")
    assert [p.name for p in parts] == [f"part-0000{k}.parquet" for k in range(3)]
    assert [pq.ParquetFile(p).metadata.num_rows for p in parts] == [20, 20, 11]
    assert sorted(p.name for p in (tmp_path / "run" / "timeseries.parquet").iterdir()) == [p.name for p in parts]
    assert json.loads((tmp_path / "run" / "metadata.json").read_text())["timeseries"]["parts"] == 3
    df = pd.read_parquet(tmp_path / "run" / "timeseries.parquet")
    assert list(df.columns) == ["t"] + mem.columns
    assert np.array_equal(df["t"].to_numpy(), mem.t) and np.array_equal(df[mem.columns].to_numpy(), mem.values)
    tab = ds.dataset(tmp_path / "run" / "timeseries.parquet", format="parquet").to_table()
    assert np.array_equal(tab.column("t").to_numpy(), mem.t)
    assert np.array_equal(np.column_stack([tab.column(c).to_numpy() for c in mem.columns]), mem.values)
    back = td.load(tmp_path / "run")
    assert np.array_equal(back.t, mem.t)
    assert np.array_equal(back["link[2].vel.x"], mem["link[2].vel.x"])  # one column, from every part
    assert np.array_equal(back.values, mem.values)
    assert np.array_equal(td.load(tmp_path / "run" / "timeseries.parquet" / "part-00001.parquet").t, mem.t)


def test_parts_are_renamed_into_place_never_visible_half_written(tmp_path, monkeypatch):
    """Every part is written under a hidden temporary name and renamed when closed; during the run the folder
    always reads as the complete parts so far (the open part is invisible to dataset readers)."""
    import pyarrow.dataset as ds

    import trackdyn.io.results as R

    renames = []
    real_replace = os.replace

    def replace(src, dst):
        renames.append((Path(src).name, Path(dst).name))
        return real_replace(src, dst)

    monkeypatch.setattr(R.os, "replace", replace)
    seen = []

    def look(sim):
        folder = tmp_path / "run" / "timeseries.parquet"
        visible = [p for p in folder.iterdir() if not p.name.startswith(".")]
        hidden = [p.name for p in folder.iterdir() if p.name.startswith(".")]
        assert all(pq.ParquetFile(p).metadata.num_rows == 10 for p in visible)  # only closed, whole parts
        assert len(hidden) <= 1 and all(h.endswith(".parquet.tmp") for h in hidden)
        n = ds.dataset(folder, format="parquet").count_rows()
        assert n == 10 * len(visible)
        seen.append(n)

    sim = chain_sim()
    sim.recorder.chunk_rows = 4
    sim.recorder.part_rows = 10
    sim.run(0.5, out=tmp_path / "run", callback=look)
    parts = [r for r in renames if r[1].startswith("part-")]
    assert parts == [(f".part-{k:05d}.parquet.tmp", f"part-{k:05d}.parquet") for k in range(6)]  # 51 samples
    assert sorted(set(seen)) == [0, 10, 20, 30, 40] and sorted(seen) == seen  # 48 samples flushed by the end
    assert not [p for p in (tmp_path / "run" / "timeseries.parquet").iterdir() if p.name.startswith(".")]


def test_old_single_file_results_still_load(tmp_path):
    """A folder written before the dataset layout (one timeseries.parquet file) loads, lazily and by glob."""
    import pyarrow as pa

    mem = chain_sim().run(0.2)
    d = tmp_path / "old"
    d.mkdir()
    table = pa.Table.from_arrays([pa.array(mem.t)] + [pa.array(mem[c]) for c in mem.columns],
                                 names=["t"] + mem.columns)
    pq.write_table(table, d / "timeseries.parquet", row_group_size=7)
    (d / "metadata.json").write_text(json.dumps({"status": "complete", "n_samples": len(mem.t)}))
    for path in (d, d / "timeseries.parquet", d / "metadata.json"):
        res = td.load(path)
        assert np.array_equal(res.t, mem.t) and res.columns == mem.columns
    assert np.array_equal(res["pin[1].force.z"], mem["pin[1].force.z"])
    assert np.array_equal(res.values, mem.values)
    assert list(td.load(d).frame("link[1-2].pos.z").columns) == ["t", "link[1].pos.z", "link[2].pos.z"]
    back = td.load(d)
    back.metadata["note"] = "refreshed"
    back.save(d)  # same folder: metadata refreshed, the old file kept as it is
    assert (d / "timeseries.parquet").is_file() and td.load(d).metadata["note"] == "refreshed"
    back.save(tmp_path / "new")  # another folder: written in the dataset layout
    assert (tmp_path / "new" / "timeseries.parquet").is_dir()
    assert np.array_equal(td.load(tmp_path / "new").values, mem.values)
    chain_sim().run(0.1, out=d)  # a new run replaces the old file by a dataset folder
    assert (d / "timeseries.parquet").is_dir() and len(td.load(d).t) == 11


def test_default_chunks_are_128_samples_then_full(tmp_path):
    """Default chunking: 128 samples, then the full chunk (at most 64 MB, and at most 512 samples unless those are
    under 8 MiB: a run reaches its steady memory once it has written one); the samples are the same streamed or
    in memory."""
    mem = chain_sim().run(5.0)  # 501 samples
    sim = chain_sim()
    n = len(sim.recorder.columns) + 1
    assert sim.recorder.chunk_rows == min((1 << 23) // n, max(512, (1 << 20) // n)) == 11781  # 88 series
    res = sim.run(5.0, out=tmp_path / "run")
    part, = part_files(tmp_path / "run")
    md = pq.ParquetFile(part).metadata
    assert [md.row_group(k).num_rows for k in range(md.num_row_groups)] == [128, 373]
    assert sim.recorder._cap == sim.recorder.chunk_rows
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
    # the samples so far are kept as whole parts, the last one written when the run died, and readable
    assert not [p for p in (d / "timeseries.parquet").iterdir() if p.name.startswith(".")]
    part = pq.read_table(d / "timeseries.parquet")
    assert 0 < part.num_rows < 21
    assert np.allclose(part.column("t").to_numpy(), np.arange(part.num_rows) * 1e-2, rtol=0, atol=1e-12)
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


def test_match_series_treats_brackets_after_a_name_as_indices():
    cols = ["left.roadwheel[0].pos.z", "left.roadwheel[1].pos.z", "left.roadwheel0.pos.z"]
    assert match_series(cols, "left.roadwheel[*].pos.z") == cols[:2]
    assert match_series(cols, ["left.roadwheel[1].pos.z"]) == [cols[1]]


@pytest.mark.parametrize("pattern, expect", [
    ("left.shoe[*].tension", ["left.shoe[0].tension", "left.shoe[9].tension", "left.shoe[10].tension",
                              "left.shoe[12].tension"]),
    ("left.shoe[1?].tension", ["left.shoe[10].tension", "left.shoe[12].tension"]),
    ("left.shoe[9-11].tension", ["left.shoe[9].tension", "left.shoe[10].tension"]),  # integers, not characters
    ("left.shoe[0,12].tension", ["left.shoe[0].tension", "left.shoe[12].tension"]),
    ("*[0].*", ["left.shoe[0].tension", "right.arm[0].pos.x"]),
    ("chassis.pos.[xz]", ["chassis.pos.x", "chassis.pos.z"]),  # after a dot: a character class
    ("chassis.pos.[!x]", ["chassis.pos.y", "chassis.pos.z"]),
    ("chassis.*", ["chassis.pos.x", "chassis.pos.y", "chassis.pos.z"]),
    ("*.pos.x", ["right.arm[0].pos.x", "chassis.pos.x"]),
    ("odd[name", ["odd[name"]),  # an unclosed bracket is literal
    ("pin[front].force", ["pin[front].force"]),
])
def test_match_series_glob_language(pattern, expect):
    cols = ["left.shoe[0].tension", "left.shoe[9].tension", "left.shoe[10].tension", "left.shoe[12].tension",
            "right.arm[0].pos.x", "chassis.pos.x", "chassis.pos.y", "chassis.pos.z", "odd[name", "pin[front].force"]
    assert match_series(cols, pattern) == expect


def test_match_series_refuses_a_backward_range():
    with pytest.raises(ValueError, match="runs backwards"):
        match_series(["a[1]"], "a[3-1]")


def test_frame_selects_series_by_glob_and_reads_only_those(tmp_path, monkeypatch):
    mem = chain_sim().run(0.2)
    df = mem.frame("link[*].pos.z")
    assert list(df.columns) == ["t"] + [f"link[{k}].pos.z" for k in range(4)]
    assert np.array_equal(df["link[2].pos.z"].to_numpy(), mem["link[2].pos.z"])
    chain_sim().run(0.2, out=tmp_path / "r")
    res = td.load(tmp_path / "r")
    read = []
    real = res.prefetch
    monkeypatch.setattr(res, "prefetch", lambda names: (read.extend(names), real(names)))
    lazy = res.frame(["link[0-1].pos.z", "pin[3].force.[xz]"])
    assert list(lazy.columns) == ["t", "link[0].pos.z", "link[1].pos.z", "pin[3].force.x", "pin[3].force.z"]
    assert read == lazy.columns[1:].tolist() and res._values is None  # nothing else was read
    assert np.array_equal(lazy.to_numpy(), mem.frame(lazy.columns[1:].tolist()).to_numpy())
    with pytest.raises(ValueError, match="no series matches"):
        res.frame("wheel*")


def test_write_summary_is_atomic_json(tmp_path):
    write_summary(tmp_path, {"limit_m": 0.6, "trials": [0.5, 0.7]})
    assert json.loads((tmp_path / "summary.json").read_text()) == {"limit_m": 0.6, "trials": [0.5, 0.7]}
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]
    with pytest.raises(ValueError, match="dict"):
        write_summary(tmp_path, [1, 2])


def test_the_writer_keeps_nothing_per_closed_part(tmp_path):
    """Memory flat in the number of parts: after each part closes, the writer holds no Parquet writer and no
    open file, and its own state (counters, names) is the same after 2 parts as after 40.

    pyarrow keeps every row group's metadata of an open file until it closes (bench/README.md, m113-memory),
    so what must not grow is the set of open writers and files, and whatever the writer remembers per part.
    """
    import pickle

    import pyarrow as pa

    cols = [f"s{k}" for k in range(50)]
    w = ResultWriter(tmp_path / "r", cols, part_rows=6)

    def open_files():
        fds = Path("/proc/self/fd")
        return len(list(fds.iterdir())) if fds.exists() else 0

    def own_state():
        return len(pickle.dumps({k: v for k, v in vars(w).items()
                                 if not isinstance(v, (pa.Schema, pq.ParquetWriter))}))

    v = np.arange(3 * len(cols), dtype=float).reshape(3, len(cols))
    seen = {}
    files0 = open_files()
    for k in range(80):  # 3 samples a write, 6 a part: a part closes at every second write
        w.write(np.arange(3.0) + 3 * k, v)
        if k % 2 == 1:
            assert w._writer is None and w._tmp is None  # the part just closed: nothing of it is held
            assert open_files() == files0
            if w.n_parts in (2, 40):
                seen[w.n_parts] = own_state()
        else:
            assert isinstance(w._writer, pq.ParquetWriter) and open_files() == files0 + 1  # one open part
    assert w.n_parts == 40 and abs(seen[40] - seen[2]) <= 8  # counters only: no list of parts or footers
    w.close({"status": "complete"})
    assert len(part_files(tmp_path / "r")) == 40 and len(td.load(tmp_path / "r").t) == 240


def test_writer_refuses_a_bad_part_size(tmp_path):
    with pytest.raises(ValueError, match="part_rows"):
        ResultWriter(tmp_path / "r", ["x"], part_rows=0)


def test_a_result_without_samples_still_names_its_columns(tmp_path):
    import pandas as pd

    w = ResultWriter(tmp_path / "r", ["a.pos.x", "b.force"])
    w.close({"status": "stopped"})
    assert [p.name for p in part_files(tmp_path / "r")] == ["part-00000.parquet"]
    res = td.load(tmp_path / "r")
    assert res.columns == ["a.pos.x", "b.force"] and len(res.t) == 0 and res["b.force"].shape == (0,)
    assert list(pd.read_parquet(tmp_path / "r" / "timeseries.parquet").columns) == ["t", "a.pos.x", "b.force"]
