"""``backend="cupy"``: fused, shape-polymorphic CUDA kernels driven from Python.

``compile_cupy(ep)`` plans the graph into fused kernels (``kernels.py``), writes their
CUDA C and a Python driver (``backend.py``) and returns a ``CompiledCupy``; none of this
needs CuPy or a device.  ``emulate.py`` runs the same driver and kernels on the CPU
(g++ with ``shim.h``) and checks them with ``nvcc --ptx``; ``nvrtc.py`` compiles them with
NVRTC, CuPy's compiler, without a device.
"""
from .backend import CompiledCupy, compile_cupy
from .kernels import Kernel, plan_program

__all__ = ["CompiledCupy", "compile_cupy", "Kernel", "plan_program"]
