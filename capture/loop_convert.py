"""Rewriting a user function's ``for`` loops into calls of the loop helper (AutoGraph-style).

A Python loop over a symbolic count cannot run while tracing (how many times?), and the
running frame cannot be changed; so the tracer aborts the trace the first time such a loop
starts (``LoopFound``, a ``BaseException`` the user's ``except Exception`` never catches),
this module rewrites the function that holds it, and the export traces again with the
function's ``__code__`` swapped for the rewritten one (restored when the export ends).

Every ``for`` statement of the function that can be converted is rewritten, so a loop nested
in a converted body is converted too (the rewrite is one pass over the whole function):

    for TARGET in ITER:                      def __symshape_body_K(__i, c1, ..., cN):
        BODY                        ->           TARGET = __i
    else:                                        BODY   (top-level ``continue`` -> return)
        ORELSE                                   return (c1, ..., cN)
                                             (c1, ..., cN) = __symshape_loop__(
                                                 ITER, __symshape_body_K, (c1, ..., cN), INFO)
                                             ORELSE

The carried names ``c1..cN`` are the locals the body binds (assignments, augmented
assignments, nested ``for`` targets, ``with ... as``), the names it writes through
(``y[t] = h``, ``o.x = v``) and the names whose methods it calls (``outs.append(h)``,
``self.update(z)``): the helper carries what changed and passes the rest through.  A name
unbound before the loop is passed as ``__symshape_undef__`` and deleted again after the
loop when the body did not bind it.  ``INFO`` is ``(line, names, kinds)`` where kinds says
which names are lists appended to (``"list"``) and which plain names (``"name"``).

The helper (capture/loops.py) runs a concrete iterable as the Python loop it was (exact
Python semantics: the body function is called once per item), and a symbolic one as one
loop node.  A loop is left as written (so it unrolls, with the specialisation warning, or
is refused under a named ``Dim``) when its body has ``break``, ``return``, ``yield``,
``del``, or ``global`` / ``nonlocal`` names: ``unconvertible`` says why.

Line numbers are the user's (the rewritten code compiles with the original file name and
the original lines), so every guard, check and message made in the body names the user's
line.  The function's free variables are kept (the code is compiled inside a factory whose
parameters are the original free variables, so ``co_freevars`` matches and the closure
cells of the function object stay valid).
"""
from __future__ import annotations

import ast
import gc
import inspect
import linecache
import sys
import types
from typing import Dict, List, Optional, Set, Tuple

from .state.binding import user_code

LOOP_HELPER = "__symshape_loop__"
CALL_NAME = "__symshape_iter__"
WHILE_END = "__symshape_while_end__"
# iterables called in the for statement itself that the helper looks into (passed
# unevaluated: ``enumerate(x)`` would start iterating x)
_LOOKED_INTO = ("enumerate", "zip", "reversed")
UNDEF_NAME = "__symshape_undef__"
_LIST_METHODS = ("append", "extend")


# how many exports are tracing with loop conversion on (LoopFound is raised only then)
_ACTIVE = [0]


class converting:
    """While active, a loop over a symbolic count in the user's code aborts the trace with
    ``LoopFound`` (capture/export.py converts it and traces again)."""

    def __enter__(self):
        _ACTIVE[0] += 1
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE[0] -= 1


def maybe_found(depth: int = 2) -> Optional[str]:
    """Called where a symbolic loop starts iterating: raise ``LoopFound`` when the user's
    frame ``depth`` above can be converted; otherwise the reason it cannot (None when no
    conversion is active, or the frame is not the user's)."""
    if not _ACTIVE[0]:
        return None
    frame = sys._getframe(depth)
    if not user_code(frame.f_code):
        return None
    why = unconvertible(frame.f_code, frame.f_lineno)
    if why is None:
        raise LoopFound(frame.f_code, frame.f_lineno)
    return why




