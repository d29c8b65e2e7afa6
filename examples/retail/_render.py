"""Render a τ²-bench retail task as one single-turn customer conversation.

τ²-bench drives a simulated customer with second-person instructions ("You
received your order ..."). The hosted RFT service has no simulated customer,
so each task becomes one user message in the customer's own voice: identity
details (``known_info``/``unknown_info``), the request (``reason_for_call``),
manner (``task_instructions``), then an explicit, final list of the changes
the customer confirms ("yes, go ahead"), written from the gold write calls
that succeed so a conditional scenario ("if the agent asks for confirmation,
change your mind ...") still has one unambiguous outcome.
"""

from __future__ import annotations

import re
from typing import Any

from ._db import RetailView
from ._tools import WRITE_TOOLS, RetailError, call_tool

__all__ = ["SYSTEM_PROMPT", "reference_answer", "render_user_message", "to_first_person"]

SYSTEM_PROMPT = """\
You are the customer-service agent of an online retail store. Help the one \
customer in this conversation using the tools you have, and follow these store rules.

1. Identify the customer before anything else: look up their user id from their \
email, or from their first name, last name and zip code. Do this even if they \
tell you their user id.
2. Help only this customer. Do not reveal or act on anything that belongs to \
another user.
3. Once the customer is identified you may always look up their profile, their \
orders and product information.
4. Changes to the store's records (cancelling an order, changing an order's \
address, payment or items, returning or exchanging items, changing the \
customer's default address) need the exact details of the change and the \
customer's explicit "yes" before you make them. When the customer has already \
confirmed the changes in their message, go ahead without asking again.
5. Cancel only orders that are still pending, and only when the reason is \
"no longer needed" or "ordered by mistake". Only pending orders can have their \
address, payment method or items changed; an item may only be swapped for \
another available variant of the same product, and an order's items can be \
changed only once, so change all of them in one call.
6. Only delivered orders can be returned or exchanged. An exchange swaps items \
for available variants of the same product and must include every item in a \
single call. Refunds go to the original payment method or to one of the \
customer's existing gift cards; price differences are paid with one of the \
customer's own payment methods, and a gift card must have enough balance.
7. Never make up information, ids or prices: get them from the tools. Use the \
calculator for arithmetic. Transfer the customer to a human agent only when \
the request cannot be handled with these actions.
8. When you are done, tell the customer what you did and answer every question \
they asked, with the exact figures.\
"""

_AGENT = "\x00"
_ME_AFTER = {
    "to", "for", "with", "give", "gives", "tell", "tells", "ask", "asks", "help", "helps",
    "offer", "offers", "send", "sends", "let", "lets", "provide", "provides", "show", "shows",
    "about", "than", "remind", "of", "at", "from", "get", "gets", "charge", "refund", "call",
    "contact", "told", "asked", "gave", "offered", "by", "allow", "allows", "assist",
    "suits", "suit", "like", "guide", "notify", "upon", "against",
}
_AGENT_VERBS = {"asks": "ask", "tells": "tell", "says": "say", "mentions": "mention",
                "gives": "give", "provides": "provide", "confirms": "confirm", "offers": "offer",
                "doesn't": "don't", "does": "do", "has": "have", "is": "are", "was": "were",
                "lists": "list", "finds": "find", "needs": "need", "refuses": "refuse",
                "allows": "allow", "wants": "want", "informs": "inform", "requires": "require"}
_SIMPLE_PRONOUNS = {"you're": "I'm", "you are": "I am", "you were": "I was", "you've": "I've",
                    "you'd": "I'd", "you'll": "I'll", "your": "my", "yours": "mine",
                    "yourself": "myself", "yourselves": "ourselves"}
_IMPERATIVES = ("Ask", "Insist", "Mention", "Tell", "Make sure", "Provide", "Say", "Respond",
                "Request", "Check", "Try", "Be", "Get", "Thank", "Explain")


