"""Shape annotations as export specs: jaxtyping's ``Float[np.ndarray, "batch seq 64"]``.

``from_annotations(f)`` reads the public form of each parameter's annotation (the dtype kind,
the array type and the dimension string jaxtyping keeps as ``dim_str``) and turns it into a
``dynamic_shapes`` entry: a name is the ``Dim`` of that name (one Dim per name across all
parameters), an int is static, a linear expression of one name (``n+1``, ``2*n``) is a derived
dim, and ``_``, ``#n``, ``?n``, ``*name`` and ``...`` leave their axes to ``Dim.AUTO``.

The result is an ``AnnotatedShapes`` dict.  ``export`` resolves it against the example inputs
(``resolve``: ranks, variadic axes, dtype kinds) and, after tracing, proves the return
annotation for every admitted size (``annotation_returns``); ``symshape check --fix`` writes
fixes into the annotation strings (``annotation_fixer``).  Engine side: no tracer imports.
"""
from __future__ import annotations

import ast
import inspect
import types
import typing
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from symshape.contract.fixes import Fix, SetDim, SetEntry
from symshape.specs.dims import AUTO, DerivedDim, Dim, format_linear
from symshape.errors import UserError
from symshape.algebra.expr import Expr
from symshape.algebra import expr as E
from symshape.specs.matching import bind_inputs

INSTALL_HINT = 'pip install "symshape[jaxtyping]"'


# --------------------------------------------------------------------------- records
class AxisAnn(typing.NamedTuple):
    """One element of a dimension string, classified.

    ``kind`` is ``"int"`` (``value``), ``"name"`` (``name``), ``"expr"`` (``tree``, an
    ``ast`` expression over ``names``), ``"any"`` (``_``, ``_foo``, ``?n``, ``#n``: one axis
    left to tracing) or ``"variadic"`` (``*name`` / ``...``: any number of axes).
    ``broadcast`` marks ``#``: the axis may also be 1.
    """
    text: str
    kind: str
    name: Optional[str] = None
    value: Optional[int] = None
    tree: Optional[ast.expr] = None
    names: Tuple[str, ...] = ()
    broadcast: bool = False


class ArrayAnn(typing.NamedTuple):
    """A parsed array annotation: its axes, the dtypes it admits (None: any), and its text."""
    axes: Tuple[AxisAnn, ...]
    dtypes: Optional[Tuple[str, ...]]
    kind: str            # the dtype kind as written: Float, Int, Shaped, ...
    array_type: str      # the array type as written: np.ndarray, ...
    dim_str: str

    @property
    def variadic(self) -> Optional[int]:
        for i, a in enumerate(self.axes):
            if a.kind == "variadic":
                return i
        return None

    def text(self, dim_str: Optional[str] = None) -> str:
        return '%s[%s, "%s"]' % (self.kind, self.array_type,
                                 self.dim_str if dim_str is None else dim_str)


_ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Constant, ast.Load,
                  ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.USub, ast.UAdd,
                  ast.Call)
_CALLS = ("min", "max")


def parse_dim_str(dim_str: str, where: str) -> Tuple[AxisAnn, ...]:
    """Classify each whitespace-separated element of a jaxtyping dimension string."""
    if not isinstance(dim_str, str):
        raise UserError("%s: the shape part of the annotation must be a string of axes "
                        "separated by spaces, got %r" % (where, dim_str))
    out: List[AxisAnn] = []
    for elem in dim_str.split():
        out.append(_parse_elem(elem, where))
    if sum(a.kind == "variadic" for a in out) > 1:
        raise UserError('%s: "%s" uses a variadic axis (*name or ...) more than once; an '
                        "annotation may have one" % (where, dim_str))
    return tuple(out)


# the prefix marks of an axis element, each allowed once: "#" broadcast, "*" variadic,
# "_" anonymous, "?" a tree path
_MARKS = {"#": "broadcast", "*": "variadic", "_": "anonymous", "?": "treepath"}


def _strip_marks(elem: str) -> Tuple[str, set]:
    """(the element without its prefix marks and ``name=`` spelling, the marks found)."""
    marks: set = set()
    while elem:
        mark = _MARKS.get(elem[0])
        if mark is not None and mark not in marks:
            marks.add(mark)
            elem = elem[1:]
        elif elem.count("=") == 1:          # "rows=3" is an alternative spelling of "3"
            elem = elem.split("=")[1]
        else:
            break
    return elem, marks


