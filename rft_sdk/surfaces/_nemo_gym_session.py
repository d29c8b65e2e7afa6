"""NeMo Gym resources-server sessions: one session = one rollout (``trace_id``) over the hosted pipeline.

The shapes are NeMo Gym's, as ``nemo-gym`` 0.7.0 defines them
(``nemo_gym/base_resources_server.py``, ``nemo_gym/openai_utils.py``,
``nemo_gym/failure_kinds.py``, ``environment_servers/single_agent_turn/app.py``,
``responses_api_agents/simple_agent/app.py``):

* ``POST /seed_session`` takes either an Agent's legacy body (the rollout row:
  ``responses_create_params`` plus the row's task fields, answered ``{}``) or an
  Environment Server's ``ResourcesSeedSessionRequest`` (``resources_session_id``,
  ``episode_id`` ``{"rollout_id", "attempt"}``, ``task_id`` ``{"taskset", "task_id"}``,
  ``task_data``; answered ``{"resources_session_id"}``, repeatable). Both answers set the
  session cookie that NeMo Gym's clients send back on every later request.
* ``POST /verify`` takes the row's task fields, ``responses_create_params`` and ``response``
  (a Responses API object whose ``output`` is the whole rollout) and answers a
  ``BaseVerifyResponse``: the request echoed plus ``reward``, ``mask_sample``,
  ``failure_kind``, ``failure_reason`` (here also ``reward_components``, NeMo Gym's
  multi-reward field, = the grader's sub-scores, and ``trace_id``).

The hosted item of a session: the row's ``rft_item`` (what ``rft nemo-gym config`` writes)
or, without one, the row's task fields. The final answer graded: the text of the
assistant messages of the rollout's last model turn (``output`` items after the last
``function_call_output``; a rollout cut after a turn of tool calls has that turn's text,
usually ``""``), as the hosted side grades a rollout with its last turn's text.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import secrets
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._wire._json import encode_json, loads_trusted
from ._hosted import GradeAnswer, HostedClient, RolloutDiscardedError, new_trace_id

__all__ = ["NG_FIELDS", "SeedError", "Session", "Sessions", "aggregate_metrics", "final_answer", "item_of",
           "verify_answer"]

#: Row fields that are NeMo Gym's, not the task's (plus every ``_ng_*`` field).
NG_FIELDS = frozenset({"responses_create_params", "response", "agent_ref", "rft_item", "reward", "mask_sample",
                       "failure_kind", "failure_reason"})
_SEED_FIELDS = frozenset({"resources_session_id", "episode_id", "task_id", "task_data"})


class SeedError(Exception):
    """A seed or close request this surface refuses: ``status`` (409/422/503) and a ``code``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


