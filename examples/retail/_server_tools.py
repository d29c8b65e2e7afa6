"""The retail tools as served SDK tools: typed signatures and model-facing docstrings.

Each function only forwards to the pure implementation in ``_tools`` on a view
of the shared base database plus this rollout's overlay, which lives in
``rollout.state["db"]`` (``{table: {key: record}}``, JSON-serialisable). A
failed precondition becomes ``ToolError`` (HTTP 400, shown to the model).
"""

from __future__ import annotations

from rft_sdk import Rollout, ToolError

from ._db import load_base_db
from ._tools import RetailError, call_tool

__all__ = ["SERVED_TOOLS", "STATE_KEY"]

STATE_KEY = "db"


def _run(rollout: Rollout, name: str, **arguments: object) -> str:
    view = load_base_db().view(rollout.state.setdefault(STATE_KEY, {}))
    try:
        return call_tool(view, name, arguments)
    except RetailError as exc:
        raise ToolError(str(exc)) from exc


async def find_user_id_by_email(email: str, *, rollout: Rollout) -> str:
    """Find a customer's user id from their email address (case-insensitive).

    Args:
        email: the customer's email, e.g. "john.doe1234@example.com".
    """
    return _run(rollout, "find_user_id_by_email", email=email)


async def find_user_id_by_name_zip(first_name: str, last_name: str, zip: str, *, rollout: Rollout) -> str:
    """Find a customer's user id from their first name, last name and zip code.

    Use this when the customer cannot give their email.

    Args:
        first_name: the customer's first name, e.g. "John".
        last_name: the customer's last name, e.g. "Doe".
        zip: the zip code of the customer's default address, e.g. "12345".
    """
    return _run(rollout, "find_user_id_by_name_zip", first_name=first_name, last_name=last_name, zip=zip)


async def get_user_details(user_id: str, *, rollout: Rollout) -> str:
    """Get a customer's profile as JSON.

    It holds the name, default address, email, payment methods (with gift card
    balances) and order ids.

    Args:
        user_id: the user id, e.g. "sara_doe_496".
    """
    return _run(rollout, "get_user_details", user_id=user_id)


async def get_order_details(order_id: str, *, rollout: Rollout) -> str:
    """Get an order as JSON.

    It holds the status, shipping address, items (item ids, prices, options),
    fulfillments (tracking ids) and payment history.

    Args:
        order_id: the order id, starting with "#", e.g. "#W0000000".
    """
    return _run(rollout, "get_order_details", order_id=order_id)


async def get_order_status(order_id: str, *, rollout: Rollout) -> str:
    """Get just the status of an order, e.g. "pending" or "delivered".

    Args:
        order_id: the order id, starting with "#", e.g. "#W0000000".
    """
    return _run(rollout, "get_order_status", order_id=order_id)


async def get_product_details(product_id: str, *, rollout: Rollout) -> str:
    """Get a product and all its variants as JSON.

    Each variant has its item id, options, availability and price. Product ids
    and item ids are different.

    Args:
        product_id: the product id, e.g. "6086499569".
    """
    return _run(rollout, "get_product_details", product_id=product_id)


async def get_item_details(item_id: str, *, rollout: Rollout) -> str:
    """Get one product variant (item) as JSON: options, availability and price.

    Args:
        item_id: the item id, e.g. "1008292230".
    """
    return _run(rollout, "get_item_details", item_id=item_id)


async def list_all_product_types(*, rollout: Rollout) -> str:
    """List every product type the store sells as a JSON object: name -> product id."""
    return _run(rollout, "list_all_product_types")


async def calculate(expression: str, *, rollout: Rollout) -> str:
    """Evaluate an arithmetic expression; the result is rounded to 2 decimals.

    Args:
        expression: digits, "+", "-", "*", "/", parentheses, "." and spaces only, e.g. "2 * (3.5 + 4)".
    """
    return _run(rollout, "calculate", expression=expression)


async def transfer_to_human_agents(summary: str, *, rollout: Rollout) -> str:
    """Transfer the customer to a human agent, with a summary of their issue.

    Use only when the request cannot be handled with the other tools.

    Args:
        summary: a short summary of the customer's issue.
    """
    return _run(rollout, "transfer_to_human_agents", summary=summary)


async def cancel_pending_order(order_id: str, reason: str, *, rollout: Rollout) -> str:
    """Cancel a pending order. Only after the customer explicitly confirmed.

    Every payment is refunded to its payment method (gift cards at once).
    Returns the updated order.

    Args:
        order_id: the order id, e.g. "#W0000000"; the order must be "pending".
        reason: exactly "no longer needed" or "ordered by mistake".
    """
    return _run(rollout, "cancel_pending_order", order_id=order_id, reason=reason)


