"""`export --format inspect`'s fast path: samples and summaries made as plain JSON data,
members compressed by one reused zstd context, `summaries.json` streamed from a spool. What
it writes must be what inspect_ai's own models and writer make of the same run: byte for byte
per sample (message ids aside, which are random), and read back alike by `read_eval_log`."""

from __future__ import annotations

import copy
import json
import zipfile

import pytest

log = pytest.importorskip("inspect_ai.log", reason="needs inspect_ai (pip install "
                          "'mindprobe[inspect]')")

from inspect_ai._util.json import jsonable_python, to_json_safe  # noqa: E402

from mindprobe.registry import get_benchmark  # noqa: E402
from mindprobe.report import inspect_data, inspect_log, inspect_stream  # noqa: E402
from mindprobe.report.inspect_data import blank_message_ids, sample_json, to_bytes  # noqa: E402

MODEL = "mindprobe/test-model"


def _records(run_dir):
    return [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]


def _variants(rec):
    """The shapes a record takes beyond a plain WorldSense trial."""
    long = "word " * 1500  # over the summary's 5,120 characters
    out = []
    r = copy.deepcopy(rec)
    r["error"] = "HTTP 500: the server failed"
    out.append(r)
    r = copy.deepcopy(rec)
    r["request"]["messages"] = [{"role": "system", "content": "be brief"},
                                {"role": "user", "content": long}]
    r["note"] = "  spaced\tout\n text  "          # whitespace thinned in the summary
    r["essay"] = "x" * 2000                      # a long text shortened there
    r["big"] = list(range(600))                  # a value over 1k removed there
    r["nested"] = {"a": [1, 2.5, None], "b": "ünïcødé ✓"}
    r["nothing"] = None
    r["flag"] = False
    out.append(r)
    r = copy.deepcopy(rec)
    r["request"] = [{"messages": [{"role": "user", "content": ["Is it ", {"sha256": "ab" * 32}]}],
                     "params": {}, "reply": "maybe"},
                    {"history": 2, "messages": [{"role": "user", "content": "Only TRUE."}],
                     "params": {}, "reply": "TRUE"}]
    r["reply"] = "TRUE"
    out.append(r)
    r = {k: v for k, v in rec.items() if k not in ("request", "reply")}
    r["raw"] = "an old record's reply"
    out.append(r)
    r = {k: v for k, v in rec.items() if k not in ("request", "reply")}  # no exchange at all
    out.append(r)
    return out


def _same(bench, rec, texts):
    ref = inspect_log.sample(bench, rec, MODEL, texts)
    made, summary = sample_json(inspect_log.parts(bench, rec, texts), str(rec["id"]), MODEL)
    assert to_bytes(blank_message_ids(made)) == to_json_safe(
        blank_message_ids(jsonable_python(ref)), indent=None), rec["id"]
    assert to_bytes(blank_message_ids(summary)) == to_json_safe(
        blank_message_ids(jsonable_python(ref.summary())), indent=None), rec["id"]
    ids = [m["id"] for m in made["messages"]] + [made["output"]["choices"][0]["message"]["id"]]
    assert len(set(ids)) == len(ids) and all(len(i) == 22 for i in ids)  # inspect's own kind


def test_plain_samples_are_inspects_own_json(report_runs):
    """Every record of every benchmark's runs, and the other shapes a record takes: the
    sample and its summary serialise to the bytes inspect_ai's models serialise to."""
    texts = {"ab" * 32: "LONG " * 300}
    for run_dir in report_runs.dirs.values():
        manifest = json.loads((run_dir / "manifest.json").read_text())
        bench = get_benchmark(manifest["benchmark"])
        records = _records(run_dir)
        for rec in records:
            _same(bench, rec, texts)
        if manifest["benchmark"] == "worldsense":
            for rec in _variants(records[0]):
                _same(bench, rec, texts)


@pytest.mark.parametrize("text", [
    "", "short", "a b", "a  b", " lead", "trail ", "tab\there", "new\nline", "nb\u00a0sp",
    "x" * 1024, "x" * 1025, "y " * 512, "y " * 511 + "y", "\u2003em", "ünï ✓"])
