"""The core ``rft`` sub-commands declared in ``pyproject.toml`` (``rft check``, ``rft job``,
``rft validate``): argument parsing and printing around ``rft_sdk._validation`` and
``rft_sdk._jobs``. The top layer: nothing in the package imports these modules.
"""
