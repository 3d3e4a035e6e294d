"""The executor seam itself: order, progress, errors, and the lazy import of the engines."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from vcost.errors import InputError
from vcost.executor import LocalExecutor, make_executor


def square(x: int) -> int:
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


@pytest.mark.parametrize("processes", [False, True])
def test_results_come_back_in_job_order_with_progress_in_the_caller(processes: bool) -> None:
    seen: list[tuple[int, int]] = []
    threads: set[int] = set()

    def progress(index: int, result: int) -> None:
        seen.append((index, result))
        threads.add(threading.get_ident())

    with LocalExecutor(3, processes=processes) as ex:
        assert ex.run(square, list(range(20)), progress=progress) == [x * x for x in range(20)]
    assert sorted(seen) == [(x, x * x) for x in range(20)]
    assert threads == {threading.get_ident()}


def test_a_failing_job_raises_its_error() -> None:
    with LocalExecutor(2) as ex, pytest.raises(ValueError, match="three"):
        ex.run(fail_on_three, list(range(6)))


def test_empty_batch_and_bad_settings() -> None:
    with make_executor("local", workers=2) as ex:
        assert ex.run(square, []) == []
        assert ex.workers == 2
    with pytest.raises(InputError, match="unknown executor 'spark'"):
        make_executor("spark")
    with pytest.raises(InputError, match="--address names a cluster"):
        make_executor("local", address="tcp://127.0.0.1:8786")
    with pytest.raises(InputError, match="workers must be a positive integer"):
        make_executor("local", workers=0)


def test_env_var_chooses_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VCOST_EXECUTOR", "nope")
    with pytest.raises(InputError, match="unknown executor 'nope'"):
        make_executor()


def test_the_default_path_never_imports_a_cluster_engine() -> None:
    """Grading locally must not pay for importing Dask (or Ray)."""
    code = (
        "import sys, vcost.cli, vcost.cli.grade_cmd, vcost.grader, vcost.executor\n"
        "vcost.executor.make_executor('local').close()\n"
        "bad = [m for m in ('distributed', 'dask', 'ray') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unreachable_scheduler_is_a_clear_error() -> None:
    from vcost.executor._dask import DaskExecutor

    with pytest.raises(
        InputError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"
    ):
        DaskExecutor(address="tcp://127.0.0.1:9", timeout=2)


@pytest.mark.parametrize("processes", [False, True])
def test_a_window_takes_each_job_only_when_a_slot_frees(processes: bool) -> None:
    """With window=2 the generator is asked for job i+2 only after job i's progress ran."""
    log: list[str] = []

    def jobs() -> Iterator[int]:
        for i in range(8):
            log.append(f"take {i}")
            yield i

    def progress(index: int, result: int) -> None:
        log.append(f"done {index}")

    with LocalExecutor(2, processes=processes) as ex:
        assert ex.run(square, jobs(), progress=progress, window=2) == [x * x for x in range(8)]
    for i in range(2, 8):
        taken = log.index(f"take {i}")
        assert sum(entry.startswith("done") for entry in log[:taken]) >= i - 1
    with LocalExecutor(2) as ex, pytest.raises(ValueError, match="window must be a positive"):
        ex.run(square, [1], window=0)
