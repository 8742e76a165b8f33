"""The page cache: one Markdown file per page in upstream's layout (``{pageid}-dated.md``, so
upstream's prebuilt archive can be unpacked into it; ``title-{sha1}-dated.md`` for a page read by
title without an id), written atomically, read back as UTF-8."""

from __future__ import annotations

import logging
from pathlib import Path

from mindprobe.core.files import write_file
from mindprobe.errors import DataError
from mindprobe.resources.wiki_types import Evidence

log = logging.getLogger(__name__)


class PageCache:
    """Pages under ``root``; ``offline``: an unreadable file is an error, not a refetch."""

    def __init__(self, root: Path, offline: bool = False) -> None:
        self.root, self.offline = root, offline

    def path(self, evidence: Evidence | int) -> Path:
        key = evidence if isinstance(evidence, int) else evidence.cache_key
        return self.root / f"{key}-dated.md"

    def read(self, evidence: Evidence) -> str | None:
        """The cached Markdown, or None (not cached, or not UTF-8 and to be fetched again)."""
        path = self.path(evidence)
        try:
            return path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            if self.offline:
                raise DataError(
                    f"cached page {path} ({evidence.title!r}) is not valid UTF-8 ({exc}); delete "
                    "it and run once with network access to fetch it again"
                ) from None
            log.warning("cached page %s is not valid UTF-8 (%s); fetching it again", path, exc)
            return None

    def store(self, evidence: Evidence, html: str) -> str:
        """HTML -> Markdown, written atomically so readers never see half a file."""
        from mindprobe.resources.wiki_markdown import html_to_markdown  # bs4: loaded on use

        data = html_to_markdown(html).encode("utf-8", "replace")
        self.root.mkdir(parents=True, exist_ok=True)
        final = self.path(evidence)
        write_file(final, data, replace=True)
        return data.decode("utf-8")