def _is_size_node(node) -> bool:
    """An expression node an axis may hold: arithmetic, names, non-negative ints, and
    ``min`` / ``max`` calls without keywords."""
    if not isinstance(node, _ALLOWED_NODES):
        return False
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in _CALLS and not node.keywords
    if isinstance(node, ast.Constant):
        return type(node.value) is int and node.value >= 0
    return True


def _parse_expr_axis(elem: str, text: str, where: str, broadcast: bool) -> AxisAnn:
    """An axis written as an expression over names (``n+1``, ``2*n``, ``max(a,b)``)."""
    try:
        tree = ast.parse(elem, mode="eval")
    except SyntaxError:
        raise UserError("%s: cannot read the axis %r; an axis is a name, an int, an "
                        "expression such as n+1 or 2*n (no spaces inside), _, *name or ..."
                        % (where, text)) from None
    names = []
    for node in ast.walk(tree):
        if not _is_size_node(node):
            raise UserError("%s: the axis %r is not a size expression symshape can read; "
                            "use +, -, *, //, %%, min(), max() over names and ints"
                            % (where, text))
        if isinstance(node, ast.Name) and node.id not in _CALLS:
            names.append(node.id)
    return AxisAnn(text, "any" if broadcast else "expr", tree=tree.body,
                   names=tuple(dict.fromkeys(names)), broadcast=broadcast)


def _parse_elem(elem: str, where: str) -> AxisAnn:
    text = elem
    if elem == "...":
        return AxisAnn(text, "variadic")
    elem, marks = _strip_marks(elem)
    broadcast = "broadcast" in marks
    if "variadic" in marks:
        return AxisAnn(text, "variadic", name=elem or None)
    if "anonymous" in marks or "treepath" in marks:
        return AxisAnn(text, "any", broadcast=broadcast)
    if elem.isidentifier():
        return AxisAnn(text, "any" if broadcast else "name", name=elem, broadcast=broadcast)
    try:
        value = int(elem)
    except ValueError:
        pass
    else:
        if value < 0:
            raise UserError("%s: axis %r is a negative size" % (where, text))
        return AxisAnn(text, "int", value=value, broadcast=broadcast)
    return _parse_expr_axis(elem, text, where, broadcast)


def eval_axis(tree: ast.expr, env: Dict[str, Any]):
    """Evaluate a parsed axis expression with names bound to Dims, ints or size Exprs."""
    t = type(tree)
    if t is ast.Constant:
        return tree.value
    if t is ast.Name:
        return env[tree.id]
    if t is ast.UnaryOp:
        v = eval_axis(tree.operand, env)
        return -v if type(tree.op) is ast.USub else v
    if t is ast.Call:
        args = [eval_axis(a, env) for a in tree.args]
        return (E.smin if tree.func.id == "min" else E.smax)(*args)
    a, b = eval_axis(tree.left, env), eval_axis(tree.right, env)
    op = type(tree.op)
    if op is ast.Add:
        return a + b
    if op is ast.Sub:
        return a - b
    if op is ast.Mult:
        return a * b
    if op is ast.FloorDiv:
        return E.floordiv(a, b) if isinstance(a, (Expr, int)) else a // b
    return E.mod(a, b) if isinstance(a, (Expr, int)) else a % b


# --------------------------------------------------------------------------- reading hints
def _jaxtyping():
    try:
        import jaxtyping
    except ImportError:
        return None
    return jaxtyping


def _array_anns(hint, jt) -> List[Any]:
    """The jaxtyping array annotations in ``hint`` (itself, or the members of a Union)."""
    if isinstance(hint, type) and issubclass(hint, jt.AbstractArray):
        return [hint]
    origin = typing.get_origin(hint)
    if origin is typing.Union or isinstance(hint, types.UnionType):
        return [a for h in typing.get_args(hint) for a in _array_anns(h, jt)]
    return []


def _type_name(t) -> str:
    if getattr(t, "__module__", "") == "numpy" and getattr(t, "__name__", "") == "ndarray":
        return "np.ndarray"
    return getattr(t, "__qualname__", None) or getattr(t, "__name__", None) or repr(t)


