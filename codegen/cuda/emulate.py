"""Run generated CUDA kernels without a GPU, and check that they compile for one.

``emulate(compiled)`` returns a callable with the program's signature that runs the same
Python driver as the CuPy backend on NumPy arrays: every kernel is the very source the GPU
would compile, built for the CPU by g++ with ``shim.h`` (threadIdx / blockIdx / blockDim /
gridDim, __shared__, __syncthreads, __shfl_xor_sync, atomics, float16 conversions; see the
header for the execution model) and launched over the same grid the driver computes, in
the variant the driver picks per call (64-bit index, 128-bit, strided; one library per
variant); the library steps (matmul, einsum, ...) run as the NumPy calls.  Compiled
libraries are cached in a temporary directory keyed by the hash of everything that goes
into them.

``nvcc_ptx(kernels, arch)`` compiles kernel sources to PTX with nvcc (one translation
unit for many kernels: their helpers carry include guards).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from typing import Dict, List, Optional, Sequence

import numpy as np

from symshape import runtime as _runtime

from .backend import CompiledCupy
from .kernels import Kernel

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim.h")
# -ffp-contract=off: no fused multiply-add, as the GPU build (--fmad=false) and NumPy
# -fno-strict-aliasing: the 128-bit variants move array chunks through uint4 (as CUDA does)
CXXFLAGS = ["-x", "c++", "-std=c++14", "-O1", "-shared", "-fPIC", "-w", "-ffp-contract=off",
            "-fno-strict-aliasing"]
_ERRORS = {1: "__syncthreads() reached by only some threads of a block",
           2: "__syncthreads() in a kernel launched as barrier-free",
           3: "out of memory for the emulated block",
           4: "a warp shuffle reached by only some lanes of a warp"}


def cache_dir() -> str:
    d = os.environ.get("SYMSHAPE_EMU_CACHE") or os.path.join(
        tempfile.gettempdir(), "symshape-cuda-emu-%s" % getattr(os, "getuid", lambda: 0)())
    os.makedirs(d, exist_ok=True)
    return d


def _cxx() -> Optional[str]:
    return os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")


def _strip(ct: str) -> str:
    return ct.replace("__restrict__", "").strip()


def wrapper(k: Kernel) -> str:
    """``extern "C" int ss_launch_<name>(grid, block, argv)``: unpacks argv into the
    kernel's parameters and runs the grid."""
    fields = []
    unpack = []
    call = []
    for i, (ct, _) in enumerate(k.params):
        t = _strip(ct)
        fields.append("  %s a%d;" % (t, i))
        if t.endswith("*"):
            unpack.append("  a.a%d = (%s)argv[%d];" % (i, t, i))
        else:
            unpack.append("  a.a%d = *(%s*)argv[%d];" % (i, t, i))
        call.append("a->a%d" % i)
    n = k.name
    return "\n".join([
        "namespace { struct ss_args_%s {" % n] + fields + ["};",
        "void ss_call_%s(void* p) { ss_args_%s* a = (ss_args_%s*)p; %s(%s); }"
        % (n, n, n, n, ", ".join(call)),
        "}",
        'extern "C" int ss_launch_%s(unsigned int gx, unsigned int bx, void** argv) {' % n,
        "  ss_args_%s a;" % n] + unpack + [
        "  return ss_emu::launch(gx, bx, %d, ss_call_%s, &a);" % (1 if k.uses_sync else 0, n),
        "}", ""])


