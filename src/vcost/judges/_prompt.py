"""What an AI checker is asked, and how its reply is read.

The checker gets what a human checker gets: the task's specification with its worked examples,
the same instructions, and the answer in the same plain template. Its reply must be one JSON
object in a strict schema::

    {"verdict": "correct" | "incorrect" | "unverifiable", "confidence": 0.5-1.0, "reason": "..."}

(a Markdown fence around it, prose around it, and extra keys are tolerated; the first object
that fits the schema is the verdict, so a schema example after it is ignored; a confidence
below 0.5 is outside the schema). Anything else is
kept raw and recorded as declared unverifiable; a reply cut off by the token limit before a
verdict counts as the budget running out.

A checker that can run code (the study design's named extension) may first send up to
``max_runs`` blocks fenced as ```` ```run ````; each is executed against the answer in the
sandbox and its output sent back before the verdict.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vcost.models import Messages
from vcost.tasks import CodeTask, Task

__all__ = [
    "JUDGE_INSTRUCTIONS",
    "JUDGE_PROMPT_VERSION",
    "ParsedReply",
    "judge_messages",
    "parse_reply",
    "run_blocks",
]

JUDGE_PROMPT_VERSION = "vcost-judge-1"

JUDGE_INSTRUCTIONS = """\
You are checking an answer to the task below. The answer may or may not be correct. Decide
whether it is correct: it must do what the specification says on every valid input, including
each edge case the specification states. Give a verdict only; do not fix the answer. If you
cannot tell, you may declare the answer unverifiable."""

_SCHEMA = """\
Reply with one JSON object and nothing else:
{"verdict": "correct" or "incorrect" or "unverifiable", "confidence": a number from 0.5 to 1.0
(how sure you are of the verdict), "reason": "one line: why, or a counterexample"}"""

_TOOLS = """\
Before your verdict you may test the answer up to {runs} times: reply with only a block fenced
as ```run containing Python statements (the answer's code is already defined{data}); you will
get back what they print. When you are done testing, reply with the JSON verdict."""


def judge_messages(task: Task, shown: str, *, max_runs: int = 0) -> Messages:
    """The first message to a checker of ``shown`` (an answer in the plain template)."""
    spec = task.spec_text.strip()
    if not isinstance(task, CodeTask):
        spec += "\n\n(The data are in `data.csv`, which the answer's script reads.)"
    tools = ""
    if max_runs:
        data = "" if isinstance(task, CodeTask) else " and `data.csv` is in the working directory"
        tools = "\n\n" + _TOOLS.format(runs=max_runs, data=data)
    content = (
        f"{JUDGE_INSTRUCTIONS}\n\n# The task\n\n{spec}\n\n# The answer\n\n{shown}\n"
        f"{tools}\n\n{_SCHEMA}"
    )
    return [{"role": "user", "content": content}]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    verdict: Literal["correct", "incorrect", "unverifiable"]
    confidence: float = Field(ge=0.5, le=1.0)
    reason: str = ""


@dataclass(frozen=True)
class ParsedReply:
    """A checker's reply read against the schema; ``problem`` says why it could not be."""

    verdict: Literal["correct", "incorrect", "unverifiable"] | None
    confidence: float | None
    reason: str
    problem: str | None = None


_RUN = re.compile(r"```run[ \t]*\r?\n(.*?)(?:```|\Z)", re.S)
_DECODER = json.JSONDecoder()


def _objects(text: str) -> list[object]:
    """The JSON values that start at a ``{`` of the reply, in the order they appear (a fence
    around one is just text around it; braces inside a JSON string do not split it)."""
    found: list[object] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = _DECODER.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        found.append(value)
        i = text.find("{", end)
    return found


def parse_reply(text: str) -> ParsedReply:
    """Read a verdict from a checker's reply (schema in the module docstring).

    The FIRST object that fits the schema is the verdict: what follows it (a schema example, a
    quoted template) never overrides it.
    """
    problem = "no JSON object in the reply"
    for data in _objects(text):
        if not isinstance(data, dict):
            continue
        if isinstance(data.get("confidence"), int) and not isinstance(data["confidence"], bool):
            data["confidence"] = float(data["confidence"])
        try:
            reply = _Reply.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "reply"
            problem = f"{where}: {first['msg']}"
            continue
        reason = " ".join(reply.reason.split())[:300]
        return ParsedReply(reply.verdict, reply.confidence, reason)
    return ParsedReply(None, None, "", problem)


def run_blocks(text: str) -> list[str]:
    """The ```run blocks in a reply (a checker testing the answer)."""
    return [m.group(1) for m in _RUN.finditer(text)]
