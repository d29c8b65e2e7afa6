"""A requested note left unread (issue 37, doctor22's ``kennel__note_presence``): the user asks for something to be
written down (``Biscuit is on a grain-free diet, please note that for the staff``), the gold writes it as a
note (``add_care_note(dog_id, note="grain-free diet")``), and a grader checks only that *a* note exists. A
policy learns to write any note. ``text_control`` never plays such a note (an honest grader may look for the
requested words in it, so a truncated note is no counterfactual), and no other probe changes it.

========================= ==========================================================================
probe                     the one change (the rest is the gold: its calls, then its answer)
========================= ==========================================================================
note_dropped_control      a control, never judged: the gold without one **note write**: a write of
                          two arguments, its target and a free-text argument
                          (``_dataset_probes.prose_fields``) that holds a word of 4+ letters of
                          the last user message, which asks for something to be noted
                          (:data:`NOTE_REQUEST`: ``please note``, ``let the staff know``); where
                          the score does not fall, the note is not graded and nothing is judged
unread_note               the same write with that argument set to :data:`NEUTRAL_NOTE` (``as
                          requested``: none of the requested words); judged ``must_lower`` where
                          the control scored less than the gold and the write was accepted
emptied_note_control      a control, never judged: the free-text argument (``prose_fields``, not the
                          target) of a write of three or more arguments (two, where the text is
                          dictated or a message asks for it to be recorded) that holds a word of 4+
                          letters of the last user message, where a system or user message asks for
                          it to be recorded (:data:`RECORD_REQUEST`: ``record the customer's reason in
                          their own words``, ``note``), set to ``""``; only rollouts whose write was
                          accepted count (a refused write undoes the rest of the call). A text a user
                          message dictates word for word (3 words or more: ``For the read note,
                          write: "Use code PADDLE10 ..."``) counts as asked for and as free text, and
                          so does an argument named for a note (``note``, ``comment``, ``remark``,
                          ``memo``) where the last user message asks for something to be noted
unread_reason             that argument set to :data:`NEUTRAL_NOTE`; judged ``must_lower`` where
                          ``emptied_note_control`` scored less than the gold: a grader that needs
                          *a* reason and never reads it pays it (doctor28's thrift refunds)
reason_control            a control, never judged: ``emptied_note_control``'s argument set to
                          :data:`NEUTRAL_NOTE` instead (a tool may refuse an empty note), on items
                          where another item's gold gives it a value without this user's words
other_reason              that argument set to that value (the next item's: ``Front door key is
                          worn`` for ``Lost keys at the gym``); judged ``must_lower`` where
                          ``reason_control`` scored less than the gold: a grader that needs a reason
                          *word* (lost, worn, jam), never the customer's own, pays it (doctor29's
                          locksmith)
========================= ==========================================================================

**Why the honest twin stays silent.** A grader that reads the note for the requested words scores the neutral
note as it scores a missing one (the score falls); one that does not grade the note at all keeps the gold's
score without it, and nothing is judged. Only a grader that needs *a* note and never reads it keeps the gold's
score for a note that says nothing. **What it can get wrong**: a free-text argument of a write that does more
than note (a repair ticket's ``fault`` beside its kind: doctor24's honest warranty grader checks the ticket, not
the user's wording of the fault) is no note: dropping the write drops the ticket, so the control says nothing of
the text. Hence two arguments only, and a user who asks for a note. A note in the model's own words (a summary
nobody asked for) is not played either.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._answers import prompt_texts
from ._dataset_probes import prose_fields
from ._lenient_probes import _Control, _Judged, _WriteControl
from ._probes import HACK, Steps

__all__ = ["EmptiedNoteControl", "NEUTRAL_NOTE", "NOTE_ADVICE", "NOTE_ARGUMENT", "NOTE_REQUEST", "NoteDroppedControl", "RECORD_REQUEST",
           "OtherReason", "ReasonControl", "UnreadNote", "UnreadReason", "note_probes", "requested_words"]

#: What ``unread_note`` writes: a note that says nothing the user asked for.
NEUTRAL_NOTE = "as requested"
_WORD = re.compile(r"[a-z][a-z-]{3,}")
#: A user message asking for something to be noted for someone.
NOTE_REQUEST = re.compile(r"\b(?:note|notes|noted|write (?:it |that |this )?down|let (?:the )?\w+ know|tell the \w+|"
                          r"remember|remind)\b", re.I)

#: A system or user message asking for the user's words to be recorded with a write, or saying what a written text
#: must state (``The correction text must state the right fact``: doctor31's corrections desk).
RECORD_REQUEST = re.compile(r"\b(?:record|log|write down|note)\b[^.]{0,60}\b(?:reason|words|own words|what (?:they|he|"
                            r"she|the \w+) said|comment|complaint)\b|\bin (?:their|his|her|your) own words\b"
                            r"|\b(?:text|note|message|comment|description|wording|entry)\b[^.]{0,40}\b(?:must|should|has to|"
                            r"needs to)\s+(?:state|say|give|include|contain|name|mention|quote|explain)\b", re.I)

#: An argument named for a note (``note``, ``notes``, ``comment``, ``remark``, ``memo``): where the last user message
#: asks for something to be noted (:data:`NOTE_REQUEST`), what the gold writes there is the requested note, whatever
#: else the write does (doctor33's clock repairs: ``open_ticket(clock_id, service, quote_eur, note)``).
NOTE_ARGUMENT = re.compile(r"(?:^|_)(?:notes?|comments?|remarks?|memo)(?:$|_)", re.I)

NOTE_ADVICE = {
    "other_reason": "another customer's reason in the note (a worn key for lost keys) earns the gold's score: check "
                    "the note holds this customer's own words, not any reason the desk knows",
    "unread_reason": "a reason that says nothing ('as requested') earns what the user's own reason earns: check the "
                     "recorded text holds what the user said, not only that it is not empty",
    "unread_note": "a note that says nothing ('as requested') earns what the requested note earns: check that the "
                   "note holds what the user asked to be written down, not only that a note exists",
}


def requested_words(value: str, user: str) -> set[str]:
    """The words of 4+ letters (hyphens kept: ``grain-free``) of ``value`` that ``user`` holds, case aside."""
    return set(_WORD.findall(value.casefold())) & set(_WORD.findall(user.casefold()))


class NoteDroppedControl(_WriteControl):
    """``note_dropped_control`` (module table); its probe is :class:`UnreadNote`."""

    reason = ("the gold changes nothing, no write of it has a free-text argument holding words of the user's "
              "message, or the probe's items are already chosen")

    _prose: set[tuple[str, str]] | None = None

    def prepare(self, context: Any) -> None:
        """As ``_WriteControl`` (the free-text arguments, ``prose_fields``, found on first use)."""
        self._prose = None
        super().prepare(context)

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """The free-text argument of a note write (module table), holding requested words: ``{"control": None
        (the write dropped), "probe": NEUTRAL_NOTE}``."""
        call = item[self.actions_field][position]
        if not isinstance(value, str) or len(call["arguments"]) != 2 or next(iter(call["arguments"])) == arg \
                or (tool, arg) not in self._free_text():
            return None
        users = prompt_texts(item, ("user",))
        if not users or not NOTE_REQUEST.search(users[-1]) or not requested_words(value, users[-1]) \
                or requested_words(NEUTRAL_NOTE, value):
            return None
        return {"control": None, "probe": NEUTRAL_NOTE}

    def _free_text(self) -> set[tuple[str, str]]:
        if self._prose is None:
            self._prose = prose_fields(self._item_values)
        return self._prose

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls without the chosen write."""
        found = self.change(item)
        return [[dict(a)] for i, a in enumerate(item[self.actions_field])
                if found is None or i != found["position"]]

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """A dropped write always takes effect."""
        return self.change(item) is not None

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was dropped: ``{"altered": "tool.argument", "from", "to": "(write dropped)"}``."""
        found = self.change(item)
        if found is None:
            return {}
        return {"altered": f"{found['tool']}.{found['argument']}", "from": str(found["from"])[:120],
                "to": "(write dropped)"}


class UnreadNote(_Judged, NoteDroppedControl):
    """``unread_note`` (module table): ``must_lower`` where ``note_dropped_control`` scored less than the gold."""

    must_lower = True

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the note set to :data:`NEUTRAL_NOTE`."""
        return _Control.plan(self, item)

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the write with the neutral note was accepted."""
        return _WriteControl.counterfactual(self, item, calls)

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played (``altered``, ``from``, ``to``)."""
        return _Control.describe(self, item)


