"""Credentials never reach disk: a secret in a server URL (userinfo, a key-like query value), in
the environment or named by an endpoints file is sent to the server, and appears in no file
mindprobe writes (run folder, lock, cache, reports, exports) nor in what it prints."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mindprobe.cli import main
from mindprobe.core.secrets import (
    MASK,
    command_line,
    redact,
    redact_known,
    remember,
    remember_environment,
    split_credentials,
)
from mindprobe.testing import TestServer
from mindprobe.testing.leaks import find_leaks

#: One distinct canary per place a secret can come from.
CANARIES = {
    "userinfo password": "CanaryUserinfoPass1",
    "api_key query": "CanaryApiKeyQuery2",
    "MINDPROBE_API_KEY": "CanaryEnvKey3",
    "endpoints file token query": "CanaryFileTokenQuery4",
    "endpoints file key_env": "CanaryKeyEnvValue5",
    "endpoints file userinfo": "CanaryFilePass6",
    "bare userinfo": "CanaryBareUser7",
    "key query in a list": "CanaryListKey8",
    "judge URL userinfo": "CanaryJudgePass9",
}


def _leaks(root: Path, secrets: list[str]) -> list[str]:
    pytest.importorskip("zipfile_zstd")  # Inspect's .eval members are zstd-compressed
    return find_leaks(root, secrets)


def _mp(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mindprobe.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_canary_secrets_reach_the_server_and_no_file(tmp_path, monkeypatch, capsys,
                                                     shared_data):
    """Three runs (a URL with userinfo and api_key, an endpoints file with a token query,
    key_env and userinfo, a URL list with a key query and a bare userinfo), then every report
    format, an Inspect export, the upstream export, `analyse --json` and `runs`: every canary
    reaches a server and none is in any file written or any line printed."""
    c = CANARIES
    env = {**os.environ, "MINDPROBE_CACHE_DIR": str(tmp_path / "cache"),
           "MINDPROBE_API_KEY": c["MINDPROBE_API_KEY"],
           "CANARY_KEY": c["endpoints file key_env"], "PYTHONUNBUFFERED": "1"}
    printed: list[str] = []

    def mp(*args: str) -> None:
        done = _mp(list(args), env, tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        printed.append(done.stdout + done.stderr)

    with TestServer(reply="TRUE") as a, TestServer(reply="FALSE") as b:
        ha, hb = a.base_url.split("://")[1], b.base_url.split("://")[1]
        common = ["--limit", "3", "--runs-dir", "runs"]
        mp("run", "worldsense:fresh", "--model", f"openai:test-model@http://alice:"
           f"{c['userinfo password']}@{ha}?api_key={c['api_key query']}&mode=x", *common)
        endpoints = tmp_path / "endpoints.txt"
        endpoints.write_text(f"http://{ha}?token={c['endpoints file token query']} "
                             "key_env=CANARY_KEY\n"
                             f"http://bob:{c['endpoints file userinfo']}@{hb}\n")
        mp("run", "worldsense:fresh", "--model", "openai:test-model", "--endpoints",
           str(endpoints), "--name", "file", *common)
        mp("run", "worldsense:fresh", "--model", f"openai:test-model@http://{ha}?key="
           f"{c['key query in a list']},http://{c['bare userinfo']}@{hb}", "--no-cache",
           "--name", "list", *common)
        judge = ["run", "mr_gsm8k:sample", "--model", "random", "--limit", "2", "--data-dir",
                 str(shared_data("mr_gsm8k")), "--judge",
                 f"openai:test-model@http://carol:{c['judge URL userinfo']}@{ha}", *common]
        mp(*judge)
        mp(*judge)  # resumes: what was recorded compares equal to what is given again
        seen = "\n".join(a.stats()["credentials"] + b.stats()["credentials"])
    runs = sorted(p.parent for p in (tmp_path / "runs").rglob("manifest.json"))
    (tmp_path / "out").mkdir()
    ws = [r for r in runs if "worldsense" in r.parts]
    assert len(runs) == 4 and len(ws) == 3
    monkeypatch.chdir(tmp_path)  # what reads the runs back runs in this process
    for args in [*(("report", "--runs-dir", "runs", "--format", fmt, "--out",
                    f"out/report.{fmt}") for fmt in ("html", "md", "latex")),
                 *(("export", "--format", "inspect", "--run", str(run), "--out",
                    f"out/run{i}.eval") for i, run in enumerate(runs[:2])),
                 ("export", "worldsense", "--run", str(ws[0]), "--out", "out/upstream"),
                 ("analyse", "worldsense", *(f"--run={run}" for run in ws), "--json"),
                 ("runs", "--runs-dir", "runs", "--json")]:
        assert main(list(args)) == 0, args
        out, err = capsys.readouterr()
        printed.append(out + err)

    decoded = "\n".join(base64.b64decode(s.split()[-1]).decode() for s in seen.splitlines()
                        if s.startswith("Authorization: Basic"))
    for where, canary in CANARIES.items():  # the client still sends every credential
        assert canary in seen + decoded, f"{where}: {canary} never reached a server"
    endpoints.unlink()  # the user's own file: everything else there mindprobe wrote
    assert _leaks(tmp_path, list(CANARIES.values())) == []
    assert not [s for s in CANARIES.values() if any(s in out for out in printed)]
    manifest = (ws[0] / "manifest.json").read_text()
    assert MASK in manifest and "alice" not in manifest  # masked, not dropped


def test_redact_masks_each_form_and_keeps_the_rest():
    remember("RememberedSecret99")
    cases = {
        "openai:m@http://user:pw@host:8000/v1": "openai:m@http://***@host:8000/v1",
        "https://TOKEN@host/v1": "https://***@host/v1",
        "http://h/v1?api_key=abc&mode=x&key=k2&token=t": "http://h/v1?api_key=***&mode=x&key=***"
                                                         "&token=***",
        "Authorization: Bearer sk-abcdefgh": "Authorization: Bearer ***",
        "Authorization: Basic dXNlcjpwYXNz": "Authorization: Basic ***",
        "sent Bearer sk-0123456789abcdefXYZ": "sent Bearer ***",
        "mindprobe run worldsense --prompting basic --limit 3": "mindprobe run worldsense "
                                                                "--prompting basic --limit 3",
        "the basic prompting, a bearer of news": "the basic prompting, a bearer of news",
        "x-api-key: abcdef": "x-api-key: ***",
        "the key RememberedSecret99 was refused": "the key *** was refused",
        "http://host/v1?author=Tolstoy and ordinary text": "http://host/v1?author=Tolstoy and "
                                                          "ordinary text",
    }
    for text, want in cases.items():
        assert redact(text) == want
    assert command_line(["run", "x", "--model", "openai:m@http://u:p@h/v1"]) == (
        "mindprobe run x --model openai:m@http://***@h/v1")


def test_split_credentials_keeps_the_address_and_sends_the_rest():
    url, cred = split_credentials("http://u%40x:p%2Fw@host:9/v1?api_key=K&v=2")
    assert url == "http://host:9/v1"
    assert (cred.user, cred.password) == ("u@x", "p/w")
    assert cred.query == (("api_key", "K"), ("v", "2"))
    expected = base64.b64encode(b"u@x:p/w").decode()
    assert cred.headers() == {"Authorization": f"Basic {expected}"}
    assert split_credentials("http://host/v1") == ("http://host/v1", type(cred)())


@pytest.mark.parametrize("bad", ["openai:m@http://user:S3cretValue1@:99999/v1"])
def test_a_bad_url_error_does_not_print_the_secret(bad, cli):
    code, _, err = cli("run", "worldsense:fresh", "--model", bad, "--limit", "1")
    assert code == 2 and "S3cretValue1" not in err


@pytest.mark.parametrize("name", ["api_key_v2", "X-Amz-Signature", "my_token_2", "apikey",
                                  "AccessToken", "client_secret", "sig", "pwd", "Password",
                                  "oauth_token", "subscription-key", "x-goog-credential"])
def test_a_query_name_containing_a_secret_word_is_masked(name):
    """Issue 41.2: not only names *ending* in key/token/secret: any name containing a secret
    word, case-insensitive, in a URL's query (as manifests, locks, reports and `--dry-run
    --json` show it) and sent by the client, remembered wherever else it appears."""
    value = f"Hostile{name.replace('-', '')}Value41"
    url = f"openai:m@http://h:1/v1?mode=x&{name}={value}&v=2"
    assert redact(url) == f"openai:m@http://h:1/v1?mode=x&{name}={MASK}&v=2"
    split_credentials(url.split("@", 1)[1])
    assert redact(f"the server said: unknown {value}") == f"the server said: unknown {MASK}"


@pytest.mark.parametrize("name", ["monkey", "author", "max_tokens", "maxTokens", "tokenizer",
                                  "keyword", "api-version", "mode", "design", "prompt_tokens"])
def test_an_ordinary_query_name_is_shown(name):
    """... while ordinary names that merely contain such a word keep their value."""
    url = f"http://h:1/v1?{name}=Value123456&mode=x"
    assert redact(url) == url
    split_credentials(url)
    assert redact("Value123456 stays") == "Value123456 stays"


def test_counts_named_like_tokens_outside_a_url_are_data():
    """The query rule is for URL query strings: JSON and command-line options naming tokens
    are counts, never masked."""
    text = ('{"max_tokens": 16, "prompt_tokens": 120} --max-tokens=16 max_tokens=16 '
            'reasoning_tokens=3')
    assert redact(text) == text


def test_base64_forms_of_every_secret_are_masked():
    """The Basic token a URL's userinfo becomes, and the base64 of each remembered secret
    (whole, URL-safe, unpadded, or inside a longer encoded blob at any alignment)."""
    _, cred = split_credentials("http://alice:HostileB64Pass41@h:1/v1")
    token = cred.headers()["Authorization"].split()[-1]
    assert redact(f"echo {token} end") == f"echo {MASK} end"
    assert redact_known(token.encode()) == MASK.encode()
    secret = b"HostileB64Pass41"
    for blob in (secret, b"x" + secret + b"yz", b"xy" + secret, b"prefix " + secret + b" end"):
        for enc in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = enc(blob).decode()
            masked = redact(encoded)
            assert masked != encoded and MASK in masked, blob


def test_environment_secrets_are_remembered_but_paths_are_not():
    """API keys and tokens the process holds in its environment are masked wherever they
    appear; the working directory (`PWD`) and credential *file paths* are not secrets."""
    remember_environment({"SOME_SERVICE_API_KEY": "HostileEnvKey41", "HF_TOKEN": "hf_Hostile41",
                          "PWD": "/srv/experiments", "OLDPWD": "/srv/old",
                          "GOOGLE_APPLICATION_CREDENTIALS": "/", "TOKENIZERS_PARALLELISM":
                          "falsefalse"})
    assert redact("HostileEnvKey41 hf_Hostile41") == f"{MASK} {MASK}"
    kept = "/srv/experiments /srv/old falsefalse"
    assert redact(kept) == kept


def test_the_json_writer_masks_secret_query_values(tmp_path):
    """What `write_json_atomic` writes (manifests, `profile.json`): the model spec's
    `api_key_v2` and `X-Amz-Signature` values masked, by the rule, not by memory."""
    from mindprobe.core.store import write_json_atomic

    spec = "openai:m@http://h:1/v1?api_key_v2=Unseen41KeyValue&X-Amz-Signature=Unseen41Sig&v=1"
    write_json_atomic(tmp_path / "profile.json", {"model": spec, "command": f"--model {spec}"})
    text = (tmp_path / "profile.json").read_text()
    assert "Unseen41" not in text and text.count("api_key_v2=***&X-Amz-Signature=***&v=1") == 2