def while_found(c) -> None:
    """``env.guard_hook``: a guard made by the test of a ``while`` statement that counts
    up to a size (``while i < n``) aborts the trace like a for loop does, to convert it."""
    if not _ACTIVE[0]:
        return
    f = sys._getframe(2)
    while f is not None and not user_code(f.f_code):
        f = f.f_back
    if f is None or f.f_code in _REWRITTEN or not linecache.getline(
            f.f_code.co_filename, f.f_lineno).lstrip().startswith("while"):
        return              # (most guards: no source parsed)
    got = conversion(f.f_code)
    if got is not None and _span_at(got[1], f.f_lineno) is not None and \
            f.f_lineno in got[2]:
        raise LoopFound(f.f_code, f.f_lineno)


class LoopFound(BaseException):
    """Raised inside the user's code when a loop over a symbolic count starts: the trace is
    abandoned and run again with the function rewritten (a ``BaseException``, so the user's
    ``except Exception`` lets it through)."""

    def __init__(self, code: types.CodeType, lineno: int) -> None:
        super().__init__(code.co_name, lineno)
        self.code = code
        self.lineno = lineno


# code object -> (the rewritten code, {line of a converted loop}) or None (not convertible)
_CONVERTED: Dict[types.CodeType, Optional[Tuple[types.CodeType, Set[int]]]] = {}
# code object -> {loop line: why it stays a Python loop}
_REFUSED: Dict[types.CodeType, Dict[int, str]] = {}
# the rewritten code objects (a symbolic loop seen in one is the helper's, never a new find)
_REWRITTEN: Set[types.CodeType] = set()


def unconvertible(code: types.CodeType, lineno: int) -> Optional[str]:
    """Why the loop at ``lineno`` of ``code`` stays a Python loop, or None when it converts
    (the conversion is made and cached on first ask)."""
    if code in _REWRITTEN:
        return "it is not a plain for statement of the converted function"
    got = conversion(code)
    refused = _REFUSED.get(code, {})
    if got is not None and _span_at(got[1], lineno) is not None:
        return None
    span = _span_at(refused, lineno)
    if span is not None:
        return refused[span]
    return refused.get(-1, "it is not a for statement of the function (a comprehension, or "
                           "an iterator advanced by hand)")


def _span_at(spans, lineno: int):
    for span in spans:
        if type(span) is tuple and span[0] <= lineno <= span[1]:
            return span
    return None


def conversion(code: types.CodeType):
    """(rewritten code, loop line spans) for ``code``, or None; cached."""
    if code in _CONVERTED:
        return _CONVERTED[code]
    got = None
    try:
        got = _convert(code)
    except (OSError, TypeError, SyntaxError, IndentationError) as e:
        _REFUSED.setdefault(code, {})[-1] = "its source could not be read (%s)" % e
    except Exception as e:      # syntax the rewrite does not know: the loop stays Python
        _REFUSED.setdefault(code, {})[-1] = "it could not be rewritten (%s: %s)" % (
            type(e).__name__, e)
    _CONVERTED[code] = got
    if got is not None:
        _REWRITTEN.update(_nested_codes(got[0]))
    return got


def _nested_codes(code: types.CodeType) -> List[types.CodeType]:
    out = [code]
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out.extend(_nested_codes(c))
    return out


