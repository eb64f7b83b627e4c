"""The function writer every backend uses (``capture/function_writer.py``): the record it
fills, the parameters it renames, the temporaries it frees, the code tracebacks show."""
import inspect
import os
import shutil
import traceback

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import symshape as ss
from symshape import Dim, runtime
from symshape.codegen.function_writer import (FunctionSpec, GeneratedFunction, readers,
                                              releases, write)

A = Dim.AUTO
HAVE_CXX = shutil.which("g++") is not None or bool(os.environ.get("CXX"))


def f32(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------- programs
def clip_scale(x, min, max, *, scale=2.0):
    """Parameters named like builtins the generated code calls (min, max)."""
    return np.clip(x, min, max) * scale


class Accumulator:
    """A running sum held by the caller: ``sum`` is written in place."""

    def __init__(self, decay):
        self.decay = decay

    def __call__(self, sum, x):
        sum *= self.decay
        sum += x
        return sum.mean(axis=-1)


def layers(type, weights):
    """``type``: a list of activations per layer (a name the check itself uses)."""
    h = type[0]
    for w in weights:
        h = np.tanh(h @ w) + type[1]
    return h


def export_auto(f, *args):
    return ss.export(f, args, dynamic_shapes=[tuple(A for _ in a.shape) for a in args])


# --------------------------------------------------------------------------- records
def test_every_backend_fills_the_same_record():
    from symshape.codegen.cuda.backend import Driver, compile_cupy
    from symshape.codegen.numpy_backend import CompiledProgram
    ep = export_auto(lambda x, y: x * y + 1.0, f32(3, 4), f32(3, 4))
    c = ep.compile()
    assert isinstance(c.compiled, CompiledProgram) and isinstance(c.compiled, GeneratedFunction)
    assert isinstance(compile_cupy(ep).driver, Driver)
    assert issubclass(Driver, GeneratedFunction)
    cp = c.compiled
    assert cp.source.startswith("def %s(x, y):" % cp.name)
    assert cp.core_source.startswith("def _core_%s(x, y, %s):" % (cp.name,
                                                                   ", ".join(cp.sym_names)))
    # the core is the body after the aliases, the checked function the body after the check
    assert cp.core_source.endswith("".join("    %s\n" % l for l in cp.body))
    assert cp.source.endswith("".join("    %s\n" % l for l in cp.body))
    assert all(l in cp.source for l in cp.check_lines)


def test_dask_program_is_the_same_record():
    pytest.importorskip("dask.array")
    from symshape.codegen.dask_backend import DaskProgram
    ep = export_auto(lambda x: x * 2.0, f32(4, 3))
    fn = ep.compile(backend="dask")
    assert isinstance(fn.compiled, DaskProgram) and isinstance(fn.compiled, GeneratedFunction)
    assert fn.compiled.core_source.startswith("def _core_")


def test_write_with_a_body_hook():
    """A backend gives only its body: the writer adds the check, the core, the compile."""
    def double(x):
        return x * 2
    ep = ss.export(double, (f32(5, 3),), dynamic_shapes={"x": (Dim("rows"), None)})
    ns = {"np": np, "_ndarray": np.ndarray, "_rt": runtime}
    spec = FunctionSpec("double", inspect.signature(double), constraints=ep.constraints,
                        inputs=ep.graph.inputs, namespace=ns, label="test")
    gen = write(spec, lambda ctx: ["return x * 2"])
    x = f32(7, 3)
    np.testing.assert_array_equal(gen.full(x), x * 2)
    np.testing.assert_array_equal(gen.core(x, 7), x * 2)
    assert gen.param_names == ["x"] and gen.sym_names == ["s0"]
    assert gen.source.startswith("def double(x):\n") and gen.body == ["return x * 2"]
    with pytest.raises(ss.UserError, match=r"x\.shape\[1\]"):
        gen.full(f32(7, 4))


def test_tracebacks_show_the_generated_line():
    def bad(x):
        return x * 2
    ep = ss.export(bad, (f32(5, 3),), dynamic_shapes={"x": (Dim("rows"), None)})
    spec = FunctionSpec("bad", inspect.signature(bad), constraints=ep.constraints,
                        inputs=ep.graph.inputs,
                        namespace={"np": np, "_ndarray": np.ndarray, "_rt": runtime})
    gen = write(spec, lambda ctx: ["return x.reshape(4, 5)"])
    try:
        gen.full(f32(5, 3))
    except ValueError:
        text = traceback.format_exc()
    assert "return x.reshape(4, 5)" in text and "<symshape bad #" in text


# --------------------------------------------------------------------------- renaming
def test_parameters_named_like_builtins_run_everywhere():
    x, lo, hi = f32(6, 4), f32(6, 4) - 1, f32(6, 4) + 1
    want = clip_scale(x, lo, hi)
    ep = export_auto(clip_scale, x, lo, hi)
    np.testing.assert_array_equal(ep.module()(x, lo, hi), want)
    np.testing.assert_array_equal(ep.compile()(x, lo, hi, scale=2.0), want)
    assert "def clip_scale(x, min, max, *, scale=" in ep.compile().source
    cf = ss.compile(clip_scale, dynamic=True)
    np.testing.assert_array_equal(cf(x, lo, hi), want)
    x2, lo2, hi2 = f32(9, 4), f32(9, 4) - 1, f32(9, 4) + 1
    np.testing.assert_array_equal(cf(x2, min=lo2, max=hi2), clip_scale(x2, lo2, hi2))
    assert len(cf.variants) == 1
    # the dispatcher keeps the user's signature
    assert "def __call__(_ss_self, x, min, max, *, scale=" in cf.dispatch_source


@pytest.mark.skipif(not HAVE_CXX, reason="the CUDA emulator needs g++")
def test_parameters_named_like_builtins_on_the_cupy_driver():
    from symshape.codegen.cuda import compile_cupy
    from symshape.codegen.cuda.emulate import emulate
    x, lo, hi = f32(6, 4), f32(6, 4) - 1, f32(6, 4) + 1
    run = emulate(compile_cupy(export_auto(clip_scale, x, lo, hi)))
    np.testing.assert_allclose(run(x, lo, hi), clip_scale(x, lo, hi), rtol=1e-6)


def test_parameters_named_like_builtins_on_dask():
    da = pytest.importorskip("dask.array")
    x, lo, hi = f32(6, 4), f32(6, 4) - 1, f32(6, 4) + 1
    fn = export_auto(clip_scale, x, lo, hi).compile(backend="dask")
    got = fn(da.from_array(x, chunks=3), da.from_array(lo, chunks=3), da.from_array(hi, chunks=3))
    np.testing.assert_allclose(got.compute(), clip_scale(x, lo, hi), rtol=1e-6)


def test_a_mutated_parameter_named_like_a_builtin_is_written_back():
    acc = Accumulator(0.5)
    total, x = f32(4, 3), f32(4, 3)
    ep = export_auto(acc, total.copy(), x)
    for fn in (ep.module(), ep.compile()):
        mine, ref = total.copy(), total.copy()
        np.testing.assert_allclose(fn(mine, x), acc(ref, x), rtol=1e-6)
        np.testing.assert_allclose(mine, ref, rtol=1e-6)


def test_recompile_reasons_name_the_users_parameters():
    w = [f32(3, 3), f32(3, 3)]
    cf = ss.compile(layers)
    acts = [f32(2, 3), f32(2, 3)]
    np.testing.assert_allclose(cf(acts, w), layers(acts, w), rtol=1e-5)
    cf(acts + [f32(2, 3)], w)
    assert cf.recompile_reasons == ["len(type) == 2 (got 3)"]
    assert "_p_type" not in cf.report()


# --------------------------------------------------------------------------- lifetimes
class V:
    def __init__(self, name, reads):
        self.name, self.reads = name, reads


@st.composite
def programs(draw):
    n = draw(st.integers(1, 12))
    items = []
    for i in range(n):
        reads = draw(st.lists(st.sampled_from(items), max_size=3)) if items else []
        items.append(V("v%d" % i, reads))
    keep = set(draw(st.lists(st.sampled_from(items), max_size=3)))
    return items, keep


@settings(max_examples=60, deadline=None)
@given(programs())
def test_temporaries_die_after_their_last_use(prog):
    """Running the items and deleting what ``releases`` says: nothing is read after it was
    deleted, everything not kept is deleted exactly once, as soon as it is dead."""
    items, keep = prog
    dels = releases(items, keep, lambda v: v.reads, lambda v: (v,))
    users = readers(items, lambda v: v.reads)
    alive, deleted = set(), []
    for i, (item, dead) in enumerate(zip(items, dels)):
        assert all(r.name in alive for r in item.reads)
        alive.add(item.name)
        for name in dead:
            alive.remove(name)
            deleted.append(name)
            v = next(x for x in items if x.name == name)
            assert i == max([items.index(v)] + [items.index(u) for u in users.get(v, ())])
    assert sorted(deleted) == sorted(v.name for v in items if v not in keep)


# --------------------------------------------------------------------------- memory
def test_export_and_module_retain_no_memory_per_build(monkeypatch):
    """800 builds after warm-up retain < 16 bytes each (CPython keeps every distinct
    filename compiled: generated functions reuse theirs once the old ones are gone).
    Measured as users run it: without the test suite's translation validation, whose
    ``ast.unparse`` fills CPython's bounded type-attribute cache with fresh strings."""
    import gc
    import tracemalloc
    monkeypatch.setenv("SYMSHAPE_VALIDATE", "0")

    def f(x):
        return (x * 2 + 1).sum(0)
    x = np.ones((4, 3))
    spec = {"x": (A, None)}

    def build():
        ep = ss.export(f, (x,), dynamic_shapes=spec)
        ep.module()(x)

    for _ in range(100):
        build()
    gc.collect()
    tracemalloc.start(1)
    try:
        gc.collect()
        before = tracemalloc.take_snapshot()
        n = 800
        for _ in range(n):
            build()
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # a per-build leak grows in count with the builds; a site with at most two new blocks
    # is a one-off (a dict or set table resized: its old table predates the snapshot, so
    # only the new one is counted)
    diffs = [d for d in after.compare_to(before, "lineno") if d.count_diff > 2]
    grown = sum(d.size_diff for d in diffs)
    top = sorted(diffs, key=lambda d: -d.size_diff)[:5]
    assert grown / n < 16, "%.1f bytes per build retained: %s" % (grown / n,
                                                                  [str(d) for d in top])


def test_generated_file_names_are_reused_and_tracebacks_still_show_lines():
    import linecache
    ep = ss.export(lambda x: x.reshape(4, -1), (np.ones(8),), dynamic_shapes={"x": (A,)})
    m1 = ep.module()
    code = m1.__wrapped__.__code__
    assert linecache.getline(code.co_filename, code.co_firstlineno).startswith("def ")
    ep2 = ss.export(lambda x: x.reshape(4, -1), (np.ones(8),), dynamic_shapes={"x": (A,)})
    m2 = ep2.module()
    # two live programs never share a file name (each traceback shows its own lines)
    assert m2.__wrapped__.__code__.co_filename != code.co_filename
