"""The real launch path of backend="cupy" without a GPU.

* ``CupyRuntime`` (argument marshalling, RawKernel options, grid and block sizes, library
  steps on ``cupy``) runs against a fake ``cupy`` module: its arrays are a NumPy subclass
  standing for device memory, and its ``RawKernel`` checks every launch the way CUDA would
  see it (pointer arguments are device arrays of the parameter's C type, C-contiguous;
  sizes are 64-bit integers; grid and block within limits) and then runs the kernel under
  the emulator.
* NVRTC (the compiler CuPy uses) compiles every generated kernel, both index variants,
  where the ``cupy-cuda12x`` and ``nvidia-cuda-nvrtc-cu12`` wheels are installed (no device
  needed); skipped cleanly where they are not.
"""
import re
import shutil
import sys
import types
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape.codegen.cuda import backend, compile_cupy
from symshape.codegen.cuda.emulate import EmuRuntime
from symshape.codegen.cuda.kernels import GRID_CAP, ROW_BLOCK
from symshape.codegen.cuda.nvrtc import nvrtc_module, nvrtc_ptx

import test_cuda_emulate as TE  # noqa: E402
import test_cuda_kernels as TK  # noqa: E402

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

C_OF = {"float": "float32", "double": "float64", "int": "int32", "long long": "int64",
        "signed char": "int8", "short": "int16", "unsigned char": "uint8",
        "unsigned short": "uint16", "unsigned int": "uint32",
        "unsigned long long": "uint64", "bool": "bool"}


# --------------------------------------------------------------------------- fake cupy
class DeviceArray(np.ndarray):
    """An array 'in device memory': what the fake cupy's functions return."""

    @property
    def data(self):                       # cupy.ndarray.data is a MemoryPointer
        return types.SimpleNamespace(ptr=self.ctypes.data)


def _dev(v):
    if isinstance(v, np.ndarray) and not isinstance(v, DeviceArray):
        return v.view(DeviceArray)
    if isinstance(v, tuple):
        return tuple(_dev(x) for x in v)
    return v


def _host(v):
    return v.view(np.ndarray) if isinstance(v, DeviceArray) else v


class FakeRawKernel:
    """cupy.RawKernel: records compilation options, checks launches, runs the emulator."""

    def __init__(self, fake, source, name, options=()):
        self.fake, self.source, self.name, self.options = fake, source, name, tuple(options)
        self.kernel = fake.registry[(source, name)]
        fake.compiled.append(self)

    def __call__(self, grid, block, args):
        k = self.kernel
        assert type(grid) is tuple and type(block) is tuple and len(grid) == len(block) == 1
        g, b = grid[0], block[0]
        assert type(g) is int and 1 <= g <= GRID_CAP, g
        assert type(b) is int and b % 32 == 0 and 32 <= b <= max(ROW_BLOCK, 256), b
        if k.kind == "reduce":
            assert b <= ROW_BLOCK                   # __launch_bounds__ of the kernel
        assert len(args) == len(k.params)
        host = []
        for (ctype, pname), a in zip(k.params, args):
            t = ctype.replace("__restrict__", "").replace("const", "").strip()
            if t.endswith("*"):
                assert type(a) is DeviceArray, (pname, type(a))   # never host memory
                assert a.dtype == np.dtype(C_OF[t[:-1].strip()]), (pname, a.dtype, t)
                assert a.flags.c_contiguous or ("-DSS_STRIDED" in self.options and
                                                "const" in ctype), pname
                if "const" not in ctype:
                    assert a.flags.writeable, pname
            else:
                assert t == "long long" and type(a) is np.int64, (pname, type(a))
            host.append(_host(a))
        if "-DSS_VEC" in self.options:              # 128-bit loads need 16-byte alignment
            assert k.vec > 1 and all(args[p].ctypes.data % 16 == 0 for p in k.vec_positions)
        self.fake.launches.append((self.name, g, b, self.options))
        big = "-DSS_INDEX64" in self.options
        self.fake.emu.launch(k, g, b, tuple(host), big, "-DSS_VEC" in self.options,
                             "-DSS_STRIDED" in self.options)


