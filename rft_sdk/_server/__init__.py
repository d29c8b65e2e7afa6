"""The server and its request path: ``ToolServer`` (``_app``) and one module per step.

A tool call flows one way: the surface's route hands the bytes to ``_calls`` (decoded by
``rft_sdk._wire``), which admits the rollout under its lock from the store, checks its item
(``_items``), runs the tool (``rft_sdk._definitions``), records the call and encodes the
answer once. Grades go through ``_grade_call``. Authentication (``_auth``), readiness
(``_ready``), metrics and tracing (``_metrics``, ``_tracing``), connection limits
(``_connections``) and the hosted job export (``_export``) sit beside it.

May import: ``rft_sdk._wire``, ``rft_sdk._definitions``, ``rft_sdk._stores``, ``rft_sdk._db``,
``rft_sdk._jobs``, ``rft_sdk.surfaces``, ``rft_sdk.exceptions``, ``rft_sdk.protocol``.
"""
