"""Text from a student's grading, made safe to print in the instructor's terminal.

A student's code chooses exception messages, file names and whatever its kernel writes to the
grading log. Printed raw, escape sequences in them can clear the screen, rewrite lines above,
set the window's title, write the clipboard (OSC 52) or, in some terminals, answer back with
keystrokes; a newline in a field adds a row to the score table. `printable` removes escape
sequences, every other control character (C0 and C1, newlines and tabs kept) and the bidi
overrides that make text read other than it is; `one_line` keeps a table field on its line;
`scrub_log` cleans a log file in place. Names (a student id, a folder a student made) are not
cleaned but shown: `visible` writes every control character as its escape (`\\x1b`), so the
instructor sees that a name holds one, and none of them acts.
"""

from __future__ import annotations

import codecs
import os
import re
import unicodedata
from pathlib import Path

# ESC sequences (ECMA-48): CSI `ESC [ ... final`; strings (OSC `ESC ]`, DCS, APC, PM, SOS)
# up to BEL or `ESC \`; and the short ones, `ESC c` and the like. What is left of a broken
# sequence loses its ESC below and stays as visible text.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]"
)
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in _BIDI


def printable(text: str) -> str:
    """The text without escape sequences or control characters, newlines and tabs kept.

    >>> printable("\\x1b[31mred\\x1b[0m \\u202eabc\\x07\\n\\x1b]0;title\\x07ok")
    'red abc\\nok'
    """
    text = _ESCAPES.sub("", str(text))
    return "".join(c for c in text if c in "\n\t" or not _is_control(c))


def visible(text: str) -> str:
    """The text with each control character written as its Python escape: shown, never acted on.

    >>> print(visible("bob\\x1b]52;c;cm0gLXJm\\x07\\x1b[2J\\u202e\\n"))
    bob\\x1b]52;c;cm0gLXJm\\x07\\x1b[2J\\u202e\\n
    """
    return "".join(
        c.encode("unicode_escape").decode("ascii") if _shown_escaped(c) else c for c in str(text)
    )


def _shown_escaped(char: str) -> bool:
    # a backslash too, so that a typed "\\x1b" reads apart from a real ESC; "Cs": the bytes of
    # a name that is not UTF-8 (Python's surrogateescape), which no terminal can print
    return _is_control(char) or char == "\\" or unicodedata.category(char) == "Cs"


def one_line(text: str) -> str:
    """Printable text on one line: a line break or tab becomes a space (a row stays a row).

    >>> one_line("ada\\n  bob   10.0")
    'ada   bob   10.0'
    """
    return printable(text).replace("\n", " ").replace("\t", " ")


def scrub_log(path: Path, chunk: int = 1 << 20) -> None:
    """Rewrite a log file with `printable` text, a chunk at a time (a log may be large)."""
    if path.is_symlink() or not path.is_file():
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    scrubbed = path.with_name(path.name + ".scrubbed")
    with path.open("rb") as raw, scrubbed.open("w", encoding="utf-8") as out:
        while block := raw.read(chunk):
            out.write(printable(decoder.decode(block)))
        out.write(printable(decoder.decode(b"", final=True)))
    os.replace(scrubbed, path)
