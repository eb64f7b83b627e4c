"""Shared loop-nest code: what the CUDA and numba kernel backends have in common.

A *target* (``codegen/cuda``: CUDA C, threads and warps; ``codegen/numba_backend``: Python
loop nests for numba, ``prange``) supplies only what differs: which nodes its kernels
translate (a ``classify.Target``) and an emitter, a ``values.LoopEmitter`` subclass that
spells sizes, loads, expressions and locals in its language and lays out its loops.

* ``plan.py``: the planner: fused groups (``KernelSpec``) and the steps between them;
* ``classify.py``: each node's class for a target, and the operands of elementwise ops;
* ``values.py``: the walk from a node to its value at coordinates (``LoopEmitter``);
* ``index.py``: coordinates as index expressions, through views and broadcasting;
* ``reductions.py``: reductions' structure (pairs one read of a row computes);
* ``sizes.py``: the program's size ranges, and index normalization decided by them.

Nothing here imports a target (``tests/project/test_codegen_layers.py``).
"""