def fake_cupy(kernels):
    """A module standing for cupy: NumPy functions returning DeviceArrays, a RawKernel
    that runs the emulator, and one device."""
    m = types.ModuleType("cupy")
    m.ndarray = DeviceArray
    kernels = list(kernels) + [k.split for k in kernels if k.split is not None]
    m.registry = {(k.source, k.name): k for k in kernels}
    m.compiled, m.launches = [], []
    m.emu = EmuRuntime(kernels)
    m.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=lambda: 1))
    m.RawKernel = lambda source, name, options=(): FakeRawKernel(m, source, name, options)

    def asarray(v, dtype=None):
        return _dev(np.asarray(_host(v), dtype=dtype))

    def wrap(fn):
        def call(*a, **kw):
            a = [_host(x) for x in a]
            kw = {key: _host(x) for key, x in kw.items()}
            return _dev(fn(*a, **kw))
        return call

    m.asarray = asarray
    m.ascontiguousarray = lambda v: _dev(np.ascontiguousarray(_host(v)))
    m.empty = lambda shape, dtype: _dev(np.empty(shape, dtype))

    def __getattr__(name):
        v = getattr(np, name)
        return wrap(v) if callable(v) and not isinstance(v, type) else v
    m.__getattr__ = __getattr__
    return m


@pytest.fixture
def with_fake_cupy(monkeypatch):
    def install(c):
        fake = fake_cupy(c.kernels)
        monkeypatch.setitem(sys.modules, "cupy", fake)
        monkeypatch.setattr(backend, "_RAW", {})
        return fake
    return install


def dev(*arrays):
    return [a.copy().view(DeviceArray) for a in arrays]


# --------------------------------------------------------------------------- launch path
@needs_gxx
@pytest.mark.parametrize("name", ["seed23", "softmax", "ln_gelu", "mlp_layer", "views",
                                  "transformer"])
def test_cupy_runtime_launches_match_numpy(name, with_fake_cupy):
    c = compile_cupy(TK.PROGRAMS[name]())
    fake = with_fake_cupy(c)
    f = {"seed23": TK.numpy_fn, "softmax": TK.softmax, "ln_gelu": TK.ln_gelu,
         "mlp_layer": TK.mlp_layer, "views": TK.views,
         "transformer": TK.M.transformer_block}[name]
    shapes = {"seed23": [[(5, 7), (5, 9)], [(3, 300), (3, 2)]],
              "views": [[(9, 7), (7, 9)], [(13, 5), (5, 13)]],
              "mlp_layer": [[(7, 11), (11, 13), (13,)], [(97, 5), (5, 301), (301,)]]}.get(
                  name) or TE.MODELS[name][2]
    for i, shp in enumerate(shapes):
        args = [TE.f32(*s, seed=i).astype(d.dtype) for s, d in zip(shp, c.ep.constraints.inputs)]
        got = c(*dev(*args))
        want = f(*args)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert type(g) is DeviceArray                 # results stay on the device
            np.testing.assert_allclose(_host(g), w, rtol=1e-5, atol=1e-5)
    assert fake.launches
    # every kernel compiled once per index variant, with the FMA-free options
    assert all("--fmad=false" in rk.options for rk in fake.compiled)
    assert len({(rk.source, rk.options) for rk in fake.compiled}) == len(fake.compiled)


@needs_gxx
def test_launch_geometry_follows_the_row_length(with_fake_cupy):
    c = compile_cupy(TK.PROGRAMS["softmax"]())
    fake = with_fake_cupy(c)
    for rows, cols, grid, block in [(20, 7, 3, 256),        # warp per row, 8 rows a block
                                    (5, 256, 1, 256),
                                    (4, 300, 4, 64),        # a block per row, <= 8 each
                                    (3, 1000, 3, 128),
                                    (300, 5000, 300, 512),  # beyond registers: loops
                                    (2, 5000, 4, 512)]:     # few long rows: split
        x = TE.f32(rows, cols)
        got = c(*dev(x))
        np.testing.assert_allclose(_host(got), TE.softmax(x), rtol=1e-5, atol=1e-6)
        assert fake.launches[-1][1:3] == (grid, block)


