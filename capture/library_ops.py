"""Functions of NumPy libraries that tracing cannot go through, run as written when the
program runs: scikit-learn's finiteness check and its k-means label assignment.

scikit-learn's ``_assert_all_finite`` (what ``check_array`` calls on every input) sums the
array first and checks it element by element only when the sum is not finite: a branch on
values whose side that goes on (a finite sum) does not say whether the other raises (an
overflowing sum of finite values does not), so it is no check the tracer can read from the
bytecode (``capture/valuechecks.py``).  It only validates (it returns None or raises), so
its call on a traced array is one op of the program that calls scikit-learn's own function
on the run's array: the same exceptions, with the same messages, under the configuration
in force when the program runs (``sklearn.config_context(assume_finite=True)`` skips it, as
it does eagerly).  The op returns nothing the program uses and is kept as an effect.

scikit-learn's ``_labels_inertia_threadpool_limit`` (``KMeans.predict`` / ``score``) assigns
each sample its nearest centre in Cython (a fused function no traced array can enter): one
op of the program calling it on the run's arrays, whose labels are scikit-learn's own,
with the label array's shape (the samples) and dtype (int32) as its rule.

The rows are SciPy-like rows of ``capture/scipy_ops.py``: registered when their module is
loaded, their module's names routed while a trace runs.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .custom import custom_op
from .tracer import TracedArray


def sklearn_assert_all_finite(fn: Callable) -> Callable:
    """The handler of ``sklearn.utils.validation._assert_all_finite`` (``fn``)."""
    def run(X, allow_nan=False, msg_dtype=None, estimator_name=None, input_name=""):
        fn(X, allow_nan=allow_nan, msg_dtype=msg_dtype, estimator_name=estimator_name,
           input_name=input_name)
        return np.ones((), dtype=bool)

    def fake(X, allow_nan=False, msg_dtype=None, estimator_name=None, input_name=""):
        return np.ones((), dtype=bool, like=X)

    op = custom_op("sklearn::assert_all_finite")(run)
    op.register_fake(fake)

    def handler(t, X, allow_nan=False, msg_dtype=None, estimator_name=None, input_name=""):
        if type(X) is not TracedArray:
            return fn(X, allow_nan=allow_nan, msg_dtype=msg_dtype,
                      estimator_name=estimator_name, input_name=input_name)
        done = op(X, allow_nan=allow_nan, msg_dtype=msg_dtype,
                  estimator_name=estimator_name, input_name=input_name)
        done.node.meta["effect"] = True     # used by nothing: kept, in program order
        return None
    return handler


def sklearn_kmeans_labels(fn: Callable) -> Callable:
    """The handler of ``sklearn.cluster._kmeans._labels_inertia_threadpool_limit``
    (``fn``): the labels (int32, one per sample) and, when asked, the inertia (a float)."""
    def run(X, sample_weight, centers, n_threads=1, return_inertia=True):
        out = fn(X, sample_weight, centers, n_threads=n_threads,
                 return_inertia=return_inertia)
        if return_inertia:
            return out[0], np.asarray(out[1], dtype=np.float64)
        return out

    def fake(X, sample_weight, centers, n_threads=1, return_inertia=True):
        labels = np.zeros((X.shape[0],), dtype=np.int32, like=X)
        if return_inertia:
            return labels, np.zeros((), dtype=np.float64, like=X)
        return labels

    op = custom_op("sklearn::kmeans_labels_inertia")(run)
    op.register_fake(fake)

    def handler(t, X, sample_weight, centers, n_threads=1, return_inertia=True):
        if type(X) is not TracedArray:
            return fn(X, sample_weight, centers, n_threads=n_threads,
                      return_inertia=return_inertia)
        out = op(X, sample_weight, centers, n_threads=n_threads,
                 return_inertia=return_inertia)
        return tuple(out) if return_inertia else out
    return handler
