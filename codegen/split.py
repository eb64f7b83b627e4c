"""Splitting a function at its graph breaks, so that only the breaks run eagerly.

A function that cannot be captured in one graph is rewritten, once, at the level of its
statements: the statement holding a break runs as plain Python (a compound statement keeps
only its header eager: ``if x.sum() > 0:``, ``for layer in layers:``), and every run of
statements between breaks becomes a *segment function* that takes the local variables it
reads and returns the ones read later.  Each segment is compiled by ``ss.compile`` like any
function, so it has its own guards, variants, recompile reasons and cache limit, and a call
after the first runs the compiled code of every segment straight through: nothing before a
break is traced again.

The rewritten code keeps the user's file name and line numbers (tracebacks, break locations
and guard messages point at the user's lines), and reads globals and closure variables
through the function's own globals and cells, so rebinding one is seen as before.

A function whose source cannot be read, or that uses what a rewrite cannot keep exact
(``yield``, ``global``, ``nonlocal``, ``await``), is not split (``None``): the caller runs it
through its breaks the slow way.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import textwrap
import types
import warnings
import weakref

import numpy as np
from typing import Callable, Iterable, List, Optional, Sequence, Set

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMP = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BLOCKS = ("body", "orelse", "finalbody")
_UNSPLITTABLE = (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)
_TRY = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


class CompiledRaised(Exception):
    """Raised by the compiled code of a segment inside a ``try`` / ``with`` (``protected``)
    that raised before writing anything: the driver catches it and runs the segment's
    statements again as written, in its own frame, so the exception, and the locals bound
    before it, are eager's for the user's ``except`` / ``finally`` / ``__exit__``.  It
    never leaves the driver.  ``error``: what the compiled code raised."""

    def __init__(self, error: Optional[BaseException] = None) -> None:
        super().__init__()
        self.error = error

    def quiet(self):
        """The context of the statements' second run (``quiet_rerun``)."""
        return quiet_rerun(self.error)


def quiet_rerun(error: Optional[BaseException]):
    """Running again eagerly what compiled code ran up to ``error``: NumPy's warnings
    (``RuntimeWarning``) were already given by the compiled attempt, so the second run
    does not give them again; where they are errors (``error`` is the warning raised),
    it runs as it is and raises the same."""
    return contextlib.nullcontext() if isinstance(error, Warning) else _no_runtime_warnings()


@contextlib.contextmanager
def _no_runtime_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# the code of drivers and segment functions (they carry the user's file name; warnings and
# error locations skip them to reach the user's own call)
GENERATED: "weakref.WeakSet[types.CodeType]" = weakref.WeakSet()


class Chunk:
    """One segment: its statements (original AST, original line numbers), the locals it
    reads (``inputs``) and the ones it hands on (``outputs``); ``returns``: it ends with the
    function's ``return``."""

    def __init__(self, stmts: List[ast.stmt], inputs: List[str], outputs: List[str],
                 returns: bool) -> None:
        self.stmts = stmts
        self.inputs = inputs
        self.outputs = outputs
        self.returns = returns

    @property
    def first_line(self) -> int:
        return self.stmts[0].lineno

    @property
    def last_line(self) -> int:
        return self.stmts[-1].end_lineno or self.stmts[-1].lineno

    @property
    def key(self) -> tuple:
        """Identity across re-splits: the same statements with the same interface."""
        return (tuple(id(s) for s in self.stmts), tuple(self.inputs), tuple(self.outputs))


class Split:
    """The result of splitting: ``driver`` (a function with ``f``'s signature running the
    breaks and calling the segments) and ``chunks`` (with ``.fn``: the segment functions, in
    program order)."""

    def __init__(self, driver, chunks: List[Chunk], fns: List[Callable]) -> None:
        self.driver = driver
        self.chunks = chunks
        self.fns = fns


# --------------------------------------------------------------------------- source
def function_ast(f) -> Optional[ast.FunctionDef]:
    """The ``def`` of ``f`` with its real line numbers, or None (no source, a lambda)."""
    node = getattr(f, "__ss_ast__", None)
    if node is not None:
        return node
    code = getattr(f, "__code__", None)
    if code is None:
        return None
    try:
        lines, first = inspect.getsourcelines(f)
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    node = tree.body[0]
    ast.increment_lineno(node, first - 1)
    if node.name != code.co_name:
        return None
    return node


