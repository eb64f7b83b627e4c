"""The Z3 answer cache of the proofs (``proofs/z3cache.py``): a query answered once is read
back, a different query (another claim, another resource limit) is solved, ``unknown`` is
never stored, and ``off`` solves every time."""
import os
import sys

import z3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:          # proofs/ lives at the top of the repository
    sys.path.insert(0, ROOT)

from proofs import z3cache  # noqa: E402
from proofs.pyint import ProofFailure, prove  # noqa: E402


def _solver(*facts):
    s = z3.Solver()
    s.add(*facts)
    return s


def test_an_answer_is_read_back_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMSHAPE_PROOF_CACHE", str(tmp_path / "answers"))
    x = z3.Int("cache_x")
    before = z3cache.stats()
    assert z3cache.check(_solver(x > 2, x < 1), 10) == z3.unsat
    assert z3cache.check(_solver(x > 2, x < 1), 10) == z3.unsat
    assert z3cache.check(_solver(x > 2, x < 4), 10) == z3.sat       # another query
    assert z3cache.check(_solver(x > 2, x < 1), 11) == z3.unsat     # another limit
    after = z3cache.stats()
    assert after["hits"] - before["hits"] == 1
    assert after["misses"] - before["misses"] == 3
    assert len((tmp_path / "answers").read_text().splitlines()) == 3


def test_a_cached_sat_still_gives_its_counterexample(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMSHAPE_PROOF_CACHE", str(tmp_path / "answers"))
    x = z3.Int("cache_y")
    for _ in range(2):                       # the second failure reads the answer back
        try:
            prove(x > 3, x > 2)
        except ProofFailure as e:
            assert "counterexample: cache_y=3" in str(e)
        else:
            raise AssertionError("x > 2 does not imply x > 3")


def test_off_solves_every_time(monkeypatch):
    monkeypatch.setenv("SYMSHAPE_PROOF_CACHE", "off")
    x = z3.Int("cache_z")
    before = z3cache.stats()
    assert z3cache.check(_solver(x > 2, x < 1)) == z3.unsat
    assert z3cache.stats() == before