@needs_gxx
def test_64bit_variant_is_chosen_per_call(with_fake_cupy):
    """The driver asks for the 64-bit variant per call; the runtime compiles it with
    -DSS_INDEX64 (once) and launches it with the same 64-bit size arguments."""
    c = compile_cupy(TK.PROGRAMS["seed23"]())
    fake = with_fake_cupy(c)
    k = c.kernels[0]
    assert k.index == "dual"
    rt = backend.cupy_runtime()
    X, Y = dev(TE.f32(3, 4), TE.f32(3, 5))
    out = dev(np.zeros(3, np.float32))[0]
    sizes = {"s0": 3, "s1": 4, "s3": 5}
    args = tuple(out if kind == "out" else (X if v.name == "X" else Y) if kind == "in"
                 else backend._es(X if v[0].name == "X" else Y, v[1]) if kind == "stride"
                 else eval(backend._py(v), {}, dict(sizes)) for kind, v in k.args)
    for big in (True, True, False):
        rt.launch(k, 3, 32, args, big)
        np.testing.assert_allclose(_host(out), TE.numpy_fn(_host(X), _host(Y)), rtol=1e-5)
    assert [l[3] for l in fake.launches] == [("--fmad=false", "-DSS_INDEX64")] * 2 + \
        [("--fmad=false",)]
    assert len(fake.compiled) == 2


@needs_gxx
def test_split_rows_launch_through_cupy(with_fake_cupy):
    c = compile_cupy(TK.PROGRAMS["softmax"]())
    fake = with_fake_cupy(c)
    x = TE.f32(2, 9000)
    np.testing.assert_allclose(_host(c(*dev(x))), TE.softmax(x), rtol=1e-5, atol=1e-7)
    split = c.kernels[0].split
    assert [l[:3] for l in fake.launches] == [(split.name, 2 * 3, 512)] * 2   # merged: 2 passes


@needs_gxx
def test_row_variants_launch_through_cupy(with_fake_cupy):
    """Layer norm through CupyRuntime: rows in registers and rows looped over (merged
    mean / variance phase), each as the 128-bit variant (row length a multiple of 4,
    aligned) or the scalar one (odd length, or a misaligned input)."""
    c = compile_cupy(TK.PROGRAMS["ln_gelu"]())
    k = c.kernels[0]
    assert k.kind == "reduce" and k.vec == 4
    k.split = None                      # few long rows: the looped kernel, not the split
    fake = with_fake_cupy(c)
    for shape, vec in [((2, 3, 64), True), ((2, 3, 66), False), ((2, 2, 5000), True),
                       ((2, 2, 5001), False)]:
        x, g, b = TE.f32(*shape), TE.f32(shape[-1], seed=1), TE.f32(shape[-1], seed=2)
        got = c(*dev(x, g, b))
        np.testing.assert_allclose(_host(got), TK.ln_gelu(x, g, b), rtol=1e-4, atol=1e-5)
        launch = [l for l in fake.launches if l[0] == k.name][-1]
        assert ("-DSS_VEC" in launch[3]) == vec, (shape, launch)
    base = dev(TE.f32(3 * 64 * 2 + 4))[0]
    x = base[1:1 + 3 * 64 * 2].reshape(2, 3, 64)          # contiguous, 4 bytes off
    g, b = dev(TE.f32(64, seed=1), TE.f32(64, seed=2))
    np.testing.assert_allclose(_host(c(x, g, b)), TK.ln_gelu(_host(x), _host(g), _host(b)),
                               rtol=1e-4, atol=1e-5)
    assert "-DSS_VEC" not in fake.launches[-1][3]


@needs_gxx
def test_broadcast_pointwise_launches_through_cupy(with_fake_cupy):
    """A 3-D broadcast (stepped coordinates) through CupyRuntime: the 128-bit, scalar
    (misaligned) and strided (transposed input) variants."""
    def f(x, b, c):
        return x * b + c
    ep = TE.export_auto(f, TE.f32(4, 8, 6), TE.f32(8, 1), TE.f32(6))
    c = compile_cupy(ep)
    fake = with_fake_cupy(c)
    x, b, cc = TE.f32(5, 9, 12), TE.f32(9, 1, seed=1), TE.f32(12, seed=2)
    np.testing.assert_array_equal(_host(c(*dev(x, b, cc))), f(x, b, cc))
    xt = dev(np.ascontiguousarray(x.transpose(2, 1, 0)))[0].transpose(2, 1, 0)
    np.testing.assert_array_equal(_host(c(xt, *dev(b, cc))), f(x, b, cc))
    flat = dev(TE.f32(5 * 9 * 12 + 1))[0]
    xm = flat[1:].reshape(5, 9, 12)
    np.testing.assert_array_equal(_host(c(xm, *dev(b, cc))), f(_host(xm), b, cc))
    opts = [l[3] for l in fake.launches]
    assert ("-DSS_VEC" in opts[0]) and ("-DSS_STRIDED" in opts[1]) and \
        not ({"-DSS_VEC", "-DSS_STRIDED"} & set(opts[2]))


