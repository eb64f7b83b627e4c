"""Row-reduction kernels: a group of threads per row (a warp, a block, or a lane per
column when the last axis is kept), one phase per reduction, then the pass writing the
roots; each in a variant keeping the row in registers and one looping over memory, and
their SS_VEC variants."""
from __future__ import annotations

from typing import List, Optional, Sequence, Set, Tuple

from symshape.capture.ir import Node

from . import cops
from .cops import STORAGE
from .ctext import SIZEOF, VECT, uses_coords, vector_store
from .geometry import COL_SPLIT, ROW_ITEMS, WARP_ROW
from .record import Kernel
from ..fusion import numel
from ..loopnest.reductions import no_identity


class RowKernel:
    """The row-reduction kernel of a group (a part of ``CudaEmitter``)."""

    def _row_geometry(self):
        """What both row kernels start from: the shape, the reduced and outer axes, the
        row count and length (and their C index types); it records the index expressions,
        whether the rows are columns (the last axis is kept), and ``half``, the shuffle
        width of the scratch buffer."""
        spec = self.spec
        S = spec.shape
        axes = list(spec.axes)
        outer_axes = [a for a in range(self.nd) if a not in spec.axes]
        rows = numel([S[a] for a in outer_axes])
        inner = numel([S[a] for a in axes])
        rsz, isz = self.size(rows), self.size(inner)
        self.index_exprs += [rows, inner, numel(S)]
        self.column = self.nd - 1 not in spec.axes and not (type(S[-1]) is int and S[-1] == 1)
        # a merged mean / variance phase leaves 4 values per warp in shared memory
        kinds = {kind for kind, _ in self.merged_pairs().values()}
        self.half = 64 if not self.column and "welford" in kinds else 32
        # a column kernel's threads all meet in shared memory: each half of its scratch
        # holds one value (two for softmax's online pair, four for Welford's) per thread,
        # in doubles, whatever the phase's type, so alternating phases never overlap
        self.col_half = 32 * COL_SPLIT * (4 if "welford" in kinds else
                                          2 if "online" in kinds else 1)
        return S, axes, outer_axes, rows, inner, rsz, isz

    def _reduce(self, written, index) -> Optional[Kernel]:
        """A row-reduction kernel.  A *group* of ``ss_g`` threads computes one row: a warp
        (``ss_g`` = 32, several rows per block, no barrier at all) when the row has at most
        ``WARP_ROW`` elements, else the whole block.  Each reduction is one phase: the
        group's threads accumulate their elements, combine across the warp with
        ``__shfl_xor_sync`` and (``ss_g`` > 32) across warps through one shared scratch buffer
        after one barrier, so every thread holds the row's result.  When the row fits
        ``ROW_ITEMS`` elements per thread, each element of an array read along the row is
        loaded once into registers (fully unrolled loops over ``ss_k``) and every later phase
        reads the registers; longer rows loop over memory.

        A column kernel (the last axis kept) has a lane per column instead, 32 adjacent
        columns per warp, the block's COL_SPLIT warps splitting each column's elements.  Its
        SS_VEC variant gives each lane ``cvec`` adjacent columns (16 bytes of the widest
        array read along the kept axis, at most ROW_ITEMS): per element of the columns, one
        128-bit load per such array, then the lines once per column (``_cols``: an unrolled
        loop over ``ss_v``); accumulators, row-level values and results are arrays of
        ``cvec``; elementwise outputs and per-column results leave as vector stores."""
        S, axes, outer_axes, rows, inner, rsz, isz = self._row_geometry()
        lin = self.dom_linear()
        self.row_linear = lin.text if lin is not None else ""
        if axes == [self.nd - 1]:
            self.row_coord = "c%d" % (self.nd - 1)
        variants = {}
        col_half = self.col_half
        for vec in (False, True):
            if vec and not self._vector_variant(written):
                break
            for cached in (True, False):
                variants[cached, vec] = self._row_variant(cached, isz, axes, written)
        self.cache = None
        self.rvec_mode = self.cvec_mode = False
        if written is None:
            return None
        cached_lines, loop_lines, outs = _with_vector_variant(variants)
        body = self._row_body(isz, rsz, outer_axes, cached_lines, loop_lines, col_half)
        k = self._kernel(index, "reduce", self.out_names, outs, body)
        self._describe_rows(k, rows, inner)
        return k

    def _vector_variant(self, written) -> bool:
        """Set up the SS_VEC variant of the row kernel; False when it has none (no array
        read along the row or the kept axis, or only sizing the kernel)."""
        if written is None:
            return False
        if self.column:
            if not self.cvec_bufs:
                return False
            # a lane takes 16 bytes of the widest array read along the kept axis
            # (at most ROW_ITEMS columns); its registers keep ROW_ITEMS 32-bit words
            # of each array read along the columns (float64 softmax spilled with more)
            wide = max(SIZEOF[t] for t in self.cvec_bufs.values())
            self.cvec = min(16 // wide, ROW_ITEMS)
            self.col_items = max(1, ROW_ITEMS // (self.cvec * max(1, wide // 4)))
            self.col_half = self._col_scratch(self.cvec)
            self.cvec_mode = True
            return True
        if not self.rvec_bufs:
            return False
        # 16 bytes of the widest such array per load (at most ROW_ITEMS elements)
        self.rvec = min(16 // max(SIZEOF[t] for t in self.rvec_bufs.values()), ROW_ITEMS)
        self.rvec_mode = True
        return True

    def _row_variant(self, cached: bool, isz: str, axes: List[int], written):
        """The phases of one variant (``cached``: the row in registers), with its own
        reductions, row values and register caches."""
        self.red_vars, self.row_memo = {}, {}
        self.cache = {} if cached else None
        self.chunk_regs = set()
        self.cache_decl = []
        self.rvec_loads = {}
        return self._row_phases(cached, isz, axes, written)

    def _row_body(self, isz: str, rsz: str, outer_axes: List[int], cached_lines: List[str],
                  loop_lines: List[str], col_half: int) -> List[str]:
        """The loop over rows around both variants: the row in registers when it fits
        (``ss_inreg``), else looped over memory."""
        rdecode = self._decode_lines("row", outer_axes, "t")
        both = cached_lines + loop_lines
        vec_half, self.col_half = self.col_half, col_half
        body = self._row_loop_head(isz, rsz)
        body += ["  " + l for l in (rdecode if uses_coords(rdecode, both) else [])]
        if self.cvec:
            # the SS_VEC column variant: a lane's first column row0 (its coordinates
            # decoded once; the last one is ss_cl0), twice the columns per block
            self.col_half, scalar = vec_half, body
            body = ["#ifdef SS_VEC"] + self._row_loop_head(isz, rsz, self.cvec)
            body += ["  " + l for l in self._col0_decode(outer_axes)]
            body += ["#else"] + scalar + ["#endif"]
            self.col_half = col_half
        body.append("  if (ss_inreg) {")
        body += ["    " + l for l in cached_lines]
        body.append("  } else {")
        body += ["    " + l for l in loop_lines]
        body.append("  }")
        body.append("}")
        return body

    def _describe_rows(self, k: Kernel, rows, inner) -> None:
        """What the driver needs to launch the row kernel ``k``."""
        S = self.spec.shape
        k.rows, k.inner = rows, inner
        k.columns = self.column
        k.merged = len(self.merged_pairs())
        if self.rvec or self.cvec:
            names = {v: n for n, v in self.bufs.items()}
            k.vec = self.rvec or self.cvec
            k.vec_arrays = [names[b] for b in (self.cvec_bufs if self.cvec else
                                               self.rvec_bufs)]
            k.vec_arrays += [n for i, n in enumerate(self.rvec_outs)
                             if not any(n is o for o in self.rvec_outs[:i])]
            # the lengths that must be multiples of k.vec (the last axes read by lanes)
            k.vec_lens = [S[-1]] + [e for e in self.cvec_lens if not (
                e is S[-1] or e == S[-1])] if self.cvec else []
            k.vec_positions = [p for p, (kind, v) in enumerate(k.args)
                               if kind in ("in", "out") and any(v is x for x in k.vec_arrays)]
        k.uses_sync = True
        k.empty_max = no_identity(self.spec)

    def _row_loop_head(self, isz: str, rsz: str, V: int = 0) -> List[str]:
        """The row kernel's shared scratch, its group geometry and the opening of its loop
        over rows (``rsz`` rows of ``isz`` elements): 32 adjacent rows per warp for a column
        layout (``V``: 32 * V adjacent columns, V per lane, in the SS_VEC variant), else
        ``ss_g`` threads per row."""
        if V:
            return ["__shared__ double ss_scratch[%d];   // one scratch for every reduction"
                    % (2 * self.col_half),
                    "unsigned int ss_par = 0;            // which half of it the next one uses",
                    "const unsigned int ss_col = threadIdx.x & 31u;",
                    "const unsigned int ss_lane = threadIdx.x >> 5;   // which split of a row",
                    "const unsigned int ss_g = blockDim.x >> 5;       // splits per row",
                    "const bool ss_inreg = %s <= (idx_t)ss_g * %d;" % (isz, self.col_items),
                    "for (idx_t ss_base = (idx_t)blockIdx.x * %d; ss_base < %s; "
                    "ss_base += (idx_t)gridDim.x * %d) {" % (32 * V, rsz, 32 * V),
                    "  const bool ss_live = ss_base + (idx_t)ss_col * %d < %s;" % (V, rsz),
                    "  const idx_t row0 = ss_live ? ss_base + (idx_t)ss_col * %d : %s - %d;"
                    % (V, rsz, V)]
        if self.column:
            # the last axis is kept: the 32 lanes of a warp take 32 adjacent rows (adjacent
            # addresses: coalesced), the COL_SPLIT warps of the block split each row's
            # elements; threads past the last row compute row rows-1 and write nothing,
            # so every thread reaches every barrier
            body = ["__shared__ double ss_scratch[%d];   // one scratch for every reduction"
                    % (2 * self.col_half),
                    "unsigned int ss_par = 0;            // which half of it the next one uses",
                    "const unsigned int ss_col = threadIdx.x & 31u;",
                    "const unsigned int ss_lane = threadIdx.x >> 5;   // which split of a row",
                    "const unsigned int ss_g = blockDim.x >> 5;       // splits per row",
                    "const bool ss_inreg = %s <= (idx_t)ss_g * %d;" % (isz, ROW_ITEMS),
                    "for (idx_t ss_base = (idx_t)blockIdx.x * 32; ss_base < %s; "
                    "ss_base += (idx_t)gridDim.x * 32) {" % rsz,
                    "  const bool ss_live = ss_base + (idx_t)ss_col < %s;" % rsz,
                    "  const idx_t row = ss_live ? ss_base + (idx_t)ss_col : %s - 1;" % rsz]
        else:
            body = ["__shared__ double ss_scratch[%d];   // one scratch for every reduction"
                    % (2 * self.half),
                    "unsigned int ss_par = 0;            // which half of it the next one uses",
                    "const unsigned int ss_g = %s <= %d ? 32u : blockDim.x;   // threads per row"
                    % (isz, WARP_ROW),
                    "const unsigned int ss_lane = threadIdx.x % ss_g;",
                    "const idx_t ss_rpb = (idx_t)(blockDim.x / ss_g);",
                    "const bool ss_inreg = %s <= (idx_t)ss_g * %d;" % (isz, ROW_ITEMS),
                    "for (idx_t row = (idx_t)blockIdx.x * ss_rpb + "
                    "(idx_t)(threadIdx.x / ss_g); row < %s; "
                    "row += (idx_t)gridDim.x * ss_rpb) {" % rsz]
        return body

    def _row_loop(self, cached: bool, isz: str, lines: List[str],
                  vstores: Sequence[Tuple[str, str, str]] = ()) -> List[str]:
        """The loop of a group's thread over its elements of the row (``j``).  In the SS_VEC
        variant, ``vstores`` (C type, buffer, offset at ``j``) are outputs the lines write
        into register chunks ``vo_<buffer>[ss_v]``: each full chunk of V adjacent elements
        leaves the thread as 128-bit stores (the row length is a multiple of V)."""
        if self.column and self.split:
            return (["for (idx_t j = ss_j0 + (idx_t)ss_lane; j < (ss_live ? ss_j1 : 0); "
                     "j += (idx_t)ss_g) {"] + ["  " + l for l in lines] + ["}"])
        if self.column:
            isz = "(ss_live ? %s : 0)" % isz
        if self.column and self.cvec_mode:
            return self._col_vec_loop(cached, isz, lines, vstores)
        if self.split:
            return (["#pragma unroll", "for (int ss_k = 0; ss_k < %d; ss_k++) {" % ROW_ITEMS,
                     "  const idx_t j = ss_j0 + (idx_t)ss_lane + (idx_t)ss_k * (idx_t)ss_g;",
                     "  if (j < %s) {" % isz] + ["    " + l for l in lines] + ["  }", "}"])
        if cached and self.rvec_mode:
            return self._chunks_in_registers(isz, lines, vstores)
        if cached:
            return (["#pragma unroll", "for (int ss_k = 0; ss_k < %d; ss_k++) {" % ROW_ITEMS,
                     "  const idx_t j = (idx_t)ss_lane + (idx_t)ss_k * (idx_t)ss_g;",
                     "  if (j < %s) {" % isz] + ["    " + l for l in lines] + ["  }", "}"])
        if self.rvec_mode:
            return self._chunks_looped(isz, lines, vstores)
        return (["for (idx_t j = (idx_t)ss_lane; j < %s; j += (idx_t)ss_g) {" % isz] +
                ["  " + l for l in lines] + ["}"])

    def _chunks_in_registers(self, isz: str, lines: List[str],
                             vstores: Sequence[Tuple[str, str, str]]) -> List[str]:
        """The SS_VEC loop over a row held in registers: chunks of V adjacent elements,
        chunk q of the thread starting at (lane + q * threads) * V; the row length is a
        multiple of V, so a chunk's last element (ss_k % V == V - 1) is in the row exactly
        when its first is, and there the chunk's outputs leave as 128-bit stores."""
        V = self.rvec
        decl = ["__align__(16) %s vo_%s[%d];" % (ct, buf, V) for ct, buf, _ in vstores]
        flush = ["    if (ss_k %% %d == %d) {   // the chunk's last element: store it"
                 % (V, V - 1)]
        flush += ["      " + l for ct, buf, off in vstores for l in vector_store(
            ct, buf, self._at_chunk(off, "(j - %d)" % (V - 1)), V)]
        flush += ["    }"] if vstores else []
        lines = [l.replace("[ss_v]", "[ss_k %% %d]" % V) for l in lines]
        return (decl + ["#pragma unroll",
                        "for (int ss_k = 0; ss_k < %d; ss_k++) {" % ROW_ITEMS,
                        "  const idx_t j = ((idx_t)ss_lane + (idx_t)(ss_k / %d) * "
                        "(idx_t)ss_g) * %d + (idx_t)(ss_k %% %d);" % (V, V, V),
                        "  if (j < %s) {" % isz] + ["    " + l for l in lines] +
                (flush if vstores else []) + ["  }", "}"])

    def _chunks_looped(self, isz: str, lines: List[str],
                       vstores: Sequence[Tuple[str, str, str]]) -> List[str]:
        """The SS_VEC loop over a row read from memory: per chunk of V elements, one
        128-bit load per array read along the row, the lines per element, then one
        128-bit store per output."""
        V = self.rvec
        text = "\n".join(lines)
        loads = []
        for buf, (ct, raw) in self.rvec_loads.items():
            if "vb_%s[ss_v]" % buf in text:
                vt = VECT[SIZEOF[ct] * V]
                loads += ["__align__(16) %s vb_%s[%d];" % (ct, buf, V),
                          "*(%s*)vb_%s = *(const %s*)&%s[%s];" % (
                              vt, buf, vt, buf, self._at_chunk(raw, "j0"))]
        loads += ["__align__(16) %s vo_%s[%d];" % (ct, buf, V) for ct, buf, _ in vstores]
        stores = [l for ct, buf, off in vstores
                  for l in vector_store(ct, buf, self._at_chunk(off, "j0"), V)]
        return (["for (idx_t j0 = (idx_t)ss_lane * %d; j0 < %s; j0 += (idx_t)ss_g * %d) {"
                 % (V, isz, V)] + ["  " + l for l in loads] +
                ["  #pragma unroll", "  for (int ss_v = 0; ss_v < %d; ss_v++) {" % V,
                 "    const idx_t j = j0 + ss_v;"] +
                ["    " + l for l in lines] + ["  }"] + ["  " + l for l in stores] + ["}"])

    def _row_phases(self, cached: bool, isz: str, axes: List[int], written):
        spec = self.spec
        jdecode = self.jdecode = self._decode_lines("j", axes, "t")
        phases: List[str] = []
        # rows too long for registers are read from memory once per phase: there, a pair
        # of reductions that one read can compute (max and sum of exp(x - max); mean and
        # sum of squared deviations) is merged into one phase
        # (the split companion: one pass per phase, its partials in workspace slots)
        merged = {} if (cached or (self.column and self.split)) else self.merged_pairs()
        done: Set[Node] = set()
        pi = slot = 0                # phase (= split pass) and first workspace slot
        for ri, r in enumerate(spec.reductions()):
            if r in done:
                continue
            if r in merged:
                kind, r1 = merged[r]
                phases += self._merged_phase(kind, ri, r, r1, jdecode, isz, pi, slot)
                done.add(r1)
                pi, slot = pi + 1, slot + (2 if kind == "online" else 4)
                continue
            R = cops.Reduction(r.op, r.inputs[0].dtype, r.dtype)
            self.memo, self.body, self.pre = {}, [], []
            v = self.value(r.inputs[0], self.dom)
            acc = self._pv("a%d" % ri)
            comb = R.combine(acc, R.load(v, r.inputs[0].dtype, self.helpers), self.helpers)
            self.helpers.add("shfl")
            rv = "r%d" % ri
            ph = ["// %s = %s(%s, axis=%s)" % (r.name, r.op, r.inputs[0].name,
                                               tuple(spec.axes))]
            ph += self._pre_lines()
            ph += self._per_col(R.acc_c, [("a%d" % ri, R.identity())])
            inner = (jdecode if uses_coords(jdecode, self.body) else []) + self.body
            loop = self._row_loop(cached, isz, inner + ["%s = %s;" % (acc, comb)])
            ws = "((%s*)(ss_ws + %d * ss_wsn))" % (R.acc_c, slot)
            if self.split:
                # earlier passes left this reduction's partials: combine them
                ph.append("if (ss_pass > %d) {" % pi)
                ph.append("  for (idx_t w = 0; w < ss_nch; w++) %s = %s;" % (
                    acc, R.combine(acc, "%s[row * ss_nch + w]" % ws, self.helpers)))
                ph.append("} else {")
                ph += ["  " + l for l in loop]
                loop, ph_close = [], True
            else:
                ph += loop
                ph_close = False
            ph += self._combine_across(R, acc)
            if ph_close:
                ph.append("if (ss_lane == 0%s) %s[row * ss_nch + ss_c] = %s;" % (
                    " && ss_live" if self.column else "", ws, acc))
                ph.append("}")
                ph.append("if (ss_pass == %d) continue;   // this pass makes partials only"
                          % pi)
            ph += self._per_col(R.out_c, [(rv, R.finish(acc, isz))], const=True)
            phases += ph
            self.red_vars[r] = self._pv(rv)
            pi, slot = pi + 1, slot + 1
        self.phase_count, self.ws_slots = pi, slot
        got = self._row_outputs(cached, isz, jdecode, written)
        if got is None:
            return [], []
        tail, outs = got
        return self.cache_decl + phases + tail, outs

    def _combine_across(self, R, acc: str) -> List[str]:
        """Combine the group's per-thread accumulators ``acc`` so every thread holds the
        row's value: through shared memory for a column layout, else across the warp by
        shuffles and (groups wider than a warp) across warps after one barrier."""
        if self.column and self.cvec_mode:
            return self._lanes_merge(R.acc_c, [acc], ["%s = %s;" % (
                acc, R.combine(acc, "o0", self.helpers))])
        if self.column:
            # the COL_SPLIT threads of a column (one per warp) meet in shared memory
            return ["{                        // across warps: one barrier",
                    "  %s* sh = (%s*)(ss_scratch + %d * ss_par);" % (R.acc_c, R.acc_c,
                                                                    self.col_half),
                    "  ss_par ^= 1u;",
                    "  sh[threadIdx.x] = %s;" % acc,
                    "  __syncthreads();",
                    "  %s = sh[ss_col];" % acc,
                    "  for (unsigned int w = 1; w < ss_g; w++) %s = %s;" % (
                        acc, R.combine(acc, "sh[32 * w + ss_col]", self.helpers)),
                    "}"]
        # across the warp by shuffles, then (a block per row) across warps
        return ["for (int w = 16; w > 0; w >>= 1) %s = %s;" % (
                    acc, R.combine(acc, "ss_shfl_xor(%s, w)" % acc, self.helpers)),
                "if (ss_g > 32) {          // across warps: one barrier",
                "  %s* sh = (%s*)ss_scratch + %d * ss_par;" % (R.acc_c, R.acc_c, self.half),
                "  ss_par ^= 1u;",
                "  if ((threadIdx.x & 31u) == 0) sh[threadIdx.x >> 5] = %s;" % acc,
                "  __syncthreads();",
                "  %s = sh[0];" % acc,
                "  for (unsigned int w = 1; w < (ss_g >> 5); w++) %s = %s;" % (
                    acc, R.combine(acc, "sh[w]", self.helpers)),
                "}"]

    def _row_outputs(self, cached: bool, isz: str, jdecode, written):
        """After the reduction phases: the lines writing the elementwise outputs (one more
        pass over the row) and the row outputs (one lane per row), and the nodes written;
        ``None`` when only sizing the kernel (``written`` is None)."""
        spec = self.spec
        self.memo, self.body, self.pre = {}, [], []
        self.out_pass = True
        stores = [(n, self.value(n, self.dom)) for n, role in spec.roots if role == "out"]
        self.out_pass = False
        row_stores = [(n, self.value(n, self.row_out_coords(n)))
                      for n, role in spec.roots if role == "rowout"]
        if written is None:
            return None
        if stores:
            phases = self._element_writes(cached, isz, jdecode, stores)
        else:
            phases = self._pre_lines() if self.pre else []
        red_out = [r for r in spec.reductions() if r in written]
        phases += self._row_writes([(r, self.red_vars[r]) for r in red_out] + row_stores)
        outs = [n for n, _ in stores] + red_out + [n for n, _ in row_stores]
        return phases, outs

    def _element_writes(self, cached: bool, isz: str, jdecode: List[str], stores
                        ) -> List[str]:
        """The pass over the row writing the roots of the domain's shape (``stores``:
        (node, value))."""
        out_names = self.out_names
        lin = self.dom_linear() or self.horner(self.dom, self.spec.shape)
        # the SS_VEC variant: outputs written along the row's own contiguous elements
        # gather a chunk in registers and store it 128 bits at a time
        vec = self.rvec_mode and lin.text in (self.row_linear, "j", self.row_coord) or \
            self.cvec_mode and self._col_contig(self.dom[-1:], lin.text)
        vstores = [(STORAGE[n.dtype.name], out_names[n], lin.text)
                   for n, _ in stores] if vec else []
        body = self.body + [("vo_%s[ss_v] = %s;" if vec else "%s[" + lin.text + "] = %s;")
                            % (out_names[n], cops.store_expr(v, n.dtype))
                            for n, v in stores]
        if vec:
            self.rvec_outs = [n for n, _ in stores]
        phases = ["// write %s" % ", ".join(n.name for n, _ in stores)]
        phases += self._pre_lines()
        phases += self._row_loop(cached, isz, (jdecode if uses_coords(jdecode, body)
                                               else []) + body, vstores)
        return phases

    def _row_writes(self, row_writes) -> List[str]:
        """One lane of the row's group writes the row's results (``row_writes``: (node,
        value)): the reductions other steps read and the roots of the row's shape."""
        if not row_writes:
            return []
        out_names = self.out_names
        if not self.cvec_mode:
            return [ROW_WRITER[self.column, self.split]] + [
                "  %s[row] = %s;" % (out_names[n], cops.store_expr(v, n.dtype))
                for n, v in row_writes] + ["}"]
        # the lane's columns are adjacent: each result leaves as 128-bit stores
        phases = ["if (ss_lane == 0 && ss_live) {"]
        phases += ["  __align__(16) %s vo_%s[%d];" % (STORAGE[n.dtype.name], out_names[n],
                                                      self.cvec) for n, _ in row_writes]
        phases += ["  " + l for l in self._cols([
            "vo_%s[ss_v] = %s;" % (out_names[n], cops.store_expr(v, n.dtype))
            for n, v in row_writes])]
        phases += ["  " + l for n, _ in row_writes for l in vector_store(
            STORAGE[n.dtype.name], out_names[n], "row0", self.cvec)]
        phases.append("}")
        self.rvec_outs = self.rvec_outs + [n for n, _ in row_writes]
        return phases


#: (column kernel, split companion) -> the lane that writes the row's results
ROW_WRITER = {
    (True, True): "if (ss_lane == 0 && ss_live && ss_c == 0) {",
    (True, False): "if (ss_lane == 0 && ss_live) {",
    (False, True): "if (ss_lane == 0 && ss_c == 0) {",
    (False, False): "if (ss_lane == 0) {",
}


def _with_vector_variant(variants):
    """The cached and looped lines of a row kernel, each selecting its SS_VEC variant
    (when there is one) with ``#ifdef``, and the nodes written."""
    (cached_lines, outs), (loop_lines, _) = variants[True, False], variants[False, False]
    if (True, True) in variants:
        # the SS_VEC variant (chosen per call: rows a multiple of the vector width, the
        # contiguous arrays 16-byte aligned, none strided)
        cached_lines = ["#ifdef SS_VEC"] + variants[True, True][0] + ["#else"] + \
            cached_lines + ["#endif"]
        loop_lines = ["#ifdef SS_VEC"] + variants[False, True][0] + ["#else"] + \
            loop_lines + ["#endif"]
    return cached_lines, loop_lines, outs
