"""What a compiled function tells its user about itself: ``report()`` (variants, guards,
recompile reasons, compile times, graph breaks) and the advice when its cache is full."""
from __future__ import annotations

from typing import Optional


class CompileReports:
    """The reporting half of ``jit.CompiledFunction``."""

    def _limit_advice(self, reason: Optional[str]) -> str:
        """What would actually stop the recompiles."""
        if self.dynamic is False:
            return ("dynamic=False compiles one variant per shape: use dynamic=None "
                    "(automatic) or dynamic=True to compile changing sizes once, or raise "
                    "cache_size_limit.")
        pins = []
        for v in self._variants:
            env = getattr(v.program, "_env", None)
            for g in getattr(env, "guards", ()):
                if g.kind == "specialize" and g.frame is not None:
                    text = "%s: %s" % (g.frame.location, g.frame.code)
                    if text not in pins:
                        pins.append(text)
        if pins:
            return ("The sizes are already dynamic; the program pins them to constants at "
                    "%s. Keep those sizes symbolic there (pass shapes instead of int(), "
                    "len() or range() of a size), or raise cache_size_limit."
                    % "; ".join(pins[:3]))
        return ("The sizes are already dynamic, so the guard above is what changes: an "
                "input that takes many values (a Python int, a dtype, a container layout) "
                "compiles a variant each; pass it as an array, or raise cache_size_limit.")

    def report(self) -> str:
        """Variants with their guards, recompile reasons, compile times, breaks."""
        dyn = {None: "None (automatic)", True: "True", False: "False"}[self.dynamic]
        own, reasons = self._variants, self._recompile_reasons
        lines = ["ss.compile(%s): backend=%r, dynamic=%s, fullgraph=%s" % (
            self._name, self.backend, dyn, self.fullgraph)]
        lines.append("  calls: %d (%d compiled, %d through graph breaks, %d eager); "
                     "variants: %d of %d%s" % (
                         self.calls, sum(self._counts), self.break_calls, self.eager_calls,
                         len(own), self.cache_size_limit,
                         "; frozen (on miss: %s)" % self.frozen if self.frozen else ""))
        total = sum(v.compile_time for v in own)
        if own:
            lines.append("  compile time: %.1f ms in total" % (total * 1e3))
        for v in own:
            shapes = ", ".join("%s: %s" % kv for kv in v.input_shapes.items())
            lines.append("  variant %d: %s" % (v.index, shapes))
            lines.append("    compiled in %.1f ms, %d calls; %s" % (
                v.compile_time * 1e3, v.calls,
                "first call" if v.reason is None else "recompiled because %s" % v.reason))
            for gtext in v.guards:
                lines.append("    guard: %s" % gtext)
        if reasons:
            lines.append("  recompile reasons:")
            lines += ["    %d. %s" % (i + 1, r) for i, r in enumerate(reasons)]
        if self.mode != "graph":
            lines.append("  mode: %s (%s)" % (self.mode, self.mode_reason))
        if getattr(self, "speed_text", None):
            lines.append("  speed: %s" % self.speed_text)
        if self.break_reasons:
            lines.append("  graph breaks (run eagerly on every call):")
            lines += ["    %s" % r for r in self.break_reasons]
        if self._driver is not None:
            lines.append("  compiled segments (each with its own guards and variants):")
            for seg in self._split_fns:
                sub = seg.report().splitlines()
                lines.append("    segment %s" % sub[0].split("(", 1)[1].split(")", 1)[0]
                             .split(" ", 1)[-1].strip("()"))
                lines += ["    " + x for x in sub[1:]]
        elif self.break_reasons:
            lines.append("  compiled segments: %d (cache hits %d)" % (
                len(self._segments.fns), self._segments.hits))
        return "\n".join(lines)
