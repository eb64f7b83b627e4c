"""Spec versus findings: violations, each dim's feasible set, and suggested fixes.

What tracing found about a named Dim ``d`` (symbol ``s``) is read off the environment:
  * ``s -> c``                : specialised            -> ``d = c``
  * ``s -> a*t + b``, t a Dim : an undeclared relation -> ``d = a*t + b`` (later = earlier)
  * ``s -> k*q + r``          : divisibility           -> ``_d = Dim('_d', ...)``, ``d = k*_d + r``
  * range narrower than declared                     -> ``d = Dim('d', min=.., max=..)``
  * residual guards on ``s`` (``s != 16``, ``nx + ny >= 11``): no Dim can express them; the
    violation says so, and the fix falls back to ``d = Dim.AUTO``.
An unnamed ``Dim.DYNAMIC`` axis may relate and narrow freely but not specialise.
Fixes are objects (``symshape.contract.fixes``): ``str(fix)`` is the copy-pasteable line,
``fix.apply(spec)`` returns the fixed spec.  ``export`` re-verifies the fixes before it
shows them.
"""
from __future__ import annotations

import itertools
from typing import Dict, List, Optional, Tuple

from symshape.algebra import relations as R
from symshape.contract.fixes import Alternative, DefineDim, Fix, MarkAxis, SetDim, SetEntry
from symshape.contract.guard_text import readable_minmax
from symshape.specs.dims import AUTO, STATIC, Dim, format_linear
from symshape.reasoning.env import ShapeEnv
from symshape.errors import where
from symshape.algebra.expr import Expr, IntLike, Sym, format_expr
from symshape.algebra.infinity import is_inf
from symshape.reasoning.projection import extreme
from symshape.algebra.ranges import ValueRange
from symshape.specs.matching import InputLeaf
from symshape.rules import rule


# --------------------------------------------------------------------------- analysis
class Report:
    def __init__(self) -> None:
        self.violations: List[str] = []
        self.fixes: List[Fix] = []
        self.notes: List[str] = []
        self.alternatives: List[Alternative] = []

    def add_fix(self, fix: Fix) -> None:
        if fix not in self.fixes:
            self.fixes.append(fix)


class Namer:
    """User-facing names: Dim names for named dims, ``x.shape[1]`` for the others."""

    def __init__(self, env: ShapeEnv) -> None:
        self.env = env

    def __call__(self, s: Sym) -> str:
        info = self.env.infos.get(s)
        if info is None:
            return s.name
        if info.kind == "named" and info.dim is not None:
            return info.dim.name
        return info.source

    def expr(self, e: IntLike) -> str:
        return format_expr(e, self, py=True)

    def cond(self, c) -> str:
        return readable_minmax(_readable(c), self.env.ranges).format(self, py=True)


@rule("contract.readable_guard")
def _readable(c):
    """The same condition as users would write it: ``max(0, X) == 0`` (a slice or pad
    that must not run past an end) reads ``X <= 0`` (``n + 2 <= d``)."""
    if isinstance(c, R.Rel) and c.op == R.EQ and type(c.expr) is Expr and \
            c.expr.const == 0 and len(c.expr.terms) == 1:
        (term, coeff), = c.expr.terms
        atom = term[0] if len(term) == 1 else None
        if atom is not None and type(atom) is not Sym and atom.kind == "Max" and \
                len(atom.args) == 2 and 0 in atom.args:
            other = atom.args[1] if atom.args[0] == 0 else atom.args[0]
            le = R.le(other, 0)
            return le if not isinstance(le, bool) else c
    return c


def _why(env: ShapeEnv, s: Sym, namer: Namer) -> str:
    guards = env.why.get(s) or []
    if not guards:
        return ""
    g = guards[-1]
    text = " (guard `%s`%s)" % (namer.cond(g.cond), where(g.frame))
    if g.reason:
        # a conversion specialized it: say which one and the spelling that keeps it symbolic
        text += ": %s" % g.reason
    return text


