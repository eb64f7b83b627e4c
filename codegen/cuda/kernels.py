"""Fused groups -> CUDA C: one kernel per planned group (see ``groups.py``).

Index arithmetic
----------------
A value is computed at *coordinates*: C expressions of the kernel's loop indices.  Views
map coordinates (a slice ``a:b:k`` maps c to ``start + k*c``, ``None`` drops an axis,
reshape linearizes and decodes), broadcasting maps an axis of size 1 to coordinate 0 (a
stride of 0).  An offset is the Horner form of the coordinates over the buffer's symbolic
shape when the buffer is C-contiguous; inputs and library results may be strided views, so
their loads read ``SS_OFF(contiguous, strided)``: the variant compiled with
``-DSS_STRIDED`` (chosen per call by the driver) takes the coordinates times the array's
element strides, passed as kernel arguments, and nothing is copied.  Every size is a kernel argument: one source serves every shape.
``idx_t`` is ``int`` when the program's ranges prove every index quantity (domain and
buffer sizes, size arguments) stays below ``LIMIT``; ``long long`` when they prove it
cannot; otherwise the source selects with ``#ifdef SS_INDEX64`` and the driver picks the
variant per call from the actual sizes (both compiled at most once).
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from symshape.capture.ir import Node
from symshape.expr import Expr, ceildiv, floordiv, format_expr, mul, sub, undominated
from symshape.capture.value_text import dtype_short

from . import cops
from .cops import CTYPES, STORAGE, Operand
from .groups import (KernelSpec, NoFuse, Plan, Planner, norm_index, numel, operand_of,
                     pointwise_expr, same_shape, slice_start)

#: index quantities below LIMIT fit ``int`` with room for a grid-stride step
LIMIT = 2 ** 31 - 2 ** 24
GRID_CAP = 32768            # blocks per launch (grid-stride loops cover the rest)
MAX_BLOCK = 256             # threads per block of pointwise kernels
ROW_BLOCK = 512             # most threads per block of reduction kernels (powers of two)
ROW_ITEMS = 8               # elements per thread a row keeps in registers
ROW_MIN_BLOCKS = 2          # launch bound: two 512-thread blocks per SM, so at most 64
                            # registers per thread (ptxas keeps every variant there)
WARP_ROW = 32 * ROW_ITEMS   # rows up to this length: one warp per row, several per block
COL_SPLIT = 8               # column reductions: warps splitting each row (block = 32 x this)
SPLIT_ROWS = 264            # fewer rows than this (2 per H100 SM) and rows longer than a
                            # block's registers hold: the split-row companion runs instead
SPLIT_BLOCKS = 528          # a split launch aims at this many blocks (4 per H100 SM)


# --------------------------------------------------------------------------- index text
class Idx:
    """A C index expression and the loop variables it depends on; ``part`` = (lin, sizes,
    k) when it is coordinate k of the linear index ``lin`` decoded over ``sizes``."""

    __slots__ = ("text", "deps", "part")

    def __init__(self, text: str, deps=frozenset(), part=None) -> None:
        self.text = text
        self.deps = frozenset(deps)
        self.part = part

    @property
    def zero(self) -> bool:
        return self.text == "0"

    def __repr__(self) -> str:
        return self.text


ZERO = Idx("0")


# --------------------------------------------------------------------------- kernels
class Kernel:
    """One generated kernel and how the driver launches it."""

    def __init__(self) -> None:
        self.name = ""
        self.kind = ""
        self.source = ""
        self.params: List[Tuple[str, str]] = []     # (C type, name)
        self.args: List[Tuple[str, Any]] = []       # ('out'|'in', Node) | ('size'|'scalar', e)
        self.index = "int32"                        # 'int32' | 'int64' | 'dual'
        self.big_exprs: List[Any] = []              # dual: any of these >= LIMIT -> int64
        self.outputs: List[Node] = []
        self.loads: List[Node] = []
        self.numel: Any = 1                         # pointwise: elements
        self.rows: Any = 1                          # reduce: rows and row length
        self.inner: Any = 1
        self.uses_sync = False
        self.summary = ""
        self.empty_max: List[str] = []              # ufuncs of max/min reductions (no identity)
        self.columns = False                        # reduce: a lane per row (last axis kept)
        self.vec = 0                                # pointwise: elements per thread (SS_VEC)
        self.vec_arrays: List[Node] = []            # ... arrays that must be 16-byte aligned
        self.vec_positions: List[int] = []          # ... their positions in ``args``
        self.vec_lens: List[Any] = []               # column kernels: lengths that must be
                                                    # multiples of vec (else: the row length)
        self.strided_positions: List[int] = []      # loaded arrays that may be strided views
        self.split: Optional["Kernel"] = None       # reduce: the split-row companion
        self.passes = 0                             # ... (on it) launches per call
        self.ws_slots = 0                           # ... workspace slots (rows x chunks each)
        self.merged = 0                             # reduce: phase pairs merged when looped

    def __repr__(self) -> str:
        return "Kernel(%s)" % self.name


_NAME = re.compile(r"[^0-9a-zA-Z_]")


def _cname(s: str) -> str:
    s = _NAME.sub("_", s)
    return s if not s[:1].isdigit() else "v_" + s


class Emitter:
    """Generates one kernel's C (also used, discarding the text, to test a merge)."""

    DIV = "/"           # integer division of non-negative indices in the kernel's language

    def __init__(self, spec: KernelSpec, planner: Planner) -> None:
        self.spec = spec
        self.P = planner
        self.rg = planner.rg
        self.nd = len(spec.shape)
        self.sizes: Dict[Any, str] = {}       # index-typed size arguments
        self.scalars: Dict[Any, str] = {}     # data scalars (long long)
        self.bufs: Dict[Node, str] = {}       # loaded arrays
        self.strides: Dict[tuple, str] = {}   # (array, axis) -> its element stride argument
        self.loads: List[Node] = []
        self.helpers: Set[str] = set()
        self.counter = 0
        self.memo: Dict[tuple, str] = {}
        self.row_memo: Dict[tuple, str] = {}
        self.pre: List[str] = []
        self.body: List[str] = []
        self.red_vars: Dict[Node, str] = {}
        self.names: Set[str] = set()
        self.index_exprs: List[Any] = []
        red = set(spec.axes or ())
        self.dom: List[Idx] = []
        for k, s in enumerate(spec.shape):
            if type(s) is int and s == 1:
                self.dom.append(ZERO)
            else:
                loopvar = "j" if (spec.axes is not None and k in red) else \
                    ("row" if spec.axes is not None else "i")
                self.dom.append(Idx("c%d" % k, {"c%d" % k, loopvar}))
        self.inner_vars = {"j"} | {"c%d" % k for k in red}
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
        self.trailing = spec.axes is not None and \
            tuple(spec.axes) == tuple(range(self.nd - len(spec.axes), self.nd))

    # ---------------------------------------------------------------- names
    def fresh(self, base: str = "v") -> str:
        self.counter += 1
        return "%s%d" % (base, self.counter)

    def unique(self, base: str) -> str:
        """A parameter name: ``in_`` / ``out_`` prefixed, so it never meets a local
        (c0, v1, a0, r0, t, w, i, j, row), a size (s0, n0, sc0) or a C function."""
        base = _cname(base)
        name, i = base, 1
        while name in self.names:
            name = "%s_%d" % (base, i)
            i += 1
        self.names.add(name)
        return name

    def size(self, e) -> str:
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

    def scalar(self, e) -> str:
        name = self.scalars.get(e)
        if name is None:
            name = self.scalars[e] = "sc%d" % len(self.scalars)
        return name

    # ---------------------------------------------------------------- coordinates
    def bcast(self, shape, out_shape, coords) -> List[Idx]:
        off = len(out_shape) - len(shape)
        return [ZERO if (type(s) is int and s == 1) else coords[off + k]
                for k, s in enumerate(shape)]

    def horner(self, coords: Sequence[Idx], sizes) -> Idx:
        """The C-order linear index of ``coords`` in ``sizes``; re-linearizing a decoded
        linear index over the same sizes gives it back (``(c / s) * s + c % s`` is c)."""
        real = [(k, c) for k, (c, s) in enumerate(zip(coords, sizes))
                if not (type(s) is int and s == 1)]
        if real and all(c.part is not None and c.part[0] is real[0][1].part[0] and
                        c.part[2] == k for k, c in real):
            lin, dsizes, _ = real[0][1].part
            if same_shape(dsizes, sizes):
                return lin
        acc: Optional[str] = None
        deps: set = set()
        for c, s in zip(coords, sizes):
            if acc is not None and not (type(s) is int and s == 1):
                acc = "%s * %s" % (_par(acc), self.size(s))
            if not c.zero:
                acc = c.text if acc is None else "%s + %s" % (acc, c.text)
                deps |= c.deps
        return ZERO if acc is None else Idx(_par(acc) if "+" in acc or "*" in acc else acc,
                                            deps)

    def decode(self, lin: Idx, sizes) -> List[Idx]:
        if lin.zero:
            return [ZERO] * len(sizes)
        out = []
        first = next((k for k, s in enumerate(sizes) if not (type(s) is int and s == 1)),
                     None)
        for k, s in enumerate(sizes):
            if type(s) is int and s == 1:
                out.append(ZERO)
                continue
            p = numel(sizes[k + 1:])
            t = lin.text if (type(p) is int and p == 1) else "(%s %s %s)" % (
                lin.text, self.DIV, self.size(p))
            if k != first:
                t = "(%s %% %s)" % (t, self.size(s))
            out.append(Idx(t, lin.deps, (lin, tuple(sizes), k)))
        return out

    def view_coords(self, n: Node, coords: List[Idx]) -> List[Idx]:
        src = n.inputs[0]
        S = src.shape
        op = n.op
        if op == "getitem":
            out_k = 0
            ins: List[Idx] = []
            for it in n.attrs["index"].items:
                if it is None:
                    out_k += 1
                    continue
                size = S[len(ins)]
                if isinstance(it, slice):
                    step = 1 if it.step is None else it.step
                    start = slice_start(it.start, size, step, self.rg)
                    c = coords[out_k]
                    out_k += 1
                    ins.append(self.affine(start, step, c))
                else:
                    v = norm_index(it, size, self.rg)
                    ins.append(Idx(self.size(v)) if not (type(v) is int and v == 0) else ZERO)
            while len(ins) < len(S):
                ins.append(coords[out_k])
                out_k += 1
            return ins
        if op == "expand_dims":
            axes = set(n.attrs["axis"])
            return [c for k, c in enumerate(coords) if k not in axes]
        if op == "squeeze":
            axes = set(n.attrs["axis"])
            it = iter(coords)
            return [ZERO if k in axes else next(it) for k in range(len(S))]
        if op == "permute_dims":
            ins = [ZERO] * len(S)
            for j, a in enumerate(n.attrs["axes"]):
                ins[a] = coords[j]
            return ins
        if op == "broadcast_to":
            return self.bcast(S, n.shape, coords)
        if op == "reshape":
            return self.reshape_coords(tuple(S), tuple(n.shape), coords)
        raise NoFuse("view %s" % op)

    def affine(self, start, step: int, c: Idx) -> Idx:
        st = None if (type(start) is int and start == 0) else self.size(start)
        if c.zero:
            return Idx(st) if st is not None else ZERO
        term = c.text if step == 1 else "%s * %s" % (self.size(step), c.text)
        if st is None:
            return Idx(term if step == 1 else "(%s)" % term, c.deps)
        return Idx("(%s + %s)" % (st, term), c.deps)

    def reshape_coords(self, S: tuple, O: tuple, coords: List[Idx]) -> List[Idx]:
        i = 0
        while i < min(len(S), len(O)) and same_shape(S[i:i + 1], O[i:i + 1]):
            i += 1
        j = 0
        while j < min(len(S), len(O)) - i and same_shape(S[len(S) - 1 - j:len(S) - j],
                                                         O[len(O) - 1 - j:len(O) - j]):
            j += 1
        lin = self.horner(coords[i:len(O) - j], O[i:len(O) - j])
        mid = self.decode(lin, S[i:len(S) - j])
        return list(coords[:i]) + mid + list(coords[len(O) - j:])

    # ---------------------------------------------------------------- values
    def row_level(self, coords) -> bool:
        return self.spec.axes is not None and not any(c.deps & self.inner_vars
                                                      for c in coords)

    def emit(self, ct: str, text: str, row: bool, note: str = "") -> str:
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

    def value(self, n: Node, coords: List[Idx]) -> str:
        P = self.P
        kind = P.kind[n]
        if kind == "view":
            return self.value(n.inputs[0], self.view_coords(n, coords))
        key = (n, tuple(c.text for c in coords))
        row = self.row_level(coords)
        memo = self.row_memo if row else self.memo
        got = memo.get(key) or self.row_memo.get(key)
        if got is not None:
            return got
        spec = self.spec
        if n in self.red_vars or (kind == "red" and any(n is r for r in spec.reductions())):
            if n not in self.red_vars:
                raise NoFuse("%s read before it is reduced" % n.name)
            if [c.text for c in coords] != self.row_coords(n):
                raise NoFuse("%s read outside its own row" % n.name)
            return self.red_vars[n]
        inline = kind == "pw" and (not P.needs_array[n] or any(n is o for o in spec.outs()))
        if inline:
            ops: List[Optional[Operand]] = []
            for x in n.inputs:
                if type(x) is Node:
                    ops.append(Operand(self.value(x, self.bcast(x.shape, n.shape, coords)),
                                       x.dtype))
                elif type(x) is Expr:
                    ops.append(Operand(self.scalar(x), int, value=x))
                else:
                    ops.append(operand_of(x, "?"))
            text = self.pointwise_text(n, ops)
            note = n.name if n.name.split("_")[0] == n.op.split("_")[0] else \
                "%s (%s)" % (n.name, n.op)
        else:
            if kind not in ("input", "const", "lib", "pw", "red"):
                raise NoFuse("cannot load %s" % n.name)
            p = P.pos.get(n)
            if p is None or p >= spec.pos:
                raise NoFuse("%s is not computed before this kernel" % n.name)
            text, note = self.load_text(n, coords, row), ""
        v = self.emit(CTYPES[n.dtype.name], text, row, note)
        memo[key] = v
        return v

    def pointwise_text(self, n: Node, ops: List[Optional[Operand]]) -> str:
        """The text computing pointwise node ``n`` on its operands (NoFuse: none)."""
        text = pointwise_expr(n, ops, self.helpers)
        if text is None:
            raise NoFuse("no C for %s" % n.op)
        return text

    def load_text(self, n: Node, coords: List[Idx], row: bool) -> str:
        """The text loading array ``n`` at ``coords`` (``row``: at row level)."""
        spec = self.spec
        kind = self.P.kind[n]
        buf = self.buffer(n)
        off = raw = self.offset(n.shape, coords).text
        if kind in ("input", "lib"):
            # the caller's array may be a strided view: the SS_STRIDED variant indexes
            # it with its element strides (kernel arguments) instead of a copy
            off = "SS_OFF(%s, %s)" % (off, self.strided_offset(n, coords))
        text = "%s[%s]" % (buf, off)
        if spec.axes is None and raw == "i":          # the thread's own element
            self.vec_bufs[buf] = STORAGE[n.dtype.name]
            if self.vec_mode:
                text = "vb_%s[ss_v]" % buf
        # contiguous along the row (the row's own elements, or a vector broadcast over
        # rows): the SS_VEC variant of a row kernel loads it 16 bytes at a time
        contig = spec.axes is not None and not self.column and not self.split and \
            not row and raw in (self.row_linear, "j", self.row_coord)
        if contig:
            self.rvec_bufs[buf] = STORAGE[n.dtype.name]
        # along the kept last axis (stride 1 in the lane's columns): the SS_VEC variant
        # of a column kernel loads a lane's columns 16 bytes at a time
        ccontig = self.column and not self.split and kind in ("input", "lib", "pw",
                                                               "red") and \
            self._col_contig(coords[-1:] if coords else [], raw)
        if ccontig:
            self.cvec_bufs[buf] = STORAGE[n.dtype.name]
            if not any(n.shape[-1] is e or n.shape[-1] == e for e in self.cvec_lens):
                self.cvec_lens.append(n.shape[-1])
        if self.cvec_mode:
            return cops.load_expr(self._col_load(n, buf, raw, text, row, ccontig), n.dtype)
        vt = _VECT[_SIZEOF[STORAGE[n.dtype.name]] * self.rvec] if contig and \
            self.rvec_mode else ""
        if vt and getattr(self, "cache", None) is None:
            text = "vb_%s[ss_v]" % buf            # loaded before the chunk's elements
            self.rvec_loads[buf] = (STORAGE[n.dtype.name], raw)
        if getattr(self, "cache", None) is not None and not row:
            # an element of the row: loaded once into a register array, which the
            # later phases of the row read instead of memory
            reg = self.cache.get(text)
            # an array first read by the output pass is read by no later phase: it
            # needs registers for one chunk only (fewer live registers: no spills)
            chunk = reg in self.chunk_regs if reg is not None else \
                bool(vt) and self.out_pass
            at = "[ss_k %% %d]" % self.rvec if chunk else "[ss_k]"
            if reg is None:
                reg = self.cache[text] = "rc%d" % len(self.cache)
                if chunk:
                    self.chunk_regs.add(reg)
                self.cache_decl.append("__align__(16) %s %s[%d];   // %s, loaded %s" % (
                    STORAGE[n.dtype.name], reg, self.rvec if chunk else ROW_ITEMS, text,
                    "a chunk at a time" if chunk else "once"))
                if vt:
                    # the first element of each chunk of the thread loads the chunk
                    text = "(ss_k %% %d == 0 ? (*(%s*)&%s[%s] = *(const %s*)&%s[%s], " \
                        "%s%s) : %s%s)" % (self.rvec, vt, reg, "0" if chunk else "ss_k",
                                           vt, buf, raw, reg, at, reg, at)
                else:
                    text = "(%s[ss_k] = %s)" % (reg, text)
            else:
                text = "%s%s" % (reg, at)
        return cops.load_expr(text, n.dtype)

    def buffer(self, n: Node) -> str:
        name = self.bufs.get(n)
        if name is None:
            name = self.bufs[n] = self.unique("in_" + n.name)
            self.loads.append(n)
            self.index_exprs.append(numel(n.shape))
        return name

    def offset(self, shape, coords: List[Idx]) -> Idx:
        if same_shape(shape, self.spec.shape) and \
                [c.text for c in coords] == [c.text for c in self.dom]:
            lin = self.dom_linear()
            if lin is not None:
                return lin
        return self.horner(coords, shape)

    def strided_offset(self, n: Node, coords: List[Idx]) -> str:
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

    def dom_linear(self) -> Optional[Idx]:
        if self.spec.axes is None:
            return Idx("i", {"i"})
        if self.trailing:
            inner = numel([self.spec.shape[a] for a in self.spec.axes])
            if type(inner) is int and inner == 1:
                return Idx("row", {"row"})
            return Idx("(row * %s + j)" % self.size(inner), {"row", "j"})
        return None

    def row_out_coords(self, n: Node) -> List[Idx]:
        keep, _ = self.spec.row_shapes()
        axes = set(self.spec.axes)
        if same_shape(n.shape, keep):
            return [ZERO if k in axes else c for k, c in enumerate(self.dom)]
        return [c for k, c in enumerate(self.dom) if k not in axes]

    def row_coords(self, r: Node) -> List[str]:
        axes = set(self.spec.axes)
        keep = bool(r.attrs.get("keepdims"))
        out = []
        for k, c in enumerate(self.dom):
            if k in axes:
                if keep:
                    out.append("0")
            else:
                out.append(c.text)
        return out

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

    def _decode_lines(self, lin: str, axes: List[int], tvar: str) -> List[str]:
        S = self.spec.shape
        axes = [a for a in axes if not (type(S[a]) is int and S[a] == 1)]
        if not axes:
            return []
        if len(axes) == 1:
            return ["const idx_t c%d = %s;" % (axes[0], lin)]
        lines = ["idx_t %s = %s;" % (tvar, lin)]
        for a in reversed(axes[1:]):
            sz = self.size(S[a])
            lines.append("const idx_t c%d = %s %% %s; %s /= %s;" % (a, tvar, sz, tvar, sz))
        lines.append("const idx_t c%d = %s;" % (axes[0], tvar))
        return lines

    def _pointwise(self, written, index) -> Optional[Kernel]:
        """A grid-stride loop over the domain.  With ``-DSS_VEC`` (chosen per call when
        every array read or written at the thread's own element is 16-byte aligned) each
        thread takes ``vec`` adjacent elements: one 128-bit load per such array, the
        elements computed from registers, one 128-bit store per output; other loads
        (broadcasts, views) stay scalar, and a scalar tail covers the last elements."""
        spec = self.spec
        self.vec_bufs: Dict[str, str] = {}
        self.vec_mode = False
        stores = []
        for n in spec.outs():
            v = self.value(n, self.dom)
            stores.append((n, v))
        if written is None:
            return None
        N = numel(spec.shape)
        nsz = self.size(N)
        self.index_exprs.append(N)
        out_names = self.out_names
        decode = self._decode_lines("i", list(range(self.nd)), "t")
        body = self.body + ["%s[i] = %s;" % (out_names[n], cops.store_expr(v, n.dtype))
                            for n, v in stores]
        coords = _uses_coords(decode, body)
        # the vector variant's scalar tail (fewer than ``vec`` elements, once per call)
        tail = ["  " + l for l in (decode if coords else []) + body]
        # the vector variant: the same values, loads at i read from registers
        widths = [STORAGE[n.dtype.name] for n in spec.outs()] + list(self.vec_bufs.values())
        V = 16 // max(_SIZEOF[t] for t in widths)
        self.memo, self.body, self.vec_mode = {}, [], True
        vstores = [(n, self.value(n, self.dom)) for n in spec.outs()]
        self.vec_mode = False
        vbody = self.body + ["vo_%s[ss_v] = %s;" % (out_names[n], cops.store_expr(v, n.dtype))
                             for n, v in vstores]
        vcoords = _uses_coords(decode, vbody)
        first = "((idx_t)blockIdx.x * (idx_t)blockDim.x + (idx_t)threadIdx.x)"
        vstride = "(idx_t)blockDim.x * (idx_t)gridDim.x * %d" % V
        vloop = ["#ifdef SS_VEC"]
        if vcoords:
            # the chunk's first coordinates: decoded once per thread, then stepped by the
            # grid stride with carries (no divide or modulo inside the loop)
            vloop += self._grid_coords("%s * %d" % (first, V), vstride, "b")
        vloop += [
            "for (idx_t i0 = %s * %d; i0 < %s; i0 += %s) {" % (first, V, nsz, vstride),
            "  if (i0 + %d <= %s) {" % (V, nsz)]
        for buf, ct in self.vec_bufs.items():
            vloop.append("    __align__(16) %s vb_%s[%d];" % (ct, buf, V))
            vloop.append("    *(%s*)vb_%s = *(const %s*)(%s + i0);" % (
                _VECT[_SIZEOF[ct] * V], buf, _VECT[_SIZEOF[ct] * V], buf))
        for n, _ in vstores:
            ct = STORAGE[n.dtype.name]
            vloop.append("    __align__(16) %s vo_%s[%d];" % (ct, out_names[n], V))
        step = []
        if vcoords:
            axes = self._real_axes()
            vloop += ["    " + " ".join("idx_t c%d = b%d;" % (a, a) for a in axes)]
            step = [_carry(axes, [self.size(spec.shape[a]) for a in axes])]
        vloop += ["    #pragma unroll", "    for (int ss_v = 0; ss_v < %d; ss_v++) {" % V,
                  "      const idx_t i = i0 + ss_v;"]
        vloop += ["      " + l for l in vbody + step]
        vloop.append("    }")
        for n, _ in vstores:
            vt = _VECT[_SIZEOF[STORAGE[n.dtype.name]] * V]
            vloop.append("    *(%s*)(%s + i0) = *(const %s*)vo_%s;" % (
                vt, out_names[n], vt, out_names[n]))
        vloop += ["  } else {",
                  "    for (idx_t i = i0; i < %s; i++) {" % nsz]
        vloop += ["    " + l for l in tail]
        vloop += ["    }", "  }"]
        if vcoords:
            vloop += ["  " + l for l in self._grid_step("b")]
        vloop += ["}", "#else"]
        # the scalar (and strided) variant: coordinates decoded once per thread, stepped
        # by the grid stride with one compare and subtract per axis
        loop = self._grid_coords(first, "(idx_t)blockDim.x * (idx_t)gridDim.x", "c") \
            if coords else []
        loop += ["for (idx_t i = %s; i < %s; i += (idx_t)blockDim.x * (idx_t)gridDim.x) {"
                 % (first, nsz)]
        loop += ["  " + l for l in body]
        if coords:
            loop += ["  " + l for l in self._grid_step("c")]
        loop += ["}"]
        k = self._kernel(index, "pointwise", out_names, [n for n, _ in stores],
                         vloop + loop + ["#endif"])
        k.numel = N
        k.vec = V
        names = {v: n for n, v in self.bufs.items()}
        k.vec_arrays = [n for n, _ in stores] + [names[b] for b in self.vec_bufs]
        k.vec_positions = [p for p, (kind, v) in enumerate(k.args)
                           if kind in ("out", "in") and any(v is x for x in k.vec_arrays)]
        return k

    def _real_axes(self) -> List[int]:
        S = self.spec.shape
        return [a for a in range(self.nd) if not (type(S[a]) is int and S[a] == 1)]

    def _grid_coords(self, start: str, stride: str, prefix: str) -> List[str]:
        """Hoisted before a grid-stride loop: the coordinates (``<prefix><axis>``) of the
        thread's first index, and the grid stride decoded into per-axis steps
        (``ss_d<axis>``); these two decodes are the loop's only divides and modulos."""
        S = self.spec.shape
        axes = self._real_axes()
        lines = ["idx_t ss_t = %s, ss_u = %s;" % (start, stride)]
        for a in reversed(axes[1:]):
            sz = self.size(S[a])
            lines.append("idx_t %s%d = ss_t %% %s; ss_t /= %s;" % (prefix, a, sz, sz))
            lines.append("const idx_t ss_d%d = ss_u %% %s; ss_u /= %s;" % (a, sz, sz))
        lines.append("idx_t %s%d = ss_t;" % (prefix, axes[0]))
        lines.append("const idx_t ss_d%d = ss_u;" % axes[0])
        return lines

    def _grid_step(self, prefix: str) -> List[str]:
        """Advance ``<prefix><axis>`` by the grid stride: each axis adds its step and the
        carry from the axis after it; both are below the axis size, so one compare and
        subtract wraps it (the first axis never wraps: the loop ends first)."""
        S = self.spec.shape
        axes = self._real_axes()
        lines = []
        for a, b in zip(reversed(axes[1:]), reversed(axes[:-1])):
            sz = self.size(S[a])
            lines.append("%s%d += ss_d%d; if (%s%d >= %s) { %s%d -= %s; ++%s%d; }" % (
                prefix, a, a, prefix, a, sz, prefix, a, sz, prefix, b))
        lines.append("%s%d += ss_d%d;" % (prefix, axes[0], axes[0]))
        return lines

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
        spec = self.spec
        S, axes, outer_axes, rows, inner, rsz, isz = self._row_geometry()
        lin = self.dom_linear()
        self.row_linear = lin.text if lin is not None else ""
        if axes == [self.nd - 1]:
            self.row_coord = "c%d" % (self.nd - 1)
        variants = {}
        col_half = self.col_half
        for vec in (False, True):
            if vec and self.column:
                if not self.cvec_bufs or written is None:
                    break
                # a lane takes 16 bytes of the widest array read along the kept axis
                # (at most ROW_ITEMS columns); its registers keep ROW_ITEMS 32-bit words
                # of each array read along the columns (float64 softmax spilled with more)
                wide = max(_SIZEOF[t] for t in self.cvec_bufs.values())
                self.cvec = min(16 // wide, ROW_ITEMS)
                self.col_items = max(1, ROW_ITEMS // (self.cvec * max(1, wide // 4)))
                self.col_half = self._col_scratch(self.cvec)
                self.cvec_mode = True
            elif vec:
                if not self.rvec_bufs or self.column or written is None:
                    break
                # 16 bytes of the widest such array per load (at most ROW_ITEMS elements)
                self.rvec = min(16 // max(_SIZEOF[t] for t in self.rvec_bufs.values()),
                                ROW_ITEMS)
                self.rvec_mode = True
            for cached in (True, False):
                self.red_vars, self.row_memo = {}, {}      # each variant declares its own
                self.cache = {} if cached else None
                self.chunk_regs = set()
                self.cache_decl = []
                self.rvec_loads = {}
                variants[cached, vec] = self._row_phases(cached, isz, axes, written)
        self.cache = None
        self.rvec_mode = self.cvec_mode = False
        if written is None:
            return None
        (cached_lines, outs), (loop_lines, _) = variants[True, False], variants[False, False]
        if (True, True) in variants:
            # the SS_VEC variant (chosen per call: rows a multiple of the vector width, the
            # contiguous arrays 16-byte aligned, none strided)
            cached_lines = ["#ifdef SS_VEC"] + variants[True, True][0] + ["#else"] + \
                cached_lines + ["#endif"]
            loop_lines = ["#ifdef SS_VEC"] + variants[False, True][0] + ["#else"] + \
                loop_lines + ["#endif"]
        rdecode = self._decode_lines("row", outer_axes, "t")
        both = cached_lines + loop_lines
        vec_half, self.col_half = self.col_half, col_half
        body = self._row_loop_head(isz, rsz)
        body += ["  " + l for l in (rdecode if _uses_coords(rdecode, both) else [])]
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
        k = self._kernel(index, "reduce", self.out_names, outs, body)
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
        k.empty_max = [{"max": "maximum", "min": "minimum"}[r.op] for r in spec.reductions()
                       if r.op in ("max", "min")]
        return k

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

    def _split(self, written, index) -> Optional[Kernel]:
        """The split-row companion of a row reduction, for few long rows: block b takes
        chunk ``b % ss_nch`` (blockDim * ROW_ITEMS elements) of row ``b / ss_nch``, so
        every SM has work (a column reduction keeps its coalesced layout, 32 adjacent
        columns per block, and splits the reduced elements into ``ss_nch`` ranges).  It runs in passes (``ss_pass`` = 0 .. reductions): pass p
        combines the partials earlier passes left in the workspace ``ss_ws`` into the
        results of reductions < p, and reduces its chunk for reduction p into a partial;
        the last pass combines them all and writes the chunk's outputs.  Each pass reads
        the chunk once; the row is read once per reduction plus once to write."""
        spec = self.spec
        self.red_vars, self.row_memo, self.cache, self.cache_decl = {}, {}, None, []
        S, axes, outer_axes, rows, inner, rsz, isz = self._row_geometry()
        lines, outs = self._row_phases(False, isz, axes, written)
        if written is None:
            return None
        rdecode = self._decode_lines("row", outer_axes, "t")
        if self.column:
            # the column layout (32 adjacent columns per block, coalesced), each block
            # taking one of ss_nch ranges of the reduced elements
            body = ["__shared__ double ss_scratch[%d];   // one scratch for every reduction"
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
            body += ["  " + l for l in (rdecode if _uses_coords(rdecode, lines) else []) +
                     lines]
            body.append("}")
            k = self._kernel(index, "reduce", self.out_names, outs, body,
                             extra=[("double* __restrict__", "ss_ws", ("ws", None)),
                                    ("long long", "ss_pass_", ("pass", None)),
                                    ("long long", "ss_nch_", ("nchunks", None))])
            k.rows, k.inner, k.columns = rows, inner, True
            k.uses_sync = True
            k.passes = self.phase_count + 1
            k.ws_slots = self.ws_slots
            return k
        body = ["__shared__ double ss_scratch[%d];   // one scratch for every reduction"
                % (2 * self.half),
                "unsigned int ss_par = 0;",
                "const unsigned int ss_g = blockDim.x, ss_lane = threadIdx.x;",
                "const long long ss_pass = ss_pass_;",
                "const idx_t ss_nch = (idx_t)ss_nch_;          // chunks per row",
                "const idx_t ss_wsn = %s * ss_nch;             // partials per reduction" % rsz,
                "for (idx_t ss_item = (idx_t)blockIdx.x; ss_item < ss_wsn; "
                "ss_item += (idx_t)gridDim.x) {",
                "  const idx_t row = ss_item / ss_nch, ss_c = ss_item % ss_nch;",
                "  const idx_t ss_j0 = ss_c * (idx_t)blockDim.x * %d;" % ROW_ITEMS]
        body += ["  " + l for l in (rdecode if _uses_coords(rdecode, lines) else []) + lines]
        body.append("}")
        k = self._kernel(index, "reduce", self.out_names, outs, body,
                         extra=[("double* __restrict__", "ss_ws", ("ws", None)),
                                ("long long", "ss_pass_", ("pass", None)),
                                ("long long", "ss_nch_", ("nchunks", None))])
        k.rows, k.inner = rows, inner
        k.uses_sync = True
        k.passes = self.phase_count + 1
        k.ws_slots = self.ws_slots
        return k

    def _inline(self, n) -> bool:
        """Is ``n`` computed in this kernel from its inputs (not loaded)?"""
        return type(n) is Node and self.P.kind.get(n) == "pw" and (
            not self.P.needs_array[n] or any(n is o for o in self.spec.outs()))

    def merged_pairs(self) -> Dict[Node, Tuple[str, Node]]:
        """Adjacent reductions (r0, r1) of the row that one read of it computes:
        ``online``: r0 = max(x), r1 = sum(exp(x - r0)) (softmax, logsumexp);
        ``welford``: r0 = mean(x), r1 = mean or sum of (x - r0)**2 (layer norm, variance).
        x is the same per-element value in both, of dtype float32 or float64."""
        reds = self.spec.reductions()
        out: Dict[Node, Tuple[str, Node]] = {}
        for r0, r1 in zip(reds, reds[1:]):
            if r0 in out or any(r0 is v for _, v in out.values()):
                continue
            kind = self._merge_kind(r0, r1)
            if kind:
                out[r0] = (kind, r1)
        return out

    def _merge_kind(self, r0: Node, r1: Node) -> str:
        x = r0.inputs[0]
        if type(x) is not Node or not same_shape(x.shape, self.spec.shape):
            return ""
        dt = x.dtype
        if dt.name not in ("float32", "float64") or r0.dtype != dt or r1.dtype != dt:
            return ""
        t = r1.inputs[0]
        if not self._inline(t) or t.dtype != dt:
            return ""
        if r0.op == "max" and r1.op == "sum" and t.op == "exp":
            d = t.inputs[0]
            kind = "online"
        elif r0.op == "mean" and r1.op in ("mean", "sum"):
            if t.op == "power" and len(t.inputs) == 2 and type(t.inputs[1]) in (int, float) \
                    and t.inputs[1] == 2:
                d = t.inputs[0]
            elif t.op == "square" or (t.op == "multiply" and t.inputs[0] is t.inputs[1]):
                d = t.inputs[0]
            else:
                return ""
            kind = "welford"
        else:
            return ""
        if not (self._inline(d) and d.op == "subtract" and d.dtype == dt and
                d.inputs[0] is x and d.inputs[1] is r0):
            return ""
        return kind

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
                False, isz, (jdecode if _uses_coords(jdecode, body) else []) + body) +
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
                False, isz, (jdecode if _uses_coords(jdecode, body) else []) + body) +
                self._lanes_merge(ct, [a0, n, mu, a1], merge))
            ph += self._per_col(R0.out_c, [(names[2], R0.finish(a0, isz))], const=True)
            # a float sum that overflowed: NumPy's mean is inf, each (x - inf)**2 is inf
            ph += self._per_col(R1.out_c, [(names[3], R1.finish(
                "(%s - %s != %s - %s && %s == %s ? %s : %s)" % (
                    v0, v0, v0, v0, a1, a1, cops.highest(x.dtype), a1), isz))], const=True)
        self.red_vars[r0], self.red_vars[r1] = v0, v1
        return ph

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
        V = self.rvec
        if cached and self.rvec_mode:
            # chunks of V adjacent elements: chunk q of the thread starts at
            # (lane + q * threads) * V; the row length is a multiple of V, so a chunk's
            # last element (ss_k % V == V - 1) is in the row exactly when its first is
            decl = ["__align__(16) %s vo_%s[%d];" % (ct, buf, V) for ct, buf, _ in vstores]
            flush = ["    if (ss_k %% %d == %d) {   // the chunk's last element: store it"
                     % (V, V - 1)]
            flush += ["      " + l for ct, buf, off in vstores for l in _vector_store(
                ct, buf, self._at_chunk(off, "(j - %d)" % (V - 1)), V)]
            flush += ["    }"] if vstores else []
            lines = [l.replace("[ss_v]", "[ss_k %% %d]" % V) for l in lines]
            return (decl + ["#pragma unroll",
                            "for (int ss_k = 0; ss_k < %d; ss_k++) {" % ROW_ITEMS,
                            "  const idx_t j = ((idx_t)ss_lane + (idx_t)(ss_k / %d) * "
                            "(idx_t)ss_g) * %d + (idx_t)(ss_k %% %d);" % (V, V, V),
                            "  if (j < %s) {" % isz] + ["    " + l for l in lines] +
                    (flush if vstores else []) + ["  }", "}"])
        if cached:
            return (["#pragma unroll", "for (int ss_k = 0; ss_k < %d; ss_k++) {" % ROW_ITEMS,
                     "  const idx_t j = (idx_t)ss_lane + (idx_t)ss_k * (idx_t)ss_g;",
                     "  if (j < %s) {" % isz] + ["    " + l for l in lines] + ["  }", "}"])
        if self.rvec_mode:
            text = "\n".join(lines)
            loads = []
            for buf, (ct, raw) in self.rvec_loads.items():
                if "vb_%s[ss_v]" % buf in text:
                    vt = _VECT[_SIZEOF[ct] * V]
                    loads += ["__align__(16) %s vb_%s[%d];" % (ct, buf, V),
                              "*(%s*)vb_%s = *(const %s*)&%s[%s];" % (
                                  vt, buf, vt, buf, self._at_chunk(raw, "j0"))]
            loads += ["__align__(16) %s vo_%s[%d];" % (ct, buf, V) for ct, buf, _ in vstores]
            stores = [l for ct, buf, off in vstores
                      for l in _vector_store(ct, buf, self._at_chunk(off, "j0"), V)]
            return (["for (idx_t j0 = (idx_t)ss_lane * %d; j0 < %s; j0 += (idx_t)ss_g * %d) {"
                     % (V, isz, V)] + ["  " + l for l in loads] +
                    ["  #pragma unroll", "  for (int ss_v = 0; ss_v < %d; ss_v++) {" % V,
                     "    const idx_t j = j0 + ss_v;"] +
                    ["    " + l for l in lines] + ["  }"] + ["  " + l for l in stores] + ["}"])
        return (["for (idx_t j = (idx_t)ss_lane; j < %s; j += (idx_t)ss_g) {" % isz] +
                ["  " + l for l in lines] + ["}"])

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
                  for l in _vector_store(ct, buf, self._at_col0(off), V)]
        head = lines[:jd] if jd or not _uses_coords(self.jdecode, stores) else self.jdecode
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

    # ------------------------------------------------------------ column SS_VEC helpers
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
        sizes = [_SIZEOF.get(cops.Reduction(r.op, r.inputs[0].dtype, r.dtype).acc_c, 8)
                 for r in self.spec.reductions()]
        sizes += [_SIZEOF.get(CTYPES[r.inputs[0].dtype.name], 8) for r in self.merged_pairs()]
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
        vt = _VECT[_SIZEOF[ct] * V] if contig else ""
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
            inner = (jdecode if _uses_coords(jdecode, self.body) else []) + self.body
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
        ph: List[str] = []
        if self.column and self.cvec_mode:
            return self._lanes_merge(R.acc_c, [acc], ["%s = %s;" % (
                acc, R.combine(acc, "o0", self.helpers))])
        if self.column:
            # the COL_SPLIT threads of a column (one per warp) meet in shared memory
            ph.append("{                        // across warps: one barrier")
            ph.append("  %s* sh = (%s*)(ss_scratch + %d * ss_par);" % (
                R.acc_c, R.acc_c, self.col_half))
            ph.append("  ss_par ^= 1u;")
            ph.append("  sh[threadIdx.x] = %s;" % acc)
            ph.append("  __syncthreads();")
            ph.append("  %s = sh[ss_col];" % acc)
            ph.append("  for (unsigned int w = 1; w < ss_g; w++) %s = %s;" % (
                acc, R.combine(acc, "sh[32 * w + ss_col]", self.helpers)))
            ph.append("}")
        else:
            ph.append("for (int w = 16; w > 0; w >>= 1) %s = %s;" % (
                acc, R.combine(acc, "ss_shfl_xor(%s, w)" % acc, self.helpers)))
            ph.append("if (ss_g > 32) {          // across warps: one barrier")
            ph.append("  %s* sh = (%s*)ss_scratch + %d * ss_par;" % (R.acc_c, R.acc_c,
                                                          self.half))
            ph.append("  ss_par ^= 1u;")
            ph.append("  if ((threadIdx.x & 31u) == 0) sh[threadIdx.x >> 5] = %s;" % acc)
            ph.append("  __syncthreads();")
            ph.append("  %s = sh[0];" % acc)
            ph.append("  for (unsigned int w = 1; w < (ss_g >> 5); w++) %s = %s;" % (
                acc, R.combine(acc, "sh[w]", self.helpers)))
            ph.append("}")
        return ph

    def _row_outputs(self, cached: bool, isz: str, jdecode, written):
        """After the reduction phases: the lines writing the elementwise outputs (one more
        pass over the row) and the row outputs (one lane per row), and the nodes written;
        ``None`` when only sizing the kernel (``written`` is None)."""
        spec = self.spec
        phases: List[str] = []
        self.memo, self.body, self.pre = {}, [], []
        stores = []
        self.out_pass = True
        for n, role in spec.roots:
            if role == "out":
                stores.append((n, self.value(n, self.dom)))
        self.out_pass = False
        row_stores = []
        for n, role in spec.roots:
            if role == "rowout":
                row_stores.append((n, self.value(n, self.row_out_coords(n))))
        if written is None:
            return None
        out_names = self.out_names
        if stores:
            lin = self.dom_linear() or self.horner(self.dom, spec.shape)
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
            phases.append("// write %s" % ", ".join(n.name for n, _ in stores))
            phases += self._pre_lines()
            phases += self._row_loop(cached, isz, (jdecode if _uses_coords(jdecode, body)
                                                   else []) + body, vstores)
        elif self.pre:
            phases += self._pre_lines()
        red_out = [r for r in spec.reductions() if r in written]
        row_writes = [(r, self.red_vars[r]) for r in red_out] + row_stores
        if row_writes and self.cvec_mode:
            # the lane's columns are adjacent: each result leaves as 128-bit stores
            phases.append("if (ss_lane == 0 && ss_live) {")
            phases += ["  __align__(16) %s vo_%s[%d];" % (STORAGE[n.dtype.name], out_names[n],
                                                          self.cvec) for n, _ in row_writes]
            phases += ["  " + l for l in self._cols([
                "vo_%s[ss_v] = %s;" % (out_names[n], cops.store_expr(v, n.dtype))
                for n, v in row_writes])]
            phases += ["  " + l for n, _ in row_writes for l in _vector_store(
                STORAGE[n.dtype.name], out_names[n], "row0", self.cvec)]
            phases.append("}")
            self.rvec_outs = self.rvec_outs + [n for n, _ in row_writes]
        elif row_writes:
            phases.append("if (ss_lane == 0 && ss_live && ss_c == 0) {"
                          if self.column and self.split else
                          "if (ss_lane == 0 && ss_live) {" if self.column else
                          "if (ss_lane == 0 && ss_c == 0) {" if self.split else
                          "if (ss_lane == 0) {")
            phases += ["  %s[row] = %s;" % (out_names[n], cops.store_expr(v, n.dtype))
                       for n, v in row_writes]
            phases.append("}")
        outs = [n for n, _ in stores] + red_out + [n for n, _ in row_stores]
        return phases, outs

    def _kernel(self, index: int, kind: str, out_names: Dict[Node, str], outs: List[Node],
                body: List[str], extra=()) -> Kernel:
        spec = self.spec
        k = Kernel()
        k.kind = kind
        k.outputs = outs
        k.loads = list(self.loads)
        first = spec.roots[0][0].name
        k.name = "k%d_%s%s" % (index, _cname(first), "_split" if self.split else "")
        params: List[Tuple[str, str]] = []
        args: List[Tuple[str, Any]] = []
        for n in outs:
            params.append(("%s* __restrict__" % STORAGE[n.dtype.name], out_names[n]))
            args.append(("out", n))
            self.index_exprs.append(numel(n.shape))
        for n in self.loads:
            params.append(("const %s* __restrict__" % STORAGE[n.dtype.name], self.bufs[n]))
            args.append(("in", n))
        text = "\n".join(body) + "".join(self.helpers)
        if "ss_h2f(" in text or "ss_f2h(" in text or "ss_hround(" in text:
            self.helpers.add("half")
        self.sizes = dict(sorted(((e, v) for e, v in self.sizes.items()
                                  if re.search(r"\b%s\b" % v, text)),      # still used
                                 key=lambda kv: (kv[1][0] == "n", len(kv[1]), kv[1])))
        for e, name in self.sizes.items():
            params.append(("long long", name + "_"))
            args.append(("size", e))
        for key, name in self.strides.items():
            params.append(("long long", name + "_"))
            args.append(("stride", key))
        for ct, name, arg in extra:          # the split companion's workspace and pass
            params.append((ct, name))
            args.append(arg)
        for e, name in self.scalars.items():
            params.append(("long long", name))
            args.append(("scalar", e))
        k.params = params
        k.args = args
        k.strided_positions = sorted({p for p, (kind, v) in enumerate(args) if kind == "in"
                                      and any(v is key[0] for key in self.strides)})
        k.index, k.big_exprs = self._index_mode()
        sizes = ["const idx_t %s = (idx_t)%s_;" % (name, name) for name in self.sizes.values()]
        if self.strides:
            sizes += ["#ifdef SS_STRIDED"] + [
                "const idx_t %s = (idx_t)%s_;" % (name, name)
                for name in self.strides.values()] + ["#endif"]
        head = ["// symshape %s kernel over %s%s" % (
            kind, _fmt_shape(spec.shape),
            "" if spec.axes is None else ", reducing axes %s" % (tuple(spec.axes),))]
        for n, role in spec.roots:
            head.append("//   %s: %s %s[%s]%s" % (
                {"reduce": "reduce", "out": "write ", "rowout": "write (per row)"}[role],
                n.name, _short(n.dtype),
                ", ".join(format_expr(s) for s in n.shape),
                "" if role != "reduce" or n in outs else " (kept in registers)"))
        for e, name in self.sizes.items():
            if e.as_symbol() is None:
                head.append("//   %s = %s" % (name, format_expr(e)))
        head.append("//   index arithmetic: %s" % {
            "int32": "32-bit (the ranges prove every index < 2**31)",
            "int64": "64-bit (the sizes provably reach 2**31)",
            "dual": "32-bit, or 64-bit when compiled with -DSS_INDEX64 (chosen per call)",
        }[k.index])
        typedef = {"int32": ["typedef int idx_t;"], "int64": ["typedef long long idx_t;"],
                   "dual": ["#ifdef SS_INDEX64", "typedef long long idx_t;", "#else",
                            "typedef int idx_t;", "#endif"]}[k.index]
        sig = ",\n    ".join("%s %s" % p for p in params)
        lines = head + []
        own = sorted(h for h in self.helpers if h in _ROW_HELPERS)
        helpers = cops.helper_source(self.helpers - set(own))
        for h in own:
            guard = "SS_HELPER_%s" % h.upper()
            helpers += "\n#ifndef %s\n#define %s\n%s\n#endif" % (guard, guard, _ROW_HELPERS[h])
        helpers = helpers.strip("\n")
        if helpers:
            lines.append(helpers)
        if self.strides:
            lines.append(_SS_OFF)
        bounds = "__launch_bounds__(%d, %d) " % (ROW_BLOCK, ROW_MIN_BLOCKS) \
            if kind == "reduce" else ""
        lines.append('extern "C" __global__ void %s%s(\n    %s) {' % (bounds, k.name, sig))
        lines += ["  " + l if not l.startswith("#") else l for l in typedef + sizes + body]
        lines.append("}")
        k.source = "\n".join(lines) + "\n"
        k.summary = "; ".join("%s %s" % ("reduce" if r == "reduce" else "write", n.name)
                              for n, r in spec.roots)
        return k

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


