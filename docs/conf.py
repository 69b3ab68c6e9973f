"""Sphinx configuration of the course site (`make site`; tools/site.py stages the sources).

The site is read where no kernel runs: every widget output shows its static HTML fallback,
math is typeset by a MathJax copy served with the site, and nothing loads from another host.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.course_config import course_repository  # noqa: E402

REPOSITORY = course_repository()

project = "gradacc"
author = "the gradacc authors"
copyright = "the gradacc authors, MIT license"
extensions = ["myst_nb", "sphinx-mathjax-offline"]  # the second copies MathJax 3 into _static
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 2  # the lessons link to sources.md#lesson-6

# The lessons arrive executed by tools/notebooks.py (the course's one runner): never re-run here.
nb_execution_mode = "off"
# A widget needs a kernel (or a script from a CDN): show the text/html fallback beside it.
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
nb_ipywidgets_js = {}  # no widget scripts from a CDN
# A print can reach the notebook as two stream messages (its text, then its newline) when
# the kernel flushes between them, which a busy machine makes likely: one output per stream.
nb_merge_streams = True

# The Yorùbá edition (`-D language=yo`, tools/site.py builds it into site/yo/): gettext
# catalogues in locales/yo/LC_MESSAGES/, one per page (`gettext_compact = False`), filled with
# sphinx-intl; a page without a catalogue of its own shows its English with a note.
locale_dirs = [str(ROOT / "locales")]
gettext_compact = False
gettext_uuid = False
gettext_location = False  # msgids only: a catalogue changes when its page's text changes
FALLBACK_NOTE = {
    "yo": (
        '<div class="admonition note" lang="yo"><p>Ojú-ewé yìí kò tíì ní Yorùbá: ó wà ní '
        "Gẹ̀ẹ́sì níbí. Ìtọ́sọ́nà, àkótán ẹ̀kọ́ kọ̀ọ̀kan àti àwọn ìdánwò wà ní Yorùbá.</p></div>"
    ),
}

html_theme = "sphinx_book_theme"
html_title = "gradacc: gradient accumulation, measured"
html_context = {"default_mode": "light"}  # an empty stored mode logs a console error otherwise
html_static_path = ["_static"]
html_js_files = ["guide.js", "launch.js"]  # the guide's switch and Listen; the launch label
html_css_files = ["gradacc.css"]  # the widgets' static snapshots: a margin, clickable summaries
html_theme_options = {
    "repository_url": REPOSITORY.url,
    "repository_branch": REPOSITORY.branch,
    "path_to_docs": "",  # a page's path in the site is the notebook's path in the repository
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {
        "colab_url": "https://colab.research.google.com",
        "binderhub_url": "https://mybinder.org",
        "notebook_interface": "jupyterlab",
    },
}


# The certificate check page: static files of its own, copied as they are to <site>/verify/.
VERIFY_PAGE = ROOT / "quizzes" / "verify"
if (VERIFY_PAGE / "index.html").exists():
    tags.add("verify")  # noqa: F821 (Sphinx gives conf.py its tags); instructors.md links to it


def _copy_verify_page(app, error):
    """Publish the certificate check page, where it exists, as <site>/verify/, with the
    registry.js that lets it check certificates when opened from disk (file://)."""
    if error is None and (VERIFY_PAGE / "index.html").exists():
        from gradacc_grader.certificates.offline import write_offline_copy

        shutil.copytree(VERIFY_PAGE, Path(app.outdir) / "verify", dirs_exist_ok=True)
        write_offline_copy(Path(app.outdir) / "verify")


def _note_untranslated(app, pagename, templatename, context, doctree):
    """In an edition in another language, a page without a catalogue says it is in English."""
    language = app.config.language
    if language in FALLBACK_NOTE and doctree is not None and "body" in context:
        catalogue = ROOT / "locales" / language / "LC_MESSAGES" / f"{pagename}.po"
        if not catalogue.is_file():
            context["body"] = FALLBACK_NOTE[language] + context["body"]


def _theme_words(app):
    """The theme's own words (its `booktheme` catalogue, which has no Yorùbá) from locales/."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    po = ROOT / "locales" / str(app.config.language) / "LC_MESSAGES" / "booktheme.po"
    if not po.is_file():
        return
    compiled = Path(app.doctreedir) / "locales"  # built, never committed
    mo = compiled / str(app.config.language) / "LC_MESSAGES" / "booktheme.mo"
    mo.parent.mkdir(parents=True, exist_ok=True)
    with po.open("rb") as source, mo.open("wb") as target:
        write_mo(target, read_po(source))
    app.add_message_catalog("booktheme", str(compiled))


def setup(app):
    app.connect("builder-inited", _theme_words)
    app.connect("build-finished", _copy_verify_page)
    app.connect("html-page-context", _note_untranslated)