def specialized_axes(env: ShapeEnv, leaves: List[InputLeaf],
                     axis_syms: Dict[Tuple[int, int], Sym]) -> Dict[str, str]:
    """For each ``Dim.AUTO`` axis the program pinned to one value: its name -> why, for the
    run-time message (the axis was left to tracing, so "the spec made it static" would be
    wrong): the guard and line that specialized it, and how to keep it symbolic."""
    namer = Namer(env)
    out: Dict[str, str] = {}
    for (li, ax), s in axis_syms.items():
        leaf = leaves[li]
        if ax is None or leaf.axes[ax].kind != "auto":
            continue
        v = env.simplify(s.expr)
        if type(v) is not int:
            continue
        guards = env.why.get(s) or []
        if not guards:
            out[leaf.axis_name(ax)] = ("the program specialized this axis to %d: it accepts "
                                       "no other size" % v)
            continue
        g = guards[-1]
        text = "the program specialized this axis to %d: `%s`%s" % (
            v, namer.cond(g.cond), where(g.frame))
        # a conversion (int(), range()) says the spelling that keeps the size symbolic;
        # any other guard is what that line needs, so other sizes need that line changed
        out[leaf.axis_name(ax)] = text + ("; %s" % g.reason if g.reason else
                                          "; other sizes need that line to work for them")
    return out


def analyze(env: ShapeEnv, leaves: List[InputLeaf], axis_syms: Dict[Tuple[int, int], Sym]
            ) -> Report:
    """Compare the spec's promises with the environment after tracing."""
    rep = Report()
    namer = Namer(env)
    named: Dict[str, Sym] = {}
    for s, info in env.infos.items():
        if info.kind == "named" and info.dim is not None:
            named.setdefault(info.dim.name, s)
    static_axes: Dict[int, List[str]] = {}
    for l in leaves:
        for i, d in enumerate(l.axes or ()):
            if d.kind == "static" and d.entry is not None:
                static_axes.setdefault(d.value, []).append(l.axis_name(i))
    for name, s in sorted(named.items(), key=lambda kv: kv[1].index):
        _named_dim(env, rep, namer, name, s, named, static_axes)
        _mark_instead(env, rep, leaves, name, s)
    _dynamic_axes(env, rep, namer, leaves, axis_syms, static_axes)
    # residual guards that involve named dims; a relation among two or more named dims is
    # settled per set of dims (all its guards at once) by ranges that imply it, when they
    # exist
    relations: Dict[Tuple[Sym, ...], list] = {}
    for f in env.facts:
        dims = _named_dims(env, f)
        if dims is not None:
            relations.setdefault(dims, []).append(f)
    for dims, group in relations.items():
        _relation(env, rep, namer, dims, group)
    for f in env.facts:
        if _named_dims(env, f) is None:
            _other_fact(env, rep, namer, f)
    return rep


def _dynamic_axes(env: ShapeEnv, rep: Report, namer, leaves: List[InputLeaf],
                  axis_syms: Dict[Tuple[int, int], Sym], static_axes: Dict[int, List[str]]
                  ) -> None:
    """Unnamed Dim.DYNAMIC axes may not specialise: one that did is a violation, with the
    fix of marking it static."""
    for (li, ax), s in axis_syms.items():
        leaf = leaves[li]
        decl = leaf.axes[ax] if ax is not None else leaf.scalar_decl
        if decl.kind != "dynamic":
            continue
        v = env.simplify(s.expr)
        if type(v) is int:
            msg = "%s was marked Dim.DYNAMIC, but the program specialized it to %d%s" % (
                leaf.axis_name(ax) if ax is not None else leaf.path, v, _why(env, s, namer))
            msg += _conflicts(static_axes, v)
            rep.violations.append(msg)
            rep.add_fix(SetEntry(decl.entry, STATIC))


