"""Tests written for the survivors of the mutation gate on the JIT's dispatcher
(``python -m proofs.mutation --only jit``): each pins a behaviour of codegen/jit.py that
the other JIT tests left open."""
import warnings

import numpy as np
import pytest

import symshape as ss


def test_a_variant_describes_itself():
    cf = ss.compile(lambda x: x * 2.0)
    cf(np.ones(3))
    text = repr(cf.variants[0])
    assert text.startswith("<variant 0: x: ") and "; 1 calls; compiled in " in text


def bump(a, b):
    a += 1.0
    return b.sum()


def test_inputs_sharing_a_written_input_run_eagerly_with_one_warning():
    cf = ss.compile(bump)
    cf(np.ones(3), np.ones(3))
    buf = np.ones(3)
    with pytest.warns(ss.CompileFallbackWarning, match=r"ss\.compile\(bump\): a call passed "
                                                       r"arrays that share memory"):
        got = cf(buf, buf)
    same = np.ones(3)
    assert got == bump(same, same) == 6.0          # eager: b sees the write through a
    assert np.array_equal(buf, same)


def logs(x):
    return np.log(x) * 2.0


def test_a_numpy_warning_made_an_error_is_raised_as_eager_raises_it():
    cf = ss.compile(logs)
    cf(np.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning):
            cf(-np.ones(3))
        with pytest.raises(RuntimeWarning):
            logs(-np.ones(3))


def test_a_size_one_call_on_a_dynamic_axis_says_why_it_takes_size_one():
    cf = ss.compile(lambda x: x * 2.0)
    for n in (4, 5, 1):
        cf(np.ones(n))
    assert any(r.endswith("nothing in the program depends on size 1 on x.shape[0], so this "
                          "variant takes sizes >= 1 there") for r in cf.recompile_reasons), \
        cf.recompile_reasons


def test_the_shared_inputs_warning_points_at_the_caller():
    cf = ss.compile(bump)
    cf(np.ones(3), np.ones(3))
    buf = np.ones(3)
    with pytest.warns(ss.CompileFallbackWarning) as caught:
        cf(buf, buf)
    assert caught[0].filename == __file__


def nested(xs):
    return xs[0] + xs[1][0] * len(xs[1])


def test_the_layout_of_nested_containers_is_guarded():
    cf = ss.compile(nested)
    a = np.ones(3)
    assert np.array_equal(cf([a, (a, a)]), nested([a, (a, a)]))
    assert np.array_equal(cf([a, (a, a, a)]), nested([a, (a, a, a)]))
    assert any("len(xs[1]) == 2 (got 3)" in r for r in cf.recompile_reasons), \
        cf.recompile_reasons


class NotReallyCallable:
    __call__ = 5                        # callable() says yes; no signature to read


def test_a_callable_without_a_signature_is_a_user_error():
    with pytest.raises(ss.UserError, match=r"cannot read the signature of"):
        ss.compile(NotReallyCallable())


def with_break(x):
    y = x * 2
    if y.sum() > 0:
        y = y + 1
    return y - 3


def test_a_segment_at_its_cache_limit_is_named_by_its_lines():
    cf = ss.compile(with_break, dynamic=False, cache_size_limit=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in (2, 3, 4, 5):
            assert np.array_equal(cf(np.ones(n)), with_break(np.ones(n)))
    texts = [str(w.message) for w in caught if issubclass(w.category, ss.RecompileLimitWarning)]
    assert texts and texts[0].startswith("ss.compile(with_break, segment (lines ")


def test_a_lowered_cache_limit_runs_new_inputs_eagerly():
    cf = ss.compile(lambda x: x * 2.0, dynamic=False)
    for n in (2, 3, 4):
        cf(np.ones(n))
    cf.cache_size_limit = 2
    with pytest.warns(ss.RecompileLimitWarning):
        assert np.array_equal(cf(np.ones(5)), np.full(5, 2.0))
    assert len(cf.variants) == 3 and cf.eager_calls == 1


def protected(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def test_a_function_with_try_counts_its_first_call_once():
    cf = ss.compile(protected)
    cf(np.ones(3))
    assert cf.mode == "split" and cf.break_calls == 1
    cf(np.ones(3))
    assert cf.break_calls == 2


def prints(x):
    print("", end="")
    return x + 1.0


def test_the_fallback_warning_of_the_function_itself_names_no_part_of_it():
    cf = ss.compile(prints)
    with pytest.warns(ss.CompileFallbackWarning) as got:
        cf(np.ones(3))
    text = str(got[0].message)
    assert text.startswith("ss.compile(prints) could not compile the whole function: "), text
    assert "call to print" in text and text.endswith("fullgraph=True turns this into an error.")
    assert " (in its " not in text


def test_verify_follows_the_argument_else_the_environment(monkeypatch):
    monkeypatch.delenv("SYMSHAPE_VERIFY", raising=False)
    assert ss.compile(logs).verify is False
    assert ss.compile(logs, verify=True).verify is True
    monkeypatch.setenv("SYMSHAPE_VERIFY", "1")
    assert ss.compile(logs).verify is True
    assert ss.compile(logs, verify=False).verify is False
