"""Where `--log-to` sends results, checked before a single item runs: a tracker that cannot
take the results (an unknown scheme, a server that does not answer, a SQLite file that cannot
be written, W&B without a login) is one message and exit 2 up front, never a warning after an
hour of work. A URL's credentials are split off here (MLflow takes them from
MLFLOW_TRACKING_USERNAME/PASSWORD, never in the URI) and remembered, so every text shown or
written masks them."""

from __future__ import annotations

import base64
import importlib.util
import os
import sqlite3
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from mindprobe.core.files import probe_writable
from mindprobe.core.secrets import redact, remember
from mindprobe.errors import UsageError

KINDS = ("mlflow", "wandb")
#: Tracking URI schemes MLflow's client takes (SQLAlchemy's databases with any driver, as
#: `postgresql+psycopg2`); a folder store (`file:`, a plain path) only with
#: MLFLOW_ALLOW_FILE_STORE=true, as MLflow 3 itself requires.
MLFLOW_SCHEMES = ("http", "https", "sqlite", "postgresql", "mysql", "mssql", "databricks",
                  "databricks-uc", "uc", "file", "")
#: Characters W&B refuses in a project name.
_WANDB_BAD = set("/\\#?%:")
MLFLOW_MISSING = "--log-to mlflow needs MLflow's client: pip install 'mindprobe[mlflow]'"
#: Seconds a tracker server has to answer its health check.
HEALTH_TIMEOUT = 10.0
#: Seconds a SQLite store may stay locked by another writer before it counts as unwritable.
SQLITE_TIMEOUT = 2.0


@dataclass(frozen=True)
class Target:
    """One tracker: `mlflow` with a tracking URI, or `wandb` with a project (None: default)."""

    kind: str
    where: str | None = None

    @property
    def uri(self) -> str | None:
        """The tracking URI without its userinfo (credentials go by environment)."""
        if not self.where or "://" not in self.where:
            return self.where
        scheme, _, rest = self.where.partition("://")
        netloc, sep, path = rest.partition("/")
        if "@" not in netloc:
            return self.where  # as given: `sqlite:///x.db` keeps its three slashes
        return f"{scheme}://{netloc.rpartition('@')[2]}{sep}{path}"

    @property
    def credentials(self) -> tuple[str | None, str | None]:
        """(user, password) from the URI's userinfo, decoded; (None, None) without one."""
        if not self.where or "://" not in self.where:
            return None, None
        parts = urlsplit(self.where)
        if parts.username is None:
            return None, None
        return unquote(parts.username), None if parts.password is None else unquote(
            parts.password)

    @property
    def key(self) -> str:
        """How the manifest names it: the kind and its place, credentials left out (userinfo)
        or masked (a key-like query value)."""
        where = self.uri or ""
        return redact(f"{self.kind}:{where}" if where else self.kind)

    @property
    def to(self) -> str:
        """`--to WHERE` of the export command that logs a run here later (masked)."""
        return f" --to {redact(self.uri)}" if self.uri else ""


def parse_target(text: str) -> Target:
    """`mlflow`, `mlflow:URI`, `wandb` or `wandb:PROJECT`; a URI's secrets are remembered."""
    kind, _, where = text.partition(":")
    if kind not in KINDS or (where == "" and text.endswith(":")):
        raise UsageError(f"--log-to {redact(text)!r}: use mlflow[:TRACKING_URI] or "
                         "wandb[:PROJECT]")
    target = Target(kind, where or None)
    user, password = target.credentials
    remember(password, *((user,) if password is None else ()))
    if where and "://" in where:
        from mindprobe.core.secrets import split_credentials

        split_credentials(where)  # key-like query values: remembered for redact
    return target


