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

Objects that ``copy.deepcopy`` refuses (some C extension objects) are shared by both runs
rather than copied, except an iterator (a generator): the eager run would advance it a
second time, so verifying is refused with a ``UserError``; modules, classes and functions
are never copied (they are compared by identity).  For debugging
and tests: it runs the function twice per call.
"""
from __future__ import annotations

import array
import collections
import copy
import inspect
import os
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.errors import UserError, VerifyError

from .access import AccessPath, Root, Scope
from .binding import StateBinding, entry_function
from .opaque import is_iterator, is_opaque, label as opaque_label, position

# values a root may hold that are not state: never copied, compared by identity
_CODE_LIKE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
              types.MethodType, types.MethodWrapperType)
_ATOMS = (int, float, complex, bool, str, bytes, type(None), np.generic, np.dtype)
# relative tolerance per float kind: fused and blocked code may reorder a sum
_RTOL = {2: 1e-2, 4: 1e-4, 8: 1e-7, 16: 1e-7}


def verify_default() -> bool:
    """Whether ``SYMSHAPE_VERIFY`` asks for the verify mode (``1``, ``true``, ``yes``)."""
    return os.environ.get("SYMSHAPE_VERIFY", "").strip().lower() in ("1", "true", "yes", "on")


def _reach(f) -> Tuple[Scope, List[type]]:
    """The live roots of ``f``'s state (``self``, its globals and closure cells) and the
    user classes whose methods it may run."""
    b = StateBinding(lambda a, path: a)
    try:
        b.bind(f)
    finally:
        b.restore()
    roots = {r: v for r, v in b.roots.items()}
    return Scope(roots, dict(b.holders)), b.classes


def _class_state(classes: List[type]) -> Dict[Tuple[type, str], Any]:
    """The data attributes of user classes (``Model.calls``): not code, not dunder."""
    return {(c, k): v for c in classes for k, v in list(vars(c).items())
            if not k.startswith("__") and not callable(v) and
            not isinstance(v, (property, staticmethod, classmethod, _CODE_LIKE))}


def _set_class_state(state: Dict[Tuple[type, str], Any], classes: List[type]) -> None:
    for (c, k) in _class_state(classes):
        if (c, k) not in state:
            delattr(c, k)
    for (c, k), v in state.items():
        if vars(c).get(k, _MISSING) is not v:
            setattr(c, k, v)


_MISSING = object()


def _state_roots(scope: Scope) -> List[Root]:
    out = []
    for r in scope.all_roots():
        try:
            v = scope.root(r)
        except (UserError, ValueError, KeyError):
            continue
        if not isinstance(v, _CODE_LIKE):
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
        if isinstance(o, np.ndarray) and id(o) not in seen:
            seen.add(id(o))
            _copy_view(o, memo)
            continue
        if id(o) in seen or isinstance(o, _ATOMS) or isinstance(o, np.ndarray):
            continue
        seen.add(id(o))
        budget[0] -= 1
        if isinstance(o, _CODE_LIKE):
            memo[id(o)] = o
            continue
        if is_opaque(o) and not _copyable(o):
            # a deque, an itertools object: copied; a generator, a C object deepcopy
            # refuses: shared by both runs
            try:
                memo[id(o)] = copy.deepcopy(o, memo)
            except Exception:
                if is_iterator(o):
                    raise UserError(
                        "verify mode cannot copy %s (deepcopy refuses a %s), so the eager "
                        "run would advance it a second time; verify a function that takes "
                        "what it yields as an argument" % (opaque_label(o), type(o).__name__))
                memo[id(o)] = o
            memo.setdefault(id(memo), []).append(o)
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


def _copy_view(a: np.ndarray, memo: dict) -> None:
    """Seed ``memo`` with a copy of the view ``a`` that is a view of a copy of its base, so
    state arrays that alias (``self.kv = self.k[:2]``) alias in the copies too."""
    base = a
    while isinstance(base.base, np.ndarray):
        base = base.base
    if base is a or base.base is not None or not (base.flags.c_contiguous or
                                                   base.flags.f_contiguous):
        return
    got = memo.get(id(base))
    if got is None:
        got = memo[id(base)] = base.copy(order="K")
        memo.setdefault(id(memo), []).append(base)     # keep the id alive, as deepcopy does
    offset = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    memo[id(a)] = np.ndarray(a.shape, a.dtype, buffer=got.reshape(-1, order="A")
                             if got.ndim != 1 else got, offset=offset, strides=a.strides)
    memo.setdefault(id(memo), []).append(a)


def _deepcopy(values, memo: dict):
    _share_opaque(values, memo, set(), [200_000])    # raises UserError itself
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
    scope, classes = _reach(f)
    roots = _state_roots(scope)
    self_root = Root("self", "self")
    memo: dict = {}
    before = {r: scope.root(r) for r in roots}
    cls_before = _class_state(classes)
    copies, args_c, kwargs_c, cls_copies = _deepcopy((before, args, kwargs, cls_before), memo)
    rng_before = np.random.get_state(legacy=False)      # np.random.* draws: both runs
    out = run(*args, **kwargs)
    rng_after = np.random.get_state(legacy=False)
    after = {r: scope.root(r) for r in roots}
    cls_after = _class_state(classes)
    # the eager run, on the copies: globals, cells and class attributes rebound to them
    # while it runs
    try:
        np.random.set_state(rng_before)
        _set_class_state(cls_copies, classes)
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
        cls_eager = _class_state(classes)
        rng_eager = np.random.get_state(legacy=False)
    finally:
        np.random.set_state(rng_after)
        for r in roots:
            if r != self_root:
                scope.set_root(r, after[r])
        _set_class_state(cls_after, classes)
    # outputs first, then the inputs (in-place writes), the roots, the class attributes
    checks = [(out, want, "output")]
    checks += [(a, b, name) for (name, a), (_, b) in zip(_arg_names(f, args, kwargs),
                                                         _arg_names(f, args_c, kwargs_c))]
    checks += [(after[r], eager_after[r], str(AccessPath(r))) for r in roots]
    checks += [(cls_after.get(ck, _MISSING), cls_eager.get(ck, _MISSING),
                "%s.%s" % (ck[0].__name__, ck[1]))
               for ck in list(cls_after) + [ck for ck in cls_eager if ck not in cls_after]]
    diff = next((d for a, b, p in checks for d in [_diff(a, b, p)] if d is not None), None)
    if diff is None and repr(rng_after) != repr(rng_eager):
        diff = "np.random's global state: a different number of draws than eager"
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
        return _atom_diff(a, b, path)
    if isinstance(a, types.FunctionType) and isinstance(b, types.FunctionType) and \
            a is not b and a.__code__ is b.__code__:
        # a function the call made (a closure stored for later): the same code over equal
        # values
        return _diff(_closure(a), _closure(b), path + ".<closure>", seen, depth + 1)
    if isinstance(b, _CODE_LIKE) or a is b:
        return None if a is b else "%s: another object than eager's (%r)" % (path, b)
    if type(a) is not type(b):
        return "%s: a %s, eager gives a %s" % (path, type(a).__name__, type(b).__name__)
    seen = set() if seen is None else seen
    if (id(a), id(b)) in seen:
        return None
    seen.add((id(a), id(b)))
    pairs = _item_pairs(a, b, path)
    if isinstance(pairs, str) or pairs is None:
        return pairs
    for x, y, p in pairs:
        d = _diff(x, y, p, seen, depth + 1)
        if d:
            return d
    return None


def _closure(f) -> dict:
    out = {}
    for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            out[name] = _MISSING
    return out


def _atom_diff(a, b, path: str) -> Optional[str]:
    if type(a) is not type(b):
        return "%s: a %s, eager gives a %s (%r)" % (path, type(a).__name__,
                                                   type(b).__name__, b)
    if isinstance(b, (float, complex, np.inexact)) and (a != a and b != b):
        return None
    return None if a == b else "%s: %r, eager gives %r" % (path, a, b)


def _item_pairs(a, b, path: str):
    """What to compare inside ``a`` and ``b`` (objects of one type): a list of
    ``(a's item, b's item, its path)``, or the difference found already (a text), or
    None when they are equal."""
    if isinstance(b, dict):
        if list(a.keys()) != list(b.keys()):
            return "%s: keys %s, eager gives %s" % (path, list(a.keys()), list(b.keys()))
        return [(a[k], b[k], "%s[%r]" % (path, k)) for k in b]
    if isinstance(b, (list, tuple, collections.deque, array.array)):
        if len(a) != len(b):
            return "%s: length %d, eager gives %d" % (path, len(a), len(b))
        return [(x, y, "%s[%d]" % (path, i)) for i, (x, y) in enumerate(zip(a, b))]
    if isinstance(b, (set, frozenset)):
        return None if a == b else "%s: %r, eager gives %r" % (path, a, b)
    if isinstance(b, (np.random.Generator, np.random.RandomState, np.random.BitGenerator)):
        return None if repr(_rng_state(a)) == repr(_rng_state(b)) else \
            "%s: the random generator's state differs from eager's (a different number of " \
            "draws)" % path
    if is_iterator(b):
        return None if position(a) == position(b) else \
            "%s: the iterator stands elsewhere than eager's" % path
    da, db = _attrs(a), _attrs(b)
    if da is None or db is None:
        try:
            return None if bool(a == b) else "%s: %r, eager gives %r" % (path, a, b)
        except Exception:
            return None         # nothing to compare it by
    for k in list(db) + [k for k in da if k not in db]:
        if k not in da or k not in db:
            return "%s.%s: %s, eager %s" % (path, k, "set" if k in da else "unset",
                                            "sets it" if k in db else "leaves it unset")
    return [(da[k], db[k], "%s.%s" % (path, k)) for k in db]


def _rng_state(g):
    if isinstance(g, np.random.Generator):
        return g.bit_generator.state
    if isinstance(g, np.random.RandomState):
        return g.get_state(legacy=False)
    return g.state


def _attrs(o) -> Optional[Dict[str, Any]]:
    """An object's attributes: its ``__dict__`` and its slots (None: neither)."""
    d = getattr(o, "__dict__", None)
    out = dict(d) if isinstance(d, dict) else None
    for klass in type(o).__mro__:
        slots = vars(klass).get("__slots__", ())
        for n in ((slots,) if isinstance(slots, str) else slots):
            if n not in ("__dict__", "__weakref__") and hasattr(o, n):
                out = {} if out is None else out
                out[n] = getattr(o, n)
    return out


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