def test_thinning_as_inspect_thins(text):
    from inspect_ai.log._util import thin_metadata, thin_text

    assert inspect_data.thin_text(text) == thin_text(text)
    meta = {"t": text, "n": 3, "f": 0.5, "l": [text] * 3, "big": [text] * 400, "d": {"k": text}}
    assert inspect_data.thin_metadata(meta) == thin_metadata(meta)
    assert list(inspect_data.thin_metadata(meta)) == list(meta)


def _plain(sample):
    return blank_message_ids(sample.model_dump(mode="json", exclude_none=True))


@pytest.mark.slow
def test_eval_equals_inspects_write_eval_log(cli, report_runs, tmp_path):
    """The streamed `.eval` against the same run written whole by inspect_ai's
    `write_eval_log` (`--out x.json`): every sample equal, field by field; the summaries and
    the header alike; every member zstd-compressed, as inspect_ai writes them."""
    for run_dir in report_runs.dirs.values():
        fast, ref = tmp_path / "fast.eval", tmp_path / "ref.json"
        for out in (fast, ref):
            code, _, err = cli("export", "--format", "inspect", "--run", run_dir, "--out", out,
                               "--force")
            assert code == 0, err
        got, want = log.read_eval_log(str(fast)), log.read_eval_log(str(ref))
        assert len(got.samples) == len(want.samples) == len(_records(run_dir))
        for a, b in zip(got.samples, want.samples, strict=True):
            assert _plain(a) == _plain(b)
        sums = log.read_eval_log_sample_summaries(str(fast))
        assert ({s.id: _plain(s) for s in sums}
                == {s.id: _plain(s.summary()) for s in want.samples})
        for field in ("status", "results", "stats", "plan"):
            assert getattr(got, field) == getattr(want, field), field
        spec = {"eval_id", "run_id", "created"}
        assert got.eval.model_dump(exclude=spec) == want.eval.model_dump(exclude=spec)
        with zipfile.ZipFile(fast) as z:
            infos = z.infolist()
            assert {i.compress_type for i in infos} == {zipfile.ZIP_ZSTANDARD}
            names = {i.filename for i in infos}
            assert {f"samples/{s.id}_epoch_1.json" for s in want.samples} < names
            assert {"header.json", "summaries.json", "_journal/start.json"} < names
            stored = {s["id"]: s for s in json.loads(z.read("summaries.json"))}
            assert stored == {s.id: json.loads(to_json_safe(s.summary(), indent=None))
                              for s in got.samples}
        one = log.read_eval_log_sample(str(fast), id=want.samples[0].id, epoch=1)
        assert _plain(one) == _plain(want.samples[0])


def _big_run(report_runs, tmp_path, n):
    src = report_runs.of("worldsense")[0]
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text((src / "manifest.json").read_text())
    seed = _records(src)
    with open(run / "records.jsonl", "w") as f:
        for i in range(n):
            k, r = divmod(i, len(seed))
            rec = dict(seed[r])
            rec["Key"] = rec["Key"] ^ (k << 56)
            rec["id"], rec["tuple_ID"] = str(rec["Key"]), f"{rec['tuple_ID']}#{k}"
            f.write(json.dumps(rec) + "\n")
    return run


@pytest.mark.slow
def test_export_is_linear_in_the_records(cli, report_runs, tmp_path, monkeypatch):
    """Each sample is written without a search over the samples before it: inspect_ai's own
    `write_eval_log` compares every sample's key with every earlier one's (1,200 records:
    ~720,000 comparisons; a full WorldSense run of 87,048 never finished). The keys built
    stay a few per record, and every sample is in the log, each once."""
    from inspect_ai.log._recorders import eval as recorder

    n = 1200
    run = _big_run(report_runs, tmp_path, n)
    built = []

    class Counted(recorder.SampleRecordKey):
        def __new__(cls, *args):
            built.append(1)
            return super().__new__(cls, *args)

    monkeypatch.setattr(recorder, "SampleRecordKey", Counted)
    out = tmp_path / "big.eval"
    code, _, err = cli("export", "--format", "inspect", "--run", run, "--out", out)
    assert code == 0, err
    assert len(built) < 5 * n
    got = log.read_eval_log(str(out))
    assert sorted(s.id for s in got.samples) == sorted(str(r["id"]) for r in _records(run))
    assert len(log.read_eval_log_sample_summaries(str(out))) == n


