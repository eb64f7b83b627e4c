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
with ``fullgraph=True``; otherwise it runs through its breaks on every call, with the array
work between them compiled.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import re
import threading
import time
import warnings
from typing import Any, Dict, List, Optional

import numpy as np

from symshape import pytree
from symshape import runtime as _runtime
from symshape.dims import AUTO
from symshape.errors import ConstraintViolationError, UserError

from . import get_backend
from .breaks import LazyRun, SegmentCache, as_break, break_detail, with_break_detection
from .dask_backend import is_dask_array as _is_dask_array, stand_in as _dask_stand_in


class RecompileError(UserError):
    """A frozen compiled function got inputs that no compiled variant accepts."""


class RecompileLimitWarning(UserWarning):
    """The cache of compiled variants is full: calls that miss run eagerly."""


_ONCE = (None,)


# --------------------------------------------------------------------------- guard text
def _is_device_array(v) -> bool:
    """A CuPy array (recognised without importing CuPy)."""
    return type(v).__module__.startswith("cupy") and hasattr(v, "__cuda_array_interface__")


def _to_host(v):
    if type(v) is tuple or type(v) is list:
        return type(v)(_to_host(x) for x in v)
    if type(v) is dict:
        return {k: _to_host(x) for k, x in v.items()}
    if _is_dask_array(v):
        # backend="dask": trace on a stand-in of the global shape and dtype
        return _dask_stand_in(v)
    return v.get() if _is_device_array(v) else v


def _kind(a) -> str:
    return "numpy.ndarray" if type(a) is np.ndarray else type(a).__name__


class _Why:
    """The ``_rt.bad_*`` calls of a check, returning the failed guard as text."""

    @staticmethod
    def bad_array(path, a, ndim, dtype):
        if type(a) is not np.ndarray:
            return "type(%s) is numpy.ndarray (got %s)" % (path, _kind(a))
        if a.ndim != ndim:
            return "%s.ndim == %d (got %d)" % (path, ndim, a.ndim)
        return "%s.dtype == %s (got %s)" % (path, dtype, a.dtype)

    @staticmethod
    def bad_static(axis, expected, got):
        return "%s == %d (got %d)" % (axis, expected, got)

    @staticmethod
    def bad_range(what, value, lo, hi, label):
        if lo != "int_oo" and value < lo:
            return "%s >= %s (got %d)" % (what, lo, value)
        return "%s <= %s (got %d)" % (what, hi, value)

    @staticmethod
    def bad_relation(axis, got, relation, expected):
        return "%s == %s (got %d, expected %d)" % (axis, relation, got, expected)

    @staticmethod
    def bad_congruence(axis, got, form):
        return "%s == %s (got %d)" % (axis, form, got)

    @staticmethod
    def bad_guard(text):
        return "%s (false)" % text

    @staticmethod
    def bad_int(path, got):
        return "type(%s) is int (got %s)" % (path, _kind(got))

    @staticmethod
    def bad_scalar(path, expected, got):
        return "%s == %r (got %r)" % (path, expected, got)

    @staticmethod
    def same_scalar(got, expected):
        return _runtime.same_scalar(got, expected)

    @staticmethod
    def bad_len(path, v, kind, n):
        if type(v).__name__ != kind:
            return "type(%s) is %s (got %s)" % (path, kind, _kind(v))
        return "len(%s) == %d (got %d)" % (path, n, len(v))

    @staticmethod
    def bad_keys(path, v, keys):
        if type(v) is not dict:
            return "type(%s) is dict (got %s)" % (path, _kind(v))
        return "%s.keys() == {%s} (got {%s})" % (path, ", ".join(sorted(map(repr, keys))),
                                                 ", ".join(sorted(map(repr, v))))


_NO_VALUE = object()


