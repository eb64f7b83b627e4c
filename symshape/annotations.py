"""Shape annotations as export specs: jaxtyping's ``Float[np.ndarray, "batch seq 64"]``.

``from_annotations(f)`` reads the public form of each parameter's annotation (the dtype kind,
the array type and the dimension string jaxtyping keeps as ``dim_str``) and turns it into a
``dynamic_shapes`` entry: a name is the ``Dim`` of that name (one Dim per name across all
parameters), an int is static, a linear expression of one name (``n+1``, ``2*n``) is a derived
dim, and ``_``, ``#n``, ``?n``, ``*name`` and ``...`` leave their axes to ``Dim.AUTO``.

The result is an ``AnnotatedShapes`` dict.  ``export`` resolves it against the example inputs
(``resolve``: ranks, variadic axes, dtype kinds) and, after tracing, proves the return
annotation for every admitted size (``check_returns``): a mismatch is a
``ConstraintViolationError`` naming the return annotation, the symbolic shape found, and the
annotation that would hold.  This module is engine side: it never imports the tracer.
"""
from __future__ import annotations

import ast
import inspect
import typing
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .constraints import Fix
from .dims import AUTO, DerivedDim, Dim
from .errors import ConstraintViolationError, UserError
from .expr import Expr, IntLike, Sym, format_expr, sub
from . import expr as E
from . import relations as R

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


def _parse_elem(elem: str, where: str) -> AxisAnn:
    text = elem
    if elem == "...":
        return AxisAnn(text, "variadic")
    broadcast = variadic = anonymous = treepath = False
    while elem:
        c = elem[0]
        if c == "#" and not broadcast:
            broadcast, elem = True, elem[1:]
        elif c == "*" and not variadic:
            variadic, elem = True, elem[1:]
        elif c == "_" and not anonymous:
            anonymous, elem = True, elem[1:]
        elif c == "?" and not treepath:
            treepath, elem = True, elem[1:]
        elif elem.count("=") == 1:          # "rows=3" is an alternative spelling of "3"
            elem = elem.split("=")[1]
        else:
            break
    if variadic:
        return AxisAnn(text, "variadic", name=elem or None)
    if anonymous or treepath:
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
    try:
        tree = ast.parse(elem, mode="eval")
    except SyntaxError:
        raise UserError("%s: cannot read the axis %r; an axis is a name, an int, an "
                        "expression such as n+1 or 2*n (no spaces inside), _, *name or ..."
                        % (where, text)) from None
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES) or (
                isinstance(node, ast.Call) and not (
                    isinstance(node.func, ast.Name) and node.func.id in _CALLS
                    and not node.keywords)) or (
                isinstance(node, ast.Constant) and (
                    type(node.value) is not int or node.value < 0)):
            raise UserError("%s: the axis %r is not a size expression symshape can read; "
                            "use +, -, *, //, %%, min(), max() over names and ints"
                            % (where, text))
        if isinstance(node, ast.Name) and node.id not in _CALLS:
            names.append(node.id)
    return AxisAnn(text, "any" if broadcast else "expr", tree=tree.body,
                   names=tuple(dict.fromkeys(names)), broadcast=broadcast)


def _eval_tree(tree: ast.expr, env: Dict[str, Any]):
    """Evaluate a parsed axis expression with names bound to Dims, ints or size Exprs."""
    t = type(tree)
    if t is ast.Constant:
        return tree.value
    if t is ast.Name:
        return env[tree.id]
    if t is ast.UnaryOp:
        v = _eval_tree(tree.operand, env)
        return -v if type(tree.op) is ast.USub else v
    if t is ast.Call:
        args = [_eval_tree(a, env) for a in tree.args]
        return (E.smin if tree.func.id == "min" else E.smax)(*args)
    a, b = _eval_tree(tree.left, env), _eval_tree(tree.right, env)
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
    if origin is typing.Union or type(hint).__name__ == "UnionType":
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


def _target(f):
    """The function whose annotations describe a call of ``f`` (a method's or a callable
    object's ``__call__``)."""
    if inspect.isfunction(f) or inspect.ismethod(f) or hasattr(f, "__wrapped__"):
        return f
    call = getattr(type(f), "__call__", None)
    if call is not None and not inspect.isbuiltin(call) and not isinstance(f, type):
        return call
    return f


