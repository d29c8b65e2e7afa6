"""Memory per active retail rollout: proportional to what it changed, not to the database.

Run: ``python3 benchmarks/bench_retail_memory.py``

For rollouts that changed 0, 1 and 5 orders (cancellations, which also touch
the user record when a gift card is refunded), prints per rollout:
* the serialised overlay size (``len(json.dumps(state))``: what the SDK store
  keeps per rollout, as its state is stored as JSON text), and
* the Python heap allocated while building N such live overlays (tracemalloc),
side by side with the baseline a naive design would pay: one full copy of the
database per rollout.
"""

from __future__ import annotations

import copy
import json
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.retail import call_tool, load_base_db, overlay_size_bytes

ROLLOUTS = 200


def _rollout_state(base, orders: list[str]) -> dict:
    view = base.view()
    for oid in orders:
        call_tool(view, "cancel_pending_order", {"order_id": oid, "reason": "no longer needed"})
    return {"db": view.overlay}


def main() -> None:
    base = load_base_db()
    pending = [o["order_id"] for o in base.tables["orders"].values() if o["status"] == "pending"]
    db_json = len(json.dumps(base.tables, separators=(",", ":")))
    tracemalloc.start()
    snap = tracemalloc.take_snapshot()
    full = copy.deepcopy(base.tables)
    full_heap = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap, "filename"))
    del full
    print(f"base database: {db_json:,} bytes as JSON, {full_heap:,} bytes on the heap per full copy")
    print(f"{'orders changed':>14} | {'records':>7} | {'state JSON B':>12} | {'heap B/rollout':>14} | "
          f"{'vs full copy (heap)':>19}")
    for changed in (0, 1, 5):
        snap = tracemalloc.take_snapshot()
        states = [_rollout_state(base, pending[i * 5:i * 5 + changed]) for i in range(ROLLOUTS)]
        heap = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap, "filename")) / ROLLOUTS
        records = sum(len(rows) for rows in states[0]["db"].values())
        size = sum(overlay_size_bytes(s) for s in states) / ROLLOUTS
        print(f"{changed:>14} | {records:>7} | {size:>12,.0f} | {heap:>14,.0f} | {heap / full_heap:>18.5f}x")
        del states
    tracemalloc.stop()


if __name__ == "__main__":
    main()
