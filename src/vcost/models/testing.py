"""Small real HTTP servers that speak the OpenAI Chat Completions and Anthropic Messages wire
formats, for tests, benchmarks and offline rehearsals. No patching: the official SDKs talk to them
over loopback TCP.

Each server answers ``POST /v1/chat/completions`` (openai) or ``POST /v1/messages`` (anthropic).
Behaviour is programmed by queueing :class:`Reply` objects; with the queue empty it asks its
``responder`` (a function of the request body, if set), else echoes the last user message. It
checks the API key (401 otherwise), answers 404 for the model id ``no-such-model``, streams
Server-Sent Events when the request asks for ``stream: true``, and counts requests and the
largest number in flight at once.

Both also speak their provider's **batch** endpoints, written from the providers' documented
wire formats:

- OpenAI Batch: ``POST /v1/files`` (multipart, ``purpose=batch``, a JSONL file of
  ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` lines),
  ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``),
  ``GET /v1/batches/{id}`` (``status`` validating → in_progress → completed | expired, with
  ``output_file_id`` / ``error_file_id``) and ``GET /v1/files/{id}/content``: output lines
  ``{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error": null}``;
  failed and expired requests go to the error file (``error.code`` ``batch_expired`` for the
  latter).
- Anthropic Message Batches: ``POST /v1/messages/batches`` (``requests``: ``custom_id`` and
  ``params``), ``GET /v1/messages/batches/{id}`` (``processing_status`` in_progress → ended,
  ``request_counts``, ``results_url``) and ``GET /v1/messages/batches/{id}/results``: JSONL lines
  ``{"custom_id", "result": {"type": "succeeded", "message"} | {"type": "errored", "error"} |
  {"type": "expired"}}``.

Each request of a batch is answered like a live call (the queue, the responder or the echo). A
batch ends after ``batch_polls`` status reads, never while ``hold_batches`` is set; the next
``expire_next`` requests processed expire instead of being answered; the next
``fail_next_batches`` OpenAI batches fail validation (status ``failed``, reasons in ``errors``).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from vcost.models import ModelConfig

Provider = Literal["openai", "anthropic"]
API_KEY = "test-key"
KEY_ENV = "VCOST_TEST_MODEL_KEY"


class SleepLog:
    """Records the waits a RetryPolicy asks for instead of sleeping them (tests stay fast)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


UNKNOWN_MODEL = "no-such-model"


@dataclass(frozen=True)
class Reply:
    """One programmed answer. ``status`` != 200 sends the provider's error JSON; ``body`` sends
    those bytes as they are (with ``application/json``); ``text`` None echoes the prompt."""

    status: int = 200
    text: str | None = None
    finish_reason: str | None = None
    input_tokens: int = 11
    output_tokens: int = 7
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    error_code: str | None = None

    @classmethod
    def error(
        cls, status: int, *, retry_after: str | None = None, code: str | None = None
    ) -> Reply:
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return cls(status=status, headers=headers, error_code=code)

    @classmethod
    def malformed(cls) -> Reply:
        return cls(body=b'{"id": "x", "choices": [ this is not json')

    @classmethod
    def slow(cls, delay_s: float) -> Reply:
        return cls(delay_s=delay_s)

    @classmethod
    def empty(cls) -> Reply:
        return cls(text="", output_tokens=0, finish_reason="length")


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default 5 resets connections when many clients connect at once


