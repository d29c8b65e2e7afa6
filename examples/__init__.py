"""Worked examples of customer environments built on rft_sdk."""
