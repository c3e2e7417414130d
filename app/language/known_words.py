"""Every word the command language knows, and the edge words it does not (DESIGN §3 coverage).

A speaker of another first language opens or closes a request with words of their own
("Toda. Clear it", "Khob, only the medical history, merci", "Other way ka"). No list of such
words is ever complete, so instead of listing them the console asks the opposite question: is
the word one of its own? Its own words are every word of its data — the word classes, the
vocabulary tables, the phrase rewrites, the semantic exemplars (which hold the ordinary English
of requests and of theatre talk) and the console's own phrasings. A word at the edge of the
utterance, set off by a pause, that is none of these, no number, no given name said with a
capital and nothing that sounds like a console term, may be set aside; the caller then acts on
the rest only when the rest is a confident command by itself.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache

import jellyfish

from app.language import DATA_DIR, class_names, given_names, phrasings, rewrite_sources, words
from app.language.command_words import DOMAIN_WORDS
from app.language.exemplars import exemplar_records
from app.language.normalize import _NUMBER_WORDS, _ascii_fold, _is_num_word
from app.language.soundalike import AMOUNT_BEFORE

_LETTERS = re.compile(r"[a-z]+(?:'[a-z]+)*")
_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*|\d+|\.\.\.|…|[,.;:!?]")
_PAUSES = {",", ".", ";", ":", "!", "?", "...", "…"}
_MAX_EDGE_WORDS = 2  # "mm goi", "b'vakasha": longer edges are talk or a request of their own


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for w in _LETTERS.findall(_ascii_fold(text.lower()).replace("’", "'")):
        out.append(w.replace("'", ""))
        out.extend(w.split("'"))
    return out


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# classes of other languages' words: "un" of "un altra volta" stays foreign beside a name
_OTHER_LANGUAGES = frozenset({"repeat_other_languages"})


@lru_cache(maxsize=1)
def known_words() -> frozenset[str]:
    """The words of the console's language data (lower case, apostrophes dropped)."""
    texts: list[str] = list(DOMAIN_WORDS)
    for name in class_names():
        if name not in _OTHER_LANGUAGES:
            texts.extend(words(name))
    for path in (DATA_DIR / "vocabulary.toml", DATA_DIR / "phrases.toml"):
        texts.extend(_strings(tomllib.loads(path.read_text(encoding="utf-8"))))
    texts.extend(" ".join(src) for src in rewrite_sources())
    texts.extend(p for r in exemplar_records() for p in r.phrases)
    texts.extend(phrasings())
    out: set[str] = set()
    for t in texts:
        out.update(_tokens(t))
    return frozenset(out)


_TERMS = DOMAIN_WORDS | frozenset(_NUMBER_WORDS)


@lru_cache(maxsize=1)
def _console_keys() -> frozenset[str]:
    return frozenset(jellyfish.metaphone(w) for w in _TERMS if len(w) > 2)


def _sounds_like_console(word: str) -> bool:
    """A recogniser's slip for a console term or a number ("corneal" for coronal, "fife"
    for five) is never set aside. A short word's sound key alone is too coarse ("niin",
    "hat" share one with nine and height) unless it is also spelled within one letter."""
    limit = 1 if len(word) <= 5 else 2
    if len(word) > 4 and jellyfish.metaphone(word) in _console_keys():
        return True
    return any(abs(len(d) - len(word)) <= limit and
               jellyfish.damerau_levenshtein_distance(word, d) <= limit
               for d in _TERMS if len(d) > 3)


def _foreign(word: str, fillers: frozenset[str]) -> bool | None:
    """True: a word the language does not know; False: a filler (may stand beside one);
    None: a word of the console, a number or a name, which keeps the edge."""
    if "-" in word:  # "x-ray": foreign only when every part is
        kinds = [_foreign(p, fillers) for p in word.split("-") if p]
        return None if None in kinds else True in kinds
    low = _ascii_fold(word.lower()).replace("’", "'").replace("'", "")
    if word.isdigit() or _is_num_word(low):
        return None
    if word[:1].isupper() and low in given_names() or low in words("person_titles") or \
            low in words("roles_called"):
        return None
    if low in fillers:
        return False
    if low in known_words() or word.isascii() and _sounds_like_console(low):
        return None  # a recogniser writing English puts no accents: "Hát" is no "height"
    return True


def _a_name(word: str) -> bool:
    low = _ascii_fold(word.lower())
    return word[:1].isupper() and low in given_names() and low not in known_words()


