"""Static files storage: WhiteNoise's compressed, content-hashed files, forgiving before collection.

Once ``collectstatic`` has run (``make run`` and every deployment do), templates link
``css/fairportal.3f2a….css`` (cached for a year, a new name when the content changes) and
WhiteNoise serves the gzip copy. Before it has run, a page must still render: a name missing
from the manifest falls back to the plain one (served once collected) instead of a 500.
"""

from __future__ import annotations

from typing import Any

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def hashed_name(self, name: str, content: Any = None, filename: str | None = None) -> str:
        if content is None and not self.exists(self.clean_name(name)):
            return name  # not collected yet: the plain name
        return super().hashed_name(name, content, filename)
