"""What a person reads in report.html and doctor.html (issue 36): per-item table, failing rollouts with the
grader's reasons, a trajectory viewer, sensible histogram axes; doctor.html opens with verdicts and advice."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from test_emu_metrics_report import call, rollout

from rft_sdk.doctor import DoctorReport, write_doctor_report
from rft_sdk.doctor._result import Finding, PrincipleResult
from rft_sdk.emulator import RolloutResult, summarize, write_report
from rft_sdk.emulator._report import draw_histogram


class Rows(HTMLParser):
    """The text of every table row under each <h2>, and the <details> summaries."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, list[list[str]]] = {}
        self.summaries: list[str] = []
        self._h2 = self._row = self._cell = self._summary = None

    def handle_starttag(self, tag, attrs):
        if tag == "h2":
            self._h2 = ""
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "summary":
            self._summary = ""

    def handle_endtag(self, tag):
        if tag == "h2":
            self.sections[self._h2] = []
            self._section, self._h2 = self._h2, None
        elif tag in ("td", "th") and self._row is not None:
            self._row.append(" ".join(self._cell.split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.sections:
            self.sections[self._section].append(self._row)
            self._row = None
        elif tag == "summary":
            self.summaries.append(self._summary)
            self._summary = None

    def handle_data(self, data):
        if self._h2 is not None:
            self._h2 += data
        if self._cell is not None:
            self._cell += data
        if self._summary is not None:
            self._summary += data


def results() -> list[RolloutResult]:
    graded = rollout(0, 0.0, [call("find", 0.0123, '{"q":"ab"}', "12345678")])
    graded.grade_details = {"reasons": ["wrong order id"], "subscores": {"answer": 0.0}}
    graded.sample = {"output_text": "#W1"}
    return [rollout(0, 1.0, [call("find", 0.1, '{"q":"cd"}', "abcdefgh")]), graded,
            rollout(1, 1.0), rollout(1, 1.0),
            rollout(2, None, [call("cancel", 0.4, "{}", "", status=500, error="server_error", attempts=4)],
                    reason="tool_server_error")]


def read(tmp_path: Path, rs: list[RolloutResult]) -> Rows:
    paths = write_report(tmp_path, rs, summarize(rs, pass_threshold=1.0))
    parser = Rows()
    parser.feed(paths["html"].read_text())
    return parser


def test_per_item_table(tmp_path: Path) -> None:
    rows = read(tmp_path, results()).sections["Per item"]
    assert rows[0] == ["item", "graded", "mean", "best", "worst", "std", "discarded"]
    assert rows[1:] == [["0", "2", "0.500", "1.000", "0.000", "0.500", "0"],
                        ["1", "2", "1.000", "1.000", "1.000", "0.000", "0"],
                        ["2", "0", "–", "–", "–", "–", "1"]]


def test_failing_rollouts_carry_the_graders_reasons(tmp_path: Path) -> None:
    parsed = read(tmp_path, results())
    [title] = [t for t in parsed.sections if t.startswith("Failing rollouts")]
    assert title == "Failing rollouts (2 of 5)"
    rows = parsed.sections[title][1:]
    assert rows[0] == ["0", "0", "0.000", "trace_0", "wrong order id; sub-scores: answer=0.0"]
    assert rows[1][:4] == ["2", "0", "–", "trace_2"] and rows[1][4].startswith("discarded: tool_server_error")


def test_trajectory_viewer_shows_each_call(tmp_path: Path) -> None:
    parsed = read(tmp_path, results())
    # failing rollouts first, then by item and sample
    assert parsed.summaries[:2] == ["item 0, sample 0: score 0.000, 1 call(s), 0.00 s",
                                    "item 2, sample 0: discarded (tool_server_error), 1 call(s), 0.00 s"]
    calls = parsed.sections["Trajectories"]
    assert ["1", "find", '{ "q": "ab" }', "200", "12345678", "12.3 ms", "1"] in calls
    assert ["1", "cancel", "{}", "500", "server_error", "400.0 ms", "4"] in calls
    html = (tmp_path / "report.html").read_text()
    assert "<b>final answer:</b></p><pre>#W1</pre>" in html


def test_nothing_failing_says_so(tmp_path: Path) -> None:
    parsed = read(tmp_path, [rollout(0, 1.0), rollout(0, 1.0)])
    assert "Failing rollouts" in parsed.sections
    assert "None: every rollout was graded at or above 1.0." in (tmp_path / "report.html").read_text()


def test_histogram_axes() -> None:
    """All scores 1.0: the axis spans 0-1 (it ran 0.5-1.5); tool-call counts get whole-number ticks."""
    def axes(values, integer_bins):
        fig = Figure()
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        draw_histogram(ax, values, integer_bins)
        fig.canvas.draw()
        return ax

    scores = axes([1.0] * 8, False)
    lo, hi = scores.get_xlim()
    assert lo < 0.0 < 1.0 < hi < 1.05
    assert axes([0.2, 1.7], False).get_xlim()[1] > 1.7  # a score past 1 is not cut off
    counts = axes([1] * 5, True)
    assert all(float(t).is_integer() for t in counts.get_xticks())
    assert counts.get_xlim() == (-0.5, 1.5)


def test_doctor_html_opens_with_verdicts_and_advice(tmp_path: Path) -> None:
    report = DoctorReport({
        "gradeable": PrincipleResult("gradeable", True, "0 errors", {}, [Finding("warn", "slow grader", "scale it")]),
        "learnable": PrincipleResult("learnable", None, "not checked: deterministic policy", {"items": []},
                                     [Finding("info", "the policy is deterministic", "")]),
        "unhackable": PrincipleResult("unhackable", False, "1 of 2 probes fail", {
            "hack_share": 0.5, "hack_threshold": 0.02, "waived_probes": [],
            "probes": {"empty_answer": {"intent": "hack", "mean_score": 1.0, "pass_rate": 1.0, "items": [0, 1],
                                        "rollouts": 2, "verdict": "fail"}}},
            [Finding("fail", "probe empty_answer earns reward", "check the answer before scoring it")]),
    }, {"target": "openai", "items": 2, "user_probes": [], "discards": None})
    html = write_doctor_report(tmp_path, report)["html"].read_text()
    parser = Rows()
    parser.feed(html)
    assert html.index("<h1>rft doctor: 1 principle(s) fail: unhackable</h1>") < html.index("<table>")
    titles = list(parser.sections)
    assert titles == ["What to do", "Probes", "Plots", "Run settings"]
    assert html.index("</table>") < html.index("What to do")  # the verdict table comes first
    first = html[:html.index("<h2>What to do</h2>")]
    assert "NOT CHECKED" in first and "FAIL" in first and "WARN" in first and "{" not in first.split("<body>")[1]
    todo = html[html.index("<h2>What to do</h2>"):html.index("<h2>Probes</h2>")]
    assert todo.index("probe empty_answer earns reward") < todo.index("slow grader")  # fails before warns
    assert "→ check the answer before scoring it" in todo and "deterministic" not in todo  # info is kept apart
    assert parser.sections["Run settings"] == [["target", "openai"], ["items", "2"], ["user_probes", "–"]]
    assert "<summary>Other observations</summary>" in html
