"""The study's data release (study design, seed 003: "Release ... the anonymised data").

::

    from vcost.release import make_release

    release = make_release("sqlite:///study/vcost.db", "release/", spec="study/study.toml",
                           bank="bundled", key=key_bytes, drop_free_text=True)
    release.manifest["tasks"]["held_out"]      # spares whose text stays private

A release is a folder (docs/release.md): every table of the study as CSV with participants
under new ids, optionally without free text, with a codebook of every column, the texts of
the tasks used (never those of held-out spare tasks, whose ratings stay), and a manifest
recording vcost's version and commit, the spec hash, the date and a SHA-256 per file.

Modules: ``_source`` (reading a store or a trace folder), ``_anonymise`` (new ids, free
text), ``_tasks`` (held-out tasks, task material, answers' code), ``_codebook`` (the
codebook), ``_manifest`` (the byte scan, hashes, manifest and README), ``_build`` (the folder,
written atomically).
"""

from __future__ import annotations

from vcost.release._anonymise import FREE_TEXT_COLUMNS, FREE_TEXT_KEYS, key_fingerprint, new_id
from vcost.release._build import Release, make_release
from vcost.release._codebook import RELEASE_TABLES
from vcost.release._manifest import MANIFEST_FORMAT

__all__ = [
    "FREE_TEXT_COLUMNS",
    "FREE_TEXT_KEYS",
    "MANIFEST_FORMAT",
    "RELEASE_TABLES",
    "Release",
    "key_fingerprint",
    "make_release",
    "new_id",
]
