"""Fixtures for the emulator's tests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


def post(
    url: str, body: object, headers: dict[str, str] | None = None, timeout: float = 10
) -> tuple[int, dict[str, str], bytes]:
    """POST JSON with the standard library: status, headers (lower-case names), body."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, {k.lower(): v for k, v in reply.headers.items()}, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


@pytest.fixture(name="post")
def post_fixture() -> Callable[..., tuple[int, dict[str, str], bytes]]:
    return post
