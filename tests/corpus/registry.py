"""Every corpus program with a realistic dynamic spec and the inputs to check it on.

``PROGRAMS`` lists ``Program`` records: the entry point exactly as its module defines it, a
function making example arguments for given sizes, the ``dynamic_shapes`` spec, the sizes
the export sees and the sizes it is checked on.  The test suite (tests/e2e/test_corpus.py) and
the benchmark (benchmarks/corpus.py) both read this table."""
from typing import Any, Callable, Dict, List, NamedTuple, Tuple

import numpy as np

import symshape as ss

from . import closures, cnn, gpt2, llama, mlp_bn, pca, rnn

A = ss.Dim.AUTO


class Program(NamedTuple):
    name: str
    fn: Callable
    make: Callable[..., Tuple[Any, ...]]       # sizes -> example arguments
    spec: Any
    export_at: Dict[str, int]
    check_at: List[Dict[str, int]]
    bench_at: Dict[str, int]                   # a realistic size for the benchmark


def _rng(seed=0):
    return np.random.default_rng(seed)


_llama = llama.Llama(max_batch=8, max_seq=256)
_cnn_params = cnn.init_params(hw=16)
_mlp_eval = mlp_bn.MLP((32, 64, 48, 10)).train(False)


def _tokens(batch, seq, vocab=50, seed=0):
    return _rng(seed).integers(0, vocab, size=(batch, seq))


PROGRAMS: List[Program] = [
    Program("gpt2 forward (params dict)", gpt2.gpt2,
            lambda seq: (_tokens(1, seq, gpt2.VOCAB)[0],), {"inputs": (ss.Dim("seq", max=gpt2.N_CTX),)},
            {"seq": 7}, [{"seq": s} for s in (2, 5, 9, 16, 40)], {"seq": 40}),
    Program("llama prefill (class, KV cache)", _llama.forward,
            lambda batch, seq: (_tokens(batch, seq), 0),
            {"tokens": (ss.Dim("batch", max=8), ss.Dim("seq", max=256)), "start_pos": None},
            {"batch": 2, "seq": 6}, [{"batch": b, "seq": s} for b, s in
                                     ((2, 3), (2, 8), (4, 17), (8, 32), (3, 64))],
            {"batch": 8, "seq": 128}),
    Program("rnn forward (class, loop over steps)", rnn.rnn.forward,
            lambda batch: (_rng(1).standard_normal((batch, 5, 6)),), {"xs": (A, None, None)},
            {"batch": 3}, [{"batch": b} for b in (2, 4, 9, 33)], {"batch": 256}),
    Program("gru cell (params dict in an object)", rnn.gru,
            lambda batch: (_rng(2).standard_normal((batch, 6)), _rng(3).standard_normal((batch, 12))),
            {"x": (A, None), "h": (A, None)}, {"batch": 3}, [{"batch": b} for b in (2, 5, 64)],
            {"batch": 512}),
    Program("pca transform (functions, eigh)", pca.transform,
            lambda n: (_rng(4).standard_normal((n, 5)) @ np.diag([3.0, 2.0, 1.0, 0.5, 0.1]),),
            {"X": (A, None)}, {"n": 20}, [{"n": n} for n in (6, 20, 57, 200)], {"n": 20000}),
    Program("pca whiten", pca.whiten, lambda n: (_rng(5).standard_normal((n, 4)),),
            {"X": (A, None)}, {"n": 10}, [{"n": n} for n in (5, 11, 64)], {"n": 20000}),
    Program("standardize", pca.standardize, lambda n: (_rng(6).standard_normal((n, 4)),),
            {"X": (A, None)}, {"n": 10}, [{"n": n} for n in (2, 7, 100)], {"n": 100000}),
    Program("mlp (closure over weights)", closures.mlp,
            lambda batch: (_rng(7).standard_normal((batch, 8)),), {"x": (A, None)},
            {"batch": 4}, [{"batch": b} for b in (2, 3, 17, 128)], {"batch": 4096}),
    Program("classifier loss (module globals)", closures.classifier_loss,
            lambda batch: (_rng(8).standard_normal((batch, 8)), _rng(9).integers(0, 5, batch)),
            {"x": (A, None), "labels": (A,)}, {"batch": 6}, [{"batch": b} for b in (2, 9, 50)],
            {"batch": 8192}),
    Program("cnn (im2col by fancy indexing)", cnn.cnn,
            lambda batch: (_rng(10).standard_normal((batch, 3, 16, 16)), _cnn_params),
            {"x": (ss.Dim("batch", min=1), None, None, None), "params": None},
            {"batch": 2}, [{"batch": b} for b in (1, 3, 8)], {"batch": 8}),
    Program("mlp + batch norm, eval (layer classes)", _mlp_eval.forward,
            lambda batch: (_rng(11).standard_normal((batch, 32)),), {"x": (A, None)},
            {"batch": 4}, [{"batch": b} for b in (2, 7, 128)], {"batch": 512}),
]
