"""``ss.symbolic_shape`` and ``ss.bounds``: symbolic sizes outside export, decided by the
same procedure export uses (exact ranges, every connected fact, the solver within budget)."""
import pytest

import symshape as ss
from symshape import int_oo


def test_the_documented_example():
    a, b = ss.symbolic_shape("a, b", constraints=("a >= b + 2", "b <= 64"))
    assert ss.bounds(a - b) == (2, int_oo)
    assert ss.bounds((a + 1) // 2) == (2, int_oo)
    assert (a >= b) is True
    with pytest.raises(ss.UserError, match=r"cannot decide `a >= 5`.*a >= b \+ 2"):
        a >= 5


def test_symbols_default_to_one_and_up():
    (n,) = ss.symbolic_shape("n")
    assert ss.bounds(n) == (1, int_oo)
    assert ss.bounds(n - n // 2) == (1, int_oo)
    assert ss.bounds((-n) // 2) == (-int_oo, -1)
    assert (n >= 1) is True and (n == 0) is False


@pytest.mark.parametrize("constraint,expected", [
    ("n // 100 == 30", (3000, 3099)),
    ("(n + 1) // 2 >= 2", (3, int_oo)),
    ("n // 4 <= 4", (1, 19)),
    ("n * n <= 100", (1, 10)),
    ("n // 2 == 3", (6, 7)),
    ("min(n, 5) == 5", (5, int_oo)),
    ("3 * n // 2 <= 12", (1, 8)),
    ("max(0, min(256, n + 1) - min(256, n)) >= 1", (1, 255)),
])
def test_single_constraints_give_exact_ranges(constraint, expected):
    (n,) = ss.symbolic_shape("n", constraints=(constraint,))
    assert ss.bounds(n) == expected


def test_multi_symbol_facts_min_max_and_products():
    a, b = ss.symbolic_shape("a, b", constraints=("a >= b + 2", "b <= 64"))
    assert ss.bounds(ss.sym_max(a, b) - a) == (0, 0)
    assert str(ss.sym_min(a, b)) == "b"
    x, y = ss.symbolic_shape("x, y", constraints=("x + y <= 100",))
    assert ss.bounds(x) == (1, 99) and ss.bounds(x + 2 * y) == (3, 199)
    p, q = ss.symbolic_shape("p, q", constraints=("p * q <= 28", "p >= 3"))
    assert ss.bounds(q) == (1, 9)
    u, v, w = ss.symbolic_shape("u, v, w", constraints=("u <= v", "v <= w", "w <= 30"))
    assert ss.bounds(w - u) == (0, 29)


def test_equality_constraints_substitute():
    a, b = ss.symbolic_shape("a, b", constraints=("a == 2*b",))
    assert (a == 2 * b) is True
    assert ss.bounds(a) == (2, int_oo)
    assert (a % 2 == 0) is True


@pytest.mark.parametrize("constraints,match", [
    (("a >= ",), "not a comparison"),
    (("a + c >= 2",), "names 'c'"),
    (("a ** 2 <= 4",), "not a size expression"),
    (("a >= 5", "a <= 3"), "contradicts|admit no values"),
    (("a // 0 >= 1",), "divides by zero"),
    (("a",), "not a comparison"),
    ((3,), "must be strings"),
])
def test_bad_constraints_are_user_errors(constraints, match):
    with pytest.raises(ss.UserError, match=match):
        ss.symbolic_shape("a, b", constraints=constraints)


def test_bad_names_are_user_errors():
    for names in ("", "a, a", "1x", ["a"]):
        with pytest.raises(ss.UserError):
            ss.symbolic_shape(names)


def test_a_size_has_no_concrete_value():
    (n,) = ss.symbolic_shape("n", constraints=("n <= 4",))
    assert repr(n + 1) == "n + 1"
    with pytest.raises(ss.UserError, match="no concrete value"):
        int(n)


def test_bounds_of_ints_and_wrong_types():
    assert ss.bounds(7) == (7, 7)
    with pytest.raises(ss.UserError):
        ss.bounds(2.5)


def test_bounds_are_remembered_until_the_environment_changes():
    a, b = ss.symbolic_shape("a, b", constraints=("a >= b + 2", "b <= 64"))
    assert ss.bounds(a - b) == (2, int_oo)
    env = a.env
    assert len(env._exact_cache) == 1
    assert ss.bounds(a - b) == (2, int_oo) and len(env._exact_cache) == 1


@pytest.mark.parametrize("names,constraints,query,expected", [
    ("a", (), lambda a: (-a) // 2, (-int_oo, -1)),
    ("n", (), lambda n: n - n // 2, (1, int_oo)),
    ("a, b, c", ("a <= b", "b <= c", "c <= 30"), lambda a, b, c: c - a, (0, 29)),
    ("a, b", ("a * b <= 64",), lambda a, b: a * b, (1, 64)),
    ("a, b", ("a >= b + 2", "b <= 64"), lambda a, b: a, (3, int_oo)),
    ("a, b", ("a * b <= 28", "a >= 3"), lambda a, b: b, (1, 9)),
])
def test_common_queries_are_answered_without_the_solver(names, constraints, query, expected,
                                                        monkeypatch):
    # sound cheap bounds (chains of facts, floor division written out) whose ends sample
    # points attain: exact, and no Z3 call on the way
    from symshape.reasoning import projection

    def no_solver(*a, **k):
        raise AssertionError("the solver was called")

    syms = ss.symbolic_shape(names, constraints=constraints)
    monkeypatch.setattr(projection, "project", no_solver)
    assert ss.bounds(query(*syms)) == expected


def test_modulo_is_not_taken_at_its_interval():
    # (2*n) % 5 for n in [1, 3] is 2, 4, 1: never 0
    (n,) = ss.symbolic_shape("n", constraints=("n <= 3",))
    assert ss.bounds((2 * n) % 5) == (1, 4)
    a, b = ss.symbolic_shape("a, b", constraints=("a <= 1", "b <= 6", "b % 2 == 0"))
    assert ss.bounds(b % 5 + a) == (2, 5)
