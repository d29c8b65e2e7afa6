"""Checks before anything is uploaded: a dataset by the hosted rules (``_validate``), the
dataset's tools against the live server's (``_live``), each line's tool-call budget against the
job's ``max_episode_steps`` (``_steps``), the findings with their fixes (``_report``) and the
hosted services' endpoint test hooks (``_check``).

May import: ``rft_sdk._jobs``, ``rft_sdk._definitions``, ``rft_sdk._wire``, ``rft_sdk.protocol``,
``rft_sdk.exceptions``. The commands that print these checks live in ``rft_sdk._commands``.
"""
