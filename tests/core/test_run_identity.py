"""Issue 22, observation 6: a run is the model's, not the address's.

Servers are real (TestServer on 127.0.0.1): a second server of the same model (a rescheduled
SLURM or vLLM job on another port) resumes the run and is answered from the cache; two
different model files behind one name never share a run or a cache entry.
"""

from __future__ import annotations

import json
from pathlib import Path

from mindprobe.testing import TestServer
from mindprobe.testing.responders import worldsense_answer


def _args(url: str, runs: Path, *extra: object) -> list:
    return ["run", "worldsense:fresh", "--model", f"openai:m1@{url}", "--runs-dir", runs,
            "--limit", 20, "--json", *extra]


def test_second_server_of_same_model_resumes_same_run_and_cache(cli, tmp_path):
    runs = tmp_path / "runs"
    same = {"responder": worldsense_answer, "models": ["m1"], "owned_by": "llamacpp",
            "model_file": "/scratch/job1/m1-q4.gguf", "model_size": 1234}
    with TestServer(**same) as a:
        port_a = a.port
        code, doc, err = cli(*_args(a.base_url, runs))
    assert code == 0, err
    first = Path(doc["run"])
    assert "127.0.0.1" not in str(first) and str(port_a) not in first.name
    same["model_file"] = "/other/host/path/m1-q4.gguf"  # same file, another host's folder
    with TestServer(**same) as b:
        assert b.port != port_a
        code, doc, err = cli(*_args(b.base_url, tmp_path / "elsewhere"))
        assert code == 0, err
        assert b.stats()["requests"]["/v1/chat/completions"] == 0  # served from the cache
        code, doc2, err = cli(*_args(b.base_url, runs))
    assert code == 0, err
    assert Path(doc2["run"]) == first  # resumed, not a second run directory
    manifest = json.loads((first / "manifest.json").read_text())
    assert manifest["model_label"] == "m1"
    assert manifest["model_identity"]["model"] == {"model": "m1", "model_file": "m1-q4.gguf",
                                                   "model_size": 1234}


def test_two_models_behind_one_name_never_share_run_or_cache(cli, tmp_path):
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, models=["m1"], owned_by="llamacpp",
                    model_file="a.gguf") as a:
        code, _, err = cli(*_args(a.base_url, runs))
    assert code == 0, err
    with TestServer(responder=worldsense_answer, models=["m1"], owned_by="llamacpp",
                    model_file="b.gguf") as b:
        code, _, err = cli(*_args(b.base_url, runs))
        assert code == 2
        assert "different model_identity" in err and "a.gguf" in err and "b.gguf" in err
        assert "Traceback" not in err
        code, _, err = cli(*_args(b.base_url, tmp_path / "other"))
        assert code == 0, err
        assert b.stats()["requests"]["/v1/chat/completions"] > 0  # no cache entry of a.gguf


def test_vllm_context_length_is_part_of_identity(cli, tmp_path):
    runs = tmp_path / "runs"
    with TestServer(responder=worldsense_answer, models=["m1"], owned_by="vllm",
                    max_model_len=4096) as a:
        code, _, err = cli(*_args(a.base_url, runs))
    assert code == 0, err
    with TestServer(responder=worldsense_answer, models=["m1"], owned_by="vllm",
                    max_model_len=32768) as b:
        code, _, err = cli(*_args(b.base_url, runs))
    assert code == 2 and "max_model_len" in err, err


def test_routed_run_is_identified_by_what_its_servers_serve(cli, tmp_path):
    """Several servers of one name (`openai:M@URL1,URL2`): the run's identity holds what they
    report, and servers of different model files under that name are refused."""
    runs = tmp_path / "runs"
    kw = {"responder": worldsense_answer, "models": ["m1"], "owned_by": "llamacpp"}
    with TestServer(model_file="a.gguf", **kw) as a, TestServer(model_file="a.gguf", **kw) as b:
        code, doc, err = cli(*_args(f"{a.base_url},{b.base_url}", runs))
    assert code == 0, err
    manifest = json.loads((Path(doc["run"]) / "manifest.json").read_text())
    assert manifest["model_identity"]["model"]["model_file"] == "a.gguf"
    with TestServer(model_file="a.gguf", **kw) as a, TestServer(model_file="b.gguf", **kw) as b:
        code, _, err = cli(*_args(f"{a.base_url},{b.base_url}", tmp_path / "other"))
    assert code == 2, err
    assert "serve different models" in err and "a.gguf" in err and "b.gguf" in err
    assert "Traceback" not in err
