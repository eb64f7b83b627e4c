"""backend="cupy" without a GPU: the generated driver and kernels run under the emulator
(the same CUDA C built for the CPU by g++ with ``shim.h``) and match eager NumPy at many
shapes, odd and prime sizes included.  Skips where no C++ compiler is installed."""
import os
import shutil
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.emulate import EmuRuntime, EmulatedCupy, emulate
from symshape.codegen.cuda.kernels import Kernel


from _bench import M  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and not os.environ.get("CXX"),
                                reason="the CUDA emulator needs g++")
A = Dim.AUTO


def f32(*shape, seed=0):
    return np.random.default_rng(seed + 7 * sum(shape)).standard_normal(shape).astype(np.float32)


def export_auto(f, *args):
    return ss.export(f, args, dynamic_shapes=[tuple(A for _ in a.shape) for a in args])


def check(got, want, rtol=1e-5, atol=1e-6):
    gots = got if isinstance(got, tuple) else (got,)
    wants = want if isinstance(want, tuple) else (want,)
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------- seed 23
def numpy_fn(X, Y):
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


SEED23 = compile_cupy(export_auto(numpy_fn, f32(5, 7), f32(5, 9)))
SHAPES23 = [(2, 2, 2), (3, 5, 7), (13, 37, 41), (11, 97, 31), (5, 301, 7), (2, 1000, 3)]


def check23(got, X, Y):
    """float32 sums of many terms cancel: the tolerance scales with sum |x_i y_j| (the
    kernel accumulates in double and is closer to the exact sum than NumPy's float32)."""
    scale = np.abs(X).sum(axis=1) * np.abs(Y).sum(axis=1)
    check(got, numpy_fn(X, Y), rtol=1e-5, atol=float(2e-6 * scale.max()))
    exact = numpy_fn(X.astype(np.float64), Y.astype(np.float64))
    assert np.all(np.abs(got - exact) <= 1e-6 * scale + 1e-6 * np.abs(exact))


def test_23_matches_numpy_at_many_shapes():
    run = emulate(SEED23)
    for n, a, b in SHAPES23:
        X, Y = f32(n, a), f32(n, b, seed=1)
        check23(run(X, Y), X, Y)
    # one library (the 32-bit variant) served every shape: sizes are kernel arguments
    assert list(run.runtime._libs) == [False]
    grids = {(g, b) for _, g, b, _ in run.runtime.launches}
    # rows of <= 256 elements: a warp each, 8 to a block; longer: a block each, >= 8 per thread
    assert (1, 256) in grids and (13, 256) in grids and (5, 512) in grids


def test_23_64bit_variant_matches_too():
    run = emulate(SEED23, force_index64=True)
    for n, a, b in SHAPES23[1:4]:
        X, Y = f32(n, a), f32(n, b, seed=1)
        check23(run(X, Y), X, Y)
    assert list(run.runtime._libs) == [True]


def test_23_input_check_runs_first():
    run = emulate(SEED23)
    with pytest.raises(ss.UserError, match=r"Y.shape\[0\] must equal X.shape\[0\]"):
        run(f32(3, 4), f32(4, 4))
    with pytest.raises(ss.UserError, match="expected dtype float32, got float64"):
        run(np.zeros((3, 4)), f32(3, 4))
    with pytest.raises(ss.UserError, match=r"X.shape\[1\] = 1 is outside the range"):
        run(f32(3, 1), f32(3, 4))


def test_23_noncontiguous_inputs_are_read_in_place():
    run = emulate(SEED23)
    X, Y = f32(9, 6).T, f32(6, 11)[:, ::2]
    check23(run(X, Y), X, Y)
    assert run.runtime.strided == [SEED23.kernels[0].name]


# --------------------------------------------------------------------------- models
softmax = M.softmax
ln_gelu = M.ln_gelu


def mlp_layer(x, w, b):
    h = x @ w + b
    return np.maximum(h, 0) * 0.5 + np.tanh(h) ** 2 - 1 / (1 + np.exp(-h))


