"""``ss.compile``: the just-in-time compiler, a guard-keyed cache of compiled variants.

Each *variant* is an ExportedProgram compiled by a backend.  Its guards are the input
check of its constraint set; the object returned by ``compile`` is called through a
*dispatcher* generated in Python: the guards of every variant as straight-line code, the
most recent variant first, each ending in a direct call of that variant's body with the
sizes the guards bound.  No variant matching is a *miss*:

1. the failed guard, in the user's names (``x.shape[0] == 5 (got 8)``), of the variant
   the inputs came closest to passing (the most recent among equals) is the reason;
2. frozen (``freeze()``): refuse, with an error or an eager run;
3. past ``cache_size_limit`` variants: run eagerly, warning once;
4. else trace again with the dynamic policy and add a variant.  ``dynamic=False``: every
   axis static; ``True``: every axis ``Dim.AUTO``; ``None`` (automatic dynamic): static,
   except the axes (and int inputs) whose value has changed since the first compile.

A function that cannot be captured in one graph (``breaks``) raises at the first break
with ``fullgraph=True``; otherwise the function is split once at its statements
(codegen/split.py): the statement holding a break runs eagerly, the code between breaks runs
as compiled segments (each an ``ss.compile`` of its own, with guards and variants), and a
later call traces nothing again.  A function that cannot be split (no source, ``yield``)
runs through its breaks on every call, with the array work between them compiled.
Falling back warns once, with the line, the reason and what would help.

Eager semantics around exceptions (codegen/protected.py): compiled code that raises at run
time (``LinAlgError``) has written nothing yet, so the call runs again eagerly and raises
what eager code raises, after eager's partial effects.  ``try`` and ``with`` statements of
the function run as Python on every call, their blocks as compiled segments; a ``with`` in
a called helper around traced work makes the calling statement eager.  ``variants`` and
``recompile_reasons`` also list the segments' (one view of what compiled).

A call with size 1 on an axis that is already dynamic is exported with that axis allowed
down to 1: if nothing in the program depends on size 1, that one variant serves every size
from then on; if something does (broadcasting, a guard), the variant is for size 1, and the
recompile reason says which.
"""
from __future__ import annotations

import functools
import inspect
import re
import threading
import time
import warnings
from typing import Any, Dict, List, Optional

import numpy as np

from symshape.specs import pytree
from symshape.codegen.function_writer import call_source, signature_function
from symshape import runtime as _runtime
from symshape.contract.records import Access, KeysCheck, LenCheck, RebindCheck
from symshape.contract.render_python import PyRenderer, numbered_consts
from symshape.contract.render_text import Names, TextRenderer
from symshape.capture.value_text import annotation
from symshape.capture.tracer import TracedArray
from symshape.capture.state.objstate import AppendOnly, active as _recording
from symshape.capture.state.verify import verify_default
from symshape.capture.state.stateprog import (StateCheck, StateGuardFailure,
                                              append_only_arguments, state_guards)
from symshape.errors import (CompileFallbackWarning, ConstraintViolationError, RecompileError,
                             RecompileLimitWarning, SharedInputsError, UserError)
from symshape.userframe import is_internal

from . import get_backend
from .jit_breaks import BreakSplitting
from .jit_report import CompileReports
from .jit_speed import SpeedFallback
from .jit_specs import ShapeSpecs, is_device_array
from .breaks import (SegmentCache, as_break, break_detail,
                     untraceable_break, with_break_detection)
from .dask_backend import is_dask_array as _is_dask_array, stand_in as _dask_stand_in
from .jit_verify import verifying_call
from . import split as _split
from .protected import check_helper_with, protected_breaks


_ONCE = (None,)


# --------------------------------------------------------------------------- guard text
#: the name the JIT's tests read
_is_device_array = is_device_array


def _to_host(v):
    if type(v) is tuple or type(v) is list:
        return type(v)(_to_host(x) for x in v)
    if type(v) is dict:
        return {k: _to_host(x) for k, x in v.items()}
    if _is_dask_array(v):
        # backend="dask": trace on a stand-in of the global shape and dtype
        return _dask_stand_in(v)
    return v.get() if is_device_array(v) else v