def _edge(seg: list[str], fillers: frozenset[str]) -> bool | None:
    """True: the words may be set aside (one at least is foreign); False: fillers only
    (passed over); None: the edge is part of what was said."""
    kinds = [_foreign(w, fillers) for w in seg]
    if True in kinds and not all(k is not None or j == 0 and _a_name(w)
                                 for j, (w, k) in enumerate(zip(seg, kinds, strict=True))):
        return None  # a name after the foreign word is called ("Danke Anna, …")
    if True in kinds:
        # "Un attimo": a word spelled like a given name beside one the language does not
        # know is the speaker's own word, not someone called ("Pieter" alone stays a name)
        kinds = [True if k is None else k for k in kinds]
    if not 0 < len(seg) <= _MAX_EDGE_WORDS or None in kinds:
        return None
    return True in kinds


_MAX_PARTICLE = 4  # "ka", "na", "dong": a longer unknown last word may be the object itself
_WANTS_OBJECT = {"the", "a", "an", "my", "her", "his", "their", "our", "of", "to", "some", "from",
                 "at", "for", "with", "by", "into", "onto", "toward", "towards", "about", "be"}


def _particle_after(word: str) -> bool:
    """Whether a particle may follow ``word`` ("the patient's zorblat" ends in its object)."""
    low = word.lower()
    return word not in _PAUSES and low not in _WANTS_OBJECT and not low.endswith(("'s", "’s"))


def _amount_slip(before: str, word: str) -> bool:
    """An unknown word where an amount goes ("coronal plus ate") may be a number misheard: it
    is never set aside (the grammar then takes its default step as a guess and asks)."""
    return before.lower() in AMOUNT_BEFORE


def foreign_edges(raw: str) -> str | None:
    """``raw`` without the words of the speaker's own language at its edges ("Toda. Clear it"
    → "Clear it"; "Trachea on dong" → "Trachea on"), or None when there are none."""
    text = raw or ""
    toks = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    fillers = words("command_fillers") | words("musing_markers") | words("wake_fillers") | {
        "davinci"}
    begin, end, first = 0, len(toks), 0
    while True:  # openers, each set off by a pause: "Troppo, troppo. The other way"
        k = begin
        while k < end and toks[k][0] not in _PAUSES:
            k += 1
        kind = _edge([w for w, _, _ in toks[begin:k]], fillers)
        if k >= end - 1 or kind is None:
            break
        begin = k + 1
        while begin < end and toks[begin][0] in _PAUSES:
            begin += 1
        first = begin if kind else first  # fillers alone stay unless a foreign word follows
    begin = first
    while end > begin and toks[end - 1][0] in _PAUSES:
        end -= 1
    k = end
    while k > begin and toks[k - 1][0] not in _PAUSES:
        k -= 1
    if k > begin and _edge([w for w, _, _ in toks[k:end]], fillers):
        end = k - 1  # a closer after a pause: "..., merci"
    elif end - begin >= 3 and _particle_after(toks[end - 2][0]) and \
            len(toks[end - 1][0]) <= _MAX_PARTICLE and _foreign(toks[end - 1][0], fillers) and \
            not _amount_slip(toks[end - 2][0], toks[end - 1][0]):
        end -= 1  # a particle with no pause: "Other way ka"
    while end > begin and toks[end - 1][0] in _PAUSES:
        end -= 1
    if end <= begin or begin == 0 and all(w in _PAUSES for w, _, _ in toks[end:]):
        return None  # nothing set aside but a full stop
    rest = text[toks[begin][1]:toks[end - 1][2]].strip()
    return rest or None


@lru_cache(maxsize=1)
def mid_particles() -> frozenset[str]:
    """Discourse markers that may be set aside inside a request ("the trachea, genau, remove
    it"): not the words that answer, correct or order ("axial up, nah, down"; "coronal,
    first"), nor any word of the console's own."""
    keep = DOMAIN_WORDS | set(_NUMBER_WORDS) | {"first", "firstly", "finally", "lastly", "then"}
    for name in ("answer_yes", "answer_no", "correction_no", "correction_sorry",
                 "negation_words"):
        keep |= set(words(name))
    slips = {"oops", "whoops", "oopsie", "woops", "nah", "nope", "aye", "yeah", "yep", "yes"}
    return frozenset(w for w in words("discourse_markers")
                     if " " not in w and w not in keep and w not in slips)


__all__ = ["foreign_edges", "known_words", "mid_particles"]
