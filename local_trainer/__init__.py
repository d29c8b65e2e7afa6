"""Hosted side of agent RFT, offline: the protocol emulator and a small GRPO trainer.

Sub-packages are imported on demand (``local_trainer.emulator``,
``local_trainer.grpo``); importing this package has no side effects.
"""
