"""The input envelope of an imported HumanEval problem: what every original input shares.

:class:`InputProfile` learns it from HumanEval's own inputs and generates new inputs inside it
(rules in its docstring); :mod:`vcost.tasks.humaneval` uses it for the generated tests, and
the mutation pass (:mod:`vcost.tasks._humaneval_mutation`) to keep its inputs in the domain.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["InputProfile"]


Path_ = tuple[str, ...]
_BRACKETS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _kind(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    raise ValueError(f"not JSON data: {type(value).__name__}")


def _text(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


def _balanced(text: str) -> bool:
    stack: list[str] = []
    for char in text:
        if char in "([{<":
            stack.append(char)
        elif char in _BRACKETS and (not stack or stack.pop() != _BRACKETS[char]):
            return False
    return not stack


def _decimals(value: float) -> int:
    text = repr(value)
    if "e" in text or "n" in text:
        return 6
    return len(text.split(".")[1]) if "." in text else 0


def _leaves(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        else:
            yield item


def _nested(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(x, list) for x in value)


@dataclass
class _Seen:
    """Every value the originals hold at one path, by kind."""

    values: list[Any] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _NumberRule:
    lo: float
    hi: float
    zero: bool  # zero allowed
    parity: int | None
    decimals: int


def _number_conforms(value: float, rule: _NumberRule) -> bool:
    if not (math.isfinite(value) and rule.lo <= value <= rule.hi):
        return False
    if value == 0 and not rule.zero:
        return False
    if rule.parity is not None and int(value) % 2 != rule.parity:
        return False
    return isinstance(value, int) or round(value, rule.decimals) == value


@dataclass(frozen=True)
class _StringRule:
    alphabet: frozenset[str]
    choices: frozenset[str] | None  # the only strings allowed
    words: frozenset[str] | None  # the only words allowed
    balanced: bool
    template: tuple[str | None, ...] | None  # words fixed at their position
    numbers: _NumberRule | None  # for the whole numbers written in the string
    spacing: bool  # single spaces between words, none around them

    def accepts(self, value: str) -> bool:
        if not set(value) <= self.alphabet:
            return False
        if self.choices is not None and value not in self.choices:
            return False
        if self.words is not None and not set(value.split()) <= self.words:
            return False
        if self.balanced and not (_balanced(value) and any(c in "()[]{}<>" for c in value)):
            return False
        if self.template is not None:
            words = value.split()
            if len(words) != len(self.template) or any(
                t is not None and t != w for t, w in zip(self.template, words, strict=True)
            ):
                return False
        numbers = self.numbers
        if numbers is not None and not all(
            _number_conforms(n, numbers) for n in _embedded_numbers(value)
        ):
            return False
        return not (self.spacing and ("  " in value or value != value.strip()))


@dataclass(frozen=True)
class _SizedRule:
    lo: int
    hi: int
    parity: int | None


class InputProfile:
    """What every original input of a problem shares; generated inputs must share it too.

    Inputs are lists of JSON arguments. Values are grouped by path (argument number, then
    ``*`` for list items, ``{}`` for dict values, ``{k}`` for dict keys) and by kind (int,
    float, str, list, dict, bool, None; bool is not an int). A generated input conforms when,
    at every path:

    - each value's kind was seen there (a list whose items were never seen stays empty);
    - numbers lie in the range seen (widened by 3 when it spans less than 4, keeping the sign
      of the values seen), are not 0 when 0 was never seen among 10 or more values spanning it,
      keep a parity all values seen share (5 distinct values, or 3 among 20 values), and floats
      keep at most the decimals seen; bools take only values seen;
    - strings use only characters seen there; stay within the lengths seen (up to 2 longer;
      exactly the length when every one of 2 or more had the same); stay balanced in ()[]{}<>
      when all had brackets and were balanced; keep single spaces between words when all did;
      are one of the strings seen when all were at most 2 characters long, and their words are
      words seen when all words were; keep the words every one had at the same position
      (when all had the same number of words); and the whole numbers written in them follow
      the number rules of all the numbers written in the strings seen;
    - lists keep the lengths seen (as for strings), stay sorted (ascending or descending) or
      duplicate-free when all (of 3 items or more, at least one) were, stay rectangular or
      square (lists of lists) when all were;
    - a list argument whose leaves were all distinct, or a permutation of 1..n, stays so;

    and between arguments, taking each number argument's value and each string, list or dict
    argument's length: an order (<, <=) that held for every original holds, and a difference
    that was the same in 3 or more originals stays the same.

    ``widen = k`` (used only when the envelope holds too few new inputs) grows each number
    range by k times its span (at least 4), away from zero on the side(s) the values seen lie,
    and each length range that is not fixed by k times its span (at least 2).
    """

    def __init__(self, originals: Sequence[Sequence[Any]], *, widen: int = 0) -> None:
        if not originals:
            raise ValueError("an input profile needs at least one original input")
        self.originals = [list(args) for args in originals]
        self.arity = len(self.originals[0])
        self.widen = widen
        self.seen: dict[Path_, _Seen] = {}
        for args in self.originals:
            if len(args) != self.arity:
                raise ValueError("the original inputs do not all have the same number of args")
            for i, value in enumerate(args):
                self._observe(value, (str(i),))
        self.numbers = {k: r for k in self.seen for r in [self._number_rules(k)] if r}
        self.sized = {k: self._sized_rule(k) for k in self.seen}
        self._string_rules = {k: self._strings(k) for k in self.seen}
        self._list_rules = {k: self._lists(k) for k in self.seen}
        self._arg_rules = [self._argument(i) for i in range(self.arity)]
        self._relations = self._learn_relations()

    # ------------------------------------------------------------ learning

    def _observe(self, value: Any, path: Path_) -> None:
        seen = self.seen.setdefault(path, _Seen())
        seen.values.append(value)
        seen.kinds.add(_kind(value))
        if isinstance(value, str):
            for number in _embedded_numbers(value):
                self._observe(number, (*path, "#"))
        elif isinstance(value, list):
            for item in value:
                self._observe(item, (*path, "*"))
        elif isinstance(value, dict):
            for key, item in value.items():
                self._observe(key, (*path, "{k}"))
                self._observe(item, (*path, "{}"))

    def _values(self, path: Path_, kind: str) -> list[Any]:
        seen = self.seen.get(path)
        return [v for v in seen.values if _kind(v) == kind] if seen else []

    def _number_rules(self, path: Path_) -> dict[str, _NumberRule]:
        rules = {}
        for kind in ("int", "float"):
            values = self._values(path, kind)
            if not values:
                continue
            lo, hi = min(values), max(values)
            if hi - lo < 4:
                lo, hi = lo - 3, hi + 3
                if min(values) >= 0:
                    lo = max(lo, 0 if min(values) == 0 or kind == "float" else 1)
                if max(values) <= 0:
                    hi = min(hi, 0 if max(values) == 0 or kind == "float" else -1)
            step = self.widen * max(4, hi - lo)
            if step and min(values) >= 0:
                hi += step
            elif step and max(values) <= 0:
                lo -= step
            elif step:
                lo, hi = lo - step, hi + step
            zero = 0 in values or not (len(values) >= 10 and lo < 0 < hi)
            parity = None
            if kind == "int" and _shared_parity(values):
                parity = values[0] % 2
            decimals = max(_decimals(float(v)) for v in values) if kind == "float" else 0
            rules[kind] = _NumberRule(float(lo), float(hi), zero, parity, min(decimals, 6))
        return rules

    def _sized_rule(self, path: Path_) -> dict[str, _SizedRule]:
        rules = {}
        for kind in ("str", "list", "dict"):
            lengths = [len(v) for v in self._values(path, kind)]
            if not lengths:
                continue
            lo, hi = min(lengths), max(lengths) + 2
            if len(lengths) >= 2 and len(set(lengths)) == 1:
                hi = lo
            else:
                hi += self.widen * max(2, hi - lo)
            parity = None
            if _shared_parity(lengths):
                parity = lengths[0] % 2
            rules[kind] = _SizedRule(lo, hi, parity)
        return rules

    def _strings(self, path: Path_) -> _StringRule | None:
        values: list[str] = self._values(path, "str")
        if not values:
            return None
        words = [w for v in values for w in v.split()]
        split = [v.split() for v in values]
        template: tuple[str | None, ...] | None = None
        if len(values) >= 2 and len({len(w) for w in split}) == 1 and len(split[0]) >= 2:
            template = tuple(
                ws[0] if len(set(ws)) == 1 else None for ws in zip(*split, strict=True)
            )
            if all(w is None for w in template):
                template = None
        short = len(values) >= 2 and all(len(v) <= 2 for v in values)
        short_words = any(len(w) >= 2 for w in split) and all(len(w) <= 2 for w in words)
        return _StringRule(
            alphabet=frozenset("".join(values)),
            choices=frozenset(values) if short else None,
            words=frozenset(words) if short_words else None,
            balanced=all(any(c in "()[]{}<>" for c in v) and _balanced(v) for v in values),
            template=template,
            numbers=self.numbers.get((*path, "#"), {}).get("int"),
            spacing=any(" " in v for v in values)
            and all("  " not in v and v == v.strip() for v in values),
        )

    def _lists(self, path: Path_) -> dict[str, bool]:
        values: list[list[Any]] = self._values(path, "list")
        if not values:
            return {}
        comparable = [v for v in values if len(v) >= 2 and _comparable(v)]
        long = [v for v in values if len(v) >= 3]
        rules = {
            "ascending": bool(comparable)
            and any(len(v) >= 3 for v in comparable)
            and len(comparable) == len([v for v in values if len(v) >= 2])
            and all(v == sorted(v) for v in comparable),
            "descending": bool(comparable)
            and any(len(v) >= 3 for v in comparable)
            and len(comparable) == len([v for v in values if len(v) >= 2])
            and all(v == sorted(v, reverse=True) for v in comparable),
            "unique": bool(long) and all(len({_text(x) for x in v}) == len(v) for v in values),
        }
        grids = [v for v in values if v and all(isinstance(r, list) for r in v)]
        rules["rectangular"] = (
            bool(grids)
            and len(grids) == len(values)
            and all(len({len(r) for r in g}) == 1 for g in grids)
        )
        rules["square"] = rules["rectangular"] and all(len(g) == len(g[0]) for g in grids)
        return rules

    def _argument(self, index: int) -> dict[str, bool]:
        values = [args[index] for args in self.originals]
        if not all(isinstance(v, list) for v in values):
            return {}
        leaves = [list(_leaves(v)) for v in values]
        big = any(len(x) >= 4 for x in leaves)
        return {
            "distinct": big and all(len({_text(x) for x in ls}) == len(ls) for ls in leaves),
            "permutation": big
            and all(
                all(_kind(x) == "int" for x in ls) and sorted(ls) == list(range(1, len(ls) + 1))
                for ls in leaves
            ),
        }

    def _feature(self, args: Sequence[Any], index: int, kind: str) -> float | None:
        value = args[index]
        if kind == "number" and _kind(value) in ("int", "float"):
            return float(value)
        if kind == "size" and isinstance(value, str | list | dict):
            return float(len(value))
        return None

    def _learn_relations(self) -> list[tuple[int, str, int, str, str, float]]:
        kinds: list[str | None] = []
        for i in range(self.arity):
            found = {_kind(args[i]) for args in self.originals}
            kinds.append(
                "number"
                if found <= {"int", "float"}
                else "size"
                if found <= {"str", "list", "dict"}
                else None
            )
        relations = []
        for i in range(self.arity):
            for j in range(self.arity):
                ki, kj = kinds[i], kinds[j]
                if i == j or ki is None or kj is None:
                    continue
                pairs = [(self._feature(a, i, ki), self._feature(a, j, kj)) for a in self.originals]
                xs = [(x, y) for x, y in pairs if x is not None and y is not None]
                if len(xs) != len(self.originals):
                    continue
                if all(x < y for x, y in xs):
                    relations.append((i, ki, j, kj, "<", 0.0))
                elif all(x <= y for x, y in xs):
                    relations.append((i, ki, j, kj, "<=", 0.0))
                diffs = {x - y for x, y in xs}
                if i < j and len(xs) >= 3 and len(diffs) == 1:
                    relations.append((i, ki, j, kj, "diff", diffs.pop()))
        return relations

    # ------------------------------------------------------------ checking

    def conforms(self, args: Sequence[Any]) -> bool:
        """Whether a generated input shares everything every original input shares."""
        if len(args) != self.arity:
            return False
        try:
            for i, value in enumerate(args):
                if not self._value_conforms(value, (str(i),)):
                    return False
                if not self._argument_conforms(value, self._arg_rules[i]):
                    return False
            return self._relations_hold(args)
        except ValueError:  # not JSON data
            return False

    def _value_conforms(self, value: Any, path: Path_) -> bool:
        seen = self.seen.get(path)
        kind = _kind(value)
        if seen is None or kind not in seen.kinds:
            return False
        if kind == "bool":
            return value in self._values(path, "bool")
        if kind in ("int", "float"):
            return _number_conforms(value, self.numbers[path][kind])
        if kind in ("str", "list", "dict"):
            rule = self.sized[path][kind]
            if not (rule.lo <= len(value) <= rule.hi):
                return False
            if rule.parity is not None and len(value) % 2 != rule.parity:
                return False
        if kind == "str":
            string_rule = self._string_rules[path]
            return string_rule is not None and string_rule.accepts(value)
        if kind == "list":
            if not self._list_conforms(value, self._list_rules[path]):
                return False
            return all(self._value_conforms(x, (*path, "*")) for x in value)
        if kind == "dict":
            return all(
                self._value_conforms(k, (*path, "{k}")) and self._value_conforms(v, (*path, "{}"))
                for k, v in value.items()
            )
        return True

    @staticmethod
    def _list_conforms(value: list[Any], rules: Mapping[str, bool]) -> bool:
        if len(value) >= 2 and (rules["ascending"] or rules["descending"]):
            if not _comparable(value):
                return False
            if rules["ascending"] and value != sorted(value):
                return False
            if rules["descending"] and value != sorted(value, reverse=True):
                return False
        if rules["unique"] and len({_text(x) for x in value}) != len(value):
            return False
        if rules["rectangular"]:
            if not value or not all(isinstance(r, list) for r in value):
                return False
            if len({len(r) for r in value}) != 1:
                return False
            if rules["square"] and len(value) != len(value[0]):
                return False
        return True

    @staticmethod
    def _argument_conforms(value: Any, rules: Mapping[str, bool]) -> bool:
        if not rules:
            return True
        leaves = list(_leaves(value))
        if rules["distinct"] and len({_text(x) for x in leaves}) != len(leaves):
            return False
        return not (
            rules["permutation"]
            and not (
                all(_kind(x) == "int" for x in leaves)
                and sorted(leaves) == list(range(1, len(leaves) + 1))
            )
        )

    def _relations_hold(self, args: Sequence[Any]) -> bool:
        for i, ki, j, kj, op, diff in self._relations:
            x, y = self._feature(args, i, ki), self._feature(args, j, kj)
            if x is None or y is None:
                return False
            if (
                (op == "<" and not x < y)
                or (op == "<=" and not x <= y)
                or (op == "diff" and x - y != diff)
            ):
                return False
        return True

    # ------------------------------------------------------------ mutating

    def generate(
        self, rng: random.Random, count: int, *, exclude: set[str] | None = None
    ) -> list[list[Any]]:
        """Up to ``count`` new conforming inputs, mutated from the originals with ``rng``."""
        seen = set(exclude or ()) | {_text(a) for a in self.originals}
        found: list[list[Any]] = []
        for _ in range(max(200, count * 60)):
            if len(found) >= count or self.arity == 0:
                break
            args = copy.deepcopy(rng.choice(self.originals))
            for _ in range(1 + (rng.random() < 0.3)):
                i = rng.randrange(self.arity)
                args[i] = self._mutate(args[i], (str(i),), rng)
            if not self.conforms(args):
                continue
            text = _text(args)
            if text not in seen:
                seen.add(text)
                found.append(args)
        return found

    def _observed(self, path: Path_, rng: random.Random) -> Any:
        seen = self.seen.get(path)
        return copy.deepcopy(rng.choice(seen.values)) if seen and seen.values else None

    def _mutate(self, value: Any, path: Path_, rng: random.Random) -> Any:
        if rng.random() < 0.1:
            return self._observed(path, rng)
        kind = _kind(value)
        if kind == "bool":
            return not value
        if kind == "int":
            return self._mutate_int(value, self.numbers[path]["int"], rng)
        if kind == "float":
            return self._mutate_float(value, self.numbers[path]["float"], rng)
        if kind == "str":
            return self._mutate_str(value, path, rng)
        if kind == "list":
            return self._mutate_list(value, path, rng)
        if kind == "dict":
            return self._mutate_dict(value, path, rng)
        return value

    @staticmethod
    def _mutate_int(value: int, rule: _NumberRule, rng: random.Random) -> int:
        lo, hi = int(rule.lo), int(rule.hi)
        choice = rng.randrange(6)
        if choice == 0:
            return value + rng.choice([-2, -1, 1, 2])
        if choice == 1:
            return value + rng.randint(-10, 10)
        if choice == 2:
            return -value
        if choice == 3:
            return 0
        if choice == 4 and hi - lo <= 10**6:
            return rng.randint(lo, hi)
        return value + rng.choice([-1, 1]) * rng.randint(1, max(1, (hi - lo) // 4))

    @staticmethod
    def _mutate_float(value: float, rule: _NumberRule, rng: random.Random) -> float:
        span = max(rule.hi - rule.lo, 1.0)
        choice = rng.randrange(5)
        if choice == 0:
            new = value + rng.uniform(-0.1, 0.1) * span
        elif choice == 1:
            new = value * rng.uniform(0.5, 1.5)
        elif choice == 2:
            new = -value
        elif choice == 3:
            new = 0.0
        else:
            new = rng.uniform(rule.lo, rule.hi)
        return float(round(new, rule.decimals))

    def _mutate_str(self, value: str, path: Path_, rng: random.Random) -> str:
        rule = self._string_rules[path]
        if rule is None:
            return value
        if rule.choices is not None:
            return str(rng.choice(sorted(rule.choices)))
        words = value.split(" ")
        if len(words) >= 2 and rng.random() < 0.7:
            return " ".join(_mutate_sequence(words, rng, lambda: self._word(path, rng)))
        alphabet = sorted(rule.alphabet) or ["a"]
        chars = _mutate_sequence(list(value), rng, lambda: rng.choice(alphabet))
        return "".join(chars)

    def _word(self, path: Path_, rng: random.Random) -> str:
        texts: list[str] = self._values(path, "str")
        words = [w for t in texts for w in t.split()]
        return rng.choice(words) if words else ""

    def _mutate_list(self, value: list[Any], path: Path_, rng: random.Random) -> list[Any]:
        item_path = (*path, "*")
        rules = self._list_rules[path]
        if _nested(value) and rng.random() < 0.3:  # shuffle the leaves, keep the shape
            leaves = list(_leaves(value))
            rng.shuffle(leaves)
            it = iter(leaves)
            new = [[next(it) for _ in row] if isinstance(row, list) else next(it) for row in value]
        elif value and rng.random() < 0.3:
            new = list(value)
            k = rng.randrange(len(new))
            new[k] = self._mutate(new[k], item_path, rng)
        else:
            new = _mutate_sequence(value, rng, lambda: self._observed(item_path, rng))
        if len(new) >= 2 and _comparable(new):
            if rules.get("ascending"):
                new.sort()
            elif rules.get("descending"):
                new.sort(reverse=True)
        if rules.get("unique"):
            kept: dict[str, Any] = {}
            for item in new:
                kept.setdefault(_text(item), item)
            new = list(kept.values())
        return new

    def _mutate_dict(self, value: dict[str, Any], path: Path_, rng: random.Random) -> Any:
        items = list(value.items())
        choice = rng.randrange(4)
        if choice == 0 and items:
            items.pop(rng.randrange(len(items)))
        elif choice == 1 and items:
            k = rng.randrange(len(items))
            items[k] = (items[k][0], self._mutate(items[k][1], (*path, "{}"), rng))
        elif choice == 2 and items:
            k = rng.randrange(len(items))
            key = self._mutate(items[k][0], (*path, "{k}"), rng)
            items[k] = (key if isinstance(key, str) else items[k][0], items[k][1])
        else:
            key, item = self._observed((*path, "{k}"), rng), self._observed((*path, "{}"), rng)
            if isinstance(key, str):
                items.append((key, item))
            rng.shuffle(items)
        return dict(items)


def _embedded_numbers(text: str) -> list[int]:
    """The whole numbers written in a string (runs of up to 18 digits)."""
    return [int(m) for m in re.findall(r"[0-9]+", text) if len(m) <= 18]


def _shared_parity(values: Sequence[int]) -> bool:
    """Whether the values share a parity with some evidence: 5 distinct values, or 3 among
    20 observations (by chance: 1 in 16, or less)."""
    distinct = set(values)
    enough = len(distinct) >= 5 or (len(distinct) >= 3 and len(values) >= 20)
    return enough and len({v % 2 for v in distinct}) == 1


def _comparable(values: Sequence[Any]) -> bool:
    kinds = {_kind(v) for v in values}
    return kinds <= {"int", "float"} or kinds == {"str"}


def _mutate_sequence(items: Sequence[Any], rng: random.Random, new: Callable[[], Any]) -> list[Any]:
    """One edit of a sequence: drop, duplicate, swap, insert, replace, shuffle, reverse,
    truncate, extend or empty."""
    out = list(items)
    choice = rng.randrange(10)
    if not out:
        return [new() for _ in range(rng.randint(1, 3))]
    k = rng.randrange(len(out))
    if choice == 0:
        del out[k]
    elif choice == 1:
        out.insert(k, copy.deepcopy(out[k]))
    elif choice == 2 and len(out) >= 2:
        j = rng.randrange(len(out))
        out[k], out[j] = out[j], out[k]
    elif choice == 3:
        out.insert(rng.randrange(len(out) + 1), new())
    elif choice == 4:
        out[k] = new()
    elif choice == 5:
        rng.shuffle(out)
    elif choice == 6:
        out.reverse()
    elif choice == 7:
        out = out[: rng.randrange(len(out))]
    elif choice == 8:
        out.extend(new() for _ in range(rng.randint(1, 3)))
    else:
        out = []
    return out
