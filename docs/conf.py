"""Sphinx configuration of the course site (`make site`; tools/site.py stages the sources).

The site is read where no kernel runs: every widget output shows its static HTML fallback,
math is typeset by a MathJax copy served with the site, and nothing loads from another host.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sphinx.transforms.post_transforms import SphinxPostTransform  # noqa: E402

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
# A page whose catalogue is not yet complete: the share of its English words translated,
# computed at each build (tools/catalogues.py), so the note goes when the translation is done.
PARTIAL_NOTE = {
    "yo": (
        '<div class="admonition note" lang="yo"><p>A ti túmọ̀ {percent}% ojú-ewé yìí sí '
        "Yorùbá; ìyókù ṣì wà ní Gẹ̀ẹ́sì títí a ó fi parí ìtúmọ̀ rẹ̀.</p></div>"
    ),
}
# The site's two editions: the English at the site's root, each other language in a folder of
# its own (tools/site.py builds them so). Every page links its twin in the other edition.
EDITIONS = {"en": ("English", ""), "yo": ("Yorùbá", "yo/")}  # language: (its name, its folder)
templates_path = ["_templates"]  # edition-switch.html: the switch at the top of every page

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
    "article_header_end": ["edition-switch.html", "article-header-buttons.html"],
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {
        "colab_url": "https://colab.research.google.com",
        "binderhub_url": "https://mybinder.org",
        "notebook_interface": "jupyterlab",
    },
}


def _note_untranslated(app, pagename, templatename, context, doctree):
    """In an edition in another language, a page without a catalogue says it is in English,
    and a page whose catalogue is incomplete says how much of it is translated."""
    from tools.catalogues import completeness

    language = app.config.language
    if language in FALLBACK_NOTE and doctree is not None and "body" in context:
        catalogue = ROOT / "locales" / language / "LC_MESSAGES" / f"{pagename}.po"
        if not catalogue.is_file():
            context["body"] = FALLBACK_NOTE[language] + context["body"]
        elif (share := completeness(catalogue)) < 1:
            percent = min(99, int(share * 100))  # 99.6 % is not yet all of it
            context["body"] = PARTIAL_NOTE[language].format(percent=percent) + context["body"]


def _link_editions(app, pagename, templatename, context, doctree):
    """The page's twin in every edition: `hreflang` links in its head, and the switch's links
    (`gradacc_editions`, drawn by _templates/edition-switch.html)."""
    here = str(app.config.language)
    up = "../" * (pagename.count("/") + (1 if EDITIONS[here][1] else 0))  # to the site's root
    editions = []
    for language, (name, folder) in EDITIONS.items():
        href = f"{up}{folder}{pagename}.html"
        editions.append(
            {"language": language, "name": name, "href": href, "here": language == here}
        )
        context["metatags"] = (
            context.get("metatags", "")
            + f'\n<link rel="alternate" hreflang="{language}" href="{href}" />'
        )
    context["gradacc_editions"] = editions


def _launch_the_editions_notebook(app, pagename, templatename, context, doctree):
    """In the Yorùbá edition, a lesson's Colab and Binder buttons open its Yorùbá notebook
    (notebooks/yo/, tools/yoruba_notebooks.py) instead of the English one."""
    folder = EDITIONS[str(app.config.language)][1]
    english = f"{pagename}.ipynb"
    translated = ROOT / "notebooks" / folder / Path(pagename).with_suffix(".ipynb").name
    if not folder or not pagename.startswith("notebooks/") or not translated.is_file():
        return
    hosts = [url for url in html_theme_options["launch_buttons"].values() if "://" in url]
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []):
            if any(button.get("url", "").startswith(host) for host in hosts):
                yoruba = f"notebooks/{folder}{translated.name}"
                button["url"] = button["url"].replace(english, yoruba)


def _edition_title(app):
    """The site's title in the edition's language: the front page's title (the same words) as
    the front page's catalogue translates it."""
    from tools.catalogues import read_po

    index = ROOT / "locales" / str(app.config.language) / "LC_MESSAGES" / "index.po"
    if app.config.language != "en" and index.is_file():
        translated, _fuzzy = read_po(index).get(app.config.html_title, ("", False))
        app.config.html_title = translated or app.config.html_title


class TranslateFoldButtons(SphinxPostTransform):
    """MyST-NB's buttons on folded cells ("Show code cell source") in the edition's language,
    from sphinx.po: MyST-NB writes them from its settings, in English, past any catalogue."""

    default_priority = 200  # right after MyST-NB's HideInputCells (199), which makes them
    formats = ("html",)

    def run(self, **kwargs):
        from myst_nb.sphinx_ import HideCodeCellNode
        from sphinx.locale import _

        for node in self.document.findall(HideCodeCellNode):
            for prompt in ("prompt_show", "prompt_hide"):
                node[prompt] = str(_(node[prompt]))


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
    app.connect("builder-inited", _edition_title)
    app.connect("html-page-context", _link_editions)
    # after the theme makes its buttons (sphinx-book-theme's handlers run at priority 501)
    app.connect("html-page-context", _launch_the_editions_notebook, priority=600)
    app.add_post_transform(TranslateFoldButtons)
    app.connect("html-page-context", _note_untranslated)
