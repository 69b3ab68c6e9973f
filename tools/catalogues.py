"""The site's Yorùbá edition: gettext catalogues in locales/yo/LC_MESSAGES/, as Sphinx translates.

    python -m tools.catalogues            # extract the English, update the catalogues (sphinx-intl)
    python -m tools.catalogues --check    # say which catalogue is behind its English source

`CATALOGUED` names the pages the Yorùbá edition translates: the front page, the lessons (their
summaries, the quiz page) and `sphinx` (the interface's words, Sphinx's own domain). A
translator fills a page's `.po` (poedit, or any text editor); `tools.site` builds the edition
into site/yo/, where a page without a catalogue keeps its English with a note (docs/conf.py).
A catalogue is *behind* when its page has an English message it lacks, or holds a fuzzy entry
(sphinx-intl marks so a message whose English changed): tests/test_catalogues.py fails then.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from gradacc_lessons.lessons import LESSONS
from tools.site import DOCS, ROOT, stage, stage_lessons_unexecuted

LOCALES = ROOT / "locales"
LANGUAGE = "yo"
CATALOGUED = (
    "index",
    *(f"notebooks/{lesson.stem}" for lesson in LESSONS if lesson.catalogue),
    "sphinx",
)
THEME = "booktheme"  # the site theme's own words (sphinx-book-theme ships no Yorùbá)


def extract(work: Path) -> Path:
    """The English messages of the site, as .pot files (one per page) under `work`/gettext."""
    from sphinx.cmd.build import build_main

    shutil.rmtree(work, ignore_errors=True)
    source = work / "source"
    stage(source)
    stage_lessons_unexecuted(source)  # the cells' text is what gets translated: no need to run
    pot = work / "gettext"
    status = build_main(
        [
            "-b",
            "gettext",
            "-q",
            "-c",
            str(DOCS),
            "-d",
            str(work / "doctrees"),
            str(source),
            str(pot),
        ]
    )
    if status != 0:
        raise RuntimeError(f"sphinx's gettext builder failed ({status})")
    return pot


def read_po(path: Path) -> dict[str, tuple[str, bool]]:
    """{msgid: (msgstr, fuzzy)} of a .po or .pot file (the header entry left out)."""
    from babel.messages.pofile import read_po as babel_read

    with path.open("rb") as file:
        catalog = babel_read(file)
    return {
        str(m.id): (str(m.string or ""), m.fuzzy) for m in catalog if m.id and isinstance(m.id, str)
    }


def completeness(po: Path) -> float:
    """The share of a catalogue's English words whose message is translated (fuzzy is not).

    The site's edition notes a page below 1 (docs/conf.py); an empty catalogue counts as 1.
    """
    messages = read_po(po)
    total = sum(len(msgid.split()) for msgid in messages)
    done = sum(
        len(msgid.split()) for msgid, (msgstr, fuzzy) in messages.items() if msgstr and not fuzzy
    )
    return done / total if total else 1.0


def behind(pot: Path, locales: Path = LOCALES) -> list[str]:
    """What keeps each catalogue of `CATALOGUED` from matching its English source; [] if none."""
    found = []
    for page in CATALOGUED:
        po = locales / LANGUAGE / "LC_MESSAGES" / f"{page}.po"
        if not po.is_file():
            found.append(f"{page}: no catalogue {po.relative_to(locales.parent)}")
            continue
        have = read_po(po)
        fuzzy = [msgid for msgid, (_, is_fuzzy) in have.items() if is_fuzzy]
        found += [f"{page}: fuzzy: {msgid[:60]!r}" for msgid in fuzzy]
        if page == "sphinx":  # the interface's words: Sphinx's own catalogue, not extracted
            continue
        english = read_po(pot / f"{page}.pot")
        found += [f"{page}: missing: {msgid[:60]!r}" for msgid in english if msgid not in have]
        found += [f"{page}: obsolete: {msgid[:60]!r}" for msgid in have if msgid not in english]
    theme = locales / LANGUAGE / "LC_MESSAGES" / f"{THEME}.po"
    have = read_po(theme) if theme.is_file() else {}
    found += [f"{THEME}: missing: {msgid!r}" for msgid in theme_messages() if msgid not in have]
    return found


def theme_messages() -> list[str]:
    """Every message of the installed theme's own catalogues (one .po per language it ships)."""
    import sphinx_book_theme

    shipped = Path(sphinx_book_theme.__file__).parent / "theme" / "sphinx_book_theme" / "static"
    pos = sorted((shipped / "locales").glob(f"*/LC_MESSAGES/{THEME}.po"))
    return sorted({msgid for po in pos for msgid in read_po(po)})


def update(work: Path) -> None:
    """Extract the English and bring the catalogues up to date with sphinx-intl."""
    pot = extract(work)
    subprocess.run(
        [sys.executable, "-m", "sphinx_intl", "update", "-p", str(pot), "-l", LANGUAGE]
        + ["-d", str(LOCALES), "-w", "100", "--no-obsolete"],
        check=True,
    )
    for po in (LOCALES / LANGUAGE / "LC_MESSAGES").rglob("*.po"):
        page = po.relative_to(LOCALES / LANGUAGE / "LC_MESSAGES").with_suffix("").as_posix()
        if page not in (*CATALOGUED, THEME):
            po.unlink()  # only the pages the edition translates have a catalogue


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say what is behind")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "gettext", help="scratch")
    args = parser.parse_args(argv)
    if args.check:
        problems = behind(extract(args.work))
        print("\n".join(problems) or "every catalogue is up to date")
        return 1 if problems else 0
    update(args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
