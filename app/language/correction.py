"""``correct`` (DESIGN §3 tier 1): repair speech-recognition errors against the domain lexicon —
explicit confusion pairs that need context ("write" → right only where a direction fits), then
phonetic (jellyfish metaphone/NYSIIS) plus fuzzy (rapidfuzz) matching for words that are not
English and not ours; the wake word, lead-ins, word boundaries and disfluencies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jellyfish
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from app.language import matches, phrases, rewrite, rewrite_sources
from app.language import words as language_words
from app.language.command_words import (
    _CONFUSIONS,
    _CONTENT,
    _FUNCTION_WORDS,
    _NUM_RE,
    _PHRASES,
    DOMAIN_WORDS,
    PROTECTED_WORDS,
    _words,
    has_domain_content,
    sounds_like_command,
)
from app.language.normalize import (
    tokens_of,
)
from app.language.rest_and_only import only_what_is_kept, rest_hidden
from app.language.scope import other_talk_word
from app.language.sound_spans import (
    FILLERS,
    SHORTHAND_NEXT,
    commandish,
    heard_plane,
    join_split_words,
    known_said,
    sound_spans,
    two_words,
)
from app.language.vocabulary import (
    LOBE_POS,
    SIDES,
    STRUCT_WORDS,
    VOCABULARY,
    singular,
)
from app.language.wake_word import strip_closing_wake, strip_wake


@dataclass(frozen=True)
class Lexicon:
    """Domain words with their phonetic keys, precomputed once (correction is per command)."""

    words: tuple[str, ...]
    metaphone: dict[str, tuple[str, ...]] = field(default_factory=dict)
    nysiis: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def build(cls, words: Iterable[str] = DOMAIN_WORDS) -> Lexicon:
        ws = tuple(sorted(set(words)))
        meta: dict[str, list[str]] = {}
        nys: dict[str, list[str]] = {}
        for w in ws:
            meta.setdefault(jellyfish.metaphone(w), []).append(w)
            nys.setdefault(jellyfish.nysiis(w), []).append(w)
        return cls(ws, {k: tuple(v) for k, v in meta.items()},
                   {k: tuple(v) for k, v in nys.items()})

    def __contains__(self, word: object) -> bool:
        return word in self._set

    @property
    def _set(self) -> frozenset[str]:
        return _word_set(self.words)


@lru_cache(maxsize=8)
def _word_set(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(words)


DEFAULT_LEXICON = Lexicon.build()


@dataclass
class CorrectionResult:
    text: str
    changes: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, why)


# Context predicates -------------------------------------------------------------------------
_PLANE_CTX = {
    "slice", "slices", "plane", "planes", "view", "views", "image", "images", "cut", "section",
    "to", "at", "by", "up", "down", "forward", "back", "plus", "minus", "middle", "center",
    "max", "min", "top", "bottom", "first", "last", "move", "zoom", "ct", "scan",
}
_SIDE_NEXT = {
    "lung", "lungs", "lobe", "lobes", "upper", "lower", "middle", "side", "view", "and", "again",
    "twice", "thrice", "more", "a", "by", "please", ",", "sagittal", "write", "right", "left",
    "lift", "then", "times", "once", "slightly", "further",
}
_SIDE_PREV = {
    "to", "the", "move", "go", "rotate", "turn", "spin", "swing", "step", "scroll", "write",
    "right", "left", "lift", "and", "more", "then", "further", "bit", "little", "slightly",
    "sagittal", "from", "toward", "towards", "slide", "shift", "pan", "swivel", "tilt",
}
_STRUCT_NOUNS = {
    "lung", "lungs", "lobe", "lobes", "nodule", "nodules", "airway", "airways", "trachea",
    "bronchi", "tumor", "tumors", "rul", "rml", "rll", "lul", "lll", "model", "3d", "anatomy",
    "upper", "lower", "middle", "left", "right", "lesion", "mass", "everything", "all",
    "structures",
}
_FIELD_NOUNS = {
    "age", "sex", "gender", "diagnosis", "comorbidities", "comorbidity", "height", "weight",
    "bmi", "pft", "operation", "surgery", "tumor", "physical", "patient", "info", "information",
    "pulmonary", "lung", "fev1", "fvc", "dlco", "spirometry",
}
_CLAUSE_START = {"", ",", "and", "then", "also", "please", "now", "next", "and then", "so"}


def _ctx_ok(kind: str, toks: list[str], i: int) -> bool:
    prev = toks[i - 1] if i > 0 else ""
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    nxt2 = toks[i + 2] if i + 2 < len(toks) else ""
    rest = set(toks[:i]) | set(toks[i + 1:])
    if kind == "always":
        return True
    if kind == "never":
        return False
    if kind == "cmd":
        return commandish(toks, i)
    if kind == "ct":
        # "city" is CT wherever the sentence is a console command (or the whole utterance).
        verbs = {"show", "display", "open", "remove", "hide", "reset", "zoom", "close", "clear",
                 "bring", "pull", "put", "scan", "scans", "image", "images", "view", "views",
                 "slice", "slices", "move", "initialize", "check", "see"}
        return len(toks) <= 2 or bool(rest & verbs) or nxt in ("scan", "image", "view")
    if kind == "plane":
        return (nxt in _PLANE_CTX or bool(_NUM_RE.match(nxt)) or prev in ("zoom", "on")
                and nxt in ("", "view", "plane", ",", "and"))
    if kind == "shorthand":
        # a plane's shorthand before a step, position or view, or after "zoom"
        before = toks[i - 2] if prev == "," and i > 1 else prev
        return (bool(_NUM_RE.match(nxt)) or nxt in SHORTHAND_NEXT
                or before in ("zoom", "on") and nxt in ("", ",", "and", "view", "please"))
    if kind == "plane_noun":
        return nxt in ("plane", "view", "slice", "image")
    if kind == "side":
        if nxt in ("a", "an", "the", "down", "it", "this", "that", "me", "note", "notes", "up",
                   "report", "off", "on", "in", "to", "home"):
            return prev in ("move", "rotate", "turn", "go", "to") and nxt in ("a",) and \
                nxt2 in ("bit", "little")
        return nxt in _SIDE_NEXT or prev in _SIDE_PREV or nxt == "" and prev != ""
    if kind == "zoom":
        return nxt in ("in", "out", "into", "on", "onto", "toward", "towards")
    if kind == "add":
        # "at the nodules" at the start of a clause is "add the nodules".
        if prev not in _CLAUSE_START:
            return False
        target = nxt2 if nxt in ("the", "a", "an", "both") else nxt
        return target in _STRUCT_NOUNS or target in _FIELD_NOUNS
    if kind == "lung":
        return (prev in ("left", "right", "both", "the", "whole", "entire", "of", "show", "in")
                and nxt not in ("time", "ago", "as", "way", "enough", "will", "term", "is")
                and not (prev == "the" and nxt in ("", ",")) and prev != "how"
                or nxt in ("lobe", "lobes", "nodule", "nodules", "model", "function", "volume",
                           "capacity", "cancer"))
    if kind == "lobe":
        return prev in ("upper", "lower", "middle", "superior", "inferior", "this", "which")
    if kind == "structure":
        return prev in ("the", "show", "add", "hide", "remove", "lung", "on", "to", "and") and \
            commandish(toks, i)
    return False


def _max_edits(n: int) -> int:
    return 1 if n <= 6 else 2 if n <= 9 else 3


def _fuzzy(tok: str, lex: Lexicon) -> str | None:
    """A domain word the token most likely stands for, or None. Conservative on purpose:
    few edits for the length (transpositions count once) and the sound must agree too."""
    if len(tok) < 5 or not tok.isalpha():  # short words are too often other real words
        return None
    best = process.extractOne(tok, lex.words, scorer=OSA.distance,
                              score_cutoff=_max_edits(len(tok)))
    if best is None:
        return None
    word, _, _ = best
    if word == tok or len(word) < 4:
        return None
    meta_t, meta_w = jellyfish.metaphone(tok), jellyfish.metaphone(word)
    same_sound = meta_t == meta_w or jellyfish.nysiis(tok) == jellyfish.nysiis(word)
    # Short words must sound the same ("cornal" ~ coronal, not "clean" ~ clear); long ones
    # may differ a little in sound as well.
    ok = same_sound if len(tok) <= 6 else same_sound or fuzz.ratio(meta_t, meta_w) >= 75
    if len(tok) >= 6 and word[1:] == tok:
        return word  # a long word heard without its first sound ("agittal" = sagittal)
    return word if ok and (tok[0] == word[0] or same_sound) else None


def _in_a_name(tok: str, before: str, after: str, lex: Lexicon) -> str | None:
    """The domain word that sounds like ``tok`` and, with the word next to it, makes one of the
    language's multi-word names ("lungs muddle" → "lungs model", not "lungs middle"): two edits
    more are allowed than for a word alone, the sound must be the same."""
    if len(tok) < 4 or not tok.isalpha():
        return None
    sources = rewrite_sources()
    key = jellyfish.metaphone(tok)
    for word, _, _ in process.extract(tok, lex.words, scorer=OSA.distance, limit=8,
                                      score_cutoff=_max_edits(len(tok)) + 2):
        if word != tok and jellyfish.metaphone(word) == key and (
                (before, word) in sources or (word, after) in sources):
            return word
    return None


# Lead-ins before the request itself: a time clause ("before we dock, ..."), an aside
# ("one more thing, ..."), a politeness frame ("would it be possible to ..."), or a reaction to
# the last step ("that's too much, go down three"). Dropped only when a request follows.
# A request of one word after a lead clause ("on second thought, remove")
_ONE_WORD_REQUESTS = frozenset({"remove", "hide", "show", "reset", "again", "undo", "clear",
                                "zoom", "rotate", "stop"})


def _drop_lead_in(tokens: list[str]) -> tuple[list[str], str]:
    i = 0
    openers = language_words("lead_openers")
    while i < len(tokens) and (tokens[i] in openers or tokens[i] == ","):
        i += 1
    # "bah, too much, zoom out": an interjection may come before the lead clause too
    k = i
    markers = language_words("discourse_markers") - {"right", "first", "finally", "lastly"}
    while k < len(tokens) and (tokens[k] in markers or tokens[k] in openers or tokens[k] == ","):
        k += 1
    for lead in phrases("lead_clauses"):
        if k > i and tuple(tokens[k:k + len(lead)]) == lead and "," in tokens[k + len(lead):]:
            i = k
            break
    for start in dict.fromkeys((0, i)):  # "sorry to interrupt, ...": an opener may begin it
        for lead in phrases("lead_clauses"):
            if tuple(tokens[start:start + len(lead)]) == lead and \
                    "," in tokens[start + len(lead):]:
                cut = tokens.index(",", start + len(lead))
                rest = tokens[cut + 1:]
                said = " ".join(rest)
                if (len(rest) >= 2 or rest and rest[0] in _ONE_WORD_REQUESTS) and (
                        has_domain_content(said) or sounds_like_command(said)):
                    return _drop_lead_in(rest)[0], " ".join(tokens[:cut + 1])
    for frame in phrases("polite_frames"):
        n = len(frame)
        if tuple(tokens[i:i + n]) == frame and len(tokens) > i + n:
            return tokens[:i] + tokens[i + n:], " ".join(frame)
    return tokens, ""


# Words a merged token may start with ("showbmi", "corplus", "sagmax"): command verbs and
# the planes' names and shorthand.
_SPLIT_LEFT = frozenset(_words("""
show hide add remove zoom move rotate reset clear display open turn go cor sag ax axial coronal
sagittal
"""))
# Long domain words a recogniser splits in two ("in farrier" = inferior).
def _cut_off(tok: str) -> str | None:
    """The plane whose name ``tok`` begins ("sagitt", "coron"), or None. Only the planes:
    other terms begin ordinary words and names ("infer", "inform", "Maxim", "poster")."""
    found = [p for p in ("sagittal", "coronal") if p.startswith(tok) and len(p) >= len(tok) + 2]
    return found[0] if found else None


_JOIN_TARGETS = tuple(sorted(w for w in DOMAIN_WORDS if len(w) >= 7))
# Metaphone codes of "zoomin" and its voiced/unvoiced neighbours (z~s~j, t~d)
_ZOOM_IN_SOUNDS = frozenset({"SMN", "JMN", "TMN"})
_PLANE_PREFIXES = (("sag", "sagittal"), ("cor", "coronal"), ("axi", "axial"))


def _is_known(tok: str, lex: Lexicon, protected: frozenset[str] | set[str]) -> bool:
    return (tok in lex or tok in PROTECTED_WORDS or tok in protected or tok in _CONTENT
            or tok in _CONFUSIONS or tok == "," or bool(_NUM_RE.match(tok))
            or not tok.isalpha())


def _split_and_join(tokens: list[str], lex: Lexicon, protected: frozenset[str] | set[str],
                    changes: list[tuple[str, str, str]]) -> list[str]:
    """Repair word boundaries the recogniser got wrong, on words it does not know:
    * merged: a command verb or plane run into a console word ("showbmi" → show bmi,
      "corplus 40" → cor plus 40, "sagmax" → sag max);
    * split: a short word and a fragment that together sound like a long domain word
      ("move in, farrier 15" → move inferior 15: same metaphone, close spelling);
    * a plane heard with a garbled ending before a step ("sagible 200", "coralanol -50")."""
    known = lex.words and frozenset(lex.words) | protected | _CONTENT
    tokens = join_split_words(tokens, lambda w: w in lex, lambda w: _is_known(
        w, lex, protected) or w in _FUNCTION_WORDS, changes)
    out: list[str] = []
    for i, tok in enumerate(tokens):
        if _is_known(tok, lex, protected) or len(tok) < 4:
            out.append(tok)
            continue
        one = singular(tok)
        if one != tok and (one in lex or one in VOCABULARY):
            changes.append((tok, one, "plural of a console word"))  # "the charts", "locations"
            out.append(one)
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        split = next(((tok[:k], tok[k:]) for k in range(2, len(tok) - 1)
                      if tok[:k] in _SPLIT_LEFT and tok[k:] in known and len(tok[k:]) >= 2),
                     None) or two_words(tok)
        if split:
            changes.append((tok, " ".join(split), "merged words"))
            out.extend(split)
            continue
        if nxt in ("on", "onto") and jellyfish.metaphone(tok) in _ZOOM_IN_SOUNDS and \
                commandish(tokens, i):
            # "zoom in on the nodule" run together: "Zimmon on", "Jimin on", "Tymion on"
            changes.append((tok, "zoom in", "merged words"))
            out.extend(["zoom", "in"])
            continue
        j = len(out) - 1
        if j >= 0 and out[j] == "," and j >= 1:
            j -= 1
        if j >= 0 and out[j].isalpha() and len(out[j]) <= 3:
            joined = out[j] + tok
            code = jellyfish.metaphone(joined)
            hit = next((w for w in _JOIN_TARGETS if jellyfish.metaphone(w) == code
                        and fuzz.ratio(joined, w) >= 70), None)
            if hit:
                changes.append((" ".join(out[j:] + [tok]), hit, "split word"))
                del out[j:]
                out.append(hit)
                continue
        if _NUM_RE.match(nxt) or nxt in SHORTHAND_NEXT:
            plane = next((p for pre, p in _PLANE_PREFIXES
                          if tok.startswith(pre) and fuzz.ratio(tok, p) >= 62), None)
            if plane:
                changes.append((tok, plane, "a plane before a step"))
                out.append(plane)
                continue
        out.append(tok)
    return out


# ---------------------------------------------------------------------------------------------
# disfluencies: a spoken false start is corrected by what follows it
# ---------------------------------------------------------------------------------------------

# Words whose repetition is meaningful ("left left left" = three steps, "more more"); every
# other word said twice in a row is a stutter ("go go down", "the the CT").
_REPEAT_MEANS = frozenset(_words("""
    left right up down forward forwards front back backward backwards anterior posterior
    superior inferior upward downward upwards downwards ahead higher lower deeper shallower
    leftward rightward more again in out bigger smaller closer further very much"""))
# Words filling the same slot: one said after a filler replaces one said before it
# ("rotate horizontal uh vertically", "axial uh coronal 40", "left uh right").
_SLOT_CLASSES = (
    frozenset({"axial", "coronal", "sagittal"}),
    frozenset({"horizontal", "horizontally", "vertical", "vertically"}),
    frozenset({"left", "right", "up", "down", "forward", "back", "backward", "anterior",
               "posterior", "superior", "inferior"}),
    frozenset({"rul", "rml", "rll", "lul", "lll"}),
)


def _same_slot(a: str, b: str) -> bool:
    """Does ``b`` (said after a filler) take the place of ``a`` (said before it)?"""
    if a == b or (len(a) >= 3 and b.startswith(a) and not _NUM_RE.match(a)
                  and a not in _FUNCTION_WORDS):
        return True  # a restart, or a word cut off and said in full ("the" is no cut-off)
    return any(a in cls and b in cls for cls in _SLOT_CLASSES)


def _restarted(before: list[str], after: list[str]) -> int:
    """How many words before a filler the words after it say again: the same words up to a
    last one in the same slot ("zoom in on the uh zoom in on the RUL" → 4, "the coronal uh
    the sagittal" → 2, "left uh right" → 1); 0 when the speaker just paused."""
    for k in range(min(6, len(before), len(after)), 0, -1):
        seg = before[-k:]
        if "," not in seg and after[:k - 1] == seg[:-1] and _same_slot(seg[-1], after[k - 1]):
            return k
    return 0


_LOBE_NOUNS = frozenset({"lobe", "lobes", "lung", "lungs"})


def _lobe_phrase_end(tokens: list[str], k: int) -> int:
    """The end of a lobe or lung named from ``k`` ("left lower lobe", "right lung", "lower
    lobe"), or 0."""
    j = k
    if j < len(tokens) and tokens[j] in SIDES:
        j += 1
    if j < len(tokens) and tokens[j] in LOBE_POS:
        j += 1
    return j + 1 if j > k and j < len(tokens) and tokens[j] in _LOBE_NOUNS else 0


def _repair_disfluencies(tokens: list[str]) -> list[str]:
    """Collapse stutters and false starts to the final intent: "go go down uh 15" →
    "go down 15", "coronal uh coronal +40" → "coronal +40", "rotate horizontal uh
    vertically" → "rotate vertically". Fillers go; a command of fillers only stays as it is
    (it is silence, for the validator)."""
    if all(t in FILLERS or t == "," for t in tokens):
        return tokens
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in FILLERS:
            del out[len(out) - _restarted(out, tokens[i + 1:]):]
            i += 1
            continue
        if tok == "not" and out and out[-1] == ",":
            # "180, not 150", "the coronal, not the axial": the value said first is meant
            k = i + 2 if tokens[i + 1:i + 2] == ["the"] else i + 1
            said = [t for t in out if t not in (",", "the", "sorry", "pardon")]
            if k < len(tokens) and said and (
                    _NUM_RE.match(said[-1]) and _NUM_RE.match(tokens[k]) or
                    _same_slot(said[-1], tokens[k]) and said[-1] != tokens[k] or
                    # "show the nodules, not the airway": one structure, not another
                    said[-1] in STRUCT_WORDS and tokens[k] in STRUCT_WORDS and
                    said[-1] != tokens[k] and tokens[k + 1:k + 2] in ([], [","], ["please"])):
                i = k + 1
                continue
            end = _lobe_phrase_end(tokens, k)
            if end and said and (said[-1] in STRUCT_WORDS or said[-1] in _LOBE_NOUNS) and \
                    tokens[end:end + 1] in ([], [","], ["please"]) and \
                    tokens[k:end] != said[-(end - k):]:
                i = end  # "show the nodules, not the left lower lobe"
                continue
        if out and tok == out[-1] and tok not in _REPEAT_MEANS and tok != "," and \
                not _NUM_RE.match(tok):
            i += 1  # a stutter
            continue
        out.append(tok)
        i += 1
    return out


@lru_cache(maxsize=1)
def paused_particle() -> re.Pattern[str]:
    said = sorted(language_words("final_particles"), key=len, reverse=True)
    alts = "|".join(re.escape(w) for w in said)
    return re.compile(r" , (?:" + alts + r") (?=, \S)")


def _again_in_another_language(tokens: list[str]) -> bool:
    """"Noch mal.", "Zai lai yi ci, once more": nothing but "again", one phrase of it in
    another language among them."""
    spans = matches(tokens, "repeat_other_languages")
    covered = {k for a, b in spans for k in range(a, b)}
    rest = [t for k, t in enumerate(tokens) if k not in covered and t != ","]
    return bool(spans) and all(t in _REPEAT_ALONE or t in FILLERS for t in rest)


_REPEAT_ALONE = {"once", "more", "again", "please", "one", "time", "same", "thing"}


def correct(text: str, lexicon: Lexicon | None = None,
            protected: frozenset[str] | set[str] = frozenset()) -> CorrectionResult:
    """Repair speech-recognition errors in a normalised text against the domain lexicon.

    ``protected`` adds words that are right as they are (e.g. a grammar tier's vocabulary).
    """
    lex = lexicon or DEFAULT_LEXICON
    changes: list[tuple[str, str, str]] = []
    tokens = tokens_of(text)
    tokens, wake = strip_wake(tokens)
    changes.extend(wake)
    tokens, wake = strip_closing_wake(tokens)
    changes.extend(wake)
    if _again_in_another_language(tokens):
        changes.append((" ".join(tokens), "again", "'again' in another language"))
        tokens = ["again"]
    joined = " ".join(tokens)
    # "L, L, L": a spelled abbreviation with a pause after each letter
    joined = re.sub(r"\b([a-z]) , (?=[a-z]\b)", r"\1 ", joined)
    # "now the CT, per favore, and zoom in": a closing particle set off by pauses mid-request
    def _aside(m: re.Match[str]) -> str:
        changes.append((m.group(0).strip(), ",", "a particle between pauses"))
        return " "
    joined = paused_particle().sub(_aside, joined)
    for pat, rep, why in _PHRASES:
        def _sub(m: re.Match[str], rep: Any = rep, why: str = why) -> str:
            new = rep(m) if callable(rep) else m.expand(rep)
            if new != m.group(0):
                changes.append((m.group(0), new, why))
            return new
        joined = pat.sub(_sub, joined)
    tokens = joined.split()
    tokens, lead = _drop_lead_in(tokens)
    if lead:
        changes.append((lead, "", "a lead-in, not part of the command"))
    tokens = _split_and_join(tokens, lex, protected, changes)
    tokens = sound_spans(tokens, frozenset(lex.words) | protected, changes)
    out: list[str] = list(tokens)
    for i, tok in enumerate(tokens):
        if tok in _CONFUSIONS:
            meant, ctx = _CONFUSIONS[tok]
            if meant != tok and _ctx_ok(ctx, out, i):
                changes.append((tok, meant, f"sounds like '{meant}' here"))
                out[i] = meant
            continue
        if tok in lex or tok in PROTECTED_WORDS or tok in protected or tok == "," or \
                _NUM_RE.match(tok) or other_talk_word(tok):
            continue
        cand = _in_a_name(tok, out[i - 1] if i else "", tokens[i + 1] if i + 1 < len(
            tokens) else "", lex) or _fuzzy(tok, lex)
        if cand is None and len(tok) >= 5 and tok.isalpha() and tok not in known_said():
            cand = heard_plane(tok, tokens[i + 1:i + 4])  # "accial to minimum"
            if cand is None and i == len(tokens) - 1:
                cand = _cut_off(tok)  # "same for sagitt": the last word cut off
        if cand is not None:
            changes.append((tok, cand, "close in spelling and sound"))
            out[i] = cand
    if len(out) >= 2 and out[-1] == "of" and (out[-2] in lex or out[-2] in _CONTENT):
        # "r u l of", "the CT of": no sentence ends on "of"; it is "off" heard short
        changes.append(("of", "off", "a closing 'of' is 'off'"))
        out[-1] = "off"
    if any(why == "close in spelling and sound" for _, _, why in changes):
        out = rewrite(out)  # "the lungs modal" repaired is "the lungs model": a name again
    fluent = _repair_disfluencies(out)
    if fluent != out:
        changes.append((" ".join(out), " ".join(fluent), "a stutter or false start"))
    alone = only_what_is_kept(rest_hidden(fluent))
    if alone != fluent:
        changes.append((" ".join(fluent), " ".join(alone), "the rest hidden: only what was named"))
        fluent = alone
    result = " ".join(fluent)
    result = re.sub(r"\s+,", ",", result).strip(" ,")
    return CorrectionResult(result, changes)
