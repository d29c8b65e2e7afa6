"""``answer_line``: the one answer a reply commits to on its marked line (``ANSWER: ...``).

Source: the honest-grader checklist, point 1 (``docs/graders.md``): where the prompt asks for a marked
line, read the last one, and score 0 when it is missing, does not parse, or when other marked lines of the
reply disagree with it (a reply that commits to several answers commits to none: the doctor's
``work_then_dump`` pastes every candidate). This helper finds the line and says whether the reply committed
to one answer; parsing the body (a time, a number, yes/no) stays the grader's.
"""

from __future__ import annotations

import re

__all__ = ["answer_line"]

_BOLD = "**"


def _marked(marker: str) -> re.Pattern[str]:
    """A stripped line that starts with ``marker`` (case ignored; its spaces match runs of spaces or tabs), bold
    or not, then a colon: groups ``open`` (``**`` before the marker), ``close`` (``**`` before or after the
    colon) and ``body`` (the rest)."""
    words = r"[ \t]+".join(re.escape(w) for w in marker.split())
    return re.compile(rf"(?P<open>\*\*)?{words}[ \t]*(?P<before>\*\*)?[ \t]*:(?P<after>\*\*)?(?P<body>.*)",
                      re.IGNORECASE)


def _body(line: str, pattern: re.Pattern[str]) -> str | None:
    """The cleaned body of ``line`` when it is a marked line (see :func:`answer_line`), else ``None``."""
    m = pattern.fullmatch(line.strip())
    if m is None:
        return None
    opened = m["open"] is not None
    if m["before"] is not None and (m["after"] is not None or not opened):
        return None  # **ANSWER**:** x, ANSWER**: x: unbalanced bold
    if opened or m["after"] is None:
        body, closed = m["body"].strip(), m["before"] is not None or m["after"] is not None
    else:  # ANSWER:**x**: the bold is the body's
        body, closed = (m["after"] + m["body"]).strip(), False
    if opened and not closed:  # **ANSWER: x** (the whole line bold)
        if not body.endswith(_BOLD):
            return None  # **ANSWER: x: unbalanced bold
        body = body[: -len(_BOLD)].strip()
    stripped = body.endswith(".")
    if stripped:
        body = body[:-1].rstrip()
    inner = body[len(_BOLD): -len(_BOLD)]
    if len(body) > 2 * len(_BOLD) and body.startswith(_BOLD) and body.endswith(_BOLD) and _BOLD not in inner:
        body = inner.strip()  # ANSWER: **x** (not **a** and **b**: two bold parts, kept as written)
    if not stripped and body.endswith("."):
        body = body[:-1].rstrip()
    return body


def answer_line(text: str, marker: str = "ANSWER") -> str | None:
    """The body of the last line of ``text`` marked ``marker:``, or ``None`` when the reply commits to no one answer.

    A line is *marked* when, after its surrounding whitespace is stripped, it starts with ``marker`` (case
    ignored; a space in ``marker`` matches any run of spaces or tabs), then optional spaces or tabs, then a
    colon. Markdown bold is allowed around the marker (``**ANSWER:** x``, ``**ANSWER**: x``), around the whole
    line (``**ANSWER: x**``) or around the body (``ANSWER: **x**``); a line whose bold is unbalanced
    (``**ANSWER: x``) is not marked. Nothing else may come first: ``- ANSWER: x``, ``> ANSWER: x``,
    ``## ANSWER: x``, ``The ANSWER: x`` and ``ANSWERS: x`` are not marked lines, and neither is ``ANSWER = x``.

    The body is what follows the colon, with surrounding whitespace, the bold above (a body of several bold
    parts, ``**a** and **b**``, is kept as written) and one trailing period, outside or inside the bold,
    removed (``ANSWER: Yes.`` gives ``"Yes"``, ``ANSWER: 3.`` gives ``"3"``; case and inner spacing are
    kept). It is returned only when the reply commits to it:

    * ``None`` when no line is marked;
    * ``None`` when the marked lines disagree: their bodies differ once case is folded
      (``str.casefold``) and runs of whitespace collapsed (``ANSWER: yes`` then ``ANSWER: no``; an empty
      ``ANSWER:`` line disagrees with any other). Marked lines that agree (``ANSWER: 5`` then
      ``**Answer:** 5.``) give the last one's body;
    * ``None`` when the last marked line's body is empty.

    Parsing the body (a number, a time, one of the allowed words) and comparing it are the grader's: score 0
    when this returns ``None`` or the body does not parse (``docs/graders.md``, checklist point 1).

    Args:
        text: the reply, usually ``ctx.output_text`` (lines split with ``str.splitlines``).
        marker: the word(s) before the colon, as the prompt asks for them (``"ANSWER"``, ``"Final answer"``).

    Returns:
        The last marked line's body (a ``str``, never empty), or ``None``.

    Raises:
        TypeError: ``text`` or ``marker`` is not a ``str``.
        ValueError: ``marker`` is empty, or holds a colon or a line break (pass the word(s) before the colon,
            e.g. ``marker="ANSWER"``).
    """
    if not isinstance(text, str) or not isinstance(marker, str):
        raise TypeError(f"answer_line(text, marker) takes two str, got {type(text).__name__} and "
                        f"{type(marker).__name__}: pass the reply's text, e.g. ctx.output_text")
    if not marker.strip() or ":" in marker or "\n" in marker or "\r" in marker:
        raise ValueError(f"answer_line: marker must be the word(s) before the colon, without the colon or a line "
                         f"break, got {marker!r}: e.g. marker='ANSWER'")
    pattern = _marked(marker)
    bodies = [b for b in (_body(line, pattern) for line in text.splitlines()) if b is not None]
    if not bodies or len({" ".join(b.casefold().split()) for b in bodies}) > 1 or not bodies[-1]:
        return None
    return bodies[-1]