def to_first_person(text: str) -> str:
    """Rewrite second-person simulator instructions in the customer's voice.

    ``"You want to return your lamp; ask the agent for a refund."`` →
    ``"I want to return my lamp; I ask you for a refund."`` (a heuristic:
    pronouns by a word list; "the agent" becomes "you").
    """
    text = re.sub(r"\b(?:the|a) (?:customer service |human )?agent\b(?! agent)", _AGENT, text)
    text = re.sub(r"\bThe (?:customer service )?agent\b", _AGENT, text)
    text = re.sub(r"\b[Yy]ou name\b", "My name", text)

    def pronoun(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if lower in _SIMPLE_PRONOUNS:
            out = _SIMPLE_PRONOUNS[lower]
        else:
            before = text[:match.start()].rstrip()
            prev = re.findall(r"[A-Za-z']+$", before)
            after_verb = prev and prev[-1].lower() in _ME_AFTER
            out = "me" if after_verb else "I"
        return out[0].upper() + out[1:] if word[0].isupper() and out != "me" else out

    text = re.sub(r"\b(?:you(?:'re| are| were|'ve|'d|'ll)|yourselves|yourself|yours|your|you)\b",
                  pronoun, text, flags=re.IGNORECASE)

    def agent(match: re.Match[str]) -> str:
        adverb, verb = match.group(1) or "", match.group(2) or ""
        return "you" + adverb + (" " + _AGENT_VERBS.get(verb, verb) if verb else "")

    text = re.sub(rf"{_AGENT}'s", "your", text)
    text = re.sub(rf"{_AGENT}((?: (?:just|then|also|still|only|explicitly|already))?)(?: ([A-Za-z']+))?",
                  lambda m: agent(m) if m.group(2) else "you" + m.group(1), text)
    text = re.sub(r"(, |otherwise |then )(ask|tell|say|mention|insist) (you|that)\b", r"\1I \2 \3", text)
    text = re.sub(r"(^|[.!?]\s+)you\b", lambda m: m.group(1) + "You", text)
    for verb in _IMPERATIVES:  # imperatives addressed to the simulated customer
        text = re.sub(rf"(^|[.!?;]\s+|\n\s*){verb}\b", lambda m, v=verb: f"{m.group(1)}I {v.lower()}", text)
    text = re.sub(r"\bI be\b", "I am", text)
    return text


def _clean(text: str | None) -> str:
    text = (text or "").strip().lstrip(".").strip()
    return re.sub(r"\s+", " ", text)


def _sentence(text: str) -> str:
    text = _clean(text)
    if text and text[-1] not in ".!?":
        text += "."
    return text


def _method(view: RetailView, user_id: str, method_id: str) -> str:
    user = view.get("users", user_id)
    method = (user or {}).get("payment_methods", {}).get(method_id)
    if method is None:
        return f"payment method {method_id}"
    if method["source"] == "credit_card":
        return f"{method.get('brand', 'credit').title()} card ending in {method.get('last_four', '?')}"
    if method["source"] == "paypal":
        return "PayPal account"
    return f"gift card ({method_id})"


def _options(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in options.items())


def _line(order: dict[str, Any], item_id: str) -> tuple[str, dict[str, Any]]:
    line = next(x for x in order["items"] if x["item_id"] == item_id)
    return line["name"], line["options"]


def _swap(view: RetailView, order: dict[str, Any], old_id: str, new_id: str) -> str:
    name, old = _line(order, old_id)
    product_id = view.base.item_to_product[new_id]
    new = view.get("products", product_id)["variants"][new_id]["options"]
    changed = {k: v for k, v in new.items() if old.get(k) != v}
    target = f"one with {_options(changed)}" if changed else "an identical new one"
    return f"the {name} ({_options(old)}) for {target}"


def _address(args: dict[str, Any]) -> str:
    parts = [args["address1"], args["address2"], args["city"], f"{args['state']} {args['zip']}", args["country"]]
    return ", ".join(p for p in parts if p)


def _describe(view: RetailView, name: str, args: dict[str, Any]) -> str:
    """One confirmed change, described as the customer would (before it is applied)."""
    if name == "modify_user_address":
        return f"change my default address to {_address(args)}"
    order = view.get("orders", args["order_id"])
    oid, user_id = args["order_id"], order["user_id"]
    if name == "cancel_pending_order":
        return f"cancel order {oid} (reason: {args['reason']})"
    if name == "modify_pending_order_address":
        return f"change the shipping address of order {oid} to {_address(args)}"
    if name == "modify_pending_order_payment":
        return f"pay for order {oid} with my {_method(view, user_id, args['payment_method_id'])} instead"
    method = _method(view, user_id, args["payment_method_id"])
    if name == "return_delivered_order_items":
        names = [_line(order, i)[0] for i in args["item_ids"]]
        return f"return the {', '.join(names)} from order {oid}, refunded to my {method}"
    swaps = "; ".join(_swap(view, order, o, n) for o, n in zip(args["item_ids"], args["new_item_ids"]))
    verb = "in pending order" if name == "modify_pending_order_items" else "from delivered order"
    kind = "change" if name == "modify_pending_order_items" else "exchange"
    return f"{kind} {verb} {oid}: {swaps} (any price difference via my {method})"


def confirmed_changes(view: RetailView, actions: list[dict[str, Any]]) -> tuple[list[str], bool]:
    """Describe the gold write calls that succeed, applying every gold call to ``view``.

    Returns:
        ``(descriptions, transfer)``: one sentence per successful write, and
        whether the gold calls include a transfer to a human agent.
    """
    changes, transfer = [], False
    for action in actions:
        name, args = action["name"], action["arguments"]
        transfer = transfer or name == "transfer_to_human_agents"
        text = _describe(view, name, args) if name in WRITE_TOOLS else None
        try:
            call_tool(view, name, args)
        except RetailError:
            continue
        if text:
            changes.append(text)
    return changes, transfer


def render_user_message(task: dict[str, Any], view: RetailView) -> str:
    """The single customer message for a τ²-bench ``task`` (see module doc).

    ``view`` must be a fresh view; the gold calls are applied to it.
    """
    instr = task["user_scenario"]["instructions"]
    parts = ["Hi!", to_first_person(_sentence(instr.get("known_info")))]
    unknown = _clean(instr.get("unknown_info"))
    if unknown and unknown.lower() not in ("none", "."):
        parts.append(to_first_person(_sentence(unknown)))
    parts.append(to_first_person(_sentence(instr.get("reason_for_call"))))
    manner = _clean(instr.get("task_instructions"))
    if manner:
        parts.append("(About me: " + to_first_person(_sentence(manner)) + ")")
    changes, transfer = confirmed_changes(view, task["evaluation_criteria"]["actions"])
    body = " ".join(p for p in parts if p)
    if changes:
        listed = "\n".join(f"- {c}" for c in changes)
        body += ("\n\nTo be clear, this is my final decision, so where it differs from the above, "
                 f"go by this list. Please:\n{listed}\n\nYes, go ahead: I confirm all of these changes.")
    elif transfer:
        body += "\n\nIf you cannot do this for me, please transfer me to a human agent."
    else:
        body += ("\n\nIf there is anything you can change for me within the store's rules, "
                 "yes, go ahead; otherwise please don't change anything.")
    return body


def reference_answer(task: dict[str, Any]) -> str:
    """A final answer that states every ``communicate_info`` string of ``task``."""
    info = task["evaluation_criteria"].get("communicate_info") or []
    text = "Thank you for your patience. I have taken care of your request as confirmed."
    if info:
        text += " Here are the details you asked about: " + "; ".join(info) + "."
    return text
