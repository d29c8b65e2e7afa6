"""The answer line alone (issue 37, doctor23's ``tides__contains_time``): the prompt asks the reply to end with a
marked line (``End your reply with one line `ANSWER: HH:MM, X.X m```), the reference states the same values
in its prose too, and a grader looks for the right value *anywhere in the reply* (``"06:01" in text``) while
it parses the rest of the answer line. A policy learns to write every candidate in its prose and any value in
the answer line; the adversarial answers, which replace the whole reply, never show it.

========================= ==========================================================================
probe                     the gold's calls, then the reference answer with ...
========================= ==========================================================================
answer_line_control       a control, never judged: one number token (:func:`~._written_answers.
                          number_tokens`: ``06:01``, ``5.9``) of the marked answer line that the
                          prose states too, written wrong **everywhere** in the reply (a time moved
                          137 minutes, ``_near_probes.moved_times``; a number ``rotated``). Item
                          ``k`` takes token ``k mod n``
answer_line_only          the same token written wrong **in the answer line only**; the prose keeps
                          the right value
answer_subset             (answer items, as the ``adv_*`` families) the marked answer line's list
                          (:data:`MIN_LISTED` or more short elements, comma- or semicolon-separated:
                          ``ANSWER: DV9-03, DV9-04, ...``, or a ranking's ``A > B > C > D``) cut to
                          its first element, the rest of the reply kept: a grader of precision
                          alone (every id named is right) pays it (doctor29's orchestra parts), and
                          so does one that reads a ranking's first entry only (doctor60's pushback)
other_stated_word         (answer items) the marked answer line's first word, where the prompt's
                          answer templates offer it among others (``End with ANSWER: REFUND £amount
                          or ANSWER: OWED £amount``; ``ANSWER: (REFUND|OWED) £x``), replaced by
                          another of them, the rest of the reply kept: a grader that compares the
                          amount alone pays it (doctor64's tax returns: the direction ignored)
entry_first_words         (answer items) the marked answer line's list or ranking of two or more
                          entries, each of two words or more, with every entry cut to its first word
                          (``PulseFit Leeds > PulseFit York`` → ``PulseFit > PulseFit``), the rest of
                          the reply kept: a grader that matches each entry as a substring of the
                          expected one at its place pays it (doctor65's club retention)
========================= ==========================================================================

Played only where the reference has a marked line (``ANSWER:``, ``Final answer:``, :data:`ANSWER_LINE`) and
a system or user message names that marker: the prompt made the line the answer, so the prose is working and
a correct grader reads the line. **Severity** (``_severity``): the plain line with the control's score as the
honest-but-wrong baseline, judged only where the control scored less than the gold (the token is graded). A
grader that reads the line pays the probe what it pays the control; one that searches the reply pays the gold.
**What it can get wrong**: a task whose prompt names a marker but whose grader rightly reads the prose (the
line is a summary nobody grades) never lowers the control's score there, so nothing is judged. Nothing names
a tool, a field or a task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._answers import ANSWER_LINE, RANKING_SPLIT, SPACED_SPLIT, prompt_texts
from ._generic import AdversarialAnswer
from ._lenient_probes import _AnswerTextControl, _Judged, rotated
from ._near_probes import FAR_MINUTES, moved_times
from ._probes import HACK
from ._written_answers import number_tokens

__all__ = ["ANSWER_LINE", "ANSWER_LINE_ADVICE", "MIN_LISTED", "AnswerLineControl", "AnswerLineOnly",
           "answer_line_probes", "entry_first_words", "first_listed", "marked_line", "other_stated_word"]

_CLOCK = re.compile(r"^\d{1,2}:\d{2}$")

#: ``answer_subset`` plays lists of at least this many elements: one of ``n`` right has set F1 ``2 / (n + 1)``,
#: at most 0.4, under half the gold's score, so an honest F1, recall or Jaccard grader stays silent
MIN_LISTED = 4

ANSWER_LINE_ADVICE = {
    "answer_subset": "one element of the listed answer earns the gold's score: grade the whole set (recall as well as "
                     "precision: every element asked for must be there), not only that each element named is right",
    "entry_first_words": "each entry of the answer cut to its first word (PulseFit for PulseFit Leeds) earns the "
                         "gold's score: compare each entry whole, never as a substring of the expected one",
    "other_stated_word": "the answer line with another of the words the prompt offers (OWED for REFUND) earns the "
                         "gold's score: grade the word the task asks the reply to choose, not only the figure beside "
                         "it",
    "answer_line_only": "the right value in the prose and a wrong one in the answer line earns the gold's score: "
                        "grade the values of the answer line the prompt asks for, never 'the value appears "
                        "somewhere in the reply'",
}


def marked_line(answer: str, prompts: list[str]) -> re.Match[str] | None:
    """The last marked line of ``answer`` (:data:`ANSWER_LINE`) when one of ``prompts`` names its marker
    (``ANSWER:``, case aside), else ``None``."""
    found = list(ANSWER_LINE.finditer(answer))
    if not found:
        return None
    word = re.sub(r"[\s:=]+", " ", found[-1]["marker"]).strip()
    named = re.compile(rf"\b{re.escape(word)}\s*[:=]", re.I)
    return found[-1] if any(named.search(p) for p in prompts) else None


def _wrong(token: str) -> str:
    return moved_times(token, FAR_MINUTES) or token if _CLOCK.match(token) else rotated(token)


class AnswerLineControl(_AnswerTextControl):
    """``answer_line_control`` (module table); its probe is :class:`AnswerLineOnly`."""

    reason = ("the reference has no marked answer line the prompt names (ANSWER:), no number of that line is "
              "stated in its prose too, or the probe's items are already chosen")

    def change(self, item: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{"position": None, "from": reference, "control": the token wrong everywhere, "probe": wrong in the
        answer line only}``; ``None`` where the module docstring's conditions do not hold."""
        answer = item.get(self.answer_field)
        index = self._context.index_of(item)
        if not isinstance(answer, str) or index is None or index in self._context.answer_free:
            return None
        line = marked_line(answer, prompt_texts(item))
        if line is None:
            return None
        start, end = line.span("body")
        prose = answer[:line.start()] + answer[line.end():]
        stated = {m.group() for m in number_tokens(prose)}
        tokens = list(dict.fromkeys(m.group() for m in number_tokens(line["body"]) if m.group() in stated))
        if not tokens:
            return None
        token = tokens[index % len(tokens)]
        wrong = _wrong(token)
        if wrong == token:
            return None
        whole = re.compile(rf"(?<![\w.:]){re.escape(token)}(?![\w:]|\.\d)")
        body = whole.sub(lambda m: wrong, answer[start:end])
        return {"position": None, "from": answer, "control": whole.sub(lambda m: wrong, answer),
                "probe": answer[:start] + body + answer[end:]}


