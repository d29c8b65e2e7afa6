"""A TestClient whose server refuses to start raises at ``with`` and leaves at once (it waited forever on exit)."""

from __future__ import annotations

import pytest

from rft_sdk import RFTError, SQLiteDatabase, ToolServer
from rft_sdk.testing import TestClient


def test_a_testclient_raises_when_the_rollout_database_does_not_start_and_does_not_hang(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")  # the database folder is a file: the template cannot be written

    server = ToolServer(auth_env_var=None, db=SQLiteDatabase(setup=lambda conn: conn.execute("CREATE TABLE t (a)"),
                                                             dir=blocked / "db"))

    @server.tool(writes=False)
    def ping() -> str:
        """Answer pong."""
        return "pong"

    with pytest.raises(RFTError, match="the server did not start: the rollout database SQLiteDatabase"):
        with TestClient(server):
            pass  # pragma: no cover - never entered
