"""``export()``: spec -> shape environment -> trace -> finalize -> ExportedProgram.

A dynamic axis gets a symbol (``create_symbol``); a named Dim gets one symbol shared by all
its uses; a derived dim ``A*d + B`` is that expression over ``d``'s symbol.  Example sizes
0 and 1 of AUTO axes are specialised.  After tracing, the spec is compared with what the
environment learned (``symshape.specs.constraints``); a violation raises
``ConstraintViolationError`` whose fixes were re-verified by exporting again with them.
"""
from __future__ import annotations

import contextlib
import inspect
import io
import logging
import sys
import types
import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from symshape.specs.annotation_returns import OutputInfo, check_returns
from symshape.specs.annotations import annotation_notes, resolve_call, without_runtime_checks
from symshape import named_results
from symshape.specs import pytree
from symshape.specs.constraints import Report, analyze, specialized_axes
from symshape.reasoning.env import ShapeEnv
from symshape.errors import ConstraintViolationError, InternalError, UserError
from symshape.algebra.expr import Sym
from symshape.reasoning import validate
from symshape.contract import validate as contract_validate
from symshape.contract.constraint_set import ConstraintSet, InputDesc, OfClass, keys_text
from symshape.contract.writer import CheckWriter
from symshape.sizes.checks import runtime_condition
from symshape.algebra.ranges import ValueRange
from symshape.specs.matching import InputLeaf, bind_inputs, match
from symshape.sizes.symfloat import SymFloat
from symshape.sizes.symint import SymInt
from symshape.logs import dynamic_log
from symshape.algebra.infinity import INT_OO, NEG_INT_OO

from .ops import families
from . import STAGES
from .untraceable import raise_untraceable
from .ir import Graph, Node
from .program import ExportedProgram, Signature
from .finalize import finalize_node, simplify_value
from .namespace import sizes_routed
from .state.objstate import AppendOnly, plain_value
from .state.session import StateSession
from .state import stateprog
from . import randomness, scipy_ops
from .tracer import TracedArray, Tracer
from .loop_convert import LoopFound, Swapped, converting, while_found
from .loops import repeated_list

families()          # every op's handler and op-table row, before any use

MAX_FIX_ROUNDS = 4


def export(f, args: tuple = (), kwargs: Optional[dict] = None, *, dynamic_shapes=None
           ) -> ExportedProgram:
    """Trace ``f(*args, **kwargs)`` and return its ExportedProgram (docs/api.md)."""
    # a spec read from shape annotations (ss.from_annotations) is resolved against the
    # example inputs here, and its return annotation proven after tracing
    annotated, dynamic_shapes = dynamic_shapes, resolve_call(f, args, kwargs, dynamic_shapes)
    f = without_runtime_checks(f)       # a jaxtyping checker cannot see traced arrays
    result = trace_program(f, args, kwargs, dynamic_shapes)
    if result.report.violations:
        fixes, notes = _verified_fixes(f, args, kwargs, dynamic_shapes, result.report)
        raise ConstraintViolationError(result.report.violations, fixes,
                                       result.report.notes + notes +
                                       annotation_notes(annotated, fixes))
    check_returns(annotated, result.env, *_returned(result.program))
    return result.program


def _returned(program: ExportedProgram):
    """(what each output is, the symbolic shape of each user input) for check_returns."""
    outs = [OutputInfo(o.shape, o.dtype) if type(o) is Node
            else OutputInfo(None, o) for o in program.graph.outputs]
    shapes = {n.attrs.get("path"): n.shape for n in program.graph.nodes
              if n.op == "input" and n.shape is not None}
    return outs, shapes


class Traced:
    def __init__(self, program: ExportedProgram, report: Report, env: ShapeEnv) -> None:
        self.program = program
        self.report = report
        self.env = env


def _verified_fixes(f, args, kwargs, spec, report: Report):
    """Apply the fixes, export again, and keep them only if no violation remains.  An
    alternative (mark a static axis with the Dim, rather than make the Dim static) is
    tried first and wins when it verifies."""
    for alt in report.alternatives:
        fixes = [alt.by if x == alt.replaces else x for x in report.fixes]
        verified = _verify(f, args, kwargs, spec, fixes)[0] if alt.by in fixes else []
        if verified:
            return verified, [alt.note]
    return _verify(f, args, kwargs, spec, list(report.fixes))


