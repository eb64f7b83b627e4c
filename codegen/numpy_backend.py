"""Graph -> one shape-polymorphic Python function over NumPy (``ep.compile("numpy")``).

The generated function has ``f``'s signature and four parts:

1. the input check, compiled from the program's ``ConstraintSet`` (``contract.writer.CheckWriter``):
   it accepts exactly the shapes the constraints admit and binds every root size symbol;
2. the size expressions the body needs, each computed once (``_z0 = s2*s3``);
3. the *small-size path*: one NumPy call per node, as ``ep.module()`` runs it;
4. the *large-size path*, taken when some array of the program has at least ``rt.BIG``
   elements and either a second thread is free (``rt.pair()``) or some array has
   ``rt.SOLO`` times that many: fused groups (``fusion``) evaluated in cache-sized blocks with ``out=`` into
   slices of preallocated buffers, on two threads when a group's estimated work
   (``cost``: ``x ** 3`` costs as much as ~180 additions) is large enough for a second
   core to pay and the run-time tuner measures that it does, and a memory
   plan (``memplan``) whose scratch buffers persist across calls and whose outputs come
   from pools of buffers the caller has dropped.

Both paths compute every element with the same NumPy loop on the same operand values as
``ep.module()``, so results are equal, bit for bit in the fused groups.  A second entry
point, the *core* (``_core_<name>(params, syms)``), is the same body without the check:
the JIT's dispatcher checks guards itself and calls it with the bound sizes.
"""
from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import numpy as np

from symshape import runtime as _runtime
from symshape.capture.ir import Node, render_items
from symshape.codegen.function_writer import (FunctionSpec, GeneratedFunction, Writing,
                                              del_lines, last_uses, program_spec, readers,
                                              releases, write)
from symshape.codegen.pycode import Renderer, after_node, emit_node, node_lines
from symshape.algebra.expr import Expr, format_py
from symshape.algebra.infinity import is_inf
from symshape.algebra.ranges import UNBOUNDED, bound

from symshape.capture.ops.traits import LAYOUT_FREE_OPS

from . import rt as _cg
from .cost import group_ns
from .fusion import Group, ew_ufunc, form_groups, kind, numel
from .inplace import inplace_writes, into_helper, write_in_place
from .memplan import Plan, same_shape, fresh, item_inputs, item_values, plan


class HoistRenderer(Renderer):
    """Renders size expressions over input-bound symbols as variables computed once."""

    def __init__(self, names, namespace, bound: Set) -> None:
        super().__init__(names, namespace)
        self.bound = bound
        self.hoisted: Dict[Expr, str] = {}
        self.hoist_lines: List[str] = []
        self._dtypes: Dict[np.dtype, str] = {}

    def expr(self, e) -> str:
        if type(e) is not Expr:
            return repr(e) if e >= 0 else "(%d)" % e
        if e.as_symbol() is not None or not e.free_symbols <= self.bound:
            return format_py(e, lambda s: s.name)
        name = self.hoisted.get(e)
        if name is None:
            name = self.hoisted[e] = "_z%d" % len(self.hoisted)
            self.hoist_lines.append("%s = %s" % (name, format_py(e, lambda s: s.name)))
        return name

    def size(self, e) -> str:
        return self.expr(e) if type(e) is Expr else self.value(e)

    def value(self, v) -> str:
        if type(v) is Expr:
            return self.expr(v)
        if type(v) is np.dtype or isinstance(v, np.dtype):
            return self.dt(v)       # a namespace constant: ``np.dtype('<f4')`` costs 0.15 us
        return super().value(v)

    def shape(self, shape) -> str:
        parts = [self.expr(s) for s in shape]
        return "(%s%s)" % (", ".join(parts), "," if len(parts) == 1 else "")

    def dt(self, dtype) -> str:
        dtype = np.dtype(dtype)
        name = self._dtypes.get(dtype)
        if name is None:
            name = self._dtypes[dtype] = self.const(dtype)
        return name


class CompiledProgram(GeneratedFunction):
    """What ``generate`` produces: the generated function's record, plus the large path's
    fused groups and memory plan."""

    def __init__(self) -> None:
        super().__init__()
        self.groups: List[Group] = []
        self.plan: Optional[Plan] = None


