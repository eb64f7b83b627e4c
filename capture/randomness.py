"""Random numbers stay random: draws become ops that run when the program runs.

NumPy's random functions take no array argument, so without help they would run once while
tracing and their numbers would be frozen into the program as a constant.  While a trace
runs:

- the global ``np.random.*`` functions (bound methods of NumPy's global ``RandomState``)
  are replaced, wherever the traced code finds them (``numpy.random`` and the user's
  globals), by routers that record a draw on the active tracer;
- a ``np.random.Generator`` or ``RandomState`` reached as model state (a global, a closure
  cell, ``self.rng``) is seen through a ``RandomProxy`` whose methods record draws.

A draw is a node with no array inputs whose generated code calls the same method of the
same generator (``np.random.normal(*(0.0, 1.0), size=(s0, 4))``), so the program, run after
seeding as the eager code is seeded, gives the numbers eager code gives, call after call.
Draw nodes are effects: never removed as dead code, never merged, kept in program order.

Other impure calls made while tracing (``time.time()``, ``os.urandom``, Python's ``random``)
cannot be recorded: they run once and a ``FrozenValueWarning`` names the line.
"""
from __future__ import annotations

import os
import random as _pyrandom
import sys
import threading
import time
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from symshape.errors import FrozenValueWarning, UserError, where
from symshape.sizes.symfloat import SymFloat
from symshape.sizes.symint import SymInt
from symshape.userframe import user_frame

from .ops.registry import defop
from .random_arrays import ARRAY_DRAWS, draw, draw_size
from .tracer import TracedArray, Tracer, to_expr
from .state.binding import user_code

# NumPy's own classes and constructors, kept before any trace routes the names
_RandomState = np.random.RandomState
_Generator = np.random.Generator
_default_rng = np.random.default_rng

# method -> its distribution parameters before ``size`` (same names for Generator,
# RandomState and the global functions where both exist)
DISTRIBUTIONS: Dict[str, Tuple[str, ...]] = {
    "standard_normal": (), "random": (), "random_sample": (), "sample": (), "ranf": (),
    "standard_exponential": (), "standard_cauchy": (),
    "normal": ("loc", "scale"), "uniform": ("low", "high"), "exponential": ("scale",),
    "integers": ("low", "high"), "randint": ("low", "high"), "poisson": ("lam",),
    "binomial": ("n", "p"), "beta": ("a", "b"), "gamma": ("shape", "scale"),
    "standard_gamma": ("shape",), "laplace": ("loc", "scale"), "logistic": ("loc", "scale"),
    "lognormal": ("mean", "sigma"), "geometric": ("p",), "chisquare": ("df",),
    "standard_t": ("df",), "rayleigh": ("scale",), "weibull": ("a",), "pareto": ("a",),
    "power": ("a",), "gumbel": ("loc", "scale"), "vonmises": ("mu", "kappa"),
    "wald": ("mean", "scale"), "triangular": ("left", "mode", "right"),
    "negative_binomial": ("n", "p"), "f": ("dfnum", "dfden"), "zipf": ("a",),
    "logseries": ("p",), "noncentral_chisquare": ("df", "nonc"),
    "noncentral_f": ("dfnum", "dfden", "nonc"),
    "tomaxint": (),                     # RandomState only
}
# methods whose sizes are positional (``np.random.rand(3, n)``)
BY_DIMS = ("rand", "randn")
# draws the tracer does not record: named in an error instead of being frozen silently
UNRECORDED = ("permuted", "bytes", "multivariate_hypergeometric", "hypergeometric",
              "random_integers", "seed", "set_state", "bit_generator", "spawn", "jumped")
# the fix each unrecorded method's message gives (the default: draw with a supported method)
UNRECORDED_FIXES: Dict[str, str] = {
    "random_integers": "write randint(low, high + 1, size) (the same numbers: NumPy's "
                       "random_integers is that call, and is deprecated)",
    "seed": "seed outside the function (np.random.seed(s) before each call), or make a "
            "generator with that seed in the function (np.random.RandomState(s)) and draw "
            "from it",
    "set_state": "make the generator in the state you want outside the function and pass it "
                 "as an argument (or use it as model state)",
    "bytes": "draw integers instead (randint(0, 256, size=n, dtype=np.uint8)) and call "
             ".tobytes() on the result outside the function",
}
# state reads of a generator the program makes: known only when the program runs
STATE_READS = ("get_state", "state", "bit_generator", "__getstate__")

