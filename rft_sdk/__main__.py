"""``python -m rft_sdk`` is the ``rft`` command."""

from .cli import main

raise SystemExit(main())
