"""``backend="numba"``: each fused group of the graph as one loop nest compiled by numba.

``compile_numba(ep)`` plans the graph into fused groups with the planner the CuPy backend
uses too (``codegen/loopnest``; ``kernels.py`` is this backend's emitter), writes each as a
numba function with every size an argument, and a Python driver that runs the rest (``matmul`` through NumPy's BLAS, any op without a numba
form as eager NumPy calls it) between them (``backend.py``).  Reductions along the
innermost axes fuse with their neighbours (softmax and layer norm are one kernel each); a
reduction over a leading axis (a batch norm's statistics) stays NumPy's call, which adds
whole rows at a time where a kernel would walk each column with a row's stride.  Kernels
are compiled on first use and cached on disk, so another process does not compile them
again; a large kernel's parallel variant runs only where measured faster and never while
the machine is busy.

Accuracy contract (``tests/codegen/numba/test_numba_backend.py`` checks it against eager NumPy):

* integer and boolean results are exact (NumPy's wrapping; integer division, remainder,
  shifts and float -> integer casts run as NumPy's calls);
* ``+ - * /``, ``sqrt``, comparisons, ``maximum`` / ``minimum`` (NaN-propagating), ``where``,
  ``clip`` and casts round exactly as NumPy's do, so an elementwise chain of them is
  bit-identical to eager NumPy, except that a small integer power ``x ** k``
  (k in -1..4) is computed as multiplies (``x * x * x``: within 2 ulps of ``np.power``);
* math functions (``log``, ``sin``, ...) call the C library's; float32 ``exp`` and ``tanh``
  are ``vmath.py``'s (arithmetic that vectorizes); each may differ from NumPy's SIMD
  loops by ``ULPS_MATH`` ulps (normal results); an elementwise result is within
  ``ULPS_MATH`` ulps per math function of its chain, plus what the chain's later
  operations amplify (a subtraction of nearly equal values amplifies any difference);
* sums and means are the same terms added in another order (per row, up to ``LANES``
  running sums in a vector, then a tree over them): within ``(n - 1) * eps * sum(|x_i|)``
  of the exact sum, as NumPy's pairwise sum is, so within twice that of NumPy's;
  ``max`` / ``min`` / ``any`` / ``all`` are exact.
"""
from .backend import CompiledNumba, INSTALL_HINT, compile_numba, require_numba
from .kernels import LANES, NumbaKernel, plan_program

#: the most ulps one math function of a kernel differs from NumPy's (measured over 8M
#: float32 values in 0.1 .. 40 standard deviations: libm's log 4, tanh 3, exp / expm1 /
#: log1p 2, sin 1, sqrt 0; vmath's exp 3, tanh 2)
ULPS_MATH = 4

__all__ = ["CompiledNumba", "INSTALL_HINT", "LANES", "NumbaKernel", "ULPS_MATH",
           "compile_numba", "plan_program", "require_numba"]
