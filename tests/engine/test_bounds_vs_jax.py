"""The bounds corpus of benchmarks/bounds_vs_jax.py in CI, without JAX: for every query
symshape's answer (``ss.bounds`` or a decided comparison) is never wrong (no feasible point
of a brute-force window lies beyond a bound or contradicts a decision) and never looser than
JAX's answer recorded in benchmarks/bounds_jax_answers.json; on every query class symshape
is strictly tighter than JAX on at least one query."""
from repo_paths import REPO
import importlib.util
import pathlib

import pytest

_PATH = pathlib.Path(REPO) / "benchmarks" / "bounds_vs_jax.py"
_spec = importlib.util.spec_from_file_location("bounds_vs_jax", _PATH)
bvj = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bvj)

RECORDED = bvj.load_jax_answers()


def _vs_jax(q, ours):
    theirs = RECORDED[q.key]
    if theirs == "error":
        theirs = None if q.is_comparison else (None, None)
    if q.is_comparison:
        return (bvj.compare_decision(ours, theirs),)
    return bvj.compare_bounds(ours, theirs)


def test_every_query_has_a_recorded_jax_answer():
    assert set(RECORDED) == {q.key for q in bvj.CORPUS}


@pytest.mark.parametrize("q", bvj.CORPUS, ids=lambda q: q.key)
def test_never_wrong_and_never_looser_than_jax(q):
    ours = bvj.ask_symshape(q)
    assert not bvj.wrong(q, ours), "symshape's %s is contradicted by a point" % (ours,)
    assert min(_vs_jax(q, ours)) >= 0, "looser than JAX's %s" % (RECORDED[q.key],)


def test_strictly_tighter_than_jax_on_every_class():
    tighter = {}
    for q in bvj.CORPUS:
        tighter[q.cls] = tighter.get(q.cls, False) or max(_vs_jax(q, bvj.ask_symshape(q))) > 0
    assert all(tighter.values()), sorted(c for c, t in tighter.items() if not t)