def hint_fn(ep) -> Callable:
    """Example sizes of ``ep`` (1024 where none is known): what block sizes are planned for."""
    env = getattr(ep, "_env", None)

    def hint(e) -> int:
        if type(e) is int:
            return e
        h = env.hint_of(e) if env is not None else None
        return h if h is not None else 1024
    return hint


def generate_program(ep, name: Optional[str] = None) -> CompiledProgram:
    """Generate and compile the NumPy code of an ExportedProgram."""
    spec = program_spec(ep)
    g = ep.graph
    return generate(g.nodes, g.outputs, g.out_spec, ep.mutation_pairs, ep.constraints,
                    g.inputs, spec.signature, name or spec.name, hint_fn(ep),
                    state=ep.state_program)


def generate(nodes: List[Node], outputs: List[Any], out_spec, mutations, cs, input_nodes,
             sig: Optional[inspect.Signature], name: str, hint: Callable,
             params: Optional[List[str]] = None, state=None) -> CompiledProgram:
    """``cs`` None: no input check; the function takes ``params`` (segment mode).
    ``state``: the program's Python state (capture/state/stateprog.py)."""
    cp = CompiledProgram()
    ns: Dict[str, Any] = {"np": np, "_ndarray": np.ndarray, "_rt": _runtime, "_cg": _cg,
                          "_SETS": []}

    def body(ctx: Writing) -> List[str]:
        return _body(ctx, nodes, hint, cp)

    spec = FunctionSpec(name, sig, params=params, constraints=cs, inputs=input_nodes,
                        outputs=outputs, out_spec=out_spec, mutations=mutations,
                        namespace=ns, label="compiled", state=state)
    return write(spec, body, record=cp)


def _body(ctx: Writing, nodes, hint, cp: CompiledProgram) -> List[str]:
    """The body: hoisted sizes, then the small-size path, or the large-size path when
    some array is large (both end in the write-backs and the return)."""
    ns, bound = ctx.ns, ctx.bound
    outputs, mutations = ctx.spec.outputs, ctx.spec.mutations
    r = HoistRenderer({n: n.name for n in nodes}, ns, bound)
    compute = []
    for n in nodes:
        if n.op == "input":
            continue
        if n.op == "constant":
            ns[n.name] = n.meta["value"]
            continue
        compute.append(n)
    # values the replayed state writes bind live to the end, like outputs
    out_nodes = {o for o in outputs if type(o) is Node} | ctx.state_kept()
    finals = {f for _, f in mutations}
    r.inplace, done = inplace_writes(compute, mutations, out_nodes)
    # values written into an input or state array in place: that array, never scratch
    r.pinned = {f for i, f in mutations if i in done}
    mutations = [(i, f) for i, f in mutations if i not in done]

    small = _body_small(ctx, compute, out_nodes, mutations, r)
    big, cond = _body_big(ctx, compute, mutations, r, hint, out_nodes, finals, cp)
    if big is None:
        body = small
    elif cond is True:
        body = big
    else:
        body = ["if %s:" % cond] + ["    " + x for x in big] + small
    return r.hoist_lines + body


# --------------------------------------------------------------------------- small path
def _node_lines(node: Node, r: HoistRenderer, ns, bound: set, checks: list) -> List[str]:
    if node in getattr(r, "inplace", ()):
        direct = write_in_place(node, r)
        if direct is not None:
            return direct + after_node(node, bound, checks, r)

    def emit() -> str:
        text = _flat_take(node, r, ns) or emit_node(node, r)
        return into_helper(text) if node in getattr(r, "inplace", ()) else text
    return node_lines(node, r, ns, emit) + after_node(node, bound, checks, r)


_MARKER = re.compile("^\x00(\\d+)\x00$")


def _flat_take(node: Node, r: HoistRenderer, ns) -> Optional[str]:
    """``x[:, K, I, J]`` with constant index arrays on every trailing axis (im2col): one
    ``np.take`` of precomputed flat offsets over the trailing axes viewed as one, instead
    of NumPy combining three index arrays per element (about 4x faster, the same values:
    a gather only moves data)."""
    lead = _trailing_arrays(node)
    if lead is None:
        return None
    src, arrays = node.inputs[0], node.inputs[1:]
    dims = src.shape[lead:]
    if any(type(d) is not int for d in dims) or any(
            type(a) is not Node or a.op != "constant" or "state" in a.meta for a in arrays):
        return None
    vals = [a.meta.get("value") for a in arrays]
    if any(not isinstance(v, np.ndarray) or v.dtype.kind not in "iu" for v in vals):
        return None
    got = _flat_offsets(vals, dims)
    if got is None:
        return None
    flat, stride = got
    name = "_flat_%s" % node.name
    ns[name] = flat
    lead_shape = "".join("%s.shape[%d], " % (r.value(src), i) for i in range(lead))
    return "np.take(%s.reshape((%s%d,)), %s, axis=%d)" % (
        r.value(src), lead_shape, stride, name, lead)


