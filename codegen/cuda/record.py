"""``Kernel``: one generated CUDA kernel and how the driver launches it."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

from symshape.capture.ir import Node


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

