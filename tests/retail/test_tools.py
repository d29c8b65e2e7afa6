"""The retail tools against the real τ²-bench database (pure domain logic, no HTTP)."""

from __future__ import annotations

import copy
import json

import pytest

from examples.retail import RetailError, call_tool


def _pick(base, pred):
    return next(o for o in base.tables["orders"].values() if pred(o))


def _gift_paid_pending(base):
    def ok(o):
        pm = o["payment_history"][0]["payment_method_id"]
        return o["status"] == "pending" and len(o["payment_history"]) == 1 and pm.startswith("gift_card")
    return _pick(base, ok)


def test_writes_copy_only_touched_records_and_never_the_base(base):
    before = json.dumps(base.tables)
    order = _gift_paid_pending(base)
    view = base.view()
    call_tool(view, "cancel_pending_order", {"order_id": order["order_id"], "reason": "no longer needed"})
    assert view.changed_keys() == {("orders", order["order_id"]), ("users", order["user_id"])}
    assert json.dumps(base.tables) == before
    assert base.tables["orders"][order["order_id"]]["status"] == "pending"


def test_cancel_refunds_every_payment_and_credits_gift_card(base):
    order = _gift_paid_pending(base)
    payment = order["payment_history"][0]
    user = base.tables["users"][order["user_id"]]
    balance = user["payment_methods"][payment["payment_method_id"]]["balance"]
    view = base.view()
    call_tool(view, "cancel_pending_order", {"order_id": order["order_id"], "reason": "ordered by mistake"})
    after = view.get("orders", order["order_id"])
    assert after["status"] == "cancelled" and after["cancel_reason"] == "ordered by mistake"
    assert after["payment_history"][-1] == {"transaction_type": "refund", "amount": payment["amount"],
                                            "payment_method_id": payment["payment_method_id"]}
    new_balance = view.get("users", order["user_id"])["payment_methods"][payment["payment_method_id"]]["balance"]
    assert new_balance == round(balance + payment["amount"], 2)


@pytest.mark.parametrize("status,reason,message", [
    ("delivered", "no longer needed", "Non-pending order cannot be cancelled"),
    ("pending", "too expensive", "Invalid reason"),
])
def test_cancel_preconditions(base, status, reason, message):
    order = _pick(base, lambda o: o["status"] == status)
    view = base.view()
    with pytest.raises(RetailError, match=message):
        call_tool(view, "cancel_pending_order", {"order_id": order["order_id"], "reason": reason})
    assert view.overlay == {}


def test_modify_items_charges_difference_and_happens_once(base):
    order = _pick(base, lambda o: o["status"] == "pending" and any(
        len(base.tables["products"][ln["product_id"]]["variants"]) > 2 for ln in o["items"]))
    line = next(ln for ln in order["items"] if len(base.tables["products"][ln["product_id"]]["variants"]) > 2)
    variants = base.tables["products"][line["product_id"]]["variants"]
    new_id = next(i for i, v in variants.items() if i != line["item_id"] and v["available"])
    user = base.tables["users"][order["user_id"]]
    method = next(m for m in user["payment_methods"].values() if m["source"] != "gift_card") \
        if any(m["source"] != "gift_card" for m in user["payment_methods"].values()) else None
    if method is None:
        pytest.skip("no non-gift method")
    view = base.view()
    args = {"order_id": order["order_id"], "item_ids": [line["item_id"]], "new_item_ids": [new_id],
            "payment_method_id": method["id"]}
    call_tool(view, "modify_pending_order_items", args)
    after = view.get("orders", order["order_id"])
    diff = round(variants[new_id]["price"] - line["price"], 2)
    assert after["status"] == "pending (item modified)"
    assert after["payment_history"][-1] == {"transaction_type": "payment" if diff > 0 else "refund",
                                            "amount": abs(diff), "payment_method_id": method["id"]}
    changed = [ln for ln in after["items"] if ln["item_id"] == new_id]
    assert changed and changed[0]["price"] == variants[new_id]["price"]
    assert changed[0]["options"] == variants[new_id]["options"]
    with pytest.raises(RetailError, match="Non-pending"):
        call_tool(view, "modify_pending_order_items", args)


