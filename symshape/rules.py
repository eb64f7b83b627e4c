"""Every rule the engine relies on, one line of mathematics each.

The engine is only as sound as these rules: the rewrites of the expression layer, the
normal forms of relations, the value-range transfer functions, the range folding and the
equation solver of the shape environment, the Z3 encoding, and each op's shape rule.  Each
entry names the code that applies it (``where``, as ``module:function``) and states it for
Python integers (``//`` floors, ``%`` takes the divisor's sign; ``Min`` / ``Max`` as in
``expr.py``; ranges may have ``-int_oo`` / ``int_oo`` ends).

Every rule has exactly one Z3 proof in ``proofs/`` (registered with
``@proves("<name>")``), built from the code's own output (``proofs/code.py``: the ``where``
function run on symbolic inputs, its result translated to Z3); ``python -m proofs`` runs them
all, and ``tests/proofs/test_proofs.py`` fails when a rule has no proof, a proof names no rule, a
proof makes no claim on the code's output or a vacuous one, or a ``return`` of a rewrite
function in ``expr`` / ``relations`` / ``ranges`` is reached by no proof.  Adding a rule to the
engine means adding a row here and its proof there.
"""
from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple, TypeVar


class Rule(NamedTuple):
    name: str          # "<family>.<rule>", the key proofs register against
    where: str         # module:function that applies the rule
    statement: str     # the rule as one line of mathematics


def _r(name: str, where: str, statement: str) -> Rule:
    return Rule(name, where, statement)


F = TypeVar("F", bound=Callable)

#: rule name -> the functions tagged with it (``@rule``), as they are defined
TAGGED: Dict[str, List[Callable]] = {}


def rule(*names: str) -> Callable[[F], F]:
    """Tag the function that applies the named rules (``@rule("solve.two_var")``).

    The function is returned unchanged (no call overhead); it gains ``__rules__``, the
    names it applies, and joins ``TAGGED``.  ``tests/proofs/test_proofs.py`` checks that each
    catalogue entry's ``where`` names a function carrying its tag and that every tagged
    function is the ``where`` of each rule it names."""
    def tag(fn: F) -> F:
        fn.__rules__ = tuple(getattr(fn, "__rules__", ())) + names  # type: ignore[attr-defined]
        for n in names:
            TAGGED.setdefault(n, []).append(fn)
        return fn
    return tag


EXPR = "symshape.algebra.expr"
REL = "symshape.algebra.relations"
RNG = "symshape.algebra.ranges"
SIMP = "symshape.algebra.simplify"
DEC = "symshape.reasoning.decision"
SOLVE = "symshape.reasoning.solver"
Z3B = "symshape.reasoning.z3bridge"
OPS = "capture.ops"

