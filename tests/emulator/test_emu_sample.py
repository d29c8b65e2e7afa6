"""The grading sample the emulator sends is strict JSON whatever the policy answered.

An outside suite's doctor run discarded 4 rollouts (``grader_client_error``): the answer ``{"year": NaN}``
was parsed by the stdlib (which accepts ``NaN``) into ``output_json``, so the grade body carried ``NaN`` and
the server's one decoding rule refused it with a 400.
"""

from __future__ import annotations

import json

import pytest

from rft_sdk import GradingContext, ToolServer
from rft_sdk.emulator import PolicyStep, build_sample
from rft_sdk.testing import TestClient


@pytest.mark.parametrize("text", ['{"year": NaN}', '{"year": Infinity}', '[1e999]', '{"a": -Infinity}'])
def test_a_non_standard_json_answer_is_text_only(text: str) -> None:
    sample = build_sample(PolicyStep(content=text))
    assert sample["output_text"] == text and sample["output_json"] is None
    json.dumps(sample, allow_nan=False)  # what goes on the wire is valid JSON


def test_a_strict_json_answer_is_parsed_and_graded() -> None:
    sample = build_sample(PolicyStep(content='{"year": 1889, "tags": ["a"]}'))
    assert sample["output_json"] == {"year": 1889, "tags": ["a"]}
    server = ToolServer(auth_env_var=None)

    @server.grader
    def year(ctx: GradingContext) -> float:
        return 1.0 if (ctx.sample.get("output_json") or {}).get("year") == 1889 else 0.0

    response = TestClient(server).http.post("/grade", json={"sample": sample, "item": {}, "trace_id": "t1"})
    assert response.status_code == 200 and response.json() == {"score": 1.0}
