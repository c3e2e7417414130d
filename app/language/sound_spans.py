"""Console terms a recogniser wrote as other words (DESIGN §3 tier 1): words that together
sound like one term ("sad jittal" = sagittal, "row tate" = rotate), one word with a term's
sound key ("accial", "fizzical"), and two words of the language run together ("hidethe",
"patientinfo"). jellyfish gives the sound keys and rapidfuzz the distances; matching across
word boundaries is ours, no library does it.
"""

from __future__ import annotations

from collections.abc import Callable

import jellyfish
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from app.language.command_words import _NUM_RE, DOMAIN_WORDS

# Fillers of hesitation: a word right before one may be cut off ("vertic uh horizontally").
FILLERS = frozenset({"uh", "um", "umm", "uhm", "uhh", "er", "erm", "hmm", "ah", "eh"})

# Words after which a plane's name stands ("sad it all 200", "corplus 40")
SHORTHAND_NEXT = {"plus", "minus", "max", "min", "maximum", "minimum", "middle", "center",
                  "up", "down", "view", "slice", "first", "last", "top", "bottom"}

_COMMAND_CUES = {
    "show", "display", "open", "hide", "remove", "clear", "reset", "zoom", "rotate", "turn",
    "spin", "move", "go", "scroll", "add", "enlarge", "magnify", "view", "slice", "slices",
    "plane", "scan", "ct", "model", "3d", "lobe", "lobes", "lung", "lungs", "up", "down",
    "left", "right", "forward", "back", "axial", "coronal", "sagittal", "nodule", "nodules",
    "airway", "middle", "max", "min", "to", "plus", "minus", "and", "the",
}


def commandish(toks: list[str], i: int) -> bool:
    """Does the rest of the sentence read as a console command (or is it very short)?"""
    others = [t for j, t in enumerate(toks) if j != i and t != ","]
    if len(others) <= 2:
        return True
    strong = _COMMAND_CUES - {"to", "and", "the", "up", "down", "back", "right", "left"}
    return any(t in strong or _NUM_RE.match(t) for t in others)


_SIDES = frozenset({"left", "right", "down", "over", "back", "front", "top", "side", "out"})


def known_said() -> frozenset[str]:
    """Every word of the console's language (imported late: known_words reads the
    sound-alike table, whose scorer imports the corrector that imports this module)."""
    from app.language.known_words import known_words

    return known_words()


def two_words(tok: str) -> tuple[str, str] | None:
    """An unknown token that is two words of the console's language run together, one of
    them a console word ("hidethe" → hide the, "patientinfo" → patient info)."""
    said = known_said()
    for k in sorted(range(2, len(tok) - 1), key=lambda k: -min(k, len(tok) - k)):
        left, right = tok[:k], tok[k:]
        if left in said and right in said and (left in DOMAIN_WORDS or right in DOMAIN_WORDS) \
                and min(len(left), len(right)) >= 3 and not {left, right} & _SIDES:
            return left, right  # ("downright", "leftover" are words of their own)
    return None


# Console terms a recogniser writes as other words that sound alike ("sad jittal", "row
# tate"): long, distinctive terms only. Words of ordinary speech lie too near the rest
# ("superb" ~ superior, "initially" ~ initialise, "needles" ~ nodules, "can tear" ~ centre).
_PLANES = frozenset({"axial", "coronal", "sagittal"})
_DISTINCT = _PLANES | {"rotate", "anterior", "posterior", "inferior", "horizontal", "vertical",
                       "trachea", "bronchus"}
_SOUND_TARGETS = tuple((w, jellyfish.metaphone(w)) for w in sorted(_DISTINCT))


def sounds_like_term(said: str, plane_slot: bool = False) -> str | None:
    """The console term that ``said`` (one word, or words run together) sounds like: the
    same sound key, or one sound apart and spelled much alike; else None. Words that
    together stand where a plane's name goes (``plane_slot``: right before its amount) need
    less likeness of spelling to be a plane one sound apart ("sad a tool 300"): one word
    there may be a word of its own ("corner 50")."""
    code = jellyfish.metaphone(said)
    if len(code) < 3:
        return None
    best: tuple[float, str] | None = None
    for w, wcode in _SOUND_TARGETS:
        ratio = fuzz.ratio(said, w)
        near = Levenshtein.distance(code, wcode)
        # (one sound swapped, not dropped: "set all 3" is no "sagittal 3")
        floor = 50 if plane_slot and w in _PLANES and len(code) == len(wcode) else 65
        alike = near == 0 and ratio >= 50 or near == 1 and len(wcode) >= 4 and ratio >= floor \
            and said[0] == w[0]
        if alike and (best is None or ratio > best[0]):
            best = (ratio, w)
    return best[1] if best else None


def before_amount(after: list[str]) -> bool:
    """Do the words after a word start the amount a plane takes ("200", "plus 40", "to the
    minimum")?"""
    nxt = after[1:2] if after[:1] == ["to"] else after[:1]
    if nxt == ["the"]:
        nxt = after[2:3]
    return bool(nxt) and bool(_NUM_RE.match(nxt[0]) or nxt[0] in SHORTHAND_NEXT)


def heard_plane(tok: str, after: list[str]) -> str | None:
    """The plane one unknown word stands for right before its amount ("accial to minimum"),
    else None: elsewhere a word of ordinary speech may sound like any console term."""
    hit = sounds_like_term(tok) if before_amount(after) else None
    return hit if hit in _PLANES else None


_NOT_IN_A_NAME = (_COMMAND_CUES - {"a"}) | {"it", "that", "this", "all", "set", "put", "get",
                                           "let", "in", "at", "on", "call", "cut"}


def sound_spans(tokens: list[str], ours: frozenset[str] | set[str],
                changes: list[tuple[str, str, str]]) -> list[str]:
    """Two or three words that together sound like one console term, at least one of them
    no word of the console's language, in a sentence that reads as a command."""
    said = known_said()
    out = list(tokens)
    i = 0
    while i < len(out):
        for n in (3, 2):
            span = out[i:i + n]
            if len(span) < n or not all(t.isalpha() for t in span) or any(
                    t in ours or t in DOMAIN_WORDS or t in FILLERS
                    for t in span) or out[i + n:i + n + 1] and out[i + n] in FILLERS or \
                    not commandish(out, i):
                continue
            # ordinary words all ("sad it all") only where a plane goes: before its amount
            # (the looser likeness only for words that do nothing else there: "set it all
            # to 300" is all planes, "set the dial 30" no plane)
            slot = before_amount(out[i + n:i + n + 3])
            if all(t in said for t in span) and not slot:
                continue
            hit = sounds_like_term("".join(span),
                                   plane_slot=slot and not set(span) & _NOT_IN_A_NAME)
            if hit is not None and (hit in _PLANES or not all(t in said for t in span)):
                changes.append((" ".join(span), hit, "words that sound like one term"))
                out[i:i + n] = [hit]
                break
        i += 1
    return out


def join_split_words(tokens: list[str], console_word: Callable[[str], bool],
                     known: Callable[[str], bool],
                     changes: list[tuple[str, str, str]]) -> list[str]:
    """Two words that are no words of the console and run together spell one exactly ("show
    the mod el" → model, "no dules" → nodules): the recogniser split it."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        a, b = tokens[i], tokens[i + 1] if i + 1 < len(tokens) else ""
        whole = a + b
        if b and a.isalpha() and b.isalpha() and len(whole) >= 5 and console_word(whole) and \
                not (known(a) or known(b)):
            changes.append((f"{a} {b}", whole, "split word"))
            out.append(whole)
            i += 2
            continue
        out.append(a)
        i += 1
    return out