def read_guards(reads, fname: str) -> List[RebindCheck]:
    """A check per global or closure variable the traced code read: rebinding one (``W =
    ...``, ``SCALE = 3``) must recompile, as Dynamo guards on globals."""
    return [RebindCheck(kind, where, name, obj, fname) for kind, where, name, obj in reads]


def struct_guards(sig: inspect.Signature, arguments: Dict[str, Any]) -> List[Any]:
    """A check per container of the inputs (``LenCheck`` / ``KeysCheck``): the variant's
    check reads ``xs[1]`` or ``opts['bias']`` only once the containers have the traced
    layout."""
    out: List[Any] = []

    def go(v, param: str, keys: str):
        t = type(v)
        acc = Access(param, keys)
        if t is list or t is tuple:
            out.append(LenCheck(param + keys, acc, t.__name__, len(v)))
            for i, x in enumerate(v):
                go(x, param, "%s[%d]" % (keys, i))
        elif t is dict:
            out.append(KeysCheck(param + keys, acc, frozenset(v)))
            for k, x in v.items():
                go(x, param, "%s[%r]" % (keys, k))

    for p in sig.parameters.values():
        if p.name in arguments:
            go(arguments[p.name], p.name, "")
        elif p.kind == p.VAR_POSITIONAL:
            go((), p.name, "")
        elif p.kind == p.VAR_KEYWORD:
            go({}, p.name, "")
    return out


def layout_checks(struct: List[Any], vi: int, ns: Dict[str, Any], fail: str,
                  ren: Dict[str, str]) -> List[str]:
    """A variant's layout and rebinding checks as dispatcher lines (``break`` / ``why``,
    a failure ranking below every input check), constants named per variant; a parameter
    is read by the name the dispatcher's body gives it (``ren``, see ``renames``)."""
    consts: Dict[str, Any] = {}
    r = PyRenderer(TextRenderer(Names({})), numbered_consts(consts, "_S%d_" % vi),
                   param=lambda p: ren.get(p, p), fail=fail)
    lines = [r.line(rec, -1) for rec in struct]
    ns.update(consts)
    return lines


def variant_checks(cp, vi: int, ns: Dict[str, Any], fail: str,
                   ren: Dict[str, str]) -> List[str]:
    """A variant's input check (its records) as lines of the shared dispatcher namespace:
    constants and array type named per variant (backends check for different array
    types), a failed test ending as ``fail`` says (``break`` / ``why``).  The records name
    parameters as the user does (so do their messages); they are read by the names the
    dispatcher's body gives them (``ren``), which are the names every backend's core
    takes too: all of them are written by the one function writer with the same renames."""
    consts: Dict[str, Any] = {}
    r = cp.input_check.renderer(numbered_consts(consts, "_K%d_" % vi),
                                array_type="_ND%d" % vi, fail=fail,
                                param=lambda p: ren.get(p, p))
    lines = r.lines(cp.input_check.records)
    ns.update(consts)
    return lines


# --------------------------------------------------------------------------- variants
class Variant:
    """One compiled specialization of the function."""

    def __init__(self, index: int, program, fn, compile_time: float, reason: Optional[str],
                 counts: List[int], struct: List[Any]) -> None:
        self.index = index
        self.program = program
        self.fn = fn                                 # the checked compiled callable
        self.compiled = fn.compiled
        self.compile_time = compile_time            # seconds (trace + codegen)
        self.reason = reason                        # why it was compiled (None: first call)
        self._counts = counts
        self.struct = struct                        # layout and rebinding check records
        self.guards = [TextRenderer(Names({})).describe(r) for r in struct] + \
            self.compiled.input_check.guards()
        self._why = None

    @property
    def calls(self) -> int:
        return self._counts[self.index]

    @property
    def source(self) -> str:
        return self.compiled.source

    @property
    def input_shapes(self) -> Dict[str, str]:
        return {n.attrs.get("path", n.name): annotation(n) for n in self.program.graph.inputs}

    def __repr__(self) -> str:
        shapes = ", ".join("%s: %s" % kv for kv in self.input_shapes.items())
        return "<variant %d: %s; %d calls; compiled in %.1f ms>" % (
            self.index, shapes, self.calls, self.compile_time * 1e3)


