"""The course's Yorùbá convention as data: one word per idea, the words marked wrong, and a check.

A tool of the course's authors and tests, not of the student's package (which no longer ships
it: no lesson imports it). `gradacc_lessons/quiz/yoruba.py` names the guide's own FAQ lines.

The convention (written out in docs/yoruba.md):

- everything the project writes in Yorùbá carries full tone marks (NFC);
- the guide the course is built from is quoted as the guide wrote it, without our tone marks,
  and always as a quotation: inside «…», or as a whole string that `GUIDE_FAQ` (the quiz's
  yoruba.py) lists;
- one Yorùbá word per idea (`TERMS`); English technical terms stay as they are (`KEPT`);
- the words that earlier texts used wrongly (`WRONG`) are not used again.

`problems(text)` says what in a Yorùbá text breaks the convention (see its docstring for the
exact rules); tests/test_yoruba.py runs it over every Yorùbá string of the course.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One idea: its English term, the Yorùbá the course uses for it, and a gloss."""

    english: str
    yoruba: str
    gloss: str


@dataclass(frozen=True)
class Wrong:
    """A word or phrase the course does not use, what to write instead, and why."""

    wrong: str
    right: str
    why: str
    unless: tuple[str, ...] = ()  # phrases in which the word is right (e.g. "àmì ohùn")
    exact: bool = False  # compare with the marks: "le" is wrong, "lé" (on) is another word


# One Yorùbá word per idea. Where `yoruba` is the English term, the term is kept as it is and
# `gloss` explains it once, in Yorùbá.
TERMS: tuple[Term, ...] = (
    Term("gradient accumulation", "ìkójọpọ̀ gradient", "kíkó gradient micro-batch púpọ̀ jọ"),
    Term("gradient", "gradient", "bí loss ṣe ń yí padà tí weight kan bá yí padà díẹ̀"),
    Term("batch", "batch", "àwọn àpẹẹrẹ tí a jọ ń lò fún ìmúdójúìwọ̀n kan"),
    Term("micro-batch", "micro-batch", "batch kékeré kan nínú fèrèsé"),
    Term("effective batch", "batch àpapọ̀", "gbogbo micro-batch fèrèsé kan papọ̀"),
    Term("physical batch", "batch gidi", "batch tí ó wà nínú memory ní ẹ̀ẹ̀kan"),
    Term("window", "fèrèsé", "micro-batch N tí a kó gradient wọn jọ"),
    Term("accumulation factor", "iye ìkójọpọ̀", "N, iye micro-batch nínú fèrèsé kan"),
    Term("size", "ìwọ̀n", "bí nǹkan ṣe tóbi tó: ìwọ̀n batch"),
    Term("weight", "weight", "nọ́mbà tí model ń kọ́"),
    Term("scale (the loss)", "pín", "pín loss sí N"),
    Term("loss", "loss", "nọ́mbà tí ó sọ bí model ṣe ṣàṣìṣe tó"),
    Term("memory", "memory", "ààyè ìpamọ́ GPU"),
    Term("optimizer", "optimizer", "ohun tí ó ń ṣe ìmúdójúìwọ̀n weights"),
    Term("optimizer.step()", "optimizer.step()", "ìpè tí ó ń ṣe ìmúdójúìwọ̀n kan"),
    Term("update", "ìmúdójúìwọ̀n", "yíyí weights padà lẹ́ẹ̀kan"),
    Term("normalization", "normalization", "ṣíṣe àtúnṣe èsì sí mean 0, variance 1"),
    Term("BatchNorm", "BatchNorm", "normalization lórí gbogbo àpẹẹrẹ inú batch"),
    Term("rounding", "rounding", "gígé nọ́mbà kúrú sí iye ẹ̀yà float32"),
    Term("equivalence", "ìdọ́gba", "kí méjì ṣírò ohun kan náà"),
    Term("sample", "àpẹẹrẹ", "ohun kan nínú data"),
    Term("output", "èsì", "ohun tí layer kan ṣírò"),
    Term("zero", "òdo", "0"),
    Term("still", "ṣì", "kò tíì dúró"),
    Term("fewer", "díẹ̀", "kò pọ̀"),
    Term("small", "kékeré", "kò tóbi"),
    Term("can", "lè", "ó ṣeé ṣe"),
    Term("hint", "ìtọ́ka", "ohun tí ó tọ́ ọ sí ọ̀nà ìdáhùn"),
    Term("score", "máàkì", "iye ìdáhùn tí ó tọ̀nà"),
    Term("guide", "ìtọ́sọ́nà", "ìwé tí ẹ̀kọ́ yìí ti wá"),
    Term("tone mark", "àmì ohùn", "ìlà kékeré lórí fáwẹ̀lì tí ó ń fi ohùn hàn"),
    Term("question", "ìbéèrè", ""),
    Term("answer", "ìdáhùn", ""),
    Term("lesson", "ẹ̀kọ́", ""),
)

