"""Unit tests of the sandbox's pieces: the runner's encoding, the host's report parsing and
channel, the limits, and the pids cgroup. Pure or nearly so; no sandbox is started."""

from __future__ import annotations

import builtins
import fcntl
import json
import os
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest

from vcost.sandbox import Limits, SandboxError
from vcost.sandbox import _runner as runner
from vcost.sandbox._cgroup import PidsCgroup
from vcost.sandbox._plan import check_file_names, python_command, runner_source, sandbox_env
from vcost.sandbox._sandbox import _parse_report
from vcost.sandbox._session import RunnerLostError, _Channel


def decode(data: bytes) -> dict[str, object]:
    result = json.loads(data)
    assert isinstance(result, dict)
    return result


# ---------------------------------------------------------------- the runner's encoding


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ((1, 2), [1, 2]),
        ({"a": (None, True)}, {"a": [None, True]}),
        (3.5, 3.5),
        ("x", "x"),
    ],
)
def test_encode_accepts_json_data(value: object, expected: object) -> None:
    """Tuples become lists; other JSON data passes unchanged."""
    report = decode(runner._encode({"status": "ok", "value": value}, 10_000))
    assert report == {"status": "ok", "value": expected}


def test_encode_refuses_everything_else() -> None:
    """Non-JSON values, non-string keys, cycles and oversize results become 'raised'."""

    class Fake:
        __class__ = int  # type: ignore[assignment]  # isinstance(Fake(), int) is True

    cyclic: list[object] = []
    cyclic.append(cyclic)
    cases = {
        "set": ({1}, "non-JSON result of type set"),
        "key": ({(1, 2): 1}, "non-JSON result: dict key of type tuple"),
        "fake": (Fake(), "non-JSON result of type Fake"),
        "bytes": (b"x", "non-JSON result of type bytes"),
        "cycle": (cyclic, "result nested deeper than 200 levels"),
    }
    for name, (value, error) in cases.items():
        report = decode(runner._encode({"status": "ok", "value": value}, 10_000))
        assert report == {"status": "raised", "error": error, "mro": []}, name
    big = decode(runner._encode({"status": "ok", "value": "x" * 200}, 100))
    assert str(big["error"]).startswith("result too large")


def test_raised_names_the_exception_and_its_bases() -> None:
    class OddError(KeyError):
        def __str__(self) -> str:
            raise RuntimeError("no message for you")

    report = runner._raised(OddError())
    assert report["error"] == "OddError: <unprintable message>"
    own = f"{__name__}.test_raised_names_the_exception_and_its_bases.<locals>.OddError"
    assert report["mro"] == [own, "KeyError", "LookupError", "Exception", "BaseException"]


def test_a_class_named_like_a_builtin_is_not_taken_for_it() -> None:
    """Issue 14: a class of the answer's named ValueError (even with its module set to
    builtins) reports its module and name; only the built-in class is plain ``ValueError``."""

    class ValueError(Exception):
        pass

    ValueError.__module__ = "builtins"
    assert runner._raised(ValueError())["mro"] == [
        "builtins.test_a_class_named_like_a_builtin_is_not_taken_for_it.<locals>.ValueError",
        "Exception",
        "BaseException",
    ]
    assert runner._raised(builtins.ValueError())["mro"][0] == "ValueError"


def test_numpy_scalars_become_plain_numbers() -> None:
    numpy = pytest.importorskip("numpy")
    assert type(runner._numpy_scalar(numpy.int64(3))) is int
    assert type(runner._numpy_scalar(numpy.float64(2.5))) is float
    array = numpy.array([1, 2])
    assert runner._numpy_scalar(array) is array


# ---------------------------------------------------------------- the host's parsing


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'{"status": "ok"}',
        b'{"status": "passed", "value": 1}',
        b'{"status": "raised", "error": 3, "mro": []}',
        b'{"status": "raised", "error": "E", "mro": [1]}',
        b'{"status": "ok", "value": 1, "warnings": "w"}',
        b"[" * 100_000,
        b'{"status": "ok", "value": ' + b"9" * 5000 + b"}",
    ],
)
def test_malformed_reports_are_rejected(payload: bytes) -> None:
    """Whatever the code writes in place of a report, the host parses it safely (no
    exception, no deep recursion) and rejects it."""
    assert _parse_report(payload) is None


def test_reports_are_parsed_and_bounded() -> None:
    ok = _parse_report(b'{"status": "ok", "value": [1, {"a": null}], "warnings": ["W: w"]}')
    assert ok is not None
    assert (ok.status, ok.value, ok.warnings) == ("ok", [1, {"a": None}], ("W: w",))
    raised = _parse_report(json.dumps({"status": "raised", "error": "E" * 5000, "mro": ["E"]}))
    assert raised is not None
    assert raised.status == "raised"
    assert len(raised.error or "") == 1000
    deep = _parse_report(b'{"status": "ok", "value": ' + b"[" * 300 + b"]" * 300 + b"}")
    assert deep is not None
    assert deep.status == "raised"


