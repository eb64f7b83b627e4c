"""Helpers that generated code calls: input-check failures (cold path) and functional
updates.  Kept free of other symshape imports so compiled artifacts can embed it."""
from __future__ import annotations

import ast
import builtins
import importlib
import re
import sys
from typing import Any, Callable, Optional

import numpy as np

try:
    from symshape.errors import SharedInputsError, UserError
except ImportError:  # pragma: no cover - inside a standalone artifact
    class UserError(Exception):
        pass

    class SharedInputsError(UserError):
        pass

_STATIC_HINT = ("the axis is static: the export saw this size and the spec did not mark it "
                "dynamic; pass Dim.AUTO or a Dim for it in dynamic_shapes to accept other sizes")


def _shape(a) -> str:
    return str(tuple(a.shape)) if hasattr(a, "shape") else "?"


def _kind(a) -> str:
    return "numpy.ndarray" if type(a) is np.ndarray else type(a).__name__


def same_scalar(got, expected) -> bool:
    return type(got) is type(expected) and (got == expected or (got != got and
                                                                expected != expected))


# --------------------------------------------------------------------------- failures
# Each kind of failed check, as two texts over the same arguments: the error message
# (UserError, what compiled code raises) and the guard that failed with the value seen
# (the JIT's recompile reason).  Names are the user's: input paths, axes, Dim names.

def _array_type_message(path, a, lib):
    if lib == "cupy":
        return ("input %s: expected a cupy.ndarray (backend='cupy'), got %s.%s; move it to "
                "the GPU with cupy.asarray" % (path, type(a).__module__.split(".")[0],
                                               type(a).__name__))
    return "input %s: expected a %s.ndarray, got %s" % (path, lib, type(a).__name__)


def small_size_hint(name: str, value: int) -> str:
    """Why a size of 0 or 1 is outside a Dim's default range, and the spelling that admits
    it (serving at batch size 1 is the common case)."""
    return ("; a Dim's range starts at 2 unless it is given min=: Dim(%r, min=%d) admits "
            "size %d" % (name, value, value))


def _range_message(what, value, lo, hi, label):
    owner = " of Dim '%s'" % label if label else ""
    note = ""
    if not label and value < 2 and lo == 2:      # otherwise the program set the bound
        note = " (export specializes sizes 0 and 1, so a dynamic axis starts at 2)"
    elif label and 0 <= value < 2 and lo == 2:
        note = small_size_hint(label, value)
    return "%s = %d is outside the range [%s, %s]%s%s" % (what, value, lo, hi, owner, note)


def _range_reason(what, value, lo, hi, label):
    if type(lo) is int and value < lo:          # an infinite end arrives as its text
        return "%s >= %s (got %d)" % (what, lo, value)
    return "%s <= %s (got %d)" % (what, hi, value)


def _configured_message(name, default):
    label = getattr(default, "label", None) or getattr(default, "__qualname__", None) or \
        getattr(default, "__name__", None)
    return ("argument %s: the program was exported with %s left at its default (%s), "
            "which is not an array or scalar, so it is part of the program; to use "
            "another value, export functools.partial(f, %s=...)" % (
                name, name, label or type(default).__name__, name))


def _struct_message(path, expected, got):
    return "input %s: expected %s, got %s" % (
        path, expected, type(got).__name__ if not hasattr(got, "__len__") else
        "%s of length %d" % (type(got).__name__, len(got)))


def _len_reason(path, v, kind, n):
    if type(v).__name__ != kind:
        return "type(%s) is %s (got %s)" % (path, kind, _kind(v))
    return "len(%s) == %d (got %d)" % (path, n, len(v))


def _keys_reason(path, v, keys):
    if type(v) is not dict:
        return "type(%s) is dict (got %s)" % (path, _kind(v))
    return "%s.keys() == {%s} (got {%s})" % (path, ", ".join(sorted(map(repr, keys))),
                                             ", ".join(sorted(map(repr, v))))


