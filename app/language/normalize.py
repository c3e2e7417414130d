"""Tier 1 of the interpreter (DESIGN §3): normalise, correct and validate a transcript.

``normalize`` turns free speech-recognition text into a canonical form (lower case, plain
punctuation, contractions expanded, number words as digits, "plus/minus N" as signed steps).
``correct`` repairs speech-recognition errors against the domain lexicon: explicit confusion
pairs that need context ("write" → right only where a direction fits), then phonetic
(jellyfish metaphone/NYSIIS) plus fuzzy (rapidfuzz) matching for words that are not English
and not ours. Ordinary English words are never pulled into the domain without context.
``validate`` says whether the command is in scope, out of scope (OR chatter, fields we do not
hold) or empty/silent.
"""

from __future__ import annotations

import re
import unicodedata

from app.language import replace_phrases, rewrite
from app.language.vocabulary import FIELD_PHRASES, FIELD_WORDS

# ---------------------------------------------------------------------------------------------
# normalisation
# ---------------------------------------------------------------------------------------------

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9,
}
_TEENS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1000}
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50,
    "sixtieth": 60, "seventieth": 70, "eightieth": 80, "ninetieth": 90, "hundredth": 100,
}
_NUMBER_WORDS = {**_UNITS, **_TEENS, **_TENS}
# Words after which a phrase is unfinished: a pause after them is no clause boundary.
_UNFINISHED = {"the", "a", "an", "to", "it", "on", "in", "at", "of", "me", "my", "and", "or",
               "this", "that", "her", "his", "some", "more", "up", "down", "by"}
_SIGN_WORDS = {"plus": "+", "positive": "+", "minus": "-", "negative": "-"}
# Standalone "one" is a pronoun far more often than a number ("the left one"); it is a number
# only after words that take a number.
_NUMERIC_LEADS = {
    "plus", "minus", "by", "to", "slice", "slices", "number", "at", "axial", "coronal",
    "sagittal", "+", "-", "move", "go", "level", "position", "image", "frame", "step", "steps",
    "of", "is",
}
# Plane names are numeric leads ("axial one" = slice 1), but after a determiner the plane is
# an adjective and "one" the noun it modifies: "the coronal one", "that axial one" (a view).
_PLANE_NAMES = {"axial", "coronal", "sagittal"}
_DETERMINERS = {
    "the", "that", "this", "these", "those", "which", "what", "each", "either", "other",
    "another", "a", "an", "your", "my", "our", "same",
}
# Words that may stand between a determiner and the plane in such a noun phrase.
_NP_MODIFIERS = {"big", "small", "little", "large", "main", "other", "first", "same", "left",
                 "right", "top", "bottom", "middle", "upper", "lower"}


def _pronoun_after_plane(out: list[str]) -> bool:
    """Is a "one" right after a plane name the pronoun of a noun phrase ("the coronal one")?"""
    if not out or out[-1] not in _PLANE_NAMES:
        return False
    for tok in reversed(out[-4:-1]):
        if tok in _DETERMINERS:
            return True
        if tok not in _NP_MODIFIERS:
            return False
    return False