def _verify(f, args, kwargs, spec, fixes):
    """(the fixes, grown by what each re-export asks, that leave no violation, []) or
    ([], a note saying no fix verified)."""
    fixes = list(fixes)
    for _ in range(MAX_FIX_ROUNDS):
        fixed = spec
        try:
            for fix in fixes:
                fixed = fix.apply(fixed)
            with _verifying(len(fixes)):
                again = trace_program(f, args, kwargs, fixed)
        except UserError as e:
            return [], ["symshape found no fix it could verify (%s)." % str(e).splitlines()[0]]
        if not again.report.violations:
            return fixes, []
        new = [x for x in again.report.fixes if x not in fixes]
        if not new:
            break
        fixes += new
    return [], ["symshape found no fix it could verify; adjust the spec by hand as the "
                "violations describe."]


class _Verifying(logging.Filter):
    """Labels the records of a re-export that verifies fixes, so its log is never read as
    the user's export repeating itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = "[verifying fixes] %s" % record.msg
        return True


class _verifying:
    """Within the block, the symbol and guard log is labelled (and specialisation warnings,
    already shown for the user's export, drop to DEBUG)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __enter__(self):
        self.log = dynamic_log
        self.log.debug("verifying %d suggested fix(es) by exporting again", self.n)
        self.filter = _Verifying()
        self.quiet = _BelowWarning()
        self.log.addFilter(self.filter)
        self.log.addFilter(self.quiet)
        return self

    def __exit__(self, *exc) -> None:
        self.log.removeFilter(self.filter)
        self.log.removeFilter(self.quiet)


class _BelowWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


# --------------------------------------------------------------------------- constants
def constant_names(f) -> Dict[int, str]:
    """id(array) -> the global / closure / attribute name through which ``f`` reaches it."""
    names: Dict[int, str] = {}
    fn = f
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    owner = getattr(fn, "__self__", None)
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        call = getattr(type(f), "__call__", None)
        owner = f
        fn = getattr(call, "__func__", call)
        if not isinstance(fn, types.FunctionType):
            return names
    code_names = set()
    stack = [fn.__code__]
    while stack:
        c = stack.pop()
        code_names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    g = fn.__globals__
    for n in code_names:
        if n in g:
            _collect(names, n, g[n], code_names)
    if fn.__closure__:
        for n, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                _collect(names, n, cell.cell_contents, code_names)
            except ValueError:
                pass
    if owner is not None and hasattr(owner, "__dict__"):
        for n, v in vars(owner).items():
            if isinstance(v, np.ndarray):
                names.setdefault(id(v), n)
    return names


def _named_as_tuples(v):
    """The program's outputs with every named tuple rebuilt from its items (NumPy's results
    and the user's own keep their type, which the output structure records by name: see
    ``symshape.named_results``); other tuple subclasses come back as plain tuples."""
    t = type(v)
    if isinstance(v, tuple) and t is not tuple:
        items = tuple(_named_as_tuples(x) for x in v)
        return t(*items) if named_results.is_named_tuple(t) else items
    if t is tuple or t is list:
        return t(_named_as_tuples(x) for x in v)
    if t is dict:
        return {k: _named_as_tuples(x) for k, x in v.items()}
    return v


def _collect(names: Dict[int, str], n: str, v, attrs: set) -> None:
    if isinstance(v, np.ndarray):
        names.setdefault(id(v), n)
    elif isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, np.ndarray) and isinstance(k, str):
                names.setdefault(id(x), "%s_%s" % (n, k))
    elif isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            if isinstance(x, np.ndarray):
                names.setdefault(id(x), "%s_%d" % (n, i))
    elif hasattr(v, "__dict__") and not isinstance(v, type):
        for a in attrs:
            x = getattr(v, a, None) if not isinstance(v, types.ModuleType) else \
                vars(v).get(a)
            if isinstance(x, np.ndarray):
                names.setdefault(id(x), "%s_%s" % (n, a) if not isinstance(
                    v, types.ModuleType) else a)


