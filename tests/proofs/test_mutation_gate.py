"""The mutation gate's own bookkeeping (``proofs/mutation.py``): the record it keeps, the
report written from it, the equivalence table.  cosmic-ray itself is not needed here."""
import json
import os

from proofs import mutation as M


def _outcome(target, old, new, outcome="survived"):
    diff = "--- mutation diff ---\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-    %s\n+    %s\n" % (
        old, new)
    return M.Outcome(target, "f", "core/Op", 1, outcome, diff)


def test_every_equivalence_names_a_target_and_gives_a_reason():
    names = {t.name for t in M.TARGETS}
    for key, why in M.EQUIVALENT.items():
        assert key[0] in names, key
        assert why and why != "_BISECT" and why.endswith("."), key


def test_the_report_counts_equivalent_survivors_out_and_timeouts_in(tmp_path):
    (old, new), why = next((k[1:3], v) for k, v in M.EQUIVALENT.items()
                           if k[0] == "decision")
    results = ([_outcome("decision", "a", "b", "killed")] * 17 +
               [_outcome("decision", "a", "b", "timeout")] +
               [_outcome("decision", old, new), _outcome("decision", "x = 1", "x = 2")])
    rec = {"decision": M.record(results, {"in_scope": 354, "run": 20, "draw": "test"})}
    path = tmp_path / "report.md"
    assert M.report(rec, str(path)) == (18, 19)
    text = path.read_text()
    assert "| decision | symshape/reasoning/decision.py | 354 | 20 (test) | 17 | 2 (1) | 0 | 1 | 94.7% |" \
        in text
    assert "**Kill rate: 18 of 19 non-equivalent mutants (94.7%)**" in text
    assert why in text and "x = 2" in text


def test_the_committed_record_reads_back_into_a_report(tmp_path):
    records = M.load_results()
    assert {k.partition("@")[0] for k in records} <= {t.name for t in M.TARGETS}
    killed, total = M.report(records, str(tmp_path / "r.md"))
    assert 0 < killed <= total
    with open(M.RESULTS) as f:
        assert json.load(f) == records
    assert os.path.exists(os.path.join(M.ROOT, "docs", "mutation_report.md"))


def test_a_further_draw_gets_its_row_and_the_draws_one_together(tmp_path):
    (old, new), why = next((k[1:3], v) for k, v in M.EQUIVALENT.items() if k[0] == "jit")
    first = [_outcome("jit", "a", "b", "killed")] * 9 + [_outcome("jit", old, new)]
    second = ([_outcome("jit", "a", "b", "killed")] * 4 + [_outcome("jit", old, new),
                                                            _outcome("jit", "y = 1", "y = 2")])
    records = {"jit": M.record(first, {"in_scope": 680, "run": 10, "draw": "d1"}),
               # two mutants of the second draw were in the first: a killed one, the survivor
               "jit@b": M.record(second, {"in_scope": 680, "run": 6, "draw": "d2",
                                          "overlap": 2})}
    path = tmp_path / "report.md"
    # each mutant once: 14 run, 2 survivors (1 equivalent), 12 killed of 13
    assert M.report(records, str(path)) == (12, 13)
    text = path.read_text()
    assert "| jit | codegen/jit.py | 680 | 10 (d1) | 9 | 1 (1) | 0 | 0 | 100.0% |" in text
    assert "| jit@b | codegen/jit.py | 680 | 6 (d2) | 4 | 2 (1) | 0 | 0 | 80.0% |" in text
    assert "| jit (all draws) | codegen/jit.py | - | 14 (the 2 draws, each mutant once) | 12 " \
        "| 2 (1) | - | - | 92.3% |" in text
    assert text.count(why) == 1 and "### jit `f` line 1: core/Op (draw b)" in text
