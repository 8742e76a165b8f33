"""Reading upstream's wording from its files (never running them) and `--prompt-file`."""

from __future__ import annotations

import hashlib
import json

import pytest

from mindprobe.core.data import DataFile, git_blob_sha1
from mindprobe.core.prompt_file import (
    PromptFile,
    apply_prompt_file,
    read_prompt_file,
    template_file,
    wording_notes,
)
from mindprobe.core.upstream_source import PythonSource, Slot, Template
from mindprobe.errors import DataError, UsageError

SOURCE = '''
GREETING = """\\
Hello {name},\\
 welcome.
"""
NOT_TEXT = 3

def build(data, steps, extra):
    sol = "\\n".join(steps)
    if extra:
        data["p"] = f"""Q: {data['question']}
  {sol!r} {data["n"]:>4}
{{literal}}"""
    else:
        data["p"] = f"Q: {data['question']}"
    out = "intro: "
    out += f"\\n{extra.total}"
    return out
'''


def test_constants_are_read_not_executed(tmp_path):
    src = PythonSource(SOURCE + "\nraise SystemExit('executed!')\n", tmp_path / "x.py")
    assert src.constants(["GREETING"]) == {"GREETING": "Hello {name}, welcome.\n"}
    with pytest.raises(DataError, match=r"x\.py: no string constant MISSING"):
        src.constants(["GREETING", "MISSING"])
    with pytest.raises(DataError, match="NOT_TEXT .* is not a string constant"):
        src.constants(["NOT_TEXT"])


def test_function_fstrings_become_templates_with_named_slots(tmp_path):
    src = PythonSource(SOURCE, tmp_path / "x.py")
    found = src.function_strings("build")
    assert [a.target for a in found] == ["data['p']", "data['p']", "out", "out"]
    long, short, intro, more = (a.template for a in found)
    assert long.slots == ("question", "sol", "n")
    assert short.slots == ("question",) and intro.text == "intro: "
    assert more.slots == ("total",)
    assert long.origin.endswith("x.py:11")
    # Rendered exactly as Python renders the f-string itself (conversion, spec, braces).
    data, sol = {"question": "2+2?", "n": 7}, ["a", "b"]
    expected = f"""Q: {data['question']}
  {sol!r} {data["n"]:>4}
{{literal}}"""
    assert long.render(question="2+2?", sol=sol, n=7) == expected
    assert Template.from_braced(long.braced()).render(question="2+2?", sol=sol, n=7) == expected
    # A list field shows as its repr, as in upstream's f-strings.
    assert Template((Slot("x"),)).render(x=["s1", "s2"]) == "['s1', 's2']"
    with pytest.raises(KeyError, match="question"):
        short.render()


def test_source_errors_name_the_file(tmp_path):
    with pytest.raises(DataError, match=r"y\.py: not valid Python"):
        PythonSource("def (:\n", tmp_path / "y.py")
    with pytest.raises(DataError, match=r"no function nothere\(\)"):
        PythonSource(SOURCE, tmp_path / "y.py").function_strings("nothere")


def test_missing_or_altered_upstream_file_is_one_clear_error(tmp_path):
    body = SOURCE.encode()
    spec = DataFile("upstream/x.py", url="https://example.invalid/x.py",
                    sha256=hashlib.sha256(body).hexdigest())
    with pytest.raises(DataError) as exc:
        PythonSource.official("bench", [spec], spec.relpath, tmp_path)
    msg = str(exc.value)
    assert str(tmp_path / "upstream" / "x.py") in msg and "mindprobe data fetch bench" in msg
    (tmp_path / "upstream").mkdir()
    (tmp_path / "upstream" / "x.py").write_bytes(body.replace(b"Hello", b"Hi"))
    with pytest.raises(DataError) as exc:
        PythonSource.official("bench", [spec], spec.relpath, tmp_path)
    msg = str(exc.value)
    assert "x.py does not match the official file" in msg and "mindprobe data fetch bench" in msg
    (tmp_path / "upstream" / "x.py").write_bytes(body)
    blob = DataFile("upstream/x.py", git_blob=git_blob_sha1(body))
    assert "GREETING" in PythonSource.official("bench", [blob], blob.relpath, tmp_path).text


