"""mindprobe sends what upstream's script sends: requests recorded by the local OpenAI-compatible
server equal reference requests written here from upstream's `scripts/eval_mr_gsm8k.py` (byte
copy in ../shared/data/mr_gsm8k/upstream): `get_eval_outputs`' 0-shot / k-shot prompt with
`construct_k_shot_demos`' block, `grade_eval_outputs`' judge prompt, one user message each,
sent by `request_openai` with its default temperature and max_token.

The reference reads the script with `ast` (never running it): each f-string's literal parts
verbatim, each field filled with the value its expression names (looked up by the expression's
source text, e.g. `data['question']`), formatted as Python formats an f-string field.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mindprobe.cli import main

SCRIPT = "upstream/scripts/eval_mr_gsm8k.py"


class Script:
    def __init__(self, root: Path) -> None:
        self.tree = ast.parse((root / SCRIPT).read_text(encoding="utf-8"))
        self.demos = json.loads((root / "k-shot-demos.json").read_text(encoding="utf-8"))

    def _function(self, name: str) -> ast.FunctionDef:
        return next(n for n in ast.walk(self.tree)
                    if isinstance(n, ast.FunctionDef) and n.name == name)

    def strings(self, function: str, target: str) -> list[ast.expr]:
        """The string / f-string values assigned to `target` in `function`, in source order."""
        found = [n for n in ast.walk(self._function(function))
                 if isinstance(n, ast.Assign | ast.AugAssign)
                 and ast.unparse(n.targets[0] if isinstance(n, ast.Assign) else n.target) == target
                 and isinstance(n.value, ast.JoinedStr | ast.Constant)]
        return [n.value for n in sorted(found, key=lambda n: n.lineno)]

    @staticmethod
    def fill(node: ast.expr, values: dict[str, Any]) -> str:
        if isinstance(node, ast.Constant):
            return node.value
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(part.value)
            else:
                assert part.conversion == -1 and part.format_spec is None
                out.append(format(values[ast.unparse(part.value)], ""))
        return "".join(out)

    def sampling(self) -> dict[str, Any]:
        args = self._function("request_openai").args
        defaults = dict(zip([a.arg for a in args.args[-len(args.defaults):]],
                            [ast.literal_eval(d) for d in args.defaults], strict=True))
        return {"temperature": defaults["temperature"], "max_tokens": defaults["max_token"]}

    def demo_block(self, k: int) -> str:
        if k == 0:
            return ""
        intro, entry = self.strings("construct_k_shot_demos", "demo_str")
        block = self.fill(intro, {})
        for demo in self.demos[:k]:
            block += self.fill(entry, {"demo['question']": demo["question"],
                                       "sol_steps": "\n".join(demo["output_steps"]),
                                       "demo['evaluation']": demo["evaluation"]})
        return block

    def eval_prompt(self, data: dict[str, Any], k: int) -> str:
        zero, kshot = self.strings("get_eval_outputs", "data['eval_prompt']")
        k_shot_demos = self.demo_block(k)
        values = {"data['question']": data["question"],
                  "sol_steps": "\n".join(data["model_output_steps"]),
                  "k_shot_demos": k_shot_demos}
        return self.fill(kshot if k_shot_demos else zero, values)

    def grade_prompt(self, data: dict[str, Any], response: str) -> str:
        (grade,) = self.strings("grade_eval_outputs", "data['grade_prompt']")
        error_reason = re.search(r"Error Analysis:\s*(.*)", response, re.DOTALL).group(1)
        values = {f"data['{k}']": data[k] for k in (
            "question", "model_output_steps", "model_output_solution_first_error_step",
            "model_output_solution_first_error_reason")}
        return self.fill(grade, {**values, "data['Evaluation_Result']['error_reason']":
                                 error_reason})


def _reply(rec: dict[str, Any]) -> str:
    """A reply that finds the labelled first error step (so the judge is asked)."""
    return ("Step-by-step Evaluation: Step 1 is fine.\nFinal Judgement: wrong\n"
            f"First Error Step: {rec['model_output_solution_first_error_step']}\n"
            "Error Analysis: The step {adds} where it should subtract.\nIt is wrong. ")


def _record_of(prompt: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The record whose question and solution the (last part of the) prompt shows."""
    tail = prompt.rsplit("Question:\n", 1)[1]
    (rec,) = [r for r in records if tail.startswith(r["question"] + "\n")
              and "Student Solution:\n" + "\n".join(r["model_output_steps"]) + "\n" in tail]
    return rec


def _records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            (root / "sample_records.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("shots", [0, 3, 5])
def test_eval_and_judge_requests_are_upstreams(shared_data, tmp_path, capsys, monkeypatch,
                                               shots):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    from mindprobe.testing import TestServer

    root = shared_data("mr_gsm8k")
    script, records = Script(root), _records(root)
    bodies: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> str:
        bodies.append(body)
        if body["model"] == "judge-model":
            return "Step-by-Step Reasoning: r\nStudent Error Reason Analysis: a\nFinal Decision: Correct"
        return _reply(_record_of(body["messages"][0]["content"], records))

    with TestServer(models=["test-model", "judge-model"], responder=responder) as srv:
        code = main(["run", "mr_gsm8k:sample", "--model", f"openai:test-model@{srv.base_url}",
                     "--judge", f"openai:judge-model@{srv.base_url}", "--data-dir", str(root),
                     "--shots", str(shots), "--limit", "3", "--runs-dir", str(tmp_path / "runs"),
                     "--no-cache", "--max-attempts", "1"])
    assert code == 0, capsys.readouterr().err
    evals = [b for b in bodies if b["model"] == "test-model"]
    grades = [b for b in bodies if b["model"] == "judge-model"]
    assert len(evals) == 3 and len(grades) == 3
    sampling = script.sampling()
    assert sampling == {"temperature": 0.0, "max_tokens": 1024}
    for body in evals:
        rec = _record_of(body["messages"][0]["content"], records)
        reference = script.eval_prompt(rec, shots)
        assert reference.startswith("Act as a grade school math teacher and score")
        assert body == {"model": "test-model", "messages": [{"role": "user",
                                                             "content": reference}], **sampling}
    expected_grades = sorted(script.grade_prompt(rec, _reply(rec)) for rec in records[:3])
    assert expected_grades[0].startswith("Hello GPT-4,\n")
    assert sorted(b["messages"][0]["content"] for b in grades) == expected_grades
    for body in grades:
        assert {k: v for k, v in body.items() if k != "messages"} == {
            "model": "judge-model", **sampling}
        assert [m["role"] for m in body["messages"]] == ["user"]


@pytest.mark.parametrize("damage", ["missing", "altered"])
def test_missing_or_altered_upstream_script(shared_data, tmp_path, capsys, damage):
    src = shared_data("mr_gsm8k")
    root = tmp_path / "data"
    (root / "upstream/scripts").mkdir(parents=True)
    for name in ("sample_records.jsonl", "k-shot-demos.json"):
        (root / name).write_bytes((src / name).read_bytes())
    if damage == "altered":
        text = (src / SCRIPT).read_text().replace("Act as a grade school", "Act as a high school")
        (root / SCRIPT).write_text(text)
    code = main(["run", "mr_gsm8k:sample", "--model", "random", "--data-dir", str(root),
                 "--runs-dir", str(tmp_path / "runs")])
    flat = " ".join(capsys.readouterr().err.split())
    assert code == 2 and "Traceback" not in flat
    assert "eval_mr_gsm8k.py" in flat and "mindprobe data fetch mr_gsm8k" in flat
    assert not (tmp_path / "runs").exists()