# --------------------------------------------------------------------------- names
def _walk_scope(node: ast.AST) -> Iterable[ast.AST]:
    """Nodes of ``node`` in its own scope: nested functions, classes and comprehensions
    contribute only what their definition evaluates in this scope."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(n.decorator_list)
            stack.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, ast.ClassDef):
            stack.extend(n.decorator_list + n.bases + [k.value for k in n.keywords])
            continue
        if isinstance(n, (ast.Lambda,) + _COMP):
            continue
        stack.extend(ast.iter_child_nodes(n))


def stores(nodes: Sequence[ast.AST]) -> Set[str]:
    """Names bound in this scope by ``nodes``."""
    out: Set[str] = set()
    for node in nodes:
        for n in _walk_scope(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                out.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    out.add((a.asname or a.name).split(".")[0])
            elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                out.add(n.target.id)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                out.add(n.name)
    return out


def reads(nodes: Sequence[ast.AST]) -> Set[str]:
    """Every name read by ``nodes``, nested scopes included (they may read our locals)."""
    out: Set[str] = set()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                out.add(n.id)       # stores too: an augmented or partial store reads first
    return out


def _params(args: ast.arguments) -> List[str]:
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def splittable(fdef: ast.FunctionDef) -> bool:
    """Nothing in ``fdef``'s own scope that a rewrite into segments cannot keep exact."""
    return not any(isinstance(n, _UNSPLITTABLE) for stmt in fdef.body
                   for n in _walk_scope(stmt))


def _escapes(stmt: ast.stmt) -> bool:
    """``stmt`` leaves its block other than by finishing: a ``return`` below it (the
    statement is not itself the return), or ``break`` / ``continue`` of a loop around it."""
    def go(n: ast.AST, in_loop: bool) -> bool:
        if isinstance(n, _NESTED):
            return False
        if isinstance(n, ast.Return) and n is not stmt:
            return True
        if isinstance(n, (ast.Break, ast.Continue)) and not in_loop:
            return True
        loop = in_loop or isinstance(n, (ast.For, ast.While, ast.AsyncFor))
        for field, value in ast.iter_fields(n):
            kids = value if isinstance(value, list) else [value]
            for k in kids:
                if isinstance(k, ast.AST):
                    # a loop's else-block is not inside the loop for break / continue
                    if go(k, loop and field != "orelse" or in_loop and field == "orelse"):
                        return True
        return False
    return go(stmt, False)