# ---------------------------------------------------------------- the host's channel


def frame(header: dict[str, object], payload: bytes = b"") -> bytes:
    head = json.dumps(header).encode()
    return struct.pack(">I", len(head)) + head + struct.pack(">I", len(payload)) + payload


def channel_pair() -> tuple[_Channel, int, int]:
    """A channel reading from one pipe and writing to another, and the far ends."""
    read_fd, far_write = os.pipe()
    far_read, write_fd = os.pipe()
    return _Channel(read_fd, write_fd, max_header=4096, max_payload=4096), far_write, far_read


def test_channel_round_trip() -> None:
    channel, far_write, far_read = channel_pair()
    channel.send({"op": "call", "index": 0}, time.monotonic() + 1)
    (size,) = struct.unpack(">I", os.read(far_read, 4))
    assert json.loads(os.read(far_read, size)) == {"op": "call", "index": 0}
    os.write(far_write, frame({"kind": "result"}, b"payload"))
    assert channel.recv(time.monotonic() + 1) == ({"kind": "result"}, b"payload")


def test_channel_reports_oversize_eof_and_timeout() -> None:
    """An oversize frame is a protocol violation, an ended runner a crash, silence a
    timeout: the host never blocks past its deadline."""
    channel, far_write, _ = channel_pair()
    os.write(far_write, struct.pack(">I", 10**6))
    with pytest.raises(RunnerLostError, match="oversized"):
        channel.recv(time.monotonic() + 1)
    channel, far_write, _ = channel_pair()
    start = time.monotonic()
    with pytest.raises(RunnerLostError) as lost:
        channel.recv(time.monotonic() + 0.2)
    assert lost.value.status == "timeout"
    assert time.monotonic() - start < 1.0
    os.close(far_write)
    with pytest.raises(RunnerLostError) as ended:
        channel.recv(time.monotonic() + 1)
    assert ended.value.status == "crashed"


# ---------------------------------------------------------------- limits and plans


def test_limits_defaults_and_derived_values() -> None:
    limits = Limits()
    assert (limits.call_seconds, limits.wall_seconds, limits.memory_mb) == (2.0, 60.0, 512)
    assert (limits.processes, limits.file_mb, limits.output_kb) == (64, 16, 256)
    assert limits.output_bytes == 256 * 1024
    assert limits.scratch_bytes == 64 * 1024 * 1024
    assert limits.for_runner(nproc=False)["nproc"] == 0
    assert limits.for_runner(nproc=True)["nproc"] == 64
    for bad in ({"wall_seconds": float("inf")}, {"processes": 2}, {"output_kb": 0.5}):
        with pytest.raises(SandboxError):
            Limits(**bad)  # type: ignore[arg-type]


def test_environment_is_built_from_scratch() -> None:
    """Nothing of the host's environment reaches the sandbox; the hash seed is fixed."""
    env = sandbox_env("/tmp")
    assert env["PYTHONHASHSEED"] == "0"
    assert env["HOME"] == env["TMPDIR"] == "/tmp"
    assert env["PATH"] == "/usr/bin:/bin"
    assert not {"PYENV_ROOT", "VIRTUAL_ENV", "PYTHONPATH", "VCOST_DATABASE_URL"} & env.keys()
    command = python_command(7)
    assert command[0] == "/usr/bin/python3"
    assert command[-1] == "7"
    assert command[-2] == runner_source()


def test_file_names_are_plain() -> None:
    check_file_names({"data.csv": b"", "a-b_c.1": b""})
    for bad in ("", ".", "..", "a/b", "/etc/passwd", ".hidden", "x" * 101):
        with pytest.raises(SandboxError):
            check_file_names({bad: b""})
    with pytest.raises(SandboxError):
        check_file_names({"data.csv": "text"})  # type: ignore[dict-item]


# ---------------------------------------------------------------- the pids cgroup


