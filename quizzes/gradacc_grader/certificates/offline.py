"""The verification page's copy of its data for reading from disk: ``registry.js``.

A browser lets a page opened from a file (``file://``) fetch no other file, so opened from the
built site on disk, the page could read neither ``registry.json`` nor ``issuer.pub``. A
classic script may still be loaded from beside it: ``registry.js`` holds the exact texts of
both, and the page checks them exactly as it checks the fetched ones (signatures, dates,
sequence). The site build (``docs/conf.py``) writes it into ``<site>/verify/``.
"""

from __future__ import annotations

import json
from pathlib import Path

OFFLINE_COPY = "registry.js"


def write_offline_copy(folder: Path) -> Path:
    """Write ``folder/registry.js`` from ``folder/registry.json`` and ``folder/issuer.pub``.

    A missing ``issuer.pub`` (nothing published yet) is written as null; the page says so.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "registry.json").write_text('{"format": "x"}\\n')
    >>> print(write_offline_copy(folder).read_text().splitlines()[-1])  # doctest: +ELLIPSIS
    globalThis.gradaccPublished = {"registry.json": "{\\"format\\": ...", "issuer.pub": null};
    """
    folder = Path(folder)
    texts = {"registry.json": (folder / "registry.json").read_text("utf-8")}
    public = folder / "issuer.pub"
    texts["issuer.pub"] = public.read_text("utf-8") if public.is_file() else None
    path = folder / OFFLINE_COPY
    path.write_text(
        "// Written by the site build from registry.json and issuer.pub beside this file, for\n"
        "// the page opened from disk (gradacc_grader.certificates.offline). Do not edit.\n"
        f"globalThis.gradaccPublished = {json.dumps(texts)};\n",
        "utf-8",
    )
    return path
