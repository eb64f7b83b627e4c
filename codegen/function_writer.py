"""One function writer: how every backend turns a program into Python functions.

``ep.module()`` (``pycode``), ``ep.compile()`` (NumPy), the CuPy driver and the dask entry
point all generate the same kind of code: a function with ``f``'s signature that checks its
inputs (binding the size symbols), computes, writes in-place mutations back and returns the
outputs in ``f``'s structure; and, for the JIT's dispatcher, a *core* function taking the
plain parameters and the bound size symbols that skips the check.  This module writes
those functions; a backend gives only what differs, its body:

* ``FunctionSpec`` describes the function to write: name, signature (or plain
  parameters), the constraints its input check enforces and the graph inputs they bind,
  the outputs and their structure, the write-backs, whether a core is wanted, the
  namespace, the filename label (``program_spec(ep)`` fills it for an ExportedProgram);
* ``write(spec, body)`` writes the input check (``input_check``), calls ``body(ctx)`` (a
  ``Writing``: the bound symbols, the namespace, ``finish`` for write-backs and the
  return) for the body lines, assembles the ``def``s, and compiles them with
  ``compile_function`` (a ``linecache`` entry: tracebacks show the generated lines);
* the result is a ``GeneratedFunction`` (sources, parts, names, namespace, callables),
  the one record class the backends' program classes extend.

Parameters named like something generated code uses (``type``, ``np``, ``s0``, any name
starting with an underscore: see ``ir.used_by_generated_code``) are handled here once
(``renames``): the body is written with renamed parameters and a forwarding function keeps
the user's signature, while the input check's records and messages keep the user's names
(only their rendering reads the renamed parameters); the JIT's
dispatcher, a function of the user's signature too, is written by ``signature_function``
with the same names.  Temporaries are freed after their last use by one algorithm
(``last_uses`` / ``releases``), as eager code's reference counts would free them.
"""
from __future__ import annotations

import inspect
import linecache
import re
import threading
import warnings
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from symshape import named_results
from symshape.reasoning import validate
from symshape.contract import validate as contract_validate
from symshape.contract.constraint_set import ConstraintSet, keys_text
from symshape.contract.input_check import InputCheck
from symshape.contract.writer import CheckWriter

from symshape.capture.ir import Node, used_by_generated_code

# Generated files are named ``<symshape f #3>``.  CPython keeps every distinct filename a
# code object was compiled under for the rest of the process (about 66 bytes each), so a
# fresh number per program would grow memory with every export; a number is reused once
# every function compiled under it is gone (``_LIVE`` counts them, under ``_LOCK``).
_LIVE: Dict[str, int] = {}
_LOCK = threading.RLock()

#: what a clashing parameter is called inside the body (``type`` -> ``_p_type``)
RENAMED_PREFIX = "_p_"
#: the function holding the body when the public one forwards to it
INNER_NAME = "_impl"


# --------------------------------------------------------------------------- records
@dataclass
class RenderedCheck:
    """The input check (``symshape.contract.input_check.InputCheck``, the one check concept) as the
    Python one function runs: its lines (which bind the size symbols), the constants they
    read, the symbols bound (in binding order) and the aliases the core runs instead
    (``x = params['x']``: the check binds array inputs to their node names)."""

    lines: List[str]
    consts: Dict[str, Any]
    bound: List[Any]
    aliases: List[str]
    check: Optional[InputCheck] = None    # the typed records the lines render


