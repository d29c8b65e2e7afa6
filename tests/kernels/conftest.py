"""Test setup for ``tests/kernels``: run the Triton kernels on CPU through the Triton interpreter.

``TRITON_INTERPRET=1`` must be set before a ``@triton.jit`` kernel is *defined* (triton reads
it at decoration time), so it is set here at module top, before the tests import anything.
``kernels`` only imports its Triton modules on first Triton-path use, so an earlier test area
that imported ``kernels`` does not matter; any Triton kernel module that was already imported
without the interpreter is dropped from ``sys.modules`` so it is re-imported under it.
The variable stays set for the rest of the pytest process; other areas only run CPU code.

Slow cases: marked ``slow`` and skipped unless ``RFT_KERNELS_SLOW=1``.
"""

import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

for _name in ("rft_sdk.kernels._grpo_loss", "rft_sdk.kernels._selective_log_softmax"):
    sys.modules.pop(_name, None)