#: kind -> (error message, recompile reason), each a function of the failure's arguments
TEXTS = {
    "array_type": (_array_type_message,
                   lambda path, a, lib: "type(%s) is %s.ndarray (got %s)" % (path, lib,
                                                                              _kind(a))),
    "ndim": (lambda path, a, ndim: "input %s: expected %d dimensions, got %d (shape %s)"
             % (path, ndim, a.ndim, _shape(a)),
             lambda path, a, ndim: "%s.ndim == %d (got %d)" % (path, ndim, a.ndim)),
    "dtype": (lambda path, a, dtype: "input %s: expected dtype %s, got %s"
              % (path, dtype, a.dtype),
              lambda path, a, dtype: "%s.dtype == %s (got %s)" % (path, dtype, a.dtype)),
    # ``why``: the program (not the spec) pinned a Dim.AUTO axis, and where
    "static": (lambda axis, expected, got, why=None: "%s: expected %d, got %d (%s)"
               % (axis, expected, got, why or _STATIC_HINT),
               lambda axis, expected, got, why=None: "%s == %d (got %d)"
               % (axis, expected, got)),
    "range": (_range_message, _range_reason),
    "relation": (lambda axis, got, rel, expected: "%s must equal %s (= %d), got %d"
                 % (axis, rel, expected, got),
                 lambda axis, got, rel, expected: "%s == %s (got %d, expected %d)"
                 % (axis, rel, got, expected)),
    "congruence": (lambda axis, got, form: "%s = %d is not of the form %s required by the "
                   "program" % (axis, got, form),
                   lambda axis, got, form: "%s == %s (got %d)" % (axis, form, got)),
    "guard": (lambda text: "the inputs violate the guard `%s` that the program was "
              "exported under" % text,
              lambda text: "%s (false)" % text),
    "check": (lambda text: "ss.check failed at run time: %s" % text,
              lambda text: "%s (false)" % text),
    "class": (lambda path, expected, got: "input %s: expected a %s, got %s"
              % (path, expected, type(got).__name__),
              lambda path, expected, got: "isinstance(%s, %s) (got %s)"
              % (path, expected, _kind(got))),
    "configured": (_configured_message,
                   lambda name, default: "%s is the default traced (got another value)"
                   % name),
    "int": (lambda path, got: "input %s: expected a Python int (it is a symbolic size of "
            "the program), got %s" % (path, type(got).__name__),
            lambda path, got: "type(%s) is int (got %s)" % (path, _kind(got))),
    "scalar": (lambda path, expected, got: "input %s: the program was exported with %s = "
               "%r (Python scalars are specialized), got %r" % (path, path, expected, got),
               lambda path, expected, got: "%s == %r (got %r)" % (path, expected, got)),
    "struct": (_struct_message,
               lambda path, expected, got: "%s is %s (got %s)" % (path, expected, _kind(got))),
    "len": (lambda path, v, kind, n: _struct_message(path, "a %s of %d items" % (kind, n), v),
            _len_reason),
    "rebound": (lambda what, name, reader: "%s %s (read by %s) was rebound since the "
                "program was traced" % (what, name, reader),
                lambda what, name, reader: "%s %s (read by %s) was rebound"
                % (what, name, reader)),
    "state": (lambda reason: reason, lambda reason: reason),
    "keys": (lambda path, v, keys: "input %s: expected a dict with keys %s, got %s" % (
        path, sorted(map(str, keys)), sorted(map(str, v)) if isinstance(v, dict)
        else type(v).__name__), _keys_reason),
}


class Failure:
    """A failed check: its kind (a key of ``TEXTS``) and arguments (names as the user
    writes them, values as the check received them)."""

    __slots__ = ("kind", "args")

    def __init__(self, kind: str, *args) -> None:
        self.kind = kind
        self.args = args

    def message(self) -> str:
        """The error message: what is wrong, where, and what was expected."""
        return TEXTS[self.kind][0](*self.args)

    def reason(self) -> str:
        """The guard that failed, with the value seen: ``x.shape[0] == 5 (got 8)``."""
        return TEXTS[self.kind][1](*self.args)

    def __repr__(self) -> str:
        return "<Failure %s>" % self.reason()


