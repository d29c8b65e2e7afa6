"""The core ``rft`` sub-commands declared in ``pyproject.toml`` (``rft check``, ``rft job``,
``rft validate``, ``rft init``): argument parsing and printing around ``rft_sdk._validation`` and
``rft_sdk._jobs``; ``init``'s scaffold files in ``_scaffold``. The top layer: nothing in the package imports these modules.
"""
