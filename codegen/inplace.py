"""Which functional writes may write into their input in place: one analysis that every
backend's driver uses.

The graph is functional: ``x[i] = v`` is a ``setitem`` node whose result is a copy of ``x``
with the write.  Copying a KV cache of megabytes to update one row is what eager NumPy
never does, so a backend writes into ``x`` itself wherever no other reader can tell:
``inplace_writes`` says where, ``write_in_place`` / ``into_helper`` write the Python.
"""
from __future__ import annotations

from typing import List, Optional, Set

from symshape.codegen.function_writer import readers
from symshape.capture.ir import Node
from symshape.codegen.pycode import Renderer, emit_node

# ops whose result is an array of its own that nothing else can see (never a planned buffer)
_OWNED = frozenset(("empty", "zeros", "ones", "full", "copy", "setitem", "index_put"))
_WRITES = ("setitem", "index_put")


def inplace_writes(compute: List[Node], mutations, outputs: Set[Node]):
    """Functional ``x[i] = v`` (``setitem`` / ``index_put`` nodes) that may write into
    ``x`` itself instead of a copy: ``x`` is read by nothing else and is either an array
    of the program's own (``np.empty``, an earlier such write), or a mutated input or state
    array whose final value is this write (then no write-back is needed either: a KV cache
    update writes its slice, not a copy of the whole cache).  Returns (in-place nodes,
    mutated inputs needing no write-back)."""
    users = readers(compute, Node.input_nodes)
    finals = {f: i for i, f in mutations}
    inplace: Set[Node] = set()
    done: Set[Node] = set()

    def sole_writer(x: Node, n: Node) -> bool:
        return users.get(x) == [n] and n.inputs[0] is x and x not in outputs

    for inp, final in mutations:
        # the chain inp -> w1 -> w2 ... -> final, each the only reader of the previous
        chain, cur = [], inp
        while cur is not final:
            nxt = users.get(cur, [])
            if len(nxt) != 1 or nxt[0].op not in _WRITES or not sole_writer(cur, nxt[0]):
                chain = None
                break
            cur = nxt[0]
            chain.append(cur)
        if chain and not any(c in outputs for c in chain):
            inplace.update(chain)
            done.add(inp)
    for n in compute:
        if n.op in _WRITES and n not in inplace and n.inputs and type(n.inputs[0]) is Node:
            x = n.inputs[0]
            # (an owned array that is a mutated input's chain member is the final value,
            # or its only reader is already in that chain)
            if x.op in _OWNED and x not in finals and sole_writer(x, n):
                inplace.add(n)
    return inplace, done


def write_in_place(node: Node, r: Renderer) -> Optional[List[str]]:
    """An in-place write (one of ``inplace_writes``) as Python's own ``x[index] = value``:
    no ``np.s_`` object and no helper call per write (about 0.2 us each, a dozen per LLaMA
    decode step); None where the write is not a plain ``setitem``."""
    text = emit_node(node, r)
    dst, value = r.value(node.inputs[0]), r.value(node.inputs[-1])
    head, tail = "_rt.setitem(%s, np.s_[" % dst, "], %s)" % value
    if not (text.startswith(head) and text.endswith(tail)) or len(text) <= len(head + tail):
        return None
    return ["%s[%s] = %s" % (dst, text[len(head):-len(tail)], value),
            "%s = %s" % (node.name, dst)]


def into_helper(text: str) -> str:
    """A functional write's call (``_rt.setitem(x, ...)``) as the helper that writes into
    ``x`` and returns it (``codegen.rt.setitem_into``; ``_cg`` in the namespace)."""
    return text.replace("_rt.setitem(", "_cg.setitem_into(", 1)