def test_modify_items_rejects_other_product_and_same_id(base):
    order = _pick(base, lambda o: o["status"] == "pending")
    line = order["items"][0]
    other = next(i for i, p in base.item_to_product.items() if p != line["product_id"])
    user = base.tables["users"][order["user_id"]]
    pm = next(iter(user["payment_methods"]))
    view = base.view()
    with pytest.raises(RetailError, match="not found or not available"):
        call_tool(view, "modify_pending_order_items", {"order_id": order["order_id"], "item_ids": [line["item_id"]],
                                                       "new_item_ids": [other], "payment_method_id": pm})
    with pytest.raises(RetailError, match="different"):
        call_tool(view, "modify_pending_order_items", {"order_id": order["order_id"], "item_ids": [line["item_id"]],
                                                       "new_item_ids": [line["item_id"]], "payment_method_id": pm})
    with pytest.raises(RetailError, match="should match"):
        call_tool(view, "modify_pending_order_items", {"order_id": order["order_id"], "item_ids": [line["item_id"]],
                                                       "new_item_ids": [], "payment_method_id": pm})


def test_modify_payment_moves_money_between_methods(base):
    def ok(o):
        u = base.tables["users"][o["user_id"]]
        return (o["status"] == "pending" and len(o["payment_history"]) == 1
                and any(m["source"] == "gift_card" and m["balance"] >= o["payment_history"][0]["amount"]
                        and m["id"] != o["payment_history"][0]["payment_method_id"]
                        for m in u["payment_methods"].values()))
    order = _pick(base, ok)
    amount, old = order["payment_history"][0]["amount"], order["payment_history"][0]["payment_method_id"]
    gift = next(m for m in base.tables["users"][order["user_id"]]["payment_methods"].values()
                if m["source"] == "gift_card" and m["balance"] >= amount and m["id"] != old)
    view = base.view()
    call_tool(view, "modify_pending_order_payment", {"order_id": order["order_id"], "payment_method_id": gift["id"]})
    hist = view.get("orders", order["order_id"])["payment_history"]
    assert hist[1:] == [{"transaction_type": "payment", "amount": amount, "payment_method_id": gift["id"]},
                        {"transaction_type": "refund", "amount": amount, "payment_method_id": old}]
    assert view.get("users", order["user_id"])["payment_methods"][gift["id"]]["balance"] == round(gift["balance"] - amount, 2)
    with pytest.raises(RetailError, match="exactly one payment"):
        call_tool(view, "modify_pending_order_payment", {"order_id": order["order_id"], "payment_method_id": old})


def test_return_and_exchange(base):
    order = _pick(base, lambda o: o["status"] == "delivered" and len(o["items"]) >= 2)
    ids = [ln["item_id"] for ln in order["items"]][:2]
    original = order["payment_history"][0]["payment_method_id"]
    view = base.view()
    non_gift_other = [m for m in base.tables["users"][order["user_id"]]["payment_methods"].values()
                      if m["id"] != original and m["source"] != "gift_card"]
    if non_gift_other:
        with pytest.raises(RetailError, match="original payment method or a gift card"):
            call_tool(view, "return_delivered_order_items",
                      {"order_id": order["order_id"], "item_ids": ids, "payment_method_id": non_gift_other[0]["id"]})
    with pytest.raises(RetailError, match="not found in the order"):
        call_tool(view, "return_delivered_order_items",
                  {"order_id": order["order_id"], "item_ids": ids + ids, "payment_method_id": original})
    call_tool(view, "return_delivered_order_items",
              {"order_id": order["order_id"], "item_ids": list(reversed(ids)), "payment_method_id": original})
    after = view.get("orders", order["order_id"])
    assert after["status"] == "return requested" and after["return_items"] == sorted(ids)
    with pytest.raises(RetailError, match="Non-delivered"):
        call_tool(view, "exchange_delivered_order_items", {"order_id": order["order_id"], "item_ids": ids[:1],
                                                           "new_item_ids": ids[:1], "payment_method_id": original})