def _draw_source(receiver: Optional[str], method: str) -> Callable:
    """The emitter of a draw: ``rng.normal(*(0.0, 2.0), size=(s0, 4))``, leaving out empty
    parameter and keyword parts."""
    def emit(a, k) -> str:
        parts = []
        if k["params"] != "()":
            parts.append("*" + k["params"])
        parts.append("size=" + k["size"])
        if k["kwargs"] != "()":
            parts.append("**dict(%s)" % k["kwargs"])
        return "%s.%s(%s)" % (receiver or k["source"], method, ", ".join(parts))
    return emit


for _m in DISTRIBUTIONS:
    defop("random_%s" % _m, emit=_draw_source(None, _m),
          doc="draw %s numbers when the program runs" % _m)
    defop("global_random_%s" % _m, emit=_draw_source("np.random", _m),
          doc="draw from NumPy's global generator when the program runs")
for _m in DISTRIBUTIONS:
    defop("drawn_%s" % _m, emit=(lambda m: lambda a, k: _draw_source(a[0], m)(a, k))(_m),
          doc="draw from a generator the program makes")
defop("random_bit_generator", emit=lambda a, k: "np.random.Generator(np.random.%s(%s))" % (
    k["bit"].strip("'"), k["seed"]),
      doc="a Generator over a bit generator the program makes from a seed")
defop("random_generator", emit=lambda a, k: "np.random.%s(%s)" % (k["kind"].strip("'"),
                                                                  k["seed"]),
      doc="a generator made by the program (each run makes it afresh, as eager code does)")

for _m in BY_DIMS:
    defop("random_%s" % _m, "{source}.%s(*{size})" % _m, doc="%s when the program runs" % _m)
    defop("drawn_%s" % _m, emit=(lambda m: lambda a, k: "%s.%s(*%s)" % (a[0], m, k["size"]))(_m),
          doc="%s from a RandomState the program makes" % _m)
    defop("global_random_%s" % _m, "np.random.%s(*{size})" % _m,
          doc="%s from NumPy's global generator when the program runs" % _m)


# --------------------------------------------------------------------------- the active trace
_ACTIVE = threading.local()


def active_tracer() -> Optional[Tracer]:
    return getattr(_ACTIVE, "tracer", None)


