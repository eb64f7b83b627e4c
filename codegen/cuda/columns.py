"""Column kernels' SS_VEC variant: a lane takes ``cvec`` adjacent columns, loading them
128 bits at a time, with per-column accumulators, row values and stores."""
from __future__ import annotations

import re
from typing import List, Sequence, Tuple

from symshape.capture.ir import Node
from symshape.algebra.expr import ceildiv

from . import cops
from .cops import CTYPES, STORAGE
from .ctext import SIZEOF, VECT, uses_coords, vector_store
from .geometry import COL_SPLIT
from ..loopnest.index import Idx


class ColumnVec:
    """Column SS_VEC helpers of a row kernel (a part of ``CudaEmitter``)."""

    def _col_vec_loop(self, cached: bool, isz: str, lines: List[str],
                      vstores: Sequence[Tuple[str, str, str]]) -> List[str]:
        """A column kernel's SS_VEC loop over its elements (``j``) of the lane's ``cvec``
        adjacent columns: per element, the decode of ``j``, the chunk registers of its
        128-bit loads, the lines once per column (``_cols``), then ``vstores`` (outputs the
        lines gathered in ``vo_<buffer>[ss_v]``) leave as 128-bit stores."""
        V = self.cvec
        jd = len(self.jdecode) if lines[:len(self.jdecode)] == self.jdecode else 0
        decl, self.jdecl = self.jdecl, []
        stores = [l for ct, buf, off in vstores
                  for l in vector_store(ct, buf, self._at_col0(off), V)]
        head = lines[:jd] if jd or not uses_coords(self.jdecode, stores) else self.jdecode
        inner = head + decl + ["__align__(16) %s vo_%s[%d];" % (ct, buf, V)
                               for ct, buf, _ in vstores]
        inner += self._cols(lines[jd:]) + stores
        if cached:
            return (["#pragma unroll",
                     "for (int ss_k = 0; ss_k < %d; ss_k++) {" % self.col_items,
                     "  const idx_t j = (idx_t)ss_lane + (idx_t)ss_k * (idx_t)ss_g;",
                     "  if (j < %s) {" % isz] + ["    " + l for l in inner] + ["  }", "}"])
        return (["for (idx_t j = (idx_t)ss_lane; j < %s; j += (idx_t)ss_g) {" % isz] +
                ["  " + l for l in inner] + ["}"])

    def _col0_decode(self, outer_axes: List[int]) -> List[str]:
        """The coordinates of the lane's first column ``row0``; the last one is named
        ``ss_cl0`` (``_cols`` declares each column's own)."""
        L = self._last()
        return [re.sub(r"\b%s\b" % L, "ss_cl0", l)
                for l in self._decode_lines("row0", outer_axes, "t")]

    def _col_scratch(self, V: int) -> int:
        """Doubles per half of a column kernel's scratch in the SS_VEC variant: one tuple
        (up to 4 values for Welford's) per column of each of the block's threads.  At most
        64 bytes a thread (V * accumulator <= 64; a merged pair: V * element = 16, times 4
        values), so both halves stay within 32 KB of shared memory."""
        sizes = [SIZEOF.get(cops.Reduction(r.op, r.inputs[0].dtype, r.dtype).acc_c, 8)
                 for r in self.spec.reductions()]
        sizes += [SIZEOF.get(CTYPES[r.inputs[0].dtype.name], 8) for r in self.merged_pairs()]
        k = self.col_half // (32 * COL_SPLIT)
        return 32 * COL_SPLIT * ceildiv(k * V * max(sizes + [1]), 8)

    def _last(self) -> str:
        return "c%d" % (self.nd - 1)

    def _col_contig(self, last: List[Idx], raw: str) -> bool:
        """Is ``raw`` (an array's offset) the lane's column plus a term not depending on it:
        the array's last coordinate is the kernel's last one, added with stride 1?"""
        L = self._last()
        return bool(last) and last[0].text == L and \
            len(re.findall(r"\b%s\b" % L, raw)) == 1 and \
            (raw == L or re.search(r"\+ %s\)*$" % L, raw) is not None) and \
            re.search(r"\brow\b", raw) is None

    def _col_load(self, n: Node, buf: str, raw: str, text: str, row: bool,
                  contig: bool) -> str:
        """A load in a column kernel's SS_VEC variant (inside the lane's loop over its
        ``cvec`` columns, ``ss_v``): an array read along the kept axis is loaded for all the
        lane's columns at ``ss_v == 0`` (one 128-bit load at most), each column then reads
        its register; elements of the column kept in registers index ``ss_k * V + ss_v``."""
        V = self.cvec
        ct = STORAGE[n.dtype.name]
        vt = VECT[SIZEOF[ct] * V] if contig else ""
        if self.cache is not None and not row:
            at = "[ss_k * %d + ss_v]" % V
            reg = self.cache.get(text)
            if reg is not None:
                return reg + at
            reg = self.cache[text] = "rc%d" % len(self.cache)
            self.cache_decl.append("__align__(16) %s %s[%d];   // %s, loaded once" % (
                ct, reg, self.col_items * V, text))
            if vt:
                return "(ss_v == 0 ? (*(%s*)&%s[ss_k * %d] = *(const %s*)&%s[%s], " \
                    "%s[ss_k * %d]) : %s%s)" % (vt, reg, V, vt, buf, raw, reg, V, reg, at)
            return "(%s%s = %s)" % (reg, at, text)
        if not vt:
            return text
        vb = self.fresh("vb")
        (self.pre_decl if row else self.jdecl).append("__align__(16) %s %s[%d];" % (ct, vb, V))
        return "(ss_v == 0 ? (*(%s*)%s = *(const %s*)&%s[%s], %s[0]) : %s[ss_v])" % (
            vt, vb, vt, buf, raw, vb, vb)

    def _cols(self, lines: List[str]) -> List[str]:
        """``lines`` once per column of the lane (SS_VEC column variant; else as they are):
        an unrolled loop over ``ss_v`` declaring that column's ``row`` and last coordinate."""
        if not self.cvec_mode:
            return lines
        text = "\n".join(lines)
        L = self._last()
        head = ["#pragma unroll", "for (int ss_v = 0; ss_v < %d; ss_v++) {" % self.cvec]
        if re.search(r"\brow\b", text):
            head.append("  const idx_t row = row0 + (idx_t)ss_v;")
        if re.search(r"\b%s\b" % L, text):
            head.append("  const idx_t %s = ss_cl0 + (idx_t)ss_v;" % L)
        return head + ["  " + l for l in lines] + ["}"]

    def _pv(self, name: str) -> str:
        """A per-column variable: an array indexed by the lane's column in the SS_VEC
        column variant."""
        return name + "[ss_v]" if self.cvec_mode else name

    def _per_col(self, ct: str, inits: Sequence[Tuple[str, str]], const: bool = False
                 ) -> List[str]:
        """Declare per-column variables ``(name, initial value)`` of C type ``ct``."""
        if not self.cvec_mode:
            return ["%s%s %s;" % ("const " if const else "", ct,
                                  ", ".join("%s = %s" % ni for ni in inits))]
        return ["%s %s;" % (ct, ", ".join("%s[%d]" % (nm, self.cvec) for nm, _ in inits))] + \
            self._cols(["%s[ss_v] = %s;" % ni for ni in inits])

    def _pre_lines(self) -> List[str]:
        """The row-level lines (``self.pre``) where a phase places them."""
        decl, self.pre_decl = self.pre_decl, []
        return decl + self._cols(self.pre) if self.cvec_mode and self.pre else list(self.pre)

    def _at_col0(self, off: str) -> str:
        """The offset ``off`` at the lane's first column."""
        return re.sub(r"\b%s\b" % self._last(), "ss_cl0", re.sub(r"\brow\b", "row0", off))

    def _at_chunk(self, off: str, start: str) -> str:
        """The row offset ``off`` (written at element ``j``) at the chunk start ``start``."""
        return re.sub(r"\b(j|%s)\b" % self.row_coord, start, off)