# --------------------------------------------------------------------------- splitting
class _Splitter:
    def __init__(self, fdef: ast.FunctionDef, lines: Set[int], fixed: Set[str],
                 headers: Set[int] = frozenset()) -> None:
        self.fdef = fdef
        self.lines = lines
        # first lines of ``try`` / ``with`` statements that run as Python (``protected``)
        # while their blocks are split, though nothing in them breaks the graph
        self.headers = headers
        self.depth = 0          # > 0: inside a try / with (segments fall back in place)
        # ``fixed``: locals the segments read from a cell instead (a method's ``self``)
        self.local = (set(_params(fdef.args)) | stores(fdef.body)) - fixed
        self.read_anywhere = reads(fdef.body)
        self.chunks: List[Chunk] = []

    def _holds_break(self, stmt: ast.stmt) -> bool:
        end = stmt.end_lineno or stmt.lineno
        return any(stmt.lineno <= ln <= end for ln in self.lines) or \
            any(stmt.lineno <= ln <= end for ln in self.headers)

    def block(self, stmts: List[ast.stmt], defined: Set[str],
              definite: Optional[Set[str]] = None) -> List[ast.stmt]:
        """``stmts`` with runs of break-free statements replaced by segment calls.
        ``defined``: locals that may be bound here; ``definite``: locals that are."""
        out: List[ast.stmt] = []
        run: List[ast.stmt] = []
        defined = set(defined)
        definite = set(defined if definite is None else definite)

        def close():
            if run:
                out.extend(self._chunk(list(run), defined, definite))
                defined.update(stores(run))
                added, removed = definite_stores(run)
                definite.update(added)
                definite.difference_update(removed)
                run.clear()

        for s in stmts:
            compound = any(isinstance(getattr(s, b, None), list) and getattr(s, b)
                           for b in _BLOCKS) or isinstance(s, _TRY)
            if not self._holds_break(s) and not _escapes(s):
                run.append(s)
                if isinstance(s, ast.Return):
                    close()
                continue
            close()
            if compound and not isinstance(s, (ast.With, ast.AsyncWith)) or \
                    isinstance(s, (ast.With, ast.AsyncWith)) and not self._in_header(s):
                out.append(self._compound(s, defined, definite))
            else:
                out.append(s)                     # runs eagerly, as written
            defined.update(stores([s]))
            added, removed = definite_stores([s])
            definite.update(added)
            definite.difference_update(removed)
        close()
        return out

    def _in_header(self, s: ast.stmt) -> bool:
        """A break in the header of a ``with`` (``with open(x.tobytes())``): then all of
        it runs eagerly; a protected ``with`` alone keeps its body compiled."""
        body_start = s.body[0].lineno if getattr(s, "body", None) else s.lineno + 1
        return any(s.lineno <= ln < body_start for ln in self.lines)

    def _compound(self, s: ast.stmt, defined: Set[str], definite: Set[str]) -> ast.stmt:
        """A compound statement whose header runs eagerly and whose blocks are split."""
        guarded = isinstance(s, _TRY + (ast.With, ast.AsyncWith))
        self.depth += guarded
        try:
            return self._compound_blocks(s, defined, definite)
        finally:
            self.depth -= guarded

    def _compound_blocks(self, s: ast.stmt, defined: Set[str],
                         definite: Set[str]) -> ast.stmt:
        new = ast.copy_location(type(s)(**{f: getattr(s, f) for f in s._fields}), s)
        bound = stores(getattr(s, "target", None) and [s.target] or [])
        if isinstance(s, (ast.With, ast.AsyncWith)):
            bound |= stores([i.optional_vars for i in s.items if i.optional_vars])
        inner, sure = set(defined) | bound, set(definite) | bound
        if isinstance(s, (ast.For, ast.While, ast.AsyncFor)):
            inner |= stores(s.body)               # the next iteration sees this one's locals
        for b in _BLOCKS:
            stmts = getattr(s, b, None)
            if isinstance(stmts, list) and stmts:
                setattr(new, b, self.block(stmts, inner, sure))
        if isinstance(s, _TRY):
            new.handlers = []
            for h in s.handlers:
                nh = ast.copy_location(ast.ExceptHandler(type=h.type, name=h.name,
                                                         body=None), h)
                extra = {h.name} if h.name else set()
                nh.body = self.block(h.body, inner | extra, sure | extra)
                new.handlers.append(nh)
        return new

    def _chunk(self, stmts: List[ast.stmt], defined: Set[str],
               definite: Set[str]) -> List[ast.stmt]:
        returns = isinstance(stmts[-1], ast.Return)
        used = reads(stmts)
        inputs = sorted(n for n in used if n in self.local and n in defined)
        outputs = [] if returns else sorted(n for n in stores(stmts) & self.read_anywhere
                                            if n in self.local)
        ch = Chunk(stmts, inputs, outputs, returns)
        ch.protected = self.depth > 0
        # a local bound on some paths only: the segment gets None where it is unbound (eager
        # code reading it there would raise), and hands back None for one it may not bind
        maybe_in = [n for n in inputs if n not in definite]
        ch.maybe_outputs = [n for n in outputs if n not in inputs and
                            n not in definite_stores(stmts)[0]]
        self.chunks.append(ch)
        name = "_ss_seg%d" % (len(self.chunks) - 1)
        call = ast.Call(func=ast.Name(name, ast.Load()),
                        args=[ast.Name("_ss_u_" + n if n in maybe_in else n, ast.Load())
                              for n in inputs], keywords=[])
        pre = [_bind_or_none("_ss_u_" + n, n) for n in maybe_in]
        # ``x += 1`` on an array updates it in place: the compiled segment writes the new
        # values into the caller's array, which stays the object ``x`` names (a later
        # in-place update must reach the caller's array too)
        inplace = set(outputs) & set(inputs) & _aug_only(stmts)
        out: List[ast.stmt] = list(pre)
        if returns:
            out.append(ast.Return(call))
        elif outputs:
            targets = [ast.Name("_ss_new_" + n if n in inplace else n, ast.Store())
                       for n in outputs]
            out.append(ast.Assign(targets=[ast.Tuple(targets, ast.Store())], value=call))
            for n in sorted(inplace):
                keep = ast.Call(func=ast.Name("_ss_keep", ast.Load()),
                                args=[ast.Name(n, ast.Load()),
                                      ast.Name("_ss_new_" + n, ast.Load())], keywords=[])
                out.append(ast.Assign(targets=[ast.Name(n, ast.Store())], value=keep))
        else:
            out.append(ast.Expr(call))
        if ch.protected:
            out = pre + [_fall_back_in_place(out[len(pre):])]
        for stmt in out:
            ast.copy_location(stmt, stmts[0])
            ast.fix_missing_locations(stmt)
            for n in ast.walk(stmt):
                n.lineno, n.end_lineno = stmts[0].lineno, stmts[0].lineno
        if ch.protected:
            import copy
            # the statements as written, with their own lines (tracebacks point there),
            # NumPy's warnings not given twice
            flag = ast.Name("_ss_raised", ast.Load())
            quiet = ast.With(items=[ast.withitem(context_expr=ast.Call(
                func=ast.Attribute(flag, "quiet", ast.Load()), args=[], keywords=[]),
                optional_vars=None)], body=copy.deepcopy(stmts))
            again = ast.If(test=ast.Compare(flag, [ast.IsNot()], [ast.Constant(None)]),
                           body=[quiet], orelse=[])
            ast.copy_location(again, stmts[0])
            ast.copy_location(again.test, stmts[0])
            ast.copy_location(quiet, stmts[0])
            ast.fix_missing_locations(again)
            for n in ast.walk(again.test):
                n.lineno = n.end_lineno = stmts[0].lineno
            for n in ast.walk(quiet.items[0].context_expr):
                n.lineno = n.end_lineno = stmts[0].lineno
            out.append(again)
        return out


