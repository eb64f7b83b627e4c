"""backend="cupy": kernel generation, fusion, index width, nvcc, error messages, and (where
a device exists) runs on CuPy.  Everything but the last section needs no GPU and no CuPy;
``nvcc --ptx`` tests skip where nvcc is absent, device tests where CuPy or a device is."""
from repo_paths import REPO
import os
import re
import shutil
import sys
import types

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.backend import NEEDS_CUPY, _CupyRT
from symshape.codegen.cuda.emulate import nvcc_ptx


from _bench import M  # noqa: E402
A = Dim.AUTO


def f32(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def export_auto(f, *args):
    return ss.export(f, args, dynamic_shapes=[tuple(A for _ in a.shape) for a in args])


# --------------------------------------------------------------------------- programs
def numpy_fn(X, Y):                                  # seed example 23
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


softmax = M.softmax
ln_gelu = M.ln_gelu


mlp_layer = M.mlp_layer


def views(x, y):
    return x[1:-1:2, :0:-1] * 2 + x[:-2:2, 1:] - y.T[:(x.shape[0] - 1) // 2, 1:]


PROGRAMS = {
    "seed23": lambda: export_auto(numpy_fn, f32(5, 7), f32(5, 9)),
    "softmax": lambda: export_auto(softmax, f32(4, 9)),
    "ln_gelu": lambda: export_auto(ln_gelu, f32(3, 5, 8), f32(8), f32(8)),
    "mlp_layer": lambda: export_auto(mlp_layer, f32(4, 6), f32(6, 5), f32(5)),
    "views": lambda: export_auto(views, f32(9, 7), f32(7, 9)),
    "mlp": lambda: ss.export(M.mlp, M.MLP_ARGS, dynamic_shapes=M.MLP_SPEC),
    "transformer": lambda: ss.export(M.transformer_block, M.TB_ARGS,
                                     dynamic_shapes=M.TB_SPEC),
    "bounded": lambda: ss.export(lambda x: np.exp(x).sum(axis=-1),
                                 (f32(4, 8, 64),),
                                 dynamic_shapes={"x": (Dim("b", max=4096),
                                                       Dim("t", max=2048), None)}),
}
_CACHE = {}


def compiled(name):
    if name not in _CACHE:
        _CACHE[name] = compile_cupy(PROGRAMS[name]())
    return _CACHE[name]


def steps(c):
    return [s[0] if s[0] == "kernel" else s[1].op for s in c.plan.steps]


# --------------------------------------------------------------------------- seed 23
def test_23_source_shows_driver_and_one_fused_kernel():
    c = compiled("seed23")
    src = c.source
    assert "def numpy_fn(X, Y):" in src
    assert len(c.kernels) == 1 and steps(c) == ["kernel"]
    k = c.kernels[0]
    assert k.kind == "reduce"
    assert 'extern "C" __global__ void __launch_bounds__(512, 2) %s(' % k.name in src
    assert k.source in src
    # the multiply is inlined into the reduction: no intermediate buffer is written
    assert [p for p in k.params if p[1].startswith("out_")] == [("float* __restrict__",
                                                                 "out_sum_1")]
    assert "(v1 * v2)" in k.source and "__syncthreads();" in k.source
    # broadcasting is coordinate 0 (stride 0): X is read at (c0, c1), Y at (c0, c2)
    # (the SS_STRIDED variant reads strided views in place, through their element strides)
    assert "in_X[SS_OFF((c0 * s1 + c1), (c0 * in_X_st0 + c1 * in_X_st1))]" in k.source
    assert "in_Y[SS_OFF((c0 * s3 + c2), (c0 * in_Y_st0 + c2 * in_Y_st1))]" in k.source


def test_23_one_kernel_source_serves_every_shape():
    """Sizes are kernel arguments: exporting at other example sizes gives the same source,
    and no size of the example appears in it."""
    a = compile_cupy(export_auto(numpy_fn, f32(5, 7), f32(5, 9))).kernels[0]
    b = compile_cupy(export_auto(numpy_fn, f32(11, 13), f32(11, 17))).kernels[0]
    assert a.source == b.source
    for size in ("11", "13", "17"):
        assert not re.search(r"\b%s\b" % size, b.source)
    assert [kind for kind, _ in a.args] == ["out", "in", "in", "size", "size", "size",
                                            "size"] + ["stride"] * 4
    assert all(p[0] == "long long" for p in a.params[3:])


# --------------------------------------------------------------------------- fusion
def test_elementwise_then_reduction_chains_are_one_kernel():
    assert steps(compiled("softmax")) == ["kernel"]
    k = compiled("softmax").kernels[0]
    # max, then sum: warp shuffles, one shared scratch buffer for both
    assert k.kind == "reduce" and k.source.count("__shared__") == 1
    assert "ss_shfl_xor(a0, w)" in k.source and "ss_shfl_xor(a1, w)" in k.source
    assert [n.name for n in k.outputs] == ["divide"]                  # max / sum stay on chip
    assert steps(compiled("ln_gelu")) == ["kernel"]
    assert compiled("ln_gelu").kernels[0].source.count("__shared__") == 1   # mean, var


def test_matmul_goes_to_the_library_and_the_rest_fuses():
    assert steps(compiled("mlp_layer")) == ["matmul", "kernel"]
    k = compiled("mlp_layer").kernels[0]
    assert k.kind == "pointwise" and "tanhf(" in k.source
    assert "np.matmul(x, w)" in compiled("mlp_layer").driver_source
    assert steps(compiled("mlp")) == ["matmul", "kernel", "matmul", "kernel"]


def test_transformer_block_plan():
    c = compiled("transformer")
    kinds = steps(c)
    assert kinds.count("kernel") == 5          # 2 layer norms, softmax, gelu, residual
    assert kinds.count("matmul") == 8
    # views feeding matmul stay CuPy views; views feeding kernels are index arithmetic
    assert "permute_dims" in kinds and "reshape" in kinds
    assert all(k.kind == "reduce" for k in c.kernels[:3])


def test_views_are_index_arithmetic():
    c = compiled("views")
    assert steps(c) == ["kernel"]
    src = c.kernels[0].source
    assert "in_y[" in src and "in_x[" in src
    assert c.kernels[0].loads[0].name == "x" and len(c.kernels[0].loads) == 2


def test_outputs_and_reductions_share_a_kernel():
    c = compile_cupy(export_auto(lambda x: (x * 2, (x * 2).sum(axis=-1),
                                            np.exp(x).mean(axis=-1, keepdims=True) * x),
                                 f32(5, 7)))
    assert steps(c) == ["kernel"]
    assert len(c.kernels[0].outputs) == 3


# --------------------------------------------------------------------------- index width
def test_index_width_follows_the_ranges():
    assert compiled("bounded").kernels[0].index == "int32"
    assert "typedef int idx_t;" in compiled("bounded").kernels[0].source
    assert "SS_INDEX64" not in compiled("bounded").kernels[0].source
    k = compiled("seed23").kernels[0]
    assert k.index == "dual" and "#ifdef SS_INDEX64" in k.source
    # s1*s3 <= s0*s1*s3 when s0 >= 2: only the domain size is compared at run time
    assert [str(e) for e in k.big_exprs] == ["s0*s1*s3"]
    assert "s0*s1*s3 >= 2130706432" in compiled("seed23").driver_source
    big = np.broadcast_to(np.float32(0), (70000, 40000))
    k64 = compile_cupy(ss.export(lambda x: x * 2 + 1, (big,))).kernels[0]
    assert k64.index == "int64" and "typedef long long idx_t;" in k64.source


# --------------------------------------------------------------------------- nvcc
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_kernel_compiles_with_nvcc(arch):
    kernels = [k for name in PROGRAMS for k in compiled(name).kernels]
    assert len(kernels) >= 12
    ptx = nvcc_ptx(kernels, arch, rename=True)
    assert ".target %s" % arch in ptx
    assert ptx.count(".entry ") == len(kernels)
    dual = [k for k in kernels if k.index == "dual"]
    ptx64 = nvcc_ptx(dual, arch, index64=True, rename=True)
    assert ptx64.count(".entry ") == len(dual)


@needs_nvcc
def test_seed23_kernel_alone_compiles_for_both_archs():
    k = compiled("seed23").kernels[0]
    for arch in ("sm_80", "sm_90"):
        ptx = nvcc_ptx([k], arch)
        assert ".visible .entry %s(" % k.name in ptx
        # 32-bit variant: the row loop counts in 32-bit registers
        assert ".u32" in ptx or ".s32" in ptx


# --------------------------------------------------------------------------- errors
def test_calling_without_cupy_names_the_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)          # import cupy -> ImportError
    c = compiled("seed23")
    with pytest.raises(ss.UserError) as e:
        c(f32(3, 4), f32(3, 5))
    assert str(e.value) == NEEDS_CUPY == \
        "backend='cupy' needs CuPy: pip install 'symshape[gpu]'"


def test_calling_without_a_device_says_so(monkeypatch):
    fake = types.ModuleType("cupy")

    def no_device():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=no_device))
    fake.ndarray = type("ndarray", (), {})
    monkeypatch.setitem(sys.modules, "cupy", fake)
    c = compile_cupy(PROGRAMS["seed23"]())
    with pytest.raises(ss.UserError, match="no CUDA device was found.*no CUDA-capable"):
        c(f32(3, 4), f32(3, 5))


