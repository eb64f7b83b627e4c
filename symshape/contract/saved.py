"""The contract's saved form: the ``constraints`` object of a saved program (``ss.save``,
``ss.load``, the ``.ssp`` archive).

    {"inputs": [{"path", "kind": "array" | "symint" | "generator" | "scalar", ...}],
     "ranges": [[symbol, lower, upper]], "facts": [condition], "fact_frames": [[i, frame]],
     "dim_names": [[symbol, name]], "runtime_checks": [[condition, text]],
     "trees"?: [[parameter, layout]], "configured"?: [[parameter, label]],
     "specialized"?: [[axis, why]]}

The fields of the contract and the checks on them when read are here; the values inside
(sizes, conditions, dtypes, source frames, container layouts) are written and read by the
program's codec (``capture/serialize/``, shared with the graph), passed in.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List

from symshape.algebra.expr import Sym
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.algebra.ranges import ValueRange
from symshape.contract.constraint_set import ConstraintSet, InputDesc, OfClass

#: the fields of the saved form, and those written only when not empty
FIELDS = ("inputs", "ranges", "facts", "fact_frames", "dim_names", "runtime_checks")
OPTIONAL = ("trees", "configured", "specialized")


def bound_text(b):
    """A range end as saved: an int, or ``"int_oo"`` / ``"-int_oo"``."""
    if is_inf(b):
        return "int_oo" if b > 0 else "-int_oo"
    return int(b)


def read_bound(codec, v):
    """A saved range end (``bound_text``) read back."""
    if v == "int_oo":
        return INT_OO
    if v == "-int_oo":
        return NEG_INT_OO
    return codec.integer(v, "an integer or 'int_oo'")


def encode(cs: ConstraintSet, codec, label: Callable[[Any], str]) -> dict:
    """The saved form of ``cs``: plain JSON values, the sizes, conditions, dtypes, source
    frames and container layouts written by ``codec`` (``value``, ``dtype``, ``cond``,
    ``frame``, ``spec``: the program's codec, shared with the graph); ``label`` names a
    configured default (never its code)."""
    inputs = []
    for d in cs.inputs:
        e: Dict[str, Any] = {"path": d.path}
        if d.is_array:
            e["kind"] = "array"
            e["dims"] = [codec.value(x) for x in d.dims]
            e["dtype"] = codec.dtype(d.dtype)
        elif d.sym is not None:
            e["kind"] = "symint"
            e["sym"] = codec.value(d.sym)
        elif isinstance(d.value, OfClass):
            e["kind"] = "generator"
            e["class"] = d.value.cls.__name__
        else:
            e["kind"] = "scalar"
            e["value"] = codec.value(d.value)
        inputs.append(e)
    ranges = [[s.name, bound_text(vr.lower), bound_text(vr.upper)]
              for s, vr in sorted(cs.ranges.items(), key=lambda kv: kv[0].key)]
    facts = [codec.cond(f) for f in cs.facts]
    frames = [[i, codec.frame(cs.fact_frames[f])] for i, f in enumerate(cs.facts)
              if cs.fact_frames.get(f) is not None]
    names = [[s.name, n] for s, n in sorted(cs.dim_names.items(), key=lambda kv: kv[0].key)]
    checks = [[codec.cond(c), text] for c, text in getattr(cs, "runtime_checks", ())]
    out = {"inputs": inputs, "ranges": ranges, "facts": facts, "fact_frames": frames,
           "dim_names": names, "runtime_checks": checks}
    trees = getattr(cs, "trees", {})
    if trees:
        out["trees"] = [[name, codec.spec(t)] for name, t in trees.items()]
    configured = getattr(cs, "configured", {})
    if configured:
        out["configured"] = [[name, label(d)] for name, d in configured.items()]
    specialized = getattr(cs, "specialized", {})
    if specialized:
        out["specialized"] = [[axis, why] for axis, why in specialized.items()]
    return out


def decode(v, codec, input_descs: Callable[[list], List[InputDesc]],
           default: Callable[[str], Any]) -> ConstraintSet:
    """The constraint set of a saved form, every field checked (``codec.fail`` says what is
    wrong and where): ``codec`` reads the values (``obj``, ``lst``, ``at``, ``sym``,
    ``integer``, ``text``, ``name``, ``cond``, ``frame``, ``spec``, ``fail``);
    ``input_descs`` turns the saved inputs into ``InputDesc``s (checked against the
    program's graph); ``default(label)`` stands in for a configured default."""
    codec.obj(v, FIELDS, OPTIONAL)
    with codec.at("inputs"):
        descs = input_descs(codec.lst(v["inputs"]))
    ranges: Dict[Sym, ValueRange] = {}
    with codec.at("ranges"):
        for i, r in enumerate(codec.lst(v["ranges"])):
            with codec.at(i):
                r = codec.lst(r)
                if len(r) != 3:
                    codec.fail("a range is [symbol, lower, upper]")
                s = codec.sym(r[0])
                lo, hi = read_bound(codec, r[1]), read_bound(codec, r[2])
                if lo > hi:
                    codec.fail("empty range [%s, %s]" % (lo, hi))
                if s in ranges:
                    codec.fail("two ranges for %s" % s.name)
                ranges[s] = ValueRange(lo, hi)
    facts = []
    with codec.at("facts"):
        for i, f in enumerate(codec.lst(v["facts"])):
            with codec.at(i):
                c = codec.cond(f)
                if type(c) is bool:
                    codec.fail("a fact must be a relation")
                facts.append(c)
    frames = {}
    with codec.at("fact_frames"):
        for pair in codec.lst(v["fact_frames"]):
            pair = codec.lst(pair)
            if len(pair) != 2:
                codec.fail("a fact frame is [fact index, source]")
            i = codec.integer(pair[0])
            if not 0 <= i < len(facts):
                codec.fail("fact index %d out of range" % i)
            frames[facts[i]] = codec.frame(pair[1])
    names = {}
    with codec.at("dim_names"):
        for pair in codec.lst(v["dim_names"]):
            pair = codec.lst(pair)
            if len(pair) != 2:
                codec.fail("a dim name is [symbol, name]")
            names[codec.sym(pair[0])] = codec.text(pair[1])
    cs = ConstraintSet(descs, ranges, facts, frames, names)
    with codec.at("runtime_checks"):
        checks = []
        for pair in codec.lst(v["runtime_checks"]):
            pair = codec.lst(pair)
            if len(pair) != 2:
                codec.fail("a runtime check is [condition, text]")
            checks.append((codec.cond(pair[0]), codec.text(pair[1])))
        cs.runtime_checks = checks
    with codec.at("trees"):
        for i, pair in enumerate(codec.lst(v.get("trees", []))):
            with codec.at(i):
                pair = codec.lst(pair)
                if len(pair) != 2:
                    codec.fail("a tree is [parameter, structure]")
                cs.trees[codec.name(pair[0], "a parameter name")] = codec.spec(pair[1])
    with codec.at("configured"):
        for i, pair in enumerate(codec.lst(v.get("configured", []))):
            with codec.at(i):
                pair = codec.lst(pair)
                if len(pair) != 2:
                    codec.fail("a configured parameter is [parameter, label]")
                name = codec.name(pair[0], "a parameter name")
                cs.configured[name] = default(codec.text(pair[1], "a label"))
    with codec.at("specialized"):
        for i, pair in enumerate(codec.lst(v.get("specialized", []))):
            with codec.at(i):
                pair = codec.lst(pair)
                if len(pair) != 2:
                    codec.fail("a specialized axis is [axis, why]")
                cs.specialized[codec.text(pair[0], "an axis")] = codec.text(pair[1])
    return cs
