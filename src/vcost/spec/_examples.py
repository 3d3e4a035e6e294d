"""The example specifications shipped inside the package (``vcost/examples/*.toml``)."""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from typing import Final

from vcost.errors import SpecError

__all__ = ["EXAMPLES", "example_path", "example_text"]

EXAMPLES: Final[dict[str, str]] = {
    "code-instantiation": "Crescitelli et al. 2026, Sec. 6: the illustrative code instantiation",
    "core-study": "the study design (seed 003): the core study's protocol settings",
}


def example_path(name: str) -> Traversable:
    """The shipped example ``name`` (one of :data:`EXAMPLES`) as a resource."""
    if name not in EXAMPLES:
        raise SpecError(
            f"no example named '{name}'", hint="expected one of " + ", ".join(sorted(EXAMPLES))
        )
    return resources.files("vcost").joinpath("examples", f"{name}.toml")


def example_text(name: str) -> str:
    """The TOML text of the shipped example ``name``."""
    return example_path(name).read_text(encoding="utf-8")