def _convert(code: types.CodeType):
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                        inspect.CO_ASYNC_GENERATOR):
        _REFUSED.setdefault(code, {})[-1] = "the function is a generator"
        return None
    lines, first = inspect.getsourcelines(code)
    if lines and lines[0][:1] in (" ", "\t"):
        # a method: parsed inside a block, as indented as it is (dedenting the text would
        # change its multi-line strings)
        tree = ast.parse("if 1:\n" + "".join(lines))
        ast.increment_lineno(tree, first - 2)
        fn = tree.body[0].body[0] if tree.body and tree.body[0].body else None
    else:
        tree = ast.parse("".join(lines))
        ast.increment_lineno(tree, first - 1)
        fn = tree.body[0] if tree.body else None
    if not isinstance(fn, ast.FunctionDef) or fn.name != code.co_name:
        _REFUSED.setdefault(code, {})[-1] = "its source is not a plain def"
        return None
    fn.decorator_list = []
    # the source must be the code that runs (a file edited since it was imported is not)
    as_read = _compiled(code, fn)
    if as_read is None or _fingerprint(as_read) != _fingerprint(code):
        _REFUSED.setdefault(code, {})[-1] = "its source file does not hold the code that runs"
        return None
    declared = _declared(fn)
    rewriter = _Rewriter(declared, _local_names(fn) - declared, _REFUSED.setdefault(code, {}))
    fn.body = rewriter.statements(fn.body)
    if not rewriter.spans:
        return None
    new = _compiled(code, fn)
    if new is None or new.co_freevars != code.co_freevars:
        _REFUSED.setdefault(code, {})[-1] = "its closure could not be kept"
        return None
    return new, set(rewriter.spans), set(rewriter.whiles)


def _fingerprint(code: types.CodeType) -> tuple:
    """What a change of a function's source changes: its names, locals, constants, lines
    (not the exact bytecode, which differs between a module's def and a nested one)."""
    consts = tuple(_fingerprint(k) if isinstance(k, types.CodeType) else repr(k)
                   for k in code.co_consts)
    return (code.co_name, code.co_names, code.co_varnames, code.co_freevars, consts,
            code.co_firstlineno, code.co_argcount, code.co_kwonlyargcount)


_FUTURES = 0
for _name in __import__("__future__").all_feature_names:
    _FUTURES |= getattr(__import__("__future__"), _name).compiler_flag