def _hints(f, name: str) -> Dict[str, Any]:
    target = _target(f)
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
            d = _eval_tree(a.tree, {n: _dim(n, dims) for n in a.names})
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


# --------------------------------------------------------------------------- returns
class ReturnAnnotationFix(Fix):
    """``-> Float[np.ndarray, "batch 2*seq"]``: the return annotation that holds."""

    def __init__(self, function: str, text: str, returns: Tuple[ArrayAnn, ...]) -> None:
        self.function = function
        self.returns = returns
        self.line = "def %s(...) -> %s" % (function.rsplit(".", 1)[-1], text)

    def apply(self, spec):
        if isinstance(spec, AnnotatedShapes):
            fixed = AnnotatedShapes(spec.function)
            fixed.update(spec)
            fixed.annotations, fixed.dims, fixed.notes = spec.annotations, spec.dims, \
                spec.notes
            fixed.returns, fixed.returns_tuple = self.returns, spec.returns_tuple
            return fixed
        return spec


_KINDS = {"f": "Float", "i": "Int", "u": "UInt", "b": "Bool", "c": "Complex"}


class OutputInfo(typing.NamedTuple):
    """What tracing found for one returned value: its shape (ints and size Exprs, already
    simplified) and dtype, or ``shape=None`` for a value that is not an array."""
    shape: Optional[tuple]
    dtype: Any


def check_returns(spec, env, outputs: Sequence[OutputInfo],
                  input_shapes: Dict[str, tuple]) -> None:
    """Prove the return annotation of an ``AnnotatedShapes`` spec for every admitted size.

    ``outputs`` are the flattened returned values; ``input_shapes`` maps each annotated
    parameter to its symbolic input shape.  Raises ``ConstraintViolationError`` naming the
    annotation, the shape found (in the user's names) and the annotation that holds."""
    if not isinstance(spec, AnnotatedShapes) or not spec.returns:
        return
    returns = spec.returns
    if len(outputs) != len(returns):
        raise ConstraintViolationError(["the return annotation of %s describes %d value(s), "
                                        "but it returns %d" % (spec.function, len(returns),
                                                               len(outputs))])
    names = _bound_names(spec, env, input_shapes)
    namer = _namer(env, names)
    violations: List[str] = []
    fixed: List[Optional[ArrayAnn]] = []
    fix_ok = True
    for i, (ann, out) in enumerate(zip(returns, outputs)):
        if ann is None:
            fixed.append(None)
            continue
        label = "the return annotation of %s%s, %s," % (
            spec.function, " (item %d)" % i if spec.returns_tuple else "", ann.text())
        if out.shape is None:
            violations.append("%s describes an array, but %s returns a %s there"
                              % (label, spec.function, type(out.dtype).__name__))
            fixed.append(ann)
            fix_ok = False
            continue
        problems, text = _check_one(ann, out, env, names, namer)
        if problems:
            shape_text = "(%s)" % ", ".join(namer(s) for s in out.shape) + \
                ("," if len(out.shape) == 1 else "")
            violations.append("%s does not hold: %s returns %s of shape %s; %s" % (
                label, spec.function, _dtype_text(out.dtype), shape_text, "; ".join(problems)))
            kind = ann.kind
            if ann.dtypes is not None and str(out.dtype) not in ann.dtypes:
                kind = _KINDS.get(getattr(out.dtype, "kind", ""), "Shaped")
                ann = ann._replace(kind=kind, dtypes=None)
            fixed.append(ann._replace(dim_str=text, axes=parse_dim_str(text, label)))
        else:
            fixed.append(ann)
    if not violations:
        return
    fixes, notes = [], []
    if fix_ok:
        text = ", ".join(a.text() if a is not None else "Any" for a in fixed)
        if spec.returns_tuple:
            text = "tuple[%s]" % text
        fixes.append(ReturnAnnotationFix(spec.function, text, tuple(fixed)))
        if any(a is not None and "_" in a.dim_str.split() for a in fixed):
            notes.append("An axis written `_` in the suggested annotation has a size that a "
                         "jaxtyping annotation cannot express in the parameters' names.")
    else:
        notes.append("No annotation can describe what %s returns; change the function or "
                     "the return annotation by hand." % spec.function)
    raise ConstraintViolationError(violations, fixes, notes)


