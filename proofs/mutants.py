"""The seven wrong-result mutants of issue 34 that survived every proof, each killed by a
proof now: ``python -m proofs.mutants`` applies each to the source, runs the proofs named
for it (``python -m proofs RULE...`` in a fresh process), requires that they fail, and
restores the file (also when interrupted).  Exit status 1 when a mutant survives.

Each mutant is wrong only outside the samples the old proofs used: the proofs that kill
them quantify over symbolic range ends, every rank / axis / placement up to a bound, a
grammar of numerators, symbolic polynomial coefficients, or the emitted check's text.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import List, NamedTuple, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Mutant(NamedTuple):
    name: str
    path: str            # relative to the repository root
    old: str             # the exact source text replaced (must occur once)
    new: str
    rules: Tuple[str, ...]


MUTANTS: List[Mutant] = [
    Mutant("vr_min ignores the arguments after the third", "symshape/ranges.py",
           "def vr_min(args: Iterable[ValueRange]) -> ValueRange:\n    args = list(args)\n",
           "def vr_min(args: Iterable[ValueRange]) -> ValueRange:\n    args = list(args)[:3]\n",
           ("range.min",)),
    Mutant("x // k folded to 0 when x can equal k", "symshape/simplify.py",
           "if b.lower >= 0 and b.upper < den:", "if b.lower >= 0 and b.upper <= den:",
           ("fold.small_numerator",)),
    Mutant("Cauchy root bound without its + 1", "symshape/symbolic.py",
           "    return 1 + max([E.ceildiv(abs(c), lead)",
           "    return max([E.ceildiv(abs(c), lead)",
           ("bounds.univariate",)),
    Mutant("no check for a range with only an upper end", "symshape/contract/writer.py",
           "if not is_inf(vr.lower) or not is_inf(vr.upper):", "if not is_inf(vr.lower):",
           ("check.emitted",)),
    Mutant("np.stack(..., axis=-1) normalised against the input rank",
           "capture/ops/shape.py", "ax = norm_axis(axis, nd + 1)", "ax = norm_axis(axis, nd)",
           ("shape.pad_tile_repeat_stack",)),
    Mutant("np.tile with more repetitions than axes", "capture/ops/shape.py",
           "shape = (1,) * (nd - x.ndim) + tuple(x.shape)", "shape = tuple(x.shape)",
           ("shape.pad_tile_repeat_stack",)),
    Mutant("non-adjacent advanced indices x[:, i, :, j] kept in place",
           "capture/ops/advanced.py", "    if not adjacent:\n        shape.extend(B)",
           "    if False:\n        shape.extend(B)", ("index.advanced",)),
]


def run_mutant(m: Mutant, python: str = sys.executable) -> Tuple[bool, str, float]:
    """Apply ``m``, run its proofs, restore the file: (killed, last output line, seconds)."""
    path = os.path.join(ROOT, m.path)
    with open(path) as f:
        original = f.read()
    if original.count(m.old) != 1:
        raise RuntimeError("%s: the mutated text occurs %d times in %s"
                           % (m.name, original.count(m.old), m.path))
    t0 = time.perf_counter()
    try:
        with open(path, "w") as f:
            f.write(original.replace(m.old, m.new))
        r = subprocess.run([python, "-m", "proofs", *m.rules], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
    finally:
        with open(path, "w") as f:
            f.write(original)
    out = (r.stdout + r.stderr).strip().splitlines()
    fail = next((l for l in out if l.startswith("FAIL")), out[-1] if out else "")
    return r.returncode != 0, fail, time.perf_counter() - t0


def main() -> int:
    survivors = 0
    for m in MUTANTS:
        killed, line, secs = run_mutant(m)
        survivors += not killed
        print("%-8s %-58s %5.1fs  %s" % ("killed" if killed else "SURVIVED", m.name, secs,
                                          line[:160]))
    print("mutants: %d killed, %d survived" % (len(MUTANTS) - survivors, survivors))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