# --------------------------------------------------------------------------- compile
class CompiledFunction(BreakSplitting, ShapeSpecs, CompileReports, SpeedFallback):
    """What ``ss.compile(f)`` returns: call it like ``f``.

    ``variants``: the compiled variants (``Variant``), oldest first; ``recompile_reasons``:
    one text per recompile, the guard that failed; ``report()``: variants, guards, reasons
    and compile times; ``freeze(on_miss="error" | "eager")`` / ``unfreeze()``.
    """

    # a program being traced walks into the function (``__wrapped__``) and inlines the
    # call, so the state it changes is replayed on every call (capture/state/binding.py)
    _ss_compiled_function = True

    def __init__(self, f, dynamic, backend: str, fullgraph: bool, cache_size_limit: int,
                 sig: inspect.Signature, verify: bool = False) -> None:
        self._f = f
        # every call checked against eager on copies (capture/state/verify.py)
        self.verify = verify
        self._sig = sig
        self.dynamic = dynamic
        self.backend = backend
        self.fullgraph = fullgraph
        self.cache_size_limit = cache_size_limit
        self._variants: List[Variant] = []          # this function's own
        self._recompile_reasons: List[str] = []
        self._seg_variants: List[Variant] = []      # its segments', in compile order
        self._seg_reasons: List[str] = []
        self.eager_calls = 0
        self.frozen: Optional[str] = None
        self.mode = "graph"                 # graph | breaks | eager
        self.mode_reason: Optional[str] = None
        self.break_reasons: List[str] = []
        self.break_calls = 0
        self.speed_text: Optional[str] = None   # compiled-with-breaks vs eager, once timed
        self._segments = SegmentCache()
        self._root = self                   # a segment's root: the function the user compiled
        self._driver = None                 # split mode: the rewritten function
        self._split_lines: Dict[int, str] = {}      # line -> break reason, in order found
        self._split_fns: List["CompiledFunction"] = []
        self._split_cache: Dict[tuple, "CompiledFunction"] = {}
        self._split_ast = None
        self._split_headers: set = set()    # try / with statements run as Python
        self._in_protected = False          # a segment inside a try / with
        self._size_one: List[str] = []      # this compile: dynamic axes that have size 1
        self._min1_names: Dict[str, str] = {}
        self._warned = False
        self._first: Dict[str, tuple] = {}
        self._dyn: Dict[str, set] = {}
        self._lock = threading.RLock()
        self._shared_warned = False
        self._append_only: set = set()      # list arguments the program only appends to
        self._counts: List[int] = []
        self._ns: Dict[str, Any] = {"_ONCE": _ONCE, "_SHARED": SharedInputsError,
                                    "_STATE_MISS": StateGuardFailure,
                                    "_ndarray": np.ndarray, "_rt": _runtime,
                                    "_CNT": self._counts,
                                    "_W": _runtime.Failures(_runtime.return_failure)}
        self._install()

    # ------------------------------------------------------------------ dispatch
    def _install(self) -> None:
        fn, self.dispatch_source = signature_function(
            "__call__", self._sig, self._dispatch_lines, self._ns, "dispatch " + self._name,
            first="_ss_self")
        if self.verify:                     # checked against eager (codegen/jit_verify.py)
            type(self)._ss_dispatch, fn = fn, verifying_call
        type(self).__call__ = fn

    def _dispatch_lines(self, ren: Dict[str, str]) -> List[str]:
        """The dispatcher's body: each variant's guards, then its core; else ``_miss``
        (``ren``: the names parameters have inside, see ``signature_function``)."""
        call = call_source(self._sig, ren)
        lines = []
        if self._driver is not None and self._slower_than_eager():
            # the compiled form with its breaks measured slower: straight to eager
            self._ns["_EAGER"] = self._f
            lines += ["_ss_self.eager_calls += 1", "return _EAGER(%s)" % call]
        elif self._driver is not None:
            # split at graph breaks: the rewritten function runs its compiled segments
            self._ns["_DRIVER"] = self._driver_now()       # timed against eager at first
            lines += ["_ss_self.break_calls += 1", "return _DRIVER(%s)" % call]
        for v in reversed(self._variants if self._driver is None else ()):
            cp = v.compiled
            lines.append("for _ in _ONCE:")
            # Python state is checked by the core itself as it reads the state arrays (one
            # pass, capture/state/stateprog.py); a failed state guard there is a miss
            in_core = (getattr(cp, "ns", None) or {}).get("_SP") is not None
            struct = [r for r in v.struct if not (in_core and isinstance(r, StateCheck))]
            for line in layout_checks(struct, v.index, self._ns, "break", ren):
                lines.append("    " + line)
            for line in variant_checks(cp, v.index, self._ns, "break", ren):
                lines.append("    " + line)
            lines.append("    _CNT[%d] += 1" % v.index)
            core = "_core%d(%s)" % (v.index, ", ".join(cp.param_names + cp.sym_names))
            handlers = []
            if len(struct) != len(v.struct):
                handlers += ["    except _STATE_MISS:", "        _CNT[%d] -= 1" % v.index,
                             "        break"]
            if cp.refuses_shared:
                # inputs sharing a written input's memory: eager semantics need the write
                # seen through the other name, so that call runs eagerly (nothing ran yet)
                handlers += ["    except _SHARED:",
                             "        return _ss_self._eager_shared(%s)" % call]
            # raised at run time (LinAlgError): again eagerly, see ``_raised``
            handlers += ["    except Exception:", "        _CNT[%d] -= 1" % v.index,
                         "        return _ss_self._raised(%s)" % call]
            lines += ["    try:", "        return " + core] + handlers
        lines.append("return _ss_self._miss(%s)" % call)
        return lines

    def _why(self, v: Variant, args, kwargs) -> tuple:
        if v._why is None:
            cp = v.compiled
            ns = dict(self._ns)
            # the failure protocol returning what failed, on this variant's array type
            ns["_W"] = _runtime.Failures(_runtime.return_failure,
                                         array_type=self._ns["_ND%d" % v.index])

            def why_lines(ren: Dict[str, str]) -> List[str]:
                lines = layout_checks(v.struct, v.index, ns, "why", ren)
                lines += variant_checks(cp, v.index, ns, "why", ren)
                lines.append("return %d, None" % len(cp.input_check.records))
                return lines

            v._why = signature_function("_why", self._sig, why_lines, ns,
                                        "why " + self._name)[0]
        try:
            depth, failed = v._why(*args, **kwargs)
            return depth, failed.reason() if isinstance(failed, _runtime.Failure) else failed
        except Exception as e:          # inputs the signature itself rejects
            return 0, "the call does not match the signature of %s (%s)" % (
                getattr(self._f, "__name__", "f"), e)

    def _reason(self, args, kwargs) -> Optional[str]:
        """The failed guard of the variant these inputs came closest to passing (the most
        recent one among equals), in the user's names."""
        best = None
        for v in reversed(self._variants):
            depth, text = self._why(v, args, kwargs)
            if text is not None and (best is None or depth > best[0]):
                best = (depth, text)
        return best[1] if best else None

    # ------------------------------------------------------------------ misses
    def _eager(self, args, kwargs):
        self.eager_calls += 1
        return self._f(*args, **kwargs)

    def _eager_shared(self, *args, **kwargs):
        """A call whose array inputs share memory with one the function writes in place:
        the compiled code would not see the write through the other name, so it runs
        eagerly (warned once)."""
        if not self._shared_warned:
            self._shared_warned = True
            warnings.warn(
                "ss.compile(%s): a call passed arrays that share memory with an input the "
                "function writes in place; such calls run eagerly (pass separate arrays to "
                "run compiled)" % self._name, CompileFallbackWarning, stacklevel=3)
        return self._eager(args, kwargs)

    def _raised(self, *args, **kwargs):
        """The compiled code raised (``np.linalg.cholesky`` of a matrix that is not positive
        definite, an index out of bounds): it had written nothing the caller can see (the
        write-backs come last; a slice written in place is written again with the same
        values), so the call runs eagerly, which raises the error eager code raises, after
        the partial effects eager code has, or returns what eager code returns.  A
        ``try`` / ``except`` around the call sees exactly what it sees eagerly.  A segment
        inside a ``try`` / ``with`` of the function leaves that to its driver instead
        (``CompiledRaised``): the driver runs its statements as written, binding its
        locals as eager code does before the exception."""
        import sys
        error = sys.exc_info()[1]
        if self._in_protected:
            raise _split.CompiledRaised(error)
        self.eager_calls += 1
        with _split.quiet_rerun(error):     # its NumPy warnings were given already
            return self._f(*args, **kwargs)

    def _miss(self, *args, **kwargs):
        if _inside_trace(args, kwargs):
            # called from a function being traced: inline it into that trace
            return self._f(*args, **kwargs)
        seen = len(self._variants)
        with self._lock:
            if len(self._variants) != seen and self.mode == "graph":
                # another thread compiled while this one waited: dispatch again first
                return type(self).__call__(self, *args, **kwargs)
            if self.mode == "breaks":
                return self._timed_breaks(args, kwargs)
            if self.mode == "eager":
                return self._eager(args, kwargs)
            reason = self._reason(args, kwargs) if self._variants else None
            if self.frozen is not None:
                return self._refuse(args, kwargs)
            if len(self._variants) >= self.cache_size_limit:
                self._limit_warning(reason)
                return self._eager(args, kwargs)
            return self._compile(args, kwargs, reason)

    def _refuse(self, args, kwargs):
        if self.frozen == "eager":
            return self._eager(args, kwargs)
        whys = ["  variant %d: %s" % (v.index, self._why(v, args, kwargs)[1])
                for v in reversed(self._variants)]
        raise RecompileError(
            "ss.compile(%s) is frozen, and no compiled variant accepts these inputs:\n%s\n"
            "Call .unfreeze() to allow new variants, or .freeze(on_miss='eager') to run "
            "such calls eagerly." % (self._name, "\n".join(whys) or "  (no variants)"))

    def _fall_back(self, mode: str, reason: str, run, args, kwargs, what: str):
        """Switch to running in pieces / eagerly, unless this very call fails there too:
        then the program is wrong for these inputs (a reshape that cannot work), the user's
        own error propagates, and nothing changes."""
        self.mode, self.mode_reason = mode, reason
        try:
            result = run(args, kwargs)
        except BaseException:
            self.mode, self.mode_reason = "graph", None
            raise
        self._fallback_warning(what)
        return result

    def _protect(self, args, kwargs):
        """The first compile of a function with ``try`` / ``with`` statements: they run as
        Python on every call and their blocks as compiled segments (codegen/protected.py).
        Returns (True, the call's result) or (False, None) where there are none."""
        if self._split_ast is None:
            self._split_ast = _split.function_ast(self._f) or False
        recs = protected_breaks(self._f, self._split_ast) if self._split_ast else []
        if not recs:
            return False, None
        first = recs[0]
        if self.fullgraph:
            raise UserError("ss.compile(%s, fullgraph=True): graph break at %s\n"
                            "fullgraph=True requires one graph; move the statement out of "
                            "the compiled function, or use fullgraph=False to run it as "
                            "Python." % (self._name, break_detail(first.frame, first.reason)))
        heads = {r.frame.lineno for r in recs}
        sp = _split.split(self._f, self._split_ast, set(self._split_lines), self._segment,
                          heads)
        if sp is None:
            # a try / with in a function the splitter cannot rewrite (global, nonlocal):
            # eager is the only way to keep its semantics
            reason = str(first)
            return True, self._fall_back("eager", reason, self._eager, args, kwargs,
                                         "it runs eagerly from now on (%s)" % reason)
        self._split_headers = heads
        for r in recs:
            self._note_break(r)
        self._driver, self._split_fns = sp.driver, sp.fns
        self.mode = "split"
        self.mode_reason = "; ".join(str(r) for r in recs)
        self._install()
        self.break_calls += 1
        return True, sp.driver(*args, **kwargs)

    def _segment_compiled(self, seg: "CompiledFunction", v: Variant) -> None:
        """One view of what compiled: a segment's variant and its recompile reason are
        listed in the root's ``variants`` and ``recompile_reasons`` too."""
        with self._lock:
            self._seg_variants.append(v)
            if v.reason is not None:
                where = seg._name.rsplit("(", 1)[-1].rstrip(")")
                self._seg_reasons.append("%s of %s: %s" % (where, self._name, v.reason))

    @property
    def variants(self) -> List[Variant]:
        """Every compiled variant, oldest first: this function's own and, split at graph
        breaks, those of its segments (one view of what compiled, as torch.compile counts
        every graph)."""
        return self._variants + self._seg_variants if self._seg_variants else self._variants

    @property
    def recompile_reasons(self) -> List[str]:
        """One text per recompile, the guard that failed (``x.shape[0] == 5 (got 8)``); a
        segment's recompiles too, named by its lines (``lines 4-6 of f: ...``)."""
        return (self._recompile_reasons + self._seg_reasons if self._seg_reasons
                else self._recompile_reasons)

    def _fallback_warning(self, what: str) -> None:
        """Once per compiled function (its segments included): the compiled path was
        given up, where, and why."""
        root = self._root
        if getattr(root, "_fallback_warned", False):
            return
        root._fallback_warned = True
        where = "" if root is self else " (in its %s)" % self._name.split(" ", 1)[-1][1:-1]
        warnings.warn("ss.compile(%s) could not compile the whole function%s: %s. "
                      "fullgraph=True turns this into an error."
                      % (root._name, where, what.rstrip(". ")),
                      CompileFallbackWarning, stacklevel=_user_stacklevel())

    def _limit_warning(self, reason: Optional[str]) -> None:
        root = self._root
        if root._warned:
            return
        root._warned = True
        name = self._name if root is self else "%s, segment %s" % (
            root._name, self._name.split(" ", 1)[-1])
        warnings.warn(
            "ss.compile(%s) reached its cache size limit of %d compiled variants: calls that "
            "match none of them now run eagerly (uncompiled). Last guard failure: %s. %s"
            % (name, self.cache_size_limit, reason, self._limit_advice(reason)),
            RecompileLimitWarning, stacklevel=_user_stacklevel())

    @property
    def _name(self) -> str:
        return getattr(self._f, "__qualname__", getattr(self._f, "__name__", "f"))

    def _compile(self, args, kwargs, reason: Optional[str]):
        if self._root is self and self._driver is None and not self._variants:
            done, result = self._protect(args, kwargs)
            if done:
                return result
        t0 = time.perf_counter()
        bound = self._sig.bind(*args, **kwargs)
        bound.apply_defaults()          # defaults become guarded inputs too
        for name in self._append_only:  # lists only appended to: any list will do
            if type(bound.arguments.get(name)) is list:
                bound.arguments[name] = AppendOnly()
        # export binds again: empty *args / **kwargs then have no entry in its spec
        rebound = self._sig.bind(*bound.args, **bound.kwargs)
        self._size_one = []
        spec = self._spec(rebound)
        from symshape.capture.export import export  # looked up per call: tests replace it
        try:
            ep = None
            if self._size_one and reason is not None:
                ep, why = self._export_size_one(export, bound, rebound)
                reason += why
            # CuPy inputs (backend="cupy"): trace on host copies; only shapes, dtypes and
            # (for graph breaks) values are read, and the variant then runs on the device
            if ep is None:
                ep = export(with_break_detection(self._f), _to_host(bound.args),
                            _to_host(bound.kwargs), dynamic_shapes=spec)
            check_helper_with(ep.graph.nodes, self._root._f, self._f)
        except ConstraintViolationError:
            raise
        except UserError as e:
            brk = as_break(e)
            if not self.fullgraph and _split.break_line(e, _split.code_of(self._f)):
                return self._break_at(e, brk, args, kwargs)
            if not self.fullgraph and self._root is not self:
                return self._segment_eagerly(brk, args, kwargs)
            if self.fullgraph:
                raise UserError("ss.compile(%s, fullgraph=True): graph break at %s\n"
                                "fullgraph=True requires one graph; remove the break, or "
                                "use fullgraph=False to run it eagerly."
                                % (self._name, break_detail(brk.frame, brk.reason))) from None
            return self._fall_back("breaks", str(brk), self._run_breaks, args, kwargs,
                                   "it runs in pieces from now on (graph break at %s)"
                                   % break_detail(brk.frame, brk.reason))
        except Exception as e:
            if self.fullgraph:
                raise
            if _split.break_line(e, _split.code_of(self._f)):
                return self._break_at(e, untraceable_break(e), args, kwargs)
            if self._root is not self:
                return self._segment_eagerly(untraceable_break(e), args, kwargs)
            reason = "tracing raised %s: %s" % (type(e).__name__, e)
            return self._fall_back("eager", reason, self._eager, args, kwargs,
                                   "it runs eagerly from now on (%s)" % reason)
        fn = get_backend(self.backend)(ep)
        self._append_only.update(append_only_arguments(ep))
        self._counts.append(0)
        vi = len(self._variants)
        v = Variant(vi, ep, fn, time.perf_counter() - t0, reason, self._counts,
                    struct_guards(self._sig, rebound.arguments) +
                    read_guards(ep.name_reads, self._name) + state_guards(ep))
        cp = v.compiled
        self._ns["_core%d" % v.index] = cp.core
        self._ns["_ND%d" % v.index] = cp.ns.get("_ndarray", np.ndarray)
        self._variants.append(v)
        if reason is not None:
            self._recompile_reasons.append(reason)
        if self._root is not self:
            self._root._segment_compiled(self, v)
        self._install()
        self._counts[v.index] += 1
        try:
            return fn(*args, **kwargs)
        except UserError:
            raise
        except Exception:
            self._counts[v.index] -= 1
            return self._raised(*args, **kwargs)

    def _export_size_one(self, export, bound, rebound):
        """A call with size 1 on axes that are already dynamic: export with those axes
        allowed down to 1.  If nothing in the program depends on the size being 1, the new
        variant takes every size >= 1 (no variant per size 1); if something does
        (broadcasting, a guard), export says which, and the variant is for size 1."""
        axes = ", ".join(self._size_one)
        self._min1 = True
        try:
            spec = self._spec(rebound)
        finally:
            self._min1 = False
        for _ in range(4):
            try:
                ep = export(with_break_detection(self._f), _to_host(bound.args),
                            _to_host(bound.kwargs), dynamic_shapes=spec)
            except ConstraintViolationError as e:
                pins = [f for f in e.suggested_fixes if _CONST_FIX.match(str(f))]
                if pins or not e.suggested_fixes:
                    detail = e.violations[0] if e.violations else "a guard"
                    for name, axis in self._min1_names.items():
                        detail = re.sub(r"\b%s\b" % name, axis, detail)
                    return None, "; size 1 changes what the program does on %s (%s), so " \
                        "this variant is for size 1" % (axes, detail)
                for fix in e.suggested_fixes:       # relations between the axes: declare them
                    spec = fix.apply(spec)
                continue
            except Exception:
                return None, ""
            return ep, "; nothing in the program depends on size 1 on %s, so this " \
                "variant takes sizes >= 1 there" % axes
        return None, ""

    # ------------------------------------------------------------------ breaks
    def _segment(self, chunk, raw):
        """The compiled function of one segment, reused across re-splits."""
        cf = self._split_cache.get(chunk.key)
        if cf is None:
            cf = compile(raw, dynamic=self.dynamic, backend=self.backend,
                         cache_size_limit=self.cache_size_limit, verify=False)
            cf._root = self
            cf._in_protected = getattr(chunk, "protected", False)
            if self.frozen is not None:
                cf.freeze(self.frozen)
            self._split_cache[chunk.key] = cf
        return cf

    # ------------------------------------------------------------------ controls
    def freeze(self, on_miss: str = "error") -> "CompiledFunction":
        """Refuse new variants: a miss raises RecompileError (``on_miss="error"``) or runs
        eagerly (``on_miss="eager"``)."""
        if on_miss not in ("error", "eager"):
            raise UserError("freeze(on_miss=...) takes 'error' or 'eager', got %r" % (on_miss,))
        self.frozen = on_miss
        for seg in self._split_cache.values():         # split at breaks: every segment
            seg.freeze(on_miss)
        return self

    def unfreeze(self) -> "CompiledFunction":
        self.frozen = None
        for seg in self._split_cache.values():
            seg.unfreeze()
        return self

    def reset(self) -> None:
        """Forget every variant (the next call compiles again)."""
        with self._lock:
            self._variants.clear()
            self._recompile_reasons.clear()
            self._counts.clear()
            self._first.clear()
            self._dyn.clear()
            self.mode, self.mode_reason = "graph", None
            self._warned = False
            self._driver, self._split_ast = None, None
            self._split_lines.clear()
            self._split_headers = set()
            self._seg_variants.clear()
            self._seg_reasons.clear()
            self._split_fns = []
            self._split_cache.clear()
            self.break_reasons.clear()
            self._install()

    @property
    def calls(self) -> int:
        return sum(self._counts) + self.eager_calls + self.break_calls

    def __repr__(self) -> str:
        return "<ss.compile(%s): %d variants, %d recompiles>" % (
            self._name, len(self.variants), len(self.recompile_reasons))