def _trailing_arrays(node: Node) -> Optional[int]:
    """For ``x[:, ..., a0, a1, ...]`` (full slices, then one index array per remaining
    axis, in order): the number of leading full slices; else None."""
    if node.op != "index" or not node.inputs or type(node.inputs[0]) is not Node:
        return None
    src, arrays = node.inputs[0], node.inputs[1:]
    text = str(node.attrs.get("index", "")).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    items = [it.strip() for it in text.split(",")]
    lead = 0
    while lead < len(items) and items[lead] == ":":
        lead += 1
    rest = items[lead:]
    if not rest or len(rest) != len(arrays) or src.shape is None or \
            len(src.shape) != lead + len(rest):
        return None
    for k, it in enumerate(rest):
        m = _MARKER.match(it)
        if m is None or int(m.group(1)) != k:
            return None
    return lead


def _flat_offsets(vals, dims):
    """(the flat offsets of index arrays ``vals`` into axes ``dims``, their product);
    None when they do not broadcast or one is out of bounds (NumPy raises IndexError:
    its own path keeps that)."""
    try:
        b = np.broadcast_shapes(*(v.shape for v in vals))
    except ValueError:
        return None
    flat = np.zeros(b, dtype=np.intp)
    stride = 1
    for v, d in reversed(list(zip(vals, dims))):
        v = v.astype(np.intp)
        if v.size and (v.min() < -d or v.max() >= d):
            return None
        flat += np.where(v < 0, v + d, v) * stride
        stride *= d
    return flat, stride


def _body_small(ctx: Writing, compute, out_nodes, mutations, r):
    """One NumPy call per node (into a dying operand where one fits), temporaries freed
    after their last use."""
    body: List[str] = []
    ns, b, checks = ctx.ns, set(ctx.bound), ctx.runtime_checks
    keep = out_nodes | {f for _, f in mutations}
    dels = releases(compute, keep, item_inputs, item_values)
    reuse = reuse_dying(compute, keep | getattr(r, "pinned", set()),
                        tiny_values(ctx.spec.constraints))
    for node, names in zip(compute, dels):
        if node in reuse:
            args = [r.value(x) for x in node.inputs]
            dst = reuse[node].name
            call = (_ufunc_into(node.op, args, dst)
                    if "dtype" not in node.attrs else _out_call(node, args, dst, r))
            body.append("%s = %s" % (node.name, call))
            body.extend(after_node(node, b, checks, r))
        else:
            body.extend(_node_lines(node, r, ns, b, checks))
        body.extend(del_lines(names))
    return body + ctx.finish(r, mutations)


#: values with fewer elements than this (at most, over every size the contract admits)
#: are never written into an operand: NumPy's allocation cache serves them for free, and
#: NumPy copies a 1-element operand that is also ``out=`` (0.4 us more than a new array)
TINY = 64


def tiny_values(cs) -> Callable[[Node], bool]:
    """Is a value's element count below ``TINY`` for every size in ``cs``'s ranges?"""
    ranges = getattr(cs, "ranges", None) or {}

    def upper(d) -> Any:
        if type(d) is int:
            return d
        return bound(d, lambda s: ranges.get(s, UNBOUNDED)).upper

    def tiny(n: Node) -> bool:
        count = 1
        for d in n.shape:
            u = upper(d)
            if is_inf(u):
                return False
            count *= max(u, 0)
        return count < TINY
    return tiny