@needs_gxx
def test_library_steps_run_on_cupy_and_inputs_are_checked(with_fake_cupy):
    c = compile_cupy(TK.PROGRAMS["mlp_layer"]())
    with_fake_cupy(c)
    x, w, b = TE.f32(7, 11), TE.f32(11, 13), TE.f32(13)
    np.testing.assert_allclose(_host(c(*dev(x, w, b))), TK.mlp_layer(x, w, b), rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(ss.UserError, match=r"input x: expected a cupy.ndarray"):
        c(x, *dev(w, b))                                   # a host array
    with pytest.raises(ss.UserError, match="expected dtype float32, got float64"):
        c(*dev(x.astype(np.float64), w, b))


@needs_gxx
def test_noncontiguous_device_inputs(with_fake_cupy):
    c = compile_cupy(TK.PROGRAMS["seed23"]())
    fake = with_fake_cupy(c)
    X = np.asarray(TE.f32(6, 9)).view(DeviceArray).T           # transposed view
    Y = TE.f32(9, 22).view(DeviceArray)[:, ::2]                # strided view
    got = c(X, Y)
    np.testing.assert_allclose(_host(got), TE.numpy_fn(_host(X), _host(Y)), rtol=1e-5,
                               atol=1e-4)
    assert fake.launches


# --------------------------------------------------------------------------- NVRTC
NVRTC = nvrtc_module()
needs_nvrtc = pytest.mark.skipif(NVRTC is None, reason="NVRTC wheels (cupy-cuda12x, "
                                 "nvidia-cuda-nvrtc-cu12) not installed")


def every_kernel():
    ks = [k for name in TK.PROGRAMS for k in TK.compiled(name).kernels]
    for name, f, cases in TE.OPS:
        ks += compile_cupy(TE.export_auto(f, *cases[0])).kernels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f, args in [(lambda a: (a * 1).astype(np.uint64), (TE.f32(3, 4),)),
                        (lambda p, q: (np.left_shift(p, q), p // q, p % q, p ** q),
                         (np.ones((3, 4), np.int8), np.ones((3, 4), np.int8))),
                        (lambda a: (np.any(a > 0, axis=0), a.astype(np.int16).max(axis=1)),
                         (TE.f32(3, 4),)),
                        (lambda a: (np.exp(a) / np.exp(a).sum(axis=-1, keepdims=True),
                                    a.mean(axis=0), a.astype(np.int8)),
                         (TE.f32(3, 4).astype(np.float16),))]:
            ks += compile_cupy(TE.export_auto(f, *args)).kernels
    return ks


@needs_nvrtc
def test_nvrtc_compiles_every_kernel():
    ks = every_kernel()
    ks += [k.split for k in ks if k.split is not None]
    assert len(ks) >= 40
    for k in ks:
        ptx = nvrtc_ptx(k, nvrtc=NVRTC)
        assert ".visible .entry %s(" % k.name in ptx
        if k.index == "dual":
            assert ".visible .entry %s(" % k.name in nvrtc_ptx(k, index64=True, nvrtc=NVRTC)
        if k.vec > 1:
            assert ".visible .entry %s(" % k.name in nvrtc_ptx(k, vec=True, nvrtc=NVRTC)
        if k.strided_positions:
            assert ".visible .entry %s(" % k.name in nvrtc_ptx(k, strided=True, nvrtc=NVRTC)


@needs_nvrtc
def test_nvrtc_contracts_no_multiply_add():
    """--fmad=false: a*b+c stays two roundings (the math library's own fma calls, inside
    expf and friends, are part of CUDA's documented accuracy and stay)."""
    a = TE.f32(4, 5)
    c = compile_cupy(TE.export_auto(lambda p, q, r: (p * q + r, (p * q - r).sum(axis=1)),
                                    a, a, a))
    for k in c.kernels:
        ptx = nvrtc_ptx(k, nvrtc=NVRTC)
        assert "mul.rn.f32" in ptx and "fma.rn.f32" not in ptx


@needs_nvrtc
def test_nvrtc_row_reductions_shuffle_and_load_once():
    for name in ("softmax", "ln_gelu"):
        k = TK.compiled(name).kernels[0]
        ptx = nvrtc_ptx(k, nvrtc=NVRTC)
        nred = len(TK.compiled(name).plan.steps and
                   [n for n in k.source.splitlines() if n.strip().startswith("//   reduce:")])
        assert nred == 2
        # row in registers: per reduction 5 butterfly shuffles and one barrier; row looped
        # over: the two reductions are one merged phase (one read of the row), 5 shuffles
        # per value it carries (max, sum of exp / sum, count, mean, squared deviations)
        # and one barrier; the register arrays never reach local memory
        carried = {"softmax": 2, "ln_gelu": 4}[name]
        assert ptx.count("shfl.sync.bfly.b32") == 5 * nred + 5 * carried
        assert ptx.count("bar.sync") == nred + 1
        assert ".local" not in ptx


def test_nvrtc_failure_names_the_kernel():
    class Bad:
        NVRTCError = RuntimeError

        def createProgram(self, *a):
            return 1

        def compileProgram(self, p, opts):
            raise RuntimeError("NVRTC_ERROR_COMPILATION")

        def getProgramLog(self, p):
            return "kernel.cu(3): error: identifier x is undefined"

        def destroyProgram(self, p):
            pass
    k = TK.compiled("softmax").kernels[0]
    with pytest.raises(RuntimeError, match="(?s)NVRTC failed on kernel k0_max_1.*identifier x"):
        nvrtc_ptx(k, nvrtc=Bad())


@pytest.mark.skipif(shutil.which("nvcc") is None and NVRTC is None,
                    reason="neither nvcc nor NVRTC installed")
def test_row_kernels_128_bit_variant_ptx():
    """The SS_VEC variant of softmax and layer norm loads 128 bits at a time (rows in
    registers and rows looped over) and keeps its register arrays out of local memory;
    the scalar variant has no vector load."""
    from test_cuda_pointwise import kernel_ptx
    for name, arrays in [("softmax", 1), ("ln_gelu", 3)]:
        k = TK.compiled(name).kernels[0]
        ptx = kernel_ptx(k, vec=True)
        assert len(re.findall(r"ld\.global(?:\.nc)?\.v4\.", ptx)) >= 2 * arrays, name
        assert ".local" not in ptx
        assert not re.search(r"ld\.global(?:\.nc)?\.v4\.", kernel_ptx(k))


@needs_nvrtc
@pytest.mark.parametrize("name", ["seed23", "softmax", "ln_gelu"])
def test_nvrtc_vector_variant_moves_128_bits(name):
    """The SS_VEC variant (chosen per call for aligned arrays and, for rows, lengths a
    multiple of the vector width) loads its contiguous arrays and stores its outputs 16
    bytes at a time: the elementwise chain and the row kernels (softmax, layer norm with
    GELU) have ``ld.global.nc.v4`` and ``st.global.v4`` in their PTX and no scalar
    ``st.global`` of a row's elements; the register chunks never reach local memory."""
    for k in TK.compiled(name).kernels:
        if k.vec <= 1:
            continue
        ptx = nvrtc_ptx(k, vec=True, nvrtc=NVRTC)
        assert re.search(r"ld\.global\.nc\.v4\.", ptx), k.name
        assert re.search(r"st\.global\.v4\.", ptx), k.name
        assert ".local" not in ptx, k.name
        if k.kind == "reduce" and not k.outputs[0].shape[-1:] == (1,):
            # every element store of the row is a vector store (a per-row result, written
            # by one lane, may stay scalar)
            scalar = re.findall(r"st\.global\.(?:f32|b32|u32)\b", ptx)
            rowouts = [n for n in k.outputs if len(n.shape) < len(k.outputs[0].shape)]
            assert len(scalar) <= len(rowouts), (k.name, scalar)
