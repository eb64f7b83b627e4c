"""The archive ss.save writes: program text at the head, arrays as raw bytes at their
alignment offsets; ss.load reads them with one copy or maps them (mmap_mode), model state
keeps its paths and module() writes it in place, and files of the JSON text format still
load."""
from repo_paths import TESTS as HERE
import io
import json
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import symshape as ss
from symshape.capture.archive import Archive, blocksum

A = ss.Dim.AUTO


class Decoder:
    """A small model: stacked layers in a list, a transposed weight view, a KV-style cache
    written at a position given by the caller."""

    def __init__(self, width=8, layers=2, seed=0):
        rng = np.random.default_rng(seed)
        self.layers = [{"w": rng.standard_normal((width, width)).astype(np.float32),
                        "b": rng.standard_normal(width).astype(np.float32)}
                       for _ in range(layers)]
        self.proj_t = np.ascontiguousarray(
            rng.standard_normal((width, width)).astype(np.float32)).T     # a strided view
        self.cache = np.zeros((4, width), np.float32)

    def __call__(self, x, pos):
        for layer in self.layers:
            x = np.tanh(x @ layer["w"] + layer["b"])
        h = x @ self.proj_t
        self.cache[pos:pos + 1] = h.mean(axis=0, keepdims=True)
        return h, self.cache.sum(axis=0)


def export_decoder(model):
    return ss.export(model, (np.ones((3, 8), np.float32), 1),
                     dynamic_shapes={"x": (A, None), "pos": ss.Dim("pos", min=0, max=3)})


def x_of(n, seed=1):
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


@pytest.fixture
def saved(tmp_path):
    model = Decoder()
    ep = export_decoder(model)
    path = tmp_path / "decoder.ssp"
    ss.save(ep, path)
    return model, ep, path


# =========================================================================== the file
def test_file_holds_readable_text_then_aligned_raw_arrays(saved):
    model, ep, path = saved
    raw = path.read_bytes()
    assert raw.startswith(b"SYMSHAPE-ARCHIVE 1 ")
    with open(path, "rb") as fh:
        arc = Archive(fh)
        doc = json.loads(arc.text)
    assert raw[64:].startswith(b'{\n "format": "symshape.ExportedProgram",\n "version": 2,')
    assert arc.data_offset % 64 == 0
    section = raw[arc.data_offset:]
    values = {n["attrs"]["target"]: n["value"] for n in doc["program"]["graph"]["nodes"]
              if n["op"] == "constant"}
    assert set(values) == {"self.layers[0]['w']", "self.layers[0]['b']",
                           "self.layers[1]['w']", "self.layers[1]['b']", "self.proj_t",
                           "self.cache"}
    for target, arr in ep.state.items():
        v = values[target]
        assert v["offset"] % 64 == v.get("align", 0)
        data = np.frombuffer(section, np.uint8, count=v["nbytes"], offset=v["offset"])
        assert v["checksum"] == blocksum(data)
        if "strides" not in v:                 # plain C order: the array's own bytes
            np.testing.assert_array_equal(data.view("<f4").reshape(v["shape"]), arr)
    t = values["self.proj_t"]                  # the transposed view keeps its layout
    assert t["strides"] == [1, 8]
    # nothing but the program text, padding below 64 bytes, and the arrays
    raw_bytes = sum(a.nbytes if a.flags.c_contiguous else a.base.nbytes
                    for a in ep.state.values())
    assert len(raw) <= 64 + len(arc.text) + 64 + raw_bytes + 64 * len(values)


def test_size_is_the_raw_bytes_plus_the_text(tmp_path):
    model = Decoder(width=256, layers=4)
    ep = ss.export(model, (np.ones((3, 256), np.float32), 1),
                   dynamic_shapes={"x": (A, None), "pos": ss.Dim("pos", min=0, max=3)})
    path = tmp_path / "big.ssp"
    ss.save(ep, path)
    with open(path, "rb") as fh:
        text = len(Archive(fh).text)
    raw = sum(a.nbytes for a in ep.state.values())
    assert os.path.getsize(path) <= 1.05 * (raw + text)
    json_path = tmp_path / "big.json"
    ss.save(ep, json_path, format="json")
    assert os.path.getsize(json_path) > 1.3 * raw          # base64: what the archive avoids


def test_saving_is_reproducible_and_atomic(saved, tmp_path):
    model, ep, path = saved
    again = tmp_path / "again.ssp"
    ss.save(ep, again)
    assert again.read_bytes() == path.read_bytes()
    before = path.read_bytes()
    loaded = ss.load(path, mmap_mode="r")
    want = loaded.module()(x_of(2), 0)
    # a save that fails leaves the file as it was, and no temporary file behind
    bad = export_decoder(Decoder())
    next(n for n in bad.graph.nodes if n.op == "add").attrs["weird"] = object()
    with pytest.raises(ss.UserError, match="cannot save the program"):
        ss.save(bad, path)
    assert path.read_bytes() == before
    # a save over a mapped file replaces it; the mapped program keeps its arrays
    ss.save(export_decoder(Decoder(seed=5)), path)
    assert sorted(os.listdir(tmp_path)) == ["again.ssp", "decoder.ssp"]
    got = loaded.module()(x_of(2), 0)
    np.testing.assert_array_equal(got[0], want[0])


