"""A written text with its words run together (issue 37, doctor15's ``bakery__folded_text``): a grader that
compares a written text after removing every space (``"".join(text.lower().split())``) pays
``"Happy30thSam"`` for the cake inscription ``"Happy 30th Sam"``: another text, which a careful grader that
folds case and collapses runs of spaces still tells apart. ``folded_text`` (accents, look-alikes) and
``altered_writes`` never play it: both leave prose alone, and an inscription or a title reads as prose.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
joined_words_control      a control, never judged: one string argument of one gold write (never
                          its target, the first argument) of 2 to :data:`MAX_WORDS` words, at least
                          two of them words of letters, written with its words in reverse order
                          (``"Sam 30th Happy"``): the same words, a plainly different text
joined_words              the same argument with its whitespace removed (``"Happy30thSam"``);
                          judged ``must_lower`` (the gold's whole score is reward) only where the
                          control scored less than the gold, the write was accepted and the
                          end state differs from the gold's
first_word_only           the same argument cut to its first word (``"Apple"`` for ``"Apple
                          crumble"``: doctor17's potluck grader compared first words), judged
                          as ``joined_words``
========================= ==========================================================================

The arguments that qualify take turns over the items (the ``k``-th chosen item plays option ``k mod n``),
so each is played on some.

**Why the honest twin stays silent.** The control keeps every word: a grader that ignores the text (a note),
looks for a word or an id in it (``"L01" in message``) or compares bags of words pays the control the gold's
score, and the probe is not judged there. Where the control is scored lower, the grader reads the text as a
whole; then only a comparison that drops the spaces between words pays the joined text the gold's score.
Codes and identifiers (``"SW1A 1AA"``, ``"+44 20 7946"``), whose spaces a careful grader may drop, are never
played: they lack two words of letters.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ._lenient_probes import _Judged, _WriteControl
from ._probes import HACK, ProbeContext

__all__ = ["FirstWordOnly", "JOINED_WORDS_ADVICE", "JOINED_WORDS_ITEMS", "MAX_WORDS", "JoinedWords",
           "JoinedWordsControl", "joined", "joined_words_probes"]

#: At most this many items (the control and the probe play the same ones).
JOINED_WORDS_ITEMS = 6
#: A text of more words is prose an honest grader may read for a word only; the control settles that, but a
#: long note joined says nothing more than a short one.
MAX_WORDS = 8
#: A word of letters (trailing punctuation allowed: ``"Nair,"``, ``"Sam!"``) of at least two of them.
_LETTER_WORD = re.compile(r"[^\W\d_]{2,}[.,!?;:'’]*")

JOINED_WORDS_ADVICE = {
    "joined_words": "a written text with its spaces removed (\"Happy30thSam\" for \"Happy 30th Sam\") earns the full "
                    "score: compare texts after NFC, case folding and collapsing runs of whitespace to one "
                    "space, never after removing whitespace",
    "first_word_only": "a written text cut to its first word (\"Apple\" for \"Apple crumble\") earns the full "
                       "score: compare the whole text, never its first word or a prefix",
}


def joined(value: Any) -> dict[str, str] | None:
    """``{"control": words reversed, "probe": whitespace removed, "first_word": its first word}`` for a
    one-line string of 2 to :data:`MAX_WORDS` words with at least two words of letters whose reversal differs
    from it, else ``None`` (``"Happy 30th Sam"`` → ``"Sam 30th Happy"`` / ``"Happy30thSam"`` / ``"Happy"``)."""
    if not isinstance(value, str) or "\n" in value:
        return None
    words = value.split()
    if not 2 <= len(words) <= MAX_WORDS or sum(bool(_LETTER_WORD.fullmatch(w)) for w in words) < 2:
        return None
    control = " ".join(reversed(words))
    if control == " ".join(words):
        return None
    return {"control": control, "probe": "".join(words), "first_word": words[0]}


class JoinedWordsControl(_WriteControl):
    """``joined_words_control`` (module table): :class:`~._lenient_probes._WriteControl`'s options, turns and
    acceptance, on the first :data:`JOINED_WORDS_ITEMS` items."""

    reason = ("the gold changes nothing, no write of it has a text of two or more words of letters besides its "
              "target, or the probe's items are already chosen")

    def prepare(self, context: ProbeContext) -> None:
        """As :class:`~._lenient_probes._WriteControl`, then choose the first :data:`JOINED_WORDS_ITEMS` items
        with a text to change."""
        super().prepare(context)
        self.items = set()
        for i, item in enumerate(context.items):
            if len(self.items) < JOINED_WORDS_ITEMS and self._has_gold(item) and self.options(item):
                self.items.add(i)

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """:func:`joined` of an argument besides the write's first (its target)."""
        arguments = item[self.actions_field][position]["arguments"]
        return None if arg == next(iter(arguments)) else joined(value)


class JoinedWords(_Judged, JoinedWordsControl):
    """``joined_words`` (module table): ``must_lower`` where ``joined_words_control`` scored less than the gold."""

    must_lower = True


class FirstWordOnly(JoinedWords):
    """``first_word_only`` (module table): the text cut to its first word, on the control's items."""

    def _value(self, item: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Any]:
        found = self.change(item)
        return found, None if found is None else found["first_word"]


def joined_words_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probe; each ``intent`` ``hack``)."""
    control = JoinedWordsControl(write_tools, **fields)
    out: dict[str, Any] = {"joined_words_control": control, "joined_words": JoinedWords(control, write_tools, **fields),
                           "first_word_only": FirstWordOnly(control, write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