def test_wrong_array_type_names_cupy():
    fake = types.SimpleNamespace(ndarray=type("ndarray", (), {}))
    with pytest.raises(ss.UserError, match=r"input X: expected a cupy.ndarray \(backend='cupy'\)"
                                           r", got numpy.ndarray"):
        _CupyRT(fake).bad_array("X", np.zeros(3), 1, np.dtype("float32"))


def test_ep_compile_reaches_the_cupy_backend():
    from symshape import codegen
    if "cupy" not in getattr(codegen, "_BACKENDS", {}):
        pytest.skip("backend registry has no 'cupy' entry yet")
    c = PROGRAMS["seed23"]().compile(backend="cupy")
    assert 'extern "C" __global__' in c.source and "def numpy_fn(X, Y):" in c.source


# --------------------------------------------------------------------------- on a device
def _device():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:
        pass
    return None


cp = _device()
needs_gpu = pytest.mark.skipif(cp is None, reason="needs CuPy and a CUDA device")


@needs_gpu
@pytest.mark.parametrize("shape", [(2, 2, 2), (13, 37, 41), (5, 301, 7)])
def test_23_on_the_gpu(shape):
    n, a, b = shape
    X, Y = f32(n, a), f32(n, b)
    got = compiled("seed23")(cp.asarray(X), cp.asarray(Y))
    assert isinstance(got, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(got), numpy_fn(X, Y), rtol=1e-5, atol=1e-5)