RULES: List[Rule] = [
    # ---------------------------------------------------------------- expr.py: floordiv
    _r("floordiv.by_one", EXPR + ":floordiv", "a // 1 == a"),
    _r("floordiv.neg_divisor", EXPR + ":floordiv", "a // b == (-a) // (-b) for b < 0"),
    _r("floordiv.coeff_split", EXPR + ":floordiv",
       "(b*q + r) // b == q + r // b for b > 0 (each coefficient c split as divmod(c, b))"),
    _r("floordiv.const_remainder", EXPR + ":floordiv",
       "(b*q + r) // b == q for b > 0 and 0 <= r < b (no term left after the split)"),
    _r("floordiv.nested", EXPR + ":floordiv", "(x // c) // b == x // (b*c) for b, c > 0"),
    _r("floordiv.self", EXPR + ":floordiv", "a // a == 1 for a != 0"),
    _r("floordiv.zero", EXPR + ":floordiv", "0 // b == 0 for b != 0"),
    _r("floordiv.exact_quotient", EXPR + ":_exact_quotient",
       "(m*q) // m == q for m != 0 (a monomial m dividing every term exactly)"),
    _r("floordiv.common_gcd", EXPR + ":floordiv",
       "(g*x) // (g*m) == x // m for g > 0, m > 0 (g divides every coefficient, the "
       "constant and the divisor)"),
    _r("floordiv.common_factor", EXPR + ":floordiv",
       "(m*x) // (m*y) == x // y for m != 0 (an atom m divides every term of both)"),
    _r("floordiv.display_fold", EXPR + ":_fold_const_into_floordiv",
       "c + r // b == (r + c*b) // b for b > 0 (printing only)"),
    _r("print.python_source", EXPR + ":format_py",
       "the Python text format_py(e) evaluates to e at every point where e is defined "
       "(Python's // and %, product divisors bracketed)"),
    # ---------------------------------------------------------------- expr.py: mod
    _r("mod.by_one", EXPR + ":mod", "a % 1 == 0"),
    _r("mod.neg_divisor", EXPR + ":mod", "a % b == -((-a) % (-b)) for b < 0"),
    _r("mod.coeff_reduce", EXPR + ":mod",
       "(b*q + r) % b == r % b for b > 0 (coefficients and constant reduced mod b)"),
    _r("mod.common_gcd", EXPR + ":mod",
       "(g*x) % (g*m) == g*(x % m) for g > 0, m > 0 (after reducing the coefficients mod g*m)"),
    _r("mod.common_factor", EXPR + ":mod",
       "(m*x) % (m*y) == m*(x % y) for m != 0 (an atom m divides every term of both)"),
    _r("mod.nested", EXPR + ":mod", "(x % c) % b == x % b for b > 0 and b | c"),
    _r("mod.self", EXPR + ":mod", "a % a == 0 for a != 0"),
    _r("mod.zero", EXPR + ":mod", "0 % b == 0 for b != 0"),
    _r("mod.exact_quotient", EXPR + ":mod", "(m*q) % m == 0 for m != 0"),
    # ---------------------------------------------------------------- expr.py: ceildiv, Min/Max
    _r("ceildiv.def", EXPR + ":ceildiv",
       "q = ceildiv(a, b) == ceil(a/b), spelled (a + b - 1) // b for an int b > 0 and "
       "-((-a) // b) otherwise: b*q >= a > b*(q - 1) for b > 0, b*q <= a < b*(q - 1) for b < 0"),
    _r("minmax.flatten", EXPR + ":_minmax",
       "Min(Min(a, b), c) == Min(a, b, c) == Min(c, b, a) (any order; Max likewise)"),
    _r("minmax.const_merge", EXPR + ":_minmax",
       "Min(x, c1, c2) == Min(x, min(c1, c2)) for constants c1, c2 (Max with max)"),
    _r("minmax.offset_dominance", EXPR + ":_minmax",
       "Min(y + d, y) == (y + d if d <= 0 else y), Max(y + d, y) == (y + d if d >= 0 else y) "
       "for a constant d (duplicates: d == 0)"),
    # ---------------------------------------------------------------- relations.py
    _r("rel.eq_gcd", REL + ":make",
       "g*e + k == 0 <=> e + k/g == 0 when g | k, and g*e + k != 0 when g does not divide k "
       "(g > 0; != likewise)"),
    _r("rel.eq_sign", REL + ":make", "e == 0 <=> -e == 0 and e != 0 <=> -e != 0"),
    _r("rel.le_gcd_ceil", REL + ":make",
       "g*e + k <= 0 <=> e + ceil(k/g) <= 0 for g > 0, with ceil(k/g) == -((-k) // g)"),
    _r("rel.lt_as_le", REL + ":lt",
       "a < b <=> a - b + 1 <= 0; a > b <=> b - a + 1 <= 0; a >= b <=> b - a <= 0"),
    _r("rel.le_negate", REL + ":Rel.negate", "not (e <= 0) <=> -e + 1 <= 0"),
    # ---------------------------------------------------------------- ranges.py
    _r("range.add", RNG + ":vr_add",
       "x in [a, b], y in [c, d] => x + y in [a + c, b + d] (never int_oo - int_oo)"),
    _r("range.scale", RNG + ":vr_scale",
       "x in [a, b] => k*x in [k*a, k*b] for k >= 0 and in [k*b, k*a] for k < 0"),
    _r("range.mul", RNG + ":vr_mul",
       "x in [a, b], y in [c, d] => x*y in [min, max] of {a*c, a*d, b*c, b*d} "
       "(0 * int_oo == 0)"),
    _r("range.pow", RNG + ":vr_pow",
       "x in [a, b] => x**n in [a**n, b**n] for odd n; for even n in [0, max(a**n, b**n)] "
       "when a <= 0 <= b, else in [min, max] of {a**n, b**n} (n = 1..5); for n > 5 the code "
       "bounds x**5 * x**(n - 5) by range.mul"),
    _r("range.floordiv_pos", RNG + ":vr_floordiv",
       "x in [a, b], y in [c, d], c > 0 => x // y in [min, max] of _fdiv at the 4 corners"),
    _r("range.floordiv_neg", RNG + ":vr_floordiv",
       "x in [a, b], y in [c, d], d < 0 => x // y in [min, max] of _fdiv at the 4 corners"),
    _r("range.floordiv_straddle", RNG + ":vr_floordiv",
       "x in [a, b], y in [c, d] with c <= 0 <= d, y != 0 => x // y in the union of the "
       "ranges for y in [c, -1] and y in [1, d]"),
    _r("range.mod_nowrap", RNG + ":vr_mod",
       "x in [a, b] finite, m > 0, a // m == b // m => x % m in [a % m, b % m]"),
    _r("range.mod_pos", RNG + ":vr_mod",
       "x in [a, b], y in [c, d], c > 0 => x % y in [0, d - 1], and in [0, min(d - 1, b)] "
       "when a >= 0"),
    _r("range.mod_neg", RNG + ":vr_mod", "y in [c, d], d < 0 => x % y in [c + 1, 0]"),
    _r("range.mod_straddle", RNG + ":vr_mod",
       "y in [c, d], c <= 0 <= d, y != 0 => x % y in [min(c + 1, 0), max(d - 1, 0)]"),
    _r("range.min", RNG + ":vr_min",
       "x_i in [a_i, b_i] => min(x_i) in [min a_i, min b_i]"),
    _r("range.max", RNG + ":vr_max",
       "x_i in [a_i, b_i] => max(x_i) in [max a_i, max b_i]"),
    _r("range.factored", RNG + ":_bound_factored",
       "e == t*i + k, t in T, i in I => e in vr_mul(T, I) + k; the intersection of two "
       "ranges containing e contains e"),
    _r("range.bound", RNG + ":bound",
       "bound(e) composes the transfer functions over e's terms and atoms (_bound_term, "
       "bound_atom): every value of e with its symbols in their ranges lies in bound(e)"),
    # ---------------------------------------------------------------- simplify.py, decision.py
    _r("fold.minmax_dominance", EXPR + ":undominated",
       "Min(x, y, rest...) == Min(y, rest...) when x - y >= 0 on the ranges "
       "(Max: y - x >= 0); of two equal arguments the first is kept"),
    _r("fold.small_numerator", SIMP + ":fold_small_numerator",
       "0 <= x < k => x // k == 0 and x % k == x"),
    _r("fold.recombine_divmod", SIMP + ":recombine_divmod",
       "c*k*(r // k) + c*(r % k) == c*r for k != 0"),
    _r("fold.divmod_to_mod", SIMP + ":recombine_divmod",
       "c*r - c*k*(r // k) == c*(r % k) for k != 0 (L - 4*(L//4) is Mod(L, 4))"),
    _r("fold.push_minmax", SIMP + ":push_into_minmax",
       "r + Min(a, b) == Min(r + a, r + b), r - Min(a, b) == Max(r - a, r - b) "
       "(and dually for Max)"),
    _r("rel.strip_positive_factor", SIMP + ":strip_positive_factors",
       "b*e == 0 <=> e == 0, b*e != 0 <=> e != 0, b*e <= 0 <=> e <= 0 for a symbol b whose "
       "range has lower end >= 1"),
    _r("decide.by_range", DEC + ":decide_ranges",
       "e in [lo, hi]: hi <= 0 => e <= 0; lo > 0 => not e <= 0; lo == hi == 0 => e == 0; "
       "0 not in [lo, hi] => e != 0"),
    # _box_exact ends == / != early only for unit coefficients, where every integer in the
    # interval is attained (2*s0 + 3*s1 == 11 over s0, s1 >= 2 goes on to Z3 instead)
    _r("decide.box_exact", DEC + ":box_exact",
       "sum a_i*s_i + k over a box s_i in [l_i, h_i]: both ends of the interval bound are "
       "attained at corners, so an e <= 0 the bound leaves open is undecidable"),
    _r("decide.fact_sum", DEC + ":decide_by_fact_sums",
       "f_1 <= 0, ..., f_k <= 0 and e - f_1 - ... - f_k <= 0 on the ranges => e <= 0 "
       "(k <= 2; an equality f == 0 gives f <= 0 and -f <= 0)"),
    # ---------------------------------------------------------------- solver.py
    _r("solve.unit_substitution", SOLVE + ":solve_unit",
       "c*s + R == 0 <=> s == -c*R for c in {1, -1} and R free of s"),
    _r("solve.dispatch", SOLVE + ":learn",
       "after learn(g) (Min/Max equality, equation solver, range, residue split or fact: the "
       "first step that applies) the environment admits exactly its old points where g "
       "holds"),
    _r("solve.refresh_facts", SOLVE + ":refresh_facts",
       "after a range narrows or a symbol is replaced, the refreshed facts, ranges and "
       "replacements admit exactly the old points inside the new range / at the value"),
    _r("solve.le_to_range", SOLVE + ":le_to_range",
       "a*s + k <= 0 <=> s <= (-k) // a for a > 0, <=> s >= ceil(k / -a) for a < 0"),
    _r("solve.ne_to_range", SOLVE + ":ne_to_range",
       "a*s + k != 0 <=> s != (-k) // a when a | k (always true otherwise); "
       "s in [lo, hi] and s != lo <=> s in [lo + 1, hi] (at hi likewise)"),
    _r("solve.congruence", SOLVE + ":solve_congruence",
       "s % k == r (0 <= r < k), s in [lo, hi] <=> s == k*q + r for one q in "
       "[ceil((lo - r)/k), (hi - r)//k]; the hint of q is (hint - r)//k"),
    _r("solve.two_var", SOLVE + ":solve_two_var",
       "a*x + b*y + c == 0, gcd(a, b) == 1, (hx, hy) a solution, m = |b|: with x in its range, "
       "the solutions are exactly x = m*k + hx % m, y = (-a*x - c) // b (exact) for k in "
       "[ceil((lo - rx)/m), floor((hi - rx)/m)], the range given to k from x's range"),
    _r("solve.constrain_linear", SOLVE + ":constrain",
       "a*t + k in [lo, hi] <=> t in [ceil((lo - k)/a), (hi - k)//a] for a > 0, "
       "t in [ceil((k - hi)/-a), (k - lo)//-a] for a < 0"),
    _r("solve.replacement_range", SOLVE + ":replace",
       "{s == v, s in [lo, hi]} and {v in [lo, hi]} have the same solutions (replacing s by "
       "v keeps the solution set when v's range is constrained to s's)"),
    # ---------------------------------------------------------------- z3bridge.py
    _r("z3bridge.divmod_encoding", Z3B + ":Encoder.atom",
       "b*q <= a < b*q + b (b > 0), b*q >= a > b*q + b (b < 0) hold for exactly one q, "
       "q == a // b, and a - b*q == a % b"),
    _r("z3bridge.minmax_encoding", Z3B + ":Encoder.atom",
       "folding If(a < m, a, m) over the arguments gives min (If(a > m, a, m): max)"),
    # ---------------------------------------------------------------- op shape rules
    _r("slice.length_step_pos", OPS + ".indexing:slice_length",
       "step > 0: clamp start, stop to [0, n] (negative: + n, then max 0; else min n); "
       "max((stop' - start' + step - 1) // step, 0) == len(range(n)[start:stop:step])"),
    _r("slice.length_step_neg", OPS + ".indexing:slice_length",
       "step < 0: clamp start, stop to [-1, n - 1] (negative: + n, then max -1; else "
       "min n - 1); max((start' - stop' - step - 1) // -step, 0) == "
       "len(range(n)[start:stop:step])"),
    _r("broadcast.pair", OPS + ".elementwise:broadcast_pair",
       "sizes a, b >= 0 broadcast to a if a == b, b if a == 1, a if b == 1, and not at all "
       "otherwise (NumPy's rule)"),
    _r("reshape.infer", OPS + ".shape:reshape",
       "a -1 in the target is numel // known: the one size s >= 0 with known*s == numel, "
       "for every target the rule accepts (NumPy accepts: other sizes >= 0, known | numel)"),
    _r("reshape.divisibility", OPS + ".shape:reshape",
       "known != 0: numel % known == 0 <=> known*s == numel for some integer s"),
    _r("reshape.explicit", OPS + ".shape:reshape",
       "without -1 the target is accepted iff numel == prod(target) and every size >= 0 "
       "(NumPy's rule)"),
    _r("concatenate.shape", OPS + ".shape:_concatenate",
       "arrays equal off the axis (guarded) concatenate to the common sizes and, along the "
       "axis, the sum of the sizes"),
    _r("broadcast.shapes", OPS + ".elementwise:broadcast_shapes",
       "any number of shapes of any rank broadcast axis by axis from the right: admitted "
       "iff at each axis every two sizes other than 1 are equal, the size then the one "
       "other than 1 (or 1); ufuncs, np.where / np.clip / np.select / np.choose, "
       "np.meshgrid, np.broadcast_to and out= give NumPy's shape, and the contract admits "
       "only broadcastable inputs"),
    _r("index.advanced", OPS + ".advanced:getitem",
       "x[i] with an integer array i takes i's shape in place of the axis; x[i, j] broadcasts "
       "i and j; x[mask] has a data-dependent length in [0, mask.size]"),
    _r("split.sizes", OPS + ".shape:_array_split",
       "np.split(x, k) needs k | n and gives k parts n // k; np.array_split(x, k) gives "
       "n % k parts of n // k + 1, then n // k; np.split(x, [i, j]) gives min(i, n), "
       "max(min(j, n) - min(i, n), 0), max(n - min(j, n), 0)"),
    _r("linalg.contract", OPS + ".linalg:_einsum",
       "einsum / dot / tensordot contract equal sizes and keep the others in order; "
       "einsum: a letter repeated in one operand is a diagonal, the implicit output is "
       "the ... axes then the letters used once, alphabetically; np.outer(a, b) is "
       "(a.size, b.size)"),
    _r("arange.length", OPS + ".creation:_arange",
       "len(np.arange(start, stop, step)) == max(ceil((stop - start) / step), 0)"),
    _r("diff.length", OPS + ".reduction:_diff",
       "np.diff(x, n=k) along an axis of size s has size max(s - k, 0)"),
    _r("shape.pad_tile_repeat_stack", OPS + ".shape:_stack",
       "np.pad adds before + after; np.tile multiplies by the repetitions (prepending "
       "axes); np.repeat multiplies the axis (flattening without one); np.stack / "
       "np.concatenate of equal shapes add an axis of the count / sum the axis"),
    _r("check.emitted", "symshape.contract.writer:CheckWriter.emit",
       "the emitted input check accepts exactly the sizes the constraint set admits, and "
       "the run-time checks on data-dependent sizes imply every ss.check on them"),
    _r("subst.subs_replace", EXPR + ":subs",
       "subs(x, {s: v}) == x[s := v] (simultaneous); ShapeEnv.replace keeps every "
       "replacement over root symbols and refreshed facts equivalent"),
    _r("sympy.bridge", "symshape.contract.sympy_form:to_sympy",
       "to_sympy(x) denotes x (floor(a/b) for //, Mod for %, Min / Max), and each symbol's "
       "sympy assumptions hold on its whole range"),
    _r("matmul.shape", OPS + ".linalg:matmul_shape",
       "(..., n, k) @ (..., k, m) -> (broadcast(...), n, m); a 1-D first operand is "
       "(1, k) with that axis removed, a 1-D second (k, 1) likewise; the k must be equal"),
    # ---- op shape rules, proven for every rank and axis argument (proofs/*_every.py: the
    # shape function's reads pinned from its code, its integer parts run on a symbolic rank,
    # one trace per code path against NumPy's documented shapes in proofs/numpy_shapes.py;
    # `python -m proofs --classes -v` names the few still bounded by rank)
    _r("reduce.axes", OPS + ".reduction:reduce",
       "a reduction over axis None / an int / a tuple (either sign) removes those axes, or "
       "keeps them as 1 with keepdims; with no identity (max, min) each reduced size >= 1"),
    _r("reduce.arg", OPS + ".reduction:_arg",
       "np.argmax / argmin over axis None or one axis (either sign) is a reduction of it "
       "(keepdims: size 1); the reduced extent is non-empty"),
    _r("reduce.flat_or_axis", OPS + ".reduction:_flat_or_axis",
       "np.cumsum / cumprod / sort / argsort keep the shape along any axis (either sign); "
       "axis=None gives the flattened size"),
    _r("shape.permute", OPS + ".shape:transpose",
       "transpose(axes) is (shape[a] for a in axes) for every permutation (either sign), "
       "reversed for None; swapaxes exchanges two sizes; moveaxis moves one size"),
    _r("shape.expand_dims", OPS + ".shape:expand_dims",
       "expand_dims(x, axes) puts a 1 at each axis of the result (rank r + len(axes), "
       "either sign) and x's sizes, in order, elsewhere"),
    _r("shape.squeeze", OPS + ".shape:_squeeze",
       "squeeze removes the named axes, each of size 1 and named once (a repeat is refused, "
       "as NumPy refuses it), or (None) every axis of size 1 "
       "(a symbolic size kept must not be 1)"),
    _r("shape.diagonal", OPS + ".shape:_diagonal",
       "np.diagonal(x, k, a1, a2) removes axes a1, a2 and appends max(0, min(n1, n2 - k)) "
       "for k >= 0, max(0, min(n1 + k, n2)) for k < 0"),
    _r("index.basic", OPS + ".indexing:region",
       "x[...] with ints (-n <= i < n, axis removed), slices (len(range(n)[s])), None (a 1) "
       "and one Ellipsis (the axes not indexed) gives NumPy's basic-indexing shape"),
    _r("index.take", OPS + ".advanced:_take",
       "np.take(x, i, axis) replaces the axis by i's shape; axis=None: i's shape"),
    _r("index.take_along_axis", OPS + ".advanced:_take_along_axis",
       "np.take_along_axis(x, i, axis) has i's size on the axis and the broadcast of x's "
       "and i's sizes elsewhere"),
    _r("linalg.dot", OPS + ".linalg:_dot",
       "np.dot(a, b): a.shape[:-1] + b.shape[:-2] + b.shape[-1:] (b 1-D: a.shape[:-1]) "
       "with a's last size equal to b's contracted one; a 0-d operand multiplies"),
    _r("shape.flip", OPS + ".shape:_flip",
       "np.flip / fliplr / flipud over any axes (either sign, none repeated) keep the shape"),
    _r("shape.roll", OPS + ".shape:_roll",
       "np.roll by any shift over any axes (either sign) keeps the shape; the shifts pair "
       "with the axes as NumPy broadcasts them (one shift, or one per axis)"),
    _r("creation.triangle", OPS + ".creation:_triangle",
       "np.tril / np.triu with any offset keep the shape of rank >= 2 and give (n, n) for "
       "a 1-D array of n (NumPy's tri(*shape[-2:])); rank 0 refused"),
    _r("creation.linspace", OPS + ".creation:_linspace",
       "np.linspace(start, stop, num) has num samples; num >= 0"),
    _r("linalg.kron", OPS + ".linalg_calls:_kron",
       "np.kron(a, b): shapes aligned on the right (1s prepended), multiplied axis by axis"),
    _r("signal.correlate", OPS + ".signal:_correlate",
       "np.convolve / np.correlate of lengths n, m >= 1: full n + m - 1, same max(n, m), "
       "valid max(n, m) - min(n, m) + 1"),
    _r("stats.reduction", OPS + ".statistics:_reduction",
       "np.nansum / nanmean / nanmedian / nanmin / nanargmax ... over axis None / an int / "
       "a tuple (either sign) remove the axes (keepdims: 1s); percentile / quantile put "
       "q's shape first; nanmin / nanmax / nanargmin / nanargmax / percentile / quantile "
       "need a non-empty reduced extent"),
    _r("stats.scan", OPS + ".statistics:_scan",
       "np.nancumsum / np.nancumprod keep the shape along any one int axis (either sign; "
       "a tuple, float or bool refused as NumPy does); axis=None gives the flattened size"),
    _r("stats.average", OPS + ".statistics:_average",
       "np.average over axis None / an int / a tuple (either sign) is the reduction's shape; "
       "without weights every axis kept has size >= 1 (NumPy divides by the result's size); "
       "weights of another shape have the array's sizes along the axes in the order given, "
       "and with weights every averaged size is >= 1 (NumPy divides by their sum)"),
    _r("select.partition", OPS + ".selection:_argpartition",
       "np.argpartition / np.partition keep the shape (axis=None: flattened); every kth is "
       "in [-n, n) for the axis size n"),
    _r("stats.histogram_bins", OPS + ".statistics:_bins",
       "np.histogram with e >= 1 edges has e - 1 counts and e edges"),
    _r("shape.ravel", OPS + ".shape:_ravel",
       "np.ravel / reshape(-1) / flatten of any rank give one axis of the size"),
    _r("shape.atleast_1d", OPS + ".shape:_atleast_1d",
       "np.atleast_1d of each array: () -> (1,), others unchanged"),
    _r("shape.atleast_2d", OPS + ".shape:_atleast_2d",
       "np.atleast_2d of each array: () -> (1, 1), (n,) -> (1, n), others unchanged; "
       "np.atleast_3d (NumPy's code): () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> "
       "(m, n, 1)"),
    _r("shape.hstack", OPS + ".shape:_hstack",
       "np.hstack joins the arrays made at least 1-D along axis 0 if the first is 1-D, else "
       "along axis 1; of one array, its rows (at least one)"),
    _r("shape.vstack", OPS + ".shape:_vstack",
       "np.vstack joins the arrays made at least 2-D along axis 0; of one array, its rows "
       "(at least one)"),
    _r("shape.dstack", OPS + ".shape:_dstack",
       "np.dstack joins the arrays made at least 3-D ((n,) -> (1, n, 1), (m, n) -> "
       "(m, n, 1)) along axis 2; of one array, its rows (at least one)"),
    _r("linalg.outer", OPS + ".linalg:_outer",
       "np.outer(a, b) is (a.size, b.size) for operands of any rank"),
    _r("linalg.inner", OPS + ".linalg:_inner",
       "np.inner(a, b) is a.shape[:-1] + b.shape[:-1], a's last size equal to b's"),
    _r("linalg.tensordot", OPS + ".linalg:_tensordot",
       "np.tensordot(a, b, axes=k) is a.shape[:-k] + b.shape[k:], a's last k sizes equal to "
       "b's first k; axes=(la, lb): the paired sizes equal, the other axes in order; an "
       "axis out of range or named twice (axes=k past a's rank) is refused"),
]

