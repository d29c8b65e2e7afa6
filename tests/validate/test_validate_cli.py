"""``rft validate`` as a user runs it (real subprocesses, real servers): every finding names line, field, fix.

Both ways: drifted, malformed or unsupported datasets are refused, and datasets written from the server's
own tools (the retail example included) pass with no error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from preflight_helpers import TOKEN, drifted, lines_for, load_app, rft, write_app, write_jsonl

from rft_sdk.testing import run_server

ROOT = Path(__file__).resolve().parents[2]


def _findings(stdout: str) -> list[dict]:
    return json.loads(stdout)["findings"]


def test_schema_drift_is_reported_by_line_field_and_fix_against_the_app_and_the_live_server(tmp_path):
    server = load_app(tmp_path, tokens=[TOKEN])
    app = write_app(tmp_path, tokens=[TOKEN])
    dataset = write_jsonl(tmp_path / "train.jsonl", drifted(lines_for(server.dataset_tools())))
    in_process = rft("validate", str(dataset), "--app", app, "--json", cwd=tmp_path)
    assert in_process.returncode == 1, in_process.stderr
    with run_server(server) as url:
        live = rft("validate", str(dataset), "--url", url, "--token-env", "T", "--json", cwd=tmp_path,
                   env={"T": TOKEN})
        refused = rft("validate", str(dataset), "--url", url, "--json", cwd=tmp_path)  # no token: 401
    assert live.returncode == 1, live.stderr
    for result in (in_process, live):
        found = {f["field"]: f for f in _findings(result.stdout) if f["severity"] == "error"}
        nation = found["tools.0.function.parameters.properties.nation"]
        assert nation["lines"] == list(range(1, 13))  # one finding for the 12 lines that repeat the definition
        assert "has no parameter 'nation'" in nation["message"] and "['country']" in nation["message"]
        assert "rft tools" in nation["fix"]
        missing = found["tools.0.function.parameters.properties"]
        assert "takes 'country'" in missing["message"] and "every call answers 422" in missing["message"]
    assert refused.returncode == 1 and "unauthorized" in refused.stdout
    text = rft("validate", str(dataset), "--app", app, cwd=tmp_path)
    assert "error: lines 1-12, field tools.0.function.parameters.properties.nation:" in text.stdout
    assert "fix: regenerate" in text.stdout


def test_a_dataset_written_from_the_servers_tools_passes_both_targets(tmp_path):
    server = load_app(tmp_path)
    app = write_app(tmp_path)
    dataset = write_jsonl(tmp_path / "train.jsonl", lines_for(server.dataset_tools()))
    for target in ("openai", "azure"):
        result = rft("validate", str(dataset), "--app", app, "--target", target, "--json", cwd=tmp_path)
        assert result.returncode == 0, result.stdout
        assert json.loads(result.stdout)["errors"] == 0


def test_the_retail_example_dataset_passes_against_the_retail_server():
    for split in ("train", "test"):
        result = rft("validate", f"examples/retail/data/retail_{split}.jsonl", "--app", "examples.retail.app:server",
                     "--json", cwd=ROOT)
        report = json.loads(result.stdout)
        assert result.returncode == 0 and report["errors"] == 0 and report["lines"] >= 10, result.stdout


def _line(tools: list[dict] | None = None, messages: list[dict] | None = None) -> dict:
    line: dict = {"messages": messages or [{"role": "user", "content": "hi"}]}
    if tools is not None:
        line["tools"] = tools
    return line


def _tool(parameters: dict, name: str = "book", strict: bool = True) -> dict:
    return {"type": "function", "function": {"name": name, "description": "d", "parameters": parameters,
                                             "strict": strict}}


NESTED_OPEN = {"type": "object", "additionalProperties": False, "required": ["trip"], "properties": {
    "trip": {"type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
             "required": ["city"]}}}


@pytest.mark.parametrize("line, target, field, fragment", [
    (_line(messages=[{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]), "openai",
     "messages.1.role", "the last message is 'assistant'"),
    (_line(messages=[{"role": "user", "content": "x"}, {"role": "developer", "content": "y"}]), "azure",
     "messages.1.role", "azure requires the last message to be from the user"),
    (_line([_tool(NESTED_OPEN)]), "openai", "tools.0.function.parameters.properties.trip.additionalProperties",
     "must be false on every object"),
    (_line([_tool(NESTED_OPEN)]), "openai", "tools.0.function.parameters.properties.trip.required",
     "missing ['nights']"),
    (_line([_tool({"type": "object", "additionalProperties": False, "required": ["n"],
                   "properties": {"n": {"type": "string", "minLength": 2}}})]), "openai",
     "tools.0.function.parameters.properties.n.minLength", "not supported by fine-tuned models"),
    (_line([_tool({"type": "object", "additionalProperties": False, "required": ["n"],
                   "properties": {"n": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}})]),
     "azure", "tools.0.function.parameters.properties.n.uniqueItems", "not supported by Azure"),
    (_line([_tool({"anyOf": [{"type": "object"}]})]), "openai", "tools.0.function.parameters.type",
     "the root must be an object"),
    (_line([_tool({"type": "object", "properties": {}, "required": [], "additionalProperties": False},
                  name="bad name")]), "openai", "tools.0.function.name", "must match"),
    (_line([_tool({"type": "object", "additionalProperties": False, "required": ["a"],
                   "properties": {"a": {"$ref": "#/$defs/Missing"}}})]), "openai",
     "tools.0.function.parameters.properties.a.$ref", "points at no definition"),
])
def test_hosted_rules_name_the_line_field_and_fix(tmp_path, line, target, field, fragment):
    good = _line()
    dataset = write_jsonl(tmp_path / "d.jsonl", [good] * 4 + [line] + [good] * 6)
    result = rft("validate", str(dataset), "--target", target, "--json", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    errors = [f for f in _findings(result.stdout) if f["severity"] == "error"]
    match = [f for f in errors if f["field"] == field]
    assert match and fragment in match[0]["message"] and match[0]["lines"] == [5] and match[0]["fix"], errors
    assert all(f["lines"] == [5] for f in errors)  # nothing reported on the good lines


def test_keywords_one_target_allows_are_not_errors_there(tmp_path):
    params = {"type": "object", "additionalProperties": False, "required": ["n"],
              "properties": {"n": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}}
    dataset = write_jsonl(tmp_path / "d.jsonl", [_line([_tool(params)])] * 10)
    result = rft("validate", str(dataset), "--target", "openai", "--json", cwd=tmp_path)
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["errors"] == 0 and report["warnings"] == 1  # not in the subset: warned


def test_unreadable_lines_short_files_and_bad_options(tmp_path):
    dataset = tmp_path / "d.jsonl"
    dataset.write_text('{"messages": [{"role": "user", "content": "x"}]}\n\n{not json\n', encoding="utf-8")
    result = rft("validate", str(dataset), "--json", cwd=tmp_path)
    fields = {(tuple(f["lines"]), f["field"]) for f in _findings(result.stdout)}
    assert result.returncode == 1
    assert {((2,), "<line>"), ((3,), "<line>"), ((), "<file>")} <= fields
    assert rft("validate", str(dataset), "--app", "nomodule:server", cwd=tmp_path).returncode == 2
    missing = rft("validate", str(tmp_path / "nope.jsonl"), cwd=tmp_path)
    assert missing.returncode == 1 and "cannot read" in missing.stdout


def test_the_sdks_own_schemas_pass_while_their_constraints_are_enforced_by_the_server(tmp_path):
    import httpx

    server = load_app(tmp_path)
    (tool,) = server.dataset_tools()
    country = tool["function"]["parameters"]["properties"]["country"]
    assert "minLength" not in country and "at least 2 characters; at most 40 characters" in country["description"]
    dataset = write_jsonl(tmp_path / "d.jsonl", lines_for([tool]))
    for target in ("openai", "azure"):
        assert rft("validate", str(dataset), "--target", target, cwd=tmp_path).returncode == 0
    body = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup_capital",
            "arguments": json.dumps({"country": "X"}), "trace_id": "trace_1", "item": {}}
    with run_server(server) as url:
        r = httpx.post(f"{url}/tools/lookup_capital", json=body)
    assert r.status_code == 422 and r.json()["error"]["details"][0]["field"] == "country"


def test_lines_without_tools_are_warned_against_a_server_with_tools(tmp_path):
    server = load_app(tmp_path)
    app = write_app(tmp_path)
    lines = [{k: v for k, v in line.items() if k != "tools"} for line in lines_for(server.dataset_tools())]
    dataset = write_jsonl(tmp_path / "d.jsonl", lines)
    result = rft("validate", str(dataset), "--app", app, "--json", cwd=tmp_path)
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["errors"] == 0  # legal, but the hosted model could call no tool
    (warning,) = [f for f in report["findings"] if f["field"] == "tools" and f["lines"]]
    assert warning["lines"] == list(range(1, 13)) and "offers the model no tools" in warning["message"]


def test_a_job_for_a_local_run_gets_one_url_warning_per_server_not_one_per_tool(tmp_path):
    """doctor37's tester: a job written with ``--base-url http://127.0.0.1:PORT`` (the docs' own doctor runs) got
    one "a hosted run cannot use it" warning per tool and one for the grader; now one per server, naming the
    fields, and a URL on another server keeps its own warning."""
    server = load_app(tmp_path)
    dataset = write_jsonl(tmp_path / "train.jsonl", lines_for(server.dataset_tools()))
    with run_server(server) as url:
        job = server.job_config(url)
        reinforcement = job["method"]["reinforcement"]
        assert len(reinforcement["tools"]) >= 1
        (tmp_path / "job.json").write_text(json.dumps(job))
        local = rft("validate", str(dataset), "--config", "job.json", "--json", "--no-replay", cwd=tmp_path)
        reinforcement["grader"]["url"] = "https://10.0.0.7/grade"
        (tmp_path / "mixed.json").write_text(json.dumps(job))
        mixed = rft("validate", str(dataset), "--config", "mixed.json", "--json", "--no-replay", cwd=tmp_path)
    assert local.returncode == 0, local.stdout
    fields = ", ".join([*(f"tools.{i}.server_url" for i in range(len(reinforcement["tools"]))), "grader.url"])
    assert [(f["field"], f["message"]) for f in _findings(local.stdout) if "hosted run" in f["message"]] == [
        ("job.method.reinforcement", f"a hosted run cannot use the job's {len(reinforcement['tools']) + 1} URLs on "
         f"{url} ({fields}): '{url}' is not https:// (the service would send the job's token in clear)")]
    one_tool = len(reinforcement["tools"]) == 1
    assert {f["field"] for f in _findings(mixed.stdout) if "hosted run" in f["message"]} == {
        "job.method.reinforcement.tools.0.server_url" if one_tool else "job.method.reinforcement",
        "job.method.reinforcement.grader.url"}


#: A lending desk on a rollout database whose folder the SDK chooses (no ``dir=``): ``$RFT_DB_DIR/<name>``, else
#: ``<temp dir>/rft-db-<name>`` (docs/gold-items.md, "What rft validate checks").
LENDING_SOURCE = '''
from rft_sdk import GradingContext, Rollout, SQLiteDatabase, ToolError, ToolServer

def setup(conn):
    conn.execute("CREATE TABLE books (id TEXT PRIMARY KEY, copies INTEGER)")
    conn.executemany("INSERT INTO books VALUES (?, ?)", [("b1", 1), ("b2", 1)])

server = ToolServer(db=SQLiteDatabase(setup=setup, name="lendcheck"), auth_env_var=None)

@server.tool(writes=True)
def lend(book_id: str, *, rollout: Rollout) -> str:
    """Lend a book.

    Args:
        book_id: e.g. "b1".
    """
    if rollout.db.execute("UPDATE books SET copies = copies - 1 WHERE id = ? AND copies > 0",
                          (book_id,)).rowcount != 1:
        raise ToolError(f"no copy of {book_id}")
    return "lent"

@server.grader
async def lent(ctx: GradingContext) -> float:
    return 0.0 if await ctx.db.diff_gold(ctx.item["actions"]) else 1.0
'''


def load_app_source(folder: Path, name: str):  # type: ignore[no-untyped-def]
    """Import ``folder/<name>.py`` as a fresh module object; its ``server``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{name}_{id(folder)}", folder / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