def _dtype_text(dt) -> str:
    return "a %s array" % dt if dt is not None else "an array"


def _bound_names(spec: AnnotatedShapes, env, input_shapes) -> Dict[str, Any]:
    """Name -> size Expr (or a tuple of them for a variadic ``*name``), from the inputs."""
    names: Dict[str, Any] = {}
    for pname, ann in spec.annotations.items():
        shape = input_shapes.get(pname)
        if shape is None:
            continue
        v = ann.variadic
        n_var = len(shape) - (len(ann.axes) - 1) if v is not None else 0
        pos = 0
        for a in ann.axes:
            if a.kind == "variadic":
                if a.name:
                    names.setdefault("*" + a.name, tuple(shape[pos:pos + n_var]))
                pos += n_var
                continue
            if a.kind == "name":
                names.setdefault(a.name, shape[pos])
            pos += 1
    # a name used only inside an expression (x: "n+1") is its Dim's symbol
    for s, info in env.infos.items():
        if info.kind == "named" and info.dim is not None:
            names.setdefault(info.dim.name, env.simplify(s.expr))
    return names


def _namer(env, names: Dict[str, Any]):
    """Format a size in the annotation's names where a name stands for exactly one symbol
    (``2*seq``), else in input terms (``x.shape[0]``)."""
    by_sym: Dict[Sym, str] = {}
    for n, e in names.items():
        if not n.startswith("*") and type(e) is Expr and len(e.terms) == 1 \
                and e.const == 0 and e.terms[0][1] == 1 and len(e.terms[0][0]) == 1 \
                and type(e.terms[0][0][0]) is Sym:
            by_sym.setdefault(e.terms[0][0][0], n)

    def name(s: Sym) -> str:
        return by_sym.get(s) or env.user_label(s)

    def fmt(x: IntLike) -> str:
        return str(x) if type(x) is int else format_expr(env.simplify(x), name)

    fmt.by_sym = by_sym
    return fmt


def _equal(env, a: IntLike, b: IntLike) -> bool:
    d = env.simplify(sub(a, b))
    if type(d) is int:
        return d == 0
    return env.decide(R.make(R.EQ, d)) is True


def _check_one(ann: ArrayAnn, out: OutputInfo, env, names: Dict[str, Any], namer):
    """(what does not hold, the dimension string that holds)."""
    shape = tuple(out.shape)
    problems: List[str] = []
    if ann.dtypes is not None and str(out.dtype) not in ann.dtypes:
        problems.append("its dtype %s is not %s" % (out.dtype, ann.kind))
    v = ann.variadic
    fixed_axes = [a for a in ann.axes if a.kind != "variadic"]
    if (v is None and len(shape) != len(ann.axes)) or len(shape) < len(fixed_axes):
        problems.append("the annotation has %d axes, the result %d" % (len(fixed_axes),
                                                                        len(shape)))
        return problems, _dim_text(shape, namer)
    n_var = len(shape) - len(fixed_axes)
    local = dict(names)
    pos = 0
    pending = []
    for a in ann.axes:
        if a.kind == "variadic":
            got = shape[pos:pos + n_var]
            key = "*" + a.name if a.name else None
            if key is not None and key in local:
                want = local[key]
                if len(want) != len(got) or not all(_equal(env, x, y)
                                                    for x, y in zip(got, want)):
                    problems.append("*%s is (%s) in the inputs, but the result has (%s) there"
                                    % (a.name, ", ".join(namer(x) for x in want),
                                       ", ".join(namer(x) for x in got)))
            elif key is not None:
                local[key] = got
            pos += n_var
            continue
        pending.append((pos, a))
        if a.kind == "name" and a.name not in local:
            local[a.name] = shape[pos]       # first use of a name only the result has
        pos += 1
    for i, a in pending:
        got = shape[i]
        if a.kind == "any":
            continue
        if a.kind == "int":
            want = a.value
        elif a.kind == "name":
            want = local[a.name]
        elif all(n in local and not isinstance(local[n], tuple) for n in a.names):
            want = _eval_tree(a.tree, {n: local[n] for n in a.names})
        else:
            continue                          # names the inputs never bind: nothing to prove
        if a.broadcast and _equal(env, got, 1):
            continue
        if not _equal(env, got, want):
            problems.append("axis %d is %s, annotated %s" % (i, namer(got), a.text) + (
                "" if a.kind == "int" or namer(want) == a.text else " (= %s)" % namer(want)))
    if not problems:
        return [], ann.dim_str
    return problems, _fixed_text(ann, shape, env, local, namer)


