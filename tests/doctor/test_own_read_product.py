"""``own_read_product`` (``rft_sdk.doctor._own_read_product``) on a small conversion task, at the level of what it
plays: the factor is found from the gold's reads and the reference's working, the rate is read for the payment's
other date, and the answer is that rate's amount less the same fee."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from rft_sdk.doctor._own_read_product import OwnReadProduct
from rft_sdk.doctor._probes import ProbeContext

RATES = {"2026-03-02": "0.85210", "2026-03-04": "0.85377", "2026-03-05": "0.85502"}
PAYMENTS = {"FT-1": ("12850.00", "2026-03-02", "2026-03-04"), "FT-2": ("730.40", "2026-03-04", "2026-03-05")}
FEE = Decimal("12.50")


def _gbp(amount: str, rate: str) -> Decimal:
    return (Decimal(amount) * Decimal(rate)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _items() -> tuple[list[dict[str, Any]], list[list[str]]]:
    items, outputs = [], []
    for ref, (amount, trade, value) in PAYMENTS.items():
        gross = _gbp(amount, RATES[value])
        items.append({"messages": [{"role": "user", "content": f"What is credited for {ref}?"}],
                      "actions": [{"name": "get_payment", "arguments": {"ref": ref}},
                                  {"name": "get_rate", "arguments": {"currency": "EUR", "date": value}}],
                      "reference_answer": f"EUR {amount} at {RATES[value]} is GBP {gross:,}; the fee is GBP {FEE}.\n"
                                          f"ANSWER: GBP {gross - FEE:,}"})
        outputs.append([json.dumps({"ref": ref, "amount": amount, "trade_date": trade, "value_date": value}),
                        json.dumps({"currency": "EUR", "date": value, "gbp_per_unit": RATES[value]})])
    return items, outputs


def test_the_rate_is_read_for_the_other_date_and_the_answer_converts_at_it():
    items, outputs = _items()
    probe = OwnReadProduct(write_tools=set())
    probe.prepare(ProbeContext(items, gold_ok=[[True, True]] * 2, gold_outputs=outputs, write_tools=set()))
    found = probe.option(items[0])
    assert found is not None and (found["argument"], found["from"], found["to"]) == ("date", "2026-03-04", "2026-03-02")
    assert probe.plan(items[0])[1][0]["arguments"] == {"currency": "EUR", "date": "2026-03-02"}
    reply = probe.final_reply(items[0], [outputs[0][0], json.dumps({"gbp_per_unit": RATES["2026-03-02"]})])
    assert reply.endswith(f"ANSWER: GBP {_gbp('12850.00', RATES['2026-03-02']) - FEE:,}")  # 10,936.99
    assert reply.startswith("EUR 12850.00 at 0.85377")  # the working is left as it was
    # the same rate read again gives the same amount: nothing to play
    assert probe.restated(items[0], outputs[0][1]) is None


def test_a_read_whose_argument_no_earlier_output_shows_beside_another_value_is_not_played():
    items, outputs = _items()
    outputs = [[json.dumps({"ref": "FT-1", "amount": "12850.00", "value_date": "2026-03-04"}), outputs[0][1]]]
    probe = OwnReadProduct(write_tools=set())
    probe.prepare(ProbeContext(items[:1], gold_ok=[[True, True]], gold_outputs=outputs, write_tools=set()))
    assert probe.option(items[0]) is None