class drawing:
    """Within the block, global random functions record draws on ``tracer``."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    def __enter__(self):
        self.outer = active_tracer()
        _ACTIVE.tracer = self.tracer
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.tracer = self.outer


# --------------------------------------------------------------------------- recording
def _static(v, what: str, method: str):
    """A distribution parameter: a Python or NumPy number (or a constant array)."""
    if type(v) is TracedArray or type(v) in (SymInt, SymFloat):
        raise UserError("%s(%s=...) with a traced value is not supported while tracing: pass "
                        "a number, or draw standard values and scale them (loc + scale * "
                        "rng.standard_normal(size))%s" % (method, what, where(user_frame(4))))
    return v


_size = draw_size


def record(t: Tracer, source, method: str, args: tuple, kwargs: dict, path: str = ""):
    """Record ``source.method(*args, **kwargs)`` as a draw (``source`` None: the global
    functions); returns the traced result."""
    t.env.commit_pending()
    if method in BY_DIMS:
        if kwargs:
            raise UserError("np.random.%s takes only sizes%s" % (method, where(user_frame(3))))
        size = _size(t, args)
        params, extra = (), {}
    else:
        names = DISTRIBUTIONS[method]
        kw = dict(kwargs)
        params = list(args[:len(names)])
        for n in names[len(params):]:
            if n in kw:
                params.append(kw.pop(n))
        rest = args[len(names):]
        size = kw.pop("size", rest[0] if rest else None)
        size = _size(t, size)
        params = [_static(p, n, method) for p, n in zip(params, names)]
        extra = kw
        if extra.get("dtype") is not None:
            extra["dtype"] = np.dtype(extra["dtype"])      # np.int32 -> a dtype: saveable
    probe = _probe(source, method, tuple(params), size, extra)
    dtype = np.asarray(probe).dtype
    shape = () if size is None else size
    attrs: Dict[str, Any] = {"size": None if size is None else tuple(to_expr(s) for s in size)}
    if method not in BY_DIMS:
        # keyword arguments as (name, value) pairs: plain data that saves and loads
        attrs.update(params=tuple(params), kwargs=tuple(sorted(extra.items())))
    inputs: tuple = ()
    if source is None:
        op = "global_random_%s" % method
    elif type(source) is TracedArray:          # a generator the program makes
        op, inputs = "drawn_%s" % method, (source.node,)
    else:
        op = "random_%s" % method
        attrs["source"] = source
        attrs["path"] = path           # how the user's code names it (for printing)
    out = t.emit(op, inputs, attrs, shape, dtype)
    out.node.meta["effect"] = True
    return out


def _probe(source, method: str, params: tuple, size, kwargs: dict):
    """One draw of one element from a generator of the same kind: the result's dtype, and
    NumPy's own error for bad parameters, at trace time (the user's generator is untouched)."""
    legacy = source is None or isinstance(source, _RandomState) or (
        type(source) is TracedArray and "RandomState" in (source.node.attrs.get("kind"),
                                                          source.node.attrs.get("generator")))
    gen = _RandomState(0) if legacy else _default_rng(0)
    small = None if size is None else (1,) * len(size)
    try:
        fn = getattr(gen, method)
        return fn(*small) if method in BY_DIMS else fn(*params, size=small, **kwargs)
    except (TypeError, ValueError, AttributeError) as e:
        raise UserError("%s: %s%s" % (method, e, where(user_frame(4)))) from None


class RandomProxy:
    """What the traced code sees in place of a ``Generator`` / ``RandomState`` it reaches:
    its draws are recorded; its other attributes are the generator's own."""

    __slots__ = ("_tracer", "_gen", "_path")

    def __init__(self, tracer: Tracer, gen, path: str) -> None:
        self._tracer = tracer
        self._gen = gen
        self._path = path

    def __getattr__(self, name: str):
        if name.startswith("__") or name in RandomProxy.__slots__:
            raise AttributeError(name)
        if name in DISTRIBUTIONS or name in BY_DIMS:
            kind = (self._gen.node.attrs.get("kind") or self._gen.node.attrs.get("generator")
                    ) if type(self._gen) is TracedArray else None
            real = self._gen if kind is None else (
                _RandomState if kind == "RandomState" else _Generator)
            if not hasattr(real, name):
                raise UserError("%s has no method %s%s" % (self._path, name,
                                                             where(user_frame(2))))
            tracer, gen, path = self._tracer, self._gen, self._path
            return lambda *args, **kwargs: record(tracer, gen, name, args, kwargs, path)
        if name in ARRAY_DRAWS:
            tracer, gen, path = self._tracer, self._gen, self._path
            return lambda *args, **kwargs: draw(tracer, gen, name, args, kwargs, path)
        if name in UNRECORDED:
            raise UserError("%s.%s is not supported while tracing: %s%s"
                            % (self._path, name, _unrecorded_fix(name), where(user_frame(2))))
        if type(self._gen) is TracedArray:
            why = ("its state exists only when the program runs" if name in STATE_READS
                   else "a generator the program makes only draws")
            raise UserError("%s.%s is not supported while tracing (%s): make the generator "
                            "outside the function and pass it as an argument (or use it as "
                            "model state) to read or change it%s"
                            % (self._path, name, why, where(user_frame(2))))
        return getattr(self._gen, name)

    def __repr__(self) -> str:
        return "<traced %s %s>" % (type(self._gen).__name__, self._path)


def _unrecorded_fix(name: str) -> str:
    return UNRECORDED_FIXES.get(name) or (
        "its numbers would be frozen into the program; draw with a supported method (%s)"
        % (", ".join(sorted(DISTRIBUTIONS)[:6]) + ", ..."))


def is_generator(v) -> bool:
    return isinstance(v, (_Generator, _RandomState))


def generator_kind(v) -> str:
    return "RandomState" if isinstance(v, _RandomState) else "Generator"


def argument_proxy(tracer: Tracer, node, path: str) -> "RandomProxy":
    """What the traced code sees for a generator passed as an argument: draws from it are
    ops on that input, so each call draws from the generator the caller passes."""
    return RandomProxy(tracer, TracedArray(tracer, node, (), np.dtype(object)), path)


