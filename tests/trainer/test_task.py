"""The order-status task built from the real retail db.json."""

import gzip
import json

import pytest

from examples.retail.order_status_task import (
    build_items,
    load_orders,
    order_status_job,
    order_status_tool,
    split_orders,
)


def test_items_match_database_and_split_is_disjoint():
    orders = load_orders()
    train, held = build_items(orders, heldout_fraction=0.2, seed=0)
    assert len(train) + len(held) == len(orders) and len(held) == round(0.2 * len(orders))
    assert not {i["order_id"] for i in train} & {i["order_id"] for i in held}
    for item in train[:50] + held[:50]:
        oid = item["order_id"]
        assert item["answer"] == orders[oid]["status"] == item["reference_answer"]
        assert oid in item["messages"][-1]["content"]
        assert item["actions"] == [{"name": "get_order_status", "arguments": {"order_id": oid}}]
        assert item["tools"][0]["function"]["name"] == "get_order_status"


def test_split_is_seeded_and_validated():
    ids = [f"#W{i}" for i in range(10)]
    assert split_orders(ids, seed=1) == split_orders(list(reversed(ids)), seed=1)
    assert split_orders(ids, seed=1) != split_orders(ids, seed=2)
    with pytest.raises(ValueError):
        split_orders(ids, heldout_fraction=1.0)


def test_load_orders_from_explicit_gzip(tmp_path):
    path = tmp_path / "db.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump({"products": {}, "users": {}, "orders": {"#W1": {"order_id": "#W1", "status": "pending"}}}, fh)
    assert load_orders(path) == {"#W1": {"order_id": "#W1", "status": "pending"}}
    with pytest.raises(FileNotFoundError):
        load_orders(tmp_path / "missing.json")


def test_job_points_at_tool_and_named_grader():
    job = order_status_job("http://h:1/", headers={"Authorization": "Bearer t"})["method"]["reinforcement"]
    assert job["tools"][0]["server_url"] == "http://h:1/tools/get_order_status"
    assert job["grader"]["url"] == "http://h:1/grade/order_status"
    assert job["tools"][0]["headers"] == job["grader"]["headers"] == {"Authorization": "Bearer t"}
    assert order_status_tool()["function"]["parameters"]["required"] == ["order_id"]