# ---------------------------------------------------------------- the exact contract
PRJ = "symshape.reasoning.projection"
RULES += [
    _r("project.exact", PRJ + ":project",
       "v = min{goal : facts, ranges} when facts, ranges, goal < v is unsat and a point "
       "with goal == v satisfies them (max likewise); an unproven side keeps the interval"),
    _r("project.drop_implied", SOLVE + ":drop_implied_facts",
       "ranges => f gives {ranges, f} == {ranges}: a fact the ranges imply is dropped"),
    _r("range.divmod_split", RNG + ":_divmod_split",
       "k > 0, s in [lo, hi] => s == k*(s // k) + s % k, s // k in [lo // k, hi // k], "
       "s % k in [0, k - 1]"),
    _r("range.minmax_push", RNG + ":_minmax_pushed",
       "r + Max(a, b) == Max(r + a, r + b), r - Max(a, b) == Min(r - a, r - b) "
       "(and dually for Min)"),
    _r("solve.factor_pairs", SOLVE + ":solve_factor_pairs",
       "x_i >= 1, k_i >= 1, c >= 1: c*prod(x_i) == c*prod(k_i*(x_i // k_i)) <=> "
       "x_i % k_i == 0 for every i"),
    _r("solve.residue_split", SOLVE + ":split_residues",
       "s in [lo, hi], K > 0: f(s) <=> OR over r in [0, K) of (s % K == r and f(K*q + r)) "
       "with q = s // K; so if f(K*q + r) is decided for every r, f(s) <=> s % K in "
       "{r : f(K*q + r)}"),
    _r("solve.minmax_equal", SOLVE + ":minmax_equal",
       "Min(a, y) == y <=> y <= a; Max(a, y) == y <=> y >= a (for each other argument)"),
    _r("fold.minmax_by_facts", SIMP + ":dominates_by_facts",
       "facts => y <= x gives Min(x, y) == y (facts => y >= x: Max(x, y) == y)"),
    _r("bounds.univariate", "symshape.reasoning.symbolic:univariate_range",
       "every real root of p' lies in |r| < R = 1 + max |d_i / d_n|, so p is monotone on "
       "[ceil(R), hi] in the direction of its leading coefficient: its range over [lo, hi] "
       "is spanned by p(lo..ceil(R)) and p(hi) (an infinite end when hi is)"),
    _r("bounds.minmax_cases", "symshape.reasoning.symbolic:minmax_cases",
       "x >= y => Max(x, y) == x, y >= x => Max(x, y) == y (Min dually): a range of e[x] "
       "under x >= y joined with one of e[y] under y >= x bounds e"),
    _r("bounds.slack", "symshape.reasoning.symbolic:slack_substituted",
       "rest - b <= 0 => b == rest + t with t = b - rest >= 0: a range of e[b := rest + t] "
       "over t >= 0 bounds e on the fact's points"),
    _r("contract.shown_guards", "symshape.contract.guard_text:shown_facts",
       "ranges and facts <=> ranges, the compound dims' ranges and the guards shown: a "
       "guard the others and the printed ranges imply is left out of ep.guards"),
    _r("contract.relation_box", "symshape.specs.constraints:relation_box",
       "box within the program's ranges, example in the box, and box => every guard of "
       "the relation: the narrowed Dims imply the relation between them"),
    _r("contract.axis_terms", "symshape.contract.guard_text:in_axis_terms",
       "axis == a*s + rest => k*a*s == k*(axis - rest): a root read off an axis prints as "
       "that axis wherever it appears as a multiple of a"),
    _r("contract.exact_range", "symshape.contract.exact_ranges:exact_range",
       "range_constraints[e] == [min, max] of e over the root ranges and the residual "
       "guards (each finite end attained by an admitted point; an end the solver does not "
       "settle is the sound interval end)"),
    _r("contract.range_constraints", "symshape.contract.exact_ranges:published_ranges",
       "range_constraints has a key for every root symbol and every compound input dim "
       "and no other, each mapped to its exact range: every admitted point lies in it and "
       "each finite end is attained (also for a root whose declared range the guards "
       "narrow)"),
    _r("sympy.public", "symshape.contract.sympy_form:public",
       "the sympy value published for a size e evaluates to e at every point where e is "
       "defined (Mod / floor / Min / Max built unevaluated; checked on corner points, the "
       "fully unevaluated form otherwise)"),
    _r("decide.sound", DEC + ":decide",
       "decide(K, c) is True only if K => c and False only if K => not c (K: the root "
       "ranges, the facts, the replacements)"),
    _r("decide.related_facts", DEC + ":related_facts",
       "related_facts(syms) is the set of facts reachable from syms through shared symbols"),
    _r("z3bridge.implies", Z3B + ":implies",
       "implies(P, g, ranges) is True only if P and the ranges imply g, False only if they "
       "imply not g"),
    _r("symint.operators", "symshape.sizes.symint:SymInt._binop",
       "a SymInt's + - * // % (either side an int or a SymInt), unary -, divmod and "
       "sym_min / sym_max denote Python's operation on the values, and the example value "
       "is the operation on the example values; a divisor is non-zero on the contract"),
    _r("env.evaluate", "symshape.reasoning.env:ShapeEnv.evaluate",
       "b = evaluate(c, hint): on every point the environment admits afterwards, c == b "
       "(decided, or a guard recorded), and b is c at the example"),
    _r("env.add_guard", "symshape.reasoning.env:ShapeEnv.add_guard",
       "after add_guard(g) (the solver's dispatch, the replacements, narrowed ranges and "
       "refreshed facts it learns), the points the environment admits are exactly the "
       "points of the old ranges where g holds"),
    _r("env.check", "symshape.reasoning.env:ShapeEnv.check",
       "after check(c), every point the environment admits satisfies c (decided, or "
       "recorded as a guard); a c false at the example raises"),
    _r("bounds.pipeline", "symshape.reasoning.symbolic:bounds_expr",
       "ss.bounds(e) == [lo, hi] holds e on every point the environment admits, and each "
       "finite end is the value of e at one of them (interval, polynomial, sampled or "
       "projected: whichever step answers)"),
    _r("check.text", "symshape.contract.validate:validate_check_text",
       "the Python text of the input check, parsed back, accepts exactly the sizes the "
       "constraint set admits, and every name it reads is defined"),
    _r("contract.readable_guard", "symshape.specs.constraints:_readable",
       "Max(0, x) == 0 <=> x <= 0"),
    _r("contract.readable_minmax", "symshape.contract.guard_text:readable_minmax",
       "on the ranges, an argument u of Min(A) with some other v <= u is dropped (Max: "
       "v >= u); then Min(A) == y with y in A <=> y <= a for every other a in A (Max: >=); "
       "and X // k <= q <=> X <= k*q + k - 1, X // k >= q <=> X >= k*q for k > 0"),
]

BY_NAME: Dict[str, Rule] = {r.name: r for r in RULES}
if len(BY_NAME) != len(RULES):  # pragma: no cover - a duplicated name is a typo
    raise RuntimeError("duplicate rule names in symshape/rules.py")
