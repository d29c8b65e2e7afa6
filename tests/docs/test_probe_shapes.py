"""``docs/probe-shapes.md`` groups the built-in probes by the kind of item they can play, and each table row is a
probe's own skip reason: this test rebuilds the tables from ``default_probes()`` and checks the page against them,
so the page says what the code does. When a probe is added or its reason changes, the failure prints the section
as it should read now (``python tests/docs/test_probe_shapes.py`` prints the whole generated part)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from rft_sdk.doctor import default_probes

PAGE = Path(__file__).resolve().parents[2] / "docs" / "probe-shapes.md"

#: An item with gold fields: the probes' skip reasons for it (one without them gets "no 'actions' list").
GOLD = {"messages": [{"role": "user", "content": "x"}], "actions": [{"name": "x", "arguments": {}}],
        "reference_answer": "x"}

#: The page's sections, in order: (heading, anchor).
SECTIONS = {
    "every": ("Every item", "every-item"),
    "budget": ("A declared budget", "a-declared-budget"),
    "answer": ("The gold writes nothing", "the-gold-writes-nothing"),
    "writes": ("The gold writes", "the-gold-writes"),
    "content": ("Decided by what the answer or the calls hold", "decided-by-content"),
}


def group(reason: str) -> str:
    """The page's group of a probe, from its skip reason on :data:`GOLD`."""
    if reason == "not applicable":                       # no applies(): every item
        return "every"
    if reason.startswith("the gold makes no tool call"):
        return "budget"
    writes = re.search(r"the gold (changes nothing|writes nothing|has fewer than two writes|has no commit write)",
                       reason)
    answer = re.search(r"the gold (changes state|writes[,;])", reason)
    assert not (writes and answer), reason
    return "writes" if writes else "answer" if answer else "content"


def tables() -> dict[str, str]:
    """Per group, its table: one row per distinct skip reason, the probes that give it."""
    rows: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name, probe in default_probes().items():
        reason = probe.skip_reason(GOLD)
        rows[group(reason)][reason].append(name)
    out = {}
    for key in SECTIONS:
        lines = ["| probes | skipped on an item where |", "|---|---|"]
        lines += [f"| {', '.join(f'`{n}`' for n in names)} | {reason} |" for reason, names in rows[key].items()]
        out[key] = "\n".join(lines)
    return out


def generated() -> str:
    """The generated part of the page: one section per group."""
    parts = []
    for key, table in tables().items():
        count = table.count("`") // 2
        title, anchor = SECTIONS[key]
        parts.append(f"## {title} ({count} probes) {{ #{anchor} }}\n\n{table}\n")
    return "\n".join(parts)


def test_every_probe_is_on_the_page_once() -> None:
    text = PAGE.read_text(encoding="utf-8")
    body = text[text.index("<!-- generated -->"):]
    named = re.findall(r"`([a-z_0-9]+)`", body)
    assert sorted(named) == sorted(default_probes()), "docs/probe-shapes.md names other probes than the suite"


def test_each_section_is_the_codes_table() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for key, table in tables().items():
        assert table in text, f"docs/probe-shapes.md, section {SECTIONS[key][0]!r} should read:\n\n{table}"


def test_the_generated_part_is_the_pages_tail() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text.endswith("<!-- generated -->\n\n" + generated()), "regenerate: python tests/docs/test_probe_shapes.py"


if __name__ == "__main__":
    print(generated(), end="")