# --------------------------------------------------------------------------- raising checks
# A branch on array values whose other side raised (``if not np.isfinite(X).all(): raise
# ValueError(msg)``) is a run-time check whose text ends with the exception it raises, as
# ``raise <type>(<args as Python literals>)``; a failing run raises that exception.
_RAISES = re.compile(r": raise ([A-Za-z_][\w.]*)\((.*?)\)(?: \(ss\.check at [^()]*\))?$", re.S)


def raise_text(exc: BaseException) -> Optional[str]:
    """``raise <type>(<args>)`` for ``exc`` when its type can be found again by name and its
    arguments are Python literals, else None."""
    cls = type(exc)
    name = cls.__name__ if getattr(builtins, cls.__name__, None) is cls else \
        "%s.%s" % (cls.__module__, cls.__qualname__)
    try:
        args = ", ".join(repr(a) for a in exc.args)
        if ast.literal_eval("(%s,)" % args if args else "()") != exc.args or \
                _exception_class(name) is not cls:
            return None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return "raise %s(%s)" % (name, args)


def _exception_class(name: str):
    if "." not in name:
        cls = getattr(builtins, name, None)
    else:
        module, _, qual = name.rpartition(".")
        mod = sys.modules.get(module)
        if mod is None:
            try:
                mod = importlib.import_module(module)
            except ImportError:
                return None
        cls = getattr(mod, qual, None)
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


def raised_by(text: str) -> Optional[BaseException]:
    """The exception a failed check's ``text`` says the program raises there, or None."""
    m = _RAISES.search(text)
    if m is None:
        return None
    cls = _exception_class(m.group(1))
    if cls is None:
        return None
    try:
        args = ast.literal_eval("(%s,)" % m.group(2) if m.group(2) else "()")
    except (ValueError, SyntaxError):
        return None
    return cls(*args)


def raise_failure(failure: Failure):
    if failure.kind == "check":
        exc = raised_by(failure.args[0])
        if exc is not None:         # the program's own exception, as eager code raises it
            raise exc
    raise UserError(failure.message())


def return_failure(failure: Failure) -> Failure:
    return failure