def _read(ann, where: str) -> ArrayAnn:
    """The public form of a jaxtyping array annotation (dtype, array_type, dim_str)."""
    dtypes = getattr(ann, "dtypes", None)
    dtypes = tuple(d for d in dtypes if isinstance(d, str)) \
        if isinstance(dtypes, (list, tuple)) else None
    kind = getattr(getattr(ann, "dtype", None), "__name__", "Shaped")
    return ArrayAnn(parse_dim_str(ann.dim_str, where), dtypes, kind,
                    _type_name(getattr(ann, "array_type", "np.ndarray")), ann.dim_str)


def call_target(f):
    """The function whose annotations describe a call of ``f`` (a method's or a callable
    object's ``__call__``)."""
    if inspect.isfunction(f) or inspect.ismethod(f) or hasattr(f, "__wrapped__"):
        return f
    call = getattr(type(f), "__call__", None)
    if call is not None and not inspect.isbuiltin(call) and not isinstance(f, type):
        return call
    return f


def _hints(f, name: str) -> Dict[str, Any]:
    target = call_target(f)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except NameError as e:
        raise UserError("the annotations of %s cannot be evaluated (%s); import the names "
                        "they use at module level, outside `if TYPE_CHECKING:`"
                        % (name, e)) from None
    except TypeError:
        return {}


# --------------------------------------------------------------------------- the spec
class AnnotatedShapes(dict):
    """``dynamic_shapes`` read from annotations: parameter name -> per-axis spec (a tuple
    of Dims, ints and ``Dim.AUTO``; ``...`` stands for the axes of a variadic ``*name`` or
    ``...``, resolved against the example input by ``export``).  ``.annotations`` holds the
    parsed annotation of each parameter and ``.returns`` that of the return value."""

    def __init__(self, function: str) -> None:
        super().__init__()
        self.function = function
        self.annotations: Dict[str, ArrayAnn] = {}
        self.returns: Optional[Tuple[ArrayAnn, ...]] = None
        self.returns_tuple = False
        self.dims: Dict[str, Dim] = {}
        self.notes: List[str] = []

    def __repr__(self) -> str:
        return "AnnotatedShapes(%s)" % dict.__repr__(self)


def from_annotations(f, *, dims: Optional[Dict[str, Dim]] = None) -> Optional[AnnotatedShapes]:
    """The ``dynamic_shapes`` that the jaxtyping annotations of ``f``'s parameters mean.

    A name is a ``Dim`` of that name (the same name is the same Dim across parameters; pass
    ``dims={"batch": Dim("batch", max=64)}`` to give one bounds), an int is static, ``n+1``
    or ``2*n`` is a derived dim, and ``_``, ``#n``, ``*name`` or ``...`` leave the axes to
    ``Dim.AUTO``.  Parameters without an array annotation are static.  Passed to ``export``,
    the result also checks the example dtypes against the annotations and proves the return
    annotation for every admitted size.  Without jaxtyping installed the annotations are
    ignored with a warning and ``None`` (every axis static) is returned.
    """
    name = getattr(f, "__qualname__", None) or getattr(type(f), "__qualname__", repr(f))
    jt = _jaxtyping()
    if jt is None:
        warnings.warn("jaxtyping is not installed, so the shape annotations of %s are ignored "
                      "and every axis is static; %s" % (name, INSTALL_HINT), stacklevel=2)
        return None
    if not callable(f):
        raise UserError("from_annotations: expected a function, got %s" % type(f).__name__)
    dims = dict(dims or {})
    for k, d in dims.items():
        if not isinstance(d, Dim) or d.name != k:
            raise UserError("from_annotations: dims[%r] must be Dim(%r, ...), got %r"
                            % (k, k, d))
    hints = _hints(f, name)
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    out = AnnotatedShapes(name)
    out.dims = dims
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name not in hints:
            continue
        anns = _array_anns(hints[p.name], jt)
        if not anns:
            continue
        where = "the annotation of %s in %s" % (p.name, name)
        if len({a.dim_str for a in anns}) > 1:
            out.notes.append("%s is a union of shapes (%s); symshape leaves its axes to "
                             "Dim.AUTO" % (where, ", ".join(repr(a.dim_str) for a in anns)))
            continue
        parsed = _read(anns[0], where)
        out.annotations[p.name] = parsed
        out[p.name] = tuple(_axis_spec(a, dims, where, out.notes) for a in parsed.axes)
    if "return" in hints:
        out.returns, out.returns_tuple = _returns(hints["return"], jt, name)
    return out


