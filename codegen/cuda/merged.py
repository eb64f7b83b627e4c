"""Merged row phases: two reductions one read of the row computes (``online``: softmax's
max and sum of exp; ``welford``: a mean and the squared deviations from it), and the
combine of a tuple of per-thread values across the row's threads."""
from __future__ import annotations

from typing import List

from symshape.capture.ir import Node

from . import cops
from .cops import CTYPES
from .ctext import uses_coords
from .geometry import COL_SPLIT, ROW_BLOCK


class MergedPhases:
    """Merged phases of a row kernel (a part of ``CudaEmitter``)."""

    def _lanes_merge(self, ct: str, vals: List[str], merge: List[str]) -> List[str]:
        """Combine per-thread tuples ``vals`` across the row's threads: ``merge`` (lines
        over ``vals`` and the other tuple ``o0, o1, ...``) over the warp's shuffles, then
        across warps through one half of the scratch (one barrier)."""
        k = len(vals)
        if self.column and self.cvec_mode:
            # SS_VEC: each thread's tuple for each of its cvec columns in its own stripe
            n, V = 32 * COL_SPLIT, self.cvec
            lines = ["{                        // across warps: one barrier",
                     "  %s* sh = (%s*)(ss_scratch + %d * ss_par);" % (ct, ct, self.col_half),
                     "  ss_par ^= 1u;"]
            lines += ["  " + l for l in self._cols([" ".join(
                "sh[%d * (%d + ss_v) + threadIdx.x] = %s;" % (n, V * i, v)
                for i, v in enumerate(vals))])]
            lines.append("  __syncthreads();")
            get = self._cols([" ".join("%s = sh[%d * (%d + ss_v) + ss_col];" % (v, n, V * i)
                                       for i, v in enumerate(vals)),
                              "for (unsigned int w = 1; w < ss_g; w++) {"] +
                             ["  const %s o%d = sh[%d * (%d + ss_v) + 32 * w + ss_col];" % (
                                 ct, i, n, V * i) for i in range(k)] +
                             ["  " + l for l in merge] + ["}"])
            return lines + ["  " + l for l in get] + ["}"]
        if self.column:
            # a warp's lanes hold different columns: the COL_SPLIT threads of a column
            # (one per warp) meet in shared memory, each tuple value in its own stripe
            n = 32 * COL_SPLIT
            lines = ["{                        // across warps: one barrier",
                     "  %s* sh = (%s*)(ss_scratch + %d * ss_par);" % (ct, ct, self.col_half),
                     "  ss_par ^= 1u;",
                     "  " + " ".join("sh[%d + threadIdx.x] = %s;" % (n * i, v)
                                     for i, v in enumerate(vals)),
                     "  __syncthreads();",
                     "  " + " ".join("%s = sh[%d + ss_col];" % (v, n * i)
                                     for i, v in enumerate(vals)),
                     "  for (unsigned int w = 1; w < ss_g; w++) {"]
            lines += ["    const %s o%d = sh[%d + 32 * w + ss_col];" % (ct, i, n * i)
                      for i in range(k)]
            lines += ["    " + l for l in merge]
            return lines + ["  }", "}"]
        per = ROW_BLOCK // 32
        lines = ["for (int w = 16; w > 0; w >>= 1) {"]
        lines += ["  const %s o%d = ss_shfl_xor(%s, w);" % (ct, i, v) for i, v in enumerate(vals)]
        lines += ["  " + l for l in merge]
        lines.append("}")
        lines.append("if (ss_g > 32) {          // across warps: one barrier")
        lines.append("  %s* sh = (%s*)ss_scratch + %d * ss_par;" % (ct, ct, self.half))
        lines.append("  ss_par ^= 1u;")
        lines.append("  if ((threadIdx.x & 31u) == 0) { %s }" % " ".join(
            "sh[%d + (threadIdx.x >> 5)] = %s;" % (per * i, v) for i, v in enumerate(vals)))
        lines.append("  __syncthreads();")
        lines.append("  " + " ".join("%s = sh[%d];" % (v, per * i) for i, v in enumerate(vals)))
        lines.append("  for (unsigned int w = 1; w < (ss_g >> 5); w++) {")
        lines += ["    const %s o%d = sh[%d + w];" % (ct, i, per * i) for i in range(k)]
        lines += ["    " + l for l in merge]
        lines.append("  }")
        lines.append("}")
        return lines

    def _merged_phase(self, kind: str, ri: int, r0: Node, r1: Node, jdecode: List[str],
                      isz: str, pi: int = 0, slot: int = 0) -> List[str]:
        """One looped read of the row computing two reductions (``merged_pairs``).
        ``online``: a running maximum m and the sum s of exp(x - m), rescaled by
        exp(m_old - m_new) when the maximum grows; each term is the kernel's own
        exp(x - m) at the current maximum.  ``welford``: the plain sum (so the mean is
        the two-pass kernel's, bit for bit) and Welford's count, running mean and sum of
        squared deviations, combined across threads pairwise (Chan et al.)."""
        x = r0.inputs[0]
        ct = CTYPES[x.dtype.name]
        R0 = cops.Reduction(r0.op, x.dtype, r0.dtype)
        R1 = cops.Reduction(r1.op, r1.inputs[0].dtype, r1.dtype)
        names = ["a%d" % ri, "a%d" % (ri + 1), "r%d" % ri, "r%d" % (ri + 1),
                 "ss_n%d" % ri, "ss_mu%d" % ri]
        a0, a1, v0, v1, n, mu = [self._pv(nm) for nm in names]
        self.helpers.add("shfl")
        self.memo, self.body, self.pre = {}, [], []
        v = self.value(x, self.dom)
        elem = "((%s)%s)" % (ct, v)
        ph = ["// %s, %s = %s(%s), %s(%s) over axes %s: one read of the row (%s)" % (
            r0.name, r1.name, r0.op, x.name, r1.op, r1.inputs[0].name, tuple(self.spec.axes),
            "a running max and the sum of exp rescaled as it grows" if kind == "online" else
            "the sum and Welford's running mean and squared deviations")]
        if kind == "online":
            self.helpers |= {"maximum", "online"}
            nx = len(self.body)
            self.red_vars[r0] = "ss_mx"              # the term at the running maximum
            t = self.value(r1.inputs[0], self.dom)
            del self.red_vars[r0]
            lowest = cops.lowest(x.dtype)
            body = self.body[:nx] + ["const %s ss_mx = ss_maximum(%s, %s);" % (ct, a0, elem)] + \
                self.body[nx:] + [
                    "%s = %s * (%s == ss_mx ? (%s)1 : ss_expt(%s - ss_mx)) + "
                    "(ss_mx == %s ? (%s)1 : %s);" % (a1, a1, a0, ct, a0, lowest, ct,
                                                     R1.load(t, r1.inputs[0].dtype, self.helpers)),
                    "%s = ss_mx;" % a0]
            ph += self._pre_lines()
            ph += self._per_col(ct, [(names[0], lowest), (names[1], R1.identity())])
            merge = ["ss_online_merge(%s, %s, o0, o1);" % (a0, a1)]
            ph += self._split_partials(ct, [a0, a1], merge, pi, slot, self._row_loop(
                False, isz, (jdecode if uses_coords(jdecode, body) else []) + body) +
                self._lanes_merge(ct, [a0, a1], merge))
            ph += self._per_col(R0.out_c, [(names[2], R0.finish(a0, isz))], const=True)
            # a row of -inf: NumPy's exp(-inf - -inf) is NaN, so is its sum
            ph += self._per_col(R1.out_c, [(names[3], R1.finish(
                "(%s == %s ? %s - %s : %s)" % (a0, lowest, a0, a0, a1), isz))], const=True)
        else:
            self.helpers.add("welford")
            body = self.body + [
                "const %s ss_x = %s;" % (ct, elem),
                "%s = %s;" % (a0, R0.combine(a0, R0.load("ss_x", x.dtype, self.helpers),
                                             self.helpers)),
                "%s += (%s)1;" % (n, ct),
                "const %s ss_d = ss_x - %s;" % (ct, mu),
                "%s = %s + ss_d / %s;" % (mu, mu, n),
                "%s = %s + ss_d * (ss_x - %s);" % (a1, a1, mu)]
            ph += self._pre_lines()
            ph += self._per_col(ct, [(names[0], R0.identity()), (names[4], "0"), (names[5], "0"),
                                     (names[1], "0")])
            merge = ["%s = %s;" % (a0, R0.combine(a0, "o0", self.helpers)),
                     "ss_welford_merge(%s, %s, %s, o1, o2, o3);" % (n, mu, a1)]
            ph += self._split_partials(ct, [a0, n, mu, a1], merge, pi, slot, self._row_loop(
                False, isz, (jdecode if uses_coords(jdecode, body) else []) + body) +
                self._lanes_merge(ct, [a0, n, mu, a1], merge))
            ph += self._per_col(R0.out_c, [(names[2], R0.finish(a0, isz))], const=True)
            # a float sum that overflowed: NumPy's mean is inf, each (x - inf)**2 is inf
            ph += self._per_col(R1.out_c, [(names[3], R1.finish(
                "(%s - %s != %s - %s && %s == %s ? %s : %s)" % (
                    v0, v0, v0, v0, a1, a1, cops.highest(x.dtype), a1), isz))], const=True)
        self.red_vars[r0], self.red_vars[r1] = v0, v1
        return ph