class Failures:
    """The ``bad_*`` calls generated checks make when a test fails: one definition each,
    building a ``Failure``.  ``on_fail`` decides what happens with it: ``raise_failure``
    (compiled code and ``ep.module()``) or ``return_failure`` (the JIT evaluating a
    variant's guards for a recompile reason).  ``array_type`` is the backend's array type
    (``numpy.ndarray``, ``cupy.ndarray``) and ``lib`` the library messages name for it
    (by default the type's top-level module)."""

    def __init__(self, on_fail: Callable[[Failure], Any] = raise_failure,
                 array_type: type = np.ndarray, lib: Optional[str] = None) -> None:
        self.on_fail = on_fail
        self.array_type = array_type
        self.lib = lib or array_type.__module__.split(".")[0]

    same_scalar = staticmethod(same_scalar)

    def bad_array(self, path: str, a, ndim: int, dtype):
        if type(a) is not self.array_type:
            return self.on_fail(Failure("array_type", path, a, self.lib))
        if a.ndim != ndim:
            return self.on_fail(Failure("ndim", path, a, ndim))
        return self.on_fail(Failure("dtype", path, a, dtype))

    def bad_static(self, axis: str, expected: int, got: int, why: Optional[str] = None):
        return self.on_fail(Failure("static", axis, expected, got, why))

    def bad_range(self, what: str, value: int, lo, hi, label):
        return self.on_fail(Failure("range", what, value, lo, hi, label))

    def bad_relation(self, axis: str, got: int, relation: str, expected: int):
        return self.on_fail(Failure("relation", axis, got, relation, expected))

    def bad_congruence(self, axis: str, got: int, form: str):
        return self.on_fail(Failure("congruence", axis, got, form))

    def bad_guard(self, text: str):
        return self.on_fail(Failure("guard", text))

    def bad_check(self, text: str):
        return self.on_fail(Failure("check", text))

    def bad_class(self, path: str, expected: str, got):
        return self.on_fail(Failure("class", path, expected, got))

    def bad_configured(self, name: str, default):
        return self.on_fail(Failure("configured", name, default))

    def bad_int(self, path: str, got):
        return self.on_fail(Failure("int", path, got))

    def bad_scalar(self, path: str, expected, got):
        return self.on_fail(Failure("scalar", path, expected, got))

    def bad_struct(self, path: str, expected: str, got):
        return self.on_fail(Failure("struct", path, expected, got))

    def bad_len(self, path: str, v, kind: str, n: int):
        """A container of the wrong type or length (the JIT's layout guards)."""
        return self.on_fail(Failure("len", path, v, kind, n))

    def bad_keys(self, path: str, v, keys):
        """A dict with other keys, or no dict (the JIT's layout guards)."""
        return self.on_fail(Failure("keys", path, v, keys))

    def bad_state(self, reason: str):
        """A Python value of state the trace read differs (the JIT's state guards)."""
        return self.on_fail(Failure("state", reason))

    def bad_rebound(self, what: str, name: str, reader: str):
        """A global or closure variable read while tracing now holds another object."""
        return self.on_fail(Failure("rebound", what, name, reader))


# generated code calls these as ``_rt.bad_*``: the raising protocol on NumPy arrays
_RAISE = Failures()
bad_array = _RAISE.bad_array
bad_static = _RAISE.bad_static
bad_range = _RAISE.bad_range
bad_relation = _RAISE.bad_relation
bad_congruence = _RAISE.bad_congruence
bad_guard = _RAISE.bad_guard
bad_check = _RAISE.bad_check
bad_class = _RAISE.bad_class
bad_configured = _RAISE.bad_configured
bad_int = _RAISE.bad_int
bad_scalar = _RAISE.bad_scalar
bad_struct = _RAISE.bad_struct
bad_keys = _RAISE.bad_keys


def _may_share(a, b) -> bool:
    if a is b:
        return True
    if type(a) is np.ndarray and type(b) is np.ndarray:
        # exact for strided views (z[::2] and z[1::2] are disjoint); a case too hard to
        # decide quickly counts as shared
        if not np.may_share_memory(a, b):
            return False
        try:
            return bool(np.shares_memory(a, b, max_work=10_000))
        except np.exceptions.TooHardError if hasattr(np, "exceptions") else Exception:
            return True
    # device arrays: their library's own test (CuPy has one; dask arrays are never written)
    lib = sys.modules.get(type(a).__module__.split(".")[0])
    test = getattr(lib, "may_share_memory", None)
    return bool(test(a, b)) if test is not None and type(a) is type(b) else False


def check_unshared(path: str, written, paths, others) -> None:
    """The program writes input ``path`` in place; refuse other array inputs that share its
    memory (eager NumPy would read the write through them, the program reads them as they
    were when the call began)."""
    for p, o in zip(paths, others):
        if _may_share(written, o):
            raise SharedInputsError(
                "inputs %s and %s share memory, and the program writes %s in place: eager "
                "NumPy would see that write through %s, the exported program reads %s as it "
                "was when the call began; pass separate arrays (for example %s.copy())"
                % (path, p, path, p, p, p))


def setitem(x, index, value):
    out = np.array(x, copy=True)
    out[index] = value
    return out


def setitem_owned(x, index, value):
    """``x[index] = value`` into ``x`` itself (a loop's own carried array), returning it;
    a copy, as ``setitem``, for arrays of other libraries."""
    if type(x) is not np.ndarray:
        return setitem(x, index, value)
    x[index] = value
    return x