def read_guards(reads, vi: int, ns: Dict[str, Any], fname: str) -> List[tuple]:
    """(failure condition, reason, description) per global or closure variable the traced
    code read: rebinding one (``W = ...``, ``SCALE = 3``) must recompile, as Dynamo guards on
    globals.  The check is one identity test each; arrays are read by reference, so an
    in-place change of a global array needs no recompile."""
    out: List[tuple] = []
    ns.setdefault("_NOV", _NO_VALUE)
    for i, (kind, where, name, obj) in enumerate(reads):
        w, o = "_RW%d_%d" % (vi, i), "_RO%d_%d" % (vi, i)
        ns[w], ns[o] = where, obj
        what = "global" if kind == "global" else "closure variable"
        text = "%s %s (read by %s) was rebound" % (what, name, fname)
        cond = ("%s.get(%r, _NOV) is not %s" % (w, name, o) if kind == "global" else
                "%s.cell_contents is not %s" % (w, o))
        out.append((cond, repr(text), "%s %s is the object traced" % (what, name)))
    return out


def struct_guards(sig: inspect.Signature, arguments: Dict[str, Any], vi: int,
                  ns: Dict[str, Any]) -> List[tuple]:
    """(failure condition, reason call, description) per container of the inputs: the
    variant's check reads ``xs[1]`` or ``opts['bias']`` only once the containers have the
    traced layout."""
    out: List[tuple] = []

    def go(v, acc: str):
        t = type(v)
        if t is list or t is tuple:
            out.append(("type(%s) is not %s or len(%s) != %d" % (acc, t.__name__, acc, len(v)),
                        "_W.bad_len(%r, %s, %r, %d)" % (acc, acc, t.__name__, len(v)),
                        "%s: %s of length %d" % (acc, t.__name__, len(v))))
            for i, x in enumerate(v):
                go(x, "%s[%d]" % (acc, i))
        elif t is dict:
            name = "_S%d_%d" % (vi, len(out))
            ns[name] = frozenset(v)
            out.append(("type(%s) is not dict or %s.keys() != %s" % (acc, acc, name),
                        "_W.bad_keys(%r, %s, %s)" % (acc, acc, name),
                        "%s: dict with keys {%s}" % (acc, ", ".join(sorted(map(repr, v))))))
            for k, x in v.items():
                go(x, "%s[%r]" % (acc, k))

    for p in sig.parameters.values():
        if p.name in arguments:
            go(arguments[p.name], p.name)
        elif p.kind == p.VAR_POSITIONAL:
            go((), p.name)
        elif p.kind == p.VAR_KEYWORD:
            go({}, p.name)
    return out


class _Unknown:
    pass


def _describe(name: str, args: list) -> str:
    """The guard a check line enforces, without run-time values."""
    if name == "bad_array":
        return "%s: ndarray, ndim %s, dtype %s" % (args[0], args[2], args[3])
    if name == "bad_static":
        return "%s == %s" % (args[0], args[1])
    if name == "bad_range":
        lo, hi = args[2], args[3]
        label = (" (Dim %s)" % args[4]) if isinstance(args[4], str) else ""
        return "%s in [%s, %s]%s" % (args[0], lo, hi, label)
    if name == "bad_relation":
        return "%s == %s" % (args[0], args[2])
    if name == "bad_congruence":
        return "%s == %s" % (args[0], args[2])
    if name == "bad_guard":
        return str(args[0])
    if name == "bad_int":
        return "type(%s) is int" % args[0]
    if name == "bad_scalar":
        return "%s == %r" % (args[0], args[1])
    return name


_CHECK = re.compile(r"^if (.*): _rt\.(bad_\w+)\((.*)\)$")
_CONST = re.compile(r"\b_k(\d+)\b")


def _localize(line: str, vi: int) -> str:
    """A variant's check line in the shared dispatcher namespace (its constants and array
    type renamed per variant: backends may check for different array types)."""
    return _NDARRAY.sub("_ND%d" % vi, _CONST.sub(r"_K%d_\1" % vi, line))


# the array type's name as a whole word only: a parameter named x_ndarray stays itself
_NDARRAY = re.compile(r"(?<![A-Za-z0-9_])_ndarray(?![A-Za-z0-9_])")


def guard_texts(lines: List[str], consts: Dict[str, Any]) -> List[str]:
    out = []
    for line in lines:
        m = _CHECK.match(line)
        if not m:
            continue
        try:
            call = ast.parse("f(%s)" % m.group(3), mode="eval").body
        except SyntaxError:
            out.append(m.group(1))
            continue
        args = []
        for a in call.args:
            if isinstance(a, ast.Constant):
                args.append(a.value)
            elif isinstance(a, ast.Name) and a.id in consts:
                args.append(consts[a.id])
            else:
                args.append(_Unknown())
        out.append(_describe(m.group(2), args))
    return out