# English words kept as they are in Yorùbá text besides the terms above (glossed where used).
_KEPT = """gradient gradients batch batches micro-batch micro-batches effective physical weight
    weights loss memory optimizer normalization layer layers batchnorm layernorm groupnorm
    rounding mean variance momentum backward forward pass activations peak training model data
    accuracy learning rate function statistics buffers float bottle bottleneck compare simulate
    delay holding jupyterlab colab enter gpu vram step library loop token tokens all-reduce
    network train eval running feature channel epoch process stderr python nbgrader byte
    statistics torch module"""
KEPT = frozenset(_KEPT.split())

WRONG: tuple[Wrong, ...] = (
    Wrong("ayeraye", "weights", "`àyérayé` means eternal"),
    Wrong("olupilẹṣẹ", "optimizer", "`olùpilẹ̀ṣẹ̀` means founder"),
    Wrong("iyipo", "rounding", "`ìyípo` means rotation"),
    Wrong("ifosiwewe", "iye ìkójọpọ̀", "a machine-translation coinage for factor"),
    Wrong("ti ara", "batch gidi", "`ti ara` means bodily, not physical"),
    Wrong("tun n", "ṣì ń", "`tún` means again; still is ṣì"),
    Wrong("to kere", "díẹ̀", "`tó kéré` means smaller; fewer is díẹ̀", unless=("tó kéré jù",)),
    Wrong("le", "lè", "can is lè, always with its tone", exact=True),
    Wrong("igo", "kò tó", "`ìgò` means bottle: say that memory is not enough"),
    Wrong("afiwe", "ṣe bí ẹni pé", "`àfiwé` means compare, not simulate"),
    Wrong("idaduro", "gbé sínú memory", "`ìdádúró` means delay, not holding"),
    Wrong("ipele", "batch", "`ìpele` means level; the course keeps batch"),
    Wrong("iwuwasi", "normalization", "`ìwùwàsí` means behaviour; the course keeps normalization"),
    Wrong("ìpàdánù", "loss", "one word per idea: the course keeps loss (`ìpàdánù` is any loss)"),
    Wrong("àwòṣe", "model", "one word per idea: the course keeps model (`àwòṣe` is a pattern)"),
    Wrong("iranti", "memory", "one word per idea: the course keeps memory (`ìrántí` is recall)"),
    Wrong("ìtọ́ni", "ìtọ́ka", "one word for hint: `ìtọ́ni` is instruction"),
    Wrong(
        "àmì", "máàkì", "one word for score: `àmì` is a mark", unless=("àmì ohùn", "àmì ìtọ́kasí")
    ),
)


@dataclass(frozen=True)
class Slip:
    """A known slip a pattern finds in running text (a word's tone, a number's place)."""

    pattern: str  # a regular expression over the NFC text, quotations and code left out
    right: str
    why: str