def _dim_text(shape, namer) -> str:
    return " ".join(_axis_text(s, namer) for s in shape)


def _axis_text(s: IntLike, namer) -> str:
    """An axis as a jaxtyping element: an int, a name, an expression without spaces, or
    ``_`` when the size involves an axis no annotation names."""
    if type(s) is int:
        return str(s)
    if any(sym not in namer.by_sym for sym in s.free_symbols):
        return "_"
    return namer(s).replace(" ", "")


def _fixed_text(ann: ArrayAnn, shape: tuple, env, local, namer) -> str:
    """The annotation's own elements where they hold, the found size where they do not."""
    out = []
    v = ann.variadic
    n_var = len(shape) - (len(ann.axes) - (1 if v is not None else 0))
    pos = 0
    for a in ann.axes:
        if a.kind == "variadic":
            key = "*" + a.name if a.name else None
            got = shape[pos:pos + n_var]
            want = local.get(key) if key else None
            if want is None or (len(want) == len(got) and all(
                    _equal(env, x, y) for x, y in zip(got, want))):
                out.append(a.text)
            else:
                out.extend(_axis_text(s, namer) for s in got)
            pos += n_var
            continue
        got = shape[pos]
        keep = a.kind == "any"
        if a.kind == "int":
            keep = _equal(env, got, a.value)
        elif a.kind == "name":
            keep = _equal(env, got, local[a.name])
        elif a.kind == "expr":
            if all(n in local and not isinstance(local[n], tuple) for n in a.names):
                keep = _equal(env, got, _eval_tree(a.tree, {n: local[n] for n in a.names}))
            else:
                keep = True
        out.append(a.text if keep else _axis_text(got, namer))
        pos += 1
    return " ".join(out)


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
        target = _target(fn)
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
    from .spec import bind_inputs
    _, inputs = bind_inputs(f, tuple(args), dict(kwargs or {}))
    return resolve(dynamic_shapes, inputs)


def annotation_notes(spec, fixes: Sequence[Fix]) -> List[str]:
    """How each suggested fix reads in the annotations a spec was read from: a relation or
    a static size is a new axis text, a bound is something no annotation can say."""
    if not isinstance(spec, AnnotatedShapes):
        return []
    from .constraints import SetDim, SetEntry
    from .dims import format_linear
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


# --------------------------------------------------------------------------- --fix
def fix_annotations(plan, decl, fixes: Sequence[Fix]) -> bool:
    """``symshape check --fix`` for an export whose spec is read from annotations: rewrite
    the annotation strings in the function's source (a wrong return annotation; a relation
    or a static size on a parameter's axis).  A bound has no spelling in an annotation: it is
    reported as not applied, saying so.  Returns False when the spec is not from annotations
    (the ordinary fixer handles it)."""
    if getattr(decl, "dynamic_shapes", None) is not None or getattr(decl, "fn", None) is None:
        return False
    try:
        spec = spec_for(decl.fn, None)
    except UserError:
        return False
    if not isinstance(spec, AnnotatedShapes):
        return False
    from .constraints import DefineDim, SetDim
    try:
        patch, strings = _annotation_strings(plan, decl.fn)
    except (OSError, TypeError, SyntaxError, ValueError) as e:
        for fix in fixes:
            plan.skipped.append((decl.name, str(fix), "cannot read the source of %s: %s"
                                 % (spec.function, e)))
        return True
    defined = {f.dim.name for f in fixes if isinstance(f, DefineDim)}
    for fix in fixes:
        if isinstance(fix, DefineDim):
            continue
        if isinstance(fix, ReturnAnnotationFix):
            reason = _rewrite_returns(patch, strings, spec, fix)
        elif isinstance(fix, SetDim) and (fix.ref is not None or type(fix.value) is int) \
                and fix.ref not in defined:
            from .dims import format_linear
            new = str(fix.value) if fix.ref is None else \
                format_linear(fix.ref, fix.coeff, fix.offset).replace(" ", "")
            reason = _rename_axis(patch, strings, fix.name, new)
        elif isinstance(fix, SetDim) and isinstance(fix.value, Dim):
            reason = ("a bound cannot be written in a jaxtyping annotation: pass "
                      "dims={%r: %r} to ss.from_annotations, or declare dynamic_shapes"
                      % (fix.name, fix.value))
        else:
            reason = "this fix cannot be written in a jaxtyping annotation; declare " \
                     "dynamic_shapes for this export"
        if reason:
            plan.skipped.append((decl.name, str(fix), reason))
        else:
            plan.applied.append((decl.name, str(fix)))
    return True


