"""The return annotation of an annotated export, proven for every admitted size.

After tracing, each returned array's symbolic shape is compared with its jaxtyping annotation:
a name bound by the parameters must be the same size expression (``_equal`` asks the shape
environment, so "equal at the example" is not enough), an int must be that int, ``*name`` must
repeat the parameters' axes.  A mismatch is a ``ConstraintViolationError`` naming the
annotation and the shape found in the annotation's names (``(batch, 2*seq)``), with the
annotation that holds as its fix (``ReturnAnnotationFix``).
"""
from __future__ import annotations

import typing
from typing import Any, Dict, List, Optional, Sequence, Tuple

from symshape.algebra import relations as R
from symshape.specs.annotations import AnnotatedShapes, ArrayAnn, eval_axis, parse_dim_str
from symshape.contract.fixes import Fix
from symshape.errors import ConstraintViolationError
from symshape.algebra.expr import Expr, IntLike, Sym, format_expr, sub


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
            shape_text = "(%s%s)" % (", ".join(namer(s) for s in out.shape),
                                     "," if len(out.shape) == 1 else "")
            violations.append("%s does not hold: %s returns %s of shape %s%s; %s" % (
                label, spec.function, _dtype_text(out.dtype), shape_text,
                _legend(out.shape, env, namer), "; ".join(problems)))
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


def _legend(shape, env, namer) -> str:
    """`` (n is x.shape[0])``: the input axis each annotation name in ``shape`` stands for,
    so the shape found reads in the inputs' terms too."""
    syms = sorted({s for d in shape if type(d) is not int for s in d.free_symbols
                   if s in namer.by_sym}, key=lambda s: namer.by_sym[s])
    parts = ["%s is %s" % (namer.by_sym[s], env.user_label(s)) for s in syms
             if namer.by_sym[s] != env.user_label(s)]
    return " (%s)" % ", ".join(parts) if parts else ""


def _dtype_text(dt) -> str:
    if dt is None:
        return "an array"
    text = str(dt)
    return "%s %s array" % ("an" if text[:1] in "aeio" else "a", text)   # an int64, a uint8


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
        return str(x) if type(x) is int else format_expr(env.simplify(x), name, py=True)

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
    local = dict(names)
    pending = _bind_axes(ann, shape, len(shape) - len(fixed_axes), env, local, namer,
                         problems)
    for i, a in pending:
        got = shape[i]
        want = _wanted(a, local)
        if want is None:
            continue                          # any size, or names the inputs never bind
        if a.broadcast and _equal(env, got, 1):
            continue
        if not _equal(env, got, want):
            problems.append("axis %d is %s, annotated %s" % (i, namer(got), a.text) + (
                "" if a.kind == "int" or namer(want) == a.text else " (= %s)" % namer(want)))
    if not problems:
        return [], ann.dim_str
    return problems, _fixed_text(ann, shape, env, local, namer)


def _bind_axes(ann: ArrayAnn, shape: tuple, n_var: int, env, local: Dict[str, Any], namer,
               problems: List[str]) -> list:
    """Walk the annotation's axes over the result's shape: a variadic group is checked
    against (or binds) its name in ``local``, a name only the result has is bound to its
    first axis; the fixed axes come back as ``(position, axis)`` to check."""
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
    return pending


def _wanted(a, local: Dict[str, Any]):
    """The size a fixed axis is annotated with, in the bound names; None when it says
    nothing (``_``, or an expression of names the inputs never bind)."""
    if a.kind == "any":
        return None
    if a.kind == "int":
        return a.value
    if a.kind == "name":
        return local[a.name]
    if all(n in local and not isinstance(local[n], tuple) for n in a.names):
        return eval_axis(a.tree, {n: local[n] for n in a.names})
    return None


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
                keep = _equal(env, got, eval_axis(a.tree, {n: local[n] for n in a.names}))
            else:
                keep = True
        out.append(a.text if keep else _axis_text(got, namer))
        pos += 1
    return " ".join(out)