def reuse_dying(compute: List[Node], keep: Set[Node],
                tiny: Callable[[Node], bool] = lambda n: False) -> Dict[Node, Node]:
    """Small path: elementwise nodes that write into an operand whose life ends there
    (same shape and dtype, an array of the program's own that no view can see), saving an
    allocation per op: what costs most on small arrays besides the call itself (not for
    ``tiny`` values: see ``TINY``)."""
    users = readers(compute, Node.input_nodes)
    last = last_uses(compute, Node.input_nodes)
    members = set(compute)
    out: Dict[Node, Node] = {}
    taken: Set[Node] = set()
    for i, n in enumerate(compute):
        if ew_ufunc(n) is None or not n.shape or n.dtype is None or \
                n.dtype.kind in "OMmUSV" or tiny(n):
            continue
        for m in n.input_nodes():
            if (m in members and m not in keep and m not in taken and last.get(m) == i and
                    fresh(m) and m.shape and m.dtype == n.dtype and
                    same_shape(m.shape, n.shape) and
                    all(fresh(u) for u in users[m]) and "binds" not in m.meta):
                out[n] = m
                taken.add(m)
                break
    return out


# --------------------------------------------------------------------------- large path
def _hinted_numel(shape, hint) -> int:
    n = 1
    for s in shape:
        n *= max(0, hint(s))
    return n


def large_path_condition(static: int, dyn: List[str]):
    """When the large path runs (None: never; True: always; else a condition over the
    size variables ``dyn``): some array has ``rt.BIG`` elements, and either a second thread
    is free for its groups (``rt.pair()``, read per call) or some array has ``rt.SOLO``
    times that many, where blocks pay on one thread too."""
    big, solo = _cg.BIG, _cg.BIG * _cg.SOLO
    if static >= solo:
        return True
    need = "True" if static >= big else " or ".join("%s >= %d" % (d, big) for d in dyn)
    if not need:
        return None
    alone = " or ".join(["_cg.pair()"] + ["%s >= %d" % (d, solo) for d in dyn])
    return alone if need == "True" else "(%s) and (%s)" % (need, alone)


def _body_big(ctx: Writing, compute, mutations, r, hint, out_nodes, finals,
              cp: CompiledProgram):
    """Fused groups in blocks and planned buffers, and the condition (over the bound sizes)
    under which this path runs; (None, None) when it would be the small path again."""
    ns, bound = ctx.ns, ctx.bound
    users = readers(compute, Node.input_nodes)

    def needed_after(m: Node, g: Group) -> bool:
        return m in out_nodes or m in finals or any(u not in g.members
                                                    for u in users.get(m, ()))

    items = form_groups(compute, hint, _cg.BLOCK, needed_after)
    groups = [it for it in items if type(it) is Group]
    # the large path runs on large inputs: a symbolic size counts as at least 1024 here
    p = plan(items, out_nodes, finals, lambda v: _hinted_numel(
        v.shape, lambda e: hint(e) if type(e) is int else max(hint(e), 1024)) >= _cg.WORTH)
    cp.groups = groups
    cp.plan = p
    if not groups and not p.where:
        return None, None
    # the large path is taken when the biggest array of a group / planned value is large
    sizes: List[Any] = []
    for g in groups:
        sizes.append(numel(g.domain))
    for v in p.where:
        sizes.append(numel(v.shape))
    static = [s for s in sizes if type(s) is int]
    dyn = []
    for s in sizes:
        if type(s) is Expr and s.free_symbols <= bound and s not in dyn:
            dyn.append(s)
    cond = large_path_condition(max(static, default=0), [r.expr(s) for s in dyn[:4]])
    if cond is None:
        return None, None
    ns["_P"] = [[] for _ in range(p.n_pools)]
    # the scratch set is _scr: _st is the state call of the same function (function_writer)
    body: List[str] = ["_scr = _cg.scratch(_SETS)"]
    b, checks = set(bound), ctx.runtime_checks
    gi = 0
    seq: List[object] = []
    for item in items:
        seq.append(item)
        if type(item) is Group:
            seq.extend(item.after)
    dels = releases(seq, out_nodes | finals | set(p.escapes), item_inputs, item_values)
    for item, names in zip(seq, dels):
        if type(item) is Group:
            body.extend(_group_lines(item, gi, r, p))
            gi += 1
        elif item in p.where:
            body.extend(_planned_lines(item, r, p))
            body.extend(after_node(item, b, checks, r))
        else:
            body.extend(_node_lines(item, r, ns, b, checks))
        body.extend(del_lines(names))
    # after the write-backs: the scratch set goes back for the next call, outputs to pools
    release = ["_cg.give(_P[%d], %s)" % (p.where[v][1], v.name) for v in p.escapes]
    release.append("_SETS.append(_scr)")
    return body + ctx.finish(r, mutations, release), cond