# --------------------------------------------------------------------------- tracing
def trace_program(f, args, kwargs, dynamic_shapes, tracked: frozenset = frozenset()
                  ) -> Traced:
    """Trace ``f`` once; a second time when it both reads and writes Python numbers in
    its state (``self.t += 1``), with those read as tracked numbers so the write is
    replayed with the same arithmetic (capture/state/objstate.py)."""
    swapped = Swapped()
    try:
        with converting():
            traced, again = _converting_loops(swapped, f, args, kwargs, dynamic_shapes,
                                              tracked)
            if again:
                # the first trace printed and warned already: the second is silent (print
                # runs once at trace time, as in torch.export)
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    traced, _ = _converting_loops(swapped, f, args, kwargs, dynamic_shapes,
                                                  tracked | again)
    finally:
        swapped.restore()
    return traced


def _converting_loops(swapped: Swapped, f, args, kwargs, dynamic_shapes, tracked):
    """Trace; where a ``for`` loop over a symbolic count starts, convert the function that
    holds it (capture/loop_convert.py) and trace again (the aborted trace restored the
    user's objects on its way out, as any failed trace does)."""
    printed = _Printed()
    while True:
        try:
            with printed.attempt():
                return _trace_program(f, args, kwargs, dynamic_shapes, tracked)
        except LoopFound as found:
            if not swapped.convert(found):
                raise InternalError("the loop at line %d of %s was found twice"
                                    % (found.lineno, found.code.co_name)) from None


class _Printed:
    """What the program prints, once: a trace aborted at a loop printed the beginning of
    it already, so a trace again prints only what comes after (print runs once at trace
    time, as in torch.export)."""

    def __init__(self) -> None:
        self.shown = ""

    @contextlib.contextmanager
    def attempt(self):
        """One trace: live (and recorded) the first time; captured later, and only what
        the earlier ones did not show is printed."""
        real = sys.stdout
        if not self.shown:
            tee = _Tee(real)
            with contextlib.redirect_stdout(tee):
                try:
                    yield
                finally:
                    self.shown = tee.text.getvalue()
            return
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                yield
        finally:
            text = buf.getvalue()
            real.write(text[len(self.shown):] if text.startswith(self.shown) else text)
            self.shown = text if text.startswith(self.shown) else self.shown + text


class _Tee:
    """Writes through to ``real`` and keeps a copy; everything else (``isatty``, ``buffer``,
    ``encoding``, ``fileno``) is the real stream's, so the program sees the stream it
    would see without a trace."""

    def __init__(self, real) -> None:
        self.real = real
        self.text = io.StringIO()

    def write(self, s: str) -> int:
        self.text.write(s)
        return self.real.write(s)

    def __getattr__(self, name):
        return getattr(self.real, name)


