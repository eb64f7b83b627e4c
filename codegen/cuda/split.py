"""The split-row companion of a row reduction, for few long rows: blocks take chunks of a
row and combine their partials through a workspace, one pass per reduction."""
from __future__ import annotations

from typing import List, Optional


from .ctext import ceildiv_c, uses_coords
from .geometry import ROW_ITEMS
from .record import Kernel


#: the split companion's own parameters: (C type, name, argument)
SPLIT_PARAMS = [("double* __restrict__", "ss_ws", ("ws", None)),
                ("long long", "ss_pass_", ("pass", None)),
                ("long long", "ss_nch_", ("nchunks", None))]


class SplitKernel:
    """The split-row companion (a part of ``CudaEmitter``)."""

    def _split(self, written, index) -> Optional[Kernel]:
        """The split-row companion of a row reduction, for few long rows: block b takes
        chunk ``b % ss_nch`` (blockDim * ROW_ITEMS elements) of row ``b / ss_nch``, so
        every SM has work (a column reduction keeps its coalesced layout, 32 adjacent
        columns per block, and splits the reduced elements into ``ss_nch`` ranges).
        It runs in passes (``ss_pass`` = 0 .. reductions): pass p combines the partials
        earlier passes left in the workspace ``ss_ws`` into the results of reductions
        < p, and reduces its chunk for reduction p into a partial;
        the last pass combines them all and writes the chunk's outputs.  Each pass reads
        the chunk once; the row is read once per reduction plus once to write."""
        self.red_vars, self.row_memo, self.cache, self.cache_decl = {}, {}, None, []
        S, axes, outer_axes, rows, inner, rsz, isz = self._row_geometry()
        lines, outs = self._row_phases(False, isz, axes, written)
        if written is None:
            return None
        rdecode = self._decode_lines("row", outer_axes, "t")
        body = self._split_column_head(isz, rsz) if self.column else \
            self._split_row_head(rsz)
        body += ["  " + l for l in (rdecode if uses_coords(rdecode, lines) else []) + lines]
        body.append("}")
        k = self._kernel(index, "reduce", self.out_names, outs, body, extra=SPLIT_PARAMS)
        k.rows, k.inner, k.columns = rows, inner, self.column
        k.uses_sync = True
        k.passes = self.phase_count + 1
        k.ws_slots = self.ws_slots
        return k

    def _split_column_head(self, isz: str, rsz: str) -> List[str]:
        """The column layout (32 adjacent columns per block, coalesced), each block
        taking one of ss_nch ranges of the reduced elements."""
        return ["__shared__ double ss_scratch[%d];   // one scratch for every reduction"
                % (2 * self.col_half),
                "unsigned int ss_par = 0;",
                "const unsigned int ss_col = threadIdx.x & 31u;",
                "const unsigned int ss_lane = threadIdx.x >> 5, ss_g = blockDim.x >> 5;",
                "const long long ss_pass = ss_pass_;",
                "const idx_t ss_nch = (idx_t)ss_nch_;          // ranges per column",
                "const idx_t ss_len = %s;" % ceildiv_c(isz, "ss_nch"),
                "const idx_t ss_wsn = %s * ss_nch;             // partials per reduction"
                % rsz,
                "const idx_t ss_items = %s * ss_nch;" % ceildiv_c(rsz, "32"),
                "for (idx_t ss_item = (idx_t)blockIdx.x; ss_item < ss_items; "
                "ss_item += (idx_t)gridDim.x) {",
                "  const idx_t ss_base = ss_item / ss_nch * 32, ss_c = ss_item % ss_nch;",
                "  const bool ss_live = ss_base + (idx_t)ss_col < %s;" % rsz,
                "  const idx_t row = ss_live ? ss_base + (idx_t)ss_col : %s - 1;" % rsz,
                "  const idx_t ss_j0 = ss_c * ss_len;",
                "  const idx_t ss_j1 = ss_j0 + ss_len < %s ? ss_j0 + ss_len : %s;"
                % (isz, isz)]

    def _split_row_head(self, rsz: str) -> List[str]:
        """A block per chunk of a row: ``ss_nch`` chunks of ``blockDim * ROW_ITEMS``."""
        return ["__shared__ double ss_scratch[%d];   // one scratch for every reduction"
                % (2 * self.half),
                "unsigned int ss_par = 0;",
                "const unsigned int ss_g = blockDim.x, ss_lane = threadIdx.x;",
                "const long long ss_pass = ss_pass_;",
                "const idx_t ss_nch = (idx_t)ss_nch_;          // chunks per row",
                "const idx_t ss_wsn = %s * ss_nch;             // partials per reduction"
                % rsz,
                "for (idx_t ss_item = (idx_t)blockIdx.x; ss_item < ss_wsn; "
                "ss_item += (idx_t)gridDim.x) {",
                "  const idx_t row = ss_item / ss_nch, ss_c = ss_item % ss_nch;",
                "  const idx_t ss_j0 = ss_c * (idx_t)blockDim.x * %d;" % ROW_ITEMS]

    def _split_partials(self, ct: str, vals: List[str], merge: List[str], pi: int,
                        slot: int, reduce: List[str]) -> List[str]:
        """``reduce`` (the phase's loop and combine) as is; in the split companion, pass
        ``pi`` stores the chunk's tuple in workspace slots ``slot``.. and later passes
        combine the row's stored tuples instead (``merge`` over ``o0, o1, ...``)."""
        if not self.split:
            return reduce
        ws = ["((%s*)(ss_ws + %d * ss_wsn))" % (ct, slot + i) for i in range(len(vals))]
        lines = ["if (ss_pass > %d) {          // the chunks' partials, from earlier passes"
                 % pi, "  for (idx_t w = 0; w < ss_nch; w++) {"]
        lines += ["    const %s o%d = %s[row * ss_nch + w];" % (ct, i, w)
                  for i, w in enumerate(ws)]
        lines += ["    " + l for l in merge]
        lines += ["  }", "} else {"]
        lines += ["  " + l for l in reduce]
        lines.append("  if (ss_lane == 0) { %s }" % " ".join(
            "%s[row * ss_nch + ss_c] = %s;" % (w, v) for w, v in zip(ws, vals)))
        lines.append("}")
        lines.append("if (ss_pass == %d) continue;   // this pass makes partials only" % pi)
        return lines