def input_check(cs: ConstraintSet, names: Sequence[Optional[str]],
                ren: Optional[Dict[str, str]] = None) -> RenderedCheck:
    """The check of ``cs``, binding array input ``i`` to the variable ``names[i]``
    (None: the check's own temporary); a parameter is read by the name ``ren`` gives it
    inside the function (its records and messages keep the user's name)."""
    writer = CheckWriter(cs)
    if ren:
        writer.param = lambda p: ren.get(p, p)
    aliases: List[str] = []
    for desc, name in zip(cs.inputs, names):
        if desc.is_array and name is not None:
            writer.var_names[id(desc)] = name
            access = writer.access(desc)
            if name != access:
                aliases.append("%s = %s" % (name, access))
    lines = list(writer.emit())
    if validate.enabled():
        # the text this function will run, parsed back, accepts exactly the contract
        contract_validate.validate_check_text(cs, lines, {writer.param(d.param) for d in cs.inputs} |
                                     {writer.param(p) for p in cs.configured})
    return RenderedCheck(lines, dict(writer.consts), list(writer.bound), aliases,
                         writer.input_check())


class GeneratedFunction:
    """What the writer generated: the checked function (``source``, ``full``) with the
    user's signature, and the core (``core_source``, ``core``) taking ``param_names`` then
    ``sym_names``; ``check_lines`` / ``alias_lines`` / ``body`` are its parts, ``ns`` the
    namespace both run in.  Backends' program classes extend it."""

    def __init__(self) -> None:
        self.name = ""
        self.source = ""              # the checked function (what users read)
        self.core_name = ""
        self.core_source = ""         # "" when no core was asked for
        self.ns: Dict[str, Any] = {}
        self.check_lines: List[str] = []
        self.input_check = None       # the check's records (symshape.contract.input_check.InputCheck)
        self.refuses_shared = False   # the body refuses inputs sharing a written input's memory
        self.alias_lines: List[str] = []
        self.body: List[str] = []
        self.param_names: List[str] = []
        self.sym_names: List[str] = []
        self.full: Optional[Callable] = None       # f(params): check, then body
        self.core: Optional[Callable] = None       # core(params..., syms...): body only

    def compile(self, ns: Dict[str, Any], label: str, core: bool = False,
                tag: Optional[int] = None) -> Callable:
        """The checked function (or the core) compiled in ``ns`` (a backend binding its
        runtime, CuPy or the emulator, compiles it again in its own namespace)."""
        label = label + " core" if core else label
        return compile_function(self.core_source if core else self.source, ns,
                                _filename(label, self.name, tag),
                                self.core_name if core else self.name)


@dataclass
class FunctionSpec:
    """The function to write.

    ``signature``: the user's signature (``params``: plain parameter names instead, for
    internal segments); ``constraints`` / ``inputs``: the input check and the graph input
    nodes (anything with a ``.name``) its array inputs bind, None for no check;
    ``outputs`` / ``out_spec``: the returned leaves and their structure; ``mutations``:
    (input, final value) pairs written back before returning; ``core``:
    also write the core for the JIT; ``label``: how filenames in tracebacks call it
    (``<symshape compiled f #3>``); ``compile``: compile now (else the caller compiles
    ``GeneratedFunction.compile`` in its own namespace)."""

    name: str
    signature: Optional[inspect.Signature] = None
    params: Optional[List[str]] = None
    constraints: Optional[ConstraintSet] = None
    inputs: Sequence[Any] = ()
    outputs: Sequence[Any] = ()
    out_spec: tuple = ("leaf",)
    mutations: Sequence[Tuple[Any, Any]] = ()
    namespace: Dict[str, Any] = field(default_factory=dict)
    core: bool = True
    label: str = ""
    compile: bool = True
    # Python state (capture/stateprog.py): guards and state arrays read through their
    # paths when the call begins, writes replayed before it returns; None: none
    state: Any = None


