"""Where a speaker takes back part of a command: the correction markers (", no,", "sorry",
"I mean", "make that", ", actually,") and the sort of value each side of one names, so that
a number replaces a number and a side a side (used by the self-correction context rule).
"""

from __future__ import annotations

from app.agents.grammar_clauses import _is_num, leaves_out
from app.language import words
from app.language.vocabulary import (
    DIRECTIONS,
    FIELD_WORDS,
    FILLER,
    MOVE_VERBS,
    NAMED_POS,
    PLANE_WORDS,
    ROTATE_VERBS,
    SHOW_VERBS,
    STRUCT_WORDS,
)

# Words that mark a correction and where the corrected part starts.
_CORRECTION_PAIRS = {("i", "mean"), ("i", "meant"), ("or", "rather"), ("make", "that"),
                     ("make", "it"), ("no", "wait")}
_VERBISH = SHOW_VERBS | MOVE_VERBS | ROTATE_VERBS | {"zoom", "hide", "remove", "reset",
                                                      "add", "rotate", "enlarge"}


_INTERJECTIONS = {"oh", "ah", "uh", "um", "er", "erm", "oops", "whoops", "ach", "och"}
_VALUE_KINDS = {"num", "dir", "plane", "field", "structure"}


def _correction_marker(tokens: list[str]) -> tuple[int, int] | None:
    """(start, end) of the last correction marker: ", no," / "sorry," / "I mean" / "or rather"
    / "make that" (only before a value: "make it the coronal", not "make it bigger")."""
    found = None
    tokens = _english_no_and_sorry(tokens)
    n = len(tokens)
    for i, t in enumerate(tokens):
        after_pause = i == 0 or tokens[i - 1] == ","
        nxt = tokens[i + 1] if i + 1 < n else ""
        if t == "sorry" and i > 1 and tokens[i - 1] in _INTERJECTIONS and tokens[i - 2] == "," \
                and _kinds([x for x in tokens[i + 1:i + 4] if x not in (",", "the")][:1]) \
                & _VALUE_KINDS:
            # ", oh sorry, the right lower lobe": an interjection after the pause, then a
            # value of its own ("…, oh sorry, go on" takes nothing back)
            found = (i, i + 1)
            continue
        # "no" corrects only after or before a pause ("left, no, right"; "no, 250"): "no
        # nodules" / "no spinning" are requests
        if t == "no" and nxt == "wait" and after_pause:
            found = (i, i + 2)  # "sagittal big, no wait, the coronal"
        elif (t, nxt) in (("no", "sorry"), ("sorry", "no"), ("no", "no"), ("nah", "sorry"),
                          ("nope", "sorry")) and 0 < i < n - 2:
            found = (i, i + 2)  # "add the height no sorry the weight", with no pause
        elif t in ("wait", "nope", "nah", "scratch") and i > 1 and after_pause and nxt == ",":
            found = (i, i + 1)  # "coronal plus 50, wait, minus 50"
        elif t == "no" and 0 < i < n - 1 and not after_pause and nxt != ",":
            # as a recogniser writes it, with no pause: "axial 40 no 50", "up up up no up up",
            # "the d x no the p f t" — a correction when the words either side are the same
            # sort of value ("no nodules", "no more" stay requests)
            k = i + 2 if nxt == "wait" else i + 1
            after = [x for x in tokens[k:k + 2] if x not in ("the", "a", "an")][:1]
            if after and tokens[i - 1] not in ("the", "a", "an") and \
                    _kinds([tokens[i - 1]]) == _kinds(after) != {"word"}:
                found = (i, k)
        elif (t == "sorry" and 0 < i < n - 1 or (t, nxt) in (("i", "mean"), ("i", "meant"))
              and 0 < i < n - 2) and not after_pause and nxt != "," and tokens[i - 1] not in (
                "no", "nah", "nope", "sorry", "actually", "wait", "oh") and \
                _same_sort(tokens, i, i + (1 if t == "sorry" else 2)):
            # with no pause, as a recogniser writes it: "sagittal plus 60 sorry minus 60",
            # "rotate right i mean left" — the same sort of value either side
            found = (i, i + (1 if t == "sorry" else 2))
        elif t == "actually" and i > 1 and after_pause and nxt == "," and \
                _actually_takes_back(tokens, i):
            found = (i, i + 1)  # "rotate it up, actually, down"
        elif t == "well" and i > 1 and after_pause and nxt == ",":
            found = (i, i + 1)  # "take everything off, well, leave the model, …"
        elif t == "no" and nxt and nxt not in ("more", "longer", "need") and (
                nxt == "," or i > 0 and tokens[i - 1] == "," and not leaves_out(tokens, i)) or \
                t == "sorry" and after_pause and (nxt and nxt != "," or i + 1 == n and i > 2 and
                                                  tokens[i - 2] not in _INTERJECTIONS):
            found = (i, i + 1)  # (a closing "sorry": "vertically, horizontally, sorry")
        elif t == "sorry" and nxt == "," and i + 2 < n and (after_pause or _is_num(tokens[i - 1])):
            found = (i, i + 2)  # "180 pardon, sagittal 180": said after the value it takes back
        elif (t, nxt) in _CORRECTION_PAIRS and (after_pause or tokens[i - 1] in (
                "actually", "sorry", "oh", "wait", "no", "nah")):  # "actually make that 320"
            if t == "make" and not (i + 2 < n and (tokens[i + 2] == "the" or _kinds(
                    [tokens[i + 2]]) & {"num", "dir", "plane", "field", "structure"})):
                continue  # "make that posterior", "make it 320"; not "make it bigger"
            found = (i, i + 2)
    return found


