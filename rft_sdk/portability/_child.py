"""A player run in another venv: ``python -m rft_sdk.portability._child`` reads ``{"name", "target",
"items"}`` as JSON on stdin, plays the items with that player and prints the scores as one JSON list."""

from __future__ import annotations

import json
import sys

import anyio

from ._players import load_player
from ._target import Target


def _main() -> None:
    request = json.loads(sys.stdin.read())
    play, _ = load_player(request["name"])
    scores = anyio.run(play, Target(**request["target"]), request["items"])
    print(json.dumps(scores))


if __name__ == "__main__":
    _main()