def _axis_spec(a: AxisAnn, dims: Dict[str, Dim], where: str, notes: List[str]):
    if a.kind == "int":
        return AUTO if a.broadcast else a.value
    if a.kind == "name":
        return _dim(a.name, dims)
    if a.kind == "variadic":
        return Ellipsis
    if a.kind == "expr":
        try:
            d = eval_axis(a.tree, {n: _dim(n, dims) for n in a.names})
        except UserError:
            d = None
        if isinstance(d, (Dim, DerivedDim)):
            return d
        if type(d) is int:
            return d
        notes.append("%s: the axis %r is not a linear expression of one name, which a Dim "
                     "cannot express; symshape leaves it to Dim.AUTO" % (where, a.text))
    return AUTO


def _dim(name: str, dims: Dict[str, Dim]) -> Dim:
    d = dims.get(name)
    if d is None:
        d = dims[name] = Dim(name)
    return d


def _returns(hint, jt, name: str):
    where = "the return annotation of %s" % name
    anns = _array_anns(hint, jt)
    if len(anns) == 1:
        return (_read(anns[0], where),), False
    if typing.get_origin(hint) is tuple:
        members = typing.get_args(hint)
        if members and Ellipsis not in members:
            got = []
            for i, m in enumerate(members):
                a = _array_anns(m, jt)
                got.append(_read(a[0], "%s, item %d" % (where, i)) if len(a) == 1 else None)
            if any(g is not None for g in got):
                return tuple(got), True
    return None, False


# --------------------------------------------------------------------------- resolve
def resolve(dynamic_shapes, inputs: Dict[str, Any]):
    """A plain ``dynamic_shapes`` for these bound example inputs: ranks and dtype kinds are
    checked against the annotations and each ``...`` is expanded to ``Dim.AUTO`` axes.  Any
    other spec is returned unchanged."""
    if not isinstance(dynamic_shapes, AnnotatedShapes):
        return dynamic_shapes
    spec: Dict[str, Any] = {}
    seen: Dict[str, Tuple[int, str]] = {}       # name -> (example size, where it was seen)
    for pname, axes in dynamic_shapes.items():
        if pname not in inputs:
            continue
        ann = dynamic_shapes.annotations.get(pname)
        v = inputs[pname]
        where = "%s (annotated %s in %s)" % (pname, ann.text() if ann else "",
                                            dynamic_shapes.function)
        shape, dtype = getattr(v, "shape", None), getattr(v, "dtype", None)
        if shape is None or dtype is None or not hasattr(v, "__array__"):
            if v is None:
                continue
            raise UserError("%s: the example input is a %s, not an array"
                            % (where, type(v).__name__))
        if ann is not None and ann.dtypes is not None and str(dtype) not in ann.dtypes:
            raise UserError("%s: the example input has dtype %s, which the annotation does "
                            "not admit (%s: %s); pass an example of one of those dtypes or "
                            "change the annotation" % (where, dtype, ann.kind,
                                                       _dtype_names(ann.dtypes)))
        spec[pname] = _expand(tuple(axes), tuple(shape), where)
        _check_sizes(spec[pname], tuple(shape), pname, where, seen)
    return spec


def _check_sizes(axes: tuple, shape: tuple, pname: str, where: str,
                 seen: Dict[str, Tuple[int, str]]) -> None:
    """The example sizes agree with the annotation's ints and with each other where the
    annotations use one name twice."""
    for i, (a, n) in enumerate(zip(axes, shape)):
        axis = "%s.shape[%d]" % (pname, i)
        if type(a) is int and a != n:
            raise UserError("%s: %s is %d in the example input, but the annotation says %d"
                            % (where, axis, n, a))
        if isinstance(a, Dim):
            first = seen.setdefault(a.name, (n, axis))
            if first[0] != n:
                raise UserError("%s: %s is %d in the example input, but %s, also annotated "
                                "%s, is %d; the same name is the same size"
                                % (where, axis, n, first[1], a.name, first[0]))


