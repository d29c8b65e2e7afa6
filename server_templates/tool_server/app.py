"""Template tool server: copy this file, replace the tools and the grader.

Run locally:   rft serve server_templates.tool_server.app:server --port 8000
Run in prod:   see README.md (uvicorn behind TLS, tokens from $RFT_AUTH_TOKENS).

Configuration comes from the environment only (no secrets in code):
    RFT_AUTH_TOKENS      comma-separated bearer tokens accepted (several = rotation)
    RFT_STORE_URL        where rollout state lives: memory:// (default, one worker),
                         sqlite:///data/rollouts.db (workers of one host),
                         redis://host:6379/0 or rediss://... (replicas on many hosts);
                         bounds in the query, e.g. ?ttl_s=3600&max_total_bytes=536870912
    RFT_STORE_PATH       (older form) SQLite file, same as RFT_STORE_URL=sqlite:///PATH
    RFT_STORE_TTL_S      seconds an ungraded rollout is kept (default 3600)
    RFT_MAX_ROLLOUTS     rollouts kept at most (default 10000)
    RFT_GRADE_RETENTION_S  seconds state is kept after grading, for debugging (default 0)
"""

from __future__ import annotations

import os
from urllib.parse import urlencode

from rft_sdk import Grade, GradingContext, Rollout, RolloutStore, ToolError, ToolServer, store_from_url


def _store() -> RolloutStore:
    """The store $RFT_STORE_URL names (or SQLite at $RFT_STORE_PATH), else MemoryStore (one worker)."""
    url = os.environ.get("RFT_STORE_URL") or (
        f"sqlite://{os.path.abspath(os.environ['RFT_STORE_PATH'])}" if os.environ.get("RFT_STORE_PATH") else "memory://")
    bounds = {"ttl_s": os.environ.get("RFT_STORE_TTL_S"), "max_rollouts": os.environ.get("RFT_MAX_ROLLOUTS")}
    extra = urlencode({k: v for k, v in bounds.items() if v and f"{k}=" not in url})
    return store_from_url(f"{url}{'&' if '?' in url else '?'}{extra}" if extra else url)


server = ToolServer(
    store=_store(),
    grade_retention_s=float(os.environ.get("RFT_GRADE_RETENTION_S", "0")),
)  # bearer tokens are read from $RFT_AUTH_TOKENS; none set = no auth (local use only)

NOTES_LIMIT = 20


@server.tool
def save_note(title: str, body: str, *, rollout: Rollout) -> str:
    """Save a note in this rollout's notebook.

    Args:
        title: Short unique title of the note.
        body: Note text.
    """
    notes = rollout.state.setdefault("notes", {})
    if len(notes) >= NOTES_LIMIT and title not in notes:
        raise ToolError(f"notebook full ({NOTES_LIMIT} notes); overwrite an existing title")
    notes[title] = body
    return f"saved {title!r} ({len(notes)} notes)"


@server.tool
def read_note(title: str, *, rollout: Rollout) -> str:
    """Read a note saved earlier in this rollout.

    Args:
        title: Title used when saving.
    """
    notes = rollout.state.get("notes", {})
    if title not in notes:
        raise ToolError(f"no note titled {title!r}; saved titles: {sorted(notes)}")
    return notes[title]


@server.grader
def grade(ctx: GradingContext) -> Grade:
    """1.0 when every title in item["expected_titles"] was saved, else 0.0; details list what is missing."""
    expected = set(ctx.item.get("expected_titles", []))
    saved = set(ctx.state.get("notes", {}))
    missing = sorted(expected - saved)
    score = 1.0 if not missing else 0.0
    return Grade(score, {"saved": float(len(saved))}, [f"missing: {missing}"] if missing else [])