#: device helpers of merged row phases (templates over float / double)
_ROW_HELPERS = {
    # exp in the precision of its argument, as the generated exp of that dtype
    # (m, s) += (m2, s2): two running maxima and the sums of exp(x - max) they hold, each
    # rescaled to the larger maximum (scaled by 1 when it is its own: no exp(-inf + inf))
    "online": "\n".join([
        "__device__ __forceinline__ float ss_expt(float x) { return expf(x); }",
        "__device__ __forceinline__ double ss_expt(double x) { return exp(x); }",
        "template <typename T> __device__ __forceinline__ void ss_online_merge("
        "T& m, T& s, T m2, T s2) {",
        "  const T mn = ss_maximum(m, m2);",
        "  s = s * (m == mn ? (T)1 : ss_expt(m - mn)) + s2 * (m2 == mn ? (T)1 : "
        "ss_expt(m2 - mn));",
        "  m = mn;",
        "}"]),
    # (n, mean, m2) += (n2, mean2, m22): Chan, Golub and LeVeque's pairwise update of a
    # count, a mean and a sum of squared deviations from it (nothing to add when n2 == 0)
    "welford": "\n".join([
        "template <typename T> __device__ __forceinline__ void ss_welford_merge("
        "T& n, T& mean, T& m2, T n2, T mean2, T m22) {",
        "  if (n2 > (T)0) {",
        "    if (n > (T)0) {",
        "      const T nn = n + n2, f = n2 / nn, d = mean2 - mean;",
        "      mean = mean + d * f;",
        "      m2 = m2 + m22 + d * (d * (n * f));",
        "      n = nn;",
        "    } else {",
        "      n = n2; mean = mean2; m2 = m22;",
        "    }",
        "  }",
        "}"]),
}


