"""``GET /openapi.json``: the hosted routes of a ``ToolServer`` as an OpenAPI 3.1 document.

Generated from the definitions the server already serves, so a user's API
tooling (Swagger UI, client generators, contract tests) sees the same server
the hosted service calls:

* one ``POST /tools/{name}`` path per tool, whose ``arguments`` are the tool's
  strict JSON Schema (``ToolDefinition.parameters``, the schema ``GET /tools``
  lists), sent as JSON text (``contentMediaType`` + ``contentSchema``) or as
  the object itself; the body also may be the bare arguments (one stateless call);
* ``POST /tools`` (one URL for every tool, dispatched on ``name``);
* ``POST /grade`` (the default grader) and one ``POST /grade/{name}`` per grader:
  body :class:`rft_sdk.protocol.GradeRequest`, answer ``{"score": float}`` and
  the ``x-rft-grade-details`` header;
* ``GET /tools``, ``GET /healthz``, ``GET /readyz``, ``GET /metrics``.

Every non-2xx answer is :class:`rft_sdk.protocol.ErrorBody`. The request and
answer models come from :mod:`rft_sdk.protocol` (pydantic's JSON Schema,
draft 2020-12, which OpenAPI 3.1 uses). Grader-secret paths are left out (the
secret is the credential). Source: OpenAPI 3.1.0, https://spec.openapis.org/oas/v3.1.0.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic.json_schema import models_json_schema

from ..protocol import GRADE_DETAILS_HEADER, ErrorBody, GradeRequest, GradeResponse, ToolCallOutput, ToolCallRequest

__all__ = ["OPENAPI_VERSION", "openapi_document"]

#: The OpenAPI version of the document (JSON Schema 2020-12 inside).
OPENAPI_VERSION = "3.1.0"
_REF = "#/components/schemas/{model}"


class _Tool(Protocol):
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> dict[str, Any]: ...


def _rebase(node: Any, base: str) -> Any:
    """``node`` with its local ``#/$defs/X`` references pointing under ``base`` (a component's path),
    because inside an OpenAPI document ``#`` is the document, not the tool's schema."""
    if isinstance(node, dict):
        return {k: (base + v[1:] if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/")
                    else _rebase(v, base)) for k, v in node.items()}
    if isinstance(node, list):
        return [_rebase(v, base) for v in node]
    return node


def _errors() -> dict[str, Any]:
    error = {"content": {"application/json": {"schema": {"$ref": _REF.format(model="ErrorBody")}}}}
    return {"4XX": {"description": "refused: the body is shown to the model (tool) or the request is wrong",
                    **error},
            "5XX": {"description": "failed: the hosted service retries", **error}}


def _tool_body(arguments_ref: str) -> dict[str, Any]:
    """The hosted call body with ``arguments`` typed by the tool's schema."""
    return {"allOf": [{"$ref": _REF.format(model="ToolCallRequest")}, {
        "type": "object",
        "properties": {"arguments": {
            "description": "the tool's arguments: their JSON text (as the hosted service sends them) or the object",
            "anyOf": [{"type": "string", "contentMediaType": "application/json", "contentSchema": {"$ref": arguments_ref}},
                      {"$ref": arguments_ref}]}}}]}


def openapi_document(tools: Mapping[str, _Tool], graders: Sequence[str], default_grader: str | None, *,
                     title: str = "rft-sdk ToolServer", version: str = "0", authenticated: bool = False
                     ) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a server's hosted routes (see the module docstring).

    Args:
        tools: name → definition (``name``, ``description``, ``parameters``: strict JSON Schema).
        graders: grader names; default_grader: the one ``POST /grade`` runs (``None``: no grader).
        title, version: ``info``; authenticated: declare a bearer token on every route but
            ``/healthz`` and ``/readyz`` (the server's ``AuthMiddleware``).

    Returns:
        A JSON-ready dict (a fresh copy per call).
    """
    _, defs = models_json_schema([(m, "validation") for m in (ToolCallRequest, GradeRequest)]
                                 + [(m, "serialization") for m in (ToolCallOutput, GradeResponse, ErrorBody)],
                                 ref_template=_REF)
    schemas: dict[str, Any] = dict(defs["$defs"])
    paths: dict[str, Any] = {}
    secured: list[dict[str, list[str]]] | None = [{"bearer": []}] if authenticated else None

    def op(summary: str, responses: dict[str, Any], body: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"summary": summary, **extra, "responses": {**responses, **_errors()}}
        if body is not None:
            out["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
        if secured is not None:
            out["security"] = secured
        return out

    output = {"200": {"description": "the tool's output, shown to the model",
                      "content": {"application/json": {"schema": {"$ref": _REF.format(model="ToolCallOutput")}}}}}
    for name, tool in tools.items():
        component = f"{name}_arguments"
        ref = _REF.format(model=component)
        schemas[component] = _rebase(copy.deepcopy(tool.parameters), ref)
        paths[f"/tools/{name}"] = {"post": op(
            tool.description.splitlines()[0] if tool.description else name, output,
            {"anyOf": [_tool_body(ref), {"$ref": ref}]}, operationId=f"tool_{name}", tags=["tools"],
            description=(f"{tool.description}\n\nThe body is the hosted call (trace_id, call_id, arguments) or, "
                         "for one stateless call, the bare arguments object."))}
    if tools:
        paths["/tools"] = {
            "get": op("the tools (chat-completions format) and graders", {"200": {"description": "the tool list"}},
                      operationId="list_tools", tags=["tools"]),
            "post": op("call any tool, named by the body's name", output, {"allOf": [
                {"$ref": _REF.format(model="ToolCallRequest")},
                {"type": "object", "required": ["name"], "properties": {"name": {"enum": sorted(tools)}}}]},
                operationId="call_tool", tags=["tools"])}
    graded = {"200": {"description": "the score",
                      "headers": {GRADE_DETAILS_HEADER: {"description": "JSON {subscores, reasons}",
                                                         "schema": {"type": "string"}}},
                      "content": {"application/json": {"schema": {"$ref": _REF.format(model="GradeResponse")}}}}}
    grade_body = {"$ref": _REF.format(model="GradeRequest")}
    if default_grader is not None:
        paths["/grade"] = {"post": op(f"grade a rollout with the default grader ({default_grader})", graded,
                                      grade_body, operationId="grade", tags=["graders"])}
    for name in graders:
        paths[f"/grade/{name}"] = {"post": op(f"grade a rollout with {name}", graded, grade_body,
                                              operationId=f"grade_{name}", tags=["graders"])}
    probe = {"200": {"description": "ok"}, "503": {"description": "not ready"}}
    paths["/healthz"] = {"get": {"summary": "liveness", "operationId": "healthz", "tags": ["probes"],
                                 "responses": {"200": {"description": "alive"}}}}
    paths["/readyz"] = {"get": {"summary": "readiness: the store, the rollout database and the user's checks",
                                "operationId": "readyz", "tags": ["probes"], "responses": probe}}
    paths["/metrics"] = {"get": op("Prometheus metrics (JSON with ?format=json)",
                                   {"200": {"description": "the metrics"}}, operationId="metrics", tags=["probes"])}
    doc: dict[str, Any] = {"openapi": OPENAPI_VERSION, "info": {"title": title, "version": version},
                           "paths": paths, "components": {"schemas": schemas}}
    if authenticated:
        doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    return doc