@needs_gpu
@pytest.mark.parametrize("name,f,shapes", [
    ("softmax", softmax, [((7, 13),), ((31, 257),)]),
    ("ln_gelu", ln_gelu, [((2, 3, 5), (5,), (5,)), ((3, 7, 33), (33,), (33,))]),
    ("mlp_layer", mlp_layer, [((7, 11), (11, 13), (13,))]),
    ("transformer", M.transformer_block, [((2, 7, 64),), ((3, 13, 64),)]),
])
def test_models_on_the_gpu(name, f, shapes):
    c = compiled(name)
    for shp in shapes:
        args = [f32(*s) for s in shp]
        got = c(*[cp.asarray(a) for a in args])
        np.testing.assert_allclose(cp.asnumpy(got), f(*args), rtol=1e-4, atol=1e-5)


def thirty_sums(x):
    return sum((x * (k + 1) - k).sum(axis=-1) for k in range(30))


@needs_nvcc
def test_thirty_fused_sums_share_one_scratch_buffer():
    """Every reduction of a kernel shares one 512-byte shared buffer (30 fused sums used to
    need 30 and failed in ptxas); ptxas accepts the kernel and its split companion."""
    import subprocess
    import tempfile
    c = compile_cupy(export_auto(thirty_sums, f32(4, 8)))
    assert len(c.kernels) == 1 and c.kernels[0].source.count("__shared__") == 1
    for k in (c.kernels[0], c.kernels[0].split):
        with tempfile.TemporaryDirectory() as d:
            cu = os.path.join(d, "k.cu")
            with open(cu, "w") as f:
                f.write(k.source)
            r = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "--fmad=false", "-Xptxas",
                                "-v", "-o", os.path.join(d, "k.cubin"), cu],
                               capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "512 bytes smem" in r.stderr


def test_benchmark_counts_bytes_per_kernel():
    """benchmarks/gpu.py (no device needed): the bytes each kernel must move, and the bytes
    the generated code moves, at the benchmark's sizes."""
    import importlib.util
    path = os.path.join(REPO, "benchmarks", "gpu.py")
    spec = importlib.util.spec_from_file_location("_symshape_bench_gpu", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    c = compiled("softmax")
    k = c.kernels[0]
    least, moved, note = bench.kernel_traffic(k, bench.bind(c, [(4096, 1024)]))
    assert least == moved == 2 * 4096 * 1024 * 4 and "registers" in note
    least, moved, note = bench.kernel_traffic(k, bench.bind(c, [(8, 131072)]))
    # 2 reads (max and sum of exp merged; the write) + 1 write
    assert least == 2 * 8 * 131072 * 4 and moved == 3 * least // 2
    assert "2 passes" in note and "(1 merged)" in note
    assert "split: 8 rows x 32 chunks = 256 blocks" in note
    least, moved, note = bench.kernel_traffic(k, bench.bind(c, [(65536, 32)]))
    assert "warp per row" in note and least == moved