#: SS_OFF(contiguous offset, strided offset): which one the compiled variant uses
_SS_OFF = "\n".join(["#ifndef SS_OFF", "#ifdef SS_STRIDED", "#define SS_OFF(c, s) (s)", "#else",
                     "#define SS_OFF(c, s) (c)", "#endif", "#endif"])

_SIZEOF = {"bool": 1, "signed char": 1, "unsigned char": 1, "short": 2, "unsigned short": 2,
           "int": 4, "unsigned int": 4, "float": 4, "long long": 8, "unsigned long long": 8,
           "double": 8}
#: a chunk of this many bytes moves as one load / store of this type
_VECT = {16: "uint4", 8: "uint2", 4: "unsigned int", 2: "unsigned short", 1: "unsigned char"}


def _vector_store(ct: str, buf: str, off: str, V: int) -> List[str]:
    """Store the register chunk ``vo_<buf>`` (V elements of C type ``ct``) at ``buf[off]``
    in moves of at most 16 bytes (a float64 chunk of 4 is two 128-bit stores)."""
    size = _SIZEOF[ct] * V
    step = min(size, 16)
    vt = _VECT[step]
    per = step // _SIZEOF[ct]
    return ["*(%s*)&%s[%s + %d] = *(const %s*)&vo_%s[%d];" % (vt, buf, off, q * per, vt,
                                                              buf, q * per)
            if q else "*(%s*)&%s[%s] = *(const %s*)vo_%s;" % (vt, buf, off, vt, buf)
            for q in range(size // step)]


def _carry(axes: List[int], sizes: List[str]) -> str:
    """``c[last] += 1`` with the carry into earlier axes (the first one never wraps),
    written outside in: the last axis is tested first."""
    text = "++c%d;" % axes[0]
    for a, sz in zip(axes[1:], sizes[1:]):
        text = "if (++c%d == %s) { c%d = 0; %s }" % (a, sz, a, text)
    return text


def ceildiv_c(a: str, b: str) -> str:
    """C text of ``ceil(a / b)`` for non-negative ``a`` and positive ``b`` (C's ``/``
    truncates, so the Python spelling ``-(-a // b)`` is no ceiling there): the one place
    the kernels spell it.  A literal divisor folds its ``- 1`` (``(n + 31) / 32``)."""
    if b.isdigit():
        return "(%s + %d) / %s" % (a, int(b) - 1, b)
    return "(%s + %s - 1) / %s" % (a, b, b)


def _par(s: str) -> str:
    return "(%s)" % s if (" " in s and not (s.startswith("(") and _balanced(s[1:-1]))) else s


def _balanced(s: str) -> bool:
    d = 0
    for ch in s:
        d += ch == "("
        d -= ch == ")"
        if d < 0:
            return False
    return d == 0


_COORD = re.compile(r"\bc\d+\b")
_DECL = re.compile(r"const idx_t (c\d+) =")


def _uses_coords(decode: List[str], lines: List[str]) -> bool:
    """Does any line (other than a decode) read a coordinate that ``decode`` declares?"""
    declared = set(_DECL.findall("\n".join(decode)))
    used = set()
    for l in lines:
        if not _DECL.match(l.strip()):
            used |= set(_COORD.findall(l))
    return bool(declared & used)


def _fmt_shape(shape) -> str:
    return "[%s]" % ", ".join(format_expr(s) for s in shape)


def _short(dt) -> str:
    return dtype_short(dt)


def plan_program(ep) -> Plan:
    """The kernel plan of an ExportedProgram (no device, no CuPy needed)."""
    extra = [final for _, final in ep.mutation_pairs]
    return Planner(ep.graph, ep.constraints.ranges, extra, Emitter).run()
