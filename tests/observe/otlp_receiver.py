"""A minimal OTLP/HTTP trace receiver for tests and benchmarks (decodes with ``opentelemetry-proto``).

``receiver_app()`` returns ``(app, spans)``: a Starlette app answering
``POST /v1/traces`` (protobuf ``ExportTraceServiceRequest``, gzip or not),
``GET /healthz`` and ``GET /count`` (``{"spans": n}``), and the list it
appends one flat dict per received span to::

    {"trace_id": hex32, "span_id": hex16, "parent_span_id": hex16 | "", "name": str,
     "kind": int, "start_ns": int, "end_ns": int, "status_code": int,
     "attributes": {key: value}, "resource": {key: value}}
"""

from __future__ import annotations

import gzip
import zlib
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


def decode(body: bytes, encoding: str = "") -> list[dict[str, Any]]:
    """Flat span dicts of one OTLP/HTTP protobuf export body."""
    if encoding == "gzip":
        body = gzip.decompress(body)
    elif encoding == "deflate":
        body = zlib.decompress(body)
    request = ExportTraceServiceRequest.FromString(body)
    spans = []
    for rs in request.resource_spans:
        resource = _attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                spans.append({"trace_id": s.trace_id.hex(), "span_id": s.span_id.hex(),
                              "parent_span_id": s.parent_span_id.hex(), "name": s.name, "kind": s.kind,
                              "start_ns": s.start_time_unix_nano, "end_ns": s.end_time_unix_nano,
                              "status_code": s.status.code, "attributes": _attrs(s.attributes),
                              "resource": resource})
    return spans


def receiver_app() -> tuple[Starlette, list[dict[str, Any]]]:
    """``(app, spans)``: the receiver and the list of spans it has received so far."""
    spans: list[dict[str, Any]] = []

    async def traces(request: Request) -> Response:
        spans.extend(decode(await request.body(), request.headers.get("content-encoding", "")))
        return Response(ExportTraceServiceResponse().SerializeToString(), media_type="application/x-protobuf")

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def count(request: Request) -> Response:
        return JSONResponse({"spans": len(spans)})

    routes = [Route("/v1/traces", traces, methods=["POST"]), Route("/healthz", healthz), Route("/count", count)]
    return Starlette(routes=routes), spans