def _fall_back_in_place(calls: List[ast.stmt]) -> ast.stmt:
    """A protected segment's call, then (added by the caller) its statements as written
    where the compiled code raised (``CompiledRaised``; the flag keeps that exception out
    of the user's traceback)::

        try:
            y, L = _ss_seg0(x, A)
            _ss_raised = None
        except _ss_CompiledRaised as _ss_e:
            _ss_raised = _ss_e
        if _ss_raised is not None:
            with _ss_raised.quiet():
                y = x * 2 + 1
                L = np.linalg.cholesky(A)
    """
    flag = "_ss_raised"
    body = calls + [ast.Assign(targets=[ast.Name(flag, ast.Store())],
                               value=ast.Constant(None))]
    handler = ast.ExceptHandler(type=ast.Name("_ss_CompiledRaised", ast.Load()),
                                name="_ss_e",
                                body=[ast.Assign(targets=[ast.Name(flag, ast.Store())],
                                                 value=ast.Name("_ss_e", ast.Load()))])
    return ast.Try(body=body, handlers=[handler], orelse=[], finalbody=[])


def _aug_only(stmts: List[ast.stmt]) -> Set[str]:
    """Names that ``stmts`` bind only by augmented assignment (``x += 1``)."""
    aug, other = set(), set()
    for stmt in stmts:
        for n in _walk_scope(stmt):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                aug.add(n.target.id)
        other |= stores([_strip_aug(stmt)])
    return aug - other


def _strip_aug(stmt: ast.stmt) -> ast.AST:
    """``stmt`` with augmented assignments to plain names left out (for ``stores``)."""
    class Strip(ast.NodeTransformer):
        def visit_AugAssign(self, node):
            if isinstance(node.target, ast.Name):
                return ast.Expr(node.value)
            return node
    import copy
    return Strip().visit(copy.deepcopy(stmt))


def keep_inplace(old, new):
    """After ``x += ...`` in a segment: the caller's array (already holding the new values)
    if ``x`` was an array, else the new value (``i += 1`` on an int rebinds)."""
    if type(old) is np.ndarray and type(new) is np.ndarray and old.shape == new.shape:
        return old
    return new


def _bind_or_none(target: str, name: str) -> ast.stmt:
    """``try: target = name`` / ``except NameError: target = None``."""
    return ast.Try(body=[ast.Assign(targets=[ast.Name(target, ast.Store())],
                                    value=ast.Name(name, ast.Load()))],
                   handlers=[ast.ExceptHandler(
                       type=ast.Name("NameError", ast.Load()), name=None,
                       body=[ast.Assign(targets=[ast.Name(target, ast.Store())],
                                        value=ast.Constant(None))])],
                   orelse=[], finalbody=[])


