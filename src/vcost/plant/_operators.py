"""Mutation operators for code answers, grouped by the study design's three code error types.

Each operator is a generator over a :class:`~vcost.plant._source.SourceText` that yields
:class:`~vcost.plant._source.Edit` records: a description and the mutated source (plus the line
changed and, for a missed edge case, the checklist item it targets). Every edit replaces one
span of the original text, so the rest of the answer keeps its exact layout.

boundary (off-by-one)
    ``cmp-strictness``  ``<`` ↔ ``<=``, ``>`` ↔ ``>=`` (not in a running best)
    ``range-bound``     ``range(a, b)`` → ``range(a, b ± 1)`` / ``range(a ± 1, b)``
    ``slice-bound``     a slice bound ± 1
    ``len-minus-one``   ``len(x)`` → ``len(x) - 1``
    ``int-constant``    an integer literal ± 1
wrong-condition
    ``and-or``          ``and`` ↔ ``or``
    ``negate``          ``if c`` → ``if not c``, ``not c`` → ``c`` (if, elif, while, ternary)
    ``drop-condition-part`` drop one part of an ``and``/``or`` condition (not the ``or`` of an
                        early-exit guard: that is ``remove-guard-clause``; not a None or
                        ``len`` test: ``drop-edge-check``)
    ``eq-neq``          ``==`` ↔ ``!=``
    ``cmp-direction``   ``<`` ↔ ``>``, ``<=`` ↔ ``>=``
    ``min-max``         ``min`` ↔ ``max``
    ``any-all``         ``any`` ↔ ``all``
    ``truthiness``      ``x is None`` ↔ ``not x``, ``x is not None`` ↔ ``x`` (in conditions)
    ``bool-flip``       ``True`` ↔ ``False``
    ``tie-strictness``  ``<`` ↔ ``<=`` in a running best (``if x < best: best = x``): a tie rule
    ``sign-test``       ``x > 0`` ↔ ``x != 0``
    ``eq-to-order``     ``==`` → ``<=`` / ``>=``, ``!=`` → ``<`` / ``>`` (not on strings)
    ``drop-chain-bound`` ``0 < x <= MAX`` → ``x <= MAX`` / ``0 < x``
    ``sort-reverse``    add or drop ``reverse=True`` in ``sorted``/``.sort``
    ``negate-tiebreak`` ``key=lambda r: (a, b)`` → ``(a, -b)`` (a later part of a ranking key)
    ``swap-threshold``  ``x > LOAN_CAP`` → ``x > MEMBER_CAP`` (the nearest other constant)
    ``elif-to-if``      ``elif c:`` → ``if c:`` (overlapping branches both run)
    ``drop-term``       ``returned + qty > taken`` → ``qty > taken`` (a term forgotten)
missed-edge-case
    ``remove-guard``    delete an ``if`` (no ``else``) whose body ends by ``return``,
                        ``continue``, ``break`` or ``raise``
    ``remove-guard-clause`` drop one ``or`` part of such a guard
    ``remove-clamp``    ``max(0, x)`` → ``x``; ``min(x, CAP)`` → ``x``;
                        delete ``if x > CAP: x = CAP``
    ``remove-dedupe``   ``set(x)`` → ``x``; ``dict.fromkeys(x)`` → ``x``
    ``remove-tiebreak`` drop a tie-break part of a ``key=lambda ...: (a, b, ...)`` sort key,
                        or the last part of a tuple compared with ``<`` or named ``key``
    ``remove-special-case`` delete an ``if`` (no ``else``, no exit, no clamp) that handles an
                        absent value, a negative value, a named threshold, or a flush after a loop
    ``unwrap-edge-check`` ``if x > 0: total += x`` → ``total += x`` (also ``x is not None``)
    ``drop-edge-check`` drop a None or ``len`` test from an ``and``/``or`` condition
    ``remove-fallback`` ``0 if x is None else x`` → ``x``; ``next(g, d)`` → ``next(g)``;
                        ``max(xs, default=d)`` → ``max(xs)``
    ``remove-abs``      ``abs(x)`` → ``x``
    ``remove-accumulate`` ``d[k] = d.get(k, 0) + v`` → ``d[k] = v``

What a missed-edge-case edit targets (``Edit.targets``) is read from the code it removes:
a dedupe targets ``duplicates``, a tie-break ``ties``, ``max(0, x)`` ``negative``, a cap
``boundary``; a guard's condition is read by :func:`guard_target` (``not xs`` / ``len(xs) ==
0`` → ``empty``; ``x < 0`` / ``x <= 0`` → ``negative``; ``k in seen`` → ``duplicates``; a
comparison with a literal or a constant → ``boundary``); None when it cannot tell.

Operators are general: they read the answer's syntax tree and names, never a task id. Where two
could make the same edit, one owns it (``tie-strictness`` over ``cmp-strictness``,
``drop-edge-check`` over ``drop-condition-part``), so the mutant carries the error type that
describes it.
"""