def test_an_in_process_dry_run_names_the_temp_folder_its_database_kept(tmp_path):
    """The template stays after the dry run (the next run reuses it); where the SDK chose the temp folder, one
    ``info:`` line on stderr says where. Nothing is said where ``$RFT_DB_DIR`` chose it, or with no dry run."""
    (tmp_path / "lending_app.py").write_text(LENDING_SOURCE, encoding="utf-8")
    tools = load_app_source(tmp_path, "lending_app").dataset_tools()
    dataset = write_jsonl(tmp_path / "train.jsonl", [
        {"messages": [{"role": "user", "content": f"Lend b{i % 2 + 1}."}], "tools": tools,
         "actions": [{"name": "lend", "arguments": {"book_id": f"b{i % 2 + 1}"}}], "reference_answer": "Lent."}
        for i in range(10)])
    temp, chosen = tmp_path / "temp", tmp_path / "chosen"
    temp.mkdir()
    default = rft("validate", str(dataset), "--app", "lending_app:server", "--json", cwd=tmp_path,
                  env={"TMPDIR": str(temp), "RFT_DB_DIR": ""})
    assert default.returncode == 0, default.stdout + default.stderr
    assert json.loads(default.stdout)["gold_replayed"] == 10  # stdout stays the report alone
    folder = temp / "rft-db-lendcheck"
    assert (folder / "template.db").is_file()
    assert default.stderr == (f"rft validate: info: the dry run left the rollout database's template in {folder} "
                              "(reused by the next run of the app; set RFT_DB_DIR to keep it elsewhere)\n")
    named = rft("validate", str(dataset), "--app", "lending_app:server", cwd=tmp_path,
                env={"TMPDIR": str(temp), "RFT_DB_DIR": str(chosen)})
    assert named.returncode == 0 and named.stderr == "" and (chosen / "lendcheck" / "template.db").is_file()
    no_replay = rft("validate", str(dataset), "--app", "lending_app:server", "--no-replay", cwd=tmp_path,
                    env={"TMPDIR": str(temp), "RFT_DB_DIR": ""})
    assert no_replay.returncode == 0 and no_replay.stderr == ""