def _alloc(v: Node, r: HoistRenderer, p: Plan) -> str:
    where, i = p.where[v]
    if where == "pool":
        return "_cg.take(_P[%d], %s, %s)" % (i, r.shape(v.shape), r.dt(v.dtype))
    return "_cg.buf(_scr, %d, %s, %s)" % (i, r.shape(v.shape), r.dt(v.dtype))


def _layout_perm(v: Node) -> Optional[Tuple[int, ...]]:
    """The axis order NumPy would give ``v``'s result: an elementwise op over a transposed
    operand of the full shape keeps that operand's memory order (order 'K'); a C-order
    buffer instead would make every later reduction walk memory across the grain (a 2x2
    max pool over a transposed convolution output: 3x slower)."""
    if ew_ufunc(v) is None:
        return None
    for x in v.inputs:
        if type(x) is Node and x.op == "permute_dims" and x.shape is not None and \
                len(x.shape) == len(v.shape) and all(
                    a is b or a == b for a, b in zip(x.shape, v.shape)):
            axes = tuple(x.attrs.get("axes") or ())
            if sorted(axes) == list(range(len(axes))) and axes != tuple(range(len(axes))):
                return axes
    return None


def _planned_lines(v: Node, r: HoistRenderer, p: Plan) -> List[str]:
    owner = p.inplace.get(v)
    perm = _layout_perm(v) if owner is None and p.where[v][0] == "slot" else None
    if perm is not None:
        # a slot viewed in the operand's memory order: t.shape[i] == base.shape[perm[i]]
        inv = sorted(range(len(perm)), key=lambda i: perm[i])
        base = tuple(v.shape[inv[j]] for j in range(len(perm)))
        alloc = "_cg.buf(_scr, %d, %s, %s).transpose(%s)" % (
            p.where[v][1], r.shape(base), r.dt(v.dtype), tuple(perm))
        lines = ["%s = %s" % (v.name, alloc)]
        args = [r.value(x) for x in v.inputs]
        lines.append(_out_call(v, args, v.name, r))
        return lines
    lines = ["%s = %s" % (v.name, owner.name if owner is not None else _alloc(v, r, p))]
    args = [r.value(x) for x in v.inputs]
    lines.append(_out_call(v, args, v.name, r))
    return lines


# ufuncs whose output must go by keyword: a third positional argument to np.maximum /
# np.minimum is deprecated (a DeprecationWarning on every call)
_OUT_BY_KEYWORD = frozenset({"maximum", "minimum"})


def _ufunc_into(op: str, args: List[str], dst: str) -> str:
    """``np.<op>(args..., dst)``: the output positional where NumPy allows it (parsing an
    ``out=`` keyword costs ~40 ns a call, a fifth of a small array's whole op)."""
    u = getattr(np, op, None)
    if isinstance(u, np.ufunc) and u.nin == len(args) and u.nout == 1 and \
            op not in _OUT_BY_KEYWORD:
        return "np.%s(%s, %s)" % (op, ", ".join(args), dst)
    return "np.%s(%s, out=%s)" % (op, ", ".join(args), dst)


def _out_call(v: Node, args: List[str], dst: str, r: HoistRenderer) -> str:
    """``v`` computed into ``dst`` (same shape and dtype) with one NumPy call."""
    u = ew_ufunc(v)
    if u is not None:
        if "dtype" not in v.attrs:
            return _ufunc_into(v.op, args, dst)
        return "np.%s(%s, out=%s, dtype=%s)" % (v.op, ", ".join(args), dst,
                                               r.dt(v.attrs["dtype"]))
    if v.op == "astype":
        return "np.copyto(%s, %s, casting='unsafe')" % (dst, args[0])
    if v.op == "clip":
        return "np.clip(%s, %s, %s, out=%s)" % (args[0], args[1], args[2], dst)
    if v.op == "matmul":
        return "np.matmul(%s, %s, out=%s)" % (args[0], args[1], dst)
    raise AssertionError("not out-capable: %s" % v.op)