async def modify_pending_order_address(order_id: str, address1: str, address2: str, city: str,
                                       state: str, country: str, zip: str, *, rollout: Rollout) -> str:
    """Change the shipping address of a pending order.

    Only after the customer explicitly confirmed. Returns the updated order.

    Args:
        order_id: the order id, e.g. "#W0000000"; its status must contain "pending".
        address1: first address line, e.g. "123 Main St".
        address2: second address line, e.g. "Apt 1", or "" if none.
        city: city, e.g. "Austin".
        state: state code, e.g. "TX".
        country: country, e.g. "USA".
        zip: zip code, e.g. "78701".
    """
    return _run(rollout, "modify_pending_order_address", order_id=order_id, address1=address1,
                address2=address2, city=city, state=state, country=country, zip=zip)


async def modify_pending_order_payment(order_id: str, payment_method_id: str, *, rollout: Rollout) -> str:
    """Pay for a pending order with another of the customer's payment methods.

    The old method is refunded. Only after the customer explicitly confirmed.
    Returns the updated order.

    Args:
        order_id: the order id, e.g. "#W0000000"; its status must contain "pending".
        payment_method_id: a payment method id from the customer's profile, different from
            the current one, e.g. "gift_card_0000000" (a gift card must cover the total).
    """
    return _run(rollout, "modify_pending_order_payment", order_id=order_id,
                payment_method_id=payment_method_id)


async def modify_pending_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str],
                                     payment_method_id: str, *, rollout: Rollout) -> str:
    """Swap items of a pending order for other variants of the same products.

    Can be done only once per order, so include every item to change. Only after
    the customer explicitly confirmed. Returns the updated order.

    Args:
        order_id: the order id, e.g. "#W0000000"; its status must be exactly "pending".
        item_ids: item ids to change, repeated if an item appears twice, e.g. ["1008292230"].
        new_item_ids: the new item id for each entry of item_ids, same order; each must be an
            available variant of the same product, e.g. ["1008292231"].
        payment_method_id: customer's payment method that pays or receives the price
            difference, e.g. "credit_card_0000000".
    """
    return _run(rollout, "modify_pending_order_items", order_id=order_id, item_ids=item_ids,
                new_item_ids=new_item_ids, payment_method_id=payment_method_id)


async def modify_user_address(user_id: str, address1: str, address2: str, city: str, state: str,
                              country: str, zip: str, *, rollout: Rollout) -> str:
    """Change the customer's default address.

    Only after the customer explicitly confirmed. Returns the updated profile.

    Args:
        user_id: the user id, e.g. "sara_doe_496".
        address1: first address line, e.g. "123 Main St".
        address2: second address line, e.g. "Apt 1", or "" if none.
        city: city, e.g. "Austin".
        state: state code, e.g. "TX".
        country: country, e.g. "USA".
        zip: zip code, e.g. "78701".
    """
    return _run(rollout, "modify_user_address", user_id=user_id, address1=address1,
                address2=address2, city=city, state=state, country=country, zip=zip)


async def return_delivered_order_items(order_id: str, item_ids: list[str], payment_method_id: str,
                                       *, rollout: Rollout) -> str:
    """Request the return of items of a delivered order.

    Only after the customer explicitly confirmed. Returns the updated order
    (status "return requested").

    Args:
        order_id: the order id, e.g. "#W0000000"; the order must be "delivered".
        item_ids: item ids to return, repeated if an item appears twice, e.g. ["1008292230"].
        payment_method_id: where the refund goes: the order's original payment method or
            one of the customer's gift cards, e.g. "gift_card_0000000".
    """
    return _run(rollout, "return_delivered_order_items", order_id=order_id, item_ids=item_ids,
                payment_method_id=payment_method_id)


async def exchange_delivered_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str],
                                         payment_method_id: str, *, rollout: Rollout) -> str:
    """Request the exchange of delivered items for other variants of the same products.

    Exchange every item in one call. Only after the customer explicitly
    confirmed. Returns the updated order (status "exchange requested").

    Args:
        order_id: the order id, e.g. "#W0000000"; the order must be "delivered".
        item_ids: item ids to exchange, repeated if an item appears twice, e.g. ["1008292230"].
        new_item_ids: the new item id for each entry of item_ids, same order; each must be an
            available variant of the same product, e.g. ["1008292231"].
        payment_method_id: customer's payment method that pays or receives the price
            difference, e.g. "gift_card_0000000" (a gift card must cover a positive difference).
    """
    return _run(rollout, "exchange_delivered_order_items", order_id=order_id, item_ids=item_ids,
                new_item_ids=new_item_ids, payment_method_id=payment_method_id)


SERVED_TOOLS = (
    calculate, cancel_pending_order, exchange_delivered_order_items, find_user_id_by_email,
    find_user_id_by_name_zip, get_item_details, get_order_details, get_product_details,
    get_user_details, list_all_product_types, modify_pending_order_address,
    modify_pending_order_items, modify_pending_order_payment, modify_user_address,
    return_delivered_order_items, transfer_to_human_agents,
)