# =========================================================================== loading
def test_loaded_program_runs_like_the_model_and_writes_its_state(saved):
    model, ep, path = saved
    eager = Decoder()
    loaded = ss.load(path)
    assert list(loaded.state) == list(ep.state)
    for pos, n in ((0, 3), (2, 5), (3, 2)):
        x = x_of(n, seed=pos)
        got, want = loaded.module()(x, pos), eager(x, pos)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(loaded.state["self.cache"], eager.cache)
    assert model.cache.sum() == 0                  # the loaded program owns its state
    kinds = [s.kind for s in loaded.graph_signature.output_specs]
    assert kinds == ["USER_OUTPUT", "USER_OUTPUT", "STATE_MUTATION"]


@pytest.mark.parametrize("mode", [None, "r", "r+", "c"])
def test_mmap_modes(saved, mode):
    model, ep, path = saved
    before = path.read_bytes()
    eager = Decoder()
    loaded = ss.load(path, mmap_mode=mode)
    state = loaded.state
    # bit for bit the layout that was saved, whether read or mapped
    for k, arr in ep.state.items():
        assert state[k].strides == arr.strides
        assert state[k].ctypes.data % 64 == arr.ctypes.data % 64
        np.testing.assert_array_equal(state[k], arr)
    weights = state["self.layers[0]['w']"]
    mapped = not weights.flags.owndata and _maps_file(weights)
    assert mapped == (mode is not None)
    assert weights.flags.writeable == (mode != "r")
    # module() writes the state in place, in every mode
    cache = state["self.cache"]
    for pos in (0, 3):
        x = x_of(4, seed=pos)
        got, want = loaded.module()(x, pos), eager(x, pos)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert loaded.state["self.cache"] is cache
    np.testing.assert_array_equal(cache, eager.cache)
    if mode == "r+":
        # the writes went to the file: a new mapping sees them ...
        again = ss.load(path, mmap_mode="r+")
        np.testing.assert_array_equal(again.state["self.cache"], eager.cache)
        # ... and a verified load says why the data changed
        with pytest.raises(ss.UserError, match=r"state 'self.cache' does not match its "
                                               r"checksum.*mmap_mode='r\+'.*verify=False"):
            ss.load(path)
        np.testing.assert_array_equal(ss.load(path, verify=False).state["self.cache"],
                                      eager.cache)
    else:
        assert path.read_bytes() == before             # 'r' and 'c' never change the file
        ss.load(path, mmap_mode=mode, verify=True)


def _maps_file(arr) -> bool:
    import mmap
    base = arr
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None) if not isinstance(base, memoryview) else base.obj
    return isinstance(base, mmap.mmap)


def test_mapped_program_pages_in_only_what_it_touches(tmp_path):
    # 16 MB of weights the program reads one row of: mapping them costs nothing
    big = np.zeros((4096, 1024), np.float32)
    small = np.arange(6, dtype=np.float32)

    def f(x):
        return x * small + big[0, :6]

    ep = ss.export(f, (np.ones(6, np.float32),))
    path = tmp_path / "m.ssp"
    ss.save(ep, path)
    loaded = ss.load(path, mmap_mode="r")
    assert _maps_file(loaded.state["big"]) and not loaded.state["big"].flags.writeable
    np.testing.assert_array_equal(loaded.module()(np.ones(6, np.float32)), f(np.ones(6)))


def test_file_objects_and_formats(saved, tmp_path):
    model, ep, path = saved
    buf = io.BytesIO()
    ss.save(ep, buf)
    assert buf.getvalue() == path.read_bytes()
    buf.seek(0)
    loaded = ss.load(buf)
    assert str(loaded) == str(ep)
    text = io.StringIO()
    ss.save(ep, text)                                  # a text stream gets JSON text
    assert text.getvalue().startswith("{")
    assert str(ss.load(io.StringIO(text.getvalue()))) == str(ep)
    jbuf = io.BytesIO()
    ss.save(ep, jbuf, format="json")
    jbuf.seek(0)
    assert str(ss.load(jbuf)) == str(ep)

    class Pipe(io.RawIOBase):                          # a stream that cannot seek
        def __init__(self):
            self.chunks = []

        def writable(self):
            return True

        def write(self, b):
            self.chunks.append(bytes(b))
            return len(b)
    pipe = Pipe()
    ss.save(ep, pipe)
    assert b"".join(pipe.chunks) == path.read_bytes()
    with pytest.raises(ss.UserError, match="text file object.*binary mode"):
        ss.save(ep, io.StringIO(), format="archive")
    with pytest.raises(ss.UserError, match="format must be 'archive' or 'json'"):
        ss.save(ep, tmp_path / "x", format="npz")
    with pytest.raises(ss.UserError, match="mmap_mode must be None, 'r', 'r\\+' or 'c'"):
        ss.load(path, mmap_mode="w+")
    with pytest.raises(ss.UserError, match="mmap_mode needs a file name"):
        ss.load(io.BytesIO(path.read_bytes()), mmap_mode="r")