_CONST_FIX = re.compile(r"^\w+ = -?\d+$")     # a suggested fix that pins a size


def _user_stacklevel() -> int:
    """The ``stacklevel`` that puts a warning at the user's call."""
    import sys
    f, level = sys._getframe(1), 1
    while f is not None and (is_internal(f.f_code.co_filename) or f.f_code in
                             _split.GENERATED or f.f_code.co_filename.startswith("<symshape")):
        f, level = f.f_back, level + 1
    return level


def _inside_trace(args, kwargs) -> bool:
    if _recording() is not None:        # a trace records state: this call is part of it
        return True
    leaves, _ = pytree.flatten((args, kwargs))
    return any(type(v) is TracedArray for _, v in leaves)


def compile(f=None, *, dynamic=None, backend: str = "numpy", fullgraph: bool = False,
            cache_size_limit: int = 8, verify=None) -> CompiledFunction:
    """Just-in-time compile ``f`` (see the module docstring).  Without ``f``, a decorator:
    ``@ss.compile(dynamic=True)``.  ``verify=True`` (default: ``SYMSHAPE_VERIFY``) checks
    every call against the eager function run on copies (``ss.VerifyError``)."""
    if f is None:
        return lambda fn: compile(fn, dynamic=dynamic, backend=backend, fullgraph=fullgraph,
                                  cache_size_limit=cache_size_limit, verify=verify)
    if not callable(f):
        raise UserError("ss.compile: f must be callable, got %s" % type(f).__name__)
    if dynamic not in (None, True, False):
        raise UserError("ss.compile: dynamic must be None, True or False, got %r" % (dynamic,))
    if not isinstance(cache_size_limit, int) or cache_size_limit < 1:
        raise UserError("ss.compile: cache_size_limit must be a positive int, got %r"
                        % (cache_size_limit,))
    get_backend(backend)
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        raise UserError("ss.compile: cannot read the signature of %r; compile a Python "
                        "function" % (f,)) from None
    cls = type("CompiledFunction_%s" % getattr(f, "__name__", "f"), (CompiledFunction,), {})
    cf = cls(f, dynamic, backend, bool(fullgraph), cache_size_limit, sig,
             verify_default() if verify is None else bool(verify))
    try:
        functools.update_wrapper(cf, f, updated=())
    except AttributeError:
        pass
    return cf