_KEEPS_OR_POINTS = {"too", "also", "well", "add", "it", "them", "that", "this", "those", "keep"}


def _value_kind(toks: list[str]) -> set[str]:
    return next((k for t in toks if (k := _kinds([t]) & _VALUE_KINDS)), set())


def _actually_takes_back(tokens: list[str], i: int) -> bool:
    """", actually," takes back the one request before it when a value of the same sort
    follows ("rotate it up, actually, down"; "the age, actually, give me the PFTs") — not
    when more is added ("…, actually, the LLL as well"), a pronoun points back ("…, actually,
    move it to 300") or an earlier request would be lost ("axial 40, coronal 60, actually,
    sagittal 100")."""
    after = tokens[i + 2:]
    if set(after) & _KEEPS_OR_POINTS:
        return False
    head = [x for x in after if x not in _VERBISH and x not in ("me", "the", "a", "us")][:2]
    before = tokens[:i - 1]
    cut = max((k for k, x in enumerate(before) if x == ","), default=-1)
    earlier, last = before[:max(cut, 0)], before[cut + 1:]
    if any(x in _VERBISH for x in earlier) or _value_kind(earlier) - {"field"}:
        return False
    kind = _value_kind(head)
    return bool(kind) and kind == _value_kind(last[::-1])


def _english_no_and_sorry(tokens: list[str]) -> list[str]:
    """"non" / "nein" between pauses as "no", "pardon" / "perdón" as "sorry" (same length)."""
    no_words, sorry_words = words("correction_no"), words("correction_sorry")
    fillers = words("command_fillers") | FILLER
    out = list(tokens)
    for i, t in enumerate(tokens):
        before = tokens[i - 1] if i else ","
        if t in no_words and before in fillers | {","} and tokens[i + 1:i + 2] in ([","], []):
            out[i] = "no"
        elif t in sorry_words:
            out[i] = "sorry"
    return out


_ADDING = {"and", "also", "too", "plus", "as", "well", "or", ","}


def _same_sort(tokens: list[str], i: int, k: int) -> bool:
    """The words just before ``i`` and just after ``k`` name the same sort of value, with no
    list on either side ("show the age sorry and the BMI" adds; "the diagnosis and the BMI
    sorry the weight" is left to the pauses to tell)."""
    arts = ("the", "a", "an")
    if set(tokens[k:]) & _ADDING or set(tokens[:i]) & {"and", ","}:
        return False
    before = [x for x in tokens[max(0, i - 2):i] if x not in arts]
    after = [x for x in tokens[k:k + 3] if x not in arts][:2]
    return bool(before and after and _kinds(before) & _kinds(after) & _VALUE_KINDS)


def _kinds(tokens: list[str]) -> set[str]:
    """What sort of value the words are (a number replaces a number, a side a side)."""
    lobe = bool({"lobe", "lobes"} & set(tokens))  # "the right middle lobe" is no slice
    return {"num" if _is_num(t) or t in NAMED_POS and not (lobe and t == "middle")
            else "dir" if t in DIRECTIONS
            else "field" if t in FIELD_WORDS
            else "plane" if t in PLANE_WORDS else "structure" if t in STRUCT_WORDS
            or t in ("lobe", "lung") else "word"
            for t in tokens if t not in ("the", "a", "an")}