class Writing:
    """What a body hook gets: the check written (``check``; ``bound``: the symbols it
    binds), the constraints (in the user's names; ``access`` reads an input as the body
    names its parameters) and the namespace."""

    def __init__(self, spec: FunctionSpec, cs: Optional[ConstraintSet],
                 check: Optional[RenderedCheck], ren: Optional[Dict[str, str]] = None) -> None:
        self.spec = spec
        self.constraints = cs
        self.check = check
        self.ns = spec.namespace
        self.bound = set(check.bound) if check is not None else set()
        self._ren = ren or {}

    def access(self, d) -> str:
        """The Python reaching input ``d`` (an ``InputDesc``) from the body's parameters
        (a parameter renamed on a clash is read by its inner name)."""
        return self._ren.get(d.param, d.param) + keys_text(d.keys)

    @property
    def runtime_checks(self) -> list:
        """``ss.check`` conditions on sizes the body computes, in program order."""
        return list(getattr(self.constraints, "runtime_checks", ()) or ())

    def kept(self) -> set:
        """The values that live to the end of the call: outputs, write-back values and the
        values of replayed state writes."""
        return {o for o in self.spec.outputs if type(o) is Node} | \
            {f for _, f in self.spec.mutations} | self.state_kept()

    def state_kept(self) -> set:
        """Graph values the replayed state writes bind (they live to the end)."""
        sp = self.spec.state
        return {v for v in sp.slots if type(v) is Node} if sp is not None else set()

    def finish(self, r, mutations: Optional[Iterable[Tuple[Any, Any]]] = None,
               then: Sequence[str] = ()) -> List[str]:
        """The end of a path through the body: write each mutated input's final value
        back into it (``x[...] = x_new``; ``mutations``: those left after the body wrote
        some in place), run ``then``, return the outputs rendered by ``r``."""
        pairs = self.spec.mutations if mutations is None else mutations
        out = ["%s[...] = %s" % (inp.name, final.name) for inp, final in pairs]
        out.extend(then)
        sp = self.spec.state
        if sp is not None and sp.effects:
            self.slot_text = [r.value(v) for v in sp.slots]
            vals = ", ".join(self.slot_text)
            out.append("_SP.replay(_st, (%s%s))" % (vals, "," if len(sp.slots) == 1 else ""))
        result = render_outputs(self.spec.out_spec, self.spec.outputs, r)
        if sp is not None and sp.gives_back:
            # the state lists / dicts it returns are the user's objects, as in eager Python
            result = "_SP.returned(_st, %s)" % result
        out.append("return " + result)
        return out


def function_name(name: str) -> str:
    """``name`` as a Python identifier (``<lambda>`` -> ``_lambda_``)."""
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "forward"
    return out if not out[0].isdigit() else "f_" + out


def program_spec(ep, **kw) -> FunctionSpec:
    """The function of an ExportedProgram: its name, ``f``'s signature (the inputs' paths
    when ``f`` had none), its input check over the graph's input nodes, its outputs and
    write-backs."""
    sig = ep.call_signature or inspect.Signature(
        [inspect.Parameter(d.path, inspect.Parameter.POSITIONAL_OR_KEYWORD)
         for d in ep.constraints.inputs])
    g = ep.graph
    return FunctionSpec(function_name(ep.name), sig, constraints=ep.constraints,
                        inputs=g.inputs, outputs=g.outputs, out_spec=g.out_spec,
                        mutations=ep.mutation_pairs, **dict({"state": ep.state_program}, **kw))


def unshared_lines(spec: FunctionSpec, cs: Optional[ConstraintSet]) -> List[str]:
    """Lines refusing a call where an array input shares memory with an input the program
    writes in place: eager NumPy would see the write through the other name, the graph
    reads every input as it was when the call began (``f(a, a)`` with ``x += 1`` then
    ``y * 2``), so such a call is a UserError rather than a different result."""
    if cs is None or not spec.mutations:
        return []
    arrays = [(d, n) for d, n in zip(cs.inputs, spec.inputs) if d.is_array]
    written = {n for n, _ in spec.mutations}
    lines = []
    for d, n in arrays:
        others = [(e, m) for e, m in arrays if m is not n]
        if n in written and others:
            lines.append("_rt.check_unshared(%r, %s, (%s,), (%s,))" % (
                d.path, n.name, ", ".join(repr(e.path) for e, _ in others),
                ", ".join(m.name for _, m in others)))
    return lines


