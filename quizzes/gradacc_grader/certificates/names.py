"""Whether a learner's name may be signed as it is, checked before anything is signed.

A credential states a name for good; an employer reads it on a page it did not write. So a
name is refused, with the reason, when:

- it holds **markup or control characters** (``<``, ``>``, ``&``, ``"``, a backtick, a
  control): text a page, a spreadsheet or a terminal may run. Never accepted.
- it holds an **invisible** character, Unicode's ``Default_Ignorable_Code_Point`` (U+034F
  COMBINING GRAPHEME JOINER, U+3164 HANGUL FILLER, a direction override, ...; the ``regex``
  package knows the property), other than the joiners ZWJ and ZWNJ that some scripts shape
  with;
- a **word mixes scripts** (UTS #39, section 5: a Cyrillic ``А`` in ``Аda``), except the
  mixtures UTS #39 calls single-script (Han with Hiragana and Katakana, Han with Hangul, Han
  with Bopomofo); each character's script and its Latin look-alikes come from the
  ``confusable_homoglyphs`` package (Unicode's ``Scripts.txt`` and ``confusables.txt``);
- it **cannot print on one line** of the PDF, or the fonts lack its letters
  (``printable.problem_with``).

All but the first may be accepted for one student with ``--accept-name STUDENT`` once the
instructor has read the reason (a learner whose name really is so).
"""

from __future__ import annotations

import unicodedata

import regex
from confusable_homoglyphs import categories, confusables

MARKUP = '<>&"`'
JOINERS = "\u200c\u200d"
IGNORED_SCRIPTS = {"COMMON", "INHERITED"}
# UTS #39, 5.1: these sets of scripts count as one ("Jpan", "Kore", "Hanb")
ONE_SCRIPT = [{"HAN", "HIRAGANA", "KATAKANA"}, {"HAN", "HANGUL"}, {"HAN", "BOPOMOFO"}]
_INVISIBLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")


def _named(character: str) -> str:
    return f"U+{ord(character):04X} {unicodedata.name(character, 'without a name')}"


def never_signed(name: str) -> str | None:
    """Why ``name`` can never be signed (markup or control characters), or None.

    >>> never_signed('<img src=x onerror="alert(1)">')
    "it holds U+003C LESS-THAN SIGN ('<'), markup a page or spreadsheet may run"
    """
    for character in name:
        if character in MARKUP:
            what = f"{_named(character)} ({character!r})"
            return f"it holds {what}, markup a page or spreadsheet may run"
        if unicodedata.category(character) == "Cc":
            return f"it holds {_named(character)}, a control character"
    return None


def doubtful(name: str) -> str | None:
    """Why ``name`` needs ``--accept-name`` before it is signed (UTS #39), or None.

    >>> doubtful("Adébáyọ̀ Ọ̀ṣun") is None, doubtful("山田たろう") is None
    (True, True)
    >>> doubtful("\\u0410da Lovelace")  # doctest: +ELLIPSIS
    "the word 'Аda' mixes CYRILLIC and LATIN letters (U+0410 CYRILLIC CAPITAL LETTER A looks ..."
    >>> doubtful("Ada\\u034fLovelace")
    'it holds U+034F COMBINING GRAPHEME JOINER, an invisible character'
    """
    for character in name:
        if character not in JOINERS and _INVISIBLE.match(character):
            return f"it holds {_named(character)}, an invisible character"
    for word in name.split():
        scripts = {categories.alias(c) for c in word} - IGNORED_SCRIPTS
        if len(scripts) > 1 and not any(scripts <= allowed for allowed in ONE_SCRIPT):
            shown = " and ".join(sorted(scripts))
            found = confusables.is_confusable(word, greedy=True, preferred_aliases=["latin"])
            looks = [
                f"{_named(f['character'])} looks like {f['homoglyphs'][0]['c']}"
                for f in found or []
            ]
            return f"the word {word!r} mixes {shown} letters" + (f" ({looks[0]})" if looks else "")
    return None
