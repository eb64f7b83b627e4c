"""A compiled function at its graph breaks: the statement that breaks runs eagerly and the
statements around it run as compiled segments (``split.py``), each cached behind its own
guards; a call through breaks that cannot split runs in pieces (``breaks.LazyRun``)."""
from __future__ import annotations

from typing import List, Optional

from symshape.errors import UserError

from . import split as _split
from .breaks import LazyRun, break_advice, break_detail


class BreakSplitting:
    """The graph-break half of ``jit.CompiledFunction``."""

    def _run_breaks(self, args, kwargs):
        run = LazyRun(self._f, self._segments)
        try:
            result = run(args, kwargs)
        except UserError as e:
            # tracing cannot continue past this point; unless a side effect already ran,
            # run the whole call eagerly, and every later call too
            if run.side_effects:
                raise
            self.mode = "eager"
            self.mode_reason = "tracing through graph breaks failed: %s" % (
                str(e).splitlines()[0])
            return self._eager(args, kwargs)
        except Exception as e:
            # compiled work raised (LinAlgError) where it ran, at the next break, perhaps
            # outside the user's try: unless a side effect already ran, run it eagerly
            if run.failed is not e or run.side_effects:
                raise
            return self._raised(*args, **kwargs)
        finally:
            self._note_breaks(run)
        self.break_calls += 1
        return result

    # ------------------------------------------------------------------ split at breaks
    def _break_at(self, exc: BaseException, brk, args, kwargs):
        """A graph break in a statement of this function: from now on that statement runs
        eagerly and the statements around it run as compiled segments (codegen/split.py),
        each cached behind its own guards, so later calls trace nothing again."""
        line = _split.break_line(exc, _split.code_of(self._f))
        root = self._root
        if root is not self:
            # a segment met a break of its own: this call runs the segment's statements
            # eagerly (the user's error, if they fail, propagates and nothing changes), and
            # the compiled function is split there too
            result = self._f(*args, **kwargs)
            self.eager_calls += 1
            root._add_break(line, brk)
            return result
        sp = self._resplit(line, brk)
        if sp is None:
            return self._fall_back("breaks", str(brk), self._run_breaks, args, kwargs,
                                   "it runs in pieces from now on (graph break at %s)"
                                   % break_detail(brk.frame, brk.reason))
        saved = (self._driver, dict(self._split_lines), self._split_fns, self.mode,
                 self.mode_reason)
        self._use_split(sp, line, brk)
        known = list(self.break_reasons)
        self._note_break(brk)
        try:
            result = sp.driver(*args, **kwargs)
        except BaseException:
            # wrong for these inputs even when run in pieces: the user's own error
            (self._driver, self._split_lines, self._split_fns, self.mode,
             self.mode_reason) = saved
            self.break_reasons[:] = known
            self._install()
            raise
        self.break_calls += 1
        self._fallback_warning(
            "graph break at %s\n%s runs eagerly on every call; the code "
            "before and after it runs compiled, in %d segment%s. %s"
            % (break_detail(brk.frame, brk.reason), self._break_statement(line, brk),
               len(sp.fns), "" if len(sp.fns) == 1 else "s", break_advice(brk.reason)))
        return result

    def _break_statement(self, line: int, brk) -> str:
        """Which statement of the compiled function runs eagerly: the break's own line,
        or the line calling the helper the break is in (then all of that call)."""
        code = _split.code_of(self._f)
        fr = brk.frame
        if fr is None or code is None or (fr.filename == code.co_filename and
                                          fr.lineno == line):
            return "That statement"
        import linecache
        text = linecache.getline(code.co_filename, line).strip()
        # a break parsed from an error message knows the file and line, not the function
        fn = fr.function if fr.function not in ("?", "", None) else (
            "the function at %s:%d" % (fr.filename, fr.lineno))
        return ("The break is inside %s, called at %s:%d (%s): that whole statement "
                "(decorate %s with ss.compile to compile its array work around the break)"
                % (fn, code.co_filename, line, text, fn))

    def _segment_eagerly(self, brk, args, kwargs):
        """A segment that cannot be traced as a whole (an input that is an object, not an
        array or number): its statements run eagerly from now on, in the rewritten
        function itself (no dispatch), and this call runs them eagerly too."""
        result = self._f(*args, **kwargs)
        self.eager_calls += 1
        # no tracing again (the rewrite below keeps this segment where every statement
        # would run eagerly: nothing is left to compile)
        self.mode, self.mode_reason = "eager", str(brk)
        fdef = getattr(self._f, "__ss_ast__", None)
        if fdef is not None:
            lines = [st.lineno for st in fdef.body]
            self._root._add_eager_lines(lines, "%s: %s; those statements run eagerly" % (
                self._name, str(brk).split(": ", 1)[-1]))
        return result

    def _add_eager_lines(self, lines: List[int], reason: str) -> None:
        with self._lock:
            if reason not in self.break_reasons:
                self.break_reasons.append(reason)
            new = [ln for ln in lines if ln not in self._split_lines]
            if not new or not self._split_ast:
                return
            for ln in new:
                self._split_lines[ln] = reason
            sp = _split.split(self._f, self._split_ast, set(self._split_lines), self._segment,
                              self._split_headers)
            if sp is not None:
                self._driver, self._split_fns = sp.driver, sp.fns
                self._install()

    def _resplit(self, line: int, brk):
        if self._split_ast is None:
            self._split_ast = _split.function_ast(self._f) or False
        if not self._split_ast:
            return None
        lines = set(self._split_lines) | {line}
        return _split.split(self._f, self._split_ast, lines, self._segment,
                            self._split_headers)

    def _use_split(self, sp, line: int, brk) -> None:
        self._split_lines.setdefault(line, str(brk))
        self._driver, self._split_fns = sp.driver, sp.fns
        self.mode, self.mode_reason = "split", "graph break at %s" % (
            "; ".join(self._split_lines.values()))
        self._start_speed_check()           # a new form: timed against eager afresh
        self._install()

    def _add_break(self, line: Optional[int], brk) -> None:
        """A segment found a break at ``line``: split the function there as well."""
        with self._lock:
            self._note_break(brk)
            if line is None or line in self._split_lines:
                return
            sp = self._resplit(line, brk)
            if sp is not None:
                self._use_split(sp, line, brk)

    @property
    def segments(self) -> list:
        """Split at graph breaks: the compiled function of each segment, in program order
        (each with its own ``variants`` and ``recompile_reasons``)."""
        return list(self._split_fns)

    def _note_break(self, brk) -> None:
        text = str(brk)
        if text not in self.break_reasons:
            self.break_reasons.append(text)

    def _note_breaks(self, run: LazyRun) -> None:
        for b in run.breaks:
            text = str(b)
            if text not in self.break_reasons:
                self.break_reasons.append(text)