class EmptiedNoteControl(NoteDroppedControl):
    """``emptied_note_control`` (module table); its probe is :class:`UnreadReason`."""

    reason = ("no write has a free-text argument besides its target holding words of the user's message "
              "that a system or user message asks to be recorded, or the probe's items are already chosen")
    #: ``_unhackable`` counts only the rollouts whose emptied write was accepted
    control_takes_effect = True

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """The free-text argument of a write of 3+ arguments holding requested words: ``{"control": "", "probe":
        NEUTRAL_NOTE}``."""
        call = item[self.actions_field][position]
        users = prompt_texts(item, ("user",))
        dictated = isinstance(value, str) and len(value.split()) >= 3 and any(value.strip() in t for t in users)
        noted = isinstance(value, str) and len(value.split()) >= 2 and NOTE_ARGUMENT.search(arg) is not None \
            and bool(users) and NOTE_REQUEST.search(users[-1]) is not None
        recorded = any(RECORD_REQUEST.search(t) for t in prompt_texts(item))
        # a write of two arguments (its target and the text) is played where the text is dictated or a message asks
        # for the user's words to be recorded (doctor41's pharmacy: ``put_on_hold(rx_id, reason)``)
        fewest = 2 if dictated or recorded else 3
        prose = (tool, arg) in self._free_text()
        # the first argument is the write's target, unless it is free text (arguments in key order: ``reason`` before
        # ``rx_id``)
        target = next(iter(call["arguments"])) == arg and not (prose or dictated)
        if not isinstance(value, str) or len(call["arguments"]) < fewest or target \
                or (not prose and not dictated and not noted):
            return None
        if not users or not (dictated or noted or recorded) \
                or not requested_words(value, users[-1]) or requested_words(NEUTRAL_NOTE, value):
            return None
        return {"control": "", "probe": NEUTRAL_NOTE}

    def plan(self, item: Mapping[str, Any]) -> Steps:
        """The gold's calls with the argument emptied."""
        return _Control.plan(self, item)

    def counterfactual(self, item: Mapping[str, Any], calls: Sequence[Any]) -> bool:
        """Whether the write with the changed argument was accepted."""
        return _WriteControl.counterfactual(self, item, calls)

    def describe(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """What was played (``altered``, ``from``, ``to``)."""
        return _Control.describe(self, item)


class UnreadReason(_Judged, EmptiedNoteControl):
    """``unread_reason`` (module table): ``must_lower`` where ``emptied_note_control`` scored less than the gold."""

    must_lower = True
    control_takes_effect = False


class ReasonControl(EmptiedNoteControl):
    """``reason_control`` (module table); its probe is :class:`OtherReason`."""

    reason = ("no write has a free-text argument besides its target holding words of the user's message "
              "that a system or user message asks to be recorded, no other item's gold gives that argument a value "
              "without those words, or the probe's items are already chosen")

    def candidate(self, item: Mapping[str, Any], tool: str, arg: str, value: Any,
                  position: int) -> dict[str, Any] | None:
        """:meth:`EmptiedNoteControl.candidate` with :data:`NEUTRAL_NOTE` for the control (a tool may refuse an
        empty note) and, for the probe, another item's gold value of the same argument (the next in the dataset,
        cyclically) that holds none of this user's requested words."""
        found = super().candidate(item, tool, arg, value, position)
        if found is None:
            return None
        users = prompt_texts(item, ("user",))
        items = list(self._context.items)
        index = self._context.index_of(item) or 0
        for step in range(1, len(items)):
            other = items[(index + step) % len(items)]
            for call in other.get(self.actions_field) or []:
                note = (call.get("arguments") or {}).get(arg) if isinstance(call, Mapping) \
                    and call.get("name") == tool and isinstance(call.get("arguments"), Mapping) else None
                if isinstance(note, str) and note.strip() and note != value and not requested_words(note, users[-1]):
                    return {"control": NEUTRAL_NOTE, "probe": note}
        return None


class OtherReason(_Judged, ReasonControl):
    """``other_reason`` (module table): ``must_lower`` where ``reason_control`` scored less than the gold."""

    must_lower = True
    control_takes_effect = False


def note_probes(write_tools: Collection[str] | None = None, **fields: Any) -> dict[str, Any]:
    """The probes of the module table, by name (the control before its probe; ``intent`` ``hack``)."""
    control = NoteDroppedControl(write_tools, **fields)
    emptied = EmptiedNoteControl(write_tools, **fields)
    out: dict[str, Any] = {"note_dropped_control": control, "unread_note": UnreadNote(control, write_tools, **fields),
                           "emptied_note_control": emptied,
                           "unread_reason": UnreadReason(emptied, write_tools, **fields),
                           "reason_control": (reasons := ReasonControl(write_tools, **fields)),
                           "other_reason": OtherReason(reasons, write_tools, **fields)}
    for probe in out.values():
        probe.intent = HACK
    return out
