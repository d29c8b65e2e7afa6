"""``rft_sdk.testing.RedisServer``: what the restart tests rely on (data kept across a SIGKILL with an
append-only file, lost without one) and a clear error when ``redis-server`` is missing."""

from __future__ import annotations

import pytest
import redis
from store_helpers import redis_binary

from rft_sdk.exceptions import RFTError
from rft_sdk.testing import RedisServer, redis_server


@pytest.mark.parametrize(("appendonly", "kept"), [(True, b"1"), (False, None)])
def test_a_killed_server_restarts_on_the_same_port_with_what_its_append_only_file_kept(tmp_path, appendonly, kept):
    redis_binary()
    with RedisServer(tmp_path, appendonly=appendonly, appendfsync="always") as server:
        redis.Redis.from_url(server.url).set("k", 1)
        server.kill()
        assert not server.running
        assert server.start() == server.url
        assert redis.Redis.from_url(server.url).get("k") == kept
    assert not server.running


def test_the_context_manager_stops_the_server_and_removes_its_directory():
    redis_binary()
    with redis_server() as server:
        assert redis.Redis.from_url(server.url).ping()
        directory = server.directory
        assert (directory / "appendonlydir").exists() or any(directory.iterdir())
    assert not server.running and not directory.exists()


def test_a_missing_binary_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RFTError, match="redis-server is not installed"):
        RedisServer(tmp_path)


def test_an_unknown_fsync_policy_is_refused(tmp_path):
    redis_binary()
    with pytest.raises(ValueError, match="appendfsync='sometimes'"):
        RedisServer(tmp_path, appendfsync="sometimes")


def test_a_server_that_exits_at_start_is_a_clear_error_naming_its_command(tmp_path):
    redis_binary()
    server = RedisServer(tmp_path, extra=("--no-such-option", "1"))
    with pytest.raises(RFTError, match="redis-server exited with status .*--no-such-option"):
        server.start()
    assert not server.running
