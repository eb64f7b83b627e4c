"""The verify mode: every call of an exported or compiled program checked against eager.

``SYMSHAPE_VERIFY=1``, ``ss.compile(f, verify=True)`` or ``ep.module(verify=True)``: a call
first deep-copies its inputs and the state the function reaches (the roots of its reach:
``self`` for a method or callable object, the globals its code and its helpers name, its
closure cells; found by the same walk as export's, capture/state/binding.py), then runs
the program on the real objects, then runs the eager function on the copies (the globals
and cells rebound to their copies while it runs, so helpers see them too), and compares:
the outputs, then the inputs (in-place writes), then every root, recursively through
containers and object attributes.  The first difference raises ``VerifyError`` naming
the path as the user spells it (``output[1]``, ``self.layers[0].b``, ``x``), what differs
and which variant or segment ran, as Dynamo's correctness check does.  Afterwards the real
objects hold what the program made (the copies are dropped).

Objects that cannot be copied meaningfully (opaque ones, capture/state/opaque.py: a
generator, a C extension object) are shared by both runs rather than copied; modules,
classes and functions are never copied (they are compared by identity).  For debugging
and tests: it runs the function twice per call.
"""
from __future__ import annotations

import copy
import inspect
import os
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.errors import UserError, VerifyError

from .access import AccessPath, Root, Scope
from .binding import StateBinding, entry_function
from .opaque import is_opaque

# values a root may hold that are not state: never copied, compared by identity
_CODE_LIKE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
              types.MethodType, types.MethodWrapperType)
_ATOMS = (int, float, complex, bool, str, bytes, type(None), np.generic, np.dtype)
# relative tolerance per float kind: fused and blocked code may reorder a sum
_RTOL = {2: 1e-2, 4: 1e-4, 8: 1e-7, 16: 1e-7}


def verify_default() -> bool:
    """Whether ``SYMSHAPE_VERIFY`` asks for the verify mode (``1``, ``true``, ``yes``)."""
    return os.environ.get("SYMSHAPE_VERIFY", "").strip().lower() in ("1", "true", "yes", "on")


def _reach(f) -> Scope:
    """The live roots of ``f``'s state: ``self``, its globals and closure cells."""
    b = StateBinding(lambda a, path: a)
    try:
        b.bind(f)
    finally:
        b.restore()
    roots = {r: v for r, v in b.roots.items()}
    return Scope(roots, dict(b.holders))


def _state_roots(scope: Scope) -> List[Root]:
    out = []
    for r in scope.all_roots():
        try:
            v = scope.root(r)
        except (UserError, ValueError, KeyError):
            continue
        if not isinstance(v, _CODE_LIKE) and not (is_opaque(v) and not _copyable(v)):
            out.append(r)
    return out


def _copyable(v) -> bool:
    return isinstance(v, (np.ndarray, np.generic) + _ATOMS) or \
        isinstance(v, (dict, list, tuple, set, frozenset))


def _share_opaque(v, memo: dict, seen: set, budget: List[int]) -> None:
    """Seed ``memo`` so deepcopy shares opaque objects (and code) instead of copying them."""
    stack = [v]
    while stack and budget[0] > 0:
        o = stack.pop()
        if id(o) in seen or isinstance(o, _ATOMS) or isinstance(o, np.ndarray):
            continue
        seen.add(id(o))
        budget[0] -= 1
        if isinstance(o, _CODE_LIKE) or (is_opaque(o) and not _copyable(o)):
            memo[id(o)] = o
            continue
        if isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        else:
            d = getattr(o, "__dict__", None)
            if isinstance(d, dict):
                stack.extend(d.values())
            for name in getattr(type(o), "__slots__", ()) or ():
                if isinstance(name, str) and hasattr(o, name):
                    stack.append(getattr(o, name))


def _deepcopy(values, memo: dict):
    _share_opaque(values, memo, set(), [200_000])
    try:
        return copy.deepcopy(values, memo)
    except Exception as e:
        raise UserError("verify mode: the inputs or the state the function reaches cannot be "
                        "deep-copied (%s: %s), so there is no eager run to compare with; "
                        "turn verify off for this function" % (type(e).__name__, e)) from e


def _eager_callable(f, owner_copy):
    """``f`` bound to the copy of its object (a bound method or a callable object)."""
    fn, owner = entry_function(f)
    if owner is None:
        return f
    if isinstance(f, types.MethodType) and f.__self__ is owner:
        return types.MethodType(f.__func__, owner_copy)
    if f is owner:
        return owner_copy
    raise UserError("verify mode cannot run %r eagerly on a copy of its object (a wrapper "
                    "around a method); verify the method itself" % (f,))


def _arg_names(f, args, kwargs) -> List[Tuple[str, Any]]:
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
        return list(bound.arguments.items())
    except (TypeError, ValueError):
        return [("args[%d]" % i, a) for i, a in enumerate(args)] + list(kwargs.items())


