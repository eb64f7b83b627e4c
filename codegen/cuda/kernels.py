"""Fused groups -> CUDA C: one kernel per group the shared planner forms
(``loopnest/plan.py``, over the nodes ``groups.py`` says CUDA computes).

Index arithmetic
----------------
A value is computed at *coordinates* (``loopnest/index.py``: C expressions of the kernel's
loop indices, mapped through views and broadcasting).  An offset is the Horner form of the
coordinates over the buffer's symbolic shape when the buffer is C-contiguous; inputs and
library results may be strided views, so their loads read ``SS_OFF(contiguous, strided)``:
the variant compiled with ``-DSS_STRIDED`` (chosen per call by the driver) takes the
coordinates times the array's element strides, passed as kernel arguments, and nothing is
copied.  Every size is a kernel argument: one source serves every shape.
``idx_t`` is ``int`` when the program's ranges prove every index quantity (domain and
buffer sizes, size arguments) stays below ``LIMIT``; ``long long`` when they prove it
cannot; otherwise the source selects with ``#ifdef SS_INDEX64`` and the driver picks the
variant per call from the actual sizes (both compiled at most once).
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Set, Tuple

from symshape.capture.ir import Node
from symshape.algebra.expr import floordiv, mul, sub, undominated

from . import cops, source
from .columns import ColumnVec
from .cops import CTYPES, STORAGE
from .ctext import SIZEOF, SS_OFF, VECT
from .geometry import (COL_SPLIT, GRID_CAP, LIMIT, MAX_BLOCK, ROW_BLOCK, ROW_ITEMS,
                       ROW_MIN_BLOCKS, SPLIT_BLOCKS, SPLIT_ROWS, WARP_ROW)
from .groups import CUDA, pointwise_expr
from .merged import MergedPhases
from .pointwise import PointwiseKernel
from .record import Kernel
from .rows import RowKernel
from .split import SplitKernel
from ..fusion import numel
from ..loopnest.classify import Operand
from ..loopnest.index import Idx
from ..loopnest.plan import KernelSpec, NoFuse, Plan, Planner
from ..loopnest.values import LoopEmitter, cname

__all__ = ["COL_SPLIT", "GRID_CAP", "LIMIT", "MAX_BLOCK", "ROW_BLOCK", "ROW_ITEMS",
           "SPLIT_BLOCKS", "SPLIT_ROWS", "WARP_ROW", "CudaEmitter", "Kernel", "plan_program"]


class CudaEmitter(PointwiseKernel, RowKernel, SplitKernel, MergedPhases, ColumnVec,
                  LoopEmitter):
    """Generates one kernel's C (also used, discarding the text, to test a merge): the
    loop-nest core (``LoopEmitter``) with CUDA's spelling of sizes, locals, expressions
    and loads, and its kernel shapes, one module each (``pointwise.py``, ``rows.py``,
    ``split.py``, ``merged.py``, ``columns.py``)."""

    def __init__(self, spec: KernelSpec, planner: Planner) -> None:
        super().__init__(spec, planner)
        self.strides: Dict[tuple, str] = {}   # (array, axis) -> its element stride argument
        self.helpers: Set[str] = set()        # device helpers the kernel calls
        self.half = 32                        # values per half of a row kernel's scratch
        self.rvec = 0                         # row kernels: elements per 128-bit load
        self.rvec_mode = False                # ... generating the SS_VEC variant
        self.rvec_bufs: Dict[str, str] = {}   # ... arrays read contiguously along rows
        self.rvec_loads: Dict[str, tuple] = {}   # ... loaded per chunk (looped rows)
        self.rvec_outs: List[Node] = []       # ... written per chunk (SS_VEC stores)
        self.out_pass = False                 # ... generating the pass writing outputs
        self.chunk_regs: Set[str] = set()     # ... register caches holding one chunk
        self.row_linear = ""                  # ... the row's own element offset
        self.row_coord = "j"                  # ... the coordinate equal to j
        self.column = False                   # a column kernel (set by _row_geometry)
        self.cvec = 0                         # column kernels: columns per lane (SS_VEC)
        self.cvec_mode = False                # ... generating the SS_VEC variant
        self.cvec_bufs: Dict[str, str] = {}   # ... arrays read along the kept last axis
        self.cvec_lens: List[Any] = []        # ... their last axes (multiples of cvec)
        self.cvec_outs: List[Node] = []       # ... outputs stored cvec columns at a time
        self.col_items = ROW_ITEMS            # ... elements per lane and column in registers
        self.pre_decl: List[str] = []         # ... per-column arrays of row-level values
        self.jdecl: List[str] = []            # ... chunk registers of one element's loads
        self.jdecode: List[str] = []          # the decode of j (leads a phase's lines)
        self.col_half = 32 * COL_SPLIT        # ... doubles per half of the shared scratch
        self.split = False                    # generating the split-row companion
        self.out_names: Dict[Node, str] = {}  # the roots' output parameters
        self.vec_bufs: Dict[str, str] = {}    # pointwise: arrays read at the own element
        self.vec_mode = False                 # ... generating the SS_VEC variant
        self.cache: Optional[Dict[str, str]] = None   # row elements cached in registers
        self.cache_decl: List[str] = []       # ... their register arrays
        self.phase_count = self.ws_slots = 0  # split companion: passes and workspace slots


    def size(self, e) -> str:
        """A size as an ``idx_t`` operand: a literal, its symbol, or an argument ``n<k>``."""
        if type(e) is int:
            return str(e) if -2 ** 31 < e < 2 ** 31 else "((idx_t)%dLL)" % e
        name = self.sizes.get(e)
        if name is None:
            sym = e.as_symbol()
            name = sym.name if sym is not None else "n%d" % len(
                [v for v in self.sizes.values() if v.startswith("n")])
            self.sizes[e] = name
            self.index_exprs.append(e)
        return name


    def emit(self, dt, text: str, row: bool, note: str = "") -> str:
        """A ``const`` local of the C type of ``dt`` (per column in SS_VEC columns)."""
        ct = CTYPES[dt.name]
        v = self.fresh()
        if row and self.cvec_mode:
            # a row-level value of a column kernel's SS_VEC variant: one per column of the
            # lane, computed in the lane's loop over its columns (``_pre_lines``)
            self.pre_decl.append("%s %s[%d];" % (ct, v, self.cvec))
            self.pre.append("%s[ss_v] = %s;%s" % (v, text, ("  // " + note) if note else ""))
            return v + "[ss_v]"
        line = "const %s %s = %s;%s" % (ct, v, text, ("  // " + note) if note else "")
        (self.pre if row else self.body).append(line)
        return v


    def pointwise_text(self, n: Node, ops: List[Optional[Operand]]) -> str:
        """The text computing pointwise node ``n`` on its operands (NoFuse: none)."""
        text = pointwise_expr(n, ops, self.helpers)
        if text is None:
            raise NoFuse("no C for %s" % n.op)
        return text

    def load_text(self, n: Node, coords: List[Idx], row: bool) -> str:
        """The text loading array ``n`` at ``coords`` (``row``: at row level)."""
        kind = self.P.kind[n]
        buf = self.buffer(n)
        off = raw = self.offset(n.shape, coords).text
        if kind in ("input", "lib"):
            # the caller's array may be a strided view: the SS_STRIDED variant indexes
            # it with its element strides (kernel arguments) instead of a copy
            off = "SS_OFF(%s, %s)" % (off, self.strided_offset(n, coords))
        text = "%s[%s]" % (buf, off)
        if self.spec.axes is None and raw == "i":          # the thread's own element
            self.vec_bufs[buf] = STORAGE[n.dtype.name]
            if self.vec_mode:
                text = "vb_%s[ss_v]" % buf
        contig, ccontig = self._vector_loads(n, kind, buf, raw, coords, row)
        if self.cvec_mode:
            return cops.load_expr(self._col_load(n, buf, raw, text, row, ccontig), n.dtype)
        return cops.load_expr(self._row_load(n, buf, raw, text, row, contig), n.dtype)

    def _vector_loads(self, n: Node, kind: str, buf: str, raw: str, coords: List[Idx],
                      row: bool) -> Tuple[bool, bool]:
        """Record array ``n`` (at offset ``raw``) among those an SS_VEC variant loads 16
        bytes at a time: (along the row, along the kept last axis)."""
        ct = STORAGE[n.dtype.name]
        # contiguous along the row (the row's own elements, or a vector broadcast over
        # rows): the SS_VEC variant of a row kernel loads it 16 bytes at a time
        contig = self.spec.axes is not None and not self.column and not self.split and \
            not row and raw in (self.row_linear, "j", self.row_coord)
        if contig:
            self.rvec_bufs[buf] = ct
        # along the kept last axis (stride 1 in the lane's columns): the SS_VEC variant
        # of a column kernel loads a lane's columns 16 bytes at a time
        ccontig = self.column and not self.split and \
            kind in ("input", "lib", "pw", "red") and \
            self._col_contig(coords[-1:] if coords else [], raw)
        if ccontig:
            self.cvec_bufs[buf] = ct
            if not any(n.shape[-1] is e or n.shape[-1] == e for e in self.cvec_lens):
                self.cvec_lens.append(n.shape[-1])
        return contig, ccontig

    def _row_load(self, n: Node, buf: str, raw: str, text: str, row: bool,
                  contig: bool) -> str:
        """A load of a row kernel: from the chunk's vector registers (looped SS_VEC), or
        an element of the row cached in registers (rows that fit them), else ``text``."""
        vt = VECT[SIZEOF[STORAGE[n.dtype.name]] * self.rvec] if contig and \
            self.rvec_mode else ""
        if vt and self.cache is None:
            self.rvec_loads[buf] = (STORAGE[n.dtype.name], raw)
            return "vb_%s[ss_v]" % buf            # loaded before the chunk's elements
        if self.cache is None or row:
            return text
        # an element of the row: loaded once into a register array, which the later
        # phases of the row read instead of memory
        reg = self.cache.get(text)
        # an array first read by the output pass is read by no later phase: it needs
        # registers for one chunk only (fewer live registers: no spills)
        chunk = reg in self.chunk_regs if reg is not None else bool(vt) and self.out_pass
        at = "[ss_k %% %d]" % self.rvec if chunk else "[ss_k]"
        if reg is not None:
            return "%s%s" % (reg, at)
        reg = self.cache[text] = "rc%d" % len(self.cache)
        if chunk:
            self.chunk_regs.add(reg)
        self.cache_decl.append("__align__(16) %s %s[%d];   // %s, loaded %s" % (
            STORAGE[n.dtype.name], reg, self.rvec if chunk else ROW_ITEMS, text,
            "a chunk at a time" if chunk else "once"))
        if not vt:
            return "(%s[ss_k] = %s)" % (reg, text)
        # the first element of each chunk of the thread loads the chunk
        return "(ss_k %% %d == 0 ? (*(%s*)&%s[%s] = *(const %s*)&%s[%s], %s%s) : %s%s)" % (
            self.rvec, vt, reg, "0" if chunk else "ss_k", vt, buf, raw, reg, at, reg, at)

    def buffer(self, n: Node) -> str:
        """The ``in_<name>`` parameter holding array ``n``."""
        name = self.bufs.get(n)
        if name is None:
            name = self.bufs[n] = self.unique("in_" + n.name)
            self.loads.append(n)
            self.index_exprs.append(numel(n.shape))
        return name


    def strided_offset(self, n: Node, coords: List[Idx]) -> str:
        """The offset of ``coords`` in ``n`` by its element strides (kernel arguments)."""
        terms = []
        for d, (c, size) in enumerate(zip(coords, n.shape)):
            if c.zero or (type(size) is int and size == 1):
                continue
            key = (n, d)
            name = self.strides.get(key)
            if name is None:
                name = self.strides[key] = "%s_st%d" % (self.bufs[n], d)
            terms.append("%s * %s" % (c.text, name))
        return "(%s)" % " + ".join(terms) if terms else "0"


    # ---------------------------------------------------------------- assembly
    def build(self, written: Optional[Set[Node]] = None, index: int = 0,
              split: bool = False) -> Optional[Kernel]:
        """The kernel (``written=None``: only check that the group can be one kernel).
        ``split``: the split-row companion of a row reduction (``_split``)."""
        spec = self.spec
        self.split = split
        self.out_names = {n: self.unique("out_" + n.name) for n, _ in spec.roots}
        if spec.axes is None:
            return self._pointwise(written, index)
        if split:
            return self._split(written, index)
        return self._reduce(written, index)


    def _kernel(self, index: int, kind: str, out_names: Dict[Node, str], outs: List[Node],
                body: List[str], extra=()) -> Kernel:
        """The kernel record of ``body``: its parameters (arrays, sizes still used,
        strides, ``extra`` (C type, name, argument), scalars) and its source."""
        spec = self.spec
        k = Kernel()
        k.kind = kind
        k.outputs = outs
        k.loads = list(self.loads)
        k.name = "k%d_%s%s" % (index, cname(spec.roots[0][0].name),
                               "_split" if self.split else "")
        params, args = source.array_params(outs, out_names, self.loads, self.bufs)
        self.index_exprs += [numel(n.shape) for n in outs]
        text = "\n".join(body) + "".join(self.helpers)
        if "ss_h2f(" in text or "ss_f2h(" in text or "ss_hround(" in text:
            self.helpers.add("half")
        self.sizes = dict(sorted(((e, v) for e, v in self.sizes.items()
                                  if re.search(r"\b%s\b" % v, text)),      # still used
                                 key=lambda kv: (kv[1][0] == "n", len(kv[1]), kv[1])))
        params += [("long long", name + "_") for name in self.sizes.values()]
        args += [("size", e) for e in self.sizes]
        params += [("long long", name + "_") for name in self.strides.values()]
        args += [("stride", key) for key in self.strides]
        params += [(ct, name) for ct, name, _ in extra]   # the split companion's workspace
        args += [arg for _, _, arg in extra]
        params += [("long long", name) for name in self.scalars.values()]
        args += [("scalar", e) for e in self.scalars]
        k.params, k.args = params, args
        k.strided_positions = sorted({p for p, (kind, v) in enumerate(args) if kind == "in"
                                      and any(v is key[0] for key in self.strides)})
        k.index, k.big_exprs = self._index_mode()
        k.source = self._source(k, outs, params, body)
        k.summary = "; ".join("%s %s" % ("reduce" if r == "reduce" else "write", n.name)
                              for n, r in spec.roots)
        return k

    def _source(self, k: Kernel, outs: List[Node], params, body: List[str]) -> str:
        """The kernel's C: head, helpers, signature, then the sizes and the body."""
        sizes = ["const idx_t %s = (idx_t)%s_;" % (name, name) for name in self.sizes.values()]
        if self.strides:
            sizes += ["#ifdef SS_STRIDED"] + [
                "const idx_t %s = (idx_t)%s_;" % (name, name)
                for name in self.strides.values()] + ["#endif"]
        lines = source.head(self.spec, k.kind, outs, self.sizes, k.index)
        helpers = source.helper_block(self.helpers)
        if helpers:
            lines.append(helpers)
        if self.strides:
            lines.append(SS_OFF)
        bounds = "__launch_bounds__(%d, %d) " % (ROW_BLOCK, ROW_MIN_BLOCKS) \
            if k.kind == "reduce" else ""
        sig = ",\n    ".join("%s %s" % p for p in params)
        lines.append('extern "C" __global__ void %s%s(\n    %s) {' % (bounds, k.name, sig))
        lines += ["  " + l if not l.startswith("#") else l
                  for l in source.TYPEDEF[k.index] + sizes + body]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _index_mode(self) -> Tuple[str, List[Any]]:
        """int32 if every index quantity provably stays below LIMIT, int64 if one provably
        does not, else dual with the quantities the driver compares at run time (those
        another one provably bounds are dropped: s1*s3 <= s0*s1*s3 when s0 >= 1)."""
        big: List[Any] = []
        for e in self.index_exprs:
            if type(e) is int:
                if abs(e) >= LIMIT:
                    return "int64", []
                continue
            if any(e == b for b in big):
                continue
            r = self.rg.bound(e)
            if r.lower >= LIMIT:
                return "int64", []
            if not (r.upper < LIMIT):
                big.append(e)
        kept = undominated(big, self._dominates)
        return ("dual", kept) if kept else ("int32", [])

    def _dominates(self, d, e) -> bool:
        """d >= e for every admissible size (d = e*q with q >= 1, or d - e >= 0)."""
        q = floordiv(d, e)
        if mul(q, e) == d and self.rg.bound(q).lower >= 1:
            return True
        return self.rg.bound(sub(d, e)).lower >= 0


def plan_program(ep) -> Plan:
    """The kernel plan of an ExportedProgram (no device, no CuPy needed)."""
    extra = [final for _, final in ep.mutation_pairs]
    return Planner(ep.graph, ep.constraints.ranges, extra, CudaEmitter, CUDA).run()
