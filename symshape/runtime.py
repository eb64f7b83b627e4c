"""Helpers that generated code calls: input-check failures (cold path) and functional
updates.  Kept free of other symshape imports so compiled artifacts can embed it."""
from __future__ import annotations

import numpy as np

try:
    from symshape.errors import UserError
except ImportError:  # pragma: no cover - inside a standalone artifact
    class UserError(Exception):
        pass

_STATIC_HINT = ("the axis is static: the export saw this size and the spec did not mark it "
                "dynamic; pass Dim.AUTO or a Dim for it in dynamic_shapes to accept other sizes")


def _shape(a) -> str:
    return str(tuple(a.shape)) if hasattr(a, "shape") else "?"


def bad_array(path: str, a, ndim: int, dtype) -> None:
    if type(a) is not np.ndarray:
        raise UserError("input %s: expected a numpy.ndarray, got %s" % (path, type(a).__name__))
    if a.ndim != ndim:
        raise UserError("input %s: expected %d dimensions, got %d (shape %s)"
                        % (path, ndim, a.ndim, _shape(a)))
    raise UserError("input %s: expected dtype %s, got %s" % (path, dtype, a.dtype))


def bad_static(axis: str, expected: int, got: int, why=None) -> None:
    # ``why``: the program (not the spec) pinned a Dim.AUTO axis, and where
    raise UserError("%s: expected %d, got %d (%s)" % (axis, expected, got, why or _STATIC_HINT))


def bad_range(what: str, value: int, lo, hi, label) -> None:
    owner = " of Dim '%s'" % label if label else ""
    note = ""
    if not label and value < 2 <= lo:
        note = " (export specializes sizes 0 and 1, so a dynamic axis starts at 2)"
    raise UserError("%s = %d is outside the range [%s, %s]%s%s"
                    % (what, value, lo, hi, owner, note))


def bad_relation(axis: str, got: int, relation: str, expected: int) -> None:
    raise UserError("%s must equal %s (= %d), got %d" % (axis, relation, expected, got))


def bad_congruence(axis: str, got: int, form: str) -> None:
    raise UserError("%s = %d is not of the form %s required by the program" % (axis, got, form))


def bad_guard(text: str) -> None:
    raise UserError("the inputs violate the guard `%s` that the program was exported under"
                    % text)


def bad_check(text: str) -> None:
    raise UserError("ss.check failed at run time: %s" % text)


def bad_class(path: str, expected: str, got) -> None:
    raise UserError("input %s: expected a %s, got %s" % (path, expected, type(got).__name__))


def bad_configured(name: str, default) -> None:
    label = getattr(default, "label", None) or getattr(default, "__qualname__", None) or \
        getattr(default, "__name__", None)
    raise UserError("argument %s: the program was exported with %s left at its default (%s), "
                    "which is not an array or scalar, so it is part of the program; to use "
                    "another value, export functools.partial(f, %s=...)" % (
                        name, name, label or type(default).__name__, name))


def same_scalar(got, expected) -> bool:
    return type(got) is type(expected) and (got == expected or (got != got and
                                                                expected != expected))


def bad_int(path: str, got) -> None:
    raise UserError("input %s: expected a Python int (it is a symbolic size of the program), "
                    "got %s" % (path, type(got).__name__))


def bad_scalar(path: str, expected, got) -> None:
    raise UserError("input %s: the program was exported with %s = %r (Python scalars are "
                    "specialized), got %r" % (path, path, expected, got))


def bad_struct(path: str, expected: str, got) -> None:
    raise UserError("input %s: expected %s, got %s" % (path, expected, type(got).__name__ if
                                                         not hasattr(got, "__len__") else
                                                         "%s of length %d" % (
                                                             type(got).__name__, len(got))))


def setitem(x, index, value):
    out = np.array(x, copy=True)
    out[index] = value
    return out


def map_stack(body, xs, args):
    return np.stack([body(x, *args) for x in xs])


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
            raise UserError("input %s: expected a dict with keys %s, got %s" % (
                path, sorted(map(str, keys)), sorted(map(str, value)) if isinstance(value, dict)
                else type(value).__name__))
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
