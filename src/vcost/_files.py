"""Reading input files and writing result files whole.

Reading: UTF-8, a leading byte-order mark dropped (editors on Windows write one), and bytes
that are not UTF-8 an error naming the line. Writing: a reader never sees half a file, and a
failed write keeps the old one."""

from __future__ import annotations

import os
from pathlib import Path

from vcost.errors import InputError


def read_utf8(path: Path) -> str:
    """``path``'s text: UTF-8 with any leading byte-order mark dropped; a file that cannot
    be read, or is not UTF-8, is an :class:`~vcost.errors.InputError` naming it (and the
    line of the first bad byte)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the file: {error.strerror}", source=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text: byte 0x{data[error.start]:02x} ({error.reason})",
            source=path,
            line=data.count(b"\n", 0, error.start) + 1,
            hint="save the file as UTF-8",
        ) from None
    return text.removeprefix("\ufeff")


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (its folder made if missing) through a temporary file in the
    same folder, renamed over ``path`` only once complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
