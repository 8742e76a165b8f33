"""`--prompt-file` through the CLI: other wording is sent, and the run says so everywhere."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from mindprobe.benchmarks.mr_gsm8k import templates
from mindprobe.cli import main
from mindprobe.core.prompt_file import apply_prompt_file, read_prompt_file
from mindprobe.testing import TestServer


def _cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, " ".join(err.split())


def test_data_prompts_prints_upstreams_templates(shared_data, capsys, tmp_path):
    root = shared_data("already_said_that")
    code, out, _ = _cli(capsys, "data", "prompts", "already_said_that", "--data-dir", root)
    assert code == 0
    doc = yaml.safe_load(out)
    assert list(doc) == ["task_description", "cot", "extract_answer"]
    assert doc["task_description"].startswith("You will be presented with a list of words")
    assert "{distractor_question}" in doc["task_description"]
    code, out, _ = _cli(capsys, "data", "prompts", "mr_gsm8k", "--data-dir",
                        shared_data("mr_gsm8k"))
    assert code == 0
    assert list(yaml.safe_load(out)) == ["eval_0shot", "eval_kshot", "demo_intro", "demo", "grade"]
    # Given back as a prompt file, the printed templates send exactly upstream's wording.
    upstream = templates(shared_data("mr_gsm8k"))
    path = tmp_path / "same.yaml"
    path.write_text(out)
    same = apply_prompt_file(upstream, read_prompt_file(path))
    for name, tpl in upstream.items():
        values = {slot: f"<{slot} {{x}}\n>" for slot in tpl.slots}
        assert same[name].render(values) == tpl.render(values), name
    code, _, err = _cli(capsys, "data", "prompts", "worldsense")
    assert code == 2 and "worldsense has no prompt templates" in err


def test_ast_with_a_prompt_file(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    root = shared_data("already_said_that")
    pf = tmp_path / "wording.yaml"
    pf.write_text("task_description: |-\n  Say whether you saw a word. Example: "
                  "{distractor_question} -> {distractor_answer}; {distractor_word} is new.\n"
                  "cot: Think first.\n")
    sha = hashlib.sha256(pf.read_bytes()).hexdigest()
    bodies: list[dict] = []

    def responder(body: dict) -> str:
        bodies.append(body)
        return "[answer: no]"

    with TestServer(responder=responder) as srv:
        code, out, err = _cli(capsys, "run", "already_said_that:distractorless", "--model",
                              f"openai:test-model@{srv.base_url}", "--data-dir", root,
                              "--runs-dir", tmp_path / "runs", "--n-samples", 1, "--solver",
                              "cot", "--prompt-file", pf, "--no-cache", "--json")
    assert code == 0, err
    assert bodies[0]["messages"][0]["content"] == (
        "Say whether you saw a word. Example: What is the capital of Italy? -> rome; italy is new.")
    assert bodies[0]["messages"][-1] == {"role": "system", "content": "Think first."}
    # Templates the file does not name stay upstream's.
    assert bodies[1]["messages"][-1]["content"].startswith("Given the above reasoning")
    (run_dir,) = (tmp_path / "runs/already_said_that/distractorless").iterdir()
    assert run_dir.name.startswith(f"cot+prompts-{sha[:8]}___")
    config = json.loads((run_dir / "manifest.json").read_text())["config"]
    assert config["prompt_file"] == {"name": "wording.yaml", "sha256": sha,
                                     "replaced": ["task_description", "cot"]}
    assert "wording from --prompt-file wording.yaml" in err
    assert json.loads(out)["notes"][0].startswith("wording from --prompt-file wording.yaml")


def test_mr_gsm8k_with_a_json_prompt_file(shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    root = shared_data("mr_gsm8k")
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps({"eval_0shot": "Grade {{this}}: {question}\n{sol_steps}"}))
    bodies: list[dict] = []
    with TestServer(responder=lambda body: bodies.append(body) or "no format") as srv:
        code, out, err = _cli(capsys, "run", "mr_gsm8k:sample", "--model",
                              f"openai:test-model@{srv.base_url}", "--data-dir", root,
                              "--limit", 1, "--runs-dir", tmp_path / "runs", "--prompt-file", pf,
                              "--no-cache")
    assert code == 0, err
    first = json.loads(Path(root / "sample_records.jsonl").read_text().splitlines()[0])
    assert bodies[0]["messages"] == [{"role": "user", "content": "Grade {this}: "
                                      + first["question"] + "\n"
                                      + "\n".join(first["model_output_steps"])}]
    (run_dir,) = (tmp_path / "runs/mr_gsm8k/sample").iterdir()
    assert run_dir.name.startswith("0shot+prompts-")
    assert "wording from --prompt-file p.json" in " ".join(out.split())


def test_prompt_file_mistakes_are_one_line(shared_data, tmp_path, capsys):
    root = shared_data("mr_gsm8k")
    bad = tmp_path / "bad.yaml"
    bad.write_text("grade: 'Judge {question} only'\n")
    args = ["run", "mr_gsm8k:sample", "--model", "random", "--data-dir", root, "--runs-dir",
            tmp_path / "runs"]
    code, _, err = _cli(capsys, *args, "--prompt-file", bad)
    assert code == 2 and "template 'grade': missing slot(s)" in err and "{error_reason}" in err
    bad.write_text("gradee: x\n")
    code, _, err = _cli(capsys, *args, "--prompt-file", bad)
    assert code == 2 and "no template named 'gradee'" in err and "eval_0shot" in err
    code, _, err = _cli(capsys, *args, "--prompt-file", tmp_path / "absent.yaml")
    assert code == 2 and "no such file" in err
    code, _, err = _cli(capsys, "run", "worldsense", "--model", "random", "--prompt-file", bad,
                        "--runs-dir", tmp_path / "runs")
    assert code == 2 and "worldsense has no prompt templates" in err
    assert not (tmp_path / "runs").exists()
