"""Dataset validation by the hosted rules and job config loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from emu_helpers import make_item, make_job, tool_spec

from rft_sdk.emulator import (
    DatasetError,
    JobConfigError,
    load_dataset,
    load_job,
    samples_per_item,
    validate_items,
)


def write(tmp_path: Path, lines: list) -> Path:
    path = tmp_path / "d.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def good(n: int = 10) -> list[dict]:
    return [make_item(i, tools=[tool_spec("lookup")]) for i in range(n)]


def issues(exc: pytest.ExceptionInfo) -> set[tuple[int, str]]:
    return {(i.line, i.field) for i in exc.value.issues}


def test_valid_file_loads_unchanged(tmp_path: Path) -> None:
    items = good()
    assert load_dataset(write(tmp_path, items), {"lookup"}) == items


def test_fewer_than_10_lines(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as exc:
        load_dataset(write(tmp_path, good(9)), {"lookup"})
    assert issues(exc) == {(0, "<file>")}
    assert "at least 10" in str(exc.value)


def test_errors_name_line_and_field(tmp_path: Path) -> None:
    lines: list = good()
    lines[2] = {"prompt": "no messages"}                                            # line 3
    lines[4] = make_item(4, tools=[tool_spec("search")])                            # line 5: not a job tool
    lines[5] = {"messages": [{"role": "robot", "content": "hi"}]}                   # line 6: bad role
    bad_schema = tool_spec("lookup")
    bad_schema["function"]["parameters"] = {"type": "object", "properties": {"x": {"type": "integr"}},
                                            "required": ["x"], "additionalProperties": False}
    lines[6] = make_item(6, tools=[bad_schema])                                     # line 7: invalid schema
    lax = tool_spec("lookup")
    del lax["function"]["parameters"]["additionalProperties"]
    lines[7] = make_item(7, tools=[lax])                                            # line 8: strict w/o additionalProperties
    lines[8] = "{not json"                                                          # line 9
    with pytest.raises(DatasetError) as exc:
        load_dataset(write(tmp_path, lines), {"lookup"})
    found = issues(exc)
    assert (3, "messages") in found
    assert (5, "tools.0.function.name") in found
    assert (6, "messages.0.role") in found
    assert any(line == 7 and field.startswith("tools.0.function.parameters") for line, field in found)
    assert (8, "tools.0.function.parameters.additionalProperties") in found
    assert (9, "<line>") in found
    assert {line for line, _ in found} == {3, 5, 6, 7, 8, 9}
    assert "line 5, field tools.0.function.name" in str(exc.value) and "'search'" in str(exc.value)


def test_required_names_unknown_property() -> None:
    spec = tool_spec("lookup")
    spec["function"]["parameters"]["required"] = ["x", "y"]
    items = good()
    items[0] = make_item(0, tools=[spec])
    with pytest.raises(DatasetError) as exc:
        validate_items(items, {"lookup"})
    assert issues(exc) == {(1, "tools.0.function.parameters.required")}


def test_blank_line_inside_file(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    lines = [json.dumps(x) for x in good(11)]
    lines[3] = ""
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as exc:
        load_dataset(path, {"lookup"})
    assert issues(exc) == {(4, "<line>")}


def test_load_job_full_and_inner_shapes(tmp_path: Path) -> None:
    full = make_job(["a", "b"], full=True, compute_multiplier=0.5, headers={"Authorization": "Bearer t"})
    path = tmp_path / "job.json"
    path.write_text(json.dumps(full))
    for source in (path, full, make_job(["a", "b"], compute_multiplier=0.5, headers={"Authorization": "Bearer t"})):
        job = load_job(source)
        assert job.tool_names == {"a", "b"}
        assert job.tool("a").headers == {"Authorization": "Bearer t"}
        assert job.hyperparameters.compute_multiplier == 0.5
        assert job.grader.rate_limit == 1000.0


@pytest.mark.parametrize(("mutate", "needle"), [
    (lambda j: j["method"]["reinforcement"]["grader"].update(url="ftp://x"), "method.reinforcement.grader.url"),
    (lambda j: j["method"]["reinforcement"].update(max_episode_steps=0), "method.reinforcement.max_episode_steps"),
    (lambda j: j["method"]["reinforcement"]["grader"].update(type="string_check"), "grader.type"),
    (lambda j: j["method"].update(type="supervised"), "method.type"),
    (lambda j: j["method"]["reinforcement"]["tools"].append(dict(j["method"]["reinforcement"]["tools"][0])),
     "duplicate tool names"),
])
def test_bad_job_names_the_field(mutate, needle: str) -> None:
    job = make_job(["a"], full=True)
    mutate(job)
    with pytest.raises(JobConfigError, match=needle.replace(".", r"\.")):
        load_job(job)


def test_bad_job_json_file(tmp_path: Path) -> None:
    path = tmp_path / "job.json"
    path.write_text("{oops")
    with pytest.raises(JobConfigError, match="invalid JSON at line 1"):
        load_job(path)


@pytest.mark.parametrize(("multiplier", "expected"), [(1.0, 4), (0.5, 2), (0.3, 1), (0.1, 1), (0.625, 3),
                                                     (1.5, 6), (2.0, 8), (0.375, 2)])
def test_samples_per_item_rule(multiplier: float, expected: int) -> None:
    # base 4, round half up: 4 * 0.625 = 2.5 -> 3; 4 * 0.375 = 1.5 -> 2
    assert samples_per_item(multiplier) == expected


def test_samples_per_item_rejects_non_positive() -> None:
    with pytest.raises(ValueError):
        samples_per_item(0)


def test_each_distinct_schema_is_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dataset repeats its tool definitions on every line: check_schema runs once per distinct schema."""
    import uuid

    from rft_sdk.emulator import _dataset

    checked: list[dict] = []
    real = _dataset.Draft202012Validator.check_schema
    monkeypatch.setattr(_dataset.Draft202012Validator, "check_schema",
                        lambda schema, *a, **kw: (checked.append(schema), real(schema, *a, **kw)))
    a, b = (tool_spec("lookup", {f"p_{uuid.uuid4().hex}": {"type": "string"}}) for _ in range(2))  # never seen before
    items = [make_item(i, tools=[a if i % 2 else b]) for i in range(30)]
    assert validate_items(items, {"lookup"}) == items
    assert validate_items(items, {"lookup"}) == items  # a second pass (load_dataset, then emulate) checks nothing
    by_name = lambda d: sorted(d["properties"])  # noqa: E731
    assert sorted(checked, key=by_name) == sorted((t["function"]["parameters"] for t in (a, b)), key=by_name)
    # a broken schema is still reported on every line that carries it
    bad = tool_spec("lookup", {f"q_{uuid.uuid4().hex}": {"type": "integr"}})
    with pytest.raises(DatasetError) as exc:
        validate_items([make_item(i, tools=[bad]) for i in range(12)], {"lookup"})
    assert {line for line, _ in issues(exc)} == set(range(1, 13))
