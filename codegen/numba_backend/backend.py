"""``backend="numba"``: the Python driver around the kernels, and their disk cache.

The driver is one straight-line Python function with ``f``'s signature, as the CuPy
backend's: the program's input check (which binds the size symbols), then one line per
step of the plan: a library op as eager NumPy calls it (``matmul`` stays BLAS), or an
allocation of a kernel's outputs and its call with the sizes as arguments, then the
write-backs and the outputs.  A kernel whose work (elements of its domain) reaches
``PARALLEL_WORK`` may run its ``prange`` variant when numba has more than one thread:
whether that pays is measured per kernel (``rt.tuned``: both variants timed on the first
calls, threads must win by 10%, measured again now and then), and while the machine's
other runnable threads fill its CPUs the serial variant runs (a parallel region waits
at its barrier for a thread that gets no core: 0.01 ms became 16 ms on a busy 2-core
machine).

Kernel modules live in a cache directory (``SYMSHAPE_NUMBA_CACHE``, else
``$XDG_CACHE_HOME/symshape/numba`` or ``~/.cache/symshape/numba``), one file per kernel
named by the hash of its source; numba's own cache (``cache=True``) keeps the machine code
beside it, so another process running the same program loads it instead of compiling.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import importlib.util
import os
import re
import sys
import tempfile
from typing import Any, Dict, List

import numpy as np

from symshape import runtime as _runtime
from symshape.capture.ir import Node
from symshape.codegen.function_writer import GeneratedFunction, Writing, program_spec, write
from symshape.codegen.pycode import Renderer, after_node, emit_node, node_lines
from symshape.errors import UserError
from symshape.algebra.expr import Expr, format_py

from .. import rt as _cg
from ..inplace import inplace_writes, into_helper
from ..rt import THREADS as _RT_THREADS, give as _rt_give, new_tune, take as _rt_take, \
    tuned as _rt_tuned
from .kernels import NumbaKernel, plan_program
from .loops import loop_error_type, loop_failed, loop_lines
from .ops import HELPERS

INSTALL_HINT = 'backend="numba" needs numba: pip install "symshape[numba]"'
#: elements of work from which a kernel runs in parallel (when numba has threads)
PARALLEL_WORK = 1 << 16
_OPTIONS = 'cache=True, nogil=True, error_model="numpy"'


def require_numba():
    """The numba module, or UserError saying how to install it."""
    try:
        import numba
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return numba


# --------------------------------------------------------------------------- disk cache
def cache_dir() -> str:
    """Where kernel modules (and numba's machine code beside them) are kept."""
    d = os.environ.get("SYMSHAPE_NUMBA_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache")
        d = os.path.join(base, "symshape", "numba")
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    uid = getattr(os, "getuid", lambda: 0)()
    d = os.path.join(tempfile.gettempdir(), "symshape-numba-%d" % uid)
    os.makedirs(d, exist_ok=True)
    return d


@functools.lru_cache(maxsize=None)
def _vmath_hash() -> str:
    from . import vmath
    with open(vmath.__file__, "rb") as fh:
        return hashlib.sha1(fh.read()).hexdigest()[:12]


def module_source(k: NumbaKernel) -> str:
    """The kernel's module: a serial and a parallel (``prange``) variant of one body.  It
    names the version of ``vmath.py`` it calls: numba's cache does not notice a change
    of a called module, a new file name does."""
    body = k.source
    return "\n".join([
        '"""symshape numba kernel (%s), generated: edits are overwritten.\n\nvmath %s\n"""'
        % (k.kind, _vmath_hash()),
        "import numpy as np",
        "from numba import njit, prange",
        HELPERS,
        "",
        "@njit(%s)" % _OPTIONS,
        body.replace("def kernel(", "def serial(", 1).replace("RANGE(", "range("),
        "",
        "@njit(%s, parallel=True)" % _OPTIONS,
        body.replace("def kernel(", "def parallel(", 1).replace("RANGE(", "prange("),
        ""])


_LOADED: Dict[str, Any] = {}


def load_kernel(k: NumbaKernel):
    """(serial, parallel) dispatchers of ``k``: its module written once into the cache
    directory (atomically: other processes may write the same file) and imported."""
    got = _LOADED.get(k.key)
    if got is not None:
        return got
    require_numba()
    src = module_source(k)
    d = cache_dir()
    name = "ssnb_%s" % hashlib.sha1(src.encode()).hexdigest()[:20]
    path = os.path.join(d, name + ".py")
    try:
        with open(path) as fh:
            same = fh.read() == src
    except OSError:
        same = False
    if not same:
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(src)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod              # numba's cache locates functions by module
    spec.loader.exec_module(mod)
    got = _LOADED[k.key] = (mod.serial, mod.parallel)
    return got


def _threads() -> int:
    """Threads a parallel kernel may use now: numba's (``numba.set_num_threads``), no more
    than symshape's (``SYMSHAPE_THREADS``, the CPUs the process may use)."""
    import numba
    return min(numba.get_num_threads(), _RT_THREADS)


# --------------------------------------------------------------------------- driver
def _py(e) -> str:
    return format_py(e, lambda s: s.name) if type(e) is Expr else repr(e)


def _shape_py(shape) -> str:
    parts = [_py(s) for s in shape]
    return "(%s,)" % parts[0] if len(parts) == 1 else "(%s)" % ", ".join(parts)


def _numel(shape) -> int:
    out = 1
    for d in shape:
        out *= d
    return out


def _alloc(pool: list, shape: tuple, dtype) -> np.ndarray:
    """An array of ``shape`` from ``pool`` (free buffers of earlier calls), remembered
    there for later calls."""
    if _numel(shape) < PARALLEL_WORK:
        return np.empty(shape, dtype)
    a = _rt_take(pool, shape, dtype)
    _rt_give(pool, a)
    return a


def _no_identity(name: str) -> None:
    raise ValueError("zero-size array to reduction operation %s which has no identity" % name)


class CompiledNumba(GeneratedFunction):
    """An ExportedProgram compiled for numba: the driver's record (``source``, ``full``,
    ``core``, ``ns``, ``check_lines``...), the ``plan`` and its ``kernels``."""

    backend = "numba"

    def __init__(self) -> None:
        super().__init__()
        self.plan = None
        self.kernels: List[NumbaKernel] = []

    @property
    def kernel_source(self) -> str:
        return "\n".join("# ---- numba kernel _K%d (%s: %s)\n%s" % (
            i, k.kind, k.summary, module_source(k)) for i, k in enumerate(self.kernels))


def _driver_body(ctx: Writing, ep, plan) -> List[str]:
    """The driver's lines: each step of the plan in order, then the results."""
    d = _Driver(ctx, ep, plan)
    for kind, obj in plan.steps:
        if kind == "py":
            d.library_step(obj)
        else:
            d.kernel_step(obj)
    return d.body + ctx.finish(d.r, [(i, f) for i, f in ctx.spec.mutations
                                     if i not in d.done])


class _Driver:
    """The driver being written: its lines, namespace and buffer pools."""

    def __init__(self, ctx: Writing, ep, plan) -> None:
        graph = ep.graph
        self.ranges = ep.constraints.ranges
        self.ns = ns = ctx.ns
        self.r = Renderer({n: n.name for n in graph.nodes}, ns)
        self.body: List[str] = []
        self.bound = set(ctx.bound)
        self.pending = ctx.runtime_checks
        for n in graph.constants:
            ns[n.name] = np.asarray(n.meta["value"])
        self.kernels = [obj for kind, obj in plan.steps if kind == "kernel"]
        self.pools: List[list] = ns["_P"]
        self.pooled: set = set()             # matmul results in pooled buffers of this call
        self.readers: Dict[Node, int] = {}   # how many steps read each node's array
        for kind, obj in plan.steps:
            for x in (obj.input_nodes() if kind == "py" else obj.loads):
                self.readers[x] = self.readers.get(x, 0) + 1
        outs = {o for o in graph.outputs if type(o) is Node}
        self.keep = outs | {x for pair in ep.mutation_pairs for x in pair}
        # x[i] = v into x itself where nothing else reads x (a KV cache update writes its
        # row, not a copy of the cache); a mutated input so written needs no write-back
        compute = [n for n in graph.nodes if n.op not in ("input", "constant")]
        self.inplace, self.done = inplace_writes(compute, ctx.spec.mutations,
                                                 outs | ctx.state_kept())

    def library_step(self, obj: Node) -> None:
        """A node NumPy computes (a matmul into a pooled buffer where it can)."""
        body, r, ns = self.body, self.r, self.ns
        if _pooled_matmul(obj):
            # BLAS writes into a pooled buffer (the same call: the same result)
            a, b = obj.inputs
            dt = "_dt_" + obj.dtype.name
            ns[dt] = obj.dtype
            body.append("%s = np.matmul(%s, %s, out=_alloc(_P[%d], %s, %s))" % (
                obj.name, a.name, b.name, len(self.pools), _shape_py(obj.shape), dt))
            self.pools.append([])
            self.pooled.add(obj)
        elif obj in self.inplace:
            body.extend(node_lines(obj, r, ns, lambda n=obj: into_helper(emit_node(n, r))))
        elif obj.op == "for_loop" and self.loop_step(obj):
            pass
        else:
            body.extend(node_lines(obj, r, ns))
        body.extend(after_node(obj, self.bound, self.pending, r))

    def loop_step(self, obj: Node) -> bool:
        """A loop over a symbolic count as one numba function, where its body fits one
        (loops.py); False: the caller emits the Python loop over the body's NumPy code."""
        lines = loop_lines(obj, self.r, self.ns, self.ranges, cache_dir())
        if lines is None:
            return False
        # numba compiles the loop on its first call (per argument types): where it fails,
        # the Python loop runs instead (a warning says so, once)
        py = node_lines(obj, self.r, self.ns)
        self.ns["_NumbaError"] = loop_error_type()
        self.ns["_loop_failed"] = loop_failed
        self.body.extend(py[:-1] + ["try:"] + ["    " + ln for ln in lines] +
                         ["except _NumbaError as _e:",
                          "    _loop_failed(%r, _e)" % (obj.source or obj.name),
                          "    " + py[-1]])
        return True

    def kernel_step(self, k: NumbaKernel) -> None:
        """A kernel: its outputs allocated (or written over a dead input), then its call,
        in parallel where the work is large and measured faster."""
        i = self.kernels.index(k)
        reuse = {}
        for n in k.outputs:
            x = _reusable(n, k, self.pooled, self.readers, self.keep)
            if x is not None and x not in reuse.values():
                reuse[n] = x
                self.pooled.discard(x)
        if reuse:
            k = in_place(k, reuse)
        ser, par = load_kernel(k)
        self.ns["_K%ds" % i], self.ns["_K%dp" % i] = ser, par
        self.body.append("# _K%d: %s" % (i, k.summary))
        for n in k.outputs:
            self._allocate(n, reuse)
        self._call(i, k)

    def _allocate(self, n: Node, reuse: Dict[Node, Node]) -> None:
        """The array kernel output ``n`` is written into."""
        dt = "_dt_" + n.dtype.name
        self.ns[dt] = n.dtype
        if n in reuse:
            # the pooled matmul result this kernel alone reads, element by element:
            # the output overwrites it (no new memory, one array less in cache)
            self.body.append("%s = %s" % (n.name, reuse[n].name))
        elif all(type(d) is int for d in n.shape) and _numel(n.shape) < PARALLEL_WORK:
            self.body.append("%s = _empty(%s, %s)" % (n.name, _shape_py(n.shape), dt))
        else:
            # large arrays come from a pool: a buffer of an earlier call that nobody
            # holds any more is reused (fresh memory costs a page fault per 4 KiB)
            self.body.append("%s = _alloc(_P[%d], %s, %s)" % (n.name, len(self.pools),
                                                            _shape_py(n.shape), dt))
            self.pools.append([])

    def _call(self, i: int, k: NumbaKernel) -> None:
        """The call of kernel ``i`` (serial, or tuned between serial and parallel)."""
        args = []
        for a_kind, v in k.args:
            if a_kind in ("out", "in"):
                # a library result of shape () may be a NumPy scalar: the kernel indexes it
                args.append("_asarray(%s)" % v.name if a_kind == "in" and v.shape == ()
                            and v.op not in ("input", "constant") else v.name)
            else:
                args.append(_py(v))
        body = self.body
        if k.empty_max and not (type(k.inner) is int and k.inner > 0):
            body.append("if %s == 0: _no_identity(%r)" % (_py(k.inner), k.empty_max[0]))
        work = _py(k.work)
        call = "(%s)" % ", ".join(args)
        if type(k.work) is int and k.work < PARALLEL_WORK:
            body.append("_K%ds%s" % (i, call))
        else:
            self.ns["_T%d" % i] = new_tune()
            body.append("if %s >= %d and _threads() > 1:" % (work, PARALLEL_WORK))
            body.append("    _tuned(_T%d, lambda: _K%ds%s, lambda: _K%dp%s, %s)" % (
                i, i, call, i, call, work))
            body.append("else:")
            body.append("    _K%ds%s" % (i, call))


def _reusable(out: Node, k: NumbaKernel, pooled: set, readers: Dict[Node, int], keep: set):
    """An input of pointwise kernel ``k`` whose buffer its output ``out`` may take over:
    a pooled matmul result of the same shape and dtype, read by no other step, not a
    program output, read by ``k`` only at the element being written."""
    for x in k.same_element:
        if x in pooled and readers.get(x) == 1 and x not in keep and \
                x.dtype == out.dtype and len(x.shape) == len(out.shape) and \
                all(type(a) is type(b) and a == b for a, b in zip(x.shape, out.shape)):
            return x
    return None


def in_place(k: NumbaKernel, reuse: Dict[Node, Node]) -> NumbaKernel:
    """``k`` writing each output of ``reuse`` into the input it maps to: that input's
    parameter is gone and its loads read the output's (one pointer, so the loop stays
    vectorized: two parameters that alias would fail LLVM's overlap check at run time)."""
    out = copy.copy(k)
    src = k.source
    head, rest = src.split("\n", 1)
    params = head[len("def kernel("):-2].split(", ")
    drop = set()
    for o, x in reuse.items():
        oname = "o%d" % k.outputs.index(o)
        xname = "a%d" % k.loads.index(x)
        rest = re.sub(r"\b%s\[" % xname, oname + "[", rest)
        drop.add(xname)
        out.args = [a for a in out.args if not (a[0] == "in" and a[1] is x)]
    out.source = "def kernel(%s):\n%s" % (", ".join(p for p in params if p not in drop), rest)
    out.key = hashlib.sha1(out.source.encode()).hexdigest()[:20]
    return out


def _pooled_matmul(n: Node) -> bool:
    return n.op == "matmul" and not n.attrs and len(n.inputs) == 2 and \
        all(type(x) is Node and x.shape is not None and len(x.shape) >= 2 for x in n.inputs) \
        and n.dtype is not None and n.dtype.name in ("float32", "float64") and \
        all(x.dtype == n.dtype for x in n.inputs)


def compile_numba(ep):
    """``ep.compile(backend="numba")``: fused loop nests compiled by numba + a driver."""
    require_numba()
    from ..artifact import attach
    plan = plan_program(ep)
    ns: Dict[str, Any] = {"np": np, "_ndarray": np.ndarray, "_rt": _runtime, "_cg": _cg,
                          "_empty": np.empty, "_asarray": np.asarray, "_threads": _threads,
                          "_tuned": _rt_tuned,
                          "_no_identity": _no_identity, "_alloc": _alloc, "_P": [],
                          "_SETS": []}
    rec = CompiledNumba()
    rec.plan = plan
    rec.kernels = [obj for kind, obj in plan.steps if kind == "kernel"]
    spec = program_spec(ep, label="numba", namespace=ns)
    write(spec, lambda ctx: _driver_body(ctx, ep, plan), record=rec)
    rec.source = rec.source + "\n" + rec.kernel_source + "".join(
        "\n# ---- numba loop _L%d\n%s" % (i, src)
        for i, src in enumerate(ns.get("_LOOP_SOURCES", ())))
    fn = attach(rec, "numba", ep)
    fn.save = _no_save
    return fn


def _no_save(path: str):
    raise UserError("a program compiled with backend='numba' cannot be saved as a standalone "
                    "module (its kernels need numba); save the program itself with "
                    "ss.save(ep, path) and compile what ss.load(path) returns with "
                    "backend='numba', or save ep.compile() (the NumPy backend's module)")
