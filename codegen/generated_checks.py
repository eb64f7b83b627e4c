"""Translation validation of the checks the generated code makes (``SYMSHAPE_VALIDATE=1``,
on in the test suite): the ``ss.check`` lines a program emits for data-dependent sizes, exactly
as the backends write them once the sizes they read are bound, imply every run-time check of
the contract, and each ``cond`` / ``map`` branch's function enforces the checks made inside it.
Export calls ``validate_generated`` through ``symshape.capture.STAGES``."""
from __future__ import annotations

from typing import Dict

from symshape.reasoning import validate
from symshape.capture.ir import Graph, Subgraph
from symshape.contract.constraint_set import ConstraintSet
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.expr import Sym

from . import pycode
from .pycode import Renderer, ready_checks


def validate_generated(env: ShapeEnv, cs: ConstraintSet, graph: Graph, writer) -> None:
    """The ss.check lines the program emits for data-dependent sizes, exactly as the
    backends emit them once the sizes they read are bound, imply every such ss.check."""
    bound = set(writer.bound)
    for n in graph.nodes:
        bound |= {sym for sym, _ in n.meta.get("binds", ())}
        if "binds_value" in n.meta:
            bound.add(n.meta["binds_value"])
    pending = list(cs.runtime_checks)
    lines = ready_checks(pending, bound, Renderer({}, {}))
    validate.validate_runtime_checks(env, cs, lines, bound)
    _validate_branches(env, cs, graph.nodes, {v: s for s, v in writer.bound.items()})


def _validate_branches(env: ShapeEnv, cs: ConstraintSet, nodes, outer: Dict[str, Sym]) -> None:
    """Each branch's function, exactly as generated, enforces every ss.check made inside
    it; ``outer`` holds the sizes the enclosing code has bound when the branch runs."""
    outer = dict(outer)
    for n in nodes:
        for v in n.attrs.values():
            if isinstance(v, Subgraph):
                # through the module: a test replaces it with a lossy writer to see the check fail
                lines = pycode.subgraph_lines(v, Renderer({}, {}), {})
                validate.validate_branch_checks(env, cs, v, lines, outer)
                inner = dict(outer)
                inner.update({s.name: s for s in validate.branch_binds(v)})
                _validate_branches(env, cs, v.graph.nodes, inner)
        outer.update({sym.name: sym for sym, _ in n.meta.get("binds", ())})
        if "binds_value" in n.meta:
            outer[n.meta["binds_value"].name] = n.meta["binds_value"]
