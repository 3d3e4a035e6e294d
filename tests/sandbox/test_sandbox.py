"""The Sandbox API against real bubblewrap: values, errors, limits, scripts, fallbacks."""

from __future__ import annotations

import math
import os
import textwrap
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest
from _sandbox_support import leftover_cgroups, require_bubblewrap, warm_sandboxes

import vcost.sandbox._sandbox as sandbox_module
from vcost.errors import VcostError
from vcost.sandbox import (
    CallResult,
    Isolation,
    Limits,
    Sandbox,
    SandboxError,
    WeakIsolationWarning,
)


def code(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


# ---------------------------------------------------------------- values and errors


def test_returns_plain_json_values(sandbox: Sandbox) -> None:
    """Tuples come back as lists, dicts with string keys as dicts, NaN and infinity as floats;
    every input gets its own result, in order."""
    answer = code("""
        def f(kind):
            return {
                "tuple": (1, (2, 3)),
                "dict": {"a": [None, True, 1.5]},
                "nan": float("nan"),
                "inf": -float("inf"),
                "str": "héllo",
            }[kind]
    """)
    kinds = ["tuple", "dict", "nan", "inf", "str"]
    results = sandbox.call(answer, "f", [[k] for k in kinds])
    assert [r.status for r in results] == ["ok"] * 5
    assert results[0].value == [1, [2, 3]]
    assert results[1].value == {"a": [None, True, 1.5]}
    assert math.isnan(results[2].value)
    assert results[3].value == -math.inf
    assert results[4].value == "héllo"
    assert all(r.elapsed_ms > 0 for r in results)


def test_exceptions_report_type_and_bases(sandbox: Sandbox) -> None:
    """A raised exception comes back as 'raised' with its type, message and base-class names,
    so a test expecting ValueError accepts a subclass of it."""
    answer = code("""
        class BadBooking(ValueError):
            pass
        def f(x):
            if x < 0:
                raise BadBooking(f"negative: {x}")
            return 1 / x
    """)
    bad, zero = sandbox.call(answer, "f", [[-1], [0]])
    assert bad.status == "raised"
    assert bad.error == "BadBooking: negative: -1"
    assert bad.exception_types == (
        "solution.BadBooking",
        "ValueError",
        "Exception",
        "BaseException",
    )
    assert zero.status == "raised"
    assert zero.exception_types[0] == "ZeroDivisionError"


def test_non_json_results_are_refused_inside(sandbox: Sandbox) -> None:
    """Sets, objects, numpy scalars and dicts with non-string keys are refused in the sandbox
    (status 'raised', "non-JSON result of type X"), never converted on the host."""
    answer = code("""
        import numpy
        def f(kind):
            return {
                "set": {1, 2},
                "object": object(),
                "numpy": numpy.int64(3),
                "intkeys": {1: "a"},
                "nested": [1, [2, {3}]],
            }[kind]
    """)
    kinds = ["set", "object", "numpy", "intkeys", "nested"]
    results = sandbox.call(answer, "f", [[k] for k in kinds])
    assert [r.status for r in results] == ["raised"] * 5
    assert results[0].error == "non-JSON result of type set"
    assert results[1].error == "non-JSON result of type object"
    assert results[2].error == "non-JSON result of type int64"
    assert results[3].error == "non-JSON result: dict key of type int"
    assert results[4].error == "non-JSON result of type set"
    assert all(r.exception_types == () for r in results)


def test_deeply_nested_result_is_refused(sandbox: Sandbox) -> None:
    """A result nested deeper than 200 levels is refused rather than risking the host's
    stack when it is parsed or compared."""
    answer = code("""
        def f(n):
            value = []
            for _ in range(n):
                value = [value]
            return value
    """)
    shallow, deep = sandbox.call(answer, "f", [[50], [5000]])
    assert shallow.status == "ok"
    assert deep.status == "raised"
    assert "deeper than 200" in (deep.error or "")


def test_each_call_gets_fresh_arguments_and_module_state(sandbox: Sandbox) -> None:
    """Every call runs in a fresh process: arguments decoded anew, module globals reset, so a
    call cannot see or spoil another's state."""
    answer = code("""
        seen = []
        def f(items):
            seen.append(len(items))
            items.append("mutated")
            return [len(seen), items]
    """)
    results = sandbox.call(answer, "f", [[["a"]], [["b"]], [["c"]]])
    assert [r.value for r in results] == [
        [1, ["a", "mutated"]],
        [1, ["b", "mutated"]],
        [1, ["c", "mutated"]],
    ]


def test_broken_code_fails_every_call(sandbox: Sandbox) -> None:
    """A syntax error, a missing entry point and sys.exit() are 'raised' for each call; a
    segfault is 'crashed' with the signal named."""
    syntax = sandbox.call("def f(:\n", "f", [[1], [2]])
    assert [r.status for r in syntax] == ["raised", "raised"]
    assert syntax[0].exception_types[0] == "SyntaxError"
    missing = sandbox.call("def g():\n    return 1\n", "f", [[]])
    assert missing[0].status == "raised"
    assert missing[0].exception_types[0] == "NameError"
    exits = sandbox.call("import sys\ndef f():\n    sys.exit(0)\n", "f", [[]])
    assert exits[0].exception_types[0] == "SystemExit"
    segv = sandbox.call("import ctypes\ndef f():\n    return ctypes.string_at(0)\n", "f", [[]])
    assert segv[0].status == "crashed"
    assert "SIGSEGV" in (segv[0].error or "")


def test_hash_seed_is_fixed(sandbox: Sandbox) -> None:
    """Set iteration order is the same in every run (PYTHONHASHSEED=0), so a grade does not
    flip between runs of the same answer."""
    answer = "def f(words):\n    return list(set(words))\n"
    words = [f"w{i}" for i in range(30)]
    first = sandbox.call(answer, "f", [[words]])[0].value
    second = sandbox.call(answer, "f", [[words]])[0].value
    assert first == second


# ---------------------------------------------------------------- time limits


def test_timeout_is_reported_apart_from_a_wrong_answer(sandbox: Sandbox) -> None:
    """A call that runs past its own limit is 'timeout'; a wrong value is 'ok' (to be failed
    by the grader); the calls after a timeout still run and keep their results."""
    answer = code("""
        import time
        def f(x):
            if x == 1:
                time.sleep(30)
            return x + 1 if x != 0 else -1
    """)
    results = sandbox.call(answer, "f", [[0], [1], [2], [3]], call_seconds=[2.0, 0.5, 2.0, 2.0])
    assert [r.status for r in results] == ["ok", "timeout", "ok", "ok"]
    assert results[0].value == -1
    assert results[1].error == "exceeded the time limit of 0.5 s"
    assert 500 <= results[1].elapsed_ms < 3000
    assert [r.value for r in results[2:]] == [3, 4]


def test_wall_clock_limit_bounds_the_whole_run() -> None:
    """The whole run stops at wall_seconds: the calls it cannot reach are timeouts saying
    so, and the results before it are kept."""
    require_bubblewrap()
    box = Sandbox(Isolation.BUBBLEWRAP, limits=Limits(call_seconds=5.0, wall_seconds=1.2))
    answer = "import time\ndef f(x):\n    time.sleep(x)\n    return x\n"
    results = box.call(answer, "f", [[0.1], [5], [0.1]])
    assert results[0].status == "ok"
    assert [r.status for r in results[1:]] == ["timeout", "timeout"]
    assert all("wall-clock" in (r.error or "") for r in results[1:])


def test_lost_runner_is_restarted_for_the_remaining_inputs(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the host's backstop gives up on the runner, that call is a timeout, the sandbox is
    killed and started again, and the remaining inputs still get their results."""
    monkeypatch.setattr(sandbox_module, "backstop_seconds", lambda seconds: 0.3)
    answer = "import time\ndef f(x):\n    time.sleep(x)\n    return x\n"
    results = sandbox.call(answer, "f", [[0], [1.0], [0], [0]])
    assert [r.status for r in results] == ["ok", "timeout", "ok", "ok"]
    assert leftover_cgroups() == []


# ---------------------------------------------------------------- output limits


def test_result_size_is_capped() -> None:
    """A result larger than output_kb is refused inside ('raised', "result too large")."""
    require_bubblewrap()
    box = Sandbox(Isolation.BUBBLEWRAP, limits=Limits(output_kb=8))
    small, large = box.call("def f(n):\n    return 'x' * n\n", "f", [[1000], [20_000]])
    assert small.status == "ok"
    assert large.status == "raised"
    assert (large.error or "").startswith("result too large")


def test_script_stdout_is_truncated() -> None:
    """A script's stdout is kept up to output_kb and flagged as truncated beyond it; the
    script still finishes and returns its answer."""
    require_bubblewrap()
    box = Sandbox(Isolation.BUBBLEWRAP, limits=Limits(output_kb=4))
    script = "for i in range(100_000):\n    print('line', i)\nanswer = 7\n"
    result = box.run_script(script, files={})
    assert result.status == "ok"
    assert result.value == 7
    assert result.stdout_truncated
    assert len(result.stdout) <= 4 * 1024
    assert result.stdout.startswith("line 0\n")


# ---------------------------------------------------------------- data scripts

CSV = b"region,delay\nnorth,3\nsouth,\nnorth,5\neast,2\nnorth,5\n"


def test_pandas_script_answer_stdout_and_warnings(sandbox: Sandbox) -> None:
    """A pandas script reads the read-only data.csv, its numpy answer comes back as a plain
    number, its prints are captured, and its warnings (pandas' SettingWithCopyWarning and an
    explicit one) are recorded."""
    script = code("""
        import warnings
        import pandas as pd
        df = pd.read_csv("data.csv")
        north = df[df.region == "north"]
        north["delay"] = north["delay"] * 2
        warnings.warn("check the missing delays")
        print(len(df), "rows")
        answer = df["delay"].mean()
    """)
    result = sandbox.run_script(script, files={"data.csv": CSV})
    assert result.status == "ok", result
    assert result.value == pytest.approx(3.75)
    assert result.stdout == "5 rows\n"
    assert any(w.startswith("SettingWithCopyWarning") for w in result.warnings)
    assert "UserWarning: check the missing delays" in result.warnings


def test_script_without_warnings_reports_none(sandbox: Sandbox) -> None:
    """A clean script has an empty warnings list, so 'runs without warnings' can be checked."""
    script = "import pandas as pd\nanswer = int(pd.read_csv('data.csv')['delay'].count())\n"
    result = sandbox.run_script(script, files={"data.csv": CSV})
    assert (result.status, result.value, result.warnings) == ("ok", 4, [])


def test_script_errors(sandbox: Sandbox) -> None:
    """A script that does not set its result variable, or fails, is 'raised' with the error;
    a script past its time limit is 'timeout'."""
    unset = sandbox.run_script("x = 1\n", files={})
    assert unset.status == "raised"
    assert "does not set 'answer'" in (unset.error or "")
    other_name = sandbox.run_script("result = 2\n", files={}, result_name="result")
    assert other_name.value == 2
    slow = sandbox.run_script("while True:\n    pass\n", files={}, seconds=0.5)
    assert slow.status == "timeout"


# ---------------------------------------------------------------- choosing isolation


def test_auto_uses_bubblewrap_here(sandbox: Sandbox) -> None:
    """Where bubblewrap works, 'auto' picks it, with no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Sandbox().isolation is Isolation.BUBBLEWRAP


def test_auto_falls_back_to_weak_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without bubblewrap, 'auto' falls back to WEAK with a warning naming what is missing
    and how to install it; WEAK still runs code and returns results."""
    monkeypatch.setattr(
        sandbox_module, "bubblewrap_problem", lambda: "the bwrap program is not installed"
    )
    with pytest.warns(WeakIsolationWarning, match="apt-get install bubblewrap"):
        box = Sandbox(limits=Limits(call_seconds=2.0))
    assert box.isolation is Isolation.WEAK
    assert box.call("def f(x):\n    return x * 3\n", "f", [[2]])[0].value == 6


def test_bubblewrap_on_request_fails_when_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asking for bubblewrap where it is not usable is an error, not a silent fallback."""
    monkeypatch.setattr(sandbox_module, "bubblewrap_problem", lambda: "not installed")
    with pytest.raises(SandboxError, match="bubblewrap"):
        Sandbox(Isolation.BUBBLEWRAP)


def test_none_needs_allow_unsafe() -> None:
    """Isolation NONE is refused unless allow_unsafe=True; with it, code runs (as nobody
    when vcost runs as root) with the time limits still applied."""
    with pytest.raises(SandboxError, match="allow_unsafe"):
        Sandbox(Isolation.NONE)
    box = Sandbox(Isolation.NONE, allow_unsafe=True, limits=Limits(call_seconds=0.5))
    results = box.call("def f(x):\n    while x:\n        pass\n    return 1\n", "f", [[0], [1]])
    assert [r.status for r in results] == ["ok", "timeout"]


def test_sandbox_error_is_a_vcost_error() -> None:
    """SandboxError is part of vcost's error tree, and bad arguments raise it with a hint."""
    assert issubclass(SandboxError, VcostError)
    with pytest.raises(SandboxError):
        Sandbox("docker")  # type: ignore[arg-type]
    with pytest.raises(SandboxError):
        Limits(call_seconds=0)
    with pytest.raises(SandboxError):
        Limits(memory_mb=True)


def test_bad_arguments_are_refused_before_running(sandbox: Sandbox) -> None:
    """Inputs that are not JSON, bad entry points, unsafe file names and mismatched time
    limits are refused on the host."""
    with pytest.raises(SandboxError, match="not plain JSON"):
        sandbox.call("def f(x): return x", "f", [[{1, 2}]])
    with pytest.raises(SandboxError, match="identifier"):
        sandbox.call("def f(x): return x", "f; import os", [[1]])
    with pytest.raises(SandboxError, match="sequence of arguments"):
        sandbox.call("def f(x): return x", "f", ["abc"])
    with pytest.raises(SandboxError, match="time limits"):
        sandbox.call("def f(x): return x", "f", [[1]], call_seconds=[1.0, 2.0])
    with pytest.raises(SandboxError, match="cannot be placed"):
        sandbox.run_script("answer = 1", files={"../data.csv": b""})
    assert sandbox.call("def f(x): return x", "f", []) == []


def test_call_result_is_plain_data() -> None:
    """CallResult is a frozen record with the fields the grader reads."""
    result = CallResult("ok", [1], None, 1.0)
    assert result.exception_types == ()
    with pytest.raises(AttributeError):
        result.status = "raised"  # type: ignore[misc]


def test_missing_bubblewrap_fails_in_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With CI=true a missing bubblewrap fails the sandbox tests instead of skipping them;
    elsewhere they skip with the reason."""
    import _sandbox_support

    monkeypatch.setattr(_sandbox_support, "bubblewrap_problem", lambda: "bwrap not installed")
    monkeypatch.setattr(_sandbox_support, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match="required in CI"):
        _sandbox_support.require_bubblewrap()
    monkeypatch.setattr(_sandbox_support, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match="bwrap not installed"):
        _sandbox_support.require_bubblewrap()


# ---------------------------------------------------------------- warm sandboxes


def test_module_top_level_runs_once_per_answer(warm: Sandbox) -> None:
    """An answer's module top level runs once (each call is a fork of the process that ran
    it), and again only after a call timed out; the next answer starts from an empty
    scratch space."""
    answer = code("""
        import time
        with open("/tmp/top-level-runs", "a") as handle:
            handle.write("x")
        def f(x):
            if x == "slow":
                time.sleep(30)
            with open("/tmp/top-level-runs") as handle:
                return len(handle.read())
    """)
    results = warm.call(answer, "f", [[1], [2], ["slow"], [3]], call_seconds=[2.0, 2.0, 0.5, 2.0])
    assert [(r.status, r.value) for r in results] == [
        ("ok", 1),
        ("ok", 1),
        ("timeout", None),
        ("ok", 2),
    ]
    assert [(r.status, r.value) for r in warm.call(answer, "f", [[1]])] == [("ok", 1)]


def test_warm_sandboxes_are_reused_and_closed(warm: Sandbox) -> None:
    """A warm Sandbox keeps one sandbox per caller between answers and reuses it; close()
    ends it (the Sandbox stays usable), and so does leaving a ``with`` block."""
    idle = warm_sandboxes(warm)
    assert len(idle) == 1
    assert warm.call("def f(x):\n    return -x\n", "f", [[3]])[0].value == -3
    assert warm_sandboxes(warm) == idle
    warm.close()
    assert warm_sandboxes(warm) == []
    assert leftover_cgroups() == []
    assert warm.call("def f(x):\n    return -x\n", "f", [[4]])[0].value == -4
    with Sandbox(Isolation.BUBBLEWRAP) as box:
        assert box.call("def f():\n    return 1\n", "f", [[]])[0].value == 1
        assert len(warm_sandboxes(box)) == 1
    assert warm_sandboxes(box) == []


def test_cold_sandbox_starts_one_per_call() -> None:
    """With warm=False every call starts and ends its own sandbox: nothing is kept."""
    require_bubblewrap()
    box = Sandbox(Isolation.BUBBLEWRAP, warm=False)
    results = box.call("def f(x):\n    return x * 2\n", "f", [[1], [2]])
    assert [r.value for r in results] == [2, 4]
    assert warm_sandboxes(box) == []


def test_concurrent_callers_get_their_own_sandboxes(warm: Sandbox) -> None:
    """Callers on several threads each use a sandbox of their own, and every answer gets its
    own results."""
    answer = "import time\ndef f(x):\n    time.sleep(0.05)\n    return [x, x * x]\n"
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = list(pool.map(lambda n: warm.call(answer, "f", [[n], [n + 1]]), range(9)))
    assert [[r.value for r in run] for run in runs] == [
        [[n, n * n], [n + 1, (n + 1) ** 2]] for n in range(9)
    ]
    assert 1 <= len(warm_sandboxes(warm)) <= max(2, os.cpu_count() or 1)


def test_a_forked_host_process_starts_its_own_sandboxes(warm: Sandbox) -> None:
    """A host process forked after a warm sandbox was started never uses or ends its
    parent's sandbox: it starts its own, and the parent's keeps working."""
    idle = warm_sandboxes(warm)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child reports through the pipe)
        status = 1
        try:
            result = warm.call("def f(x):\n    return x + 1\n", "f", [[41]])[0]
            mine = warm_sandboxes(warm)
            warm.close()
            ok = result.value == 42 and len(mine) == 1 and mine != idle
            os.write(write_fd, b"ok" if ok else repr((result, mine)).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_fd)
    try:
        report = os.read(read_fd, 4096)
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    assert report == b"ok"
    assert warm_sandboxes(warm) == idle
    assert warm.call("def f(x):\n    return x - 1\n", "f", [[43]])[0].value == 42


def test_the_probes_sandbox_grades_the_first_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14 (the `vcost grade` bench): probing bubblewrap starts a real sandbox; the
    first warm bubblewrap Sandbox with the default limits takes that sandbox, clean after
    the probe's trial answer, instead of starting another, and grades in it. A Sandbox with
    other limits never takes it (its limits are not the probe's)."""
    require_bubblewrap()
    monkeypatch.setattr(sandbox_module, "_probe_cache", {})
    assert sandbox_module.bubblewrap_problem() is None
    with Sandbox(Isolation.BUBBLEWRAP, limits=Limits(call_seconds=1.5)) as other:
        assert warm_sandboxes(other) == []
    probed = [path for path in all_idle_cgroups() if path not in pool_cgroups()]
    assert len(probed) >= 1  # the probe's sandbox, waiting for a taker
    with Sandbox(Isolation.BUBBLEWRAP) as box:
        taken = warm_sandboxes(box)
        assert len(taken) == 1
        assert taken[0] in probed
        assert box.call("def f(x):\n    return x * 2\n", "f", [[21]])[0].value == 42
        assert warm_sandboxes(box) == taken  # graded in the probe's sandbox, left clean
    assert leftover_cgroups() == []


def pool_cgroups() -> list[str]:
    from vcost.sandbox._pool import _pools

    return [path for pool in list(_pools) for path in pool.idle_cgroups(every_kind=True)]


def all_idle_cgroups() -> list[str]:
    from vcost.sandbox._pool import idle_cgroups

    return idle_cgroups()


def test_a_niced_sandbox_runs_every_process_at_that_priority() -> None:
    """``Limits.nice`` is added to the nice value of the runner and of what the code forks
    (the web harness runs Runs at 19 so they yield the CPU to participants' requests)."""
    require_bubblewrap()
    script = (
        "import os, subprocess\n"
        "child = subprocess.run(['python3', '-c', 'import os; print(os.nice(0))'],"
        " capture_output=True, text=True).stdout.strip()\n"
        "answer = [os.nice(0), int(child)]\n"
    )
    # closed at the end: no warm sandbox of this test may outlive it (other tests count them)
    with Sandbox(Isolation.BUBBLEWRAP, limits=Limits(nice=19)) as niced:
        result = niced.run_script(script, files={}, result_name="answer")
    assert result.status == "ok", result.error
    expected = min(19, os.nice(0) + 19)
    assert result.value == [expected, expected]
    with Sandbox(Isolation.BUBBLEWRAP) as plain:
        result = plain.run_script(script, files={}, result_name="answer")
    assert result.value == [os.nice(0), os.nice(0)]


@pytest.mark.parametrize("nice", [-1, 20, True, 1.5])
def test_a_nice_value_outside_0_to_19_is_refused(nice: object) -> None:
    with pytest.raises(SandboxError, match=r"Limits\.nice"):
        Limits(nice=nice)  # type: ignore[arg-type]
