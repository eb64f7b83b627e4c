"""Shared loop-nest code: the planner of fused groups and the target-independent core of
the kernel writers (CUDA in ``codegen/cuda``, numba in ``codegen/numba_backend``)."""
