"""Code extraction through `vcost answers generate` (a real local server sends each reply):
fences inside list items, CRLF replies, longer closing fences, helpers in an earlier block."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from vcost.cli import cli
from vcost.models.testing import API_KEY, KEY_ENV, ProviderServer, Reply
from vcost.tasks import BUNDLED_BANK, CodeTask, load_bank

TASK = "e-electricity-bill"


def _reference() -> str:
    (task,) = [t for t in load_bank(BUNDLED_BANK) if t.id == TASK]
    assert isinstance(task, CodeTask)
    return task.reference


def _list_item() -> str:
    code = textwrap.indent(_reference(), "   ")
    return f"Steps:\n\n1. The function:\n\n   ```python\n{code}   ```\n\n2. Done.\n"


def _crlf() -> str:
    return f"Here it is:\n```python\n{_reference()}```\nHope this helps!\n".replace("\n", "\r\n")


def _long_close() -> str:
    return f"```python\n{_reference()}````\n\nThat is all.\n"


def _helper_earlier() -> str:
    helper = "def _positive_total(days):\n    return sum(k for k in days if k > 0)\n"
    body = _reference().replace(
        "    total = 0\n    for kwh in daily_kwh:\n        if kwh > 0:\n            total += kwh\n",
        "    total = _positive_total(daily_kwh)\n",
    )
    assert "_positive_total" in body
    return f"A helper:\n```python\n{helper}```\nAnd the function:\n```python\n{body}```\n"


@pytest.mark.parametrize("reply", [_list_item, _crlf, _long_close, _helper_earlier])
def test_extracted_answer_is_graded_correct(
    reply: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    text = reply()  # type: ignore[operator]
    server = ProviderServer("openai", lambda _r: Reply(text=text, output_tokens=50)).start()
    try:
        models = tmp_path / "models.toml"
        models.write_text(
            '[[models]]\nname = "m"\nprovider = "openai"\nmodel = "m-id"\n'
            f'family = "fam"\nbase_url = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\n'
            "max_tokens = 2000\nmax_retries = 1\n"
        )
        result = CliRunner().invoke(
            cli, ["answers", "generate", "--models", str(models), "--task", TASK, "-n", "1",
                  "--out", str(tmp_path / "run"), "--json"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    finally:
        server.stop()
    (record,) = [json.loads(x) for x in (tmp_path / "run/answers.jsonl").read_text().splitlines()]
    assert record["extraction"] != "none"
    assert record["ground_truth"] == "correct", (record["extraction"], record["code"])


def test_a_changed_configuration_under_one_alias_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answer ids are alias/task/repeat: a rerun with another temperature once reported
    "already there" and mixed configurations; now it is one clear message."""
    monkeypatch.setenv(KEY_ENV, API_KEY)
    text = f"```python\n{_reference()}```\n"
    server = ProviderServer("openai", lambda _r: Reply(text=text, output_tokens=50)).start()
    try:
        outputs = []
        for temperature in ("0.0", "0.7"):
            models = tmp_path / "models.toml"
            models.write_text(
                '[[models]]\nname = "m"\nprovider = "openai"\nmodel = "m-id"\n'
                f'family = "fam"\nbase_url = "{server.base_url}"\n'
                f'api_key_env = "{KEY_ENV}"\ntemperature = {temperature}\nmax_retries = 1\n'
            )
            outputs.append(CliRunner().invoke(
                cli, ["answers", "generate", "--models", str(models), "--task", TASK, "-n", "1",
                      "--out", str(tmp_path / "run")],
            ))  # fmt: skip
    finally:
        server.stop()
    assert outputs[0].exit_code == 0, outputs[0].output
    assert outputs[1].exit_code == 2, outputs[1].output
    assert "answers.jsonl" in outputs[1].output
    assert "temperature 0.0 -> 0.7" in outputs[1].output