def _other_fact(env: ShapeEnv, rep: Report, namer, f) -> None:
    """A guard that is not a relation among named dims only: a violation when it asks
    something of a named Dim that no Dim range can express."""
    syms = f.free_symbols
    if any(t.unbacked for t in syms):
        # a data-dependent size's facts (nonzero count <= d) hold by construction or are
        # checked where the size is computed: they ask nothing of the spec
        return
    dims_in = sorted({_dim_name(env, t) for t in syms} - {None})
    if not dims_in:
        return
    if any(_dim_name(env, t) is None for t in syms):
        # a relation with an axis left to tracing (Dim.AUTO): each named Dim keeps its
        # whole range (the ranges are exact projections, and any narrowing is reported
        # above), so the relation binds the automatic axis and is one of ep.guards
        return
    g = env.fact_guards.get(f)
    at = where(g.frame) if g is not None else ""
    single = len(syms) == 1 and isinstance(f, R.Rel) and f.op == R.NE
    if single:
        (t,), = [tuple(syms)]
        lin = f.expr.linear_coeffs() or {}
        excluded = -f.expr.const // lin.get(t, 1) if t in lin else None
        vr = env.ranges[t]
        rep.violations.append(
            "%s must not be %s (guard `%s`%s); its feasible set [%s, %s] minus {%s} has a "
            "hole that no Dim range can express: restrict the range to one side of %s, or "
            "use Dim.AUTO" % (dims_in[0], excluded, namer.cond(f), at, vr.lower, vr.upper,
                              excluded, excluded))
    elif len(dims_in) == 1:
        rep.violations.append(
            "the program requires `%s`%s, a condition on %s that no Dim range or derived "
            "Dim can express: use Dim.AUTO for %s, or change the code"
            % (namer.cond(f), at, dims_in[0], dims_in[0]))
    else:
        rep.violations.append(
            "the program requires `%s`%s, a relation between %s that no Dim can express: "
            "use Dim.AUTO for %s, or change the code" % (
                namer.cond(f), at, " and ".join(dims_in), " and ".join(dims_in)))
    kept = [d for d in dims_in if not _auto_fix(env, rep, d)]
    if kept:
        rep.violations[-1] += (
            " (no Dim.AUTO fix is suggested for %s: it would drop the bounds the spec "
            "declares)" % " and ".join(kept))


def _auto_fix(env: ShapeEnv, rep: Report, name: str) -> bool:
    """``name = Dim.AUTO``, unless the spec declared bounds for ``name``: a fix never
    drops what the user declared (the violation then stands without a fix)."""
    dim = next((i.dim for i in env.infos.values()
                if i.kind == "named" and i.dim is not None and i.dim.name == name), None)
    if dim is not None and (dim.min is not None or dim.max is not None):
        return False
    rep.add_fix(SetDim(name, AUTO))
    return True


def _named_dims(env: ShapeEnv, f) -> Optional[Tuple[Sym, ...]]:
    """The named-Dim symbols (two or more, in creation order) a guard relates, when every
    symbol of the guard is one; else None."""
    syms = f.free_symbols
    if len(syms) < 2:
        return None
    for t in syms:
        info = env.infos.get(t)
        if info is None or info.kind != "named" or info.dim is None or t.unbacked:
            return None
    return tuple(sorted(syms, key=lambda t: t.index))


def _listed(names: List[str]) -> str:
    """``d and n``; ``a, b and c``."""
    return names[0] if len(names) == 1 else "%s and %s" % (", ".join(names[:-1]), names[-1])