# --------------------------------------------------------------------------- variants
class Variant:
    """One compiled specialization of the function."""

    def __init__(self, index: int, program, fn, compile_time: float, reason: Optional[str],
                 counts: List[int], struct: List[tuple]) -> None:
        self.index = index
        self.program = program
        self.fn = fn                                 # the checked compiled callable
        self.compiled = fn.compiled
        self.compile_time = compile_time            # seconds (trace + codegen)
        self.reason = reason                        # why it was compiled (None: first call)
        self._counts = counts
        self.struct = struct                        # container layout guards
        self.guards = [desc for _, _, desc in struct] + \
            guard_texts(self.compiled.check_lines, self.compiled.ns)
        self._why = None

    @property
    def calls(self) -> int:
        return self._counts[self.index]

    @property
    def source(self) -> str:
        return self.compiled.source

    @property
    def input_shapes(self) -> Dict[str, str]:
        from symshape.capture.program import annotation
        return {n.attrs.get("path", n.name): annotation(n) for n in self.program.graph.inputs}

    def __repr__(self) -> str:
        shapes = ", ".join("%s: %s" % kv for kv in self.input_shapes.items())
        return "<variant %d: %s; %d calls; compiled in %.1f ms>" % (
            self.index, shapes, self.calls, self.compile_time * 1e3)


# --------------------------------------------------------------------------- compile
def _params_source(sig: inspect.Signature, ns: Dict[str, Any]) -> str:
    from symshape.capture.pycode import Renderer, signature_source
    return signature_source(sig, Renderer({}, ns))


def _call_source(sig: inspect.Signature) -> str:
    parts = []
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            parts.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            parts.append("*" + p.name)
        elif p.kind == p.KEYWORD_ONLY:
            parts.append("%s=%s" % (p.name, p.name))
        else:
            parts.append("**" + p.name)
    return ", ".join(parts)


class CompileFallbackWarning(UserWarning):
    """ss.compile fell back to running (part of) a function eagerly."""


