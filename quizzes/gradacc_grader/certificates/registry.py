"""The registry of issued certificates: a SQLite file the issuer keeps, and never publishes.

The SQLite file holds, per credential, who it was issued to (course, assignment, nbgrader
student id: one each), its signed VC-JWT, its bit in the status lists and the reason of a
revocation. Older-format certificates (a signed JSON record each, before the Open Badges
credentials) stay in their own tables, read when their learners are issued again. What is
published is written by ``publishing`` from the status bits alone: it names no one.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS issuer (public_key TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS certificates (
    id TEXT PRIMARY KEY,
    course TEXT NOT NULL,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    signed TEXT NOT NULL,
    signature TEXT NOT NULL,
    UNIQUE (course, assignment, student)
);
CREATE TABLE IF NOT EXISTS revocations (
    id TEXT PRIMARY KEY REFERENCES certificates (id),
    signed TEXT NOT NULL,
    signature TEXT NOT NULL
);
"""
# Open Badges credentials (badge.py), since 2026-12: the signed VC-JWT, its bit in the status
# lists, and what only the instructor keeps (the student, why it was revoked or superseded).
_CREDENTIALS = """
CREATE TABLE IF NOT EXISTS credentials (
    id TEXT PRIMARY KEY,
    course TEXT NOT NULL,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    name TEXT NOT NULL,
    status_index INTEGER NOT NULL UNIQUE,
    token TEXT NOT NULL,
    facts TEXT NOT NULL,
    superseded_by TEXT,
    revoked_on TEXT,
    reason TEXT
);
"""