def build_library(kernels: Sequence[Kernel], index64: bool = False,
                  vec: bool = False, strided: bool = False) -> ctypes.CDLL:
    """One shared library holding every kernel (and its launcher), cached by hash."""
    cxx = _cxx()
    if cxx is None:
        raise RuntimeError("the CUDA emulator needs a C++ compiler (g++)")
    with open(SHIM) as f:
        shim = f.read()
    text = '#include "shim.h"\n' + "\n".join(k.source + wrapper(k) for k in kernels)
    flags = CXXFLAGS + (["-DSS_INDEX64"] if index64 else []) + (["-DSS_VEC"] if vec else []) \
        + (["-DSS_STRIDED"] if strided else [])
    key = hashlib.sha256("\0".join([shim, text, " ".join(flags), cxx]).encode()).hexdigest()
    d = cache_dir()
    lib = os.path.join(d, "k_%s.so" % key[:24])
    if not os.path.exists(lib):
        src = os.path.join(d, "k_%s.cu" % key[:24])
        with open(src, "w") as f:
            f.write(text)
        tmp = lib + ".%d.tmp" % os.getpid()
        proc = subprocess.run([cxx] + flags + ["-I", os.path.dirname(SHIM), "-o", tmp, src],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("g++ failed on the generated kernels:\n%s" % proc.stderr[-4000:])
        os.replace(tmp, lib)
    return ctypes.CDLL(lib)


class EmuRuntime:
    """The runtime interface of the driver, backed by NumPy and the emulated kernels."""

    xp = np
    ndarray = np.ndarray
    rt = _runtime

    def __init__(self, kernels: Sequence[Kernel], force_index64: bool = False) -> None:
        self.kernels = list(kernels)
        self.kernels += [k.split for k in kernels if k.split is not None and
                         all(k.split is not x for x in self.kernels)]
        self.force_index64 = force_index64
        self._libs: Dict[bool, ctypes.CDLL] = {}
        self.launches: List[tuple] = []          # (kernel name, grid, block, index64)
        self.vectorised: List[str] = []          # kernels launched as their 128-bit variant
        self.strided: List[str] = []             # ... as their strided-input variant

    def _lib(self, big: bool, vec: bool = False, strided: bool = False) -> ctypes.CDLL:
        key = big if not (vec or strided) else (big, "vec" if vec else "strided")
        lib = self._libs.get(key)
        if lib is None:
            lib = self._libs[key] = build_library(self.kernels, big, vec, strided)
        return lib

    def aligned(self, a) -> bool:
        return a.ctypes.data % 16 == 0

    def asarray(self, v):
        # ascontiguousarray makes a 0-d array 1-d: keep the constant's shape
        return np.ascontiguousarray(v).reshape(v.shape) if isinstance(v, np.ndarray) else v

    def launch(self, k: Kernel, grid: int, block: int, args: tuple, big: bool,
               vec: bool = False, strided: bool = False) -> None:
        big = bool(big or self.force_index64) and k.index == "dual"
        fn = getattr(self._lib(big, vec, strided), "ss_launch_" + k.name)
        fn.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
        fn.restype = ctypes.c_int
        argv = (ctypes.c_void_p * max(len(args), 1))()
        keep = []
        for i, ((kind, node), (ct, _), a) in enumerate(zip(k.args, k.params, args)):
            if kind == "ws":                        # the split companion's workspace
                if not isinstance(a, np.ndarray) or a.dtype != np.float64:
                    raise TypeError("kernel %s argument %d: expected a float64 workspace"
                                    % (k.name, i))
                argv[i] = a.ctypes.data
            elif kind in ("out", "in"):
                if not isinstance(a, np.ndarray) or a.dtype != node.dtype or \
                        not (a.flags.c_contiguous or (strided and kind == "in")):
                    raise TypeError("kernel %s argument %d: expected a C-contiguous %s array, "
                                    "got %r" % (k.name, i, node.dtype, type(a)))
                if kind == "out" and not a.flags.writeable:
                    raise TypeError("kernel %s argument %d is read-only" % (k.name, i))
                argv[i] = a.ctypes.data if a.size else None
            else:
                c = ctypes.c_longlong(int(a))
                keep.append(c)
                argv[i] = ctypes.addressof(c)
        self.launches.append((k.name, grid, block, big))
        if vec:
            self.vectorised.append(k.name)
        if strided:
            self.strided.append(k.name)
        err = fn(grid, block, argv)
        if err:
            raise RuntimeError("emulated kernel %s: %s" % (k.name, _ERRORS.get(err, err)))


class EmulatedCupy(CompiledCupy):
    """``compile_cupy(ep)`` whose runtime is the emulator: NumPy arrays in and out.  It has
    the whole interface of CompiledCupy (``source``, ``check_lines``, ``ns``, ``core``...),
    so it can stand in for the CuPy backend in ``ss.compile`` on a machine without a GPU
    (register it with ``symshape.codegen.register_backend``)."""

    backend = "cupy-emulated"

    def __init__(self, ep, force_index64: bool = False) -> None:
        super().__init__(ep)
        self.runtime = EmuRuntime(self.kernels, force_index64)
        self.ns["_ndarray"] = np.ndarray

    def __call__(self, *args, **kwargs):
        if self._full is None:
            self._full = self.bind(self.runtime)
        return self._full(*args, **kwargs)

    def core(self, *args):
        if self._core is None:
            self._core = self.bind(self.runtime, core=True)
        return self._core(*args)


def emulate(compiled, force_index64: bool = False):
    """A callable running ``compiled`` (a CompiledCupy) on NumPy arrays with emulated
    kernels; ``.runtime.launches`` records every launch."""
    rt = EmuRuntime(compiled.kernels, force_index64)
    fn = compiled.bind(rt)
    fn.runtime = rt
    return fn


# --------------------------------------------------------------------------- nvcc
def nvcc_path() -> Optional[str]:
    return shutil.which("nvcc")


def nvcc_ptx(kernels: Sequence[Kernel], arch: str = "sm_80", index64: bool = False,
             rename: bool = False, vec: bool = False, strided: bool = False) -> str:
    """PTX of the kernels compiled together by ``nvcc --ptx -arch=<arch>``.  ``rename``
    suffixes each kernel name with its position (for kernels of several programs);
    ``index64`` / ``vec`` / ``strided`` compile the variant the driver picks per call
    (``-DSS_INDEX64``, ``-DSS_VEC``: 128-bit loads and stores, ``-DSS_STRIDED``)."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise RuntimeError("nvcc not found")
    parts = []
    for i, k in enumerate(kernels):
        src = k.source
        if rename:
            src = src.replace(" %s(" % k.name, " %s_p%d(" % (k.name, i))
        parts.append(src)
    with tempfile.TemporaryDirectory() as d:
        cu = os.path.join(d, "kernels.cu")
        out = os.path.join(d, "kernels.ptx")
        with open(cu, "w") as f:
            f.write("\n".join(parts))
        cmd = [nvcc, "--ptx", "-arch=%s" % arch, "--fmad=false", "-o", out, cu]
        for flag, on in (("-DSS_INDEX64", index64), ("-DSS_VEC", vec),
                         ("-DSS_STRIDED", strided)):
            if on:
                cmd.insert(1, flag)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("nvcc failed (%s):\n%s" % (" ".join(cmd), proc.stderr[-4000:]))
        with open(out) as f:
            return f.read()