MODELS = {
    "softmax": (lambda: export_auto(softmax, f32(4, 9)), softmax,
                [[(7, 13)], [(2, 2)], [(31, 257)], [(3, 1031)]]),
    "ln_gelu": (lambda: export_auto(ln_gelu, f32(3, 5, 8), f32(8), f32(8)), ln_gelu,
                [[(2, 3, 5), (5,), (5,)], [(3, 7, 33), (33,), (33,)],
                 [(1 + 1, 11, 263), (263,), (263,)]]),
    "mlp_layer": (lambda: export_auto(mlp_layer, f32(4, 6), f32(6, 5), f32(5)), mlp_layer,
                  [[(7, 11), (11, 13), (13,)], [(2, 3), (3, 2), (2,)],
                   [(97, 5), (5, 101), (101,)]]),
    "seed10": (lambda: ss.export(M.seed10, M.SEED10_ARGS, dynamic_shapes=M.SEED10_SPEC),
               M.seed10, [[(6, 5), (4,), (8, 4), (32,)], [(3, 5), (7,), (2, 7), (14,)],
                          [(11, 5), (13,), (3, 13), (39,)]]),
    "mlp": (lambda: ss.export(M.mlp, M.MLP_ARGS, dynamic_shapes=M.MLP_SPEC), M.mlp,
            [[(7, 64)], [(13, 64)], [(2, 64)]]),
    "transformer": (lambda: ss.export(M.transformer_block, M.TB_ARGS,
                                      dynamic_shapes=M.TB_SPEC), M.transformer_block,
                    [[(2, 7, 64)], [(3, 13, 64)], [(2, 2, 64)]]),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_match_numpy(name):
    make, f, shapes = MODELS[name]
    c = compile_cupy(make())
    run = emulate(c)
    for i, shp in enumerate(shapes):
        args = [f32(*s, seed=i).astype(d.dtype) for s, d in zip(shp, c.ep.constraints.inputs)]
        check(run(*args), f(*args), rtol=1e-5, atol=1e-5)
    assert set(run.runtime._libs) <= {False, (False, "vec")}     # one build per variant


def test_static_32bit_program():
    ep = ss.export(lambda x: np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1),
                   (f32(4, 8, 64),), dynamic_shapes={"x": (Dim("b", max=4096),
                                                            Dim("t", max=2048), None)})
    c = compile_cupy(ep)
    assert {k.index for k in c.kernels} == {"int32"}
    run = emulate(c, force_index64=True)            # no 64-bit variant exists: int32 runs
    x = f32(3, 17, 64)
    check(run(x), np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1))
    # the rows (64 floats) take the 128-bit variant; never a 64-bit one
    assert list(run.runtime._libs) == [(False, "vec")]


# --------------------------------------------------------------------------- op table
def r(*s, dt=np.float32, seed=0):
    return np.random.default_rng(seed + sum(s)).standard_normal(s).astype(dt)


def ri(*s, dt=np.int64, seed=0):
    return np.random.default_rng(seed + sum(s)).integers(-9, 9, s).astype(dt)