class _Literal(typing.NamedTuple):
    where: str          # a parameter name, or "return"
    start: int          # character offsets of the string literal in the file
    end: int
    value: str


def _annotation_strings(plan, fn):
    """The file patch of ``fn``'s source file and the string literals of its annotations."""
    target = inspect.unwrap(_target(fn))
    target = getattr(target, "__func__", target)
    path = inspect.getsourcefile(target)
    patch = plan.patch(path)
    source = patch.old
    code = target.__code__
    tree = ast.parse(source)
    node = None
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == code.co_name \
                and (n.lineno == code.co_firstlineno or any(
                    d.lineno == code.co_firstlineno for d in n.decorator_list)):
            node = n
            break
    if node is None:
        raise ValueError("the definition of %s was not found" % code.co_name)
    starts = [0]
    for line in source.splitlines(True):
        starts.append(starts[-1] + len(line))
    lines = source.splitlines(True)

    def offset(lineno: int, col: int) -> int:
        # ast columns count UTF-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col]
                                        .decode("utf-8", "replace"))

    out: List[_Literal] = []
    a = node.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs:
        if arg.annotation is not None:
            out += _literals(arg.annotation, arg.arg, offset)
    if node.returns is not None:
        out += _literals(node.returns, "return", offset)
    return patch, out


def _literals(ann: ast.expr, where: str, offset) -> List[_Literal]:
    return [_Literal(where, offset(n.lineno, n.col_offset), offset(n.end_lineno, n.end_col_offset),
                     n.value)
            for n in ast.walk(ann) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _replace(patch, lit: _Literal, new_value: str) -> bool:
    token = patch.old[lit.start:lit.end]
    i = token.find(lit.value)
    if i < 0 or not lit.value:
        return False
    return patch.add(lit.start, lit.end, token[:i] + new_value + token[i + len(lit.value):])


def _rewrite_returns(patch, strings: List[_Literal], spec: AnnotatedShapes,
                     fix: "ReturnAnnotationFix") -> Optional[str]:
    found = [s for s in strings if s.where == "return"]
    old = [a for a in (spec.returns or ()) if a is not None]
    new = [a for a in fix.returns if a is not None]
    done = False
    for o, n in zip(old, new):
        if o.dim_str == n.dim_str:
            continue
        lit = next((s for s in found if s.value == o.dim_str), None)
        if lit is None or not _replace(patch, lit, n.dim_str):
            return "the return annotation's string %r was not found in the source" % o.dim_str
        done = True
    if any(o.kind != n.kind for o, n in zip(old, new)):
        return "the dtype kind of the return annotation must change too; edit it by hand"
    return None if done else "nothing to rewrite"


def _rename_axis(patch, strings: List[_Literal], name: str, new: str) -> Optional[str]:
    """Write ``new`` for every axis spelled exactly ``name`` in the annotation strings."""
    changed = False
    for lit in strings:
        elems = lit.value.split()
        if name not in elems:
            continue
        text = " ".join(new if e == name else e for e in elems)
        if _replace(patch, lit, text):
            changed = True
    return None if changed else "no annotation axis is spelled %r" % name


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