def test_one_zstd_context_not_a_pool_per_sample(cli, report_runs, tmp_path, monkeypatch):
    """inspect_ai's compressor makes a 12-thread zstd context for every member (0.6 ms of a
    small sample's 1.6); the export makes one, single-threaded, and gives zipfile its own
    compressor back after."""
    import zstandard

    run = _big_run(report_runs, tmp_path, 300)
    made = []

    real = zstandard.ZstdCompressor

    def counted(*args, **kwargs):
        made.append(kwargs.get("threads", 0))
        return real(*args, **kwargs)

    monkeypatch.setattr(zstandard, "ZstdCompressor", counted)
    before = zipfile._get_compressor
    out = tmp_path / "z.eval"
    code, _, err = cli("export", "--format", "inspect", "--run", run, "--out", out)
    assert code == 0, err
    assert zipfile._get_compressor is before
    assert len(made) < 5 and made.count(0) == 1, made[:20]  # one, single-threaded
    assert len(log.read_eval_log(str(out)).samples) == 300


def test_samples_inspect_would_make_otherwise_come_from_its_models(cli, report_runs, tmp_path,
                                                                    monkeypatch):
    """The first record of each batch is made both ways; where the two differ (an inspect_ai
    whose models changed), the export makes the samples with inspect_ai's models."""
    run = _big_run(report_runs, tmp_path, 40)
    plain = inspect_data.sample_json

    def drifted(p, sample_id, model):
        sample, summary = plain(p, sample_id, model)
        return {**sample, "target": "drifted"}, summary

    monkeypatch.setattr(inspect_data, "sample_json", drifted)
    out = tmp_path / "d.eval"
    code, _, err = cli("export", "--format", "inspect", "--run", run, "--out", out)
    assert code == 0, err
    got = log.read_eval_log(str(out))
    assert len(got.samples) == 40 and all(s.target != "drifted" for s in got.samples)


def test_without_the_recorder_internals(cli, report_runs, tmp_path, monkeypatch):
    """An inspect_ai without the recorder internals the direct write uses: the samples go
    through its public `log_sample`, and the log is the same."""
    run = _big_run(report_runs, tmp_path, 30)
    monkeypatch.setattr(inspect_stream, "_zip_log", lambda recorder, spec: None)
    out = tmp_path / "p.eval"
    code, _, err = cli("export", "--format", "inspect", "--run", run, "--out", out)
    assert code == 0, err
    got = log.read_eval_log(str(out))
    assert sorted(s.id for s in got.samples) == sorted(str(r["id"]) for r in _records(run))
    assert len(log.read_eval_log_sample_summaries(str(out))) == 30


def test_summaries_spool_is_one_json_list(tmp_path):
    """Batches' journal lists joined into the one list `summaries.json` holds, empty ones
    and an empty run included."""
    for batches, want in (([], []), ([b"[]"], []), ([b'[{"a":1}]', b"[]", b'[{"b":2},3]'],
                                                      [{"a": 1}, {"b": 2}, 3])):
        with open(tmp_path / "spool", "w+b") as spool:
            s = inspect_stream.Summaries(spool)
            for b in batches:
                s.add(b)
            with zipfile.ZipFile(tmp_path / "s.zip", "w") as z:
                s.write_member(z, "summaries.json")
            with zipfile.ZipFile(tmp_path / "s.zip") as z:
                assert json.loads(z.read("summaries.json")) == want