def verified_call(f, run: Callable, args: tuple, kwargs: dict, what: Callable[[], str]):
    """``run(*args, **kwargs)`` (the program), checked against ``f`` run eagerly on deep
    copies; ``what()`` names the variant or segment that ran (for the message)."""
    scope = _reach(f)
    roots = _state_roots(scope)
    self_root = Root("self", "self")
    memo: dict = {}
    before = {r: scope.root(r) for r in roots}
    copies, args_c, kwargs_c = _deepcopy((before, args, kwargs), memo)
    out = run(*args, **kwargs)
    after = {r: scope.root(r) for r in roots}
    # the eager run, on the copies: globals and cells rebound to them while it runs
    try:
        for r in roots:
            if r != self_root:
                scope.set_root(r, copies[r])
        eager = _eager_callable(f, copies.get(self_root))
        try:
            want = eager(*args_c, **kwargs_c)
        except Exception as e:
            raise VerifyError("verify: %s returned, but the eager function raised %s: %s "
                              "(%s)" % (_call_name(f), type(e).__name__, e, what())) from e
        eager_after = {r: (copies[r] if r == self_root else scope.root(r)) for r in roots}
    finally:
        for r in roots:
            if r != self_root:
                scope.set_root(r, after[r])
    diff = _diff(out, want, "output")
    if diff is None:
        for (name, a), (_, b) in zip(_arg_names(f, args, kwargs),
                                     _arg_names(f, args_c, kwargs_c)):
            diff = _diff(a, b, name)
            if diff is not None:
                break
    if diff is None:
        for r in roots:
            diff = _diff(after[r], eager_after[r], str(AccessPath(r)))
            if diff is not None:
                break
    if diff is not None:
        raise VerifyError("verify: %s differs from the eager function at %s (the program "
                          "ran %s); a symshape bug unless the function is nondeterministic: "
                          "please report it" % (_call_name(f), diff, what()))
    return out


def verified_module(ep, run: Callable) -> Callable:
    """``ep.module(verify=True)``: ``run`` (the checked module) with every call verified
    against the function ``ep`` was exported from."""
    f = ep.eager_function
    if f is None:
        raise UserError("ep.module(verify=True): this program was loaded (ss.load), so there "
                        "is no eager function to compare with; verify the exported program "
                        "before saving it")

    def verified(*args, **kwargs):
        return verified_call(f, run, args, kwargs, lambda: "ep.module()")
    verified.__signature__ = ep.call_signature
    verified.__name__ = getattr(run, "__name__", "module")
    verified.__doc__ = run.__doc__
    return verified


def _call_name(f) -> str:
    return "%s()" % (getattr(f, "__qualname__", None) or type(f).__name__)


def _diff(a, b, path: str, seen=None, depth: int = 0) -> Optional[str]:
    """None when ``a`` (the program's) equals ``b`` (eager's), else ``"path: what"``."""
    if depth > 60:
        return None
    if isinstance(b, np.ndarray) or isinstance(a, np.ndarray):
        return _array_diff(a, b, path)
    if isinstance(b, _ATOMS):
        if type(a) is not type(b):
            return "%s: a %s, eager gives a %s (%r)" % (path, type(a).__name__,
                                                       type(b).__name__, b)
        if isinstance(b, (float, complex, np.inexact)) and (a != a and b != b):
            return None
        return None if a == b else "%s: %r, eager gives %r" % (path, a, b)
    if isinstance(b, _CODE_LIKE) or is_opaque(b) and not _copyable(b):
        return None if a is b else "%s: another object than eager's (%r)" % (path, b)
    if type(a) is not type(b):
        return "%s: a %s, eager gives a %s" % (path, type(a).__name__, type(b).__name__)
    seen = set() if seen is None else seen
    if (id(a), id(b)) in seen:
        return None
    seen.add((id(a), id(b)))
    if isinstance(b, dict):
        if list(a.keys()) != list(b.keys()):
            return "%s: keys %s, eager gives %s" % (path, list(a.keys()), list(b.keys()))
        for k in b:
            d = _diff(a[k], b[k], "%s[%r]" % (path, k), seen, depth + 1)
            if d:
                return d
        return None
    if isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return "%s: length %d, eager gives %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = _diff(x, y, "%s[%d]" % (path, i), seen, depth + 1)
            if d:
                return d
        return None
    if isinstance(b, (set, frozenset)):
        return None if a == b else "%s: %r, eager gives %r" % (path, a, b)
    da, db = getattr(a, "__dict__", None), getattr(b, "__dict__", None)
    if isinstance(db, dict) and isinstance(da, dict):
        for k in list(db) + [k for k in da if k not in db]:
            if k not in da or k not in db:
                return "%s.%s: %s, eager %s" % (path, k, "set" if k in da else "unset",
                                                "sets it" if k in db else "leaves it unset")
            d = _diff(da[k], db[k], "%s.%s" % (path, k), seen, depth + 1)
            if d:
                return d
    return None


def _array_diff(a, b, path: str) -> Optional[str]:
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return "%s: a %s, eager gives a %s" % (path, type(a).__name__, type(b).__name__)
    if a.shape != b.shape:
        return "%s: shape %s, eager gives %s" % (path, a.shape, b.shape)
    if a.dtype != b.dtype:
        return "%s: dtype %s, eager gives %s" % (path, a.dtype, b.dtype)
    if a.dtype.kind in "fc":
        rtol = _RTOL.get(a.dtype.itemsize // (2 if a.dtype.kind == "c" else 1), 1e-7)
        scale = float(np.max(np.abs(b[np.isfinite(b)]))) if b.size and \
            np.isfinite(b).any() else 0.0
        ok = np.allclose(a, b, rtol=rtol, atol=rtol * scale, equal_nan=True)
    else:
        ok = np.array_equal(a, b)
    if ok:
        return None
    bad = np.argwhere(~np.isclose(a, b, equal_nan=True) if a.dtype.kind in "fc" else a != b)
    at = tuple(int(i) for i in bad[0]) if bad.size else ()
    return "%s%s: %r, eager gives %r" % (path, list(at) if at else "", a[at] if at else a,
                                          b[at] if at else b)
