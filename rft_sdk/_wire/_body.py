"""Decode a request body's bytes (read by ``rft_sdk._wire._read``) as one JSON object, and validate
it, once, into a protocol model.

The decoded JSON must be strict RFC 8259 JSON (``NaN``/``Infinity`` literals
are refused), nest at most ``protocol.MAX_JSON_DEPTH`` arrays/objects deep (a
hostile body cannot exhaust the interpreter's recursion limit here or later
when the rollout is serialised) and hold no lone UTF-16 surrogate (it could
not be stored or echoed as UTF-8). Every failure is an :class:`EndpointError`
raised before anything runs.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import pydantic

from ._endpoint import EndpointError
from ._json import SurrogateError, loads_strict

__all__ = ["decode_object", "parse_model", "problems"]

logger = logging.getLogger("rft_sdk")
M = TypeVar("M", bound=pydantic.BaseModel)


def decode_object(raw: bytes) -> dict[str, Any]:
    """Decode a request body by :func:`loads_strict` (the one rule) as one JSON object.

    Raises:
        EndpointError: 400 ``malformed_json`` (not strict JSON, invalid bytes,
            too deep, or a lone UTF-16 surrogate, whose field ``details`` names);
            400 ``invalid_request`` (JSON, but not an object).
    """
    try:
        data = loads_strict(raw)
    except SurrogateError as exc:
        message = f"request body holds a {exc}"
        raise EndpointError(400, "malformed_json", message, details=[{"field": exc.where, "problem": message}],
                            counter="bad_requests") from None
    except ValueError as exc:
        raise EndpointError(400, "malformed_json", f"request body is not valid JSON: {exc}",
                            counter="bad_requests") from None
    if not isinstance(data, dict):
        raise EndpointError(400, "invalid_request", "request body must be a JSON object", counter="bad_requests")
    return data


def parse_model(model: type[M], data: dict[str, Any], message: str) -> M:
    """Validate decoded ``data`` against a protocol ``model`` (pydantic, strict types).

    Raises:
        EndpointError: 422 ``invalid_request`` with ``details`` naming each
            wrong field (``{"field": "sample.output_text", "problem": ...}``).
    """
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        details = problems(exc)
        raise EndpointError(422, "invalid_request", message, details=details, counter="bad_requests") from None


def problems(exc: pydantic.ValidationError) -> list[dict[str, str]]:
    """``[{"field", "problem"}]`` of a validation error, one entry per pydantic error, in order;
    ``field`` is the dotted location (``"sample.output_text"``), ``"arguments"`` for the whole value."""
    return [{"field": ".".join(str(p) for p in error["loc"]) or "arguments", "problem": error["msg"]}
            for error in exc.errors(include_url=False)]