class CompiledFunction:
    """What ``ss.compile(f)`` returns: call it like ``f``.

    ``variants``: the compiled variants (``Variant``), oldest first; ``recompile_reasons``:
    one text per recompile, the guard that failed; ``report()``: variants, guards, reasons
    and compile times; ``freeze(on_miss="error" | "eager")`` / ``unfreeze()``.
    """

    def __init__(self, f, dynamic, backend: str, fullgraph: bool, cache_size_limit: int,
                 sig: inspect.Signature) -> None:
        self._f = f
        self._sig = sig
        self.dynamic = dynamic
        self.backend = backend
        self.fullgraph = fullgraph
        self.cache_size_limit = cache_size_limit
        self.variants: List[Variant] = []
        self.recompile_reasons: List[str] = []
        self.eager_calls = 0
        self.frozen: Optional[str] = None
        self.mode = "graph"                 # graph | breaks | eager
        self.mode_reason: Optional[str] = None
        self.break_reasons: List[str] = []
        self.break_calls = 0
        self._segments = SegmentCache()
        self._warned = False
        self._first: Dict[str, tuple] = {}
        self._dyn: Dict[str, set] = {}
        self._lock = threading.RLock()
        self._counts: List[int] = []
        self._ns: Dict[str, Any] = {"_ONCE": _ONCE, "_ndarray": np.ndarray, "_rt": _runtime,
                                    "_CNT": self._counts, "_W": _Why}
        self._params = _params_source(sig, self._ns)
        self._call = _call_source(sig)
        self._install()

    # ------------------------------------------------------------------ dispatch
    def _install(self) -> None:
        lines = ["def __call__(_ss_self, %s):" % self._params]
        for v in reversed(self.variants):
            cp = v.compiled
            lines.append("    for _ in _ONCE:")
            for cond, _, _ in v.struct:
                lines.append("        if %s: break" % cond)
            for line in cp.check_lines:
                m = _CHECK.match(line)
                line = ("if %s: break" % m.group(1)) if m else line
                lines.append("        " + _localize(line, v.index))
            lines.append("        _CNT[%d] += 1" % v.index)
            lines.append("        return _core%d(%s)" % (v.index, ", ".join(
                cp.param_names + cp.sym_names)))
        lines.append("    return _ss_self._miss(%s)" % self._call)
        src = "\n".join(lines) + "\n"
        code = builtins.compile(src, "<symshape dispatch %s>" % self._name, "exec")
        exec(code, self._ns)
        self.dispatch_source = src
        type(self).__call__ = self._ns["__call__"]

    def _why(self, v: Variant, args, kwargs) -> tuple:
        if v._why is None:
            cp = v.compiled
            lines = ["def _why(%s):" % self._params]
            for cond, why, _ in v.struct:
                lines.append("    if %s: return -1, %s" % (cond, why))
            for k, line in enumerate(cp.check_lines):
                m = _CHECK.match(line)
                if m:
                    line = "if %s: return %d, _W.%s(%s)" % (m.group(1), k, m.group(2),
                                                           m.group(3))
                lines.append("    " + _localize(line, v.index))
            lines.append("    return %d, None" % len(cp.check_lines))
            ns = dict(self._ns)
            exec(builtins.compile("\n".join(lines) + "\n", "<symshape why>", "exec"), ns)
            v._why = ns["_why"]
        try:
            return v._why(*args, **kwargs)
        except Exception as e:          # inputs the signature itself rejects
            return 0, "the call does not match the signature of %s (%s)" % (
                getattr(self._f, "__name__", "f"), e)

    def _reason(self, args, kwargs) -> Optional[str]:
        """The failed guard of the variant these inputs came closest to passing (the most
        recent one among equals), in the user's names."""
        best = None
        for v in reversed(self.variants):
            depth, text = self._why(v, args, kwargs)
            if text is not None and (best is None or depth > best[0]):
                best = (depth, text)
        return best[1] if best else None

    # ------------------------------------------------------------------ misses
    def _eager(self, args, kwargs):
        self.eager_calls += 1
        return self._f(*args, **kwargs)

    def _miss(self, *args, **kwargs):
        if _inside_trace(args, kwargs):
            # called from a function being traced: inline it into that trace
            return self._f(*args, **kwargs)
        seen = len(self.variants)
        with self._lock:
            if len(self.variants) != seen and self.mode == "graph":
                # another thread compiled while this one waited: dispatch again first
                return type(self).__call__(self, *args, **kwargs)
            if self.mode == "breaks":
                return self._run_breaks(args, kwargs)
            if self.mode == "eager":
                return self._eager(args, kwargs)
            reason = self._reason(args, kwargs) if self.variants else None
            if self.frozen is not None:
                return self._refuse(args, kwargs)
            if len(self.variants) >= self.cache_size_limit:
                self._limit_warning(reason)
                return self._eager(args, kwargs)
            return self._compile(args, kwargs, reason)

    def _refuse(self, args, kwargs):
        if self.frozen == "eager":
            return self._eager(args, kwargs)
        whys = ["  variant %d: %s" % (v.index, self._why(v, args, kwargs)[1])
                for v in reversed(self.variants)]
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

    def _fallback_warning(self, what: str) -> None:
        """Once per function: the compiled path was given up, and why."""
        if getattr(self, "_fallback_warned", False):
            return
        self._fallback_warned = True
        warnings.warn("ss.compile(%s) could not compile the whole function: %s. "
                      "fullgraph=True turns this into an error." % (self._name, what),
                      CompileFallbackWarning, stacklevel=5)

    def _limit_warning(self, reason: Optional[str]) -> None:
        if self._warned:
            return
        self._warned = True
        warnings.warn(
            "ss.compile(%s) reached its cache size limit of %d compiled variants: calls that "
            "match none of them now run eagerly (uncompiled). Last guard failure: %s. Shapes "
            "that keep changing are best compiled once with dynamic=None or dynamic=True; "
            "or raise cache_size_limit." % (self._name, self.cache_size_limit, reason),
            RecompileLimitWarning, stacklevel=4)

    @property
    def _name(self) -> str:
        return getattr(self._f, "__qualname__", getattr(self._f, "__name__", "f"))

    def _compile(self, args, kwargs, reason: Optional[str]):
        t0 = time.perf_counter()
        bound = self._sig.bind(*args, **kwargs)
        bound.apply_defaults()          # defaults become guarded inputs too
        # export binds again: empty *args / **kwargs then have no entry in its spec
        rebound = self._sig.bind(*bound.args, **bound.kwargs)
        spec = self._spec(rebound)
        from symshape.capture.export import export
        try:
            # CuPy inputs (backend="cupy"): trace on host copies; only shapes, dtypes and
            # (for graph breaks) values are read, and the variant then runs on the device
            ep = export(with_break_detection(self._f), _to_host(bound.args),
                        _to_host(bound.kwargs), dynamic_shapes=spec)
        except ConstraintViolationError:
            raise
        except UserError as e:
            brk = as_break(e)
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
            reason = "tracing raised %s: %s" % (type(e).__name__, e)
            return self._fall_back("eager", reason, self._eager, args, kwargs,
                                   "it runs eagerly from now on (%s)" % reason)
        fn = get_backend(self.backend)(ep)
        self._counts.append(0)
        vi = len(self.variants)
        v = Variant(vi, ep, fn, time.perf_counter() - t0, reason, self._counts,
                    struct_guards(self._sig, rebound.arguments, vi, self._ns) +
                    read_guards(ep.name_reads, vi, self._ns, self._name))
        cp = v.compiled
        self._ns["_core%d" % v.index] = cp.core
        self._ns["_ND%d" % v.index] = cp.ns.get("_ndarray", np.ndarray)
        for k, val in cp.ns.items():
            if _CONST.fullmatch(k):
                self._ns[_CONST.sub(r"_K%d_\1" % v.index, k)] = val
        self.variants.append(v)
        if reason is not None:
            self.recompile_reasons.append(reason)
        self._install()
        self._counts[v.index] += 1
        return fn(*args, **kwargs)

    def _spec(self, bound: inspect.BoundArguments):
        spec = {}
        for name, v in bound.arguments.items():
            spec[name] = self._leaf_spec(v, name)
        return spec

    def _leaf_spec(self, v, path: str):
        t = type(v)
        if t is list or t is tuple:
            return t(self._leaf_spec(x, "%s[%d]" % (path, i)) for i, x in enumerate(v))
        if t is dict:
            return {k: self._leaf_spec(x, path + pytree.key_str(k)) for k, x in v.items()}
        if t is np.ndarray or _is_device_array(v) or _is_dask_array(v):
            shape = tuple(v.shape)
            dyn = self._dyn.setdefault(path, set())
            first = self._first.setdefault(path, shape)
            if _is_dask_array(v) and self.dynamic is None:
                # a dask array's axes are dynamic from the first call: each chunk runs the
                # code generated for them, whatever the chunking of later calls
                dyn.update(range(len(shape)))
            if self.dynamic is False:
                return None
            if len(first) == len(shape):
                dyn.update(i for i, (a, b) in enumerate(zip(first, shape)) if a != b)
            if self.dynamic is True:
                return tuple(AUTO for _ in shape)
            if not dyn or len(first) != len(shape):
                return None
            return tuple(AUTO if i in dyn else None for i in range(len(shape)))
        if isinstance(v, int) and not isinstance(v, bool) and self.dynamic is not False:
            first = self._first.setdefault(path, (v,))
            if first != (v,):
                self._dyn.setdefault(path, set()).add(None)
            return AUTO if self._dyn.get(path) else None
        return None

    # ------------------------------------------------------------------ breaks
    def _run_breaks(self, args, kwargs):
        run = LazyRun(self._f, self._segments)
        try:
            result = run(args, kwargs)
        except UserError as e:
            # tracing cannot continue past this point; unless a side effect already ran,
            # run the whole call eagerly, and every later call too
            if run.side_effects:
                raise
            self.mode = "eager"
            self.mode_reason = "tracing through graph breaks failed: %s" % (
                str(e).splitlines()[0])
            return self._eager(args, kwargs)
        finally:
            self._note_breaks(run)
        self.break_calls += 1
        return result

    def _note_breaks(self, run: LazyRun) -> None:
        for b in run.breaks:
            text = str(b)
            if text not in self.break_reasons:
                self.break_reasons.append(text)

    # ------------------------------------------------------------------ controls
    def freeze(self, on_miss: str = "error") -> "CompiledFunction":
        """Refuse new variants: a miss raises RecompileError (``on_miss="error"``) or runs
        eagerly (``on_miss="eager"``)."""
        if on_miss not in ("error", "eager"):
            raise UserError("freeze(on_miss=...) takes 'error' or 'eager', got %r" % (on_miss,))
        self.frozen = on_miss
        return self

    def unfreeze(self) -> "CompiledFunction":
        self.frozen = None
        return self

    def reset(self) -> None:
        """Forget every variant (the next call compiles again)."""
        with self._lock:
            self.variants.clear()
            self.recompile_reasons.clear()
            self._counts.clear()
            self._first.clear()
            self._dyn.clear()
            self.mode, self.mode_reason = "graph", None
            self._warned = False
            self._install()

    @property
    def calls(self) -> int:
        return sum(self._counts) + self.eager_calls + self.break_calls

    def report(self) -> str:
        """Variants with their guards, recompile reasons, compile times, breaks."""
        dyn = {None: "None (automatic)", True: "True", False: "False"}[self.dynamic]
        lines = ["ss.compile(%s): backend=%r, dynamic=%s, fullgraph=%s" % (
            self._name, self.backend, dyn, self.fullgraph)]
        lines.append("  calls: %d (%d compiled, %d through graph breaks, %d eager); "
                     "variants: %d of %d%s" % (
                         self.calls, sum(self._counts), self.break_calls, self.eager_calls,
                         len(self.variants), self.cache_size_limit,
                         "; frozen (on miss: %s)" % self.frozen if self.frozen else ""))
        total = sum(v.compile_time for v in self.variants)
        if self.variants:
            lines.append("  compile time: %.1f ms in total" % (total * 1e3))
        for v in self.variants:
            shapes = ", ".join("%s: %s" % kv for kv in v.input_shapes.items())
            lines.append("  variant %d: %s" % (v.index, shapes))
            lines.append("    compiled in %.1f ms, %d calls; %s" % (
                v.compile_time * 1e3, v.calls,
                "first call" if v.reason is None else "recompiled because %s" % v.reason))
            for gtext in v.guards:
                lines.append("    guard: %s" % gtext)
        if self.recompile_reasons:
            lines.append("  recompile reasons:")
            lines += ["    %d. %s" % (i + 1, r) for i, r in enumerate(self.recompile_reasons)]
        if self.mode != "graph":
            lines.append("  mode: %s (%s)" % (self.mode, self.mode_reason))
        if self.break_reasons:
            lines.append("  graph breaks (run eagerly on every call):")
            lines += ["    %s" % r for r in self.break_reasons]
            lines.append("  compiled segments: %d (cache hits %d)" % (
                len(self._segments.fns), self._segments.hits))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return "<ss.compile(%s): %d variants, %d recompiles>" % (
            self._name, len(self.variants), len(self.recompile_reasons))


def _inside_trace(args, kwargs) -> bool:
    from symshape.capture.tracer import TracedArray
    leaves, _ = pytree.flatten((args, kwargs))
    return any(type(v) is TracedArray for _, v in leaves)


def compile(f=None, *, dynamic=None, backend: str = "numpy", fullgraph: bool = False,
            cache_size_limit: int = 8) -> CompiledFunction:
    """Just-in-time compile ``f`` (see the module docstring).  Without ``f``, a decorator:
    ``@ss.compile(dynamic=True)``."""
    if f is None:
        return lambda fn: compile(fn, dynamic=dynamic, backend=backend, fullgraph=fullgraph,
                                  cache_size_limit=cache_size_limit)
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
    cf = cls(f, dynamic, backend, bool(fullgraph), cache_size_limit, sig)
    try:
        functools.update_wrapper(cf, f, updated=())
    except AttributeError:
        pass
    return cf
