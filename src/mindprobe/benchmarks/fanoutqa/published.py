"""FanOutQA's published results: upstream's leaderboard submissions at the pinned commit
(`leaderboard-submissions/results/*.json`, 16 systems), loaded as data: every metric of every
setting, with the system's metadata. They were scored by upstream on the test split with
hidden answers of the November 2023 release (724 graded questions), so beside a run they are
levels on other questions, never a paired comparison."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mindprobe.core.data import DataFile
from mindprobe.core.published import PublishedRow, pinned_file
from mindprobe.errors import DataError

from .upstream import BENCHMARK, LEGACY_VERSION, UPSTREAM_COMMIT, UPSTREAM_REPO

FOLDER = "leaderboard/results/"
UPSTREAM_FOLDER = "leaderboard-submissions/results/"
#: (git blob id, sha256) of each submission at UPSTREAM_COMMIT (shared/data/fanoutqa/SOURCE.md).
PINS = {
    "claude-3": ("2187ae3a960c9c5313256ad18ae3d9f9ac1062ba",
                 "378629db4a6912ed89e894489d84b96d40425320fa165f5f77fb780b9755187e"),
    "claude": ("c69536a011d91fb38044b6a2367c1b871754c800",
               "3f62e04e87828cf0bd7cb7f815c89869c25cf8b504443f67656d3452312ac1c9"),
    "gemma-7b-it": ("c403d5e39fc86159ff05bcda1b583f64041de968",
                    "827cfcd37bd3580a90c614fd030287acaace049df44f06acea6e5f7bef990a70"),
    "gpt-3.5-turbo": ("bbda945d53397faa54cf9ac2ab7851cd38836648",
                      "727bdd93f31e9588bfbdc3f7ce6bbee7db55dc921815d85f9c616dfdfde090d6"),
    "gpt-4-turbo": ("f8372ba24bb40bf6b7abff7d9e725dfa648bb5a9",
                    "492ef1fc7f4158a45cd1826cb907bb569a28a2e128a4be3e1625b2e862841f80"),
    "gpt-4": ("51342926c5d6208a620aeca15b450f9634a63f29",
              "b561d6d3f4ae3fc34fd4e6b2217be42f58dfb44360b8a8fcb32f606070ea510c"),
    "gpt-4o": ("3b2d60ab8f79d176e5dce483a01f2abb006eab59",
               "aa248046b18a05efb57aad13ef1a540ac045f50fe8c0a7430d4897e67633edad"),
    "gpt-oss-120b": ("06b4f4f693f8c858d2e45c5957e2610a959a91c9",
                     "99ea5298176f3323d7673b4471ad73d379a5b21d964a3f286ecf40224d81bc26"),
    "gpt-oss-20b": ("d82c43c8dfd0cd095006b5e0691ac16d4338654b",
                    "9ca39ff23b0d01ad381c081b7948e534b2560246e7534d74112e3627b45971fd"),
    "llama-3": ("3ba9249fc56d46775a206782b83452eeed75667e",
                "af57b602186ec64a1001e8bcc24d83758f11ef8ec127c23f2e8c7bec7c2faf87"),
    "llama-chat": ("bfb54c1aea53b92890d5a02abbb72bbaf8bf820a",
                   "82f7c64378d97cc5c253d7824070ff06ddb0421e30e71e39faa0c9137c469fab"),
    "llama33_70b_distill_ds_32k": (
        "d7c916b9d26b16f84369629d65f4b9b936ec85eb",
        "1b3c76d2a9977704508fe58ea42000c7df00b5690a653121be1d4c7787a7d040"),
    "mistral-chat": ("454850b501428d0d1d590498fd43348bdc50f526",
                     "0fb6196df89c70c39a7146d45d6997d1028b8af233a281b1bcd3cce90751a049"),
    "mistral-large-2407": ("98d58009ad97727fe1c736de47c8465b7b6b82e9",
                           "4595e1702cf625f9721dfb5c5c3431618f445e2a5034ff25407d8a9984f384d9"),
    "mistral-small-2409": ("2f891f5b8db5a41964af6b578132b82d083a2eb5",
                           "94bafd790ae3f269a5e9255d32beeeae1839746384fbb35745a490a8932debd8"),
    "mixtral": ("7d5a9d9dcb7f3565dd58d487bf0d58ea306a6def",
                "84b7cdba26839d444242a96993e31f65b5b7cc4f45cb6376702dc5e87a6c129a"),
}
RAW = f"https://raw.githubusercontent.com/{UPSTREAM_REPO}/{UPSTREAM_COMMIT}/{UPSTREAM_FOLDER}"
DATA_FILES = [DataFile(f"{FOLDER}{name}.json", url=f"{RAW}{name}.json", sha256=sha,
                       git_blob=blob) for name, (blob, sha) in PINS.items()]
SETTINGS = ("closedbook", "openbook", "evidenceprovided")
SPLIT, N_GRADED = "test", 724
DATA_LABEL = "test split, Nov 2023 release, hidden answers"
#: The leaderboard's GPT judge: gpt-4-0613, then gpt-4o-2024-11-20 for entries added after
#: 2025-02-28. A submission's metadata carries no date; its citation's year does (the entries
#: citing 2025 are the ones added after the change).
JUDGES = ("gpt-4-0613", "gpt-4o-2024-11-20")
JUDGE_CHANGE_YEAR = 2025
#: Upstream's metric keys -> (short label, one sentence; our words, upstream's numbers).
METRICS = {
    "acc.loose": ("loose", "Mean share of the reference answer's parts found in the answer "
                  "(the paper's primary metric)."),
    "acc.strict": ("strict", "Share of answers holding every part of the reference answer."),
    "bleurt": ("bleurt", "Mean BLEURT score of the answer against the reference."),
    "gpt": ("gpt", "Share of answers the GPT judge finds equivalent to the reference."),
}
_ROUGE = {"precision": ("P", "precision"), "recall": ("R", "recall"), "fscore": ("F", "F1")}
for _r, _name in (("rouge1", "R1"), ("rouge2", "R2"), ("rougeL", "RL")):
    for _k, (_short, _word) in _ROUGE.items():
        METRICS[f"rouge.{_r}.{_k}"] = (f"{_name}-{_short}", f"ROUGE-{_r[5:]} {_word} of the "
                                       "answer against the reference.")


#: What a run's Results call the leaderboard's metrics.
RUN_METRIC = {"acc.loose": "loose accuracy"}


def judge_of(meta: dict[str, Any]) -> str:
    """The GPT judge that scored a submission, from the year its metadata cites."""
    years = [int(y) for y in re.findall(r"\b(20\d\d)\b", str(meta.get("citation") or ""))]
    return JUDGES[1] if years and max(years) >= JUDGE_CHANGE_YEAR else JUDGES[0]


def _flat(doc: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def submission_rows(name: str, doc: dict[str, Any], where: str) -> list[PublishedRow]:
    """Every number of one submission file, one row per setting and metric."""
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise DataError(f"{where}: no metadata.name; is it a leaderboard results file?")
    judge = judge_of(meta)
    rows = []
    for setting in SETTINGS:
        scores = doc.get(setting)
        if scores is None:
            continue
        for metric, value in _flat(scores).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise DataError(f"{where}: {setting}.{metric} is {value!r}, not a number")
            label, definition = METRICS.get(metric, (metric, metric))
            rows.append(PublishedRow(
                BENCHMARK, str(meta["name"]), metric, repr(value), {"setting": setting},
                SPLIT, LEGACY_VERSION, definition,
                f"{UPSTREAM_REPO}@{UPSTREAM_COMMIT}:{UPSTREAM_FOLDER}{name}.json",
                judge=judge if metric == "gpt" else None,
                unit="score" if metric == "bleurt" else "fraction",
                percent=metric != "bleurt", n=N_GRADED, headline=metric == "acc.loose",
                data_label=DATA_LABEL, label=label, run_metric=RUN_METRIC.get(metric, ""),
                extra={"details": meta.get("details"), "type": meta.get("type"),
                       "authors": meta.get("authors"), "context": meta.get("context")}))
    return rows


def published(dirs: Sequence[Path]) -> list[PublishedRow]:
    """The 16 leaderboard submissions, from the first data folder holding them (verified)."""
    rows = []
    for spec in DATA_FILES:
        path = pinned_file(BENCHMARK, DATA_FILES, spec.relpath, dirs)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DataError(f"{path.name}: not JSON ({exc})") from None
        rows += submission_rows(Path(spec.relpath).stem, doc, f"{BENCHMARK}:{spec.relpath}")
    return rows
