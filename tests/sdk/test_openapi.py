"""``GET /openapi.json`` over a real uvicorn: every tool route and grader with their schemas, a valid
OpenAPI 3.1 document (openapi-spec-validator), whose schemas accept what the server accepts."""

from __future__ import annotations

import json
from typing import Literal

import httpx
import jsonschema
import pytest
from pydantic import BaseModel
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from rft_sdk import Grade, GradingContext, Rollout, ToolServer
from rft_sdk.testing import run_server

TOKEN = "s3cret"


class Address(BaseModel):
    city: str
    zip: str


def build() -> ToolServer:
    server = ToolServer(auth_tokens=[TOKEN])

    @server.tool
    def ship(to: Address, speed: Literal["slow", "fast"] = "slow", *, rollout: Rollout) -> str:
        """Ship the order.

        Args:
            to: Where to.
            speed: How fast.
        """
        return f"{to.city} {speed}"

    @server.tool(name="count-items")
    def count(n: int, *, rollout: Rollout) -> int:
        """Count things."""
        return n

    @server.grader
    def exact(ctx: GradingContext) -> float:
        return 1.0

    @server.grader(name="detailed")
    def detailed(ctx: GradingContext) -> Grade:
        return Grade(1.0)

    return server


@pytest.fixture(scope="module")
def document() -> dict:
    with run_server(build()) as url:
        assert httpx.get(f"{url}/openapi.json").status_code == 401  # behind the server's token, like GET /tools
        resp = httpx.get(f"{url}/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("application/json")
    return resp.json()


def test_the_document_is_valid_openapi_3_1(document: dict) -> None:
    validator = pytest.importorskip("openapi_spec_validator")
    assert document["openapi"] == "3.1.0"
    validator.validate(document)  # raises OpenAPIValidationError when not valid


def test_a_broken_document_is_refused_by_the_validator(document: dict) -> None:
    """The check above can fail: a response without its required description is refused."""
    validator = pytest.importorskip("openapi_spec_validator")
    broken = json.loads(json.dumps(document))
    del broken["paths"]["/tools/ship"]["post"]["responses"]["200"]["description"]
    with pytest.raises(Exception, match="description"):
        validator.validate(broken)


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in _refs(v)]
    return [r for v in node for r in _refs(v)] if isinstance(node, list) else []


def test_every_ref_resolves_in_the_document(document: dict) -> None:
    """A tool whose parameters have $defs (Address) keeps them reachable: '#' is the document here."""
    registry = Registry().with_resource("urn:doc", DRAFT202012.create_resource(document))
    resolver = registry.resolver(base_uri="urn:doc")
    refs = set(_refs(document))
    assert "#/components/schemas/ship_arguments/$defs/Address" in refs
    for ref in refs:
        resolver.lookup(ref)  # raises Unresolvable


def test_every_tool_and_grader_has_its_route(document: dict) -> None:
    paths = document["paths"]
    assert {"/tools/ship", "/tools/count-items", "/tools", "/grade", "/grade/exact", "/grade/detailed",
            "/healthz", "/readyz", "/metrics"} <= set(paths)
    ship = paths["/tools/ship"]["post"]
    assert ship["operationId"] == "tool_ship" and ship["summary"] == "Ship the order."
    assert ship["security"] == [{"bearer": []}] and "security" not in paths["/healthz"]["get"]
    assert paths["/tools"]["post"]["requestBody"]["content"]["application/json"]["schema"]["allOf"][1] == {
        "type": "object", "required": ["name"], "properties": {"name": {"enum": ["count-items", "ship"]}}}
    assert "x-rft-grade-details" in paths["/grade/detailed"]["post"]["responses"]["200"]["headers"]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_the_argument_schemas_are_the_servers_own(document: dict) -> None:
    """The components are GET /tools' parameters (refs rebased), and judge arguments as the server does."""
    server = build()
    schemas = document["components"]["schemas"]
    listed = {t["function"]["name"]: t["function"]["parameters"] for t in server.dataset_tools()}
    assert schemas["count-items_arguments"] == listed["count-items"]
    ship = schemas["ship_arguments"]
    assert ship["properties"]["speed"] == listed["ship"]["properties"]["speed"]
    registry = Registry().with_resource("urn:doc", DRAFT202012.create_resource(document))
    resolver_schema = {"$ref": "urn:doc#/components/schemas/ship_arguments"}
    check = jsonschema.Draft202012Validator(resolver_schema, registry=registry)
    assert check.is_valid({"to": {"city": "Oslo", "zip": "0150"}, "speed": "fast"})
    assert not check.is_valid({"to": {"city": "Oslo"}, "speed": "fast"})  # zip missing
    assert not check.is_valid({"to": {"city": "Oslo", "zip": "1"}, "speed": "warp"})
    # the request body: the hosted call (arguments as JSON text or object) or the bare arguments
    body = {"$ref": "urn:doc#/paths/~1tools~1ship/post/requestBody/content/application~1json/schema"}
    call = jsonschema.Draft202012Validator(body, registry=registry)
    assert call.is_valid({"call_id": "c1", "trace_id": "t1", "arguments": {"to": {"city": "a", "zip": "b"},
                                                                           "speed": None}})
    assert call.is_valid({"to": {"city": "a", "zip": "b"}, "speed": "slow"})
    assert not call.is_valid({"call_id": "c1", "trace_id": "t1", "arguments": {"to": 3, "speed": None}})