from __future__ import annotations

from vcost.plant._boundary_operators import (
    cmp_strictness,
    int_constant,
    len_minus_one,
    plus,
    range_bound,
    slice_bound,
)
from vcost.plant._condition_operators import (
    and_or,
    any_all,
    bool_flip,
    cmp_direction,
    drop_chain_bound,
    drop_condition_part,
    drop_term,
    elif_to_if,
    eq_neq,
    eq_to_order,
    min_max,
    module_constants,
    negate,
    negate_tiebreak,
    sign_test,
    sort_reverse,
    swap_threshold,
    tie_strictness,
    truthiness,
)
from vcost.plant._edge_operators import (
    MAX_DELETED_LINES,
    drop_edge_check,
    guard_target,
    remove_abs,
    remove_accumulate,
    remove_clamp,
    remove_dedupe,
    remove_fallback,
    remove_guard,
    remove_guard_clause,
    remove_special_case,
    remove_tiebreak,
    unwrap_edge_check,
)
from vcost.plant._operator_base import (
    CodeErrorType,
    Operator,
    boolean_names,
    edge_check,
    running_best_compares,
    state_names,
)

__all__ = [
    "CODE_OPERATORS",
    "MAX_DELETED_LINES",
    "CodeErrorType",
    "Operator",
    "and_or",
    "any_all",
    "bool_flip",
    "boolean_names",
    "cmp_direction",
    "cmp_strictness",
    "drop_chain_bound",
    "drop_condition_part",
    "drop_edge_check",
    "drop_term",
    "edge_check",
    "elif_to_if",
    "eq_neq",
    "eq_to_order",
    "guard_target",
    "int_constant",
    "len_minus_one",
    "min_max",
    "module_constants",
    "negate",
    "negate_tiebreak",
    "plus",
    "range_bound",
    "remove_abs",
    "remove_accumulate",
    "remove_clamp",
    "remove_dedupe",
    "remove_fallback",
    "remove_guard",
    "remove_guard_clause",
    "remove_special_case",
    "remove_tiebreak",
    "running_best_compares",
    "sign_test",
    "slice_bound",
    "sort_reverse",
    "state_names",
    "swap_threshold",
    "tie_strictness",
    "truthiness",
    "unwrap_edge_check",
]

CODE_OPERATORS: tuple[Operator, ...] = (
    Operator("cmp-strictness", "boundary", cmp_strictness),
    Operator("range-bound", "boundary", range_bound),
    Operator("slice-bound", "boundary", slice_bound),
    Operator("len-minus-one", "boundary", len_minus_one),
    Operator("int-constant", "boundary", int_constant),
    Operator("and-or", "wrong-condition", and_or),
    Operator("negate", "wrong-condition", negate),
    Operator("drop-condition-part", "wrong-condition", drop_condition_part),
    Operator("eq-neq", "wrong-condition", eq_neq),
    Operator("cmp-direction", "wrong-condition", cmp_direction),
    Operator("min-max", "wrong-condition", min_max),
    Operator("any-all", "wrong-condition", any_all),
    Operator("truthiness", "wrong-condition", truthiness),
    Operator("bool-flip", "wrong-condition", bool_flip),
    Operator("tie-strictness", "wrong-condition", tie_strictness),
    Operator("sign-test", "wrong-condition", sign_test),
    Operator("eq-to-order", "wrong-condition", eq_to_order),
    Operator("drop-chain-bound", "wrong-condition", drop_chain_bound),
    Operator("sort-reverse", "wrong-condition", sort_reverse),
    Operator("negate-tiebreak", "wrong-condition", negate_tiebreak),
    Operator("swap-threshold", "wrong-condition", swap_threshold),
    Operator("elif-to-if", "wrong-condition", elif_to_if),
    Operator("drop-term", "wrong-condition", drop_term),
    Operator("remove-guard", "missed-edge-case", remove_guard),
    Operator("remove-guard-clause", "missed-edge-case", remove_guard_clause),
    Operator("remove-clamp", "missed-edge-case", remove_clamp),
    Operator("remove-dedupe", "missed-edge-case", remove_dedupe),
    Operator("remove-tiebreak", "missed-edge-case", remove_tiebreak),
    Operator("remove-special-case", "missed-edge-case", remove_special_case),
    Operator("unwrap-edge-check", "missed-edge-case", unwrap_edge_check),
    Operator("drop-edge-check", "missed-edge-case", drop_edge_check),
    Operator("remove-fallback", "missed-edge-case", remove_fallback),
    Operator("remove-abs", "missed-edge-case", remove_abs),
    Operator("remove-accumulate", "missed-edge-case", remove_accumulate),
)
"""The code operators, in the order their mutants are listed (and deduplicated)."""