def stand_in(tracer: Tracer) -> Callable[[Any, str], Any]:
    """For model state: a generator the program reaches is seen as a RandomProxy."""
    def replace(v, path: str):
        return RandomProxy(tracer, v, path) if is_generator(v) else None
    return replace


# --------------------------------------------------------------------------- global functions
def _global_router(name: str, orig: Callable) -> Callable:
    def routed(*args, **kwargs):
        t = active_tracer()
        if t is None:
            return orig(*args, **kwargs)
        if name == "seed":
            return _seed(t, *args, **kwargs)
        if name in UNRECORDED:
            raise UserError("np.random.%s is not supported while tracing: %s%s"
                            % (name, _unrecorded_fix(name), where(user_frame(2))))
        if name in ARRAY_DRAWS:
            return draw(t, None, name, args, kwargs)
        return record(t, None, name, args, kwargs)
    routed.__name__ = name
    routed.__qualname__ = "random." + name
    routed.__doc__ = getattr(orig, "__doc__", None)
    routed.symshape_routes = orig
    return routed


defop("global_random_seed", emit=lambda a, k: "np.random.seed(%s)" % k["seed"],
      doc="seed NumPy's global generator when the program runs (np.random.seed in the "
          "program: the draws after it are the numbers eager code draws)")


def _seed(t: Tracer, seed=None):
    """``np.random.seed(s)`` in traced code: a node the program runs in its place, before
    the global draws recorded after it (every draw is a node kept in program order)."""
    if type(seed) is TracedArray or type(seed) in (SymInt, SymFloat):
        raise UserError("np.random.seed with a traced value is not supported while tracing; "
                        "pass an int%s" % where(user_frame(3)))
    if seed is not None:
        arr = np.asarray(seed)
        if arr.dtype.kind not in "iu":
            raise UserError("np.random.seed takes an int or an array of ints%s"
                            % where(user_frame(3)))
        seed = int(arr) if arr.ndim == 0 else tuple(int(v) for v in arr.ravel())
    out = t.emit("global_random_seed", (), {"seed": seed}, (), np.dtype(object))
    out.node.meta["effect"] = True
    return None


def _maker_router(kind: str, orig: Callable) -> Callable:
    """``np.random.default_rng(seed)`` inside traced code: a generator made when the program
    runs (seeded per call exactly as the eager code seeds it)."""
    def routed(seed=None, *args, **kwargs):
        t = active_tracer()
        if t is None:
            return orig(seed, *args, **kwargs)
        return _made(t, kind, seed, args, kwargs)
    routed.__name__ = kind
    routed.symshape_routes = orig
    return routed


class _RoutedRandomState(_RandomState):
    """``np.random.RandomState(seed)`` while tracing: a generator made when the program runs.
    A class (a subclass), not a function, so NumPy's own ``isinstance`` checks keep working."""

    def __new__(cls, seed=None, *args, **kwargs):
        t = active_tracer()
        if t is None:
            return _RandomState(seed, *args, **kwargs)
        return _made(t, "RandomState", seed, args, kwargs)


_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


class _RoutedGenerator(_Generator):
    """``np.random.Generator(np.random.PCG64(seed))`` while tracing: a generator made when
    the program runs from the same kind of bit generator and seed.  A bit generator that
    cannot be remade from its seed (already advanced, spawned, or of another kind) is
    refused with the fix."""

    def __new__(cls, *args, **kwargs):
        t = active_tracer()
        if t is None:
            return _Generator(*args, **kwargs)
        bit = args[0] if args and not kwargs else None
        seed = _remakeable_seed(bit)
        if seed is False:
            raise UserError("np.random.Generator(bit_generator) inside a traced function takes "
                            "a fresh %s made from an int seed (np.random.PCG64(seed)); write "
                            "np.random.default_rng(seed), or make the generator outside and use "
                            "it as model state%s" % ("/".join(_BIT_GENERATORS),
                                                     where(user_frame(2))))
        name = type(bit).__name__
        made = t.emit("random_bit_generator", (), {"kind": "Generator", "bit": name,
                                                   "seed": seed}, (), np.dtype(object))
        made.node.meta["effect"] = seed is None
        return RandomProxy(t, made, "np.random.Generator(np.random.%s(%r))" % (name, seed))


