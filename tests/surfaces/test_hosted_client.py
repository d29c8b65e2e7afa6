"""The hosted-wire client every surface and integration sends through: bad text reaches the pipeline's rule."""

from __future__ import annotations

import pytest

from examples.retail._server_tools import SERVED_TOOLS
from examples.retail.app import retail
from rft_sdk import ToolServer
from rft_sdk.surfaces import HostedClient, RolloutDiscardedError, new_trace_id

from .conftest import ITEMS

ITEM = ITEMS[0]


async def test_lone_surrogates_get_the_pipelines_400_not_a_client_crash():
    server = ToolServer(tools=SERVED_TOOLS, graders=[retail], auth_env_var=None)
    async with HostedClient.in_process(server) as client:
        trace_id = new_trace_id()
        in_arguments = await client.call_tool(trace_id, "calculate", {"expression": "1+\ud800"}, ITEM)
        in_item = await client.call_tool(trace_id, "calculate", {"expression": "1+1"}, {**ITEM, "note": "\udc80"})
        fine = await client.call_tool(trace_id, "calculate", {"expression": "1+1"}, ITEM)
        with pytest.raises(RolloutDiscardedError, match="malformed_json"):
            await client.grade(trace_id, "done \ud800", ITEM)
        score = (await client.grade(trace_id, "done", ITEM)).score
    assert in_arguments.status == 400 and in_item.status == 400  # refused before the tool ran
    assert in_arguments.error_code == in_item.error_code == "malformed_json"
    assert "'arguments'" in in_arguments.model_text and "'item.note'" in in_item.model_text  # the field is named
    assert fine.ok and 0.0 <= score <= 1.0  # the refused requests left the rollout usable
