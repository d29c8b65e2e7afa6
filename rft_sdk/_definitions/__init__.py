"""What a user declares: tools, graders and the per-rollout objects they receive.

Owns the ``@tool`` and ``@grader`` decorators (a function introspected once into a
definition), the JSON Schema conversion for strict function calling (``_schema``), the
call of a user function from the event loop (``_invoke``) and the per-rollout records
(``_rollout``: ``Rollout``, ``ToolCallRecord``), and ``answer_line`` (``_answer_line``: the one answer a
grader reads from a reply's marked ``ANSWER:`` line).

May import: ``rft_sdk._wire``, ``rft_sdk.exceptions``, ``rft_sdk.protocol``.
"""