def test_exchange_records_difference_without_moving_balances(base):
    order = _pick(base, lambda o: o["status"] == "delivered")
    line = order["items"][0]
    variants = base.tables["products"][line["product_id"]]["variants"]
    new_id = next((i for i, v in variants.items() if i != line["item_id"] and v["available"]), None)
    original = order["payment_history"][0]["payment_method_id"]
    view = base.view()
    users_before = copy.deepcopy(base.tables["users"][order["user_id"]])
    call_tool(view, "exchange_delivered_order_items", {"order_id": order["order_id"], "item_ids": [line["item_id"]],
                                                       "new_item_ids": [new_id], "payment_method_id": original})
    after = view.get("orders", order["order_id"])
    assert after["status"] == "exchange requested"
    assert after["exchange_price_difference"] == round(variants[new_id]["price"] - line["price"], 2)
    assert after["exchange_new_items"] == [new_id] and view.get("users", order["user_id"]) == users_before


def test_lookups(base):
    user = next(iter(base.tables["users"].values()))
    view = base.view()
    assert call_tool(view, "find_user_id_by_email", {"email": user["email"].upper()}) == user["user_id"]
    args = {"first_name": user["name"]["first_name"].lower(), "last_name": user["name"]["last_name"].upper(),
            "zip": user["address"]["zip"]}
    assert call_tool(view, "find_user_id_by_name_zip", args) == user["user_id"]
    new = {"address1": "1 A St", "address2": "", "city": "X", "state": "CA", "country": "USA", "zip": "00001"}
    call_tool(view, "modify_user_address", {"user_id": user["user_id"], **new})
    with pytest.raises(RetailError, match="^User not found$"):
        call_tool(view, "find_user_id_by_name_zip", args)
    assert call_tool(view, "find_user_id_by_name_zip", {**args, "zip": "00001"}) == user["user_id"]
    assert call_tool(base.view(), "find_user_id_by_name_zip", args) == user["user_id"]
    for tool, arg, msg in [("get_order_details", "order_id", "Order not found"),
                           ("get_product_details", "product_id", "Product not found"),
                           ("get_item_details", "item_id", "Item not found"),
                           ("get_user_details", "user_id", "User not found")]:
        with pytest.raises(RetailError, match=msg):
            call_tool(view, tool, {arg: "nope"})
    types = json.loads(call_tool(view, "list_all_product_types", {}))
    assert list(types) == sorted(types) and len(types) == 50
    item_id, product_id = next(iter(base.item_to_product.items()))
    assert json.loads(call_tool(view, "get_item_details", {"item_id": item_id})) == \
        base.tables["products"][product_id]["variants"][item_id]


@pytest.mark.parametrize("expr,expected", [("2 * (3.5 + 4)", "15.0"), ("10 / 3", "3.33"), ("0.1 + 0.2", "0.3")])
def test_calculate(base, expr, expected):
    assert call_tool(base.view(), "calculate", {"expression": expr}) == expected


@pytest.mark.parametrize("expr", ["__import__('os')", "2 ** 3", "", "1/0"])
def test_calculate_rejects(base, expr):
    with pytest.raises(RetailError):
        call_tool(base.view(), "calculate", {"expression": expr})


@pytest.mark.parametrize(("expr", "message"), [
    ("9" * 400, "Result out of range"),              # int too large to convert to float
    ("9" * 400 + " / 1", "Result out of range"),     # integer division result too large for a float
    ("9" * 200 + " * " + "9" * 200, "Result out of range"),
    ("1+" * 20_000 + "1", "Invalid expression"),     # parser recursion limit
    ("1" * 5000, "Invalid expression"),              # over Python's int-digit limit
], ids=["huge-literal", "huge-division", "huge-product", "20k-operators", "5000-digits"])
def test_calculate_extreme_input_is_a_model_visible_error(base, expr, message):
    """Model-written input must never crash the tool (a 500 would discard the rollout)."""
    with pytest.raises(RetailError, match=message):
        call_tool(base.view(), "calculate", {"expression": expr})


def test_bad_arguments_are_model_visible(base):
    with pytest.raises(RetailError, match="Bad arguments"):
        call_tool(base.view(), "get_order_details", {"order": "#W1"})
    with pytest.raises(RetailError, match="must be"):
        call_tool(base.view(), "return_delivered_order_items",
                  {"order_id": "#W1", "item_ids": "1", "payment_method_id": "x"})
