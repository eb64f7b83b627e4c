"""A small model zoo for `symshape check`: plain NumPy models with declared exports.

* ``zoo.head:classify``  MLP classification head, declared in ``../pyproject.toml``
* ``zoo.attn:block``     single-head self-attention with a padding mask -- its spec is broken
* ``zoo.pool:pool``      conv-free pooling over windows of 4 steps (derived dim ``4*blocks``)
* ``zoo.mixer:mix``      token-mixing MLP block (``ss.dims``)
"""