class Registry:
    """The issuer's registry file; use as a context manager (it commits on success).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "certificates.sqlite"
    >>> with Registry(path, create=True) as registry:
    ...     registry.claim_issuer("KEY")
    ...     registry.add("ABCD", "gradacc", "final", "ada", {"signed": "{}", "signature": "s"})
    >>> with Registry(path) as registry:
    ...     registry.find("gradacc", "final", "ada")["id"], registry.issuer()
    ('ABCD', 'KEY')
    """

    def __init__(self, path: Path, create: bool = False):
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise ValueError(f"no certificate registry at {self.path}: check --registry")
        self.connection = sqlite3.connect(self.path)
        try:
            if create:
                self.connection.executescript(_SCHEMA)
            query = "SELECT name FROM sqlite_master WHERE type = 'table'"
            tables = {row[0] for row in self.connection.execute(query)}
        except sqlite3.Error as error:  # "file is not a database", a read-only folder, ...
            self.connection.close()
            raise ValueError(f"{self.path} is not a certificate registry ({error})") from None
        if not {"issuer", "certificates", "revocations"} <= tables:
            self.connection.close()
            raise ValueError(f"{self.path} is an SQLite file but not a certificate registry")
        if "credentials" not in tables:
            self.connection.executescript(_CREDENTIALS)

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, error_type, error, traceback) -> None:
        if error_type is None:
            self.connection.commit()
        self.connection.close()

    def issuer(self) -> str | None:
        """The base64 public key of the issuer who signs this registry's records, if any yet."""
        row = self.connection.execute("SELECT public_key FROM issuer").fetchone()
        return row[0] if row else None

    def claim_issuer(self, public_key: str) -> None:
        """Record the issuer's public key; ValueError if the registry belongs to another key."""
        current = self.issuer()
        if current is None:
            self.connection.execute("INSERT INTO issuer VALUES (?)", (public_key,))
        elif current != public_key:
            raise ValueError(
                f"{self.path} holds certificates of another issuer key: use that key "
                "(--key), or another --registry for a new key"
            )

    def find(self, course: str, assignment: str, student: str) -> dict | None:
        """The certificate already issued to this student for this assignment, if any."""
        row = self.connection.execute(
            "SELECT id, signed, signature FROM certificates "
            "WHERE course = ? AND assignment = ? AND student = ?",
            (course, assignment, student),
        ).fetchone()
        return None if row is None else {"id": row[0], "signed": row[1], "signature": row[2]}

    def find_by_id(self, certificate_id: str) -> bool:
        """Whether an older-format certificate holds this ID."""
        query = "SELECT 1 FROM certificates WHERE id = ?"
        return self.connection.execute(query, (certificate_id,)).fetchone() is not None

    def holds(self, certificate_id: str) -> bool:
        """Whether an ID is already taken (by a certificate of either format)."""
        for table in ("certificates", "credentials"):
            query = f"SELECT 1 FROM {table} WHERE id = ?"
            if self.connection.execute(query, (certificate_id,)).fetchone() is not None:
                return True
        return False

    def current_credential(self, course: str, assignment: str, student: str) -> dict | None:
        """The student's Open Badges credential for this assignment that is not superseded."""
        row = self.connection.execute(
            "SELECT id, name, token, revoked_on, reason, facts FROM credentials WHERE course = ? "
            "AND assignment = ? AND student = ? AND superseded_by IS NULL",
            (course, assignment, student),
        ).fetchone()
        if row is None:
            return None
        keys = ("id", "name", "token", "revoked_on", "reason")
        return {**dict(zip(keys, row, strict=False)), "facts": json.loads(row[5])}

    def credential(self, certificate_id: str) -> dict | None:
        """An Open Badges credential by its short ID, with the instructor's notes on it."""
        row = self.connection.execute(
            "SELECT id, student, token, superseded_by, revoked_on, reason FROM credentials "
            "WHERE id = ?",
            (certificate_id,),
        ).fetchone()
        keys = ("id", "student", "token", "superseded_by", "revoked_on", "reason")
        return None if row is None else dict(zip(keys, row, strict=True))

    def free_status_index(self, size: int) -> int:
        """A random bit of the status lists that no credential holds yet (group privacy)."""
        import secrets

        while True:
            index = secrets.randbelow(size)
            query = "SELECT 1 FROM credentials WHERE status_index = ?"
            if self.connection.execute(query, (index,)).fetchone() is None:
                return index

    def add_credential(self, facts: dict, student: str, index: int, token: str) -> None:
        """Store a new signed credential of ``student``, with the facts its PDF prints."""
        self.connection.execute(
            "INSERT INTO credentials (id, course, assignment, student, name, status_index, token,"
            " facts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                facts["id"],
                facts["course"],
                facts["assignment"],
                student,
                facts["name"],
                index,
                token,
                json.dumps(facts, ensure_ascii=False, sort_keys=True),
            ),
        )

    def supersede(self, old: str, new: str) -> None:
        """Mark credential ``old`` superseded by ``new`` (its bit in the message list)."""
        query = "UPDATE credentials SET superseded_by = ? WHERE id = ?"
        self.connection.execute(query, (new, old))

    def revoke_credential(self, certificate_id: str, day: str, reason: str) -> None:
        """Mark a credential revoked; the reason stays here, never in a published list."""
        query = "UPDATE credentials SET revoked_on = ?, reason = ? WHERE id = ?"
        self.connection.execute(query, (day, reason, certificate_id))

    def status_indexes(self) -> dict[str, set[int]]:
        """The set bits of each status list: revoked, and superseded (``message``)."""
        rows = self.connection.execute(
            "SELECT status_index, revoked_on IS NOT NULL, superseded_by IS NOT NULL "
            "FROM credentials"
        ).fetchall()
        return {
            "revocation": {index for index, revoked, _ in rows if revoked},
            "message": {index for index, _, superseded in rows if superseded},
        }

    def add(self, certificate_id: str, course: str, assignment: str, student: str, entry: dict):
        """Store a new signed certificate (sqlite3.IntegrityError if the ID or student has one)."""
        self.connection.execute(
            "INSERT INTO certificates VALUES (?, ?, ?, ?, ?, ?)",
            (certificate_id, course, assignment, student, entry["signed"], entry["signature"]),
        )

    def revocation(self, certificate_id: str) -> dict | None:
        """The signed revocation of a certificate, if it was revoked."""
        row = self.connection.execute(
            "SELECT signed, signature FROM revocations WHERE id = ?", (certificate_id,)
        ).fetchone()
        return None if row is None else {"signed": row[0], "signature": row[1]}

    def revoke(self, certificate_id: str, entry: dict) -> None:
        """Store a signed revocation of an issued certificate."""
        self.connection.execute(
            "INSERT INTO revocations VALUES (?, ?, ?)",
            (certificate_id, entry["signed"], entry["signature"]),
        )