# --------------------------------------------------------------------------- groups
def _group_lines(g: Group, gi: int, r: HoistRenderer, p: Plan) -> List[str]:
    """A fused group: outputs allocated, then one blocked version per block axis ``k'``
    (the run-time sizes pick the outermost axis whose trailing block fits ``rt.BLOCK``);
    with a reduction, an unblocked version for non-contiguous operands."""
    ext: List[Node] = []
    for m in g.nodes:
        for i in m.input_nodes():
            if i not in g.members and i not in ext:
                ext.append(i)
    tune = "_TUNE%d" % gi
    r.ns[tune] = _cg.new_tune()
    L: List[str] = ["%s = %s" % (o.name, _alloc(o, r, p)) for o in g.outputs]
    if g.flat:
        for x in g.outputs:
            L.append("_f_%s = %s.reshape(-1)" % (x.name, x.name))
        for x in ext:
            if len(x.shape):
                L.append("_f_%s = %s.reshape(-1)" % (x.name, x.name))
        L.extend(_group_blocked(g, gi, None, r, tune))
    else:
        # a block axis of static size 1 never helps: its blocks are the whole array
        versions = [k for k in range(g.k + 1)
                    if not (type(g.prefix[k]) is int and g.prefix[k] == 1)] or [g.k]
        for j, k in enumerate(versions):
            body = _group_blocked(g, gi, k, r, tune)
            if j == len(versions) - 1:
                if j:
                    L.append("else:")
                    body = ["    " + x for x in body]
                L.extend(body)
                break
            inner = r.expr(numel(g.domain[k + 1:]))
            L.append("%s %s <= _cg.BLOCK:" % ("if" if j == 0 else "elif", inner))
            L.extend("    " + x for x in body)
    # Blocks write C-ordered buffers, as eager NumPy does only when the operands are
    # C-contiguous (its outputs follow the inputs' layout).  Layout decides the summation
    # order of any later reduction or product, and a reduction inside the group sums in an
    # order set by its input's layout: with any other operand layout the group runs as
    # eager does, so results stay bit for bit equal.
    #   A group of layout-free ops only (below) also runs in blocks over operands whose
    # strides are in C order with gaps (``x[..., ::2]``, a column slice ``qkv[:, :256]``,
    # a RoPE half): eager NumPy's results over them are C-ordered too, and those ops give
    # the same bits on strided and contiguous memory.
    free = _layout_free(g)
    arrays = [x.name for x in ext if len(x.shape)]
    if not arrays:
        return L
    plain = ["%s = %s" % (m.name, emit_node(m, r)) for m in g.nodes]
    test = ("(%s.flags.c_contiguous or _cg.c_ordered(%s))" if free else
            "%s.flags.c_contiguous")
    return ["if %s:" % " and ".join(test.replace("%s", a) for a in arrays)] + \
        ["    " + x for x in L] + ["else:"] + ["    " + x for x in plain]




def _layout_free(g: Group) -> bool:
    """No reduction (its summation order follows its input's layout) and only
    ``LAYOUT_FREE_OPS`` and views among the members of ``g``."""
    for m in g.nodes:
        kd = kind(m)
        if kd == "view":
            continue
        if kd != "ew" or m.op not in LAYOUT_FREE_OPS:
            return False
    return True