# A whole word: no letter, mark or hyphen right before or after (a mark is no \w for \b,
# and "batch" inside "micro-batch" is another word).
_ALONE_BEFORE, _ALONE_AFTER = r"(?<![\w\u0300-\u036f-])", r"(?![\w\u0300-\u036f-])"
_MEASURED = "peak memory ohun àkókò iye ìwọ̀n gradient loss èsì ìgbésẹ̀ step ọ́n ọ́"
SLIPS: tuple[Slip, ...] = (
    Slip(
        rf"{_ALONE_BEFORE}ń wọn{_ALONE_AFTER}",
        "ń wọ̀n",
        "`wọn` is they or their; to measure is `wọ̀n`",
    ),
    Slip(
        rf"{_ALONE_BEFORE}wọn (?:{'|'.join(_MEASURED.split())}){_ALONE_AFTER}",
        "wọ̀n",
        "`wọn` before what is measured reads as they; to measure is `wọ̀n`",
    ),
    Slip(
        rf"{_ALONE_BEFORE}(?:micro-batch|batch) \d[\d,]* tí a kó jọ ní ([^\s-]+)-\1",
        "micro-batch mẹ́rin tí ọ̀kọ̀ọ̀kan ní àpẹẹrẹ 32",
        "a number after the noun counts them (micro-batch 32 tí a kó jọ ní mẹ́rin-mẹ́rin: 32 "
        "micro-batches, in fours); say a size with àpẹẹrẹ",
    ),
    Slip(
        # the noun as the subject ("kí micro-batch sì jẹ́"), not an owner ("mean micro-batch jẹ́")
        r"(?:^|(?<=[.;:,] )|(?<= kí )|(?<= tí )|(?<= bí )|(?<= pé )|(?<=^kí )|(?<=^tí ))"
        r"(?:micro-batch|batch|fèrèsé)(?: sì)? jẹ́ \d(?:[\d,.]*\d)?",
        "iye micro-batch jẹ́ 11",
        "say what the number is: iye (how many) or ìwọ̀n (how large)",
    ),
)

_TONES = {"\u0300", "\u0301", "\u0304"}  # grave (low), acute (high), macron (mid, rarely)
_MARKS = re.compile(r"[\u0300-\u036f]")
_WORD = re.compile(r"(?:[^\W\d_][\u0300-\u036f]*)+(?:-(?:[^\W\d_][\u0300-\u036f]*)+)*")
_QUOTE = re.compile(r"«[^«»]*»")
_CODE = re.compile(r"`[^`]*`|\{[^{}]*\}|\S*(?:_|\(\)|\.\w)\S*")
UNTONED_RUN = 5  # this many Yorùbá words in a row with no tone mark: the text is not tone-marked