def check_target(target: Target) -> None:
    """Raise one UsageError (exit 2) if the tracker cannot take results; run before the run."""
    if target.kind == "wandb":
        _check_wandb(target)
        return
    if importlib.util.find_spec("mlflow") is None:
        raise UsageError(MLFLOW_MISSING)
    uri = target.uri or os.environ.get("MLFLOW_TRACKING_URI") or _mlflow_default()
    head, sep, _ = uri.partition(":")
    scheme = head.lower().split("+")[0] if sep else (
        uri.lower() if uri.lower() in ("databricks", "databricks-uc", "uc") else "")
    name = f"--log-to mlflow:{redact(uri)} cannot be used:"
    if scheme not in MLFLOW_SCHEMES:
        raise UsageError(f"{name} MLflow cannot track to a {scheme}: URI; use http(s)://HOST"
                         "[:PORT] (a tracking server), sqlite:///FILE.db (no server), or a "
                         "database URI (postgresql://, mysql://, mssql://), or databricks")
    if scheme in ("file", ""):
        if os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() not in ("1", "true", "yes"):
            raise UsageError(f"{name} MLflow 3 refuses a folder store; use "
                             "sqlite:///FILE.db (no server needed), or set "
                             "MLFLOW_ALLOW_FILE_STORE=true to keep the folder store")
    elif scheme == "sqlite":
        _check_sqlite(name, uri)
    elif scheme in ("http", "https"):
        why = unreachable(target.uri or uri, target.credentials)
        if why:
            raise UsageError(f"{name} the MLflow server does not answer ({redact(why)}); "
                             "start it or fix the URI, or leave out --log-to and log the run "
                             "later with `mindprobe export --format mlflow --run DIR --to URI`")


def _mlflow_default() -> str:
    import mlflow

    return str(mlflow.get_tracking_uri())


def sqlite_path(uri: str) -> Path | None:
    """The file of a `sqlite:///PATH` URI (SQLAlchemy's rule: three slashes and a relative
    path, four for an absolute one); None for an in-memory store."""
    rest = uri.split(":", 1)[1]
    if not rest.startswith("///"):
        return None
    path = rest[3:].split("?", 1)[0]
    return None if path in ("", ":memory:") else Path(unquote(path))


def _check_sqlite(name: str, uri: str) -> None:
    path = sqlite_path(uri)
    if path is None:
        raise UsageError(f"{name} an in-memory SQLite store keeps nothing once mindprobe "
                         "exits; give a file, sqlite:///FILE.db")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"{name} the folder {parent} of the SQLite store does not exist "
                         f"(mindprobe creates no folders for it): create it with mkdir -p "
                         f"{parent}, or fix the path (sqlite:///RELATIVE.db, "
                         "sqlite:////ABSOLUTE.db with four slashes)")
    if path.is_dir():
        raise UsageError(f"{name} {path} is a folder; give the SQLite file inside it, e.g. "
                         f"sqlite:///{path}/mlflow.db")
    try:
        if path.exists():
            con = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=SQLITE_TIMEOUT)
            try:
                con.execute("PRAGMA schema_version")
                con.execute("BEGIN IMMEDIATE")
                con.rollback()
            finally:
                con.close()
        else:
            probe_writable(parent)
    except (sqlite3.Error, OSError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"{name} the SQLite store {path} is not writable ({why}); give a "
                         "writable file, or stop whatever holds it locked") from None


def unreachable(uri: str, credentials: tuple[str | None, str | None]) -> str | None:
    """Why the MLflow server at `uri` does not answer its health check (None: it does)."""
    request = urllib.request.Request(uri.rstrip("/") + "/health")
    user, password = credentials
    if user is not None:
        token = base64.b64encode(f"{user}:{password or ''}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=HEALTH_TIMEOUT):
            return None
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return f"HTTP {exc.code}: the server refused these credentials"
        return None  # it answered: a server behind a proxy may not serve /health
    except (OSError, ValueError) as exc:
        return str(getattr(exc, "reason", None) or exc)


def _check_wandb(target: Target) -> None:
    try:
        import wandb  # noqa: F401
    except ImportError:
        raise UsageError("--log-to wandb needs W&B's client: pip install "
                         "'mindprobe[wandb]'") from None
    project = target.where
    if project is not None and (_WANDB_BAD & set(project) or len(project) > 128):
        raise UsageError(f"--log-to wandb:{redact(project)}: not a W&B project name (at most "
                         "128 characters, none of / \\ # ? % :)")
    mode = os.environ.get("WANDB_MODE", "").lower()
    if mode in ("offline", "disabled", "dryrun") or os.environ.get("WANDB_API_KEY"):
        return
    if _wandb_netrc_key() is None:
        raise UsageError("--log-to wandb: no W&B login (WANDB_API_KEY is not set and "
                         "`wandb login` was not run); log in, or set WANDB_MODE=offline to "
                         "write the run to files for a later `wandb sync`")


def _wandb_netrc_key() -> str | None:
    """The API key `wandb login` stored for the W&B host (its own reader), or "" where this
    W&B version offers no reader (then W&B itself decides)."""
    try:
        from wandb.sdk.lib.wbauth.wbnetrc import read_netrc_auth
    except ImportError:
        return ""
    try:
        return read_netrc_auth(host=os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai"))
    except Exception:  # an unreadable .netrc: W&B reports it itself
        return ""
