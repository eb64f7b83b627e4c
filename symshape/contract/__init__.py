"""The contract of an exported program, in one place, with one meaning.

``ConstraintSet`` (``constraint_set``) is the contract: each input's expected shape over
root symbols, each root's range, the residual guards.  Everything published about a
program is generated from it here, and every rendered view is validated against its one Z3
meaning (``meaning.admitted``: the contract as a formula over the input sizes):

=================  =======================================================================
module             holds
=================  =======================================================================
constraint_set     ``ConstraintSet``, ``InputDesc``, ``OfClass``: the contract itself
meaning            ``admitted``: the one Z3 meaning; ``CheckMeaning``: the records' meaning
exact_ranges       the one range service of the contract (``range_constraints``), and the
                   engine's range layers, each with what it is exact for
records            the typed records of the input check
writer             ``CheckWriter``: the contract as check records, in the order they run
render_python      the records as Python (``module()``, the compiled forms, the JIT)
render_text        the records as text in the user's names (messages, ``describe``)
input_check        ``InputCheck``: records plus the names their messages use
guard_text         ``ep.guards``: the residual guards in the inputs' terms
sympy_form         sizes as sympy values that evaluate to what the program does
published          ``ep.range_constraints``, ``ep.input_shapes``, ``ep.guards``
fixes              the suggested fixes' published form (``str`` and ``apply``)
saved              the contract's saved (JSON) form, written and read
parse_check        generated check code parsed back into Z3 (translation validation)
validate           every view proven against ``meaning.admitted``
=================  =======================================================================

Nothing here imports ``capture`` or ``codegen``.
"""