def state_lines(spec: FunctionSpec, cs: Optional[ConstraintSet],
                ren: Dict[str, str]) -> List[str]:
    """The start of a function whose program uses Python state: check the guards and read
    each state array through its path into the variable of its graph node
    (``_SP.begin``), then refuse array inputs sharing memory with state the program writes
    in place (``SharedInputsError``, as for two inputs)."""
    sp = spec.state
    if sp is None or sp.empty:
        return []
    spec.namespace["_SP"] = sp
    args = ", ".join(ren.get(a, a) for a in sp.arg_roots)
    lines = ["_st = _SP.begin((%s%s))" % (args, "," if len(sp.arg_roots) == 1 else "")]
    if sp.nodes:
        lines.append("%s, = _st.arrays" % ", ".join(n.name for n in sp.nodes))
    written = [i for i, _ in spec.mutations if i in set(sp.nodes)]
    if cs is not None and written:
        arrays = [(d, n) for d, n in zip(cs.inputs, spec.inputs) if d.is_array]
        if arrays:
            paths = {n: str(p) for n, (p, _, _) in zip(sp.nodes, sp.arrays)}
            for n in written:
                lines.append("_rt.check_unshared(%r, %s, (%s,), (%s,))" % (
                    paths[n], n.name, ", ".join(repr(d.path) for d, _ in arrays),
                    ", ".join(m.name for _, m in arrays)))
    return lines


def write(spec: FunctionSpec, body: Callable[[Writing], List[str]],
          record: Optional[GeneratedFunction] = None) -> GeneratedFunction:
    """Write (and by default compile) the function ``spec`` describes, its body from the
    backend's hook; fills ``record`` (a backend's subclass) or a new GeneratedFunction."""
    rec = record if record is not None else GeneratedFunction()
    sig, cs, ns = spec.signature, spec.constraints, spec.namespace
    ren = renames(sig) if sig is not None else {}
    if ren:
        sig = renamed_signature(sig, ren)
    with renamed_nodes(spec.inputs, ren):
        check = input_check(cs, [n.name for n in spec.inputs], ren) if cs is not None else \
            RenderedCheck([], {}, [], [])
        ns.update(check.consts)
        unshared = unshared_lines(spec, cs)
        state = state_lines(spec, cs, ren)
        rec.refuses_shared = bool(unshared) or any("check_unshared" in x for x in state)
        writing = Writing(spec, cs, check, ren)
        rec.body = state + unshared + body(writing)
        # the core (the JIT's) runs a call that raised again eagerly, which makes the
        # writes itself: only the checked function makes those before a failing check
        core_body = rec.body
        rec.body = writes_before_checks(rec.body, spec.state, writing,
                                        {n.name for n in spec.inputs} |
                                        {s.name for s in check.bound} | set(ns))
    fname = free_name(INNER_NAME, spec.signature) if ren else spec.name
    rec.name, rec.ns = spec.name, ns
    rec.check_lines, rec.alias_lines = check.lines, check.aliases
    rec.input_check = check.check
    rec.sym_names = sorted(s.name for s in check.bound)
    if spec.params is not None:
        rec.param_names = list(spec.params)
        params = ", ".join(spec.params)
    else:
        rec.param_names = [p.name for p in sig.parameters.values()]
        params = signature_source(sig, ns)
    rec.source = def_source(fname, params, rec.check_lines + rec.body)
    if ren:
        rec.source += "\n" + forwarding_source(spec.signature, ren, spec.name, fname, ns)
    if spec.core:
        rec.core_name = "_core_" + fname
        rec.core_source = def_source(rec.core_name, ", ".join(rec.param_names + rec.sym_names),
                                     rec.alias_lines + core_body)
    if spec.compile:
        with _LOCK:
            names = [(spec.label, rec.name)] + ([(spec.label + " core", rec.name)]
                                                if spec.core else [])
            tag = free_tag(names)
            rec.full = rec.compile(ns, spec.label, tag=tag)
            if spec.core:
                rec.core = rec.compile(ns, spec.label, core=True, tag=tag)
    return rec