def test_select_blinds_docstrings_and_the_runs_own_names_but_not_benign_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `vcost answers generate` then `vcost answers select`: a docstring naming Claude
    reached checkers; the models file's snapshot and family were not blinded; and an alias
    that is an ordinary word ("local") stripped "# local copy of x"."""
    monkeypatch.setenv(KEY_ENV, API_KEY)
    code = _reference().replace(
        "def electricity_bill(daily_kwh):\n",
        'def electricity_bill(daily_kwh):\n    """Written by Claude for you."""\n'
        "    # local copy of x\n    # tuned for acme-coder-7b-0917 and AcmeLabs\n",
    )
    leaky = code.replace("return 0\n", 'print("Made by Claude")\n        return 0\n', 1)
    replies = iter([f"```python\n{code}```\n", f"```python\n{leaky}```\n"])
    server = ProviderServer("openai", lambda _r: Reply(text=next(replies), output_tokens=50))
    server.start()
    try:
        models = tmp_path / "models.toml"
        models.write_text(
            '[[models]]\nname = "local"\nprovider = "openai"\nmodel = "acme-coder"\n'
            'snapshot = "acme-coder-7b-0917"\nfamily = "AcmeLabs"\n'
            f'base_url = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\nmax_retries = 1\n'
            "concurrency = 1\n"
        )
        runner = CliRunner()
        made = runner.invoke(
            cli, ["answers", "generate", "--models", str(models), "--task", TASK, "-n", "2",
                  "--out", str(tmp_path / "run"), "--concurrency", "1"],
        )  # fmt: skip
        assert made.exit_code == 0, made.output
    finally:
        server.stop()
    selected = runner.invoke(
        cli, ["answers", "select", str(tmp_path / "run/answers.jsonl"), "--out",
              str(tmp_path / "sel.json")],
    )  # fmt: skip
    assert selected.exit_code == 0, selected.output
    selection = json.loads((tmp_path / "sel.json").read_text())
    shown = "".join(a["shown"] for a in selection["answers"])
    assert {a["answer_id"] for a in selection["answers"] if a["source"] == "model"} == {
        "local/e-electricity-bill/0"
    }
    assert "Claude" not in shown
    assert "acme-coder-7b-0917" not in shown
    assert "AcmeLabs" not in shown
    assert "# local copy of x" in shown
    assert any("string literal names a model" in n for n in selection["notes"])


def test_an_empty_200_reply_is_retried_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty reply (200, no text) once became an obvious natural error at once; it is now
    retried once, and the second reply is the answer."""
    monkeypatch.setenv(KEY_ENV, API_KEY)
    server = ProviderServer("openai").start()
    server.enqueue(Reply(text="", output_tokens=0), Reply(text=f"```python\n{_reference()}```\n"))
    try:
        models = tmp_path / "models.toml"
        models.write_text(
            '[[models]]\nname = "m"\nprovider = "openai"\nmodel = "m-id"\n'
            f'base_url = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\nmax_retries = 2\n'
        )
        result = CliRunner().invoke(
            cli, ["answers", "generate", "--models", str(models), "--task", TASK, "-n", "1",
                  "--out", str(tmp_path / "run")],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 2
    finally:
        server.stop()
    (record,) = [json.loads(x) for x in (tmp_path / "run/answers.jsonl").read_text().splitlines()]
    assert record["ground_truth"] == "correct"


def test_a_missing_api_key_is_said_once_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No base_url and the key's variable unset: `vcost models check` says so, and a recording
    run stops before any call with one message (it was one error per call)."""
    monkeypatch.delenv("VCOST_NO_SUCH_KEY", raising=False)
    models = tmp_path / "models.toml"
    models.write_text(
        '[[models]]\nname = "m"\nprovider = "openai"\nmodel = "gpt-x"\n'
        'api_key_env = "VCOST_NO_SUCH_KEY"\n'
    )
    runner = CliRunner()
    checked = runner.invoke(cli, ["models", "check", str(models)])
    assert checked.exit_code == 0, checked.output
    assert "API key not set for m (VCOST_NO_SUCH_KEY)" in checked.output
    result = runner.invoke(
        cli, ["answers", "generate", "--models", str(models), "--task", TASK, "-n", "3",
              "--out", str(tmp_path / "run"), "--mode", "record"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.output.count("VCOST_NO_SUCH_KEY") == 1
    assert not (tmp_path / "run" / "answers.jsonl").exists()
    auto = runner.invoke(
        cli, ["answers", "generate", "--models", str(models), "--task", TASK, "-n", "1",
              "--out", str(tmp_path / "run2")],
    )  # fmt: skip
    assert "warning: API key not set for m (VCOST_NO_SUCH_KEY)" in auto.output