def map_stack(body, xs, args):
    return np.stack([body(x, *args) for x in xs])


def for_loop(body, start, stop, step, carried, extra, row_shapes, dtypes):
    """The ``for_loop`` node (capture/loops.py): ``body(i, *carried, *extra)`` for ``i`` in
    ``range(start, stop, step)``; the carried values after the loop, then the per-iteration
    rows stacked (``(0, *row_shape)`` empty arrays when the loop does not run)."""
    # the loop owns its carried arrays (a body may write into them: setitem_owned)
    carried = tuple(np.array(c, copy=True) if type(c) is np.ndarray else c for c in carried)
    nc = len(carried)
    if not row_shapes:              # (the common bodies, without per-iteration slicing)
        if nc == 1:
            (c,) = carried
            for i in range(start, stop, step):
                c = body(i, c, *extra)
            return (c,)
        for i in range(start, stop, step):
            carried = body(i, *carried, *extra)
        return tuple(carried)
    rows = [[] for _ in row_shapes]
    if nc == 1 and len(rows) == 1:   # an RNN's state and its output per step
        (c,), add = carried, rows[0].append
        for i in range(start, stop, step):
            c, v = body(i, c, *extra)
            add(v)
        carried = (c,)
    for i in (range(start, stop, step) if nc != 1 or len(rows) != 1 else ()):
        out = body(i, *carried, *extra)
        if type(out) is not tuple:
            out = (out,)
        carried = out[:nc]
        for r, v in zip(rows, out[nc:]):
            r.append(v)
    stacked = tuple(np.stack(r) if r else np.empty((0,) + tuple(s), d)
                    for r, s, d in zip(rows, row_shapes, dtypes))
    return carried + stacked


def while_loop(cond, body, vals):
    vals = tuple(vals)
    while bool(cond(*vals)):
        out = body(*vals)
        vals = out if isinstance(out, tuple) else (out,)
    return vals


def check_spec(path: str, value, spec: tuple) -> None:
    """``value`` has the list / tuple / dict layout ``spec`` (a pytree treespec) says."""
    kind = spec[0]
    if kind == "leaf":
        return
    if kind == "dict":
        keys = spec[1]
        if not isinstance(value, dict) or set(value) != set(keys):
            raise UserError("input %s: expected a dict with keys [%s], got %s" % (
                path, ", ".join(sorted(map(repr, keys))),
                "[%s]" % ", ".join(sorted(map(repr, value))) if isinstance(value, dict)
                else type(value).__name__))
        for k, child in zip(keys, spec[2]):
            check_spec("%s[%r]" % (path, k), value[k], child)
        return
    children = spec[1]
    if not isinstance(value, (list, tuple)) or len(value) != len(children):
        bad_struct(path, "a list or tuple of %d items" % len(children), value)
    for i, child in enumerate(children):
        check_spec("%s[%d]" % (path, i), value[i], child)


def check_tree(path: str, value, expected: dict) -> None:
    """``value`` has the list / tuple / dict layout the program was exported with."""
    if not expected:
        return
    keys = list(expected)
    if all(isinstance(k, int) for k in keys):
        n = max(keys) + 1
        if not isinstance(value, (list, tuple)) or len(value) != n:
            bad_struct(path, "a list or tuple of %d items" % n, value)
        items = [(k, value[k]) for k in keys]
    else:
        if not isinstance(value, dict) or set(value) != set(keys):
            bad_keys(path, value, keys)
        items = [(k, value[k]) for k in keys]
    for k, v in items:
        check_tree("%s[%r]" % (path, k), v, expected[k])


def ufunc_at(ufunc, a, indices, b=None):
    """``ufunc.at`` on a copy of ``a`` (generated code is functional; the caller rebinds)."""
    out = a.copy()
    if b is None:
        ufunc.at(out, indices)
    else:
        ufunc.at(out, indices, b)
    return out