_ASSIGNED = re.compile(r"^\s*([A-Za-z_][\w, ]*?),?\s*=(?!=)")
_NAME = re.compile(r"[A-Za-z_]\w*")
_CHECK_CALL = "_rt.bad_check("


def writes_before_checks(lines: List[str], sp, writing: Writing, known: set) -> List[str]:
    """A run-time check on array values (``assert (x >= 0).all()``) that fails makes, before
    raising, the writes to Python state that eager Python makes before that line
    (``self.n += 1`` above it): each failing check line first calls
    ``_SP.before_failure`` with the values those writes need, as computed there
    (``known``: the names defined before the body runs)."""
    points = getattr(sp, "check_points", None)
    texts = getattr(writing, "slot_text", None)
    if not points or not sp.effects or texts is None:
        return lines
    out, defined = [], set(known)
    for line in lines:
        if _CHECK_CALL in line:
            used = set(_NAME.findall(line))
            count = max((k for names, _, k in points if names & used), default=0)
            if count:
                need = sp.slots_before(count)
                ready = all(set(_NAME.findall(texts[i])) <= defined for i in need)
                vals = "(%s%s)" % (", ".join(texts[i] if i in need else "None"
                                             for i in range(len(texts))),
                                   "," if len(texts) == 1 else "") if ready else "None"
                where = [t for names, t, _ in points if names & used][0]
                line = line.replace(_CHECK_CALL, "_SP.before_failure(_st, %d, %s, %r); %s"
                                    % (count, vals, _check_site(where), _CHECK_CALL), 1)
        m = _ASSIGNED.match(line)
        if m:
            defined.update(x.strip() for x in m.group(1).split(","))
        out.append(line)
    return out


def _check_site(text: str) -> str:
    """The user's statement of a value check, from its text (``raise ValueError(...)``)."""
    return text.split("\n")[0][:200]


@contextmanager
def renamed_nodes(nodes: Sequence[Any], ren: Dict[str, str]):
    """Input nodes named as ``ren`` says while the body is written (their names are the
    variables the body reads), their own names again afterwards."""
    saved = {n: n.name for n in nodes if n.name in ren}
    for n in saved:
        n.name = ren[n.name]
    try:
        yield
    finally:
        for n, old in saved.items():
            n.name = old


def def_source(name: str, params: str, lines: Sequence[str]) -> str:
    """``def name(params):`` and the lines, indented."""
    return "def %s(%s):\n" % (name, params) + "".join("    %s\n" % x for x in lines)


def _filename(label: str, name: str, tag: Optional[int] = None) -> str:
    if tag is None:
        with _LOCK:     # compile_function registers it before the lock is let go
            return _filename(label, name, free_tag([(label, name)]))
    return "<symshape %s%s #%d>" % (label + " " if label else "", name, tag)


def free_tag(names: Sequence[Tuple[str, str]]) -> int:
    """The smallest number under which no live generated function has any of the file
    names ``names`` ((label, function name) pairs) gives; call it holding ``_LOCK`` and
    compile under the number before letting go."""
    tag = 0
    while any(_filename(label, name, tag) in _LIVE for label, name in names):
        tag += 1
    return tag


# --------------------------------------------------------------------------- signatures
def namespace_const(ns: Dict[str, Any], v) -> str:
    """A name for ``v`` in the namespace (``_fn_scale`` for a named function, readable in
    the source; ``_v3`` otherwise)."""
    label = getattr(v, "__name__", None) if callable(v) else None
    if isinstance(label, str) and label.isidentifier():
        name = "_fn_" + label
        if ns.get(name) is v:
            return name
    else:
        name = "_v%d" % len(ns)
    while name in ns:
        name += "_"
    ns[name] = v
    return name