def test_pids_cgroup_caps_and_kills() -> None:
    """A run's cgroup caps its processes and kills every process in it, then goes away."""
    group = PidsCgroup.create(8)
    if group is None:
        pytest.skip("no writable pids cgroup here (the sandbox then relies on RLIMIT_NPROC)")
    try:
        assert (group.path / "pids.max").read_text().strip() == "8"
        script = 'echo $$ > "$1"; for i in 1 2 3 4 5 6 7 8 9 10; do sleep 30 & done; wait'
        shell = subprocess.Popen(["/bin/sh", "-c", script, "sh", str(group.procs_file)])
        deadline = time.monotonic() + 5
        while "max 0" in (group.path / "pids.events").read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "max 0" not in (group.path / "pids.events").read_text()  # a fork was refused
        assert 1 <= len(group.pids()) <= 8
        assert group.kill_all()
        shell.wait(timeout=5)
        assert group.pids() == []
    finally:
        group.remove()
    assert not group.path.exists()


def test_channel_streams_requests_while_waiting_for_results() -> None:
    """Requests larger than a pipe holds are queued and written as the runner reads them,
    also while the host waits for a result, so the runner can read each call's input only
    when that call starts."""
    channel, far_write, far_read = channel_pair()
    big = b"x" * (1 << 20)
    channel.queue(b'{"op": "answer"}')
    channel.queue(big)
    got = bytearray()

    def runner() -> None:
        while len(got) < 4 + 16 + 4 + len(big):
            got.extend(os.read(far_read, 1 << 16))
        os.write(far_write, frame({"kind": "result"}, b"done"))

    thread = threading.Thread(target=runner)
    thread.start()
    assert channel.recv(time.monotonic() + 10) == ({"kind": "result"}, b"done")
    thread.join()
    assert bytes(got[4:20]) == b'{"op": "answer"}'
    assert bytes(got[24:]) == big


# ---------------------------------------------------------------- the runner's cleanup


def test_runner_empties_a_scratch_space(tmp_path: Path) -> None:
    """The runner empties the scratch space after an answer whatever the answer left there
    (locked directories, FIFOs, symlink loops), and refuses (raises) past its depth bound,
    which makes the host discard the sandbox."""
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "file").write_text("x")
    (tmp_path / "file").write_text("x")
    os.mkfifo(tmp_path / "a" / "fifo")
    (tmp_path / "a" / "loop").symlink_to(tmp_path)
    (tmp_path / "a" / "b").chmod(0)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        runner._empty_dir(fd, 0, [1000])
        assert os.listdir(tmp_path) == []
        deep = tmp_path
        for _ in range(runner._WIPE_DEPTH + 2):
            deep = deep / "d"
            deep.mkdir()
        with pytest.raises(OSError, match="nested too deeply"):
            runner._empty_dir(fd, 0, [1000])
    finally:
        os.close(fd)


def _template_frames(code: bytes, calls: int) -> list[tuple[int, bytes, bytes]]:
    """Run the runner's template in a forked process on ``code`` with ``calls`` requests
    (each input ``[]``) and return every frame it wrote: (call number, kind, body)."""
    request_r, request_w = os.pipe()
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the template, on fds 3 (reports) and 4 (requests) as in the sandbox
        try:
            os.close(request_w)  # else the template never sees the end of its requests
            os.close(report_r)
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (report_w, request_r)]
            os.dup2(high[0], runner._RESULT_FD)
            os.dup2(high[1], runner._REQUEST_FD)
            runner._template(bytearray(code), bytearray(b"f"), 4096)
        finally:
            os._exit(0)
    os.close(request_r)
    os.close(report_w)
    for seq in range(calls):
        os.write(request_w, runner._REQUEST.pack(2, seq, 5.0) + b"[]")
    os.close(request_w)  # the template ends once it has read every request
    data = bytearray()
    while chunk := os.read(report_r, 65536):
        data += chunk
    os.close(report_r)
    os.waitpid(pid, 0)
    frames = []
    while data:
        size, seq, kind = runner._FRAME.unpack_from(data)
        start = runner._FRAME.size
        frames.append((seq, kind, bytes(data[start : start + size])))
        del data[: start + size]
    return frames


def test_a_top_level_failure_answers_every_call_with_its_end_frame() -> None:
    """Issue 14, item 5: a module whose top level fails answers each call with the failure
    and, at once, the call's end frame (the runner waited 0.25 s per test for an end frame
    that never came: 10.4 s on a 26-test task). Working code also ends every call with one."""
    failing = _template_frames(b"import no_such_module\n", 3)
    assert [(seq, kind) for seq, kind, _ in failing] == [
        (0, b"R"),
        (0, b"E"),
        (1, b"R"),
        (1, b"E"),
        (2, b"R"),
        (2, b"E"),
    ]
    assert all(b"no_such_module" in body for _, kind, body in failing if kind == b"R")
    working = _template_frames(b"def f():\n    return 7\n", 2)
    assert [(seq, kind) for seq, kind, _ in working] == [(0, b"R"), (0, b"E"), (1, b"R"), (1, b"E")]
    assert decode(working[0][2]) == {"status": "ok", "value": 7}
