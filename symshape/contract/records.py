"""The input check as typed records.

``CheckWriter`` (``symshape.contract.writer``) turns a constraint set into a list of
records, in the order the check runs.  A record holds its inputs as values: symbols and
expressions (``Sym``, ``Expr``, relations), sizes, dtypes, the input's path as the user
calls it, and the *check variables* it reads or binds (local names the check itself
chooses, such as ``_a0`` for an array or ``s0`` for a root symbol).  Nothing downstream
parses code:

* ``render_python.PyRenderer`` writes each record as exactly one line of Python;
* ``render_text.TextRenderer`` writes what a record requires in the user's names;
* ``meaning.CheckMeaning`` gives every record its Z3 meaning, and ``validate`` proves the
  records and their Python text equivalent to the contract's one meaning
  (``meaning.admitted``).

Check records end in a failure call (``fails`` is the ``_rt`` method); the others bind
variables or check a container layout (which raises itself).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

from symshape.algebra.expr import Expr, IntLike, Sym


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Access:
    """How the check reaches an input leaf: a parameter, then container keys
    (``feats['a'][0]`` is ``Access('feats', "['a'][0]")``)."""
    param: str
    keys: str = ""


@dataclass(frozen=True)
class StructCheck:
    """Parameter ``param`` has the list / tuple / dict layout ``layout``: a pytree treespec
    (``treespec``) or the nested dict of the keys the inputs read."""
    param: str
    layout: Any
    treespec: bool


@dataclass(frozen=True)
class Read:
    """``var`` holds the input leaf at ``access`` (an array or an int input)."""
    var: str
    access: Access


@dataclass(frozen=True)
class ReadShape:
    """``names`` hold the sizes of the array in ``var``, one per axis."""
    var: str
    names: Tuple[str, ...]


@dataclass(frozen=True)
class ArrayCheck:
    """The array in ``var`` (input ``path``) has the backend's array type, ``ndim`` axes
    and ``dtype``."""
    path: str
    var: str
    ndim: int
    dtype: Any
    fails = "bad_array"


@dataclass(frozen=True)
class IntCheck:
    """The int input in ``var`` (input ``path``) is a Python int."""
    path: str
    var: str
    fails = "bad_int"


@dataclass(frozen=True)
class IntValue:
    """The int input in ``var`` equals ``value`` (a specialised symbolic int)."""
    path: str
    var: str
    value: int
    fails = "bad_scalar"


@dataclass(frozen=True)
class ScalarCheck:
    """The input at ``access`` is the specialised Python scalar ``value`` (same type)."""
    path: str
    access: Access
    value: Any
    fails = "bad_scalar"


@dataclass(frozen=True)
class ClassCheck:
    """The input at ``access`` is any instance of ``cls`` (a random generator argument)."""
    path: str
    access: Access
    cls: type
    fails = "bad_class"


@dataclass(frozen=True)
class ConfiguredCheck:
    """Parameter ``param`` is the very object ``default`` it was traced with."""
    param: str
    default: Any
    fails = "bad_configured"


@dataclass(frozen=True)
class StaticDim:
    """The size in ``var`` (axis ``axis``) is the static ``size``; ``why``: the program (not
    the spec) pinned a Dim.AUTO axis to it, and where (for the message)."""
    axis: str
    var: str
    size: int
    why: Optional[str] = None
    fails = "bad_static"


@dataclass(frozen=True)
class Bind:
    """``sym`` is read off the size in ``var``: ``var == coeff*sym + rest`` (``rest`` over
    symbols bound before).  With ``coeff != 1`` the remainder lands in ``_r``."""
    sym: Sym
    var: str
    coeff: int
    rest: IntLike


@dataclass(frozen=True)
class CongruenceCheck:
    """The remainder of the preceding ``Bind`` of ``sym`` is 0: the size in ``var`` (axis
    ``axis``) has the form ``coeff*sym + rest``."""
    axis: str
    var: str
    sym: Sym
    coeff: int
    rest: IntLike
    fails = "bad_congruence"


@dataclass(frozen=True)
class RangeCheck:
    """``lo <= sym <= hi`` (an infinite bound is not tested); ``sym`` was bound from axis
    ``axis`` as ``coeff*sym + rest``; ``label`` is its Dim name, if any."""
    sym: Sym
    lo: Any
    hi: Any
    axis: str
    coeff: int
    rest: IntLike
    label: Optional[str]
    fails = "bad_range"


@dataclass(frozen=True)
class RelationCheck:
    """The size in ``var`` (axis ``axis``) equals ``expr`` over bound symbols."""
    axis: str
    var: str
    expr: Expr
    fails = "bad_relation"


@dataclass(frozen=True)
class GuardCheck:
    """The residual guard ``cond`` (a relation over bound symbols) holds; ``note`` says where
    the program made it (`` (from f.py:3 ...)``), or is empty."""
    cond: Any
    note: str = ""
    fails = "bad_guard"


@dataclass(frozen=True)
class SizeCheck:
    """An ``ss.check`` condition on sizes the program computes, with the user's ``text``;
    ``fails`` is ``bad_check`` (the function's own checks) or ``bad_guard`` (a branch's)."""
    cond: Any
    text: str
    fails: str = "bad_check"


@dataclass(frozen=True)
class LenCheck:
    """The container at ``access`` (input ``path``) is a ``kind`` (``"list"`` /
    ``"tuple"``) of ``n`` items (the JIT's layout guard of a variant)."""
    path: str
    access: Access
    kind: str
    n: int
    fails = "bad_len"


@dataclass(frozen=True)
class KeysCheck:
    """The container at ``access`` (input ``path``) is a dict with exactly ``keys``."""
    path: str
    access: Access
    keys: frozenset
    fails = "bad_keys"


@dataclass(frozen=True)
class RebindCheck:
    """The global (``kind == "global"``, in the module dict ``where``) or closure variable
    (``"closure"``, in the cell ``where``) ``name`` that ``reader`` read while tracing is
    still the object ``obj``: rebinding it must recompile.  One identity test; arrays are
    read by reference, so an in-place change needs no recompile."""
    kind: str
    where: Any
    name: str
    obj: Any
    reader: str
    fails = "bad_rebound"

    @property
    def what(self) -> str:
        return "global" if self.kind == "global" else "closure variable"


#: a global that is gone reads as this (never the object traced)
MISSING = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


CHECKS = (LenCheck, KeysCheck, RebindCheck, ArrayCheck, IntCheck, IntValue, ScalarCheck, ClassCheck, ConfiguredCheck, StaticDim,
          CongruenceCheck, RangeCheck, RelationCheck, GuardCheck, SizeCheck)


def is_check(rec) -> bool:
    """Whether ``rec`` ends in a failure call (rather than binding variables)."""
    return isinstance(rec, CHECKS)