def _trace_program(f, args, kwargs, dynamic_shapes, tracked: frozenset):
    if not callable(f):
        raise UserError("export: f must be callable, got %s" % type(f).__name__)
    if isinstance(args, list):
        args = tuple(args)
    if not isinstance(args, tuple):
        raise UserError("export: args must be a tuple of example inputs, got %s (write "
                        "(x,) for a single input)" % type(args).__name__)
    if kwargs is not None and not isinstance(kwargs, dict):
        raise UserError("export: kwargs must be a dict of keyword arguments, got %s (pass "
                        "dynamic_shapes= by keyword: export(f, args, dynamic_shapes=...))"
                        % type(kwargs).__name__)
    kwargs = dict(kwargs or {})
    sig, inputs = bind_inputs(f, args, kwargs)
    leaves = match(inputs, dynamic_shapes)
    env = ShapeEnv()
    env.repeat_hook = repeated_list
    env.guard_hook = while_found
    tracer = Tracer(env, constant_names(f))
    graph = tracer.graph
    for name in inputs:
        graph.reserve(name)
    axis_syms: Dict[Tuple[int, int], Sym] = {}
    values, input_nodes = _allocate(env, tracer, leaves, axis_syms)
    new_inputs = _rebuild_inputs(inputs, values)
    state = StateSession(tracer.state_proxy, _stand_in(tracer), tracked)
    rec, binding = state.recorder, state.binding
    try:
        # containers and objects passed as arguments are recorded like state
        new_inputs = state.bind(f, new_inputs, _recorded_argument)
        if sig is not None:
            bound = inspect.BoundArguments(sig, new_inputs)
            call_args, call_kwargs = bound.args, bound.kwargs
        else:
            call_args, call_kwargs = tuple(new_inputs.values()), {}
        views = state.start(tracer)
        with state.recording(), sizes_routed(state.global_dicts, tracer), \
                randomness.drawing(tracer):
            returned = out = _run_traced(tracer, f, call_args, call_kwargs)
            # inside the recording: a tracked number returned (``return self.t`` after
            # ``self.t += 1``) is a constant of this trace, so its reads are guarded
            out = plain_value(out)
        env.commit_pending()
        out_leaves, out_spec = pytree.flatten(_named_as_tuples(out), named=True)
        graph.outputs = [_output(tracer, v) for _, v in out_leaves]
        sp, again = state.finish(tracer, views, returned)
    finally:
        state.restore()
    graph.out_spec = out_spec
    mutations = [(n, tracer.final_value(n)) for n in input_nodes + tracer.state_nodes
                 if tracer.final_value(n) is not n]
    kept = [v for v in sp.slots if type(v) is Node] + \
        [sp.nodes[i] for i in sp.referenced_arrays()]
    _finalize_graph(env, graph, mutations, kept)
    sp.slots = [v if type(v) is Node else env.simplify(v) for v in sp.slots]
    sp.keep_only(graph.constants, graph.nodes)
    report = analyze(env, leaves, axis_syms)
    cs = _constraint_set(env, leaves, input_nodes, _leaf_places(inputs))
    cs.specialized = specialized_axes(env, leaves, axis_syms)
    cs.trees = {name: pytree.flatten(v)[1] for name, v in inputs.items()
                if type(v) in (list, tuple, dict)}
    if sig is not None and inputs.configured:
        cs.configured = {n: sig.parameters[n].default for n in inputs.configured}
    if validate.enabled():
        validate.validate_guards(env, cs)
        writer = CheckWriter(cs)
        writer.emit()
        contract_validate.validate_check(cs, writer)
        # the generated code's own checks: the code generator, a layer above, reads them
        STAGES["validate_generated"](env, cs, graph, writer)
    rebinds = [(target, sp.nodes[v.index].name if type(v) in (stateprog.StateArray,
                                                               stateprog.ViewOf) else
                 sp.slots[v.index].name if type(sp.slots[v.index]) is Node else
                 str(sp.slots[v.index])) for target, v in sp.rebinds()
               if type(v) is not stateprog.CopyOf]
    program = ExportedProgram(graph, Signature(graph, input_nodes, leaves, mutations, rebinds),
                              cs, sig, getattr(f, "__name__", "f"), env)
    # the JIT's identity guards on globals and cells: not for what is read through paths
    # (arrays, recorded containers and objects) or guarded by value (scalars)
    program.name_reads = [r for r in binding.reads if not _read_through_paths(r[3], rec)]
    program.state_program = None if sp.empty else sp
    program.eager_function = f
    return Traced(program, report, env), again


def _stand_in(tracer: Tracer):
    """What model state sees in place of a value: a generator's proxy
    (``capture/randomness.py``), a held SciPy function that traces its calls
    (``capture/scipy_ops.py``), else the value itself (None)."""
    generators, scipy_functions = randomness.stand_in(tracer), scipy_ops.stand_in(tracer)

    def replace(v, path: str):
        new = generators(v, path)
        return new if new is not None else scipy_functions(v, path)
    return replace


def _recorded_argument(v) -> bool:
    """An argument recorded like state: a list or dict, or an object of the user's."""
    t = type(v)
    if t is list or t is dict or t is AppendOnly:
        return True
    return hasattr(v, "__dict__") and not isinstance(v, (type, types.ModuleType,
                                                          types.FunctionType, TracedArray)) \
        and not callable(v) and (getattr(t, "__module__", "") or "").split(".")[0] not in \
        ("numpy", "symshape", "builtins")


