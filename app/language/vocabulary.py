"""The console's vocabulary (DESIGN §2 app/language): the word tables the grammar reads and the
recogniser scores against — planes, directions, views, rotations, structures, fields, verbs,
routing cues, and ``VOCABULARY``, every word the grammar reads. One home for agents and voice
alike. The tables are data in ``data/vocabulary.toml`` (DESIGN §3 "data, not code"); this
module loads them under the names the grammar uses and derives ``VOCABULARY`` and the verb
forms. The open word classes are in ``data/words.toml``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

_DATA = Path(__file__).with_name("data") / "vocabulary.toml"


def _load() -> dict[str, Any]:
    try:
        return tomllib.loads(_DATA.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:  # our own file: the console cannot run
        raise RuntimeError(f"the vocabulary file {_DATA} cannot be read: {exc}") from exc


_V = _load()


def _set(name: str) -> set[str]:
    return set(_V[name]["words"])


def _map(name: str) -> dict[str, Any]:
    return {k: tuple(x) if isinstance(x, list) else x for k, x in _V[name].items()}


PLANE_WORDS: dict[str, str] = _map("planes")
# IV direction words (DESIGN §4, display convention): word -> (plane, sign).
DIRECTIONS: dict[str, tuple[str, int]] = _map("directions")
SIGN_WORDS: dict[str, int] = _map("sign_words")
NAMED_POS: dict[str, str] = _map("named_positions")
WINDOWS: dict[str, str] = _map("windows")
_VAGUE_POS = _set("vague_positions")
_STEP_GLUE = _set("step_glue")
_INDEX_NOUNS = _set("index_nouns")
_APPROXIMATORS = _set("approximators")
REPEAT_COUNTS: dict[str, int] = _map("repeat_counts")
AR_VIEW_WORDS: dict[str, str] = _map("ar_views")
ROTATE_VERBS = _set("rotate_verbs")
ROTATE_DIRS: dict[str, str] = _map("rotation_directions")
STOP_WORDS_ROT = _set("rotation_stop")
STRUCT_WORDS: dict[str, str] = _map("structures")
LOBE_POS: dict[str, str] = _map("lobe_positions")
SIDES: dict[str, str] = _map("sides")
FIELD_WORDS: dict[str, tuple[str, ...]] = _map("fields")
FIELD_PHRASES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (tuple(p["words"]), tuple(p["fields"])) for p in _V["field_phrase"]]
# "breathing tests", "lung function values": a word about breathing with a measurement noun
_PFT_QUALIFIERS = _set("pft_qualifiers")
_PFT_NOUNS = _set("pft_nouns")
_PFT_RE = re.compile(r"\b(?:" + "|".join(sorted(_PFT_QUALIFIERS)) + r") (?:"
                     + "|".join(sorted(_PFT_NOUNS)) + r")(?:s|es)?\b")


def singular(tok: str) -> str:
    """The singular of a plural noun, roughly ("tests" → test, "studies" → study); other
    words unchanged. Used to match field phrases and to fold a plural the console does not
    know onto the word it knows ("the charts"), so rough is enough."""
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is", "ics")):
        return tok[:-1]
    return tok


_singular = singular
OP_WORDS = _set("operation_words")
SHOW_VERBS = _set("show_verbs")
HIDE_VERBS = _set("hide_verbs")
RESET_VERBS = _set("reset_verbs")
ADD_WORDS = _set("add_words")
ONLY_WORDS = _set("only_words")
ZOOM_IN_WORDS = _set("zoom_in_words")
ZOOM_OUT_WORDS = _set("zoom_out_words")
MOVE_VERBS = _set("move_verbs")
QUESTION_WORDS = _set("question_words")
_NEGATION = _set("negation")
REPEAT_WORDS = _set("repeat_words")
# Words with no meaning of their own here: never counted as left over.
FILLER = _set("filler")
SEPARATORS = _set("separators")
SEQ_SEPARATORS = _set("sequence_separators")

IR_STRONG = set(FIELD_WORDS) | _set("ir_cues")
IV_STRONG = set(PLANE_WORDS) | _set("iv_cues")
AR_STRONG = set(STRUCT_WORDS) | _set("ar_cues")

# Every word the grammar reads: the validator counts a sentence with one of them as a command.
VOCABULARY: frozenset[str] = frozenset(
    set(PLANE_WORDS) | set(DIRECTIONS) | set(SIGN_WORDS) | set(NAMED_POS) | set(WINDOWS)
    | set(REPEAT_COUNTS) | set(AR_VIEW_WORDS) | ROTATE_VERBS | set(ROTATE_DIRS)
    | STOP_WORDS_ROT | set(STRUCT_WORDS) | set(LOBE_POS) | set(FIELD_WORDS) | OP_WORDS
    | (SHOW_VERBS - QUESTION_WORDS - _set("weak_show_verbs"))
    | (HIDE_VERBS - _set("weak_hide_words"))
    | RESET_VERBS | ZOOM_IN_WORDS | ZOOM_OUT_WORDS | IR_STRONG | IV_STRONG | AR_STRONG
    | _set("more_grammar_words")
)


# ---------------------------------------------------------------------------------------------
# verb forms
# ---------------------------------------------------------------------------------------------

_VOWELS = set("aeiou")
_IRREGULAR_FORMS: dict[str, str] = _map("irregular_verb_forms")
# Verbs whose -ing/-ed forms are ordinary talk more often than requests ("looking good",
# "we need it", "let me see"): their forms stay words of their own.
_TALK_VERBS = _set("talk_verbs")


def _forms(verb: str) -> set[str]:
    """The -ing and -ed forms of a regular verb, spelled by the usual English rules."""
    if not verb.isalpha() or len(verb) < 3:
        return set()
    if verb.endswith("ie"):
        return {verb[:-2] + "ying", verb + "d"}
    if verb.endswith("e") and not verb.endswith("ee"):
        return {verb[:-1] + "ing", verb + "d"}
    if verb.endswith("y") and verb[-2] not in _VOWELS:
        return {verb + "ing", verb[:-1] + "ied"}
    out = {verb + "ing", verb + "ed"}
    if len(verb) <= 4 and verb[-1] not in _VOWELS | set("wxy") and verb[-2] in _VOWELS and \
            verb[-3] not in _VOWELS:
        out |= {verb + verb[-1] + "ing", verb + verb[-1] + "ed"}  # spin -> spinning
    return out


def verb_lemmas(verbs: set[str], known: set[str]) -> dict[str, str]:
    """Each -ing/-ed form of ``verbs`` (and the irregular ones) mapped to the verb, leaving out
    forms that are words of the vocabulary in their own right (``known``)."""
    out = {f: base for f, base in _IRREGULAR_FORMS.items()
           if base in verbs - _TALK_VERBS and f != base}
    for v in sorted(verbs - _TALK_VERBS):
        for f in _forms(v):
            if f not in known:
                out.setdefault(f, v)
    return out

