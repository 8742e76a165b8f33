"""The WorldSense sets: official files (pinned URL + sha256) and the generated `fresh` set."""

from __future__ import annotations

from typing import Any

from mindprobe.core.data import DataFile

# Pinned upstream commit (shared/data/worldsense/SOURCE.md); files are verified by sha256.
REPO = "facebookresearch/worldsense"
COMMIT = "bd81d945077f169cf95ff39207f788f86e4645e9"
#: The data's folder in the upstream repository.
UPSTREAM_DATA = "data/worldsense/"
_BASE = f"https://raw.githubusercontent.com/{REPO}/{COMMIT}/{UPSTREAM_DATA}"

_OFFICIAL: list[tuple[str, str]] = [
    ("test_set/trials.jsonl.bz2",
     "00c94031fc435c5f13156d57fcf61dace875d5e7fa4c218a40029a2eb0f3deb9"),
    ("test_set/results/basic___GPT3.5___results.jsonl",
     "a906d9aca06f27cf24e664d2ebde12bea53bd6c7e2f079a55dd320c40e35309c"),
    ("test_set/results/basic___GPT4___results.jsonl",
     "cf004ad96998d2629cef95e10f3fd16a5163c7a5ac34a26ff45e1b309d141da0"),
    ("test_set/results/basic___Llama2-FT+1M___results.jsonl",
     "64f6ee8bbf469b4ab03b13ba7a6edc970e008bf2b0678ce2bedab8b6731d7ad9"),
    ("test_set/results/basic___Llama2-chat___results.jsonl",
     "c23a24d49f77e280a512902d354552955bb6afe4cf859587f1ce3ee62d41cbfd"),
    ("training_set/trials_10k.jsonl.bz2",
     "b9e4148e4786c07d647298dec1e175e2a9e1705ae65721732f73fe8fb3c3baa1"),
    ("training_set/trials_100k.jsonl.bz2",
     "e5c0552b2f09e8e1df239e49153bae4370e677d69c1e52a0cfbf864a6bac62a6"),
]
_OTHER = {
    "memorisation": ("b1a22ff81903c9d6b5f30e1ab314fdb4f7cae02ba966d2ea59c8c5923af44937", {
        "Llama2-FT+0": "283d1599069d05e81b3d1fa7e6f5e08503e23bbb95d2fb0dbd13ca6736992f44",
        "Llama2-FT+1M": "7728b81584c16a1fd5a05ffe38df4005935beb4189c9bca3dc6adaac4a40fe45",
        "Llama2-chat": "581c924326ee38ad7ea46a9a7c51b9e28a61a247c5fa5cae61770c51f735ac2d"}),
    "ood-size": ("ec93c6a69c4ac42ed0af566ef24dfd2b63b407b839bb3e5025f70fda11b4a47d", {
        "Llama2-FT+0": "83f3b827a8e33964205af8e908596b05cddbb6d7b65a27bdf74ef08c78221fad",
        "Llama2-FT+1M": "2a95b1607e783b766eabe391ff9d757c8dd017a948a0106d04b5d14e113fd0d1",
        "Llama2-chat": "df103e320077c9f5a2e0ffd4a432805437751ca40805c682b74f62a140e781b5"}),
    "ood-query": ("d3d481ab53de0403251a873fe8cbf7cdb08ae727fc7f43107b4ac4008c488327", {
        "Llama2-FT+0": "552aa77478cab1b055ba4b2ba12208055e182348b7d5f01165edefa46114f77a",
        "Llama2-FT+1M": "4418ef819e5e974653b30922a1ce7862629074bc7a90742d9ef1e1d3aa9b13d3",
        "Llama2-chat": "2954ea162a5dd715660d830571ebddffbee80970a33a9b85f8953fb2ae617b66"}),
    "ood-problem": ("0eac077d9b7b830e2dc46cea86d11175fc53d241c981a0ec92b52f294b59332b", {
        "Llama2-FT+0": "ec51cd3caf8f1e282d390ffb30466baad838725daba69b1d5263aeb6334cb981",
        "Llama2-FT+1M": "043bab2e0a2b029e5a41c50b8ca9226daac55dc227f2bfb5146cfab597f25b24",
        "Llama2-chat": "0e57f7884726ee5dd735d787f8fb944bc49066d98116d9822f345ff59e3d7c48"}),
}
for _name, (_trials_sha, _results) in _OTHER.items():
    _OFFICIAL.append((f"other_tests/{_name}/trials.jsonl.bz2", _trials_sha))
    for _model, _sha in _results.items():
        _OFFICIAL.append((f"other_tests/{_name}/results/basic___{_model}___results.jsonl", _sha))

DATA_FILES: list[DataFile] = [
    DataFile(rel, url=_BASE + rel.replace("+", "%2B"), sha256=sha) for rel, sha in _OFFICIAL
]
# 38 MB and no published sha256: fetched only with `data fetch worldsense --all`.
DATA_FILES.append(DataFile(
    "training_set/trials_1M.jsonl.bz2",
    url="http://dl.fbaipublicfiles.com/worldsense/trials_1M.jsonl.bz2", optional=True,
))

TRIALS_PATH = {
    "test_set": "test_set/trials.jsonl.bz2",
    **{name: f"other_tests/{name}/trials.jsonl.bz2" for name in _OTHER},
}
_SHA = {f.relpath: f.sha256 for f in DATA_FILES}

#: Default seed and size of the generated `fresh` set (the offline default).
FRESH_SEED = 0
FRESH_TUPLES_PER_CELL = 12


def sha256_of(relpath: str) -> str | None:
    return _SHA.get(relpath)


def fresh_trials(seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The generated set used by `worldsense:fresh`, gold already plain (not obfuscated)."""
    from mindprobe.benchmarks.worldsense.generate import (
        STANDARD_PROBLEMS,
        deobfuscate,
        generate_trials,
    )

    trials = generate_trials(seed, FRESH_TUPLES_PER_CELL, sizes=(3, 4, 5), problems=STANDARD_PROBLEMS)
    out = []
    for t in trials:
        t = dict(t)
        t["goldresp"] = deobfuscate(t.pop("goldresp_obfusc"))
        out.append(t)
    info = {"generator": "mindprobe.worldsense", "seed": seed,
            "tuples_per_cell": FRESH_TUPLES_PER_CELL, "trials": len(out)}
    return out, info
