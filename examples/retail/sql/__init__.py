"""The retail example on SQL: the τ²-retail database in SQLite or PostgreSQL, one clone per rollout.

``_schema`` (tables, loader, records read back), ``_tools`` (the 16 tools as
SQL over ``rollout.db``), ``_grading`` (end-state gate from the row-level
diff), ``app`` (``rft serve examples.retail.sql.app:server``). Guide:
docs/database.md. Importing this package loads nothing.
"""