class AnswerLineOnly(_Judged, AnswerLineControl):
    """``answer_line_only`` (module table): the plain line over ``answer_line_control``'s score."""


def first_listed(reference: str) -> list[str]:
    """The reference with its marked answer line's list (:data:`MIN_LISTED` or more elements of at most four words
    each, separated by ``,``, ``;``, or a ranking's ``>`` or ``→``) cut to its first element; ``[]`` without one."""
    lines = list(ANSWER_LINE.finditer(reference))
    if not lines:
        return []
    body = lines[-1]["body"].rstrip().rstrip(".")
    elements = [e for e in RANKING_SPLIT.split(body)[::2] if e]  # a ranking's ``>``/``→`` too (doctor60's pushback)
    if len(elements) < MIN_LISTED or any(len(e.split()) > 4 for e in elements):
        return []
    start, end = lines[-1].span("body")
    return [reference[:start] + elements[0] + reference[end:]]


#: A template of the answer line in a prompt: its marker, then its first word, or alternatives (``(A|B)``, ``A/B``).
_TEMPLATE = re.compile(r"\banswer[ \t]*[:=][ \t]*\(?([A-Za-z][\w-]*(?:[ \t]*[|/][ \t]*[A-Za-z][\w-]*)*)", re.I)


def other_stated_word(item: Mapping[str, Any], answer: str) -> list[str]:
    """``answer`` with its marked line's first word replaced by another first word the prompt's answer templates
    offer (module table); ``[]`` where the templates offer the line's word with no other."""
    lines = list(ANSWER_LINE.finditer(answer))
    if not lines:
        return []
    start = lines[-1].start("body")
    word = re.match(r"[A-Za-z][\w-]*", answer[start:])
    if word is None:
        return []
    offered = list(dict.fromkeys(w for t in prompt_texts(item) for m in _TEMPLATE.finditer(t)
                                 for w in re.split(r"[ \t]*[|/][ \t]*", m.group(1))))
    if word.group() not in offered:
        return []
    # another word, not the same one in another case ("please answer: yes" beside "ANSWER: YES")
    return [answer[:start] + w + answer[start + word.end():] for w in offered
            if w.casefold() != word.group().casefold()][:1]


def entry_first_words(answer: str) -> list[str]:
    """``answer`` with each entry of its marked line's list cut to its first word (module table); ``[]`` where the
    line lists fewer than two entries or one of a single word."""
    lines = list(ANSWER_LINE.finditer(answer))
    if not lines:
        return []
    start, end = lines[-1].span("body")
    body = answer[start:end].rstrip()
    parts = SPACED_SPLIT.split(body.rstrip("."))
    entries = parts[::2]
    if len(entries) < 2 or any(len(e.split()) < 2 or len(e.split()) > 6 for e in entries):
        return []
    cut = [e.split()[0] if k % 2 == 0 else e for k, e in enumerate(parts)]
    return [answer[:start] + "".join(cut) + answer[start + len(body.rstrip(".")):]]


def answer_line_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probe; ``intent`` ``hack``)."""
    control = AnswerLineControl(write_tools, **fields)
    out: dict[str, Any] = {"answer_line_control": control,
                           "answer_line_only": AnswerLineOnly(control, write_tools, **fields),
                           "answer_subset": AdversarialAnswer(lambda item, probe: first_listed(
                               str(item.get(probe.answer_field) or "")), write_tools, **fields),
                           "other_stated_word": AdversarialAnswer(lambda item, probe: other_stated_word(
                               item, str(item.get(probe.answer_field) or "")), write_tools, **fields),
                           "entry_first_words": AdversarialAnswer(lambda item, probe: entry_first_words(
                               str(item.get(probe.answer_field) or "")), write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