def _relation(env: ShapeEnv, rep: Report, namer: Namer, pair: Tuple[Sym, ...],
              group: list) -> None:
    """A relation among named Dims (``n <= d``, ``a + b <= c``): no Dim states it, but
    ranges may imply it.  The fix narrows one Dim's range (or several, split at a cut)
    within what the spec declared, so that every combination of sizes the new ranges allow
    satisfies the guards; among those it keeps the most sizes.  Without such ranges, the
    last Dim that has no declared bounds becomes ``Dim.AUTO`` (the relation is then a guard
    of the program); when all have bounds, the violation names each with its declared
    range and the line, and no fix drops them."""
    names = [env.infos[t].dim.name for t in pair]
    conds = ", ".join("`%s`" % namer.cond(f) for f in group)
    g = env.fact_guards.get(group[0])
    at = where(g.frame) if g is not None else ""
    box = relation_box(env, pair, group)
    if box is not None and _lost({t: env.ranges[t] for t in pair}, box)[0] and any(
            env.infos[t].dim.min is None and env.infos[t].dim.max is None for t in pair):
        box = None          # an unbounded Dim would become finite: Dim.AUTO keeps more
    head = "the program requires %s%s, a relation between %s that no Dim states" % (
        conds, at, _listed(names))
    if box is not None:
        changed = [(t, vr) for t, vr in box.items() if vr != env.infos[t].dim.range]
        rep.violations.append("%s; narrowing %s makes it hold for every size the spec "
                              "allows" % (head, _listed([
                                  "%s to [%s, %s]" % (env.infos[t].dim.name, vr.lower,
                                                      vr.upper) for t, vr in changed])))
        for t, vr in changed:
            name = env.infos[t].dim.name
            rep.fixes = [x for x in rep.fixes if not (
                isinstance(x, SetDim) and x.name == name and isinstance(x.value, Dim))]
            rep.add_fix(SetDim(name, Dim(name, min=_lo(vr.lower, 2), max=_hi(vr.upper))))
        return
    free = [n for n in reversed(names) if _auto_fix(env, rep, n)][:1]
    if free:
        rep.fixes = [x for x in rep.fixes if not (isinstance(x, SetDim) and x.value is AUTO
                                                  and x.name in names and x.name != free[0])]
        rep.violations.append(
            "%s, and no ranges within the spec's imply it without pinning one of them: "
            "%s = Dim.AUTO (it has no declared bounds) leaves it to tracing, and the "
            "relation becomes a guard the program checks" % (head, free[0]))
        return
    rep.violations.append(
        "%s, and no ranges within the bounds the spec declares (%s) imply it without "
        "pinning one of them: change the code, or declare ranges for %s that imply "
        "it" % (head, ", ".join("%s in [%s, %s]" % (env.infos[t].dim.name,
                                                    env.infos[t].dim.range.lower,
                                                    env.infos[t].dim.range.upper)
                                for t in pair), _listed(names)))


# the cuts tried when no single narrowing works: fractions of the narrowed Dim's range
SPLITS = (1, 2, 3)
# narrowings tried with two or more Dims split (a relation among many Dims stays fast)
MAX_BOX_TRIES = 64