def item_of(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The hosted item of a NeMo Gym row: its ``rft_item``, else its task fields."""
    given = fields.get("rft_item")
    if isinstance(given, dict):
        return dict(given)
    return {k: v for k, v in fields.items() if k not in NG_FIELDS and not str(k).startswith("_ng_")}


def final_answer(response: Any) -> str:
    """The text of the last model turn of a Responses API ``response`` (see the module docstring)."""
    output = response.get("output") if isinstance(response, dict) else None
    if not isinstance(output, list):
        return ""
    items = [o for o in output if isinstance(o, dict)]
    while items and items[-1].get("type") == "function_call_output":
        items.pop()
    turn: list[dict[str, Any]] = []
    for entry in reversed(items):
        if entry.get("type") == "function_call_output":
            break
        turn.append(entry)
    texts = []
    for entry in reversed(turn):
        if entry.get("type") != "message" or entry.get("role", "assistant") != "assistant":
            continue
        content = entry.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(part.get("text") or "") for part in content
                      if isinstance(part, dict) and part.get("type") in ("output_text", "text")]
    return "".join(texts)


#: Bytes a session is charged beyond its item's JSON (its ids, cookie, bookkeeping and a few cached grades).
SESSION_OVERHEAD_BYTES = 4096


@dataclass
class Session:
    """One rollout: its ``trace_id``, hosted item (kept as its compact JSON bytes, ``item_json``: what
    the session holds is what it is charged for) and (Environment Server seeds) its ids."""

    trace_id: str
    item_json: bytes
    resources_session_id: str | None = None
    episode_id: Any = None
    last_used: float = field(default_factory=time.monotonic)
    grades: dict[bytes, GradeAnswer] = field(default_factory=dict)  # by SHA-256 of the graded text
    discarded: RolloutDiscardedError | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def item(self) -> dict[str, Any]:
        """The hosted item (decoded from :attr:`item_json` on each use)."""
        value: dict[str, Any] = loads_trusted(self.item_json)
        return value

    @property
    def size(self) -> int:
        """Bytes this session is charged: its item's JSON plus :data:`SESSION_OVERHEAD_BYTES`."""
        return len(self.item_json) + SESSION_OVERHEAD_BYTES


def _session(trace_id: str, item: Mapping[str, Any], *ids: Any) -> Session:
    return Session(trace_id, encode_json(dict(item)), *ids)


class Sessions:
    """The sessions of one surface, by cookie value (``secrets.token_urlsafe(32)``), bounded by
    ``max_sessions`` and by ``max_bytes`` (the sum of :attr:`Session.size`: item JSON included);
    idle ones expire after ``timeout_s``; closed ``resources_session_id`` s are
    remembered for ``tombstone_s`` so a late seed cannot recreate them (NeMo Gym's rule)."""

    def __init__(self, max_sessions: int, timeout_s: float, tombstone_s: float = 3600.0,
                 max_bytes: int = 256 * 2**20) -> None:
        self.max_sessions, self.timeout_s, self.tombstone_s = max_sessions, timeout_s, tombstone_s
        self.max_bytes, self.bytes = max_bytes, 0
        self.by_cookie: dict[str, Session] = {}
        self.by_resources_id: dict[str, str] = {}
        self.closed: dict[str, float] = {}
        self.expired: dict[str, float] = {}

    def get(self, cookie: str | None) -> Session | None:
        """The live session of ``cookie`` (``None``: unknown or idle past ``timeout_s``, then expired)."""
        session = self.by_cookie.get(cookie or "")
        if session is None:
            return None
        now = time.monotonic()
        if now - session.last_used > self.timeout_s:
            self._expire(str(cookie), now)
            return None
        session.last_used = now
        return session

    def _drop(self, cookie: str) -> Session | None:
        session = self.by_cookie.pop(cookie, None)
        if session is not None:
            self.bytes -= session.size
        return session

    def _expire(self, cookie: str, now: float) -> None:
        session = self._drop(cookie)
        assert session is not None
        self.expired[cookie] = now
        if session.resources_session_id is not None:
            self.by_resources_id.pop(session.resources_session_id, None)

    def was_expired(self, cookie: str | None) -> bool:
        return bool(cookie) and cookie in self.expired

    def _new(self, session: Session) -> str:
        self.reap()
        if len(self.by_cookie) >= self.max_sessions:
            raise SeedError(503, "capacity_reached", f"{len(self.by_cookie)}/{self.max_sessions} NeMo Gym sessions "
                                                     "are open; close finished ones (/close_session) or raise "
                                                     "RFT_NEMO_GYM_MAX_SESSIONS")
        if self.bytes + session.size > self.max_bytes:
            raise SeedError(503, "capacity_reached", f"open NeMo Gym sessions hold {self.bytes} bytes and this one "
                                                     f"needs {session.size} more, over the {self.max_bytes}-byte "
                                                     "budget; close finished ones (/close_session) or raise "
                                                     "RFT_NEMO_GYM_MAX_SESSION_BYTES")
        cookie = secrets.token_urlsafe(32)
        self.by_cookie[cookie] = session
        self.bytes += session.size
        if session.resources_session_id is not None:
            self.by_resources_id[session.resources_session_id] = cookie
        return cookie

    def seed(self, body: dict[str, Any]) -> tuple[str, Session, dict[str, Any]]:
        """Start (or, for a repeated Environment Server seed, find) a session: ``(cookie, session, answer)``.

        Raises:
            SeedError: 422 a malformed Environment Server seed; 409 its id was closed or belongs to
                another episode; 503 at capacity.
        """
        if "resources_session_id" not in body:  # an Agent's /run seed: the row itself; a new rollout
            session = _session(new_trace_id(), item_of(body))
            return self._new(session), session, {}
        extra = sorted(set(body) - _SEED_FIELDS)
        rid, episode, task, data = (body.get(k) for k in ("resources_session_id", "episode_id", "task_id",
                                                              "task_data"))
        if extra or not isinstance(rid, str) or not rid or not isinstance(episode, dict) \
                or not isinstance(episode.get("rollout_id"), str) or not isinstance(task, dict) \
                or not isinstance(data, dict):
            raise SeedError(422, "invalid_request", "a ResourcesSeedSessionRequest is {resources_session_id: str, "
                                                    "episode_id: {rollout_id, attempt}, task_id: {taskset, task_id}, "
                                                    f"task_data: {{...}}}}{'; unknown fields ' + str(extra) if extra else ''}")
        if rid in self.closed:
            raise SeedError(409, "session_closed", f"resources session {rid!r} was closed; seed a new id")
        cookie = self.by_resources_id.get(rid)
        if cookie is not None and cookie in self.by_cookie:
            session = self.by_cookie[cookie]
            if session.episode_id != episode:
                raise SeedError(409, "session_conflict", f"resources session {rid!r} belongs to another episode")
            return cookie, session, {"resources_session_id": rid}
        session = _session(new_trace_id(), item_of(data), rid, episode)
        return self._new(session), session, {"resources_session_id": rid}

    def close(self, body: Any) -> dict[str, Any]:
        """``/close_session``: forget the session (idempotent; unknown ids are tombstoned too).

        Raises:
            SeedError: 422 not a ``ResourcesCloseSessionRequest``.
        """
        rid = body.get("resources_session_id") if isinstance(body, dict) else None
        if not isinstance(rid, str) or not rid or not isinstance(body.get("episode_id"), dict):
            raise SeedError(422, "invalid_request", "a ResourcesCloseSessionRequest is {resources_session_id: str, "
                                                    "episode_id: {rollout_id, attempt}}")
        self.closed[rid] = time.monotonic()
        owned = self.by_resources_id.pop(rid, None)
        if owned is not None:
            self._drop(owned)
        return {"resources_session_id": rid}

    def reap(self) -> None:
        """Drop sessions idle for ``timeout_s`` and tombstones older than ``tombstone_s``."""
        now = time.monotonic()
        for cookie in [c for c, s in self.by_cookie.items() if now - s.last_used > self.timeout_s]:
            self._expire(cookie, now)
        for table in (self.closed, self.expired):
            for key in [k for k, t in table.items() if now - t > self.tombstone_s]:
                del table[key]


async def verify_answer(client: HostedClient, session: Session | None, body: dict[str, Any], grader: str | None,
                        *, expired: bool = False) -> dict[str, Any]:
    """The ``BaseVerifyResponse`` of a ``/verify`` body: the grader's score of the session's trajectory.

    A lost or expired session, a discarded rollout (a tool call or the grade still failing
    after 3 attempts) answer ``reward`` 0.0 with ``mask_sample`` true and a ``failure_kind``
    of NeMo Gym's vocabulary (``session_lost``, ``session_expired``, ``verifier_error``,
    ``rft:tool_error``): NeMo Gym leaves such samples out of scores and training.
    """
    out = {k: v for k, v in body.items()}
    if session is None:
        kind = "session_expired" if expired else "session_lost"
        return {**out, "reward": 0.0, "mask_sample": True, "failure_kind": kind,
                "failure_reason": "no live resources session for this request's cookie (seed with /seed_session "
                                  "and send its cookie back)"}
    out["trace_id"] = session.trace_id
    if session.discarded is not None:
        return {**out, "reward": 0.0, "mask_sample": True, "failure_kind": "rft:tool_error",
                "failure_reason": str(session.discarded)}
    text = final_answer(body.get("response"))
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    async with session.lock:
        grade = session.grades.get(key)
        if grade is None:
            try:
                grade = await client.grade(session.trace_id, text, session.item, grader)
            except RolloutDiscardedError as exc:
                return {**out, "reward": 0.0, "mask_sample": True, "failure_kind": "verifier_error",
                        "failure_reason": str(exc)}
            if len(session.grades) >= 8:  # a few distinct answers re-verified; never a growing cache
                session.grades.clear()
            session.grades[key] = grade
    return {**out, "reward": grade.score, "reward_components": dict(grade.subscores), "mask_sample": False,
            "failure_kind": None, "failure_reason": "; ".join(grade.reasons) or None}


def _finite(value: Any) -> float | None:
    """``value`` as a finite float when it is a JSON number (not a bool) within the double range, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the double range
        return None
    return number if math.isfinite(number) else None


def _clean_row(row: dict[str, Any]) -> dict[str, Any]:
    """The fields :func:`aggregate_metrics` reads, each of its expected type or left out: ``reward`` a finite
    number, ``reward_components`` a dict of finite numbers, ``_ng_task_index`` a scalar (else its JSON text)."""
    index = row.get("_ng_task_index")
    if not (index is None or isinstance(index, (str, int, float, bool))):
        index = encode_json(index).decode("utf-8", "replace")[:200]
    components = row.get("reward_components")
    clean: dict[str, Any] = {"mask_sample": bool(row.get("mask_sample")), "_ng_task_index": index,
                             "reward_components": {str(k): v for k, v in components.items()
                                                   if _finite(v) is not None} if isinstance(components, dict) else {}}
    reward = _finite(row.get("reward"))
    if reward is not None:
        clean["reward"] = reward
    clean["reward_components"] = {k: float(v) for k, v in clean["reward_components"].items()}
    return clean


def aggregate_metrics(verify_responses: Sequence[Any]) -> dict[str, Any]:
    """``AggregateMetrics`` (``group_level_metrics``, ``agent_metrics``, ``key_metrics``) of verify
    responses, with NeMo Gym's ``mean/<metric>`` naming; masked samples are left out and counted. A field of an
    unexpected type (a reward that is not a finite number, components that are not numbers, a task index that
    is an object) is left out of the statistics, never an error."""
    rows = [_clean_row(r) for r in verify_responses if isinstance(r, dict)]
    kept = [r for r in rows if not r.get("mask_sample") and isinstance(r.get("reward"), float)]

    def stats(values: list[float], name: str) -> dict[str, float]:
        if not values:
            return {}
        return {f"mean/{name}": statistics.fmean(values), f"max/{name}": max(values), f"min/{name}": min(values),
                f"median/{name}": statistics.median(values),
                f"std/{name}": statistics.pstdev(values) if len(values) > 1 else 0.0}

    agent = stats([float(r["reward"]) for r in kept], "reward")
    names = sorted({k for r in kept for k in (r.get("reward_components") or {})})
    for name in names:
        agent.update(stats([float(r["reward_components"][name]) for r in kept
                            if name in (r.get("reward_components") or {})], name))
    agent["mean/mask_sample"] = (len(rows) - len(kept)) / len(rows) if rows else 0.0
    groups: dict[Any, list[float]] = {}
    for r in kept:
        groups.setdefault(r.get("_ng_task_index"), []).append(float(r["reward"]))
    group_level = [{"_ng_task_index": key, **stats(values, "reward")} for key, values in groups.items()]
    agent = {k: v for k, v in agent.items() if not (isinstance(v, float) and math.isnan(v))}
    return {"group_level_metrics": group_level, "agent_metrics": agent,
            "key_metrics": {k: v for k, v in agent.items() if k.startswith("mean/")}}