def _read_through_paths(obj, rec) -> bool:
    return isinstance(obj, np.ndarray) or type(obj) in (int, float, complex, bool, str) or \
        rec.stand_in_for(obj) is not None or rec.path_of(obj) is not None


def _allocate(env: ShapeEnv, tracer: Tracer, leaves: List[InputLeaf], axis_syms):
    values: List[Any] = []
    input_nodes: List[Node] = []
    roots: Dict[str, Tuple[Sym, Any]] = {}
    for li, leaf in enumerate(leaves):
        if leaf.scalar_decl is not None:
            v = _int_symbol(env, li, leaf, roots, axis_syms)
            values.append(v)
            input_nodes.append(tracer.graph.create("input", (), {"path": leaf.path},
                                                   None, None, None, name=leaf.path))
            input_nodes[-1].attrs["symint"] = v.expr if type(v) is SymInt else v
            continue
        if randomness.is_generator(leaf.value):
            node = tracer.graph.create("input", (), {"path": leaf.path}, np.dtype(object), (),
                                       None, name=leaf.path)
            node.attrs["generator"] = randomness.generator_kind(leaf.value)
            values.append(randomness.argument_proxy(tracer, node, leaf.path))
            input_nodes.append(node)
            continue
        if not leaf.is_array:
            values.append(leaf.value)
            input_nodes.append(tracer.graph.create("input", (), {"path": leaf.path,
                                                                 "value": leaf.value},
                                                   None, None, None, name=leaf.path))
            continue
        shape = []
        for ax, decl in enumerate(leaf.axes):
            shape.append(_axis_size(env, li, leaf, ax, decl, roots, axis_syms))
        arr = leaf.value
        node = tracer.graph.create("input", (), {"path": leaf.path}, arr.dtype,
                                   tuple(s.expr if type(s) is SymInt else s for s in shape),
                                   None, name=leaf.path)
        proxy = TracedArray(tracer, node, tuple(shape), arr.dtype)
        tracer.input_proxies[id(proxy)] = node
        tracer.final[node] = node
        tracer.examples[node] = arr
        values.append(proxy)
        input_nodes.append(node)
    return values, input_nodes


def _axis_size(env, li: int, leaf: InputLeaf, ax: int, decl, roots, axis_syms):
    size = decl.value
    where_ = leaf.axis_name(ax)
    if decl.kind == "static":
        return size
    if decl.kind in ("auto", "dynamic"):
        if size in (0, 1):
            if decl.kind == "dynamic":
                raise UserError(
                    "%s is marked Dim.DYNAMIC, but its example size is %d: export specializes "
                    "sizes 0 and 1. Use an example of size >= 2, or a Dim with min=%d."
                    % (where_, size, size))
            return size
        s = env.create_symbol(size, where_, kind=decl.kind)
        axis_syms[(li, ax)] = s
        return SymInt(s.expr, size, env)
    if decl.kind == "named":
        dim = decl.dim
        root = _root(env, dim, size, where_, roots)
        return SymInt(root.expr, size, env)
    # derived: coeff*root + offset
    d = decl.dim
    root_val = d.solve(size)
    root = _root(env, d.root, root_val, d.root.name, roots, derived_at=where_)
    return SymInt(root.expr * d.coeff + d.offset, size, env)


def _int_symbol(env: ShapeEnv, li: int, leaf: InputLeaf, roots, axis_syms):
    """A Python int input marked dynamic: a symbol over all ints (or the Dim's range)."""
    decl = leaf.scalar_decl
    if decl.kind == "named":
        dim = decl.dim
        got = roots.get(dim.name)
        if got is None:
            # a named Dim means the same range on an int as on an axis ([2, int_oo] unless
            # bounded), so the spec and the symbol agree on what is admitted
            if not dim.range.lower <= leaf.value <= dim.range.upper:
                raise UserError("%s = %d is outside the range [%s, %s] of Dim %r; give the Dim "
                                "min=/max= that include it" % (leaf.path, leaf.value,
                                                              dim.range.lower, dim.range.upper,
                                                              dim.name))
            sym = env.create_symbol(leaf.value, leaf.path, dim.range, kind="named", dim=dim)
            roots[dim.name] = (sym, dim)
            return SymInt(sym.expr, leaf.value, env)
        return SymInt(_root(env, dim, leaf.value, leaf.path, roots).expr, leaf.value, env)
    sym = env.create_symbol(leaf.value, leaf.path, ValueRange(NEG_INT_OO, INT_OO),
                            kind=decl.kind)
    axis_syms[(li, None)] = sym
    return SymInt(sym.expr, leaf.value, env)


