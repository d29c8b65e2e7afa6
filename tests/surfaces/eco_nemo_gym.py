"""NeMo Gym's own session-conformance check against a ToolServer serving the nemo_gym surface.

Run with the interpreter of the venv that has nemo-gym (``.venv-eco2``):
``python -m tests.surfaces.eco_nemo_gym``; prints one JSON line.
"""

from __future__ import annotations

import json
from importlib.metadata import version

from nemo_gym.base_resources_server import ResourcesSeedSessionRequest
from nemo_gym.episode_types import EpisodeId, TaskId
from nemo_gym.testing.session_conformance import check_resources_session_contract

from examples.retail._server_tools import SERVED_TOOLS
from examples.retail.app import retail
from rft_sdk import ToolServer

server = ToolServer(tools=SERVED_TOOLS, graders=[retail], surfaces=["nemo_gym"], auth_env_var=None)
item = json.loads(open("examples/retail/data/retail_test.jsonl").readline())
seed = ResourcesSeedSessionRequest(resources_session_id="resources-session-conformance",
                                   episode_id=EpisodeId(rollout_id="rollout-1"),
                                   task_id=TaskId(taskset="retail:test", task_id=str(item["task_id"])),
                                   task_data={"rft_item": item})
check_resources_session_contract(server, seed, keeps_state=True)  # raises AssertionError on a violation
print(json.dumps({"nemo_gym": version("nemo-gym"), "conformance": "passed"}))