def _dtype_names(dtypes: Sequence[str]) -> str:
    """The dtypes of an annotation that NumPy has (jaxtyping lists every framework's)."""
    known = []
    for d in dtypes:
        try:
            known.append(str(np.dtype(d)))
        except TypeError:
            continue
    return ", ".join(dict.fromkeys(known or dtypes))


def _expand(axes: tuple, shape: tuple, where: str) -> tuple:
    """The per-axis spec for an example of this shape: ``...`` becomes Dim.AUTO axes."""
    fixed = [a for a in axes if a is not Ellipsis]
    if Ellipsis in axes:
        if len(shape) < len(fixed):
            raise UserError("%s: the example input has shape %s, fewer than the %d axes the "
                            "annotation names" % (where, shape, len(fixed)))
        i = axes.index(Ellipsis)
        return tuple(axes[:i]) + (AUTO,) * (len(shape) - len(fixed)) + tuple(axes[i + 1:])
    if len(shape) != len(axes):
        raise UserError("%s: the example input has shape %s (%d axes), but the annotation "
                        "has %d axes" % (where, shape, len(shape), len(axes)))
    return axes

# --------------------------------------------------------------------------- CLI
def spec_for(fn, dynamic_shapes):
    """The spec ``symshape check`` exports with: the declared one, else the one the
    function's shape annotations give (None when it has none)."""
    if dynamic_shapes is not None or fn is None:
        return dynamic_shapes
    jt = _jaxtyping()
    if jt is None:
        return None
    try:
        target = call_target(fn)
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:       # unreadable hints: the export itself reports what is wrong
        hints = {}
    if not any(_array_anns(h, jt) for h in hints.values()):
        return None
    return from_annotations(fn)


def resolve_call(f, args, kwargs, dynamic_shapes):
    """``resolve`` for a call of ``f`` with these example inputs (export's entry point)."""
    if not isinstance(dynamic_shapes, AnnotatedShapes) or not isinstance(args, (tuple, list)):
        return dynamic_shapes
    _, inputs = bind_inputs(f, tuple(args), dict(kwargs or {}))
    return resolve(dynamic_shapes, inputs)


def annotation_notes(spec, fixes: Sequence[Fix]) -> List[str]:
    """How each suggested fix reads in the annotations a spec was read from: a relation or
    a static size is a new axis text, a bound is something no annotation can say."""
    if not isinstance(spec, AnnotatedShapes):
        return []
    lines = []
    for fix in fixes:
        if isinstance(fix, SetDim) and fix.ref is not None:
            lines.append("write %s where the annotations of %s say %s" % (
                format_linear(fix.ref, fix.coeff, fix.offset).replace(" ", ""),
                spec.function, fix.name))
        elif isinstance(fix, SetDim) and type(fix.value) is int:
            lines.append("write %d where the annotations of %s say %s"
                         % (fix.value, spec.function, fix.name))
        elif isinstance(fix, SetDim) and isinstance(fix.value, Dim):
            lines.append("a bound (%s) cannot be written in a jaxtyping annotation: pass "
                         "ss.from_annotations(%s, dims={%r: %r})" % (
                             fix, spec.function.rsplit(".", 1)[-1], fix.name, fix.value))
        elif isinstance(fix, SetEntry) and len(fix.entry) == 2:
            lines.append("write %r for axis %s of %s in the annotations of %s"
                         % (fix.value, fix.entry[1], fix.entry[0], spec.function))
    if not lines:
        return []
    return ["The spec was read from shape annotations; in them:"] + \
        ["  " + line for line in lines]

# --------------------------------------------------------------------------- runtime checks
def _is_runtime_checker(fn) -> bool:
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    name = code.co_filename.replace("\\", "/")
    return name.endswith("jaxtyping/_decorator.py") or name.startswith("<@beartype(")


def without_runtime_checks(f):
    """``f`` without the runtime shape checker of ``@jaxtyped(typechecker=...)`` (or a
    ``@beartype`` wrapper): the checker would reject the traced arrays export passes, while
    export proves the annotations for every admitted size instead.  Other callables are
    returned unchanged."""
    import types
    if inspect.ismethod(f):
        inner = without_runtime_checks(f.__func__)
        return f if inner is f.__func__ else types.MethodType(inner, f.__self__)
    g = f
    for _ in range(8):
        wrapped = getattr(g, "__wrapped__", None)
        if wrapped is None or not _is_runtime_checker(g):
            break
        g = wrapped
    return g
