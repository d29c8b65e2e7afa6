"""Text normalisation shared by the retail grader's rules: money and numbers compared as values."""

from __future__ import annotations

import re

__all__ = ["contains", "mentions", "normalize_text"]

_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def _canonical_number(match: re.Match[str]) -> str:
    token = match.group(0).replace(",", "")
    if "." in token:
        token = token.rstrip("0").rstrip(".")
    return token


def normalize_text(text: str) -> str:
    """Lower-case, drop ``$``, canonicalise numbers: ``"$1,234.50"`` → ``"1234.5"``."""
    text = text.lower().replace("$", "")
    return _NUMBER.sub(_canonical_number, text)


def contains(normalized: str, required: str) -> bool:
    """:func:`mentions` for a text already passed through :func:`normalize_text` (normalise once, search often)."""
    needle = normalize_text(required).strip()
    if not needle:
        return True
    if needle not in normalized:  # cheap reject before the boundary-aware search
        return False
    pattern = r"(?<![\w.])" + re.escape(needle) + r"(?!\w|\.\d)"
    return re.search(pattern, normalized) is not None


def mentions(answer: str, required: str) -> bool:
    """Whether ``required`` appears in ``answer`` after :func:`normalize_text`.

    A number must match whole: ``"10"`` is not found in ``"100"`` or ``"10.5"``.
    """
    return contains(normalize_text(answer), required)
