"""The hosted services' rule for a tool's or a grader's name: 1-64 ASCII letters, digits, ``_`` or ``-``
(``^[A-Za-z0-9_-]{1,64}$``, OpenAI's function-name rule). One copy, matched whole (``fullmatch``: a trailing
newline is no part of a valid name, which ``re.match`` with ``$`` would let through)."""

from __future__ import annotations

import re

__all__ = ["NAME_RE"]

#: A valid tool or grader name, matched with ``NAME_RE.fullmatch(name)``.
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
