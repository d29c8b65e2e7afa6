"""A body over the limit: the client reads the 413 (over real uvicorn), and the connection says
what it is good for. An HTTP/1.1 client sends its whole body before it reads an answer, so a server
that closes mid-body makes the client's kernel see a reset and the 413 is lost (the flaky
``httpx.ReadError`` this file pins down); within ``DRAIN_FACTOR`` × the limit the rest of the body is
drained and the connection kept, past it the 413 says ``Connection: close``."""

from __future__ import annotations

import json

import httpx
import pytest
from rel_helpers import body, closed_by_peer, connect, raw_request, read_response

from rft_sdk import Rollout, ToolServer
from rft_sdk._wire._read import DRAIN_FACTOR
from rft_sdk.testing import run_server

LIMIT = 100_000


@pytest.fixture(scope="module")
def url():
    server = ToolServer(auth_env_var=None, body_limit=LIMIT)

    @server.tool
    def echo(text: str, *, rollout: Rollout) -> str:
        """Echo.

        Args:
            text: what to say.
        """
        return text

    with run_server(server) as address:
        yield address


def _chunks(total: int, size: int = 16_384):
    yield b'{"call_id": "call_big", "trace_id": "t", "arguments": "'
    sent = 0
    while sent < total:
        yield b"x" * min(size, total - sent)
        sent += size
    yield b'"}'


@pytest.mark.parametrize("multiple", [1.5, DRAIN_FACTOR])  # streamed (chunked) bodies within the drain bound
def test_a_streamed_body_over_the_limit_gets_a_readable_413_on_a_kept_connection(url, multiple):
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(5):  # the same connection every time: a reset would surface as ReadError
            answer = client.post("/tools/echo", content=_chunks(int(LIMIT * multiple)),
                                 headers={"content-type": "application/json"})
            assert answer.status_code == 413 and answer.json()["error"]["code"] == "body_too_large"
            assert answer.headers.get("connection") != "close"
        ok = client.post("/tools/echo", json=body("echo", {"text": "hi"}))
        assert ok.status_code == 200 and ok.json()["output"] == "hi"


def test_a_declared_length_past_the_drain_bound_is_refused_before_reading_and_closes(url):
    sock = connect(url)
    try:
        declared = LIMIT * (1 + DRAIN_FACTOR) + 1
        request = raw_request("/tools/echo", b"")
        request = request.replace(b"Content-Length: 0", f"Content-Length: {declared}".encode())
        assert f"Content-Length: {declared}".encode() in request
        sock.sendall(request)  # headers only: the server must answer without waiting for the body
        status, headers, payload = read_response(sock)
        assert status == 413 and headers["connection"] == "close"
        assert json.loads(payload)["error"]["code"] == "body_too_large"
        assert closed_by_peer(sock, 5.0)
    finally:
        sock.close()


def test_a_streamed_body_past_the_drain_bound_is_cut_with_connection_close(url):
    sock = connect(url)
    sock.settimeout(10)
    try:
        sock.sendall(b"POST /tools/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 16_384
        sent, closed = 0, False
        while sent < LIMIT * (2 + DRAIN_FACTOR) and not closed:  # more than the server drains, never ended
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            except (BrokenPipeError, ConnectionResetError):  # the server closed: what this test wants
                closed = True
            sent += len(chunk)
        received = b""
        while not closed:  # all sent into buffers: the server must still answer and close, before the 30 s
            try:          # body timeout (a 413 with Connection: close, or a reset that discarded it)
                data = sock.recv(65_536)
            except ConnectionResetError:
                break
            if not data:
                break
            received += data
        if received:
            assert received.startswith(b"HTTP/1.1 413") and b"connection: close" in received.lower()
    finally:
        sock.close()