def test_read_only_file_and_r_plus(saved):
    model, ep, path = saved
    os.chmod(path, 0o444)
    try:
        if os.access(path, os.W_OK):                   # running as root: nothing to check
            return
        with pytest.raises(ss.UserError, match="cannot be opened for writing.*'c'"):
            ss.load(path, mmap_mode="r+")
    finally:
        os.chmod(path, 0o644)


# =========================================================================== old files
def fixture_model():
    """The model the committed JSON text file was exported from (same random weights)."""
    rng = np.random.default_rng(22)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    wt = np.ascontiguousarray(rng.standard_normal((3, 4)).astype(np.float32)).T[:, :3]
    return w, wt


def test_a_file_of_the_json_text_format_still_loads_and_runs():
    # written by the JSON-only ss.save, before the archive format existed
    path = os.path.join(HERE, "serialize_fixtures", "v1_model.json")
    with open(path, encoding="utf-8") as fh:
        assert json.load(fh)["version"] == 1
    ep = ss.load(path)
    w, wt = fixture_model()
    np.testing.assert_array_equal(ep.state["self.w"], w)
    np.testing.assert_array_equal(ep.state["self.wt"], wt)
    assert ep.state["self.wt"].strides == wt.strides
    x = x_of(5)[:, :4]
    h = x @ w + x @ wt
    out, total = ep.module()(x, 1)
    np.testing.assert_array_equal(out, h * 2)
    cache = np.zeros((2, 3), np.float32)
    cache[1:2] = h.sum(axis=0, keepdims=True)
    np.testing.assert_array_equal(ep.state["self.cache"], cache)
    assert total == cache.sum()
    # mapping has nothing to map in a text file: a warning says how to get an archive
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ss.load(path, mmap_mode="r")
    assert any("save the program again with ss.save" in str(w.message) for w in caught)


def test_json_text_written_today_is_the_old_format(saved, tmp_path):
    model, ep, path = saved
    p = tmp_path / "p.json"
    ss.save(ep, p, format="json")
    doc = json.loads(p.read_text())
    assert doc["version"] == 1
    value = next(n["value"] for n in doc["program"]["graph"]["nodes"] if n["op"] == "constant")
    assert set(value) >= {"dtype", "shape", "data"}
    assert str(ss.load(p)) == str(ss.load(path)) == str(ep)


def test_saving_over_a_file_keeps_its_permissions_and_follows_links(saved, tmp_path):
    model, ep, path = saved
    os.chmod(path, 0o600)
    link = tmp_path / "link.ssp"
    os.symlink(path, link)
    ss.save(ep, link)
    assert os.path.islink(link) and os.stat(path).st_mode & 0o777 == 0o600
    assert str(ss.load(link)) == str(ep)


# =========================================================================== checksum
def _reference_blocksum(raw: bytes) -> str:
    words = [int.from_bytes(raw[i:i + 8].ljust(8, b"\0"), "little")
             for i in range(0, len(raw), 8)]
    blocks = [sum(words[i:i + 512]) % 2 ** 64 for i in range(0, len(words), 512)]
    a = sum(blocks) % 2 ** 64
    b = sum((i + 1) * s for i, s in enumerate(blocks)) % 2 ** 64
    return "blocksum64:%016x%016x" % (a, b)


@given(st.binary(max_size=3 * 4096 + 40), st.integers(1, 3))
def test_block_checksum_matches_its_definition_whole_or_in_pieces(raw, pieces):
    from symshape.capture.archive import BlockSum
    data = np.frombuffer(raw, np.uint8)
    assert blocksum(data) == _reference_blocksum(raw)
    s = BlockSum()
    step = 4096 * pieces
    for i in range(0, max(len(raw), 1), step):
        s.update(data[i:i + step])
    assert s.hexdigest() == _reference_blocksum(raw)
    if len(raw) >= 16:
        changed = bytearray(raw)
        changed[len(raw) // 2] ^= 0x10
        assert blocksum(np.frombuffer(bytes(changed), np.uint8)) != blocksum(data)


def test_appending_to_an_open_file(saved, tmp_path):
    model, ep, path = saved
    p = tmp_path / "appended.ssp"
    with open(p, "ab") as fh:            # a file opened for appending cannot seek back
        ss.save(ep, fh)
    assert p.read_bytes() == path.read_bytes()