class ProviderServer:
    """A threaded HTTP server for one provider's wire format on 127.0.0.1 (a free port)."""

    def __init__(
        self, provider: Provider, responder: Callable[[dict[str, Any]], Reply] | None = None
    ) -> None:
        self.provider: Provider = provider
        self.responder = responder
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.request_seen = threading.Event()
        # batch endpoints (module docstring)
        self.batch_polls = 1
        self.hold_batches = False
        self.expire_next = 0
        self.fail_next_batches = 0
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_inputs: dict[str, list[dict[str, Any]]] = {}
        self.batch_results: dict[str, list[dict[str, Any]]] = {}
        self._polls: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # do not wait for handlers a test left sleeping
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.running = False

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The base_url each SDK wants: OpenAI's includes /v1, Anthropic's does not."""
        return f"{self.url}/v1" if self.provider == "openai" else self.url

    def start(self) -> ProviderServer:
        self._thread.start()
        self.running = True
        return self

    def stop(self) -> None:
        """Stop serving and free the port (also for a server that was never started)."""
        if self.running:
            self._httpd.shutdown()
            self.running = False
        self._httpd.server_close()

    def enqueue(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def reset(self, idle_timeout_s: float = 5.0) -> None:
        """Clear the queue and counters, once the requests still in flight (say, ones a client
        gave up on) have finished."""
        deadline = time.monotonic() + idle_timeout_s
        while self.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        with self.lock:
            self.replies.clear()
            self.requests.clear()
            self.max_in_flight = self.in_flight

    @property
    def count(self) -> int:
        with self.lock:
            return len(self.requests)

    # -- the wire formats -------------------------------------------------------------------

    def error_body(self, status: int, code: str | None, model: str) -> dict[str, Any]:
        message = {
            401: "Incorrect API key provided.",
            404: f"The model `{model}` does not exist or you do not have access to it.",
            429: "Rate limit reached. Please try again later.",
        }.get(status, "The server had an error while processing your request.")
        if self.provider == "openai":
            default = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
            return {
                "error": {
                    "message": message,
                    "type": "invalid_request_error" if status < 500 else "server_error",
                    "param": None,
                    "code": code or default.get(status),
                }
            }
        kinds = {
            401: "authentication_error",
            403: "permission_error",
            404: "not_found_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }
        return {
            "type": "error",
            "error": {"type": code or kinds.get(status, "api_error"), "message": message},
        }

    def body(self, reply: Reply, model: str, text: str) -> dict[str, Any]:
        if self.provider == "openai":
            return {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": model,
                "system_fingerprint": "fp_test",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text, "refusal": None},
                        "logprobs": None,
                        "finish_reason": reply.finish_reason or "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": reply.input_tokens,
                    "completion_tokens": reply.output_tokens,
                    "total_tokens": reply.input_tokens + reply.output_tokens,
                },
            }
        return {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": reply.finish_reason or "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }

    def events(self, reply: Reply, model: str, text: str) -> list[tuple[str | None, str]]:
        """SSE (event, data) pairs for a streamed reply, in three pieces of text."""
        third = max(1, len(text) // 3)
        pieces = [text[i : i + third] for i in range(0, len(text), third)]
        if self.provider == "openai":
            base = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000,
                "model": model,
            }
            out = [
                {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
            ]
            out += [
                {**base, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
                for p in pieces
            ]
            out.append(
                {
                    **base,
                    "choices": [
                        {"index": 0, "delta": {}, "finish_reason": reply.finish_reason or "stop"}
                    ],
                }
            )
            usage = {
                "prompt_tokens": reply.input_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": reply.input_tokens + reply.output_tokens,
            }
            out.append({**base, "choices": [], "usage": usage})
            lines: list[tuple[str | None, str]] = [(None, json.dumps(c)) for c in out]
            return [*lines, (None, "[DONE]")]
        start = self.body(reply, model, "")
        start["stop_reason"] = None
        start["usage"] = {"input_tokens": reply.input_tokens, "output_tokens": 1}
        seq: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            ("ping", {"type": "ping"}),
        ]
        seq += [
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": p},
                },
            )
            for p in pieces
        ]
        seq += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": reply.finish_reason or "end_turn",
                        "stop_sequence": None,
                    },
                    "usage": {"output_tokens": reply.output_tokens},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return [(name, json.dumps(data)) for name, data in seq]

    # -- batches ------------------------------------------------------------------------

    @property
    def batches_created(self) -> int:
        with self.lock:
            return len(self.batches)

    def respond(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One request answered as a live call would be (status, JSON body), for a batch."""
        with self.lock:
            queued = self.replies.popleft() if self.replies else None
        if queued is not None:
            reply = queued
        elif self.responder is not None:
            reply = self.responder(request)
        else:
            reply = Reply()
        model = str(request.get("model", ""))
        status = 404 if model == UNKNOWN_MODEL else reply.status
        if status != 200:
            return status, self.error_body(status, reply.error_code, model)
        return 200, self.body(reply, model, _reply_text(reply, request))

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    def upload(self, content: bytes) -> dict[str, Any]:
        file_id = self._new_id("file-")
        with self.lock:
            self.files[file_id] = content
        return {
            "id": file_id, "object": "file", "bytes": len(content), "created_at": 1_700_000_000,
            "filename": "batch.jsonl", "purpose": "batch", "status": "processed",
        }  # fmt: skip

    def create_batch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.provider == "openai":
            content = self.files.get(str(body.get("input_file_id")))
            if content is None or body.get("endpoint") != "/v1/chat/completions":
                return 400, self.error_body(400, "invalid_request_error", "")
            lines = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
            requests = [{"custom_id": x["custom_id"], "params": x["body"]} for x in lines]
            batch_id = self._new_id("batch_")
            batch: dict[str, Any] = {
                "id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                "errors": None, "input_file_id": body["input_file_id"],
                "completion_window": body.get("completion_window", "24h"),
                "status": "validating", "output_file_id": None, "error_file_id": None,
                "created_at": 1_700_000_000, "request_counts": {
                    "total": len(requests), "completed": 0, "failed": 0},
                "metadata": body.get("metadata"),
            }  # fmt: skip
        else:
            requests = list(body.get("requests", []))
            batch_id = self._new_id("msgbatch_")
            batch = {
                "id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0,
                                   "canceled": 0, "expired": 0},
                "ended_at": None, "created_at": "2026-01-01T00:00:00Z",
                "expires_at": "2026-01-02T00:00:00Z", "cancel_initiated_at": None,
                "archived_at": None, "results_url": None,
            }  # fmt: skip
        with self.lock:
            self.batches[batch_id] = batch
            self.batch_inputs[batch_id] = requests
            self._polls[batch_id] = 0
        return 200, batch

    def poll_batch(self, batch_id: str) -> tuple[int, dict[str, Any]]:
        with self.lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, self.error_body(404, None, batch_id)
            self._polls[batch_id] += 1
            due = not self.hold_batches and self._polls[batch_id] >= self.batch_polls
            ended = batch_id in self.batch_results
        if due and not ended:
            self._finish(batch_id)
        elif not ended and self.provider == "openai":
            batch["status"] = "in_progress"
        return 200, batch

    def _finish(self, batch_id: str) -> None:
        batch = self.batches[batch_id]
        with self.lock:
            fail = self.provider == "openai" and self.fail_next_batches > 0
            self.fail_next_batches -= fail
        if fail:  # an OpenAI batch that failed validation: no files, the reasons in errors
            batch["status"] = "failed"
            batch["errors"] = {
                "object": "list",
                "data": [{"code": "invalid_request", "message": "Test failure of the batch.",
                          "param": None, "line": 1}],
            }  # fmt: skip
            with self.lock:
                self.batch_results[batch_id] = []
            return
        results: list[dict[str, Any]] = []
        for item in self.batch_inputs[batch_id]:
            with self.lock:
                expire = self.expire_next > 0
                self.expire_next -= expire
            if expire:
                results.append({"custom_id": item["custom_id"], "expired": True})
                continue
            status, body = self.respond(item["params"])
            results.append({"custom_id": item["custom_id"], "status": status, "body": body})
        ok = [r for r in results if r.get("status") == 200]
        expired = [r for r in results if r.get("expired")]
        errored = [r for r in results if r not in ok and r not in expired]
        if self.provider == "openai":
            out = [
                {"id": self._new_id("batch_req_"), "custom_id": r["custom_id"],
                 "response": {"status_code": 200, "request_id": "req_test", "body": r["body"]},
                 "error": None} for r in ok
            ]  # fmt: skip
            err = [
                {"id": self._new_id("batch_req_"), "custom_id": r["custom_id"],
                 "response": {"status_code": r["status"], "request_id": "req_test",
                              "body": r["body"]}, "error": None} for r in errored
            ] + [
                {"id": self._new_id("batch_req_"), "custom_id": r["custom_id"], "response": None,
                 "error": {"code": "batch_expired",
                           "message": "This request could not be executed before the "
                           "completion window expired."}} for r in expired
            ]  # fmt: skip
            batch["output_file_id"] = self.upload(_jsonl(out))["id"] if out else None
            batch["error_file_id"] = self.upload(_jsonl(err))["id"] if err else None
            batch["status"] = "expired" if expired else "completed"
            batch["request_counts"] = {
                "total": len(results), "completed": len(ok), "failed": len(errored) + len(expired)
            }  # fmt: skip
            lines = out + err
        else:
            lines = []
            for r in results:
                if r.get("expired"):
                    result: dict[str, Any] = {"type": "expired"}
                elif r["status"] == 200:
                    result = {"type": "succeeded", "message": r["body"]}
                else:
                    result = {"type": "errored", "error": r["body"]}
                lines.append({"custom_id": r["custom_id"], "result": result})
            batch["processing_status"] = "ended"
            batch["ended_at"] = "2026-01-01T01:00:00Z"
            batch["request_counts"] = {
                "processing": 0, "succeeded": len(ok), "errored": len(errored),
                "canceled": 0, "expired": len(expired),
            }  # fmt: skip
            batch["results_url"] = f"{self.url}/v1/messages/batches/{batch_id}/results"
        with self.lock:
            self.batch_results[batch_id] = lines

    def batch_get(self, path: str) -> tuple[int, bytes, str]:
        """A GET on a batch endpoint: (status, body, content type)."""
        if self.provider == "openai":
            found = re.fullmatch(r"/v1/batches/([\w-]+)", path)
            if found:
                status, body = self.poll_batch(found.group(1))
                return status, json.dumps(body).encode(), "application/json"
            found = re.fullmatch(r"/v1/files/([\w-]+)/content", path)
            if found and found.group(1) in self.files:
                return 200, self.files[found.group(1)], "application/octet-stream"
        else:
            found = re.fullmatch(r"/v1/messages/batches/([\w-]+)", path)
            if found:
                status, body = self.poll_batch(found.group(1))
                return status, json.dumps(body).encode(), "application/json"
            found = re.fullmatch(r"/v1/messages/batches/([\w-]+)/results", path)
            if found and found.group(1) in self.batch_results:
                return 200, _jsonl(self.batch_results[found.group(1)]), "application/x-jsonl"
        return 404, json.dumps(self.error_body(404, None, "")).encode(), "application/json"

    def batch_post(self, path: str, raw: bytes, content_type: str) -> tuple[int, dict[str, Any]]:
        """A POST on a batch endpoint: (status, JSON body)."""
        if self.provider == "openai" and path == "/v1/files":
            form = BytesParser(policy=email_policy).parsebytes(
                f"Content-Type: {content_type}\r\n\r\n".encode() + raw
            )
            fields: dict[str, bytes] = {}
            for part in form.iter_parts():
                name = part.get_param("name", header="content-disposition")
                payload = part.get_payload(decode=True)
                if isinstance(name, str) and isinstance(payload, bytes):
                    fields[name] = payload
            if fields.get("purpose") != b"batch" or "file" not in fields:
                return 400, self.error_body(400, "invalid_request_error", "")
            return 200, self.upload(fields["file"])
        if path in ("/v1/batches", "/v1/messages/batches"):
            return self.create_batch(json.loads(raw or b"{}"))
        return 404, self.error_body(404, None, "")


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _reply_text(reply: Reply, request: dict[str, Any]) -> str:
    """The reply's text, or an echo of the last user message."""
    if reply.text is not None:
        return reply.text
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    content = users[-1]["content"] if users else None
    return f"echo: {content}" if content is not None else "echo"


