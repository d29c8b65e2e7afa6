"""The hosted fine-tuning job as both services document it, checked with pydantic (``_config``).

May import: the standard library and pydantic only; everything that writes or checks a job
(``rft job``, ``rft validate --config``, the emulator, the doctor) imports it.
"""
