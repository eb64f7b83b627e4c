"""ss.load on crafted and damaged files: only UserError, never another exception, never a
hang, never running anything the file says.  Hypothesis mutates a real saved program (and
re-signs it, as a hostile author would) and damages its bytes."""
import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import symshape as ss
from symshape.capture.serialize import _digest

A = ss.Dim.AUTO


def _program():
    W = np.arange(6.0).reshape(3, 2)

    def f(x, feats):
        m = x[x[:, 0] > 0]
        return (x @ W + 1).sum(axis=1), m.shape[0], feats["a"][1:] * 2
    ep = ss.export(f, (np.ones((4, 3)), {"a": np.ones(5)}),
                   dynamic_shapes={"x": (A, None), "feats": {"a": (A,)}})
    return ep


def _saved_text(tmp_path_factory):
    ep = _program()
    p = tmp_path_factory.mktemp("prog") / "p.json"
    ss.save(ep, p, format="json")
    return p.read_text()


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    text = _saved_text(tmp_path_factory)
    return text, json.loads(text)


def _paths(o, p=()):
    yield p
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _paths(v, p + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from _paths(v, p + (i,))


HOSTILE = st.sampled_from([
    None, 0, -1, 1, 10 ** 20, 2 ** 63, 1.5, True, "", "x", "s0", "u0", "s0 + 1",
    "__import__('os').system('touch /tmp/symshape_pwned')", "-" * 5000 + "s0",
    "(" * 3000 + "s0" + ")" * 3000, "[" * 200, [], {}, [1, 2], {"a": 1}, ["s0"],
    "\x00\x01", "é" * 10, "float64", "object", "|O", "<f8",
])


def _load_text(tmp_path, text: str):
    p = tmp_path / "q.json"
    p.write_text(text)
    return ss.load(p)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_and_resigned_programs_give_only_user_errors(saved, tmp_path, data):
    text, doc = saved
    paths = [p for p in _paths(doc["program"]) if p]
    dd = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        o = dd["program"]
        try:
            for k in path[:-1]:
                o = o[k]
            o[path[-1]] = data.draw(HOSTILE)
        except (KeyError, IndexError, TypeError):
            continue
    dd["checksum"] = _digest(dd["program"])
    try:
        _load_text(tmp_path, json.dumps(dd))
    except ss.UserError:
        pass
    import os
    assert not os.path.exists("/tmp/symshape_pwned")


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_damaged_bytes_give_only_user_errors(saved, tmp_path, data):
    text, _ = saved
    raw = bytearray(text.encode())
    how = data.draw(st.sampled_from(["truncate", "flip", "insert"]))
    i = data.draw(st.integers(0, len(raw) - 1))
    if how == "truncate":
        raw = raw[:i]
    elif how == "flip":
        raw[i] = data.draw(st.integers(0, 255))
    else:
        raw[i:i] = data.draw(st.binary(min_size=1, max_size=20))
    p = tmp_path / "q.json"
    p.write_bytes(bytes(raw))
    try:
        ss.load(p)
    except ss.UserError:
        pass


@pytest.mark.parametrize("text", [
    "[" * 100000,
    '{"format": ' + "9" * 5000 + "}",
    '{"x": ' + "-" * 20000 + "1}",
    "",
    "null",
])
def test_crafted_top_level_files(tmp_path, text):
    with pytest.raises(ss.UserError):
        _load_text(tmp_path, text)


def test_non_utf8_bytes(tmp_path):
    p = tmp_path / "q.json"
    p.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ss.UserError, match="not UTF-8"):
        ss.load(p)


def test_a_huge_shape_and_deep_expressions_resigned(saved, tmp_path):
    _, doc = saved
    for mutate in (
        lambda d: [n for n in d["program"]["graph"]["nodes"] if n["op"] == "constant"][0]
        ["value"].__setitem__("shape", [10 ** 20]),
        lambda d: d["program"]["graph"]["nodes"][-1].__setitem__("shape",
                                                                 ["-" * 20000 + "s0"]),
    ):
        dd = copy.deepcopy(doc)
        mutate(dd)
        dd["checksum"] = _digest(dd["program"])
        with pytest.raises(ss.UserError):
            _load_text(tmp_path, json.dumps(dd))