def _handler_for(server: ProviderServer) -> type[BaseHTTPRequestHandler]:
    path = "/v1/chat/completions" if server.provider == "openai" else "/v1/messages"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in two writes: without TCP_NODELAY, Nagle's algorithm and
        # the client's delayed ACK stall every reply by ~40 ms
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _key_ok(self) -> bool:
            # OpenAI sends a bearer token; Anthropic's SDK sent x-api-key, newer ones a bearer
            return self.headers.get("Authorization") == f"Bearer {API_KEY}" or (
                server.provider == "anthropic" and self.headers.get("x-api-key") == API_KEY
            )

        def _count(self, body: Any) -> None:
            with server.lock:
                server.requests.append(
                    {"path": self.path, "body": body, "headers": dict(self.headers)}
                )
            server.request_seen.set()

        def do_GET(self) -> None:
            self._count(None)
            if not self._key_ok():
                body = json.dumps(server.error_body(401, None, "")).encode()
                self._send(401, body, {})
                return
            status, body, kind = server.batch_get(self.path.split("?")[0])
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if self.path in ("/v1/files", "/v1/batches", "/v1/messages/batches"):
                self._count({"batch": self.path})
                if not self._key_ok():
                    self._send(401, json.dumps(server.error_body(401, None, "")).encode(), {})
                    return
                status, body = server.batch_post(
                    self.path, raw, self.headers.get("Content-Type", "")
                )
                self._send(status, json.dumps(body).encode(), {})
                return
            request = json.loads(raw or b"{}")
            with server.lock:
                server.requests.append(
                    {"path": self.path, "body": request, "headers": dict(self.headers)}
                )
                queued = server.replies.popleft() if server.replies else None
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            server.request_seen.set()
            try:
                if queued is not None:
                    reply = queued
                elif server.responder is not None:
                    reply = server.responder(request)
                else:
                    reply = Reply()
                self._answer(request, reply)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)
            finally:
                with server.lock:
                    server.in_flight -= 1

        def _answer(self, request: dict[str, Any], reply: Reply) -> None:
            if reply.delay_s:
                time.sleep(reply.delay_s)
            model = str(request.get("model", ""))
            key_ok = self._key_ok()
            status = reply.status
            if self.path != path:
                status = 404
            elif not key_ok:
                status = 401
            elif model == UNKNOWN_MODEL:
                status = 404
            if status != 200:
                body = server.error_body(status, reply.error_code, model)
                self._send(status, json.dumps(body).encode(), reply.headers)
                return
            if reply.body is not None:
                self._send(200, reply.body, reply.headers)
                return
            text = _reply_text(reply, request)
            if request.get("stream"):
                self._stream(server.events(reply, model, text))
                return
            self._send(200, json.dumps(server.body(reply, model, text)).encode(), reply.headers)

        def _stream(self, events: list[tuple[str | None, str]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for name, data in events:
                chunk = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
                self.wfile.write(chunk.encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler


def make_config(server: ProviderServer, **overrides: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "name": f"test-{server.provider}",
        "provider": server.provider,
        "model": "test-model",
        "snapshot": "test-model-2026-01-01",
        "family": "test",
        "base_url": server.base_url,
        "api_key_env": KEY_ENV,
        "temperature": 0.5,
        "max_tokens": 64,
        "system_prompt": "Answer briefly.",
        "seed": 7,
        "timeout_s": 5.0,
        "max_retries": 3,
        "concurrency": 4,
        "input_price_per_mtok": 2.0,
        "output_price_per_mtok": 8.0,
    }
    values.update(overrides)
    return ModelConfig(**values)