def _as_text(name: str, value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string of Yorùbá text, got {type(value).__name__}")
    return value


def _toned_word(word: str) -> bool:
    return bool(_TONES & set(unicodedata.normalize("NFD", word)))


def bare(word: str) -> str:
    """`word` without any mark (tones and under-dots), lower case: what the lint compares.

    >>> bare("Ọlọ́run")
    'olorun'
    """
    word = _as_text("word", word)
    return _MARKS.sub("", unicodedata.normalize("NFD", word)).lower()


def quotations(text: str) -> list[str]:
    """The guide's words quoted in `text`, between « and », as written.

    >>> quotations("Ìtọ́sọ́nà náà sọ pé «igo».")
    ['igo']
    """
    text = _as_text("text", text)
    text = re.sub(r"`[^`]*`", " ", unicodedata.normalize("NFC", text))  # code mentions «…»
    return [q[1:-1] for q in _QUOTE.findall(text)]


def words(text: str) -> list[str]:
    """The words of `text` that the lint reads (NFC): quotations, code and {blanks} left out."""
    text = _as_text("text", text)
    text = _CODE.sub(" ", _QUOTE.sub(" ", unicodedata.normalize("NFC", text)))
    return [
        unicodedata.normalize("NFC", w) for w in _WORD.findall(unicodedata.normalize("NFD", text))
    ]


# Everyday words the course writes often, with their tones (rule 2 of `problems`).
_EVERYDAY = """àwọn kọ̀ọ̀kan pẹ̀lú nígbà ṣáájú nínú lẹ́ẹ̀kan ẹ̀ẹ̀kan tàbí nítorí ṣùgbọ́n láìsí lẹ́yìn
    ńlá ìgbà mẹ́rin"""
EVERYDAY = tuple(_EVERYDAY.split())
# Words right without a mark that share their letters with a marked one (ohun thing, ohùn voice).
MID_TONE = frozenset({"ohun"})


def _toned() -> dict[str, set[str]]:
    """Each tone-marked word's bare form -> its right spellings."""
    forms: dict[str, set[str]] = {}
    for word in [w for t in TERMS for w in t.yoruba.split()] + list(EVERYDAY):
        if _toned_word(word) and bare(word) not in MID_TONE:
            forms.setdefault(bare(word), set()).add(word.lower())
    return forms


TONED = _toned()


def problems(text: str, *, runs: bool = True) -> list[str]:
    """What in the Yorùbá `text` breaks the convention; [] when nothing does.

    Quotations of the guide («…»), code (`…`, names with `_`, `()` or a dot inside) and
    `{blanks}` are left out; then, in what remains:

    1. a word or phrase of `WRONG`, compared without marks and case (so "àyérayé" is as wrong
       as "ayeraye"), unless inside one of its `unless` phrases;
    2. a word of four letters or more written with no tone mark at all whose letters are those
       of a tone-marked word of `TERMS` or `EVERYDAY` ("ikojọpọ" or "Ikojopo" for "ìkójọpọ̀",
       "awọn" for "àwọn"); shorter words are left to rule 3 and `WRONG`, since many short
       words differ only by their tones (lè can, lé on);
    3. `UNTONED_RUN` Yorùbá words in a row none of which carries a tone mark (a word is
       Yorùbá unless `KEPT` lists it or it is in capitals, like GPU or N).
       `runs=False` skips this rule, for a text in English that quotes Yorùbá words.
    4. a known slip of `SLIPS`, found by its pattern (case aside): `wọn` (they) where
       measuring (`wọ̀n`) is meant ("Ó ń wọn", "wọn peak"), and a number after the noun
       that reads as a count where a size is meant ("micro-batch 32 tí a kó jọ"), or a
       noun equated with a number that does not say whether it counts or measures
       ("kí micro-batch sì jẹ́ 11"; a `{blank}` counts as a number here).

    >>> problems("Àwọn ayeraye náà")
    ['"ayeraye": write "weights" (`àyérayé` means eternal)']
    >>> problems("Ikojọpọ gradient")
    ['"Ikojọpọ" lacks its tone marks: "ìkójọpọ̀"']
    >>> problems("Kò sí ọ̀kan: gbogbo layer normalization ló ń ba ìdọ́gba jẹ́")
    []
    """
    found = []
    ws = words(text)
    flat = " " + " ".join(bare(w) for w in ws) + " "
    exact = " " + " ".join(w.lower() for w in ws) + " "
    for entry in WRONG:
        key, seen = (str.lower, exact) if entry.exact else (bare, flat)
        count = seen.count(" " + key(entry.wrong) + " ")
        count -= sum(seen.count(" " + key(u) + " ") for u in entry.unless)
        if count > 0:
            found.append(f'"{entry.wrong}": write "{entry.right}" ({entry.why})')
    for w in ws:
        right = TONED.get(bare(w))
        if right and len(bare(w)) >= 4 and not _toned_word(w):
            found.append(f'"{w}" lacks its tone marks: "{" or ".join(sorted(right))}"')
    run: list[str] = []
    for w in ws if runs else ():
        if _toned_word(w) or w.lower() in KEPT or (w.isupper() and len(w) <= 5):
            run = []
        else:
            run.append(w)
            if len(run) == UNTONED_RUN:
                found.append(f'not tone-marked: "{" ".join(run)}"')
    # for the slips a {blank} stands for the number it will be, and **bold** is plain text
    prose = re.sub(r"\{[^{}]*\}", "0", _QUOTE.sub(" ", unicodedata.normalize("NFC", text)))
    prose = " ".join(_CODE.sub(" ", prose.replace("*", "")).split())
    for slip in SLIPS:
        for match in re.finditer(slip.pattern, prose, re.IGNORECASE):
            found.append(f'"{match[0]}": write "{slip.right}" ({slip.why})')
    return list(dict.fromkeys(found))


def markdown() -> str:
    """The glossary as the Markdown tables of docs/yoruba.md (a test keeps the page in step)."""
    rows = ["| English | Yorùbá | Ìtumọ̀ (gloss) |", "|---|---|---|"]
    rows += [f"| {t.english} | {t.yoruba} | {t.gloss} |" for t in TERMS]
    rows += ["", "| Not this | But this | Why |", "|---|---|---|"]
    rows += [f"| `{w.wrong}` | {w.right} | {w.why} |" for w in WRONG]
    return "\n".join(rows) + "\n"
