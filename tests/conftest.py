"""Suite-wide test setup.

Triton reads ``TRITON_INTERPRET`` when kernels are defined, so it is set here,
before any test module imports ``triton``: on a machine without a GPU the
Triton kernels then run on CPU tensors through Triton's interpreter and are
compared against the pure-torch references. Set ``TRITON_INTERPRET=0`` in the
environment to test the compiled path on a GPU.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