def _group_blocked(g: Group, gi: int, k: Optional[int], r: HoistRenderer, tune: str
                   ) -> List[str]:
    """The group in blocks along axis ``k`` (``None``: flat, all arrays viewed as 1-D)."""
    flat = k is None
    kk = 0 if flat else k
    tag = "%d_%s" % (gi, "f" if flat else k)
    R, NB, NBK = "_R" + tag, "_nb" + tag, "_nbk" + tag
    L, n_src, outer = _block_counts(g, k, r, R, NB, NBK)
    regs, reg_of = _registers(g, kk, flat)
    body: List[str] = []
    if regs:
        body.append("%s, = _sc" % ", ".join("_r%d" % j for j in range(len(regs))))
    body.append("for _b in range(_b0, _b1):")
    lp = _block_bounds(k, R, NBK, outer, n_src, len(regs))
    val: Dict[Node, str] = {}
    views: Dict[Tuple[Node, int], str] = {}

    def operand(x: Node, d: int) -> str:
        if x in val:
            return val[x]
        got = views.get((x, d))
        if got is not None:
            return got
        if flat:
            name = x.name
            if len(x.shape):
                name = "_e%d" % len(views)
                lp.append("%s = _f_%s[_lo:_hi]" % (name, x.name))
        else:
            items = _block_index(g, k, x, d)
            name = x.name
            if items is not None:
                name = "_e%d" % len(views)
                lp.append("%s = %s[%s]" % (name, x.name, items))
        views[(x, d)] = name
        return name

    for o in g.outputs:
        if flat:
            lp.append("_o_%s = _f_%s[_lo:_hi]" % (o.name, o.name))
        else:
            lp.append("_o_%s = %s[%s]" % (o.name, o.name, _block_index(g, k, o, 0, True)))
    for m in g.nodes:
        kd = kind(m)
        dst = ("_o_%s" % m.name) if m in g.outputs else None
        if kd == "view":
            src = operand(m.inputs[0], 0)
            items = m.attrs["index"].items[kk:]
            var = src
            if items:
                var = "_w_%s" % m.name
                lp.append("%s = %s[%s]" % (var, src, render_items(items, r.size)))
            val[m] = var
            continue
        if kd == "red":
            line, val[m] = _block_reduce(m, operand(m.inputs[0], 0), kk, dst, r)
            lp.append(line)
            continue
        rank = len(m.shape)
        args = [operand(x, rank - len(x.shape)) if type(x) is Node else r.value(x)
                for x in m.inputs]
        if dst is None and m in reg_of:
            dst = "_t%d" % reg_of[m]
        if m.op == "where":
            lines, val[m] = _block_where(m, args, dst, m in g.outputs)
            lp.extend(lines)
            continue
        lp.append(_out_call(m, args, dst, r))
        val[m] = dst
    body.extend("    " + x for x in lp)
    fn = "_g" + tag
    L.append("def %s(_b0, _b1, _sc):" % fn)
    L.extend("    " + x for x in body)
    shapes = []
    for dt, trail in regs:
        parts = [R] + [r.expr(x) for x in trail]
        shapes.append(("(%s%s)" % (", ".join(parts), "," if len(parts) == 1 else ""),
                       r.dt(dt)))

    def sc(suffix: str) -> str:
        return "[%s]" % ", ".join("_cg.buf(_scr, 'g%s_%d%s', %s, %s)" % (
            tag, j, suffix, shp, dt) for j, (shp, dt) in enumerate(shapes))

    # the work estimate (ns) decides whether two threads are worth measuring; views of a
    # block compute nothing
    work = "(%s) * %d" % (r.expr(numel(g.domain)),
                          group_ns(m for m in g.nodes if kind(m) != "view"))
    L.append("_cg.blocks(%s, %s, %s, %s, lambda: %s, %s)"
             % (tune, fn, NB, sc(""), sc("b"), work))
    return L


def ceildiv_py(a: str, b: str) -> str:
    """Python text of ``ceil(a / b)`` for the generated source (``E.ceildiv`` is the same
    division on values): the one place this backend spells it."""
    return "-(-%s // %s)" % (a, b)


def _block_counts(g: Group, k: Optional[int], r: HoistRenderer, R: str, NB: str, NBK: str):
    """The lines sizing the blocks (rows per block ``R``, blocks along the axis ``NBK``, in
    all ``NB``), the blocked axis' length and the outer axes' lengths (as code)."""
    L: List[str] = []
    if k is None:
        n_src = r.expr(numel(g.domain))
        outer: List[str] = []
        L.append("%s = _cg.rows(1, %s)" % (R, n_src))
    else:
        n_src = r.expr(g.prefix[k])
        outer = [r.expr(x) for x in g.prefix[:k]]
        L.append("%s = _cg.rows(%s, %s)" % (R, r.expr(numel(g.domain[k + 1:])), n_src))
    L.append("%s = %s" % (NBK, ceildiv_py(n_src, R)))
    L.append("%s = %s" % (NB, " * ".join([NBK] + outer)))
    return L, n_src, outer


def _block_bounds(k: Optional[int], R: str, NBK: str, outer: List[str], n_src: str,
                  nregs: int) -> List[str]:
    """The loop body's first lines: block ``_b``'s outer indices and rows ``_lo:_hi``, and
    the register scratch trimmed to a short last block."""
    lp: List[str] = []
    if k is None or k == 0:
        lp.append("_lo = _b * %s" % R)
    else:
        lp.append("_o, _q = divmod(_b, %s)" % NBK)
        for a in range(k - 1, 0, -1):
            lp.append("_o, _i%d = divmod(_o, %s)" % (a, outer[a]))
        lp.append("_i0 = _o")
        lp.append("_lo = _q * %s" % R)
    lp.append("_hi = _lo + %s" % R)
    lp.append("if _hi > %s: _hi = %s" % (n_src, n_src))
    if nregs:
        lp.append("_m = _hi - _lo")
        for j in range(nregs):
            lp.append("_t%d = _r%d if _m == %s else _r%d[:_m]" % (j, j, R, j))
    return lp


