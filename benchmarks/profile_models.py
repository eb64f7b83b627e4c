"""Where the time of ``ep.compile()`` code goes on the real-model programs, by kind of work.

    python benchmarks/profile_models.py [--only NAME] [--calls N]

For each program of ``benchmarks/real_models.py`` (the same programs, sizes and exports),
every line the generated code runs (its body and the block functions of fused groups) is
timed in process CPU time with a line tracer and charged to one kind of work:

* ``matmul`` / ``matmul, mixed dtypes``: BLAS calls; *mixed* when the operands' dtypes
  differ (a float64 activation times float32 weights): NumPy then casts the other operand
  to float64, in full, on every call, before BLAS runs (eager pays the same);
* ``power``: ``x ** 3`` and other ``np.power`` (libm ``pow`` per element on float64);
* ``exp / tanh / ...``: other transcendental ufuncs;
* ``reductions``, ``elementwise``, ``gathers and copies`` (take, concatenate, setitem,
  astype...), ``python``: everything else (block loops, buffer lookups, dispatch).

Percentages are of the traced time (the tracer adds about a microsecond per line, so
``python`` is inflated on small programs); the untraced eager and compiled times are printed
alongside.  BLAS is pinned to one thread, as in the benchmark.
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import collections  # noqa: E402
import linecache  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_models  # noqa: E402

KINDS = ("matmul", "matmul, mixed dtypes", "power", "exp / tanh / ...", "reductions",
         "elementwise", "gathers and copies", "python")
_TRANSCENDENTAL = ("exp", "tanh", "log", "sin", "cos", "sqrt", "expm1", "log1p", "arctan")
_MATMUL = re.compile(r"np\.matmul\((\w+), (\w+)")
_REDUCE = re.compile(r"\.(sum|mean|var|std|max|min|prod|any|all)\(")
_UFUNC = re.compile(r"np\.(\w+)\(")
_COPY = ("np.take(", "np.concatenate(", "setitem", "np.copyto(", ".astype(", "np.pad(",
         "np.empty(", "np.zeros(", "np.full(", "np.where(", "[...] =")


def classify(text: str, frame) -> str:
    """The kind of work of one generated line (``frame``: where its names live)."""
    m = _MATMUL.search(text)
    if m:
        dts = set()
        for name in m.groups():
            v = frame.f_locals.get(name, frame.f_globals.get(name))
            dts.add(getattr(v, "dtype", None))
        return "matmul, mixed dtypes" if len(dts) > 1 else "matmul"
    if "np.power(" in text or "**" in text:
        return "power"
    m = _UFUNC.search(text)
    if m and m.group(1) in _TRANSCENDENTAL:
        return "exp / tanh / ..."
    if _REDUCE.search(text):
        return "reductions"
    if any(c in text for c in _COPY):
        return "gathers and copies"
    if m or re.search(r"\(\w+ [-+*/] ", text) or re.search(r"= \(", text):
        return "elementwise"
    return "python"


class LineProfile:
    """CPU time per kind, charged line by line over frames of generated code (a nested
    frame pauses its caller's line)."""

    def __init__(self) -> None:
        self.kinds = collections.Counter()
        self.stack = []                     # [frame, kind] of the traced frames
        self.t = 0.0

    def _charge(self) -> None:
        now = time.process_time()
        if self.stack and self.stack[-1][1] is not None:
            self.kinds[self.stack[-1][1]] += now - self.t
        self.t = now

    def global_trace(self, frame, event, arg):
        if not frame.f_code.co_filename.startswith("<symshape"):
            return None
        self._charge()
        self.stack.append([frame, None])
        return self.local_trace

    def local_trace(self, frame, event, arg):
        self._charge()
        if event == "line":
            text = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            self.stack[-1][1] = classify(text, frame)
        elif event == "return":
            self.stack.pop()
        return self.local_trace


def cpu_per_call(fn, args, calls: int) -> float:
    t0 = time.process_time()
    for _ in range(calls):
        fn(*args)
    return (time.process_time() - t0) / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    ap.add_argument("--calls", type=int, default=5)
    a = ap.parse_args()
    short = [k.split(" ")[0].rstrip(",") + ("*" if "mixed" in k else "") for k in KINDS]
    print("process CPU time per call; then %% of the traced ep.compile() time by kind")
    print("%-16s %-17s %9s %9s  %s" % ("program", "size", "eager", "compiled",
                                       " ".join("%8s" % k for k in short)))
    for name, size, eager, epc, _jit, args_of in real_models.cases(False):
        if a.only and a.only not in name:
            continue
        args = args_of()
        eager(*args)
        epc(*args)
        te = cpu_per_call(eager, args, a.calls)
        tc = cpu_per_call(epc, args, a.calls)
        prof = LineProfile()
        sys.settrace(prof.global_trace)
        try:
            for _ in range(a.calls):
                epc(*args)
        finally:
            sys.settrace(None)
        total = sum(prof.kinds.values()) or 1.0
        print("%-16s %-17s %7.2fms %7.2fms  %s" % (
            name, size, te * 1e3, tc * 1e3,
            " ".join("%7.1f%%" % (100 * prof.kinds[k] / total) for k in KINDS)))
    print("matmul* = matmul with mixed dtypes (one operand cast in full on every call); "
          "exp = exp, tanh and other transcendental ufuncs")


if __name__ == "__main__":
    main()