UPSTREAM = {"intro": Template.from_braced("Hi {name}, see {item}."),
            "outro": Template.from_braced("Bye.")}


def test_prompt_file_yaml_and_json(tmp_path):
    y = tmp_path / "p.yaml"
    y.write_text("intro: |-\n  Hello {item} ({name})\n")
    pf = read_prompt_file(y)
    assert pf.sha256 == hashlib.sha256(y.read_bytes()).hexdigest()
    wording = apply_prompt_file(UPSTREAM, pf)
    assert wording["intro"].render(name="n", item="i") == "Hello i (n)"
    assert wording["outro"] is UPSTREAM["outro"] and wording.replaced == ("intro",)
    assert pf.used and pf.label == f"+prompts-{pf.sha256[:8]}"
    j = tmp_path / "p.json"
    j.write_text(json.dumps({"outro": "Ciao."}))
    assert apply_prompt_file(UPSTREAM, read_prompt_file(j))["outro"].text == "Ciao."
    # Without a file: upstream's templates.
    assert apply_prompt_file(UPSTREAM, None).templates == UPSTREAM


@pytest.mark.parametrize(("texts", "error"), [
    ({"intra": "x"}, "no template named 'intra'; this benchmark's templates: intro, outro"),
    ({"intro": "Hi {name}."}, r"template 'intro': missing slot\(s\) item; its slots: "
                              r"\{name\}, \{item\}"),
    ({"outro": "Bye {name}."}, r"unknown slot\(s\) name; its slots: none"),
    ({"intro": "Hi {name} {item} {0}"}, r"slot \{0\} is not a plain name"),
    ({"intro": "Hi {name {item}"}, "write a literal brace as"),
])
def test_prompt_file_refuses_other_slots(tmp_path, texts, error):
    pf = PromptFile(tmp_path / "p.yaml", "0" * 64, texts)
    with pytest.raises((UsageError, DataError), match=error):
        apply_prompt_file(UPSTREAM, pf)
    assert not pf.used


@pytest.mark.parametrize(("name", "content", "error"), [
    ("p.yaml", "- a\n- b\n", "expected a mapping of template names to texts"),
    ("p.yaml", "a: [1\n", "not valid YAML"),
    ("p.json", "{", "not valid JSON"),
    ("p.yaml", b"\xff\xfe", "not UTF-8"),
    ("p.json", '{"a": 1}', "expected a mapping"),
])
def test_bad_prompt_files(tmp_path, name, content, error):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(UsageError, match=error):
        read_prompt_file(path)
    with pytest.raises(UsageError, match="no such file"):
        read_prompt_file(tmp_path / "absent.yaml")


def test_template_file_round_trips(tmp_path):
    tricky = {"a": Template(("line one\n   \n  {braces} ", Slot("x"), "\ttab\n")),
              "b": Template(("plain",))}
    path = tmp_path / "t.yaml"
    path.write_text(template_file(tricky))
    wording = apply_prompt_file(tricky, read_prompt_file(path))
    assert wording["a"].render(x=1) == tricky["a"].render(x=1)
    assert wording["b"].text == "plain"


def test_wording_notes():
    assert wording_notes({}) == []
    notes = wording_notes({"prompt_file": {"name": "p.yaml", "sha256": "ab" * 32,
                                           "replaced": ["intro"]},
                           "deviations": ["temperature 0 (upstream: 1)"]})
    assert "p.yaml" in notes[0] and "intro" in notes[0]
    assert notes[1] == "deviation from upstream: temperature 0 (upstream: 1)"
