"""symshape quickstart: export a NumPy model with dynamic shapes, then see a violated spec
and the fixes symshape suggests (and verified) for it.

    python examples/quickstart.py
"""
import numpy as np

import symshape as ss
from symshape import Dim

W = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)


def head(x, mask):
    """x: (batch, tokens, 16); mask: (batch, tokens)."""
    h = np.maximum(x @ W, 0)                      # (batch, tokens, 8)
    h = h * mask[:, :, None]
    pooled = h.sum(axis=1) / mask.sum(axis=1, keepdims=True)
    return pooled[:, :4]


x = np.ones((4, 12, 16), np.float32)
mask = np.ones((4, 12), np.float32)

print("== 1. export with Dim.AUTO: symshape discovers the relations ==")
ep = ss.export(head, (x, mask), dynamic_shapes={"x": (Dim.AUTO, Dim.AUTO, None),
                                                 "mask": (Dim.AUTO, Dim.AUTO)})
print(ep)
print("input_shapes:", ep.input_shapes)
out = ep.module()(np.ones((2, 30, 16), np.float32), np.ones((2, 30), np.float32))
print("ran on batch 2, 30 tokens ->", out.shape)
try:
    ep.module()(np.ones((2, 30, 16), np.float32), np.ones((2, 31), np.float32))
except ss.UserError as e:
    print("rejected:", e)

print()
print("== 2. a spec that promises too much: named Dims without their relation ==")
batch, tokens, mbatch, mtokens = ss.dims("batch", "tokens", "mbatch", "mtokens", max=64)
spec = {"x": (batch, tokens, None), "mask": (mbatch, mtokens)}
try:
    ss.export(head, (x, mask), dynamic_shapes=spec)
except ss.ConstraintViolationError as e:
    print(e)
    for fix in e.suggested_fixes:
        spec = fix.apply(spec)
    ep = ss.export(head, (x, mask), dynamic_shapes=spec)
    print()
    print("after applying the fixes:", ep.range_constraints)