def _compiled(code: types.CodeType, fn: ast.FunctionDef) -> Optional[types.CodeType]:
    """``fn`` compiled as ``code`` was (its file, its ``__future__`` flags), inside a
    factory whose parameters are ``code``'s free variables (so ``co_freevars`` match)."""
    freevars = code.co_freevars
    factory = ast.FunctionDef(
        name="__symshape_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=v) for v in freevars],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                           defaults=[]),
        body=[fn, ast.Return(value=ast.Name(id=fn.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_comment=None)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec", flags=code.co_flags & _FUTURES,
                       dont_inherit=True)
    outer = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    return next((c for c in outer.co_consts if isinstance(c, types.CodeType)
                 and c.co_name == code.co_name), None)


def _declared(fn: ast.FunctionDef) -> Set[str]:
    """Names the function declares ``global`` or ``nonlocal`` (never carried)."""
    out: Set[str] = set()
    for node in _own_nodes(fn.body):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
    return out


def _own_nodes(stmts):
    """The nodes of ``stmts`` outside nested functions, classes and comprehensions."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
                                  ast.GeneratorExp)):
                continue
            stack.append(child)


def _bound_names(target, out: List[str]) -> None:
    if isinstance(target, ast.Name):
        out.append(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            _bound_names(e, out)
    elif isinstance(target, ast.Starred):
        _bound_names(target.value, out)
    elif isinstance(target, (ast.Subscript, ast.Attribute)):
        base = target.value
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value
        if isinstance(base, ast.Name):
            out.append(base.id)


def _local_names(fn: ast.FunctionDef) -> Set[str]:
    """The function's parameters and the names it binds (its locals)."""
    a = fn.args
    out = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    out.update(x.arg for x in (a.vararg, a.kwarg) if x is not None)
    for node in _own_nodes(fn.body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add((node.asname or node.name).split(".")[0])
    return out


def _carried(body: List[ast.stmt], target_names: Set[str], local: Set[str]
             ) -> Tuple[List[str], Dict[str, str]]:
    """The names a loop body binds or writes through, in order of first appearance, and
    which of them are lists it appends to (a name it only writes through or calls a method
    of is carried when it is a local of the function: never a module or a global)."""
    names: List[str] = []
    kinds: Dict[str, str] = {}
    for node in sorted(_own_nodes(body), key=lambda n: (getattr(n, "lineno", 0),
                                                          getattr(n, "col_offset", 0))):
        got: List[str] = []
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            got.append(node.id)
        elif isinstance(node, (ast.Assign,)):
            for t in node.targets:
                _bound_names(t, got)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            _bound_names(node.target, got)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            _bound_names(node.target, got)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            _bound_names(node.optional_vars, got)
        elif isinstance(node, ast.NamedExpr):
            _bound_names(node.target, got)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            got.append(node.name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = node.func.value
            if isinstance(base, ast.Name):
                got.append(base.id)
                if node.func.attr in _LIST_METHODS:
                    kinds.setdefault(base.id, "list")
        for n in got:
            if n not in names:
                names.append(n)
    names = [n for n in names if n in local and (n not in target_names or n in kinds)]
    return names, {n: kinds.get(n, "name") for n in names}


def _increment(stmt, name: str) -> Optional[int]:
    """``k`` when ``stmt`` is ``name += k`` or ``name = name + k`` (``k`` a positive int)."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        target, value = stmt.target, stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.op, ast.Add) and \
            isinstance(stmt.value.left, ast.Name) and stmt.value.left.id == name:
        target, value = stmt.targets[0], stmt.value.right
    else:
        return None
    if not (isinstance(target, ast.Name) and target.id == name and
            isinstance(value, ast.Constant) and type(value.value) is int and value.value > 0):
        return None
    return value.value


def _why_not(body: List[ast.stmt], declared: Set[str], carried: List[str]) -> Optional[str]:
    """Why a body cannot become a function, or None."""
    for node in _own_nodes(body):
        if isinstance(node, ast.Return):
            return "its body returns (line %d)" % node.lineno
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return "its body yields (line %d)" % node.lineno
        if isinstance(node, ast.Delete):
            return "its body deletes a name (line %d)" % node.lineno
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return "its body declares %s (line %d)" % (", ".join(node.names), node.lineno)
    if _breaks(body):
        return "its body breaks out of the loop (line %d)" % _breaks(body)
    bad = [n for n in carried if n in declared]
    if bad:
        return "it assigns %s, declared global or nonlocal" % bad[0]
    return None


def _breaks(stmts) -> int:
    """The line of a ``break`` of this loop (not of a loop nested in it), or 0."""
    for node in stmts:
        if isinstance(node, ast.Break):
            return node.lineno
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            got = _breaks(node.orelse)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        else:
            got = _breaks([c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
                          + [h for h in getattr(node, "handlers", [])])
        if got:
            return got
    return 0


class _ContinueToReturn(ast.NodeTransformer):
    """``continue`` of this loop (not of a nested one) becomes ``return <carried>``."""

    def __init__(self, ret: ast.Return) -> None:
        self.ret = ret

    def visit_Continue(self, node):
        return ast.copy_location(_copy(self.ret), node)

    def _skip(self, node):
        return node

    visit_For = visit_While = visit_AsyncFor = visit_FunctionDef = _skip
    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _skip


def _copy(node):
    return ast.parse(ast.unparse(node)).body[0]


def _tuple(names: List[str], ctx) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Name(id=n, ctx=ctx()) for n in names], ctx=ctx())


class _Rewriter:
    """Rewrites the convertible ``for`` loops of a list of statements (inner loops first)."""

    def __init__(self, declared: Set[str], local: Set[str], refused: Dict) -> None:
        self.declared = declared
        self.local = local
        self.refused = refused
        self.spans: List[Tuple[int, int]] = []
        self.whiles: Set[int] = set()          # the lines of the while statements converted
        self.count = 0
        self.depth = 0                          # inside how many converted loop bodies

    def statements(self, stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for s in stmts:
            out.extend(self.statement(s))
        return out

    def statement(self, s: ast.stmt) -> List[ast.stmt]:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [s]
        if isinstance(s, ast.While):
            # (before its body is rewritten: the for statement it becomes rewrites it)
            got = self.counted_while(s)
            if got is not None:
                return got
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list) and not isinstance(s, ast.For):
                setattr(s, field, self.statements(getattr(s, field)))
        if isinstance(s, ast.Try):
            for h in s.handlers:
                h.body = self.statements(h.body)
        if isinstance(s, ast.For):
            return self.loop(s)
        return [s]

    def counted_while(self, s: ast.While):
        """``while i < n: BODY; i += k`` (``<=``, ``n > i`` too; ``i`` bound nowhere else in
        the body, ``n`` not changed by it, no ``break`` / ``continue`` / ``return``) as
        ``for i in range(i, n, k): BODY`` (converted like any for statement) and ``i`` set
        to its value after the last test, or None when the loop is not of that form."""
        t = s.test
        if s.orelse or not isinstance(t, ast.Compare) or len(t.ops) != 1 or not s.body:
            return None
        op, left, right = t.ops[0], t.left, t.comparators[0]
        if isinstance(op, (ast.Lt, ast.LtE)) and isinstance(left, ast.Name):
            name, bound = left.id, right
        elif isinstance(op, (ast.Gt, ast.GtE)) and isinstance(right, ast.Name):
            name, bound = right.id, left
        else:
            return None
        k = _increment(s.body[-1], name)
        rest = s.body[:-1]
        stored = {n.id for n in _own_nodes(s.body) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, ast.Store)} | set(_carried(s.body, set(),
                                                                    self.local)[0])
        read = {n.id for n in ast.walk(bound) if isinstance(n, ast.Name)}
        if k is None or name in {n.id for n in _own_nodes(rest) if isinstance(n, ast.Name)
                                 and isinstance(n.ctx, ast.Store)} or read & stored or \
                _breaks(rest) or any(isinstance(n, (ast.Continue, ast.Return))
                                     for n in _own_nodes(rest)):
            return None
        end = "__symshape_end_%d" % self.count
        if isinstance(op, (ast.LtE, ast.GtE)):
            bound = ast.BinOp(left=bound, op=ast.Add(), right=ast.Constant(value=1))
        pre = ast.Assign(targets=[ast.Name(id=end, ctx=ast.Store())], value=bound)
        loop = ast.For(target=ast.Name(id=name, ctx=ast.Store()),
                       iter=ast.Call(func=ast.Name(id="range", ctx=ast.Load()),
                                     args=[ast.Name(id=name, ctx=ast.Load()),
                                           ast.Name(id=end, ctx=ast.Load()),
                                           ast.Constant(value=k)], keywords=[]),
                       body=rest or [ast.Pass()], orelse=[], type_comment=None)
        after = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Call(
            func=ast.Name(id=WHILE_END, ctx=ast.Load()),
            args=[ast.Name(id=name, ctx=ast.Load()), ast.Name(id=end, ctx=ast.Load()),
                  ast.Constant(value=k)], keywords=[]))
        for node in (pre, loop, after):
            ast.copy_location(node, s)
        ast.fix_missing_locations(ast.Module(body=[pre, loop, after], type_ignores=[]))
        loop.iter.end_lineno = t.end_lineno
        got = self.loop(loop)
        if len(got) == 1:                # not convertible: the while as it was
            return None
        self.whiles.update(range(s.lineno, t.end_lineno + 1))
        return [pre] + got + [after]

    def looked_into(self, it):
        """``enumerate(zip(a, b))`` as ``__symshape_iter__(enumerate,
        __symshape_iter__(zip, a, b))``: each call passed unevaluated to the helper."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id in _LOOKED_INTO and it.func.id not in self.local:
            return ast.Call(func=ast.Name(id=CALL_NAME, ctx=ast.Load()),
                            args=[it.func] + [self.looked_into(a) for a in it.args],
                            keywords=it.keywords)
        return it

    def loop(self, s: ast.For) -> List[ast.stmt]:
        targets: List[str] = []
        _bound_names(s.target, targets)
        carried, kinds = _carried(s.body, set(targets), self.local)
        why = _why_not(s.body, self.declared, carried)
        span = (s.lineno, s.iter.end_lineno or s.lineno)
        s.orelse = self.statements(s.orelse)
        if why is not None:
            self.refused[span] = why
            s.body = self.statements(s.body)
            return [s]
        self.depth += 1
        body = self.statements(s.body)
        self.depth -= 1
        k = self.count
        self.count += 1
        fname = "__symshape_body_%d" % k
        ret = ast.Return(value=_tuple(carried, ast.Load))
        body = [_ContinueToReturn(ret).visit(b) for b in body]
        index = "__symshape_i_%d" % k
        head = ast.Assign(targets=[s.target], value=ast.Name(id=index, ctx=ast.Load()))
        fdef = ast.FunctionDef(
            name=fname, args=ast.arguments(
                posonlyargs=[], args=[ast.arg(arg=index)] + [ast.arg(arg=n) for n in carried],
                vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
            body=[head] + body + [ret], decorator_list=[], returns=None, type_comment=None)
        saved = ["__symshape_in_%d_%d" % (k, j) for j in range(len(carried))]
        pre: List[ast.stmt] = []
        for n, v in zip(carried, saved):
            pre.append(ast.Try(
                body=[ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())],
                                 value=ast.Name(id=n, ctx=ast.Load()))],
                handlers=[ast.ExceptHandler(
                    type=ast.Name(id="NameError", ctx=ast.Load()), name=None,
                    body=[ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())],
                                     value=ast.Name(id=UNDEF_NAME, ctx=ast.Load()))])],
                orelse=[], finalbody=[]))
        info = ast.Constant(value=(s.lineno, tuple(carried),
                                   tuple(kinds[n] for n in carried)))
        it = self.looked_into(s.iter)
        call = ast.Call(func=ast.Name(id=LOOP_HELPER, ctx=ast.Load()),
                        args=[it, ast.Name(id=fname, ctx=ast.Load()),
                              _tuple(saved, ast.Load), info], keywords=[])
        assign = ast.Assign(targets=[_tuple(carried, ast.Store)], value=call) if carried \
            else ast.Expr(value=call)
        # (a name the loop left unbound is unbound after it; inside another loop's body
        # it stays the sentinel, which that body returns)
        post = [] if self.depth else [
            ast.If(test=ast.Compare(left=ast.Name(id=n, ctx=ast.Load()), ops=[ast.Is()],
                                    comparators=[ast.Name(id=UNDEF_NAME, ctx=ast.Load())]),
                   body=[ast.Delete(targets=[ast.Name(id=n, ctx=ast.Del())])], orelse=[])
            for n in carried]
        out = [fdef] + pre + [assign] + post + s.orelse
        for node in out:
            ast.copy_location(node, s)
            for sub in ast.walk(node):
                if not hasattr(sub, "lineno") or sub is node:
                    continue
        # every statement made here carries the loop's line; the user's own keep theirs
        ast.fix_missing_locations(ast.Module(body=out, type_ignores=[]))
        self.spans.append(span)
        return out


def functions_of(code: types.CodeType) -> List[types.FunctionType]:
    """The live function objects whose code is ``code``."""
    return [f for f in gc.get_referrers(code)
            if type(f) is types.FunctionType and f.__code__ is code]


class Swapped:
    """The functions whose ``__code__`` a trace replaced, to put back when it ends."""

    def __init__(self) -> None:
        self.swaps: List[Tuple[types.FunctionType, types.CodeType]] = []
        self.codes: Set[types.CodeType] = set()

    def convert(self, found: LoopFound) -> bool:
        """Swap in the rewritten code of the function holding ``found``'s loop; False when
        it cannot be (then the loop runs as Python, as before)."""
        got = conversion(found.code)
        if got is None or found.code in self.codes:
            return False
        self.codes.add(found.code)
        for f in functions_of(found.code):
            self.swaps.append((f, found.code))
            f.__code__ = got[0]
        return True

    def restore(self) -> None:
        """Put every swapped function's own code back."""
        for f, code in reversed(self.swaps):
            f.__code__ = code
        self.swaps.clear()
        self.codes.clear()