def _root(env: ShapeEnv, dim, value: int, source: str, roots, derived_at=None) -> Sym:
    got = roots.get(dim.name)
    if got is not None:
        sym, first = got
        if first != dim:
            raise UserError("two different Dims are named %r (%r and %r); a name stands for one "
                            "dimension" % (dim.name, first, dim))
        hint = env.infos[sym].hint
        if hint != value:
            where_ = derived_at or source
            raise UserError("%s gives %s = %d, but an earlier use of Dim %r has size %d; the "
                            "uses of one Dim must have equal example sizes"
                            % (where_, dim.name, value, dim.name, hint))
        return sym
    if value in (0, 1) and dim.min is None:
        raise UserError("%s: example size %d for Dim %r; export specializes sizes 0 and 1. "
                        "Use an example of size >= 2, or Dim(%r, min=%d)"
                        % (source, value, dim.name, dim.name, value))
    sym = env.create_symbol(value, source, dim.range, kind="named", dim=dim)
    roots[dim.name] = (sym, dim)
    return sym


def _rebuild_inputs(inputs: Dict[str, Any], values: List[Any]) -> Dict[str, Any]:
    it = iter(values)
    out: Dict[str, Any] = {}
    for name, v in inputs.items():
        leaves, spec = pytree.flatten(v)
        out[name] = pytree.unflatten([next(it) for _ in leaves], spec)
    return out


def _output(tracer: Tracer, v):
    if type(v) is TracedArray:
        if _created_constant(tracer, v):
            # an array the program creates (``acc = np.zeros(3)``, folded into a constant)
            # is a new array on every call in eager NumPy: returning the constant itself
            # would hand every call the same buffer (a caller's ``acc += v`` would
            # accumulate across calls)
            return tracer.emit("copy", (v.node,), {}, v.shape, v.dtype).node
        return v.node
    if isinstance(v, np.ndarray):
        # an array the program created with static sizes (``acc = np.zeros(3)``): a new
        # array on every call in eager NumPy, so a copy of the constant, never the
        # constant itself (a caller's ``acc += v`` would accumulate across calls)
        c = tracer.constant(v)
        return tracer.emit("copy", (c.node,), {}, c.shape, c.dtype).node
    if type(v) is SymInt:
        return tracer.env.simplify(v.expr)
    if type(v) is SymFloat:         # a float computed from sizes (n / 2): computed at run time
        return v.fexpr.map_sizes(tracer.env.simplify)
    if v is None or isinstance(v, (bool, int, float, complex, str, np.generic)):
        return v
    raise UserError("the function returned a %s; export supports arrays, sizes, Python "
                    "scalars and lists / tuples / dicts of them" % type(v).__name__)


def _created_constant(tracer: Tracer, v: TracedArray) -> bool:
    """Whether ``v`` is a constant the program created, or a view of one (not state)."""
    while v.view is not None and type(v.view.parent) is TracedArray:
        v = v.view.parent
    return v.node.op == "constant" and v.node not in tracer.state_nodes


# --------------------------------------------------------------------------- finalize
def _constants_first_used_first(nodes: List[Node]) -> List[Node]:
    """Constants and state (which have no inputs) lead the graph in the order the program
    first uses them, so the signature and ``ep.state`` read like the user's code."""
    first: Dict[Node, int] = {}
    for i, n in enumerate(nodes):
        for x in n.input_nodes():
            first.setdefault(x, i)
    consts = sorted((n for n in nodes if n.op == "constant"),
                    key=lambda n: first.get(n, len(nodes)))
    return consts + [n for n in nodes if n.op != "constant"]


