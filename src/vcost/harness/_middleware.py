"""The harness's pure-ASGI middleware: the request size limit and the security headers
(CSP, X-Frame-Options, nosniff, referrer policy, Secure cookies under https). Pure ASGI, so
they cover every route, the static files and the error pages alike."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

__all__ = ["CONTENT_SECURITY_POLICY", "BodyLimit", "SecurityHeaders"]


# --------------------------------------------------------------------------------------------
# Size limit (pure ASGI, so it also covers bodies sent without a Content-Length)


class BodyLimit:
    """Answer 413 to any request body larger than ``limit`` bytes."""

    def __init__(self, app: Callable[..., Awaitable[None]], limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await JSONResponse({"error": "request too large"}, status_code=413)(
                    scope, receive, send
                )
                return
        seen = 0

        async def limited() -> MutableMapping[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise HTTPException(413, "request too large")
            return message

        await self.app(scope, limited, send)


# --------------------------------------------------------------------------------------------
# Security headers and Secure cookies (pure ASGI: every response, every route)


#: The pages' CSP: scripts only from this site (the templates have no inline scripts or event
#: handlers; confirmations are ``data-confirm`` attributes handled in static/harness.js); inline
#: styles allowed because the code editor injects its own ``<style>`` elements; no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)


class SecurityHeaders:
    """Add CSP, X-Frame-Options, nosniff and a referrer policy to every response; mark every
    cookie ``Secure`` when the public base URL (or the request) is https."""

    def __init__(self, app: Callable[..., Awaitable[None]], csp: str, *, secure: bool) -> None:
        self.app = app
        self.secure = secure
        self.headers = [
            (b"content-security-policy", csp.encode()),
            (b"x-frame-options", b"DENY"),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
        ]

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        secure = self.secure or scope.get("scheme") == "https"

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = []
                for name, value in message.get("headers", []):
                    if secure and name == b"set-cookie" and b"secure" not in value.lower():
                        value = value + b"; Secure"
                    headers.append((name, value))
                have = {name for name, _ in headers}
                headers += [(n, v) for n, v in self.headers if n not in have]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
