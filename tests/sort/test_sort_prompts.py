"""Prompt rendering from upstream's files: the 13 YAMLs and evaluation.py's segments f-string,
substitution order, no separator, labels last, the two paths; missing or altered files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from mindprobe.benchmarks.sort import upstream
from mindprobe.benchmarks.sort.prompts import (
    fill_labels,
    get_prompt_config,
    ground_truth,
    needs_space,
    render_pre_excerpt,
    render_prompt,
    render_segments,
)
from mindprobe.errors import DataError, UsageError

ROW = {"book_title": "Rain Day", "excerpt_text": "*Tom woke early. Outside, rain fell!*\n\n",
       "segment_1": "*Outside, rain fell!*", "segment_2": "*Mr. Bell knocked*",
       "present_seg1_first": 0}


@pytest.fixture
def data(shared_data):
    return shared_data("sort")


def _yaml(data: Path, name: str) -> dict:
    return yaml.safe_load((data / upstream.FOLDER / upstream.PROMPTS_DIR /
                           f"{name}.yaml").read_text())


def test_thirteen_configs_are_upstreams_yaml(data):
    for name in upstream.PROMPT_NAMES:
        cfg = get_prompt_config(name, data)
        doc = _yaml(data, name)
        assert [getattr(cfg, f) for f in upstream.YAML_FIELDS] == [doc[f] for f in
                                                                    upstream.YAML_FIELDS]
        assert cfg.pre_excerpt.endswith("<excerpt>") and "<segments>" in cfg.post_excerpt
    assert get_prompt_config("prompt_3.yaml", data).name == "prompt_3"
    with pytest.raises(UsageError, match="prompt_0, prompt_1, .*prompt_12"):
        get_prompt_config("prompt_99", data)


def test_segments_come_from_upstreams_fstring(data):
    code = upstream.evaluation_code(data)
    seg = render_segments(code, ROW["segment_1"], ROW["segment_2"], 0)
    assert seg == "Segment A: *Mr. Bell knocked* Segment B: *Outside, rain fell!*\n"
    assert render_segments(code, "x", "y", 1, ("P", "Q")) == "Segment P: x Segment Q: y\n"
    assert code.whitespace_probe.count(" ") == 10
    assert ground_truth(0) == "B" and ground_truth(1) == "A"
    assert ground_truth(0, "last") == "A" and ground_truth(1, "last") == "B"


def test_in_context_is_pre_plus_post_without_separator(data):
    cfg = get_prompt_config("prompt_7", data)
    prompt = render_prompt(cfg, ROW, data_dir=data)
    system, user = (m["content"] for m in prompt.template_messages())
    pre = render_pre_excerpt(cfg, "Rain Day", ROW["excerpt_text"])
    assert user.startswith(pre) and system == cfg.system_prompt
    no_ctx = render_prompt(cfg, ROW, in_context=False, data_dir=data)
    assert no_ctx.template_messages()[1]["content"] == user[len(pre):]
    assert "<label_list[0]>" in user  # labels are upstream's last step, per path


def test_substitution_order_and_labels_last(data):
    row = dict(ROW, excerpt_text="*mentions <booktitle> and <label_list[1]>*\n\n")
    prompt = render_prompt("prompt_0", row, task_type="last", labels=("X1", "Y2"),
                           data_dir=data)
    chat = prompt.chat()[-1]["content"]
    assert "mentions <booktitle> and Y2" in chat  # title replaced before the excerpt went in
    assert "Segment X1: " in chat and "last" in chat
    head = "<s>[sys]" + "".join(m["content"] for m in prompt.template_messages()) + "[/]"
    full = prompt.completion(head, add_space=True)
    assert full == fill_labels(head + "Answer: Segment ", ("X1", "Y2"))
    assert prompt.chat(add_space=True)[-1]["content"].endswith("? ")


def test_message_forms(data):
    raw_row = dict(ROW, excerpt_text="plain text.", segment_1="a b", segment_2="c d")
    wrapped = render_prompt("prompt_2", raw_row, data_dir=data)
    user = wrapped.chat()[-1]["content"]
    assert "*plain text.*\n\n" in user and "*a b*" in user
    assert "*a b*" not in render_prompt("prompt_2", raw_row, wrap=False,
                                        data_dir=data).chat()[-1]["content"]
    assert [m["role"] for m in wrapped.chat()] == ["system", "user"]
    assert [m["role"] for m in wrapped.prefix_messages()] == ["system", "user", "assistant"]
    assert wrapped.prefix_messages(True)[-1]["content"] == "Answer: Segment "
    off = render_prompt("prompt_2", raw_row, use_system_prompt=False, data_dir=data)
    assert [m["role"] for m in off.chat()] == ["user"]
    with pytest.raises(UsageError):
        render_prompt("prompt_2", ROW, task_type="middle", data_dir=data)


def test_needs_space_follows_upstreams_rule(data):
    import asyncio

    probe = upstream.evaluation_code(data).whitespace_probe

    async def apart(text):  # every space its own token
        return [0] + [hash(p) for p in text.replace(" ", "\0 \0").split("\0") if p]

    async def merged(text):
        return [0] + [hash(p) for p in text.replace(" ", " \0").split("\0") if p]

    assert asyncio.run(needs_space(apart, probe)) is True
    assert asyncio.run(needs_space(merged, probe)) is False


def test_missing_or_altered_upstream_file_names_the_fix(tmp_path, data, monkeypatch):
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(tmp_path / "empty"))
    with pytest.raises(DataError, match=r"prompt_4\.yaml.*mindprobe data fetch sort"):
        upstream.load_config("prompt_4", tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(data / "upstream", copy / "upstream")
    path = copy / upstream.FOLDER / upstream.PROMPTS_DIR / "prompt_4.yaml"
    path.chmod(0o644)
    path.write_text(path.read_text().replace("helpful", "useful"))
    with pytest.raises(DataError, match=r"prompt_4\.yaml does not match.*data fetch sort"):
        upstream.load_config("prompt_4", copy)
    evaluation = copy / upstream.FOLDER / upstream.EVALUATION
    evaluation.chmod(0o644)
    evaluation.write_text("")
    with pytest.raises(DataError, match=r"evaluation\.py does not match.*data fetch sort"):
        upstream.evaluation_code(copy)


def test_booksort_tables_elsewhere_use_the_fetched_prompts(tmp_path, data, monkeypatch):
    """A --data-dir of Book-SORT tables needs no copy of the prompts: the data cache has them."""
    monkeypatch.setenv("MINDPROBE_DATA_DIR", str(data.parent))
    assert upstream.load_config("prompt_1", tmp_path).path.startswith(str(data))


def test_prompt_file_replaces_fields_of_the_chosen_config(cli, tmp_path, data):
    from mindprobe.core.requests import expand_calls
    from mindprobe.core.store import load_run, read_records

    pf = tmp_path / "mine.yaml"
    pf.write_text("system_prompt: Be brief.\n"
                  "post_excerpt: 'Which came {tasktype} in {booktitle}? {segments} "
                  "{label_list_0} or {label_list_1}?'\n")
    code, _, err = cli("run", "sort:250-20", "--model", "random", "--data-dir", data, "--books",
                       "73017", "--limit", 2, "--runs-dir", tmp_path / "runs", "--prompt",
                       "prompt_6", "--prompt-file", pf)
    assert code == 0, err
    run = next((tmp_path / "runs").rglob("records.jsonl"))
    assert "+prompts-" in str(run)
    msgs = expand_calls([read_records(run)[0]["request"]], load_run(run.parent).texts)[0][
        "messages"]
    assert msgs[0]["content"] == "Be brief."
    assert msgs[1]["content"].startswith(get_prompt_config("prompt_6", data).pre_excerpt[:20])
    assert "? Segment A: " in msgs[1]["content"] and msgs[1]["content"].endswith("A or B?")
    bad = tmp_path / "bad.yaml"
    bad.write_text("post_excerpt: 'no segments here'\n")
    code, _, err = cli("run", "sort:250-20", "--model", "random", "--data-dir", data,
                       "--books", "73017", "--limit", 2, "--runs-dir", tmp_path / "runs",
                       "--prompt-file", bad)
    assert code == 2 and "missing slot(s)" in err