def _run_traced(tracer: Tracer, f, args, kwargs):
    """``f(*args, **kwargs)`` on traced values; a TypeError / AttributeError (or NumPy's
    ValueError for a traced value stored into a plain array) a traced array caused in code
    that cannot take one is a UserError (under ss.compile: a graph break)."""
    try:
        return f(*args, **kwargs)
    except (TypeError, AttributeError, ValueError) as e:
        if tracer.breaker is None:
            raise_untraceable(e)
        raise


def _finalize_graph(env: ShapeEnv, graph: Graph, mutations, kept=()) -> None:
    live = set()
    roots = [o for o in graph.outputs if type(o) is Node] + [n for pair in mutations
                                                             for n in pair] + list(kept)
    # nodes that compute a data-dependent size stay: later shapes and checks need it
    roots += [n for n in graph.nodes if "binds" in n.meta or "binds_value" in n.meta]
    # a random draw advances its generator whether or not its numbers are used
    roots += [n for n in graph.nodes if n.meta.get("effect")]
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in live:
            continue
        live.add(n)
        stack.extend(n.input_nodes())
    graph.nodes = _constants_first_used_first(
        [n for n in graph.nodes if n in live or n.op == "input"])
    for n in graph.nodes:
        finalize_node(env, n)
    graph.outputs = [simplify_value(env, o) for o in graph.outputs]


def _leaf_places(inputs: Dict[str, Any]) -> List[tuple]:
    """``(parameter, container keys)`` of every input leaf, in the order ``match`` lists
    them (lists, tuples and dicts are walked; anything else is a leaf)."""
    out: List[tuple] = []

    def go(v, param, keys):
        t = type(v)
        if t is list or t is tuple or t is dict:
            for k in (list(v) if t is dict else range(len(v))):
                go(v[k], param, keys + (k,))
        else:
            out.append((param, keys))
    for name, v in inputs.items():
        go(v, name, ())
    return out


def _constraint_set(env: ShapeEnv, leaves: List[InputLeaf], input_nodes: List[Node],
                    places: List[tuple]) -> ConstraintSet:
    descs = []
    for leaf, node, access in zip(leaves, input_nodes, places):
        if access[0] + keys_text(access[1]) != leaf.path:
            raise InternalError("input %s is not reached as %r" % (leaf.path, access))
        if "symint" in node.attrs:
            descs.append(InputDesc(leaf.path, access, sym=env.simplify(node.attrs["symint"])))
        elif leaf.is_array:
            descs.append(InputDesc(leaf.path, access, dims=node.shape,
                                   dtype=leaf.value.dtype))
        elif "generator" in node.attrs:
            descs.append(InputDesc(leaf.path, access, value=OfClass(type(leaf.value))))
        elif type(leaf.value) is AppendOnly:      # any list: the program only appends to it
            descs.append(InputDesc(leaf.path, access, value=OfClass(list)))
        else:
            descs.append(InputDesc(leaf.path, access, value=leaf.value))
    # facts about data-dependent sizes hold by construction (u <= numel) or are ss.check
    # assertions checked when the size is computed; the input check covers the rest
    facts = [f for f in env.facts if not any(s.unbacked for s in f.free_symbols)]
    frames = {f: env.fact_guards[f].frame for f in facts if f in env.fact_guards}
    dim_names = {s: i.dim.name for s, i in env.infos.items() if i.kind == "named" and i.dim}
    ranges = {s: env.ranges[s] for s in env.ranges if s not in env.replacements}
    cs = ConstraintSet(descs, ranges, facts, frames, dim_names)
    cs.runtime_checks = [(runtime_condition(env, c), "%s%s" % (
        c.format(env.user_label, py=True) + ((": " + msg) if msg else ""),
        (" (ss.check at %s)" % frame.location) if frame else ""))
        for c, msg, frame in env.checks if not isinstance(runtime_condition(env, c), bool)]
    for c, _ in cs.runtime_checks:         # a solved check keeps its size: keep its range
        for s in c.free_symbols:
            cs.ranges.setdefault(s, env.ranges[s])
    return cs


