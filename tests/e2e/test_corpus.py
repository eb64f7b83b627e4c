"""The corpus exports unmodified with a realistic dynamic spec, and module() and ep.compile()
equal eager NumPy on several sizes."""

import numpy as np
import pytest

import symshape as ss

from corpus.registry import PROGRAMS  # noqa: E402


def _same(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("prog", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_corpus_program_exports_and_matches_eager(prog):
    ep = ss.export(prog.fn, prog.make(**prog.export_at), dynamic_shapes=prog.spec)
    assert ep.range_constraints
    module, compiled = ep.module(), ep.compile()
    for sizes in prog.check_at:
        args = prog.make(**sizes)
        want = prog.fn(*args)
        _same(module(*args), want)
        _same(compiled(*args), want)
