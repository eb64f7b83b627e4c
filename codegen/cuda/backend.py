"""``backend="cupy"``: the Python driver around the generated kernels, and CuPy launches.

The driver is one straight-line Python function with ``f``'s signature:
  1. the program's input check (``CheckWriter``, the same lines ``ep.module()`` runs,
     with ``_ndarray`` bound to ``cupy.ndarray``), which also binds the size symbols;
  2. for arrays the kernels load, ``_kin``: the array itself when C-contiguous or a
     strided view whose element strides the kernels can take (its extent below LIMIT),
     else a contiguous copy; a launch that gets a non-contiguous array runs the kernel's
     SS_STRIDED variant, which indexes it with its strides (kernel arguments);
  3. one line per step: a library op as NumPy would call it, run on CuPy (``np`` is bound
     to CuPy; ``matmul`` / ``einsum`` reach cuBLAS), or an allocation of the kernel's
     outputs and a launch whose size arguments are expressions over the bound symbols
     (``_pw`` / ``_row`` pick the grid, the block and the kernel's variant per call);
  4. the outputs, in ``f``'s output structure.
Nothing in it needs a device: the same driver runs under the emulator (``emulate.py``)
with NumPy and CPU-compiled kernels, which is how it is tested without a GPU.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from symshape import runtime as _runtime
from symshape.errors import UserError
from symshape.capture.program import signature_checked
from symshape.algebra.expr import Expr, ceildiv, format_py
from symshape.codegen.function_writer import GeneratedFunction, Writing, program_spec, write
from symshape.codegen.pycode import Renderer, after_node, node_lines

from ..loopnest.plan import Plan
from ..loopnest.sizes import Ranges
from .kernels import (COL_SPLIT, GRID_CAP, LIMIT, MAX_BLOCK, ROW_BLOCK, ROW_ITEMS, SPLIT_BLOCKS,
                      SPLIT_ROWS, WARP_ROW, Kernel, plan_program)

NEEDS_CUPY = "backend='cupy' needs CuPy: pip install 'symshape[gpu]'"


def _py(e) -> str:
    return format_py(e, lambda s: s.name) if type(e) is Expr else repr(e)


# --------------------------------------------------------------------------- driver
class Driver(GeneratedFunction):
    """The driver's pieces (the function writer's record): the input check, the body, and
    the two functions made of them (``source``: check then body, with ``f``'s signature;
    ``core_source``: the body only, taking the plain parameters and the size symbols the
    check bound, for the JIT).  Compiled per runtime by ``CompiledCupy.bind``."""


def build_driver(ep, plan: Plan) -> Driver:
    """The driver of a plan, and its device-independent namespace."""
    # state arrays live on the device as copies made when the driver is bound (a program
    # that writes Python state is refused for this backend: capture/stateprog.refuse_writes)
    spec = program_spec(ep, label="cupy", compile=False, state=None)
    return write(spec, lambda ctx: _driver_body(ctx, ep, plan), record=Driver())


def _driver_body(ctx: Writing, ep, plan: Plan) -> List[str]:
    """One line per step of the plan: library ops as NumPy calls, kernels as an allocation
    of their outputs and a launch; then the write-backs and the outputs."""
    graph = ep.graph
    ns = ctx.ns
    r = Renderer({n: n.name for n in graph.nodes}, ns)
    body: List[str] = []
    bound = set(ctx.bound)
    pending = ctx.runtime_checks
    contig = {n: "_c_" + n.name for n in plan.contig}
    for n in graph.inputs:
        if n in contig:
            body.append("%s = _kin(%s)" % (contig[n], n.name))
    dtypes: Dict[str, str] = {}

    def dt(dtype) -> str:
        name = "_dt_" + np.dtype(dtype).name
        dtypes[name] = np.dtype(dtype)
        return name

    for kind, obj in plan.steps:
        if kind == "py":
            node = obj
            body.extend(node_lines(node, r, ns))
            body.extend(after_node(node, bound, pending, r))
            if node in contig:
                body.append("%s = _kin(%s)" % (contig[node], node.name))
            continue
        k: Kernel = obj
        i = plan.kernels.index(k)
        body.append("# %s: %s" % (k.name, k.summary))
        for n in k.outputs:
            body.append("%s = _empty(%s, %s)" % (n.name, _shape_py(n.shape), dt(n.dtype)))
        args = []
        for a_kind, v in k.args:
            if a_kind in ("out", "in"):
                args.append(contig.get(v, v.name) if a_kind == "in" else v.name)
            elif a_kind == "stride":
                args.append("_es(%s, %d)" % (contig.get(v[0], v[0].name), v[1]))
            else:
                args.append(_py(v))
        if k.index == "dual":
            big = " or ".join("%s >= %d" % (_py(e), LIMIT) for e in k.big_exprs)
        else:
            big = repr(k.index == "int64")
        argt = "(%s%s)" % (", ".join(args), "," if len(args) == 1 else "")
        if k.kind == "pointwise":
            body.append("_pw(_K[%d], %s, %s, %s)" % (i, _py(k.numel), argt, big))
        else:
            if k.empty_max and _may_be_zero(ep, k.inner):
                body.append("if %s == 0: _rt_no_identity(%r)" % (_py(k.inner), k.empty_max[0]))
            lens = "".join(", " + _py(e) for e in k.vec_lens)
            body.append("_row(_K[%d], %s, %s, %s, %s%s)" % (i, _py(k.rows), _py(k.inner), argt,
                                                           big, lens))
    ns.update(dtypes)
    return body + ctx.finish(r)


def _shape_py(shape) -> str:
    parts = [_py(s) for s in shape]
    return "(%s,)" % parts[0] if len(parts) == 1 else "(%s)" % ", ".join(parts)


def _may_be_zero(ep, e) -> bool:
    if type(e) is int:
        return e == 0
    return Ranges(ep.constraints.ranges).bound(e).lower <= 0


def _no_identity(name: str) -> None:
    raise ValueError("zero-size array to reduction operation %s which has no identity" % name)


def launchers(runtime):
    """``_pw`` / ``_row``: grid and block for a launch (no launch for an empty domain).
    A pointwise kernel runs its 128-bit variant when every array it reads or writes at
    the thread's own elements starts on a 16-byte boundary (CuPy's allocations do; an
    offset view may not); a row kernel runs its 128-bit variant when, besides, the row
    length is a multiple of the vector width (every row then starts 16-byte aligned) and
    the indices are 32-bit; a column kernel's (V adjacent columns per lane, 32 * V per
    block) when the last axes its lanes read are multiples of V (``k.vec_lens``)."""
    launch, aligned = runtime.launch, runtime.aligned

    def strided(k, args):
        return any(not args[p].flags.c_contiguous for p in k.strided_positions)

    def _pw(k, n, args, big):
        if n > 0:
            st = strided(k, args)
            vec = not st and k.vec > 1 and n >= k.vec and \
                all(aligned(args[p]) for p in k.vec_positions)
            per = MAX_BLOCK * (k.vec if vec else 1)
            launch(k, min(ceildiv(n, per), GRID_CAP), MAX_BLOCK, args, big, vec, st)

    def _row(k, rows, inner, args, big, *lens):
        if rows > 0:
            st = strided(k, args)
            chunk = ROW_BLOCK * ROW_ITEMS
            if k.columns:
                groups = ceildiv(rows, 32)
                if k.split is not None and inner > chunk and groups < SPLIT_ROWS // 2:
                    # few column groups, long columns: split the columns' elements into
                    # ranges (at least 512 elements each) over about SPLIT_BLOCKS blocks
                    sk = k.split
                    nch = max(1, min(ceildiv(inner, 512), SPLIT_BLOCKS // groups))
                    ws = runtime.xp.empty((max(sk.ws_slots, 1) * rows * nch,), np.float64)
                    for p in range(sk.passes):
                        launch(sk, min(groups * nch, GRID_CAP), 32 * COL_SPLIT,
                               args + (ws, p, nch), big, False, st)
                    return
            elif k.split is not None and inner > chunk and rows < SPLIT_ROWS:
                # few long rows: blocks take chunks of rows, in passes over a workspace
                sk = k.split
                nch = ceildiv(inner, chunk)
                ws = runtime.xp.empty((max(sk.ws_slots, 1) * rows * nch,), np.float64)
                for p in range(sk.passes):
                    launch(sk, min(rows * nch, GRID_CAP), ROW_BLOCK, args + (ws, p, nch), big,
                           False, st)
                return
            # (not with 64-bit indices: that variant would exceed 64 registers; it is for
            # arrays of 2**31 elements, where the scalar loads are the least concern);
            # ``lens``: a column kernel's last axes, which its lanes read V columns at a time
            vec = not st and not big and k.vec > 1 and \
                all(n % k.vec == 0 for n in (lens or (inner,))) and \
                all(aligned(args[p]) for p in k.vec_positions)
            block, per_block = (32 * COL_SPLIT, 32 * (k.vec if vec else 1)) if k.columns \
                else row_launch(inner)
            launch(k, min(ceildiv(rows, per_block), GRID_CAP), block, args, big,
                   vec, st)
    return _pw, _row


def kernel_input(contiguous):
    """``_kin``: an array a kernel loads as it is when C-contiguous or a view with
    element-multiple strides whose extent fits the 32-bit index limit (the SS_STRIDED
    variant reads it in place); otherwise a contiguous copy."""
    def _kin(a):
        if a.flags.c_contiguous:
            return a
        item = a.itemsize
        if all(s % item == 0 for s in a.strides) and a.size and \
                sum((n - 1) * abs(s // item) for n, s in zip(a.shape, a.strides)) < LIMIT:
            return a
        return contiguous(a)
    return _kin


def _es(a, axis: int) -> int:
    """The element stride of ``a`` along ``axis`` (0 along an axis of size 1)."""
    return a.strides[axis] // a.itemsize if a.shape[axis] != 1 else 0


def row_launch(inner: int):
    """(threads per block, rows per block) of a row reduction: rows of at most WARP_ROW
    elements take one warp each, eight to a block; longer rows a block each, the smallest
    power of two (64 .. ROW_BLOCK) that keeps ROW_ITEMS elements per thread.  The kernel
    derives the same split from the row length."""
    if inner <= WARP_ROW:
        return MAX_BLOCK, MAX_BLOCK // 32
    b = 64
    while b * ROW_ITEMS < inner and b < ROW_BLOCK:
        b <<= 1
    return b, 1


# --------------------------------------------------------------------------- CuPy runtime
class _XP:
    """``np`` for library steps: CuPy's function when it has one, else NumPy's (dtype
    objects, ``np.s_``)."""

    def __init__(self, cupy) -> None:
        self._cp = cupy

    def __getattr__(self, name: str):
        try:
            v = getattr(self._cp, name)
        except AttributeError:
            v = getattr(np, name)
        setattr(self, name, v)
        return v


class _CupyRT:
    """``_rt`` for generated code on CuPy arrays."""

    def __init__(self, cupy) -> None:
        self._cp = cupy

    def __getattr__(self, name: str):
        return getattr(_runtime, name)

    def bad_array(self, path: str, a, ndim: int, dtype) -> None:
        # the one failure protocol, on CuPy arrays
        _runtime.Failures(array_type=self._cp.ndarray, lib="cupy").bad_array(path, a, ndim, dtype)

    def setitem(self, x, index, value):
        out = x.copy()
        out[index] = value
        return out

    def for_loop(self, body, start, stop, step, carried, extra, row_shapes, dtypes):
        """The ``for_loop`` node (a Python ``for`` over a symbolic count) as a Python loop
        whose body's library calls run on CuPy: the stacked rows of a loop that does not
        run are CuPy arrays too (``runtime.for_loop`` makes NumPy ones)."""
        out = _runtime.for_loop(body, start, stop, step, carried, extra, row_shapes, dtypes)
        nc = len(tuple(carried))
        return out[:nc] + tuple(v if isinstance(v, self._cp.ndarray) else self._cp.asarray(v)
                                for v in out[nc:])


_RAW: Dict[tuple, Any] = {}
#: NVRTC options of every kernel: no contraction of a*b+c into a fused multiply-add, which
#: rounds once where NumPy rounds twice
NVRTC_OPTIONS = ("--fmad=false",)


class CupyRuntime:
    def __init__(self, cupy) -> None:
        self.cp = cupy
        self.xp = _XP(cupy)
        self.ndarray = cupy.ndarray
        self.rt = _CupyRT(cupy)

    def asarray(self, v):
        # ascontiguousarray makes a 0-d array 1-d: keep the constant's shape
        return self.cp.ascontiguousarray(self.cp.asarray(v)).reshape(v.shape) \
            if isinstance(v, np.ndarray) else v

    def aligned(self, a) -> bool:
        return a.data.ptr % 16 == 0

    def kernel(self, k: Kernel, big: bool, vec: bool = False, strided: bool = False):
        opts = NVRTC_OPTIONS + (("-DSS_INDEX64",) if big and k.index == "dual" else ()) + \
            (("-DSS_VEC",) if vec else ()) + (("-DSS_STRIDED",) if strided else ())
        key = (k.source, k.name, opts)
        fn = _RAW.get(key)
        if fn is None:
            fn = _RAW[key] = self.cp.RawKernel(k.source, k.name, options=opts)
        return fn

    def launch(self, k: Kernel, grid: int, block: int, args: tuple, big: bool,
               vec: bool = False, strided: bool = False) -> None:
        conv = tuple(np.int64(a) if kind in ("size", "scalar", "stride", "pass", "nchunks")
                     else a
                     for (kind, _), a in zip(k.args, args))
        self.kernel(k, bool(big), vec, strided)((grid,), (block,), conv)


def cupy_runtime() -> CupyRuntime:
    """The CuPy runtime, or UserError saying what is missing."""
    try:
        import cupy
    except ImportError:
        raise UserError(NEEDS_CUPY) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        detail = ""
    except Exception as e:          # CUDARuntimeError: no driver / no device
        count, detail = 0, " (%s)" % e
    if not count:
        raise UserError("backend='cupy': CuPy is installed but no CUDA device was found%s; "
                        "run on a machine with an NVIDIA GPU, or use backend='numpy'" % detail)
    return CupyRuntime(cupy)


# --------------------------------------------------------------------------- compiled
class CompiledCupy:
    """An ExportedProgram compiled for CuPy: call it with CuPy arrays.

    ``.source`` holds the Python driver and every kernel's CUDA C; ``.kernels`` the
    kernels (name, source, parameters, index mode; ``.split``: a reduction's split-row
    companion, run for few long rows).  Generating them needs no device; the
    first call checks for CuPy and a device and raises UserError naming what is missing.
    For ``ss.compile`` it offers what the JIT's dispatcher uses: ``check_lines``, ``ns``,
    ``param_names``, ``sym_names`` and ``core`` (the body without the check).
    """

    backend = "cupy"

    def __init__(self, ep) -> None:
        self.ep = ep
        self.plan = plan_program(ep)
        self.kernels: List[Kernel] = self.plan.kernels
        self.driver = d = build_driver(ep, self.plan)
        self.name = d.name
        self.ns: Dict[str, Any] = dict(d.ns)
        self.ns["_ndarray"] = _cupy_ndarray()
        self._full = None
        self._core = None
        self.compiled = self
        self.__signature__ = ep.call_signature
        self.__name__ = d.name

    # what the JIT's dispatcher reads, as the driver has it
    check_lines = property(lambda self: self.driver.check_lines)
    param_names = property(lambda self: self.driver.param_names)
    sym_names = property(lambda self: self.driver.sym_names)
    input_check = property(lambda self: self.driver.input_check)
    refuses_shared = property(lambda self: self.driver.refuses_shared)

    @property
    def driver_source(self) -> str:
        return self.driver.source

    @property
    def source(self) -> str:
        parts = ["# ---- Python driver (backend='cupy') " + "-" * 40, self.driver.source]
        for i, k in enumerate(self.kernels):
            parts.append("# ---- CUDA kernel _K[%d] = %s (%s; index: %s) %s" % (
                i, k.name, k.kind, k.index, "-" * 10))
            parts.append(k.source)
        return "\n".join(parts)

    def bind(self, runtime, core: bool = False):
        """The driver bound to a runtime (CuPy, or the emulator's NumPy): the checked
        function, or with ``core=True`` the body taking parameters and size symbols."""
        ns = dict(self.driver.ns)
        for n in self.ep.graph.constants:
            ns[n.name] = runtime.asarray(n.meta["value"])
        for key, v in list(ns.items()):
            if isinstance(v, np.ndarray):
                ns[key] = runtime.asarray(v)
        _pw, _row = launchers(runtime)
        ns.update(np=runtime.xp, _ndarray=runtime.ndarray, _rt=runtime.rt, _K=self.kernels,
                  _pw=_pw, _row=_row, _empty=runtime.xp.empty,
                  _kin=kernel_input(runtime.xp.ascontiguousarray), _es=_es,
                  _rt_no_identity=_no_identity)
        fn = self.driver.compile(ns, "cupy", core)
        # a call that does not fit f's signature is a UserError naming it, as in module()
        return fn if core else signature_checked(fn, self.ep.call_signature, self.ep.name)

    def __call__(self, *args, **kwargs):
        fn = self._full
        if fn is None:
            fn = self._full = self.bind(cupy_runtime())
        return fn(*args, **kwargs)

    full = property(lambda self: self.__call__)

    def core(self, *args):
        fn = self._core
        if fn is None:
            fn = self._core = self.bind(cupy_runtime(), core=True)
        return fn(*args)

    def __repr__(self) -> str:
        return "<CompiledCupy %s: %d kernel%s>" % (self.name, len(self.kernels),
                                                  "" if len(self.kernels) == 1 else "s")


def _cupy_ndarray():
    """``cupy.ndarray`` for the JIT's guards, or a type no value has when CuPy is absent
    (the call then reaches ``__call__``, which says CuPy is missing)."""
    try:
        import cupy
        return cupy.ndarray
    except ImportError:
        return type("cupy_ndarray_unavailable", (), {})


def compile_cupy(ep) -> CompiledCupy:
    """``ep.compile(backend="cupy")``: fused, shape-polymorphic CUDA kernels + a driver."""
    return CompiledCupy(ep)