def _remakeable_seed(bit):
    """The int seed a bit generator was made from (None: fresh entropy), or False when
    ``type(bit)(seed)`` would not give the same stream."""
    if type(bit).__name__ not in _BIT_GENERATORS or type(bit) is not getattr(
            np.random, type(bit).__name__, None):
        return False
    seq = getattr(bit, "seed_seq", None)
    if not isinstance(seq, np.random.SeedSequence) or seq.spawn_key or seq.pool_size != 4 \
            or not isinstance(seq.entropy, int):
        return False
    if type(bit)(seq.entropy).state != bit.state:
        return False                    # already advanced: not the stream of its seed
    return int(seq.entropy)


def _made(t: Tracer, kind: str, seed, args, kwargs) -> "RandomProxy":
    if args or kwargs or (seed is not None and not isinstance(seed, (int, np.integer))):
        raise UserError("np.random.%s(seed) while tracing takes one int seed or None%s"
                        % (kind, where(user_frame(3))))
    node_seed = None if seed is None else int(seed)
    made = t.emit("random_generator", (), {"kind": kind, "seed": node_seed}, (),
                  np.dtype(object))
    made.node.meta["effect"] = node_seed is None     # fresh entropy: never merged or dropped
    return RandomProxy(t, made, "np.random.%s(%r)" % (kind, node_seed))


_ROUTERS: Dict[int, Tuple[Callable, Callable]] = {}


def routers() -> Dict[int, Tuple[Callable, Callable]]:
    """id(NumPy's global random function) -> (it, its router); built once."""
    if not _ROUTERS:
        for name in tuple(DISTRIBUTIONS) + BY_DIMS + ARRAY_DRAWS + UNRECORDED:
            orig = getattr(np.random, name, None)
            if orig is None or not callable(orig) or isinstance(orig, type):
                continue
            _ROUTERS[id(orig)] = (orig, _global_router(name, orig))
        _ROUTERS[id(_default_rng)] = (_default_rng, _maker_router("default_rng", _default_rng))
        _ROUTERS[id(_RandomState)] = (_RandomState, _RoutedRandomState)
        _ROUTERS[id(_Generator)] = (_Generator, _RoutedGenerator)
    return _ROUTERS


# --------------------------------------------------------------------------- frozen values
def _called_from_user_code() -> bool:
    """The caller's caller is the user's own code (not symshape, NumPy or the stdlib)."""
    f = sys._getframe(2)
    return f is not None and user_code(f.f_code)


def _warn_frozen(label: str, orig: Callable) -> Callable:
    def watched(*args, **kwargs):
        if active_tracer() is not None and _called_from_user_code():
            frame = user_frame(2)
            if frame is not None:
                warnings.warn("%s at %s ran once while tracing: its value is frozen into the "
                              "program (every call of the exported or compiled program sees "
                              "the same value); compute it outside and pass it as an argument"
                              % (label, frame.location), FrozenValueWarning, stacklevel=2)
        return orig(*args, **kwargs)
    watched.__name__ = getattr(orig, "__name__", label)
    watched.symshape_routes = orig
    return watched


IMPURE: List[Tuple[Any, str, str]] = [
    (time, "time", "time.time()"), (time, "time_ns", "time.time_ns()"),
    (time, "perf_counter", "time.perf_counter()"), (time, "monotonic", "time.monotonic()"),
    (os, "urandom", "os.urandom()"), (_pyrandom, "random", "random.random()"),
    (_pyrandom, "randint", "random.randint()"), (_pyrandom, "uniform", "random.uniform()"),
    (_pyrandom, "gauss", "random.gauss()"), (_pyrandom, "choice", "random.choice()"),
    (_pyrandom, "shuffle", "random.shuffle()"),
]
_WATCHED: Dict[int, Tuple[Callable, Callable]] = {}


def watched() -> Dict[int, Tuple[Callable, Callable]]:
    """id(impure function) -> (it, a wrapper that warns while tracing); built once."""
    if not _WATCHED:
        for mod, name, label in IMPURE:
            orig = getattr(mod, name)
            _WATCHED[id(orig)] = (orig, _warn_frozen(label, orig))
    return _WATCHED


def impure_modules() -> List[dict]:
    """The namespaces whose impure functions are watched during a trace."""
    return [time.__dict__, os.__dict__, _pyrandom.__dict__]