OPS = [
    ("slices", lambda x: x[1:-1:2, :0:-1] * 2 + x[:-2:2, 1:], [(r(9, 7),), (r(13, 11),),
                                                                (r(6, 5),)]),
    ("int_index", lambda x: x[-1] + x[0] * x[1, :], [(r(5, 7),), (r(11, 3),)]),
    ("transpose", lambda x, y: x.T + y, [(r(5, 7), r(7, 5)), (r(3, 11), r(11, 3))]),
    ("reshape_split", lambda x: (x * 2).reshape(x.shape[0], -1, 4).sum(axis=1) + 1,
     [(r(3, 8),), (r(5, 12),)]),
    ("reshape_merge", lambda x: np.exp(x).reshape(-1) * 3, [(r(3, 5, 7),), (r(2, 3, 2),)]),
    ("mean_axis0", lambda x: x.mean(axis=0) - x.mean(), [(r(7, 5),), (r(13, 3),)]),
    ("max_min", lambda x: x.max(axis=1) + x.min(axis=(0, 2), keepdims=True).sum(),
     [(r(3, 5, 7),), (r(5, 2, 3),)]),
    ("int_ops", lambda a, b: (a // np.where(b == 0, 1, b)) + a % 3 - (a < b) + np.abs(a) ** 2,
     [(ri(5, 7), ri(5, 7, seed=1)), (ri(3, 2), ri(3, 2, seed=1))]),
    ("float_divmod", lambda a, b: a // b + a % b + np.floor_divide(a, -1.5),
     [(r(5, 7), r(5, 7, seed=1)), (r(3, 2), r(3, 2, seed=1))]),
    ("where_clip_astype", lambda x: np.where(x > 0, np.clip(x, -0.5, 0.7),
                                             x.astype(np.int32)).astype(np.float64),
     [(r(5, 7),), (r(3, 11),)]),
    ("any_all", lambda x: np.any(x > 1, axis=1) | np.all(x > -2, axis=1),
     [(r(5, 7),), (r(3, 11),)]),
    ("int_sums", lambda x: x.sum(axis=1) + (x > 0).sum(axis=1),
     [(ri(5, 7, dt=np.int32),), (ri(3, 2, dt=np.int32),)]),
    ("nan_propagation", lambda x: np.maximum(x, 0.5).max(axis=1, keepdims=True) +
     np.minimum(x, np.where(x > 1, np.nan, x)), [(r(5, 7),), (r(3, 2),)]),
    ("broadcast_squeeze", lambda x, y: np.squeeze(np.broadcast_to(
        x[:, None, :], (x.shape[0], 1, x.shape[1])), 1) + np.expand_dims(y, 0),
     [(r(5, 7), r(7)), (r(3, 2), r(2))]),
    ("scalar_result", lambda x: np.sqrt((x * x).sum()) / x.shape[0], [(r(5, 7),), (r(3, 2),)]),
    ("float64_mix", lambda x, y: np.sin(x) * y + np.float64(2.0) * np.log1p(np.abs(x)),
     [(r(5, 7), r(5, 7, dt=np.float64)), (r(3, 2), r(3, 2, dt=np.float64))]),
    ("several_outputs", lambda x: (x * 2, (x * 2).sum(axis=-1),
                                   np.exp(x).mean(axis=-1, keepdims=True) * x),
     [(r(5, 7),), (r(3, 2),)]),
    ("bool_ops", lambda x, y: np.logical_xor(x > 0, y > 0) & ~(x > y),
     [(r(5, 7), r(5, 7, seed=1)), (r(3, 2), r(3, 2, seed=1))]),
    ("powers", lambda x: x ** 2 + np.abs(x) ** 0.5 + x ** 3 + np.abs(x) ** 1.7 + 1 / x,
     [(r(5, 7),), (r(3, 2),)]),
    ("round", lambda x: np.round(x * 10) + np.round(x, 2), [(r(5, 7),), (r(3, 2),)]),
    ("unary_math", lambda x: np.tanh(x) + np.arctan2(x, 2.0) + np.hypot(x, x) + np.sign(x) +
     np.isnan(np.log(x)) + np.floor(x) + np.expm1(x) + np.cbrt(x), [(r(5, 7),), (r(3, 2),)]),
    ("fallback_ops", lambda x: np.cumsum(x, axis=1) * np.sort(x, axis=0) + x.var(axis=1,
                                                                                keepdims=True),
     [(r(5, 7),), (r(3, 2),)]),
]


@pytest.mark.parametrize("name,f,cases", OPS, ids=[o[0] for o in OPS])
def test_ops_match_numpy(name, f, cases):
    c = compile_cupy(export_auto(f, *cases[0]))
    assert c.kernels
    run = emulate(c)
    for args in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = f(*args)
            got = run(*args)
        check(got, want)


def test_sources_use_no_host_headers():
    """CuPy compiles with NVRTC, which includes no headers: no INFINITY / NAN macros."""
    for name, f, cases in OPS:
        for k in compile_cupy(export_auto(f, *cases[0])).kernels:
            for token in ("INFINITY", "NAN", "#include", "std::"):
                assert token not in k.source, (name, token)


# --------------------------------------------------------------------------- edges
def test_zero_sizes_and_reductions_without_identity():
    ep = ss.export(lambda x: (np.exp(x) + 1, x.max(axis=1)), (f32(3, 4),),
                   dynamic_shapes={"x": (Dim("n", min=0), Dim("m", min=1))})
    run = emulate(compile_cupy(ep))
    out = run(np.ones((0, 4), np.float32))
    assert out[0].shape == (0, 4) and out[1].shape == (0,)
    assert not run.runtime.launches                    # empty domains launch nothing
    # max over an axis that may be empty is part of the contract: m >= 1 (min=0 is a
    # violation at export), so the empty reduction is rejected before anything runs
    with pytest.raises(ss.UserError, match=r"x.shape\[1\] = 0"):
        run(np.ones((3, 0), np.float32))
    with pytest.raises(ss.ConstraintViolationError, match="m = Dim"):
        ss.export(lambda x: x.max(axis=1), (f32(3, 4),),
                  dynamic_shapes={"x": (Dim("n", min=0), Dim("m", min=0))})


def test_input_mutation_is_written_back():
    def g(x):
        x += 1
        return x * 2
    run = emulate(compile_cupy(export_auto(g, f32(3, 4))))
    x = np.ones((5, 3), np.float32)
    out = run(x)
    assert x[0, 0] == 2 and out[0, 0] == 4


def test_nested_inputs_and_the_jit_core():
    def h(d):
        return d["a"] * d["b"][0] + d["b"][1].sum(axis=0)
    ex = {"a": np.ones((3, 4)), "b": [np.ones((3, 4)), np.ones((5, 4))]}
    ep = ss.export(h, (ex,), dynamic_shapes={"d": {"a": (A, A), "b": [(A, A), (A, A)]}})
    c = compile_cupy(ep)
    rng = np.random.default_rng(3)
    d = {"a": rng.random((3, 6)), "b": [rng.random((3, 6)), rng.random((7, 6))]}
    run = emulate(c)
    check(run(d), h(d), rtol=1e-12)
    # what ss.compile calls after its own guards: plain parameters, then the size symbols
    assert c.param_names == ["d"] and c.sym_names == ["s0", "s1", "s4"]
    core = c.bind(EmuRuntime(c.kernels), core=True)
    check(core(d, 3, 6, 7), h(d), rtol=1e-12)


def test_ss_compile_drives_the_backend(monkeypatch):
    """ss.compile with the CuPy backend's interface (guards, namespace, core), here backed
    by the emulator: automatic dynamic shapes, one recompile per changed axis."""
    from symshape import codegen
    monkeypatch.setitem(codegen._BACKENDS, "cupy-emulated", EmulatedCupy)
    cf = ss.compile(numpy_fn, backend="cupy-emulated")
    for n, a, b in [(5, 7, 7), (6, 7, 7), (11, 13, 13), (3, 5, 5), (7, 3, 3)]:
        X, Y = f32(n, a), f32(n, b, seed=1)
        check23(cf(X, Y), X, Y)
    assert cf.recompile_reasons == ["X.shape[0] == 5 (got 6)", "X.shape[1] == 7 (got 13)"]
    assert len(cf.variants) == 3
    assert 'extern "C" __global__' in cf.variants[-1].source


# --------------------------------------------------------------------------- emulator
def _raw_kernel(name, body, params, uses_sync=True):
    k = Kernel()
    k.name, k.kind, k.uses_sync = name, "reduce", uses_sync
    k.params = params
    k.args = [("out", None) if "*" in p[0] and "const" not in p[0] else ("size", None)
              for p in params]
    k.source = 'extern "C" __global__ void %s(%s) {\n%s\n}\n' % (
        name, ", ".join("%s %s" % p for p in params), body)
    return k


def test_emulator_reports_a_divergent_barrier():
    k = _raw_kernel("divergent", "  if (threadIdx.x < 3) __syncthreads();\n  out[0] = 1;",
                    [("float* __restrict__", "out")])
    k.args = [("out", type("N", (), {"dtype": np.dtype(np.float32)})())]
    rt = EmuRuntime([k])
    with pytest.raises(RuntimeError, match="reached by only some threads"):
        rt.launch(k, 1, 32, (np.zeros(1, np.float32),), False)


def test_emulator_shuffles_within_a_warp_and_reports_divergent_ones():
    """__shfl_xor_sync waits for the 32 lanes of its own warp only (warps of a block may
    run different numbers of shuffles); a shuffle some lanes skip is an error."""
    node = type("N", (), {"dtype": np.dtype(np.float32)})()
    body = ("  float v = (float)threadIdx.x;\n"
            "  if (threadIdx.x < 32) v = __shfl_xor_sync(0xffffffffu, v, 1);\n"
            "  v = __shfl_xor_sync(0xffffffffu, v, 16);\n"
            "  out[threadIdx.x] = v;")
    k = _raw_kernel("shfl_ok", body, [("float* __restrict__", "out")])
    k.args = [("out", node)]
    out = np.zeros(64, np.float32)
    EmuRuntime([k]).launch(k, 1, 64, (out,), False)
    lane = np.arange(64)
    want = np.where(lane < 32, (lane ^ 16) ^ 1, lane ^ 16).astype(np.float32)
    np.testing.assert_array_equal(out, want)
    bad = _raw_kernel("shfl_bad", "  float v = 1.0f;\n  if (threadIdx.x < 7) v = "
                      "__shfl_xor_sync(0xffffffffu, v, 1);\n  out[threadIdx.x] = v;",
                      [("float* __restrict__", "out")])
    bad.args = [("out", node)]
    with pytest.raises(RuntimeError, match="warp shuffle reached by only some lanes"):
        EmuRuntime([bad]).launch(bad, 1, 32, (np.zeros(32, np.float32),), False)


def test_emulator_exposes_a_missing_barrier():
    """Threads between barriers run in a shuffled order: reading a neighbour's shared slot
    without __syncthreads() sees stale data, with the barrier it never does."""
    body = ("  __shared__ float s[64];\n  s[threadIdx.x] = (float)(threadIdx.x + 1);\n"
            "  %s\n  out[threadIdx.x] = s[(threadIdx.x + 1) %% blockDim.x];")
    node = type("N", (), {"dtype": np.dtype(np.float32)})()
    want = np.roll(np.arange(1, 65, dtype=np.float32), -1)
    for sync, ok in (("__syncthreads();", True), ("", False)):
        k = _raw_kernel("nb%d" % ok, body % sync, [("float* __restrict__", "out")])
        k.args = [("out", node)]
        out = np.zeros(64, np.float32)
        EmuRuntime([k]).launch(k, 1, 64, (out,), False)
        assert np.array_equal(out, want) == ok


def test_emulator_atomics_and_grid():
    """Every (block, thread) of the grid runs once; atomics accumulate across blocks."""
    node = type("N", (), {"dtype": np.dtype(np.float32)})()
    body = ("  atomicAdd(&out[0], 1.0f);\n"
            "  atomicMax(&out[1], (float)(blockIdx.x * blockDim.x + threadIdx.x));\n"
            "  if (threadIdx.x == 0) atomicAdd(&out[2], (float)gridDim.x);")
    k = _raw_kernel("atomics", body, [("float* __restrict__", "out")], uses_sync=False)
    k.args = [("out", node)]
    out = np.zeros(3, np.float32)
    EmuRuntime([k]).launch(k, 5, 64, (out,), False)
    assert out.tolist() == [320.0, 319.0, 25.0]
