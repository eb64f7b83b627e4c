"""Pointwise kernels: a grid-stride loop over the domain writing every root, and its
SS_VEC variant (``vec`` adjacent elements per thread, 128-bit loads and stores)."""
from __future__ import annotations

from typing import List, Optional


from . import cops
from .cops import STORAGE
from .ctext import SIZEOF, VECT, carry, uses_coords
from .record import Kernel
from ..fusion import numel


#: the thread's first element of a grid-stride loop
FIRST = "((idx_t)blockIdx.x * (idx_t)blockDim.x + (idx_t)threadIdx.x)"


class PointwiseKernel:
    """The pointwise kernel of a group (a part of ``CudaEmitter``)."""

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
        self.vec_bufs = {}
        self.vec_mode = False
        stores = [(n, self.value(n, self.dom)) for n in spec.outs()]
        if written is None:
            return None
        N = numel(spec.shape)
        nsz = self.size(N)
        self.index_exprs.append(N)
        out_names = self.out_names
        decode = self._decode_lines("i", list(range(self.nd)), "t")
        body = self.body + ["%s[i] = %s;" % (out_names[n], cops.store_expr(v, n.dtype))
                            for n, v in stores]
        coords = uses_coords(decode, body)
        # the vector variant's scalar tail (fewer than ``vec`` elements, once per call)
        tail = ["  " + l for l in (decode if coords else []) + body]
        widths = [STORAGE[n.dtype.name] for n in spec.outs()] + list(self.vec_bufs.values())
        V = 16 // max(SIZEOF[t] for t in widths)
        vloop = self._vector_loop(V, nsz, decode, tail)
        # the scalar (and strided) variant: coordinates decoded once per thread, stepped
        # by the grid stride with one compare and subtract per axis
        loop = self._grid_coords(FIRST, "(idx_t)blockDim.x * (idx_t)gridDim.x", "c") \
            if coords else []
        loop += ["for (idx_t i = %s; i < %s; i += (idx_t)blockDim.x * (idx_t)gridDim.x) {"
                 % (FIRST, nsz)]
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

    def _vector_loop(self, V: int, nsz: str, decode: List[str], tail: List[str]
                     ) -> List[str]:
        """The SS_VEC variant: chunks of ``V`` elements per thread, the same values with
        loads at ``i`` read from registers; ``tail`` covers the last elements."""
        out_names = self.out_names
        self.memo, self.body, self.vec_mode = {}, [], True
        vstores = [(n, self.value(n, self.dom)) for n in self.spec.outs()]
        self.vec_mode = False
        vbody = self.body + ["vo_%s[ss_v] = %s;" % (out_names[n], cops.store_expr(v, n.dtype))
                             for n, v in vstores]
        vcoords = uses_coords(decode, vbody)
        vstride = "(idx_t)blockDim.x * (idx_t)gridDim.x * %d" % V
        vloop = ["#ifdef SS_VEC"]
        if vcoords:
            # the chunk's first coordinates: decoded once per thread, then stepped by the
            # grid stride with carries (no divide or modulo inside the loop)
            vloop += self._grid_coords("%s * %d" % (FIRST, V), vstride, "b")
        vloop += [
            "for (idx_t i0 = %s * %d; i0 < %s; i0 += %s) {" % (FIRST, V, nsz, vstride),
            "  if (i0 + %d <= %s) {" % (V, nsz)]
        for buf, ct in self.vec_bufs.items():
            vloop.append("    __align__(16) %s vb_%s[%d];" % (ct, buf, V))
            vloop.append("    *(%s*)vb_%s = *(const %s*)(%s + i0);" % (
                VECT[SIZEOF[ct] * V], buf, VECT[SIZEOF[ct] * V], buf))
        for n, _ in vstores:
            ct = STORAGE[n.dtype.name]
            vloop.append("    __align__(16) %s vo_%s[%d];" % (ct, out_names[n], V))
        step = []
        if vcoords:
            axes = self._real_axes()
            vloop += ["    " + " ".join("idx_t c%d = b%d;" % (a, a) for a in axes)]
            step = [carry(axes, [self.size(self.spec.shape[a]) for a in axes])]
        vloop += ["    #pragma unroll", "    for (int ss_v = 0; ss_v < %d; ss_v++) {" % V,
                  "      const idx_t i = i0 + ss_v;"]
        vloop += ["      " + l for l in vbody + step]
        vloop.append("    }")
        for n, _ in vstores:
            vt = VECT[SIZEOF[STORAGE[n.dtype.name]] * V]
            vloop.append("    *(%s*)(%s + i0) = *(const %s*)vo_%s;" % (
                vt, out_names[n], vt, out_names[n]))
        vloop += ["  } else {",
                  "    for (idx_t i = i0; i < %s; i++) {" % nsz]
        vloop += ["    " + l for l in tail]
        vloop += ["    }", "  }"]
        if vcoords:
            vloop += ["  " + l for l in self._grid_step("b")]
        return vloop + ["}", "#else"]

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