@rule("contract.relation_box")
def relation_box(env: ShapeEnv, pair: Tuple[Sym, ...], group: list
                 ) -> Optional[Dict[Sym, ValueRange]]:
    """Ranges for the symbols of ``pair`` (two or more named Dims), each within the range
    the program needs (itself within the declared one) and holding two sizes at least,
    such that every point of the box satisfies every guard of ``group`` (the violating
    values nearest the example bound each narrowed end, found by the solver) and the
    example lies inside it.  The box keeping the most sizes wins: one Dim narrowed first;
    else one Dim split next to the example or at a quarter, half or three quarters of a
    finite range and another narrowed; else (three Dims or more) two, then three, ... split
    next to the example and one more narrowed.  None when there is none or the solver does not settle
    it."""
    broken = [R.negate(R.combine("and", group))]
    base = {t: env.ranges[t] for t in pair}
    found = []
    hint = {t: env.infos[t].hint for t in pair}

    def narrow(q, box):
        """The widest range of ``q`` around its example, within ``box[q]``, that holds
        for every value ``box`` allows the other symbols: from just above the greatest
        violating value below the example to just below the least one above it."""
        Q, h = box[q], hint[q]
        if h is None or h not in Q:
            return []
        below = extreme(q.expr, broken + [R.le(q.expr, h)], box, minimize=False)
        above = extreme(q.expr, broken + [R.ge(q.expr, h)], box, minimize=True)
        if below is None or above is None or (below is not False and is_inf(below)) or \
                (above is not False and is_inf(above)):
            return []
        lo = Q.lower if below is False else below + 1
        hi = Q.upper if above is False else above - 1
        return [ValueRange(lo, hi)] if lo < hi else []

    def keep(box) -> None:
        # the example must stay admitted: the fix is verified by exporting it again
        if all(hint[t] is None or hint[t] in box[t] for t in box):
            found.append(box)

    def parts(q, quarters: bool):
        """Two-size-or-more pieces of ``q``'s range holding its example, cut next to the
        example (and at quarters of a finite range when ``quarters``)."""
        Q = base[q]
        cuts = set() if hint[q] is None else {hint[q], hint[q] - 1}
        if quarters and not is_inf(Q.upper):
            cuts |= {Q.lower + (Q.upper - Q.lower) * k // 4 for k in SPLITS}
        out = []
        for cut in sorted(cuts):
            for part in (ValueRange(Q.lower, max(Q.lower, cut)),
                         ValueRange(min(cut + 1, Q.upper), Q.upper)):
                if part.lower >= part.upper or not part.issubset(Q) or \
                        (hint[q] is not None and hint[q] not in part) or part in out:
                    continue
                out.append(part)
        return out

    def narrowed(box, p, vr):
        # the narrowed Dim first, so that the fixes read in the order they were found
        return {p: vr, **{t: box[t] for t in pair if t is not p}}

    order = tuple(reversed(pair))     # the last-created Dim is narrowed first
    for q in order:
        for vr in narrow(q, base):
            keep({**{t: base[t] for t in pair if t is not q}, q: vr})
    if not found:
        for q in order:
            for part in parts(q, quarters=True):
                box = {**base, q: part}
                for p in pair:
                    if p is not q:
                        for vr in narrow(p, box):
                            keep(narrowed(box, p, vr))
    # three Dims or more: split two (then three, ...) next to the example, narrow another;
    # the number of narrowings tried is bounded (each is two solver calls)
    tries = MAX_BOX_TRIES
    for size in range(2, len(pair)):
        if found or tries <= 0:
            break
        for split in itertools.combinations(order, size):
            for cut in itertools.product(*(parts(q, quarters=False) for q in split)):
                box = {**base, **dict(zip(split, cut))}
                for p in order:
                    if p in split or tries <= 0:
                        continue
                    tries -= 1
                    for vr in narrow(p, box):
                        keep(narrowed(box, p, vr))
    if not found:
        return None
    return min(found, key=lambda box: _lost(base, box))


def _lost(base: Dict[Sym, ValueRange], box: Dict[Sym, ValueRange]) -> Tuple[int, int, int]:
    """How much a box drops from ``base``: (ranges made finite, sizes dropped, minus the
    number of size pairs it keeps when finite, so that a balanced cut wins a tie)."""
    made_finite = sum(1 for t in box if is_inf(base[t].upper) and not is_inf(box[t].upper))
    dropped = sum((box[t].lower - base[t].lower) +
                  (0 if is_inf(base[t].upper) else base[t].upper - box[t].upper)
                  for t in box)
    pairs = 1
    for vr in box.values():
        pairs = 0 if is_inf(vr.upper) or not pairs else pairs * (vr.upper - vr.lower + 1)
    return made_finite, dropped, -pairs


def _conflicts(static_axes: Dict[int, List[str]], v: int) -> str:
    """Name the axes declared static at the value a dynamic axis was specialised to."""
    axes = static_axes.get(v)
    if not axes:
        return ""
    return "; it must equal %s, which %s marked static" % (
        " and ".join(axes), "is" if len(axes) == 1 else "are")


MAX_MARK_CANDIDATES = 3


def _mark_instead(env: ShapeEnv, rep: Report, leaves: List[InputLeaf], name: str,
                  s: Sym) -> None:
    """A Dim specialised to the size of axes the spec leaves out (``x + y`` with only x's
    axis named, y not in the spec): marking such an axis with the Dim may be what keeps it
    dynamic, so each is offered as the fix to verify first."""
    v = env.simplify(s.expr)
    if type(v) is not int:
        return
    uses = [(l, d) for l in leaves if l.is_array for d in l.axes
            if d.kind == "named" and d.dim is not None and d.dim.name == name and d.entry]
    if not uses:
        return
    by_name = isinstance(uses[0][1].entry[0], str)
    found = 0
    for l in leaves:
        if not l.is_array or not l.path.isidentifier():
            continue
        for i, d in enumerate(l.axes):
            # an axis the spec itself makes static (an int, Dim.STATIC) stays as written
            if d.kind != "static" or d.entry is not None or d.value != v or \
                    found >= MAX_MARK_CANDIDATES:
                continue
            found += 1
            key = l.path if by_name else l.arg_index
            note = ("%s is static (dynamic_shapes gives it no Dim) and is the cause: the "
                    "program needs it equal to %s, so %s was specialized to %d; mark it with "
                    "%s to keep %s dynamic (or set %s = %d to make both static)"
                    % (l.axis_name(i), name, name, v, name, name, name, v))
            rep.alternatives.append(Alternative(SetDim(name, v),
                                                MarkAxis(key, len(l.axes), i, name), note))


def _dim_name(env: ShapeEnv, s: Sym) -> Optional[str]:
    info = env.infos.get(s)
    if info is None:
        return None
    if info.kind == "named" and info.dim is not None:
        return info.dim.name
    if info.kind == "quotient" and info.parent is not None:
        return _dim_name(env, info.parent)
    return None


def _named_dim(env: ShapeEnv, rep: Report, namer: Namer, name: str, s: Sym,
               named: Dict[str, Sym], static_axes: Dict[int, List[str]]) -> None:
    info = env.infos[s]
    dim: Dim = info.dim
    v = env.simplify(s.expr)
    why = _why(env, s, namer)
    if type(v) is int:
        rep.violations.append("%s was marked dynamic, but the program specialized it to %d%s%s"
                              % (name, v, why, _conflicts(static_axes, v)))
        rep.add_fix(SetDim(name, v))
        return
    if type(v) is Expr and v.as_symbol() is s:
        _range(env, rep, name, s, dim, why)
        return
    lin = v.linear_coeffs()
    if lin is not None and len(lin) == 1:
        (t, a), = lin.items()
        tinfo = env.infos[t]
        b = v.const
        if tinfo.kind == "quotient" and _quotient_of(env, t) is s:
            base = "_" + name
            vr = env.ranges[t]
            new = Dim(base, min=_lo(vr.lower, 0), max=_hi(vr.upper))
            rep.violations.append(
                "%s must be %s for the program%s; the spec allows any value in its range"
                % (name, format_linear(name + "'", a, b).replace(name + "'", base), why))
            rep.add_fix(DefineDim(new))
            rep.add_fix(SetDim(name, ref=base, coeff=a, offset=b, ref_dim=new))
            return
        if tinfo.kind == "named" and tinfo.dim is not None and (a > 0 or a == -1):
            other = tinfo.dim.name
            rep.violations.append("%s must equal %s, a relation the spec does not declare%s"
                                  % (name, format_linear(other, a, b), why))
            rep.add_fix(SetDim(name, ref=other, coeff=a, offset=b))
            return
    if _auto_fix(env, rep, name):
        rep.violations.append(
            "%s must equal %s%s, which no Dim or derived Dim can express; use Dim.AUTO for %s"
            % (name, namer.expr(v), why, name))
    else:
        rep.violations.append(
            "%s must equal %s%s, which no Dim or derived Dim can express, and Dim.AUTO would "
            "drop the bounds the spec declares for %s: change the code, or replace %s by "
            "Dim.AUTO if its bounds may go" % (name, namer.expr(v), why, name, name))


def _quotient_of(env: ShapeEnv, t: Sym) -> Optional[Sym]:
    """The symbol a quotient symbol divides, through chains (``s -> 2*q``, then
    ``q -> 3*q2``: q2 is a quotient of s, and ``s = 6*q2``)."""
    info = env.infos.get(t)
    while info is not None and info.kind == "quotient" and info.parent is not None:
        t = info.parent
        info = env.infos.get(t)
    return t


def _lo(v, default_min: int):
    return v if isinstance(v, int) else None


def _hi(v):
    return v if isinstance(v, int) else None


def _range(env: ShapeEnv, rep: Report, name: str, s: Sym, dim: Dim, why: str) -> None:
    final = env.ranges[s]
    declared = dim.range
    if final == declared:
        return
    new = Dim(name, min=_lo(final.lower, 2), max=_hi(final.upper))
    rep.violations.append(
        "%s: the program needs %s in [%s, %s], but the spec allows [%s, %s]%s"
        % (name, name, final.lower, final.upper, declared.lower, declared.upper, why))
    rep.add_fix(SetDim(name, new))