def definite_stores(stmts: List[ast.stmt]):
    """(names every path through ``stmts`` binds, names it may unbind with ``del``),
    conservatively: a loop may run zero times, a try may stop anywhere."""
    added: Set[str] = set()
    removed: Set[str] = set()
    for s in stmts:
        if isinstance(s, ast.Delete):
            gone = stores([s])
            added -= gone
            removed |= gone
            continue
        if isinstance(s, ast.If):
            now = definite_stores(s.body)[0] & definite_stores(s.orelse)[0]
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.While) + _TRY):
            now = definite_stores(getattr(s, "finalbody", []))[0]
            removed |= stores([s]) - now if any(isinstance(n, ast.Delete)
                                                for n in ast.walk(s)) else set()
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            now = definite_stores(s.body)[0] | stores(
                [i.optional_vars for i in s.items if i.optional_vars])
        else:
            now = stores([s])
        added |= now
        removed -= now
    return added, removed


def _segment_def(ch: Chunk, index: int, fname: str) -> ast.FunctionDef:
    body = list(ch.stmts)
    for n in getattr(ch, "maybe_outputs", ()):
        fix = _bind_or_none(n, n)
        ast.copy_location(fix, body[-1])
        ast.fix_missing_locations(fix)
        for m in ast.walk(fix):
            if hasattr(m, "lineno"):
                m.lineno = m.end_lineno = body[-1].lineno
        body.append(fix)
    if not ch.returns:
        ret = ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in ch.outputs], ast.Load()))
        ast.copy_location(ret, body[-1])
        body.append(ret)
    args = ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in ch.inputs],
                         kwonlyargs=[], kw_defaults=[], defaults=[])
    d = ast.FunctionDef(name="_ss_raw%d" % index, args=args, body=body, decorator_list=[],
                        returns=None, type_comment=None)
    ast.copy_location(d, ch.stmts[0])
    return d


def protected(fdef: ast.FunctionDef) -> List[ast.stmt]:
    """The ``try`` and ``with`` statements of ``fdef``'s own scope, outermost first.  Their
    semantics need Python on every call (an ``except`` sees the exception the array work
    raises, a ``finally`` and a context manager's ``__enter__`` / ``__exit__`` run every
    time), so the JIT runs them as Python and compiles their blocks as segments."""
    kinds = _TRY + (ast.With,)
    found = [n for stmt in fdef.body for n in _walk_scope(stmt) if isinstance(n, kinds)]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


@functools.lru_cache(maxsize=256)
def with_bodies(filename: str) -> tuple:
    """The ``with`` statements of a source file as ``(first line, body's first line, last
    line, owner)`` and its functions as ``(first line, last line, owner)``; ``owner``: the
    innermost function (or lambda) around, by first line (0: the module).  Empty where the
    file cannot be read or parsed."""
    import linecache
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return (), ()
    withs, defs = [], []

    def go(node, owner):
        for n in ast.iter_child_nodes(node):
            inner = owner
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner = n.lineno
                defs.append((n.lineno, n.end_lineno or n.lineno, n.lineno))
            elif isinstance(n, (ast.With, ast.AsyncWith)):
                withs.append((n.lineno, n.body[0].lineno, n.end_lineno or n.lineno, owner))
            go(n, inner)
    go(tree, 0)
    return tuple(withs), tuple(defs)


def in_with(filename: str, lineno: int) -> Optional[int]:
    """The first line of the innermost ``with`` of the function running
    ``filename:lineno`` whose body holds that line (a function defined inside a ``with``
    is not in it)."""
    withs, defs = with_bodies(filename)
    if not withs:
        return None
    owner = max((d[0] for d in defs if d[0] < lineno <= d[1]), default=0)
    best = None
    for first, body, last, own in withs:
        if own == owner and body <= lineno <= last and (best is None or first > best):
            best = first
    return best


