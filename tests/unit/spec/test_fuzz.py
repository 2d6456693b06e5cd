"""Fuzzing the spec and scenario loaders: only the project's validation errors may come out.

Random TOML/JSON documents and random mutations of the built-in specs (a
random field replaced by junk of any type, a field deleted, an unknown field
added) go through the loaders and, when a spec validates, through the
geometry. Allowed outcomes: a valid spec, ``SpecError`` or ``GeometryError``
(both ``ValueError``s naming the field or the reason).
"""

import json
import math

import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

import trackdyn.spec as S
from trackdyn.assembly.builder import vehicle_geometry
from trackdyn.assembly.geometry import GeometryError
from trackdyn.spec.scenario import scenario_from_dict

FUZZ_EXAMPLES = 150

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-300, 1e300, -1.0, 0.5, 2.0, 1e9]),
)
junk = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                    max_leaves=12)


def _paths(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


BASE = {name: S.get(name).model_dump(mode="json") for name in ("m113", "apc", "marder")}
PATHS = {name: list(_paths(d)) for name, d in BASE.items()}


def _mutate(data, path, how, value):
    d = json.loads(json.dumps(data))
    cur = d
    for p in path[:-1]:
        cur = cur[p]
    last = path[-1]
    if how == "replace":
        cur[last] = value
    elif how == "delete" and isinstance(cur, dict):
        del cur[last]
    elif how == "delete" and isinstance(cur, list):
        cur.pop(last)
    elif how == "extra" and isinstance(cur, dict):
        cur["zz_unknown"] = value
    elif how == "scale" and isinstance(cur[last], (int, float)) and not isinstance(cur[last], bool):
        cur[last] = cur[last] * (value if isinstance(value, (int, float)) and not isinstance(value, bool) else -1.0)
    return d


def _check(data):
    try:
        spec = S.validate_spec(data)
    except S.SpecError as err:
        assert err.problems and all(isinstance(p, str) for p, _, _ in err.problems)
        return "invalid"
    try:
        vehicle_geometry(spec)
    except GeometryError as err:
        assert str(err)
        return "geometry"
    return "valid"


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(name=st.sampled_from(sorted(BASE)), idx=st.integers(0, 10**6),
       how=st.sampled_from(["replace", "delete", "extra", "scale"]), value=junk)
def test_mutated_library_specs_fail_only_with_validation_errors(name, idx, how, value):
    path = PATHS[name][idx % len(PATHS[name])]
    _check(_mutate(BASE[name], path, how, value))


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(doc=st.dictionaries(st.text(max_size=8), junk, max_size=6))
def test_random_toml_and_json_documents(doc):
    try:
        text = tomli_w.dumps(doc)
    except (TypeError, ValueError):
        text = None  # not representable in TOML (None, NaN keys...): JSON only
    if text is not None:
        try:
            S.loads_spec(text, "toml")
        except S.SpecError:
            pass
    try:
        S.loads_spec(json.dumps(doc), "json")
    except S.SpecError:
        pass


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(bad=st.dictionaries(st.sampled_from(["scenario", "terrain", "driver", "vehicle", "other"]),
                           st.one_of(junk, st.dictionaries(
                               st.sampled_from(["type", "t_end", "step", "output_step", "speed", "height", "x",
                                                "fidelity", "delay", "kp", "name", "drop"]), junk, max_size=5)),
                           max_size=4))
def test_random_scenario_documents(bad):
    try:
        scenario_from_dict(bad)
    except ValueError:
        pass


def test_garbage_bytes_and_non_finite_json():
    for text in ("\x00\xff", "[[[", "name = 1e999", '{"name": NaN}', "a = [1, 2"):
        for fmt in ("toml", "json"):
            try:
                S.loads_spec(text, fmt)
            except S.SpecError as err:
                assert "(file)" in str(err) or "=" in str(err)
    assert math.isinf(float("1e999"))


def test_terrain_descriptions_round_trip():
    import numpy as np

    import trackdyn as td
    from trackdyn.terrain.describe import build, describe

    cases = [td.terrain.Flat(z=0.1), td.terrain.Flat() + td.terrain.Step(0.3, x=3.0) + td.terrain.HalfRound(0.2, x=8.0),
             td.terrain.Flat() + td.terrain.TrapezoidBarrier(height=0.76, top_length=0.76, slope=0.66, x=6.0),
             td.terrain.Flat() + td.terrain.TrapezoidDitch(depth=0.76, top_length=3.0, slope=0.66, x=2.0),
             ]
    xs = np.linspace(-2.0, 15.0, 400)
    for t in cases:
        d = json.loads(json.dumps(describe(t)))
        assert np.allclose(build(d).height(xs), t.height(xs))
