"""Where each key of a TOML document is defined: the line numbers behind spec errors.

``tomllib`` parses but forgets positions, so a spec error found by pydantic ("budget.value must be
> 0") could not otherwise say *where* in the file to look. :class:`KeyLines` scans the text once
(after ``tomllib`` has accepted it, so the scanner may assume valid TOML) and records, for every
key path, the line where it is defined: ``[table]`` and ``[[array]]`` headers, ``key = value``
pairs with dotted and quoted keys, array elements and inline-table keys. Paths use pydantic's
``loc`` form: strings for keys, integers for array (and array-of-tables) indices, so
``("deviations", 1, "reason")`` is the ``reason`` key of the second ``[[deviations]]`` entry.

Dotted *field paths* (``budget.value``, ``pilot.median_do_time."t.01"``) are the user-facing
spelling of the same paths; :func:`dotted` and :func:`split_dotted` convert between the two,
quoting a key the way TOML would when it is not a bare key.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Final

__all__ = ["KeyLines", "Path_", "dotted", "split_dotted"]

Path_ = tuple[str | int, ...]

_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_STOP: Final = frozenset(",]}#\n\r")


def _quote(key: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, except DEL must be escaped too)."""
    return json.dumps(key, ensure_ascii=False).replace("\x7f", "\\u007f")


