"""Both directions for op shapes: the traced contract admits every input NumPy accepts
(``proofs/converse.py``), so an over-restrictive op rule fails its proof; the refusals the
engine still makes are listed, each still found refused."""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:          # proofs/ lives at the top of the repository
    sys.path.insert(0, ROOT)

import proofs  # noqa: E402
from proofs import converse  # noqa: E402
from proofs import op_shape_rules as OSR  # noqa: E402


def test_an_over_restrictive_op_rule_is_killed_by_the_converse(monkeypatch):
    """np.vstack(x) of an array's rows asking for two rows where NumPy needs one: every
    shape it admits is still NumPy's (the forward proof passes), only the converse fails."""
    from symshape.capture.ops import shape as SH
    from symshape.errors import UserError

    def two_rows(x):
        if x.ndim == 0 or not (x.shape[0] >= 2):
            raise UserError("need two rows")
    monkeypatch.setattr(SH, "_some_rows", two_rows)
    result = proofs.run_one("shape.vstack")
    assert not result.ok and "NumPy accepts an input the contract refuses" in result.message
    monkeypatch.setattr(OSR, "admits_numpy_inputs", lambda *a, **k: None)
    # the rows guard's text is also pinned (proofs/stack_every.py): not the forward shapes
    from proofs import stack_every
    monkeypatch.setattr(stack_every, "read_alike", lambda *a, **k: None)
    assert proofs.run_one("shape.vstack").ok, "the forward direction alone kills it"


def test_each_known_refusal_is_still_refused():
    for p in converse.REFUSED:
        converse.REFUSED[p] = 0
    for rule in ("linalg.contract", "select.partition",
                 "stats.histogram_bins"):
        assert proofs.run_one(rule).ok, rule
    stale = [p for p, n in converse.REFUSED.items() if n == 0]
    assert not stale, "known refusals no case needs any more (remove them): %s" % stale


# np.c_ with a 1-D operand was refused (axis 1 out of bounds) where NumPy stacks it as a
# column: this converse proof found it, and it holds now
def test_np_c_with_a_1d_operand_admits_what_numpy_accepts():
    def spec(P, ins, v):
        (n,), (n2, m) = ins
        return [(n, 1 + m)], [n == n2]
    assert np.c_[np.ones(4), np.ones((4, 3))].shape == (4, 4)
    OSR.check_shapes(OSR.program_of(lambda x, y: np.c_[np.sqrt(x), y], 2, 0),
               [((4,), {}), ((4, 3), {})], spec, "np.c_[1-D, 2-D]")