def split(f, fdef: ast.FunctionDef, lines: Set[int],
          wrap: Callable[[Chunk, Callable], Callable],
          headers: Set[int] = frozenset()) -> Optional[Split]:
    """``f`` rewritten to run the statements on ``lines`` eagerly and the rest as segments,
    each segment function passed through ``wrap`` (``ss.compile``); the compound statements
    starting on ``headers`` (``protected``) run their headers as Python and their blocks
    as segments.  None: not possible."""
    if not splittable(fdef):
        return None
    func = getattr(f, "__func__", f)
    code = func.__code__
    # a bound method's ``self`` is the same object on every call: the segments read it
    # from a cell (as a closure variable: its arrays are model state, read by path), since
    # a segment takes arrays, numbers and containers of them as inputs, not objects
    fixed: dict = {}
    params = _params(fdef.args)
    if inspect.ismethod(f) and params and params[0] not in stores(fdef.body) and \
            params[0] not in code.co_freevars:
        fixed[params[0]] = f.__self__
    sp = _Splitter(fdef, lines, set(fixed), set(headers))
    body = sp.block(fdef.body, set(_params(fdef.args)))
    if not sp.chunks:
        return None
    driver = ast.FunctionDef(name=fdef.name, args=fdef.args, body=body, decorator_list=[],
                             returns=None, type_comment=None)
    ast.copy_location(driver, fdef)
    segs = [_segment_def(ch, i, fdef.name) for i, ch in enumerate(sp.chunks)]
    helpers = ["_ss_seg%d" % i for i in range(len(sp.chunks))] + ["_ss_keep",
                                                                   "_ss_CompiledRaised"]
    helpers += list(fixed)
    free = list(code.co_freevars)
    # a factory whose parameters become the cells of the functions it defines: the user's
    # closure variables (replaced below by the user's own cells) and the segment callables
    factory_args = ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in free + helpers],
                                 kwonlyargs=[], kw_defaults=[], defaults=[])
    factory = ast.FunctionDef(name="_ss_factory", args=factory_args,
                              body=segs + [driver, ast.Pass()], decorator_list=[],
                              returns=None, type_comment=None)
    ast.copy_location(factory, fdef)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        mcode = compile(module, code.co_filename, "exec")
    except SyntaxError:
        return None
    fcode = next(c for c in mcode.co_consts if isinstance(c, types.CodeType))
    codes = {c.co_name: c for c in fcode.co_consts if isinstance(c, types.CodeType)}
    user_cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    helper_cells = {n: types.CellType() for n in helpers}
    helper_cells["_ss_keep"].cell_contents = keep_inplace
    helper_cells["_ss_CompiledRaised"].cell_contents = CompiledRaised
    for name, obj in fixed.items():
        helper_cells[name].cell_contents = obj

    def make(c: types.CodeType, defaults=None, kwdefaults=None):
        cells = tuple(user_cells[n] if n in user_cells else helper_cells[n]
                      for n in c.co_freevars)
        fn = types.FunctionType(c, func.__globals__, c.co_name, defaults, cells)
        GENERATED.add(c)
        if kwdefaults:
            fn.__kwdefaults__ = dict(kwdefaults)
        return fn

    fns = []
    for i, (ch, seg) in enumerate(zip(sp.chunks, segs)):
        raw = make(codes[seg.name])
        raw.__name__ = fdef.name
        raw.__qualname__ = "%s (lines %d-%d)" % (getattr(func, "__qualname__", fdef.name),
                                                 ch.first_line, ch.last_line)
        raw.__ss_ast__ = seg
        fn = wrap(ch, raw)
        helper_cells["_ss_seg%d" % i].cell_contents = fn
        fns.append(fn)
    drv = make(codes[fdef.name], func.__defaults__, func.__kwdefaults__)
    drv.__qualname__ = getattr(func, "__qualname__", fdef.name)
    drv.__ss_ast__ = fdef
    if getattr(f, "__self__", None) is not None and inspect.ismethod(f):
        drv = types.MethodType(drv, f.__self__)
    return Split(drv, sp.chunks, fns)


def break_line(exc: BaseException, code) -> Optional[int]:
    """The line of ``code`` (the function traced; or a set of codes: a function, its
    driver and segments, all on the user's lines) that was running when ``exc`` was
    raised, innermost first: the statement that holds the break."""
    codes = code if isinstance(code, (set, frozenset)) else {code}
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None:
        # a break raised again after the user's ``except`` swallowed it: the stack it was
        # first raised on
        for c, ln in getattr(exc, "stack", ()):
            if c in codes:
                line = ln
    return line


def code_lines(code: types.CodeType) -> range:
    """The lines of a function's code (its nested functions' lines included)."""
    last = max((ln for _, _, ln in code.co_lines() if ln is not None),
               default=code.co_firstlineno)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            last = max(last, code_lines(c).stop - 1)
    return range(code.co_firstlineno, last + 1)


def code_of(f) -> Optional[types.CodeType]:
    func = getattr(f, "__func__", f)
    return getattr(func, "__code__", None)