def dotted(path: Path_) -> str:
    """``("budget", "arms", 0, "value")`` -> ``budget.arms[0].value`` (keys quoted if needed)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        key = part if _BARE_KEY.fullmatch(part) else _quote(part)
        out = key if not out else f"{out}.{key}"
    return out


def split_dotted(text: str) -> Path_ | None:
    """Inverse of :func:`dotted`; ``None`` if ``text`` is not a well-formed field path."""
    parts: list[str | int] = []
    i, n = 0, len(text)
    expect_key = True
    while i < n:
        c = text[i]
        if expect_key:
            if c == '"':
                end = i + 1
                while end < n and text[end] != '"':
                    end += 2 if text[end] == "\\" else 1
                if end >= n:
                    return None
                try:
                    parts.append(tomllib.loads(f"k = {text[i : end + 1]}")["k"])
                except tomllib.TOMLDecodeError:
                    return None
                i = end + 1
            else:
                match = _BARE_KEY.match(text, i)
                if match is None:
                    return None
                parts.append(match.group())
                i = match.end()
            expect_key = False
        elif c == ".":
            i += 1
            expect_key = True
        elif c == "[":
            end = text.find("]", i)
            if end < 0 or not text[i + 1 : end].isdigit():
                return None
            parts.append(int(text[i + 1 : end]))
            i = end + 1
        else:
            return None
    if expect_key:
        return None
    return tuple(parts)


class KeyLines:
    """Line of definition of every key path in a TOML text (1-based)."""

    def __init__(self, text: str) -> None:
        self.lines: dict[Path_, int] = {}
        self._text = text
        self._i = 0
        self._line = 1
        self._table: Path_ = ()
        self._array_counts: dict[Path_, int] = {}
        self._scan()

    # -- lookup ---------------------------------------------------------------------------------

    def line_of(self, path: Path_) -> int:
        """Line of ``path``, else of its nearest defined ancestor, else 1."""
        probe = tuple(path)
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            probe = probe[:-1]
        return 1

    def __contains__(self, path: object) -> bool:
        return path in self.lines

    # -- scanning -------------------------------------------------------------------------------

    def _record(self, path: Path_, line: int) -> None:
        for end in range(1, len(path) + 1):
            self.lines.setdefault(path[:end], line)

    def _peek(self, offset: int = 0) -> str:
        j = self._i + offset
        return self._text[j] if j < len(self._text) else ""

    def _advance_to(self, j: int) -> None:
        self._line += self._text.count("\n", self._i, j)
        self._i = j

    def _skip_blank(self, *, newlines: bool) -> None:
        """Skip spaces and tabs; with ``newlines`` also line breaks and comments."""
        while self._i < len(self._text):
            c = self._text[self._i]
            if c in " \t":
                self._i += 1
            elif newlines and c in "\r\n":
                self._advance_to(self._i + 1)
            elif newlines and c == "#":
                end = self._text.find("\n", self._i)
                self._i = len(self._text) if end < 0 else end
            else:
                return

    def _scan(self) -> None:
        text = self._text
        while self._i < len(text):
            self._skip_blank(newlines=True)
            if self._i >= len(text):
                return
            line = self._line
            if text.startswith("[[", self._i):
                self._i += 2
                keys = self._key()
                self._skip_blank(newlines=False)
                self._i += 2  # "]]"
                parent = self._resolve(keys, array=True)
                index = self._array_counts.get(parent, 0)
                self._array_counts[parent] = index + 1
                self._table = (*parent, index)
                self._record(self._table, line)
            elif text[self._i] == "[":
                self._i += 1
                keys = self._key()
                self._skip_blank(newlines=False)
                self._i += 1  # "]"
                self._table = self._resolve(keys, array=False)
                self._record(self._table, line)
            else:
                keys = self._key()
                self._skip_blank(newlines=False)
                self._i += 1  # "="
                self._skip_blank(newlines=False)
                path = (*self._table, *keys)
                self._record(path, line)
                self._value(path)

    def _resolve(self, keys: tuple[str, ...], *, array: bool) -> Path_:
        """Header keys -> loc path, indexing into the arrays of tables opened so far.

        For an ``[[array]]`` header the last key is left unindexed: the caller opens a new
        element there.
        """
        path: Path_ = ()
        for n, key in enumerate(keys):
            path = (*path, key)
            if path in self._array_counts and not (array and n == len(keys) - 1):
                path = (*path, self._array_counts[path] - 1)
        return path

    def _key(self) -> tuple[str, ...]:
        keys: list[str] = []
        text = self._text
        while True:
            self._skip_blank(newlines=False)
            c = self._peek()
            if c == '"':
                end = self._i + 1
                while text[end] != '"':
                    end += 2 if text[end] == "\\" else 1
                keys.append(tomllib.loads(f"k = {text[self._i : end + 1]}")["k"])
                self._i = end + 1
            elif c == "'":
                end = text.index("'", self._i + 1)
                keys.append(text[self._i + 1 : end])
                self._i = end + 1
            else:
                match = _BARE_KEY.match(text, self._i)
                if match is None:  # pragma: no cover - tomllib accepted the text
                    raise ValueError(f"cannot read a key at line {self._line}")
                keys.append(match.group())
                self._i = match.end()
            self._skip_blank(newlines=False)
            if self._peek() != ".":
                return tuple(keys)
            self._i += 1

    def _value(self, path: Path_) -> None:
        text = self._text
        i = self._i
        if text.startswith('"""', i) or text.startswith("'''", i):
            quote = text[i : i + 3]
            j = i + 3
            while not text.startswith(quote, j):
                j += 2 if (quote == '"""' and text[j] == "\\") else 1
            j += 3
            while j < len(text) and text[j] == quote[0]:  # up to two quotes end the content
                j += 1
            self._advance_to(j)
        elif text[i] == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            self._i = j + 1
        elif text[i] == "'":
            self._i = text.index("'", i + 1) + 1
        elif text[i] == "[":
            self._i += 1
            index = 0
            while True:
                self._skip_blank(newlines=True)
                if self._peek() == "]":
                    self._i += 1
                    return
                element = (*path, index)
                self._record(element, self._line)
                self._value(element)
                index += 1
                self._skip_blank(newlines=True)
                if self._peek() == ",":
                    self._i += 1
        elif text[i] == "{":
            self._i += 1
            while True:
                self._skip_blank(newlines=True)
                if self._peek() == "}":
                    self._i += 1
                    return
                line = self._line
                keys = self._key()
                self._skip_blank(newlines=False)
                self._i += 1  # "="
                self._skip_blank(newlines=False)
                inner = (*path, *keys)
                self._record(inner, line)
                self._value(inner)
                self._skip_blank(newlines=True)
                if self._peek() == ",":
                    self._i += 1
        else:
            j = i
            while j < len(text) and text[j] not in _SCALAR_STOP:
                j += 1
            self._i = j