def signature_source(sig: inspect.Signature, ns: Dict[str, Any]) -> str:
    """The parameter list of ``sig`` as Python source (defaults go to the namespace)."""
    parts = []
    seen_kwonly = False
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            parts.append("*" + p.name)
            seen_kwonly = True
            continue
        if p.kind == p.VAR_KEYWORD:
            parts.append("**" + p.name)
            continue
        if p.kind == p.KEYWORD_ONLY and not seen_kwonly:
            parts.append("*")
            seen_kwonly = True
        text = p.name
        if p.default is not p.empty:
            text += "=" + namespace_const(ns, p.default)
        parts.append(text)
    pos_only = [p for p in sig.parameters.values() if p.kind == p.POSITIONAL_ONLY]
    if pos_only:
        parts.insert(len(pos_only), "/")
    return ", ".join(parts)


def call_source(sig: inspect.Signature, values: Optional[Dict[str, str]] = None) -> str:
    """The arguments of a call to a function with signature ``sig``, each parameter's
    value taken from the variable ``values.get(name, name)`` (keyword-only ones passed by
    keyword)."""
    values = values or {}
    call = []
    for p in sig.parameters.values():
        v = values.get(p.name, p.name)
        if p.kind == p.VAR_POSITIONAL:
            call.append("*" + v)
        elif p.kind == p.VAR_KEYWORD:
            call.append("**" + v)
        elif p.kind == p.KEYWORD_ONLY:
            call.append("%s=%s" % (p.name, v))
        else:
            call.append(v)
    return ", ".join(call)


def forwarding_source(sig: inspect.Signature, ren: Dict[str, str], name: str, inner: str,
                      ns: Dict[str, Any], first: str = "") -> str:
    """``def name(<the user's signature>): return inner(<renamed parameters>)``
    (``first``: a leading parameter passed on as it is, ``self`` of a method)."""
    inner_sig = renamed_signature(sig, ren)
    # the forwarding function has the user's parameters: its own leading one must differ
    lead = free_name(first, sig) + ", " if first else ""
    args = call_source(inner_sig, {new: old for old, new in ren.items()})
    return def_source(name, lead + signature_source(sig, ns),
                      ["return %s(%s%s)" % (inner, lead, args)])


def free_name(base: str, sig: inspect.Signature) -> str:
    """``base``, or ``base`` with underscores appended, named like no parameter of ``sig``
    (a name the forwarding function reads must not be shadowed by one)."""
    while base in sig.parameters:
        base += "_"
    return base


def signature_function(name: str, sig: inspect.Signature, body: Callable[[Dict[str, str]],
                       List[str]], ns: Dict[str, Any], label: str, first: str = ""):
    """Compile ``def name(first, <sig>)`` with the lines ``body(ren)`` gives, ``ren``
    mapping parameters named like something generated code uses to the names the lines
    must use for them (then a forwarding function keeps ``sig``).  Returns the function
    and its source."""
    ren = renames(sig)
    inner_sig = renamed_signature(sig, ren)
    fname = free_name("%s_%s" % (INNER_NAME, name.strip("_")), sig) if ren else name
    lead = first + ", " if first else ""
    src = def_source(fname, lead + signature_source(inner_sig, ns), body(ren))
    if ren:
        src += "\n" + forwarding_source(sig, ren, name, fname, ns, first)
    return compile_function(src, ns, _filename(label, name), name), src


def reserved_params(sig: inspect.Signature) -> List[str]:
    """Parameters named like something generated code uses (``type``, ``max``, ``s0``,
    ``_ndarray``): such a function is built as a body with renamed parameters."""
    return [p for p in sig.parameters if used_by_generated_code(p)]


def renames(sig: inspect.Signature) -> Dict[str, str]:
    """What each parameter named like something generated code uses is called inside the
    generated body (``type`` -> ``_p_type``); every generated function of ``sig`` agrees."""
    return {p: RENAMED_PREFIX + p for p in reserved_params(sig)}