_NUMBER_ALT = "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
_AMOUNT = rf"(?:\d+(?:\.\d+)?|{_NUMBER_ALT})(?:[\s-]+(?:\d+|{_NUMBER_ALT}))*(?![a-z\d])"
_CONTRACTIONS = [
    (re.compile(r"\b(can)'?t\b"), r"\1 not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"\bshan't\b"), "shall not"),
    (re.compile(r"\bain'?t\b"), "is not"),
    # a dropped g ("mornin'", "goin' up", "darlin'"): the word as written in full
    (re.compile(r"\b([a-z]{2,}in)'(?=[\s,.!?;:]|$)"), r"\1g"),
    # letters left out as said ("an' her lung function", "top o' the screen", "an' a'")
    (re.compile(r"\ban'(?=[\s,.!?;:]|$)"), "and"),
    (re.compile(r"\bo'(?=\s)"), "of"),
    (re.compile(r"\ba'(?=[\s,.!?;:]|$)"), "all"),
    (re.compile(r"\blet's\b"), "let us"),
    (re.compile(r"\b(\w+)n't\b"), r"\1 not"),
    (re.compile(r"\b(what|where|how|who|it|that|there|here|which|when|why)'s\b"), r"\1 is"),
    (re.compile(r"\b(\w+)'re\b"), r"\1 are"),
    (re.compile(r"\b(\w+)'ll\b"), r"\1 will"),
    (re.compile(r"\b(\w+)'ve\b"), r"\1 have"),
    (re.compile(r"\b(\w+)'d\b"), r"\1 would"),
    (re.compile(r"\bi'm\b"), "i am"),
    # "her BMI's thirty one": before an amount that ends the clause, "'s" is "is" (a value
    # stated, not a possessive: "the patient's one lung" keeps its noun)
    (re.compile(r"\b(\w+)'s(?=\s+(?:about|around|roughly|nearly|almost|only|just|over|under)?"
                r"\s*" + _AMOUNT + r"(?:\s*(?:[,.;:!?]|$)|\s+(?:point|percent|kilos?|kg|"
                r"kilograms?|years?|cm|centimet(?:er|re)s?|met(?:er|re)s?|lit(?:er|re)s?|ish)\b))"),
     r"\1 is"),
    # "the fissure's pretty incomplete", "the model's too small": before a degree word or a
    # participle, "'s" is "is" (no possessed noun follows those; "the nodule's not showing"
    # is left to the complaint reading)
    (re.compile(r"\b(\w+)'s(?=\s+(?:pretty|very|really|quite|so|too|rather|fairly|"
                r"completely|totally|looking|getting)\b)"), r"\1 is"),
    (re.compile(r"\b(\w+)'s(?=\s+(?:been|gone|got)\b)"), r"\1 has"),
    (re.compile(r"\b(\w+)'s\b"), r"\1"),  # possessive: "patient's age" -> "patient age"
    (re.compile(r"\b(\w+s)'(?=\s|$)"), r"\1"),
]

_TOKEN_RE = re.compile(r"[+-]?\d+(?:\.\d+)?(?:st|nd|rd|th|x|d)?(?![a-z])|[a-z]+\d*|\d+[a-z]+|,")


def _ascii_fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = (text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")
            .replace("\u2212", "-").replace("\u2013", "-").replace("\u2014", " , "))
    # Drop accents (café -> cafe); keep other scripts out: the grammar is English.
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return text


# Words after which ", right?" is one more step ("go right, right, right?"), not a tag
# question; a small set of its own: the grammar's DIRECTIONS (app.agents.lexicon) import this
# module.
_DIRECTION_WORDS = frozenset({"right", "left", "up", "down", "forward", "back", "backward",
                              "backwards", "again", "more", "further"})


def _punctuation(text: str) -> str:
    text = re.sub(r"(\d),(\d{3})\b", r"\1\2", text)  # 1,000 -> 1000
    text = re.sub(r"(?<=\d)ish\b", " ish", text)  # "60ish" (an estimate) -> "60 ish"
    text = re.sub(r"\b(no|num)\.\s*(?=\d)", "number ", text)
    text = text.replace("#", " number ")
    text = re.sub(r"(?<=[a-z])\.(?=[a-z]\b)", " ", text)  # "p.f.t." -> "p f t"
    text = re.sub(r"(?<![\w])([+-])\s+(?=\d)", r"\1", text)  # "+ 100" -> "+100"
    text = re.sub(r"(?<=[a-z])\s+[+&]\s+(?=[a-z])", " and ", text)  # "pt info + CT"
    text = re.sub(r"\b3\s*-?\s*d\b", "3d", text)
    text = re.sub(r"(?<=\w)-(?=[a-z])", " ", text)  # "right-upper", "x-ray"
    text = re.sub(r"(?<=[a-z])-(?=\d)", " ", text)  # "fev-1", "sag-40" (see below)
    # "ax 40" written "x40" (the unstressed a lost), as a command of its own
    text = re.sub(r"(?:^|(?<=, ))x ?(?=\d+\b)", "ax ", text)
    text = re.sub(r"(\d)\s*%", r"\1 percent", text)
    # a tag question asks for agreement and gives no direction ("she's 60ish, right? show
    # the age"; "that's the lower lobe, right? zoom in on it")
    text = re.sub(r"([a-z0-9']+)\s*,\s*right\s*\?",
                  lambda m: m.group(0) if m.group(1) in _DIRECTION_WORDS else m.group(1) + ".",
                  text)
    # a sentence break inside the command is a pause ("that's the apex. the model now";
    # "a bit far forward; back by ten"; "wasn't it? put the PFT up")
    # "ehm... forward fifty": a pause after a first word alone is a comma
    text = re.sub(r"^\s*([a-z]+)\s*(?:\.{2,}|…)\s*(?=[a-z0-9])", r"\1, ", text)
    # "one minute... coronal", "wait a sec... the RUL": so after a short opening aside that
    # is not a phrase left unfinished ("show the... axial" stays one phrase)
    text = re.sub(r"^\s*([a-z]+(?: [a-z]+){1,2})\s*(?:\.{2,}|…)\s*(?=[a-z0-9])",
                  lambda m: m.group(1) + (" " if set(m.group(1).split()) & _UNFINISHED
                                          else ", "), text)
    # "ai, não... the other way", "hmm... zoom in": a pause after a negation or a filler
    text = re.sub(r"\b(no|nao|non|nein|nee|nah|wait|sorry|hmm|um|uh|er|erm|eh|euh)\s*"
                  r"(?:\.{2,}|…)\s*(?=[a-z0-9])", r"\1, ", text)
    # "the lower lobe as well... the right lower, I mean": a pause after a word that ends a
    # phrase is a comma
    text = re.sub(r"\b(well|too|also|please|then|again|now)\s*(?:\.{2,}|…)\s*(?=[a-z0-9])",
                  r"\1, ", text)
    # "go right... sorry, left": a pause before a correction is a comma
    text = re.sub(r"(?<=[a-z0-9'])\s*(?:\.{2,}|…)\s*(?=(?:sorry|no|i mean|rather)\b)", ", ",
                  text)
    text = re.sub(r"(?<=[a-z0-9'])\s*[;?!]+\s*(?=[a-z0-9])", ", ", text)
    text = re.sub(r"\b(dr|mr|mrs|ms|prof|st)\.\s+(?=[a-z])", r"\1 ", text)  # "Dr. Park"
    text = re.sub(r"(?<=[a-z'])\.\s+(?=[a-z])", ", ", text)
    text = re.sub(r"[;:!?.()\[\]{}\"/\\|*_=<>~^&@$]", " ", text)
    text = text.replace("&", " and ")
    text = re.sub(r"(?<!\S)'|'(?!\S)", " ", text)  # quotes, not apostrophes inside words
    text = text.replace("'", "")
    return text


def _is_num_word(tok: str) -> bool:
    return tok in _NUMBER_WORDS or tok in _SCALES


def _parse_number_run(words: list[str]) -> list[int]:
    """Number words -> values; a run may hold several numbers ("ten twenty fifty")."""
    out: list[int] = []
    total, current = 0, 0
    last: str | None = None  # class of the previous word: unit, teen, tens, scale
    started = False

    def flush() -> None:
        nonlocal total, current, started, last
        if started:
            out.append(total + current)
        total, current, started, last = 0, 0, False, None

    tail: int | None = None  # a unit said right after "hundred" ("one hundred three ...")
    for w in words:
        if w in _SCALES:
            scale = _SCALES[w]
            if scale == 100 and current >= 100 and tail is not None and 0 < tail < 10:
                # "one hundred three hundred five hundred": a new hundred starts a new number
                out.append(total + current - tail)
                total, current = 0, tail * 100
            elif scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
            started, last = True, "scale"
            if scale != 100 or current < 100:
                tail = None
            continue
        val = _NUMBER_WORDS[w]
        cls = "unit" if w in _UNITS else "teen" if w in _TEENS else "tens"
        if not started:
            current, started, last = val, True, cls
            continue
        if last == "tens" and cls == "unit" and current % 10 == 0:
            current += val  # twenty five
        elif last == "scale" and (current % 100 == 0):
            current += val  # hundred twenty
            tail = val if cls == "unit" else None
        elif (last == "unit" and cls in ("tens", "teen") and current < 10 and total == 0):
            current = current * 100 + val  # spoken hundreds: "two fifty" = 250
        elif last == "tens" and cls == "unit":
            current += val
        else:
            flush()
            current, started, last = val, True, cls
            continue
        last = cls
    flush()
    return out


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# Quantity words ("back by a dozen", "half a dozen slices down", "a couple of slices").
_QUANTITIES = ((("half", "a", "dozen"), ("six",)), (("a", "dozen"), ("twelve",)),
               (("a", "couple", "of"), ("two",)), (("a", "couple"), ("two",)),
               (("a", "pair", "of"), ("two",)))


def _quantities(tokens: list[str]) -> list[str]:
    return replace_phrases(tokens, _QUANTITIES)


def _digit_run(run: list[str]) -> int | None:
    """Digits said one by one with "oh" for zero ("one oh five" = 105), else None."""
    if len(run) >= 3 and all(w in _UNITS or w == "oh" for w in run) and \
            any(w in ("oh", "zero") for w in run[1:]) and run[0] not in ("oh", "zero"):
        return int("".join("0" if w == "oh" else str(_UNITS[w]) for w in run))
    return None


_SPELL = {v: k for k, v in {**_UNITS, **_TEENS, **_TENS}.items() if k != "fourty"}


def _spelled(n: int) -> list[str]:
    """The words of 0..99 ("42" -> ["forty", "two"])."""
    if n in _SPELL:
        return [_SPELL[n]]
    return [_SPELL[n - n % 10], _SPELL[n % 10]]


def _mixed_numbers(tokens: list[str]) -> list[str]:
    """One spoken number the recogniser wrote partly in digits: "3 hundred and 12" is 312
    (digits beside a scale word are spelled out, so the word parser reads the whole run),
    "200 and 10" is 210 (a round hundred, "and", then less than a hundred) and "1 50" is
    150 (hundreds said as "one fifty")."""
    out: list[str] = []
    n = len(tokens)
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else ""
        before = tokens[i - 2] if i > 1 else ""
        nxt = tokens[i + 1] if i + 1 < n else ""
        pair = len(tok) == 1 and nxt.isdigit() and len(nxt) == 2 and "0" not in (tok, nxt[0]) or \
            len(tok) == 2 and len(prev) == 1 and prev.isdigit() and "0" not in (prev, tok[0])  # "1 50": 150
        # "plus 1 fifty": a digit before a tens word is the hundreds of one number, as in
        # "1 50" (one amount after a sign or direction, not a list: "move to 5 twenty 30")
        after = tokens[i + 2] if i + 2 < n else ""
        pair = pair or len(tok) == 1 and tok != "0" and (nxt in _TENS or nxt in _TEENS) and \
            prev in _AMOUNT_LEADS and not (after.isdigit() or _is_num_word(after) or after in (
                "times", "time"))
        if tok.isdigit() and int(tok) < 100 and (
                nxt in _SCALES and len(tok) == 1 or prev in _SCALES or pair or
                prev == "and" and before in _SCALES):
            out.extend(_spelled(int(tok)))
        elif tok.isdigit() and 0 < int(tok) < 100 and prev == "and" and before.isdigit() and \
                len(out) >= 2 and out[-2].isdigit() and 100 <= int(before) < 1000 and \
                int(before) % 100 == 0 and nxt not in ("and", ",") and not nxt.isdigit():
            out[-2:] = [str(int(before) + int(tok))]
        else:
            out.append(tok)
    return out


# Words after which one amount is said: a sign, a direction or a plane's name ("move to 5 0
# 0" may be three slices, one per plane)
_AMOUNT_LEADS = {"minus", "plus", "up", "down", "forward", "back", "backward", "left", "right",
                 "axial", "coronal", "sagittal", "by"}


def _digits_said_apart(tokens: list[str]) -> list[str]:
    """Single digits the recogniser wrote apart, a zero among them, where one amount is said
    ("minus 2 0" = -20, "sagittal minus 2 0 0" = -200, "axial 1 0 5" = 105)."""
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        j = i
        while j < n and len(tokens[j]) == 1 and tokens[j].isdigit():
            j += 1
        run = tokens[i:j]
        prev = tokens[i - 1] if i else ""
        if 2 <= len(run) <= 3 and run[0] != "0" and "0" in run[1:] and prev in _AMOUNT_LEADS:
            out.append(str(int("".join(run))))
            i = j
        elif run:
            out.extend(run)
            i = j
        else:
            out.append(tokens[i])
            i += 1
    return out


def _numbers(tokens: list[str]) -> list[str]:
    return _digits_said_apart(_number_words(tokens))


def _number_words(tokens: list[str]) -> list[str]:
    out: list[str] = []
    tokens = _mixed_numbers(_quantities(tokens))
    i = 0
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        # "a hundred" -> 100
        if tok == "a" and i + 1 < n and tokens[i + 1] in _SCALES:
            tokens[i] = "one"
            tok = "one"
        # "6 hundred" (a recogniser's digits before a spoken scale) -> 600
        if tok.isdigit() and len(tok) == 1 and i + 1 < n and tokens[i + 1] in _SCALES and \
                not (i + 2 < n and _is_num_word(tokens[i + 2])):
            out.append(str(int(tok) * _SCALES[tokens[i + 1]]))
            i += 2
            continue
        if _is_num_word(tok):
            j = i
            run: list[str] = []
            while j < n:
                t = tokens[j]
                if _is_num_word(t):
                    run.append(t)
                    j += 1
                elif t == "oh" and run and run[-1] in _UNITS and j + 1 < n and \
                        tokens[j + 1] in _UNITS:
                    run.append(t)  # "one oh five"
                    j += 1
                elif (t == "and" and run and run[-1] in _SCALES and j + 1 < n
                      and tokens[j + 1] in _NUMBER_WORDS):
                    j += 1  # "one hundred and twenty"
                else:
                    break
            prev = out[-1] if out else ""
            nxt = tokens[j] if j < n else ""
            if (run == ["one"] and (prev not in _NUMERIC_LEADS or _pronoun_after_plane(out))
                    and prev not in _SIGN_WORDS
                    and nxt not in ("time", "times", "slice", "slices", "step", "steps")):
                out.append(tok)  # pronoun "one"
                i += 1
                continue
            if run == ["two"] and all(t in ",.?!" for t in tokens[j:]) and (
                    prev in FIELD_WORDS or any(out[-len(w):] == list(w) for w, _ in FIELD_PHRASES)):
                out.append("too")  # "and the diagnosis two": a field takes no number
                i = j
                continue
            digits = _digit_run(run)
            values = [digits] if digits is not None else _parse_number_run(run)
            out.extend(str(v) for v in values)
            i = j
            continue
        if tok in _ORDINALS:
            nxt = tokens[i + 1] if i + 1 < n else ""
            prev = out[-1] if out else ""
            # "first"/"last" are named positions and "second" is also time; only ordinals
            # that cannot be anything else, or that close a compound ("twenty first"), go.
            if prev.isdigit() and int(prev) % 10 == 0 and 20 <= int(prev) < 100 \
                    and _ORDINALS[tok] < 10:
                out[-1] = _ordinal(int(prev) + _ORDINALS[tok])
            elif tok == "first" or (tok == "second" and nxt not in (
                    "slice", "image", "plane", "view", "one", "frame")):
                out.append(tok)
            else:
                out.append(_ordinal(_ORDINALS[tok]))
            i += 1
            continue
        out.append(tok)
        i += 1
    return out


def _signs(tokens: list[str]) -> list[str]:
    """"plus 50" -> "+50", "minus ten" (already 10) -> "-10"; "slice number 5" -> "slice 5"."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if tok in _SIGN_WORDS and re.fullmatch(r"\d+", nxt):
            out.append(_SIGN_WORDS[tok] + nxt)
            i += 2
            continue
        if tok in ("number", "no", "num") and re.fullmatch(r"[+-]?\d+", nxt) and out \
                and out[-1] in ("slice", "slices", "image", "frame", "position", "level"):
            i += 1  # "slice number 5" -> "slice 5"
            continue
        out.append(tok)
        i += 1
    return out


# The side said after the lobe ("the lower lobe, the right one", "upper lobe, left side one")
_SIDE_AFTER = re.compile(r"\b((?:right|left) )?(upper|middle|lower) (lobes?) ?,? (?:the )?"
                         r"(right|left)(?: side one| one| side(?! view| views))\b")


# ... or after a list of lobes, for all of them ("the middle lobe and the lower one, of the
# right side")
_SIDE_AFTER_LIST = re.compile(
    r"\b(?<!right )(?<!left )((?:upper|middle|lower) (?:lobes?|one)(?: and (?:the )?"
    r"(?:upper|middle|lower) (?:lobes?|one))+) ?,? (?:of|on|in|from) the (right|left)"
    r"(?: side| lung| hand side)?\b(?! view)")


def _side_over_list(m: re.Match[str]) -> str:
    side = m.group(2)
    parts = re.findall(r"(upper|middle|lower) (?:lobes?|one)", m.group(1))
    if side == "left" and "middle" in parts:
        return m.group(0)  # there is no left middle lobe: left as said, for the grammar to ask
    return " and ".join(f"the {side} {p} lobe" for p in parts).removeprefix("the ")


def _side_first(m: re.Match[str]) -> str:
    if m.group(1):  # a side already said before the lobe: leave the words as they are
        return m.group(0)
    return f"{m.group(4)} {m.group(2)} {m.group(3)}"


def normalize(text: str) -> str:
    """Canonical lower-case text with digits for numbers and +N/-N for spoken steps."""
    if not text:
        return ""
    text = _ascii_fold(text).lower()
    for pat, rep in _CONTRACTIONS:
        text = pat.sub(rep, text)
    text = _punctuation(text)
    tokens = rewrite(_TOKEN_RE.findall(text))  # the language's phrase data (app/language)
    tokens = _numbers(tokens)
    tokens = _signs(tokens)
    out = " ".join(tokens)
    out = re.sub(r"\b3 d\b", "3d", out)  # "three d"
    out = _SIDE_AFTER_LIST.sub(_side_over_list, out)
    out = _SIDE_AFTER.sub(_side_first, out)
    out = re.sub(r"\s+,", ",", out)
    out = re.sub(r"(,\s*)+", ", ", out).strip(" ,")
    return out


def tokens_of(text: str) -> list[str]:
    """The tokens of a normalised text (commas are their own tokens)."""
    return _TOKEN_RE.findall(text)
