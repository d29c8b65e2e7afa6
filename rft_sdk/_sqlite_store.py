"""Compatibility re-export: ``SQLiteStore`` lives in ``rft_sdk._stores._sqlite``."""

from ._stores import SQLiteStore

__all__ = ["SQLiteStore"]