#: Runs `inspect view`'s own zstd decoder (its web worker, fzstd) over members given as
#: {"data": base64, "size": n}, printing each one's decompressed bytes as base64.
VIEWER_DECODE_JS = r"""
const fs = require("fs"), vm = require("vm");
let handler = null, out = [];
const self = {addEventListener: (_, fn) => { handler = fn; }, postMessage: (m) => out.push(m)};
vm.runInNewContext(fs.readFileSync(process.argv[2], "utf8"), {self, Uint8Array, ArrayBuffer,
  Uint16Array, Int16Array, Int32Array, Uint32Array, Error, Math, Array, Object, console});
const members = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const res = members.map((m, i) => {
  handler({data: {type: "decompress", requestId: i, method: "zstd", expectedSize: m.size,
                  data: new Uint8Array(Buffer.from(m.data, "base64"))}});
  const r = out.pop();
  return r.success ? Buffer.from(r.data).toString("base64") : "ERROR: " + r.error;
});
process.stdout.write(JSON.stringify(res));
"""


def _viewer_worker():
    import shutil
    from pathlib import Path

    import inspect_ai

    worker = (Path(inspect_ai.__file__).parent / "_view" / "dist" / "assets"
              / "decompression.worker.js")
    return (shutil.which("node"), worker) if worker.is_file() else (None, worker)


def test_inspect_views_own_decoder_reads_every_member(cli, report_runs, tmp_path):
    """The members' zstd frames (one reused single-thread context) are read by the decoder
    `inspect view` runs in the browser (fzstd, from inspect_ai's own bundle), run by node."""
    import base64
    import subprocess

    node, worker = _viewer_worker()
    if node is None:
        pytest.skip(f"needs node and inspect view's {worker.name}")
    run = _big_run(report_runs, tmp_path, 50)
    out = tmp_path / "v.eval"
    code, _, err = cli("export", "--format", "inspect", "--run", run, "--out", out)
    assert code == 0, err
    members, want = [], []
    with zipfile.ZipFile(out) as z, open(out, "rb") as raw:
        for info in z.infolist():
            raw.seek(info.header_offset + 26)
            name_len, extra_len = int.from_bytes(raw.read(2), "little"), int.from_bytes(
                raw.read(2), "little")
            raw.seek(info.header_offset + 30 + name_len + extra_len)
            members.append({"data": base64.b64encode(raw.read(info.compress_size)).decode(),
                            "size": info.file_size})
            want.append(z.read(info))
    (tmp_path / "members.json").write_text(json.dumps(members))
    script = tmp_path / "decode.js"
    script.write_text(VIEWER_DECODE_JS)
    done = subprocess.run([node, str(script), str(worker), str(tmp_path / "members.json")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert len(got) == len(want) > 50
    assert [base64.b64decode(g) if not g.startswith("ERROR") else g for g in got] == want


def test_the_one_context_is_this_threads_alone(monkeypatch):
    """Inside `one_thread_zstd`, members written one after another share one context; two
    members open at once get one each (each decodes to its own bytes); another thread gets
    zipfile's compressor as it was, and so does a level given."""
    import threading

    import zstandard

    made = []
    real = zstandard.ZstdCompressor

    def counted(*args, **kwargs):
        made.append((threading.current_thread().name, kwargs.get("threads", 0)))
        return real(*args, **kwargs)

    def roundtrip(c, data):
        return zstandard.ZstdDecompressor().decompressobj().decompress(
            c.compress(data) + c.flush())

    monkeypatch.setattr(zstandard, "ZstdCompressor", counted)
    zstd = zipfile.ZIP_ZSTANDARD
    a, b = b"a" * 5000 + b"tail", b"b" * 7000
    with inspect_stream.one_thread_zstd():
        for _ in range(3):
            assert roundtrip(zipfile._get_compressor(zstd), a) == a
        assert made == [("MainThread", 0)]
        one, two = zipfile._get_compressor(zstd), zipfile._get_compressor(zstd)
        half = one.compress(a[:2500])
        rest = two.compress(b) + two.flush()
        assert zstandard.ZstdDecompressor().decompressobj().decompress(
            half + one.compress(a[2500:]) + one.flush()) == a
        assert zstandard.ZstdDecompressor().decompressobj().decompress(rest) == b
        assert made == [("MainThread", 0), ("MainThread", 0)]
        other = threading.Thread(target=zipfile._get_compressor, args=(zstd,), name="other")
        other.start()
        other.join()
        zipfile._get_compressor(zstd, 7)
    assert made[2:] == [("other", 12), ("MainThread", 12)]  # inspect_ai's compressor
