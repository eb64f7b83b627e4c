"""``python -m proofs --fork``: each proof in a process of its own gives the same verdicts,
with the child's CPU time and claim count."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:          # proofs/ lives at the top of the repository
    sys.path.insert(0, ROOT)

from proofs import isolated  # noqa: E402


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_proof_reports_its_result_and_cpu():
    (r,) = isolated.run_isolated(["signal.correlate"])
    assert r.ok and r.rule == "signal.correlate" and r.code_claims > 0 and r.cpu > 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_failing_forked_proof_fails():
    import proofs

    def boom():
        raise proofs.ProofFailure("planted")
    old = proofs.PROOFS["creation.linspace"]
    proofs.PROOFS["creation.linspace"] = boom        # the child inherits the change
    try:
        (r,) = isolated.run_isolated(["creation.linspace"])
    finally:
        proofs.PROOFS["creation.linspace"] = old
    assert not r.ok and "planted" in r.message