def renamed_signature(sig: inspect.Signature, ren: Dict[str, str]) -> inspect.Signature:
    """``sig`` with parameters renamed by ``ren`` (the input check's records keep the
    user's names: only their rendering reads the renamed parameters)."""
    return sig.replace(parameters=[p.replace(name=ren.get(p.name, p.name))
                                   for p in sig.parameters.values()])


def render_outputs(spec, leaves: Sequence[Any], r) -> str:
    """The outputs in ``f``'s output structure (``spec``: the pytree spec), each leaf
    rendered by ``r`` (a ``pycode.Renderer``: ``value``, ``const``)."""
    it = iter(leaves)

    def go(s):
        if s == ("leaf",):
            return r.value(next(it))
        if s[0] == "dict":
            return "{%s}" % ", ".join("%s: %s" % (r.const(k) if not isinstance(k, (str, int))
                                                  else repr(k), go(c))
                                      for k, c in zip(s[1], s[2]))
        if s[0] == "namedtuple":         # e.g. SVDResult(u, s, vh), or the user's Out(...)
            return "%s(%s)" % (r.const(named_results.type_of(s[1])),
                               ", ".join(go(c) for c in s[2]))
        items = [go(c) for c in s[1]]
        if s[0] == "tuple":
            return "(%s%s)" % (", ".join(items), "," if len(items) == 1 else "")
        return "[%s]" % ", ".join(items)

    return go(spec)


# --------------------------------------------------------------------------- temporaries
def readers(items: Sequence[Any], uses: Callable[[Any], Iterable[Any]]
            ) -> Dict[Any, List[Any]]:
    """Per value, the items that read it, in order."""
    out: Dict[Any, List[Any]] = {}
    for item in items:
        for v in uses(item):
            out.setdefault(v, []).append(item)
    return out


def last_uses(items: Sequence[Any], uses: Callable[[Any], Iterable[Any]]) -> Dict[Any, int]:
    """Per value, the index of the last item that reads it."""
    last: Dict[Any, int] = {}
    for i, item in enumerate(items):
        for v in uses(item):
            last[v] = i
    return last


def releases(items: Sequence[Any], keep, uses: Callable[[Any], Iterable[Any]],
             makes: Callable[[Any], Iterable[Any]]) -> List[List[str]]:
    """Per item, the names of the values whose life ends there (read for the last time, or
    made and never read): ``del`` them after it, so NumPy reuses their memory at once
    (cache-hot) instead of every temporary staying alive until the function returns.
    ``keep``: values that live on (outputs, write-back values)."""
    last = last_uses(items, uses)
    out: List[List[str]] = [[] for _ in items]
    for i, item in enumerate(items):
        for v in makes(item):
            if v not in keep:
                out[max(i, last.get(v, i))].append(v.name)
    return out


def del_lines(names: List[str]) -> List[str]:
    """``del a, b`` (nothing for no names)."""
    return ["del %s" % ", ".join(names)] if names else []


# --------------------------------------------------------------------------- compiling
def compile_function(src: str, ns: Dict[str, Any], filename: str, name: str = "forward"):
    """Compile generated source; tracebacks show its lines (a ``linecache`` entry that lives
    exactly as long as the function, so building many programs leaks nothing)."""
    with _LOCK:
        with warnings.catch_warnings():
            # the compiler's hints ("'int' object is not subscriptable") would name the
            # generated file; only a hand-made (loaded) graph can draw them
            warnings.simplefilter("ignore", SyntaxWarning)
            code = compile(src, filename, "exec")
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        exec(code, ns)
        fn = ns[name]
        _LIVE[filename] = _LIVE.get(filename, 0) + 1
        weakref.finalize(fn, _release, filename)
    return fn


def _release(filename: str) -> None:
    """A generated function is gone: its file name is free once no other uses it."""
    with _LOCK:
        left = _LIVE.get(filename, 0) - 1
        if left > 0:
            _LIVE[filename] = left
        else:
            _LIVE.pop(filename, None)
            linecache.cache.pop(filename, None)
