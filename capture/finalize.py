"""Sizes in the IR rewritten to their simplest form once tracing is done (the replacements
the environment found since a node was made apply to it): export finalises its graph with
this, and so does a decomposition for the nodes it adds."""
from __future__ import annotations

from symshape.sizes.checks import runtime_condition
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.expr import Expr
from symshape.sizes.symfloat import FloatExpr

from .ir import CondExpr, IndexAttr, Node, Subgraph


def simplify_value(env: ShapeEnv, v):
    """``v`` (a node input or attribute) with every size in it in its simplest form."""
    t = type(v)
    if t is Expr:
        return env.simplify(v)
    if t is tuple or t is list:
        return t(simplify_value(env, x) for x in v)
    if t is slice:
        return slice(simplify_value(env, v.start), simplify_value(env, v.stop),
                     simplify_value(env, v.step))
    if t is IndexAttr:
        return IndexAttr(tuple(simplify_value(env, x) for x in v.items))
    if t is FloatExpr:
        return v.map_sizes(env.simplify)
    if t is Subgraph:
        for n in v.graph.nodes:
            finalize_node(env, n)
        v.graph.outputs = [simplify_value(env, o) for o in v.graph.outputs]
        v.checks = [(runtime_condition(env, c), text) for c, text in v.checks
                    if runtime_condition(env, c) is not True]
        return v
    if t is CondExpr:
        v.cond = env.subst_cond(v.cond)
        return v
    return v


def finalize_node(env: ShapeEnv, n: Node) -> None:
    """Rewrite the sizes in ``n``'s shape, inputs and attributes to their simplest form."""
    if n.shape is not None:
        n.shape = tuple(env.simplify(s) for s in n.shape)
    n.inputs = tuple(simplify_value(env, x) for x in n.inputs)
    n.attrs = {k: simplify_value(env, v) for k, v in n.attrs.items()}
