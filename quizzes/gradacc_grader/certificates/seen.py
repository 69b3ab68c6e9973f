"""What a verifier remembers of the registries it has checked: the newest one per issuer key.

An old copy of ``registry.json``, saved before a revocation, is signed as well as the current
one: only its lower sequence number gives it away, and only to a verifier who has seen a newer
one. ``gradacc-certify verify`` keeps, in a small JSON state file, the highest sequence number
and the hash of that registry for each issuer key it has checked, and refuses a registry older
than that, a different one under the same number, or a newer one whose chain does not run
through it. (The page keeps the same in the browser's localStorage.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from gradacc_grader.certificates.published import RegistryRefused
from gradacc_grader.certificates.untrusted import parse_json_object, read_small_file

STATE_FILE = "registries-seen.json"
MAX_STATE_BYTES = 1_000_000


def default_state_path() -> Path:
    """``$XDG_STATE_HOME/gradacc/registries-seen.json`` (``~/.local/state`` without it)."""
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "gradacc" / STATE_FILE


def load_seen(path: Path) -> dict:
    """The registries seen so far, by issuer key: ``{key: {"sequence", "hash"}}``.

    Raises:
        ValueError: the state file is not one (it says how to start afresh).
    """
    path = Path(path)
    if not path.exists():
        return {}
    try:
        seen = parse_json_object(
            read_small_file(path, MAX_STATE_BYTES, "a state file").decode("utf-8"), f"{path}"
        )
        for mark in seen.values():
            if type(mark["sequence"]) is not int or not isinstance(mark["hash"], str):
                raise ValueError("an entry is malformed")
    except (ValueError, TypeError, KeyError) as error:
        raise ValueError(
            f"{path}, where verify remembers the registries it has seen, is damaged ({error}): "
            "delete it to start afresh (older registries then pass until a newer one is seen)"
        ) from None
    return seen


def check_not_older(seen: dict, body: dict) -> None:
    """RegistryRefused if ``body`` is older than, or inconsistent with, the one seen last.

    >>> seen = {"K": {"sequence": 5, "hash": "a" * 64}}
    >>> check_not_older(seen, {"public_key": "K", "sequence": 3, "hash": "b" * 64, "chain": []})
    Traceback (most recent call last):
    gradacc_grader.certificates.published.RegistryRefused: replayed: ...
    """
    mark = seen.get(body["public_key"])
    if mark is None:
        return
    if body["sequence"] < mark["sequence"]:
        raise RegistryRefused(
            f"replayed: this is registry number {body['sequence']}, older than number "
            f"{mark['sequence']}, which was already checked here; an old copy can hide a "
            "revocation made since. Get the current registry.json from the issuer's site"
        )
    if body["sequence"] == mark["sequence"] and body["hash"] != mark["hash"]:
        raise RegistryRefused(
            f"another registry under the same number {body['sequence']} was checked here "
            "before: both are signed with the issuer's key, so the key was misused or stolen"
        )
    if body["sequence"] > mark["sequence"] and body["chain"][mark["sequence"] - 1] != mark["hash"]:
        raise RegistryRefused(
            f"this registry (number {body['sequence']}) does not continue registry number "
            f"{mark['sequence']} checked here before: its chain of earlier registries differs, "
            "so one of them was not published by the issuer in order"
        )


def remember(path: Path, seen: dict, body: dict) -> None:
    """Record ``body`` as the newest registry of its issuer, if it is; written atomically."""
    mark = seen.get(body["public_key"])
    if mark is not None and mark["sequence"] >= body["sequence"]:
        return
    seen = {**seen, body["public_key"]: {"sequence": body["sequence"], "hash": body["hash"]}}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n", "utf-8")
    partial.replace(path)