def _block_reduce(m: Node, src: str, kk: int, dst: Optional[str], r: HoistRenderer):
    """A reduction over one block's view ``src`` (axes shifted by the ``kk`` outer axes the
    block fixes): its line and the variable holding its value (``dst`` when given)."""
    kw = ["axis=%s" % r.value(tuple(a - kk for a in m.attrs["axis"]))]
    if m.attrs.get("keepdims"):
        kw.append("keepdims=True")
    if "dtype" in m.attrs:
        kw.append("dtype=%s" % r.dt(m.attrs["dtype"]))
    if "ddof" in m.attrs:
        kw.append("ddof=%s" % r.value(m.attrs["ddof"]))
    if dst is not None:
        return "%s.%s(%s, out=%s)" % (src, m.op, ", ".join(kw), dst), dst
    var = "_v_%s" % m.name
    return "%s = %s.%s(%s)" % (var, src, m.op, ", ".join(kw)), var


def _block_where(m: Node, args: List[str], dst: Optional[str], is_output: bool):
    """``np.where`` in a block: two masked copies into ``dst`` when the condition is a
    boolean array, else ``np.where`` (copied into ``dst`` for an output); the lines and
    the variable holding the value."""
    c = m.inputs[0]
    if type(c) is Node and c.dtype == np.dtype(bool) and dst is not None:
        return ["np.copyto(%s, %s, casting='unsafe')" % (dst, args[2]),
                "np.copyto(%s, %s, casting='unsafe', where=%s)" % (dst, args[1], args[0])], dst
    var = "_v_%s" % m.name
    lines = ["%s = np.where(%s, %s, %s)" % (var, args[0], args[1], args[2])]
    if is_output:
        lines.append("np.copyto(%s, %s)" % (dst, var))
        var = dst
    return lines, var


def _block_index(g: Group, k: int, x: Node, d: int, full: bool = False) -> Optional[str]:
    """The subscript selecting block (outer indices, rows _lo:_hi) of operand ``x`` (right
    aligned at offset ``d``) when blocking along axis ``k``; None when it is used whole."""
    items = []
    trivial = True
    for a in range(k + 1):
        ax = a - d
        if ax < 0:
            continue
        s = x.shape[ax]
        is_full = full or (type(s) is type(g.prefix[a]) and s == g.prefix[a])
        if a < k:
            items.append("_i%d" % a if is_full else "0")
            trivial = False
        else:
            items.append("_lo:_hi" if is_full else ":")
            trivial = trivial and not is_full
    if not items or trivial:
        return None
    return ", ".join(items)


def _registers(g: Group, k: int, flat: bool):
    """Block scratch registers for elementwise temporaries; reuse when lifetimes allow."""
    order = {m: i for i, m in enumerate(g.nodes)}
    alias: Dict[Node, Node] = {}          # view member -> root member it views
    for m in g.nodes:
        if kind(m) == "view" and m.inputs[0] in g.members:
            src = m.inputs[0]
            alias[m] = alias.get(src, src)
    last: Dict[Node, int] = {}
    for m in g.nodes:
        for i in m.input_nodes():
            if i in g.members:
                root = alias.get(i, i)
                last[root] = max(last.get(root, -1), order[m])
    regs: List[tuple] = []
    reg_of: Dict[Node, int] = {}
    free: List[int] = []
    holder: Dict[int, Node] = {}
    for m in g.nodes:
        if kind(m) != "ew" or m in g.outputs:
            continue
        key = (m.dtype, ()) if flat else (m.dtype, tuple(m.shape[k + 1:]))
        i = order[m]
        for j, h in list(holder.items()):        # registers whose value is dead by now
            if last.get(h, -1) < i:
                free.append(j)
                del holder[j]
        slot = None
        if m.op != "where":                      # ufuncs may write over their operand
            for x in m.input_nodes():
                root = alias.get(x, x)
                j = reg_of.get(root)
                if j is not None and x is root and last.get(root) == i and \
                        regs[j] == key and holder.get(j) is root:
                    slot = j
                    break
        if slot is None:
            for j in free:
                if regs[j] == key:
                    slot = j
                    free.remove(j)
                    break
        if slot is None:
            slot = len(regs)
            regs.append(key)
        reg_of[m] = slot
        holder[slot] = m
    return regs, reg_of
