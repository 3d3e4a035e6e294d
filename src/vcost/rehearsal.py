"""Synthetic models for rehearsing a run offline, before any API money is spent.

A :class:`SyntheticModel` is a responder for :class:`vcost.models.testing.ProviderServer`: it
reads each request the way a real server would and replies in the provider's wire format:

- to an answer prompt (:func:`vcost.answers.answer_messages`), the task's reference solution,
  or, with probability ``p_wrong``, a mutant of it (a wrong answer), in a varying style: one
  fenced block with prose, bare code, three blocks (a draft, the answer, a usage example);
- to a checker prompt (:func:`vcost.judges.judge_messages`), a JSON verdict that misses a wrong
  answer with probability ``p_miss`` and rejects a correct one with ``p_false_reject``; a
  checker told it may run code first sends one ```run block;
- to a pairwise prompt, a pick of A or B with a position bias ``p_first``.

Randomness is a hash of the model's name, the prompt and how many times this prompt was seen,
so repeats differ and a run is reproducible given its request order. Nothing here is a real
model: demo and test results from it are labelled synthetic.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vcost.models.testing import Reply
from vcost.plant import mutants
from vcost.tasks import CodeTask, Task

__all__ = ["SyntheticModel", "prompt_text"]


def prompt_text(request: Mapping[str, Any]) -> str:
    """The text of a request's messages (OpenAI or Anthropic body), joined."""
    parts: list[str] = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return "\n".join(parts)


@dataclass
class SyntheticModel:
    """A scripted model that answers bank tasks and judges answers (module docstring).

    ``truth`` maps an answer's shown text to its ground truth ("correct"/"incorrect"), so the
    checker side can err at set rates; answers it does not know are judged correct.
    """

    name: str
    tasks: Sequence[Task]
    p_wrong: float = 0.3
    p_miss: float = 0.3
    p_false_reject: float = 0.1
    p_first: float = 0.6
    truth: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    _seen: Counter[str] = field(default_factory=Counter, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _specs: list[tuple[str, Task]] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        # each task's text read once: a task's spec_text reads its file on every access
        self._specs = [(task.spec_text.strip(), task) for task in self.tasks]

    def know(self, answers: Iterable[tuple[str, str]]) -> None:
        """Tell the checker side the ground truth of shown answers: (shown, ground_truth)."""
        self.truth.update(answers)

    def _draw(self, text: str, salt: str) -> float:
        digest = hashlib.sha256(f"{self.name}\x1f{salt}\x1f{text}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def __call__(self, request: dict[str, Any]) -> Reply:
        text = prompt_text(request)
        with self._lock:
            self._seen[text] += 1
            nth = self._seen[text]
        salt = str(nth)
        if "exactly one of them is correct" in text:
            reply = self._pairwise(text, salt)
        elif "You are checking an answer" in text:
            reply = self._verdict(text, salt)
        else:
            reply = self._answer(text, salt)
        return Reply(text=reply, output_tokens=max(1, len(reply) // 4), delay_s=self.delay_s)

    # -- answering ------------------------------------------------------------------------

    def _task(self, text: str) -> Task | None:
        for spec, task in self._specs:
            if spec in text:
                return task
        return None

    def _answer(self, text: str, salt: str) -> str:
        task = self._task(text)
        if task is None:
            return "I cannot tell which task this is."
        code = task.reference
        wrong = self._draw(text, salt + "wrong") < self.p_wrong
        if wrong:
            found = mutants(code, kind="code" if isinstance(task, CodeTask) else "data")
            if found:
                code = found[int(self._draw(text, salt + "which") * len(found))].source
        if not isinstance(task, CodeTask):
            stated = "" if wrong else f"\nFinal answer: {task.answer:.12g}\n"
            return f"Here is the script.\n\n```python\n{code}```\n{stated}"
        style = int(self._draw(text, salt + "style") * 4)
        if style == 0:
            return f"Here is a solution.\n\n```python\n{code}```\n\nIt handles the edge cases."
        if style == 1:
            return code
        if style == 2:
            draft = f"def {task.entry_point}(*args):\n    raise NotImplementedError\n"
            usage = f"print({task.entry_point}(...))\n"
            return (
                f"A first sketch:\n```python\n{draft}```\nThe full version:\n```python\n{code}"
                f"```\nUsage:\n```python\n{usage}```\n"
            )
        return f"Sure!\n```py\n{code}```"

    # -- checking -------------------------------------------------------------------------

    def _shown_truth(self, text: str) -> str:
        for shown, truth in self.truth.items():
            if shown in text:
                return truth
        return "correct"

    def _verdict(self, text: str, salt: str) -> str:
        if "```run" in text and "Output:" not in text:
            task = self._task(text)
            name = task.entry_point if isinstance(task, CodeTask) else "answer"
            target = f"print({name}([]))" if isinstance(task, CodeTask) else "print(answer)"
            return f"Let me test it first.\n```run\n{target}\n```"
        truth = self._shown_truth(text)
        draw = self._draw(text, salt + "verdict")
        err = self.p_miss if truth == "incorrect" else self.p_false_reject
        right = "incorrect" if truth == "incorrect" else "correct"
        wrong = "correct" if truth == "incorrect" else "incorrect"
        verdict = wrong if draw < err else right
        confidence = [0.5, 0.75, 0.9, 1.0][int(self._draw(text, salt + "conf") * 4)]
        body = {"verdict": verdict, "confidence": confidence, "reason": "read the code"}
        return json.dumps(body)

    def _pairwise(self, text: str, salt: str) -> str:
        pick = "A" if self._draw(text, salt + "pick") < self.p_first else "B"
        return json.dumps({"correct": pick, "confidence": 0.75})
