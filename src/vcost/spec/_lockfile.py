"""The lock file: ``<name>.lock.json`` beside ``<name>.toml``.

A lock records the SHA-256 of the canonical spec, the canonical spec itself (so a later change
can be named field by field), the protocol deviations declared before locking (they are not part
of the hash, so they are recorded here and may not change afterwards), the vcost version and the
UTC date-time. It is written once, atomically (temporary file + rename), and verified on read:
a lock whose recorded spec no longer hashes to its recorded hash was edited by hand and is
refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from vcost.errors import LockError

__all__ = ["LOCK_FORMAT", "Lock", "canonical_text", "lock_path_for"]

LOCK_FORMAT: Final = "vcost-lock/1"


def canonical_text(data: Any) -> str:
    """The canonical JSON text of JSON-ready data (sorted keys, no whitespace)."""
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def lock_path_for(spec_path: str | os.PathLike[str]) -> Path:
    """``study.toml`` -> ``study.lock.json`` in the same directory."""
    path = Path(spec_path)
    return path.with_name(f"{path.stem}.lock.json")


@dataclass(frozen=True)
class Lock:
    """A locked specification: what was pre-registered, and when."""

    spec_hash: str
    spec: Mapping[str, Any]
    locked_at: datetime
    vcost_version: str
    spec_file: str
    protocol_deviations: tuple[Mapping[str, Any], ...] = ()
    path: Path | None = field(default=None, compare=False)

    def to_json(self) -> str:
        """The lock file's text (indented, sorted keys, trailing newline)."""
        data = {
            "format": LOCK_FORMAT,
            "spec_file": self.spec_file,
            "spec_hash": self.spec_hash,
            "locked_at": self.locked_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "vcost_version": self.vcost_version,
            "protocol_deviations": [dict(d) for d in self.protocol_deviations],
            "spec": dict(self.spec),
        }
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write atomically: a reader sees the old file or the new one, never half of one."""
        target = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(self.to_json())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Lock:
        """Read and verify a lock file; :class:`LockError` if it is malformed or was edited."""
        source = Path(path)
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise LockError(
                f"cannot read the lock file: {error}",
                source=source,
                hint="restore it from version control, or re-lock with --force",
            ) from error
        keys = ("format", "spec_hash", "spec", "locked_at", "vcost_version", "spec_file")
        missing = [k for k in keys if not isinstance(data, dict) or k not in data]
        if missing or data.get("format") != LOCK_FORMAT:
            raise LockError(
                "not a vcost lock file"
                + (
                    f" (missing {', '.join(missing)})"
                    if missing
                    else f" (format {data['format']!r})"
                ),
                source=source,
                hint=f"expected format {LOCK_FORMAT!r}; restore it or re-lock with --force",
            )
        spec = data["spec"]
        if not isinstance(spec, dict) or (
            hashlib.sha256(canonical_text(spec).encode("utf-8")).hexdigest() != data["spec_hash"]
        ):
            raise LockError(
                "the locked spec does not match its recorded hash: the lock file was edited",
                source=source,
                field="spec_hash",
                hint="restore the lock file from version control; never edit it by hand",
            )
        try:
            locked_at = datetime.fromisoformat(str(data["locked_at"]).replace("Z", "+00:00"))
        except ValueError as error:
            raise LockError(
                f"bad locked_at {data['locked_at']!r}", source=source, field="locked_at"
            ) from error
        deviations = data.get("protocol_deviations", [])
        return cls(
            spec_hash=str(data["spec_hash"]),
            spec=spec,
            locked_at=locked_at,
            vcost_version=str(data["vcost_version"]),
            spec_file=str(data["spec_file"]),
            protocol_deviations=tuple(d for d in deviations if isinstance(d, dict)),
            path=source,
        )
