"""Helpers of the reliability suite: hosted-format bodies and raw HTTP on a socket."""

from __future__ import annotations

import json
import socket
import uuid
from typing import Any


def body(name: str, arguments: Any = None, *, trace_id: str | None = None, call_id: str | None = None,
         **extra: Any) -> dict[str, Any]:
    """An exact hosted-format tool call body (hosted protocol §3)."""
    call_id = call_id or f"call_{uuid.uuid4().hex[:12]}"
    out = {"type": "function_call", "id": f"fc_{call_id[5:]}", "call_id": call_id, "name": name,
           "arguments": json.dumps(arguments if arguments is not None else {}),
           "trace_id": trace_id or f"trace_{uuid.uuid4().hex}", "item": {"task": "t"}}
    out.update(extra)
    return out


def raw_request(path: str, payload: bytes, *, method: str = "POST", keep_alive: bool = True) -> bytes:
    """One HTTP/1.1 request with ``payload`` as its body, byte for byte."""
    head = (f"{method} {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n" + ("" if keep_alive else "Connection: close\r\n") + "\r\n")
    return head.encode("ascii") + payload


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Read one HTTP/1.1 response (``Content-Length`` framed): ``(status, lower-case headers, body)``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"connection closed before a response (got {data!r})")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed mid-body")
        rest += chunk
    return status, headers, rest[:length]


def closed_by_peer(sock: socket.socket, timeout_s: float) -> bool:
    """Whether the server closes ``sock`` within ``timeout_s`` seconds (EOF or reset)."""
    sock.settimeout(timeout_s)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def connect(url: str) -> socket.socket:
    """A TCP connection to ``http://host:port``."""
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)
