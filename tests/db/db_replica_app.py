"""A replica for the kill -9 test: ``rft serve tests.db.db_replica_app:server`` (backend from the environment)."""

from db_helpers import TOOLS, end_state, env_db  # type: ignore[import-not-found]

from rft_sdk import ToolServer

server = ToolServer(tools=TOOLS, graders=[end_state], db=env_db())
