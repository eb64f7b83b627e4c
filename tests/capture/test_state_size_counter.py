"""A counter of a dynamic size (``self.count += x.shape[0]``) is replayed as arithmetic
with the run-time size, not frozen into a guard: ``module()``, ``ep.compile()``, a loaded
program and ``ss.compile`` count as eager Python does."""
import warnings

import numpy as np

import symshape as ss
from symshape import Dim


class Seen:
    def __init__(self):
        self.count = 0
        self.W = np.ones((3, 2))

    def __call__(self, x):
        self.count += x.shape[0]
        return x @ self.W


SIZES = (4, 5, 7)


def exported(m):
    return ss.export(m, (np.ones((4, 3)),), dynamic_shapes={"x": (Dim.AUTO, None)})


def test_module_and_compiled_program_count_run_time_sizes():
    for run in (lambda ep: ep.module(), lambda ep: ep.compile()):
        m = Seen()
        f = run(exported(m))
        for n in SIZES:
            f(np.ones((n, 3)))
        assert m.count == sum(SIZES)


def test_the_write_reads_as_arithmetic(tmp_path):
    m = Seen()
    ep = exported(m)
    assert "self.count = (self.count + s0)" in str(ep)
    ss.save(ep, tmp_path / "p.json")
    loaded = ss.load(tmp_path / "p.json")
    run = loaded.module()
    for n in SIZES:
        run(np.ones((n, 3)))
    assert loaded.state_program.scope is not None


def test_compile_counts_and_recompiles_for_the_shape_only():
    m, e = Seen(), Seen()
    cf = ss.compile(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in SIZES + (9, 11):
            cf(np.ones((n, 3)))
            e(np.ones((n, 3)))
    assert m.count == e.count
    assert len(cf.variants) <= 2
    assert not any("count" in r for r in cf.recompile_reasons)
