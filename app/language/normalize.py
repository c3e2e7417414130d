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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jellyfish
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from app.language import phrases, replace_phrases, rewrite
from app.language import words as language_words

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

_CONTRACTIONS = [
    (re.compile(r"\b(can)'?t\b"), r"\1 not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"\bshan't\b"), "shall not"),
    (re.compile(r"\bain'?t\b"), "is not"),
    # a dropped g ("mornin'", "goin' up", "darlin'"): the word as written in full
    (re.compile(r"\b([a-z]{2,}in)'(?=[\s,.!?;:]|$)"), r"\1g"),
    (re.compile(r"\blet's\b"), "let us"),
    (re.compile(r"\b(\w+)n't\b"), r"\1 not"),
    (re.compile(r"\b(what|where|how|who|it|that|there|here|which|when|why)'s\b"), r"\1 is"),
    (re.compile(r"\b(\w+)'re\b"), r"\1 are"),
    (re.compile(r"\b(\w+)'ll\b"), r"\1 will"),
    (re.compile(r"\b(\w+)'ve\b"), r"\1 have"),
    (re.compile(r"\b(\w+)'d\b"), r"\1 would"),
    (re.compile(r"\bi'm\b"), "i am"),
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
    # "go right... sorry, left": a pause before a correction is a comma
    text = re.sub(r"(?<=[a-z0-9'])\s*(?:\.{2,}|…)\s*(?=(?:sorry|no|i mean|rather)\b)", ", ",
                  text)
    text = re.sub(r"(?<=[a-z0-9'])\s*[;?!]+\s*(?=[a-z0-9])", ", ", text)
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


def _numbers(tokens: list[str]) -> list[str]:
    out: list[str] = []
    tokens = _quantities(tokens)
    i = 0
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        # "a hundred" -> 100
        if tok == "a" and i + 1 < n and tokens[i + 1] in _SCALES:
            tokens[i] = "one"
            tok = "one"
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
    out = re.sub(r"\s+,", ",", out)
    out = re.sub(r"(,\s*)+", ", ", out).strip(" ,")
    return out


def tokens_of(text: str) -> list[str]:
    """The tokens of a normalised text (commas are their own tokens)."""
    return _TOKEN_RE.findall(text)


# ---------------------------------------------------------------------------------------------
# the domain lexicon and correction
# ---------------------------------------------------------------------------------------------

def _words(text: str) -> list[str]:
    """A word list written as a block of text (easier to read and extend than a literal)."""
    return text.split()


# Words the grammar knows. Fuzzy/phonetic repair aims only at these.
DOMAIN_WORDS: frozenset[str] = frozenset(_words("""
axial coronal sagittal transverse frontal ct scan scans slice slices plane planes view views
zoom rotate rotation rotating horizontal horizontally vertical vertically anterior posterior
superior inferior surgical lobe lobes lung lungs nodule nodules trachea bronchi bronchus
bronchial airway airways tumor tumour tumors tumours upper lower middle left right diagnosis
comorbidities comorbidity operation surgery height weight bmi pft pulmonary function
spirometry patient information info physical sex gender age mediastinum mediastinal window
lingula maximum minimum center centre initialize initialise reset display enlarge magnify model
anatomy structures structure show hide remove clear forward backward backwards upward downward
move clockwise counterclockwise anticlockwise lateral reconstruction
"""))

# Common English (and command) words that must never be "corrected" by fuzzy matching.
PROTECTED_WORDS: frozenset[str] = frozenset(_words("""
a an the and or but then also to of in on at by for from with without into onto up down out
off over under back front top bottom first last next previous this that these those it its
is are was were be been am do does did done have has had will would could should can may
might must shall please now again more less bit little lot all everything nothing only just
what where when why how who which whose whom show open bring put set get give let make go
take turn spin swing keep stop start close hide clear erase delete remove reset restore
display see look view need want like can you me my we us our i he she they them their his her
yes no not okay ok thanks thank hello hi hey high low long load later lateral large small
big bigger smaller closer further farther little lot side sides both each every other once
twice thrice times time step steps image images picture pictures screen main box text panel
sure right left good fine great done stop wait hold still pause continue same current old
new age sex name date day today tomorrow year years tall heavy weight height body whole full
complete entire basic clinical medical history data details detail record chart result
results test tests value values level levels number numbers percent slice slices scan scans
cancer lesion mass spot location site position where located find locate move rotate zoom
again repeat undo redo enlarge shrink focus center centre middle half quarter degrees degree
around about slightly slowly quickly fast slow little further towards toward along across
info information patient patients diagnosis operation surgery procedure planned scheduled
function lung lungs lobe lobes upper lower model anatomy window vessel sealer stapler suction
music phone call page camera light lights table bed temperature pressure rate blood heart
oxygen saturation pulse vital vitals sign signs anesthesia anaesthesia insufflation gas
weather coffee lunch joke song radio volume loud louder quiet doctor nurse team coughing
bleeding breathing moving awake asleep stable unstable allergy allergies medication
medications medicine drugs drug type irrigation sponge count specimen bag port ports trocar
instrument instruments clip clips suture sutures needle scissors grasper forceps retractor
energy cautery bovie mode actual access excel city corona write june long load low module
modules noodle rule later letter latter laterally axis axes rest reset rests test surgeon
surgeons surgical
operative operating showing shows shown hiding opening closing moving going images imaging
picture pictures chest head feet foot deeper midline summary nudge mind
"""))

# (heard, meant, context) — ASR confusions of ordinary words with domain words. The context
# names a predicate in _CONTEXT that must hold at that token for the repair to apply.
_CONFUSIONS: dict[str, tuple[str, str]] = {
    "city": ("ct", "ct"), "cities": ("ct", "ct"), "citi": ("ct", "ct"), "sitty": ("ct", "ct"),
    "cti": ("ct", "ct"), "cty": ("ct", "ct"), "scity": ("ct", "ct"),
    "corona": ("coronal", "cmd"), "coronel": ("coronal", "always"),
    "colonel": ("coronal", "plane"), "coroner": ("coronal", "plane"),
    "coronary": ("coronal", "plane"), "carnal": ("coronal", "plane"),
    "write": ("right", "side"), "rite": ("right", "side"), "wright": ("right", "side"),
    "ride": ("right", "side"), "lift": ("left", "side"), "laughed": ("left", "side"),
    "june": ("zoom", "zoom"), "zoo": ("zoom", "zoom"), "zune": ("zoom", "zoom"),
    "doom": ("zoom", "zoom"), "boom": ("zoom", "zoom"), "room": ("zoom", "zoom"),
    "soon": ("zoom", "zoom"), "zoon": ("zoom", "zoom"), "jun": ("zoom", "zoom"),
    "zooming": ("zoom", "always"), "zoomed": ("zoom", "always"), "zooms": ("zoom", "always"),
    "at": ("add", "add"), "ad": ("add", "add"),
    "long": ("lung", "lung"), "longs": ("lungs", "lung"), "lang": ("lung", "lung"),
    "lunch": ("lung", "lung"), "load": ("lobe", "lobe"), "low": ("lobe", "lobe"),
    "loads": ("lobes", "lobe"), "lows": ("lobes", "lobe"), "lob": ("lobe", "lobe"),
    "love": ("lobe", "lobe"), "loeb": ("lobe", "lobe"), "globe": ("lobe", "lobe"),
    "lobs": ("lobes", "lobe"), "robe": ("lobe", "lobe"),
    "sagittarius": ("sagittal", "cmd"), "sagital": ("sagittal", "always"),
    "saggital": ("sagittal", "always"), "sagittle": ("sagittal", "always"),
    "digital": ("sagittal", "plane"), "sagittally": ("sagittal", "always"),
    "axle": ("axial", "cmd"), "axel": ("axial", "cmd"), "axil": ("axial", "cmd"),
    "axiel": ("axial", "always"), "excel": ("axial", "cmd"), "actual": ("axial", "plane"),
    "access": ("axial", "plane"), "axis": ("axial", "plane"), "x": ("axial", "plane_noun"),
    "noodle": ("nodule", "cmd"), "noodles": ("nodules", "cmd"),
    "module": ("nodule", "structure"), "modules": ("nodules", "structure"),
    "nodal": ("nodule", "structure"), "nodular": ("nodule", "structure"),
    "interior": ("anterior", "cmd"), "tracheae": ("trachea", "always"),
    "trachia": ("trachea", "always"), "bronchus": ("bronchi", "always"),
    "bronchia": ("bronchi", "always"), "bronco": ("bronchi", "always"),
    "broncos": ("bronchi", "always"),
    "tumour": ("tumor", "always"), "tumours": ("tumors", "always"), "tumer": ("tumor", "always"),
    "pfts": ("pft", "always"), "bmis": ("bmi", "always"), "initialise": ("initialize", "always"),
    "centre": ("center", "always"), "co": ("co", "never"),
    # "CT" written as another two-letter acronym, where a CT fits
    "cd": ("ct", "ct"), "cte": ("ct", "ct"),
    # chart shorthand for the planes ("cor plus 40", "sag max", "zoom cor") heard as words
    "core": ("cor", "shorthand"), "sack": ("sag", "shorthand"), "sac": ("sag", "shorthand"),
    "axe": ("ax", "shorthand"),
}

# Letter names as a recogniser writes them when an abbreviation is spelled out.
_R = r"(?:r|are|our)"
_U = r"(?:u|you)"
_L = r"(?:l|el|ell)"
_M = r"(?:m|em)"

# Spelled-out letters and split words that ASR produces for our acronyms and compounds.
_PHRASES: list[tuple[re.Pattern[str], Any, str]] = [
    (re.compile(r"\bp f t(?: s)?\b"), "pft", "spelled acronym"),
    (re.compile(r"\bb m i\b"), "bmi", "spelled acronym"),
    (re.compile(r"\b(?:c t|see tee|sea tea|see t|c tee|cat scan|cat scans)\b"), "ct",
     "spelled acronym"),
    (re.compile(rf"\b{_L}(?: {_L}){{2,3}}\b"), "lll", "spelled abbreviation"),
    (re.compile(r"\b([rl]) ([uml]) l\b"), r"\1\2l", "spelled abbreviation"),
    # Lobe abbreviations spelled out and heard as words: R as "are"/"our", U as "you", L as
    # "el"/"ell", M as "em" ("are you el" = RUL, "our ml" = RML, "L, L, L" = LLL).
    (re.compile(rf"\b{_R} {_U} {_L}\b"), "rul", "spelled abbreviation"),
    (re.compile(rf"\b{_R} {_M} {_L}\b"), "rml", "spelled abbreviation"),
    (re.compile(rf"\b{_R} {_L} {_L}\b"), "rll", "spelled abbreviation"),
    (re.compile(rf"\b{_L} {_U} {_L}\b"), "lul", "spelled abbreviation"),
    (re.compile(r"\b(?:are|our|r) (ul|ml|ll)\b"), r"r\1", "spelled abbreviation"),
    # "zoom, are you well?": R-U-L with the L heard as "well", right after a command word
    (re.compile(r"\b(show|add|hide|remove|zoom|on|the)(?: ,)? are you (?:well|will|ill)\b"),
     r"\1 rul", "spelled abbreviation"),
    (re.compile(r"\b(?:el|ell|l) (ul|ll)\b"), r"l\1", "spelled abbreviation"),
    (re.compile(r"\bf (?:e )?v 1\b|\bfev 1\b|\bfv1\b"), "fev1", "spelled acronym"),
    # "mediastinal" is hard to hear; nothing else on this console is a "media … window"
    (re.compile(r"\bmedia(?:l|s|stinum)?(?: ,)?(?: (?!window\b)[a-z]+){0,2} window\b"),
     "mediastinal window", "split word"),
    # "the CT in the model": "and" heard as "in" between two things the console shows
    (re.compile(r"\b(ct|scan) in the (3d model|model)\b|\b(3d model|model) in the (ct)\b"),
     lambda m: f"{m.group(1) or m.group(3)} and the {m.group(2) or m.group(4)}",
     "'and' heard as 'in'"),
    (re.compile(r"\b3[bv] model\b"), "3d model", "spelled"),
    # the 3D views' shorthand said as the whole command and written as words: "ant view" as
    # "and view", "inf view" as "in view" / "end view", "lat view" as "let's view" / "lot
    # view" (nothing else on this console is an "and view" or a "let's view")
    (re.compile(r"^(?:and|an) view$"), "ant view", "shorthand heard as a word"),
    (re.compile(r"^(?:end|in) view$"), "inf view", "shorthand heard as a word"),
    (re.compile(r"^(?:(left|right)(?: ,)? )?(?:let us|lot|lap) view$"),
     lambda m: f"{m.group(1) + ' ' if m.group(1) else ''}lat view", "shorthand heard as a word"),
    # "cor plus 40" heard as "4 plus 40": a number cannot be moved by a step; the plane can
    (re.compile(r"^4 (?=[+-]\d+$|(?:up|down|forward|back) \d+$)"), "cor ",
     "shorthand heard as a number"),
    # "erase all" with its unstressed first vowel lost: "grace all", "brace all" (only as the
    # whole command or a clause of it)
    (re.compile(r"(?:^|(?<=, )|(?<=\band ))(?:grace|brace) all\b"), "erase all", "sounds like"),
    (re.compile(r"\bair ways?\b"), "airway", "split word"),
    (re.compile(r"\bco morbidit(y|ies)\b"), r"comorbidit\1", "split word"),
    (re.compile(r"\bsagit al\b|\bsaji tal\b|\bsag it al\b"), "sagittal", "split word"),
    (re.compile(r"\bcorona l\b|\bcoro nal\b"), "coronal", "split word"),
    (re.compile(r"\bx i al\b|\bax ial\b|\bx ial\b|\bx y all?\b"), "axial", "split word"),
    (re.compile(r"\bzoom(?:ing|ed)? (in|out)\b"), r"zoom \1", "inflection"),
    (re.compile(r"\bzoomin\b"), "zoom in", "split word"),
    (re.compile(r"\bzoomout\b"), "zoom out", "split word"),
    (re.compile(r"\b3 d\b|\bthree d\b|\b3d\b"), "3d", "spelled"),
    # terse direction letters after a verb of motion ("rot L", "turn it r", "move u")
    (re.compile(r"\b(rot|rotate|turn|spin|swing|tilt|move|go|pan)((?: it| the model)?) "
                r"([lrud])\b(?! ?[uml]l\b)"),
     lambda m: f"{m.group(1)}{m.group(2)} "
               f"{ {'l': 'left', 'r': 'right', 'u': 'up', 'd': 'down'}[m.group(3)]}",
     "abbreviated direction"),
]

_WAKE = "davinci"
_WAKE_FILLERS = language_words("wake_fillers")


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
_SHORTHAND_NEXT = {"plus", "minus", "max", "min", "maximum", "minimum", "middle", "center",
                   "up", "down", "view", "slice", "first", "last", "top", "bottom"}
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
_NUM_RE = re.compile(r"^[+-]?\d+(th|st|nd|rd)?$")


_COMMAND_CUES = {
    "show", "display", "open", "hide", "remove", "clear", "reset", "zoom", "rotate", "turn",
    "spin", "move", "go", "scroll", "add", "enlarge", "magnify", "view", "slice", "slices",
    "plane", "scan", "ct", "model", "3d", "lobe", "lobes", "lung", "lungs", "up", "down",
    "left", "right", "forward", "back", "axial", "coronal", "sagittal", "nodule", "nodules",
    "airway", "middle", "max", "min", "to", "plus", "minus", "and", "the",
}


def _commandish(toks: list[str], i: int) -> bool:
    """Does the rest of the sentence read as a console command (or is it very short)?"""
    others = [t for j, t in enumerate(toks) if j != i and t != ","]
    if len(others) <= 2:
        return True
    strong = _COMMAND_CUES - {"to", "and", "the", "up", "down", "back", "right", "left"}
    return any(t in strong or _NUM_RE.match(t) for t in others)


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
        return _commandish(toks, i)
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
        return (bool(_NUM_RE.match(nxt)) or nxt in _SHORTHAND_NEXT
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
            _commandish(toks, i)
    return False


def _strip_wake(tokens: list[str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Remove a leading wake word ("davinci", "da vinci", "the vinci", "hey davinci")."""
    for start in range(0, min(8, len(tokens))):
        if start and tokens[start - 1] not in _WAKE_FILLERS:
            break
        for width in (1, 2, 3):
            span = tokens[start:start + width]
            if len(span) < width or any(t == "," for t in span):
                continue
            joined = "".join(span)
            score = fuzz.ratio(joined, _WAKE)
            same_sound = jellyfish.metaphone(joined) in ("TFNS", "TFNX", "TFNK", "TFNX")
            if score >= 80 or (same_sound and score >= 65) or (
                    width >= 2 and span[-1] in ("vinci", "vinchi", "vinchy", "vincy", "vinci's")
                    and span[0] in ("da", "the", "de", "de", "di", "duh", "a", "la")):
                rest = tokens[start + width:]
                while rest and rest[0] == ",":
                    rest = rest[1:]
                said = " ".join(tokens[:start + width])
                if rest and rest != tokens:
                    again, more = _strip_wake(rest)  # "davinci davinci, ...": said twice
                    if more:
                        return again, [(f"{said} {more[0][0]}", "", "wake word")]
                return rest, [(said, "", "wake word")]
    return tokens, []


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
    return word if ok and (tok[0] == word[0] or same_sound) else None


# Lead-ins before the request itself: a time clause ("before we dock, ..."), an aside
# ("one more thing, ..."), a politeness frame ("would it be possible to ..."), or a reaction to
# the last step ("that's too much, go down three"). Dropped only when a request follows.
def _drop_lead_in(tokens: list[str]) -> tuple[list[str], str]:
    i = 0
    openers = language_words("lead_openers")
    while i < len(tokens) and (tokens[i] in openers or tokens[i] == ","):
        i += 1
    for lead in phrases("lead_clauses"):
        if tuple(tokens[i:i + len(lead)]) == lead and "," in tokens[i + len(lead):]:
            cut = tokens.index(",", i + len(lead))
            rest = tokens[cut + 1:]
            said = " ".join(rest)
            if len(rest) >= 2 and (has_domain_content(said) or sounds_like_command(said)):
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
    out: list[str] = []
    for i, tok in enumerate(tokens):
        if _is_known(tok, lex, protected) or len(tok) < 4:
            out.append(tok)
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        split = next(((tok[:k], tok[k:]) for k in range(2, len(tok) - 1)
                      if tok[:k] in _SPLIT_LEFT and tok[k:] in known and len(tok[k:]) >= 2),
                     None)
        if split:
            changes.append((tok, " ".join(split), "merged words"))
            out.extend(split)
            continue
        if nxt in ("on", "onto") and jellyfish.metaphone(tok) in _ZOOM_IN_SOUNDS and \
                _commandish(tokens, i):
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
        if _NUM_RE.match(nxt) or nxt in _SHORTHAND_NEXT:
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

_FILLERS = frozenset({"uh", "um", "umm", "uhm", "uhh", "er", "erm", "hmm", "ah", "eh"})
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


def _repair_disfluencies(tokens: list[str]) -> list[str]:
    """Collapse stutters and false starts to the final intent: "go go down uh 15" →
    "go down 15", "coronal uh coronal +40" → "coronal +40", "rotate horizontal uh
    vertically" → "rotate vertically". Fillers go; a command of fillers only stays as it is
    (it is silence, for the validator)."""
    if all(t in _FILLERS or t == "," for t in tokens):
        return tokens
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _FILLERS:
            del out[len(out) - _restarted(out, tokens[i + 1:]):]
            i += 1
            continue
        if out and tok == out[-1] and tok not in _REPEAT_MEANS and tok != "," and \
                not _NUM_RE.match(tok):
            i += 1  # a stutter
            continue
        out.append(tok)
        i += 1
    return out


def correct(text: str, lexicon: Lexicon | None = None,
            protected: frozenset[str] | set[str] = frozenset()) -> CorrectionResult:
    """Repair speech-recognition errors in a normalised text against the domain lexicon.

    ``protected`` adds words that are right as they are (e.g. a grammar tier's vocabulary).
    """
    lex = lexicon or DEFAULT_LEXICON
    changes: list[tuple[str, str, str]] = []
    tokens = tokens_of(text)
    tokens, wake = _strip_wake(tokens)
    changes.extend(wake)
    joined = " ".join(tokens)
    # "L, L, L": a spelled abbreviation with a pause after each letter
    joined = re.sub(r"\b([a-z]) , (?=[a-z]\b)", r"\1 ", joined)
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
    out: list[str] = list(tokens)
    for i, tok in enumerate(tokens):
        if tok in _CONFUSIONS:
            meant, ctx = _CONFUSIONS[tok]
            if meant != tok and _ctx_ok(ctx, out, i):
                changes.append((tok, meant, f"sounds like '{meant}' here"))
                out[i] = meant
            continue
        if tok in lex or tok in PROTECTED_WORDS or tok in protected or tok == "," or \
                _NUM_RE.match(tok):
            continue
        cand = _fuzzy(tok, lex)
        if cand is not None:
            changes.append((tok, cand, "close in spelling and sound"))
            out[i] = cand
    fluent = _repair_disfluencies(out)
    if fluent != out:
        changes.append((" ".join(out), " ".join(fluent), "a stutter or false start"))
    result = " ".join(fluent)
    result = re.sub(r"\s+,", ",", result).strip(" ,")
    return CorrectionResult(result, changes)


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------

# Noise the recogniser returns for silence, and fillers that carry no command.
# ("Thank you" alone is a Whisper hallucination on silence too, but said aloud it is a
# closing remark: it is treated as out-of-scope chatter, not as silence.)
_EMPTY_WORDS = {
    "", "um", "uh", "umm", "uhm", "uhh", "hmm", "hm", "mm", "mhm", "mmm", "ah", "er", "erm",
    "and",  # a lone "And" is what Whisper writes for a breath or a trailing-off "um"
    "eh", "oh", "huh", "uhhuh", "so", "the", "a", "silence", "noise", "blank", "inaudible",
    "applause",
    "laughter", "static", "background", "audio", "sound", "breathing", "sigh", "pause",
}
_EMPTY_PHRASES = {
    "", "you", "music", "silence", "inaudible", "blank audio", "noise", "background noise",
    "no speech", "nothing",
}

# Topics we do not handle: (pattern, plain reason). Checked on word boundaries; any hit rejects
# the command even if it also names something of ours ("staple the RUL bronchus").
_UNHELD_ANATOMY = "the 3D model only has the lungs, nodules and airway"
_OUT_OF_SCOPE: list[tuple[str, str]] = [
    (r"stapler?s?|staple|staples|stapling|reload\w*|cartridge\w*",
     "surgical instruments are not controlled here"),
    (r"suction\w*|irrigat\w*|suture\w*|needle|needles|clip|clips|clipping|clamp\w*|scissors|"
     r"grasper\w*|forceps|retractor\w*|cautery|bovie|vessel sealer|sealer|energy device|"
     r"harmonic|ligasure|bipolar|monopolar|maryland|hook|trocar\w*|sponge\w*|gauze|specimen|"
     r"endo ?bag|instrument\w*|drape\w*|tray|swab\w*|tie|knot\w*|hemostat\w*|ultrasonic|"
     r"wrists?|jaws?|needle driver\w*",
     "surgical instruments and supplies are not controlled here"),
    (r"(?:take|taking) down (?:the |that |this )?(?:\w+ ){0,2}(?:ligament|vein|artery|vessel|"
     r"pleura|fissure|adhesions?)|retract\w*|dissect\w*|ligat\w*|cauteri\w*|coagulat\w*|transect\w*|resect\w*|"
     r"excis\w*|incis\w*|divide|dividing|grasp|grab|grabbing|sew|sewing|inject\w*|cut the|"
     r"cut this|cutting|burn\w*|seal the|seal it|fire the|fire it|tying|exchange the|"
     r"biops\w*|collaps\w*|open the chest|close the chest|convert to open|"
     # the team closing the patient ("done, closing", "we are closing now"), when no
     # display is named after it
     r"(?:done|finished|we are|begin|beginning|time for|ready for)(?: ?,)? "
     r"(?:closing|closure)(?! (?:the |that |this )?(?:model|3d|ct|scan|box|info\w*|views?|"
     r"panels?|windows?|patient info\w*|data|images?|overlay))|"
     r"let us close|ready to close|time to close|we can close|start closing|closing up|"
     # "we're starting the right upper lobectomy": the operation itself, not a display
     r"(?:start|starting|begin|beginning|proceed|proceeding|doing|perform\w*|finish\w*)"
     r"(?: with| on)? (?:the |a |our |this |her |his )?(?:\w+ ){0,3}\w+ectom(?:y|ies)|"
     r"(pull|push|lift|hold|tug|pinch|squeeze|compress|manipulate) (the|that|this) "
     r"(tissue|vessel|hilum|pleura|ligament|wound)|"
     r"(pull|push|lift|hold|tug|pinch|squeeze|compress|manipulate) (the|that|this|it) "
     r"(\w+ ){0,2}(lung|lobe|bronchus|bronchi|nodule|tumor|trachea)",
     "surgical actions are the surgeon's, not the console's"),
    # "what's the function setting?" (heard for "suction setting"): a device's setting; the
    # console's own presets are windows ("bone settings", "lung window setting" are rescued)
    (r"(?<!window )(?<!bone )(?<!preset )settings?",
     "device settings are not controlled here"),
    (r"insufflat\w*|pneumoperitoneum|co2|gas flow|flow rate|deflat\w*|inflat\w*|ventilat\w*|"
     r"intubat\w*|tidal volume|peep|smoke evacuat\w*",
     "insufflation and ventilation are not controlled here"),
    (r"vital signs?|vitals|blood pressure|heart rate|pulse|saturation|spo2|sats|oxygen|o2|"
     r"fio2|"
     r"temperature|ecg|ekg|respiratory rate|end tidal|end title|etco2|urine output|map|cvp|"
     r"arterial line|a line",
     "the console does not show vital signs"),
    (r"anesthe\w*|anaesthe\w*|sedat\w*|propofol|paraly\w*|muscle relax\w*|bupivacaine|"
     r"lidocaine|fentanyl|heparin|epinephrine|adrenaline|ml|mg|mcg|milligrams?|"
     r"millilit\w*|dose|doses|bolus",
     "anaesthesia and drugs are not controlled here"),
    (r"music|song|songs|playlist|radio|spotify|podcast|volume|louder|quieter|mute|unmute",
     "the console does not play music or sound"),
    (r"phone|call|calling|page|paging|text message|email|voicemail|message|send for|"
     r"next patient|next case",
     "the console does not make calls or send messages"),
    (r"weather|joke|coffee|lunch|dinner|breakfast|how are you|good morning|good night|"
     r"good afternoon|what time|time is it|date today|football|game last night|vacation|"
     r"weekend|birthday party|who are you|your name|how long",
     "that is conversation, not a console command"),
    (r"blood type|blood group|allerg\w*|medication\w*|medicine\w*|drugs?|antibiotic\w*|"
     r"lab results?|labs?|laboratory|hemoglobin|haemoglobin|platelets?|creatinine|potassium|sodium|"
     r"glucose|inr|coagulation|blood loss|transfusion|consent|insurance|address|"
     r"phone number|next of kin|family|smok\w*|alcohol|frozen section|patholog\w*|"
     r"(patient|patients|her|his) name|who is the patient|mrn|medical record number|"
     r"hospital number|patient id|insurance|religion|occupation|"
     r"biopsy results?|histology|lactate|bicarbonate|electrolytes?",
     "that information is not in the patient sheet"),
    (r"cough\w*|bleed\w*|hemorrhag\w*|(patient|she|he|they|her|him) (is |are |keeps |started |"
     r"starts )?moving|awake|waking|crying|shivering|stable|unstable|"
     # "how is the patient" asks after her state; "how is the patient's lung capacity"
     # asks for a field (the possessive is gone after normalisation)
     r"is the patient ok(ay)?|how is the patient(?=$| ?,| doing| holding| tolerating| today| now)|"
     r"desaturat\w*|hypotens\w*|tachycard\w*",
     "patient status is not something the console reports"),
    (r"lights?|lamp|bed|table|trendelenburg|thermostat|air conditioning|"
     r"room temperature|door|doors|curtain\w*",
     "room equipment is not controlled here"),
    # The monitor itself is room equipment ("move the monitor a little to the left", "tilt the
    # screen up"); what is shown on it stays ours.
    (r"(?:move|moving|tilt|tilting|push|pull|turn|angle|raise|lower|shift|adjust|swing|"
     r"rotate|swivel|bring)(?: (?:the|that|this|our|my))? (?:monitor|screen|monitors|screens)"
     r"(?! (?:view|views|layout)\b)",
     "the monitor itself is not controlled here"),
    # Turning or moving the patient is positioning, not a model swing ("rotate the patient a
    # little to the right", "roll her onto her side"); "the patient('s) model/CT" stays ours.
    (r"(?:rotate|rotating|turn|turning|roll|rolling|tilt|tilting|tip|tipping|swing|swivel|"
     r"flip|move|moving|shift|reposition\w*|position|lift|raise|lower|sit|log ?roll)"
     r"(?: (?:the|our|this))? (?:patient|her|him)"
     r"(?! (?:s )?(?:model|3d|anatomy|reconstruction|lungs?|lobes?|ct|scan|scans|images?|"
     r"info\w*|data|details|box|sheet|panel|overlay|nodules?|airway|airways)\b)",
     "positioning the patient is not controlled here"),
    (r"camera|cam|scope|endoscope|lens|robot arm|arms?|console handles?|clutch|energy|foot pedal|"
     r"recording|screenshot|photo|picture of|snapshot|video|robot|port|ports|docking|dock|"
     r"undock",
     "the robot, camera and recording are not controlled here"),
    (r"pet scans?|pet ct|pet images?|pet|mri|mr scan|x ?rays?|ultrasound|echocardiogra\w*|"
     r"angiogra\w*|bronchoscop\w*|bone scan|scintigra\w*|"
     r"(previous|old|older|prior|earlier|outside|other hospital s?|last years?( s)?|"
     r"last months?( s)?) (ct|cts|scan|scans|study|studies|images?|imaging)|"
     r"(ct|cts|scan|scans|study|studies|images?|imaging) from (last|a|an|the previous|the "
     r"last|before|earlier|another|the other)\b|"
     r"(ct|radiology|pathology|path|histology|biopsy|scan|imaging) reports?|"
     r"reports? from (radiology|pathology|the lab)|for comparison",
     "the console has only this case's CT, model and patient sheet"),
    (r"heart|liver|kidney|stomach|colon|brain|spine|bone marrow|aorta|esophagus|oesophagus|"
     r"diaphragm|rib|ribs|vertebra\w*|vein|veins|artery|arteries|azygos|pulmonary artery|"
     r"pulmonary vein|lymph nodes?|pleura|fissure",
     _UNHELD_ANATOMY),
]
_OOS_RE = [(re.compile(rf"\b(?:{pat})\b"), why) for pat, why in _OUT_OF_SCOPE]
# Phrases of ours that contain an out-of-scope word ("bone window", "lung volume").
_RESCUE = re.compile(
    r"\b(bone|soft tissue|mediastin\w*|lung) (window|preset|setting)s?( settings?| presets?)?|"
    r"\bwindow(ing)? (settings?|presets?)|\bpage (up|down)\b|"
    r"\b(heart|cardiac|lung|pulmonary)( or (heart|lung|cardiac|pulmonary))? (history|problems|"
    r"disease|conditions)\b|"
    r"\bcall (it |them |\w+ |the \w+ )?up\b|"
    r"\b(lung|tumou?r|nodule|ct) volume|\b(keep|stop|start) moving|\bmoving (the|to)\b|"
    r"\bstop the (rotation|spinning)|\bport(s)? view\b|"
    r"\bhow long\b.*\b(slice|axial|coronal|sagittal)|"
    # console senses of words that are otherwise OR talk ("the info table", "the 3D lung map",
    # "scroll the volume", "the camera-eye view" = the surgical view of the model)
    r"\b(info|information|data|patient|results?|summary) table\b|"
    r"\b(lung|3d|anatomy|anatomical|road) map\b|"
    r"\b(scroll|page|move|go|step|flick)( back| forward| up| down)? (through )?(the )?volume\b|"
    r"\bvolume render\w*|\bcamera ?eye view\b|\bcamera s eye view\b|"
    # where the patient lies, not equipment to control ("a man or a woman on the table")
    r"\b(man|woman|male|female|boy|girl|lady|gentleman)( \w+){0,2} "
    r"on the (operating |or )?table\b")
# Closing remarks and greetings: out of scope when nothing else in the command is ours.
_CHATTER = re.compile(
    r"\b(thanks|thank you|that is all|that is it|all done|we are done|we are good|never mind|"
    r"nevermind|hello|hi there|goodbye|bye|good job|well done|cheers|great work|nice)\b")

@dataclass(frozen=True)
class Validity:
    """Whether a command is in scope. Unpacks as ``valid, reason``; ``empty`` is separate."""

    valid: bool
    reason: str = ""
    empty: bool = False

    def __iter__(self) -> Iterator[object]:
        return iter((self.valid, self.reason))


EMPTY_REASON = "nothing was said"


def is_empty(text: str) -> bool:
    t = text.strip(" ,")
    if t in _EMPTY_PHRASES:
        return True
    toks = [x for x in tokens_of(t) if x != ","]
    return all(x in _EMPTY_WORDS for x in toks) and len(toks) <= 3


_ASKS_TO_SEE = re.compile(r"\b(show|display|zoom|rotate|add|hide|remove|highlight|enlarge|"
                          r"segment|model|view|bring|put|pull|on the model)\b")


def _aside(text: str, at: int) -> bool:
    """Is the word at ``at`` in a clause that asks for nothing, next to one that does?"""
    parts = text.split(",")
    pos = 0
    for k, part in enumerate(parts):
        if pos <= at < pos + len(part) + 1:
            others = parts[:k] + parts[k + 1:]
            return not _ASKS_TO_SEE.search(part) and any(
                has_domain_content(o) for o in others)
        pos += len(part) + 1
    return False


# OR-device words a recogniser misspells ("Stapel the RUL bronchus", measured on the dev split's
# audio, went on to show the RUL): an unknown word that sounds exactly like one of these (same
# metaphone, same first letter, spelled alike) is read as it for the scope check. Long words only: a short
# one's sound is shared by too many ordinary words.
_OOS_SOUND_WORDS = ("staple", "stapler", "stapling", "suction", "cautery", "irrigation",
                    "irrigate", "insufflation", "retractor", "trocar", "forceps", "grasper",
                    "scissors", "suture", "specimen", "cartridge", "sealer", "retract",
                    "retracting", "dissect", "ligate", "cauterize", "suturing")
_OOS_SOUNDS = {jellyfish.metaphone(w): w for w in _OOS_SOUND_WORDS}
_WORD_RE = re.compile(r"[a-z]{5,}")
_RE_SPLIT = re.compile(r"\bre[- ]([a-z]{3,})")  # "re-track" / "re track": one word said


def _near_oos_word(w: str) -> str | None:
    """An OR-device word ``w`` is a near-spelling of (same first letter, ≥ 85 similar, e.g.
    "retrack" for "retract"), when their sounds differ only at the end."""
    best = max(_OOS_SOUND_WORDS, key=lambda o: fuzz.ratio(w, o))
    return best if best[0] == w[0] and fuzz.ratio(w, best) >= 85 else None


def _oos_sound_alikes(text: str, known: frozenset[str] | set[str]) -> str:
    """``text`` with unknown words that sound like an OR-device word replaced by it."""
    def sub(m: re.Match[str]) -> str:
        w = m.group(0)
        if w in known or w in DOMAIN_WORDS or w in PROTECTED_WORDS or w in _CONTENT:
            return w
        hit = _OOS_SOUNDS.get(jellyfish.metaphone(w))
        # spelled alike too: "story" sounds like "suture" to metaphone (S-T-R) but is a word
        ok = hit is not None and hit[0] == w[0] and fuzz.ratio(w, hit) >= 60
        if not ok:
            hit = _near_oos_word(w)
            ok = hit is not None
        return hit if ok and hit is not None else w

    def joined(m: re.Match[str]) -> str:
        w = "re" + m.group(1)
        hit = _OOS_SOUNDS.get(jellyfish.metaphone(w)) or _near_oos_word(w)
        return hit if hit is not None else m.group(0)

    return _WORD_RE.sub(sub, _RE_SPLIT.sub(joined, text))


def validate(text: str, extra_fields: Iterable[str] = (),
             vocabulary: frozenset[str] | set[str] = frozenset(),
             canonical: str | None = None) -> Validity:
    """Is a corrected command in scope? Empty/silent input is its own outcome.

    ``extra_fields`` names the clinical sheet's extra columns (e.g. "allergies" where a hospital
    keeps them): a request for one of those is in scope even if the topic is otherwise not.
    ``vocabulary`` adds the words of a grammar tier that make a sentence a console command;
    ``canonical`` is the same text in that grammar's words (multi-word expressions folded),
    also searched for such words.
    """
    if is_empty(text):
        return Validity(True, EMPTY_REASON, empty=True)
    extras = [e.lower().strip() for e in extra_fields if e and e.strip()]
    rescued = _oos_sound_alikes(_RESCUE.sub(" ", text), vocabulary)
    for pat, why in _OOS_RE:
        m = pat.search(rescued)
        if not m:
            continue
        hit = m.group(0)
        if any(hit in e or e in hit for e in extras):
            continue
        if why == _UNHELD_ANATOMY and _aside(rescued, m.start()):
            continue  # "see how the fissure runs, rotate it left": anatomy named in passing
        return Validity(False, f"Out of scope: {why} ('{hit}').")
    if not has_domain_content(text, vocabulary) and not (
            canonical and has_domain_content(canonical, vocabulary)):
        m = _CHATTER.search(text)
        if m:
            return Validity(False, "Out of scope: that is conversation, not a console command "
                                   f"('{m.group(0)}').")
        if sounds_like_command(text):
            # "give it a twirl", "ease off a touch", "home position please": shaped like an
            # order to the console in words the grammar does not know. The later tiers
            # (paraphrase matcher, LLM) judge it; the grammar reads it with low confidence.
            return Validity(True, UNFAMILIAR_REASON)
        return Validity(False, "Not a console command: it names nothing the console shows.")
    return Validity(True, "")


UNFAMILIAR_REASON = "no console word: left to the paraphrase tiers"

# First words that make a sentence a statement or a question rather than an order
# ("is it warm in here", "we need a break", "let's take a short break").
_NOT_IMPERATIVE = set(_words("""
i we you he she they it its this that these those there here the a an my our your his her
their is are was were am be been do does did have has had can could would will should shall
may might must what who whom whose how why where when which let lets thank thanks hello hi
hey good nice great wait hang sorry excuse
"""))
# Leading words skipped before the verb: fillers, politeness, and "can you …" frames.
_LEAD_IN = set(_words("""
um uh er erm hmm okay ok alright so now well please just and then also right yeah yes
"""))
_REQUEST_FRAMES = [("can", "you"), ("could", "you"), ("would", "you"), ("will", "you"),
                   ("can", "we"), ("could", "we"), ("would", "you", "mind")]
# Objects that stand for what is on screen ("give it a twirl", "spin them round").
_DISPLAY_PRONOUNS = {"it", "them", "that", "this", "everything", "things", "those", "these"}
# Degree phrases that only make sense as an adjustment ("ease off a touch", "a tad more").
_DEGREE = {"touch", "tad", "smidge", "smidgen", "notch", "hair", "fraction", "bit", "little",
           "slightly", "nudge"}
_PEOPLE = {"me", "us", "you", "him", "her", "them", "everyone", "anybody", "somebody",
           "someone", "anyone", "everybody"}
# Adverb particles of a phrasal verb that adjusts or removes ("ease off", "take it away").
_PARTICLES = {"off", "back", "out", "in", "over", "around", "round", "along", "across", "away",
              "forward", "forwards", "backward", "backwards", "aside"}
# Light verbs whose object noun is the action ("give it a twirl", "take it for a spin").
_LIGHT_VERBS = {"give", "take", "have"}
# Verbs of handling what is on screen ("take it away", "put them back"): with a pronoun and a
# particle they are console orders; verbs of handling tissue ("clean it off") are not.
_SCREEN_VERBS = {"take", "put", "get", "bring", "pull", "push", "pop", "turn", "switch",
                 "shut", "send", "throw", "stick", "move", "set", "knock", "chuck"}


def sounds_like_command(text: str) -> bool:
    """Is a sentence in unknown words shaped like an order to the console? An imperative
    (no subject, no auxiliary or question word first) that is a light verb with "it" ("give it
    a twirl"), an adjustment by a degree with a particle ("ease off a touch"), or a verb of
    handling what is on screen with "it" and a particle ("take it away"). An order to a
    person ("hand me the …", "give me a moment") or about tissue ("clean it off", "loosen it a
    little") is not: those would reach the paraphrase tiers only to be misread."""
    toks = [t for t in tokens_of(text) if t != ","]
    while toks and toks[0] in _LEAD_IN:
        toks = toks[1:]
    for frame in _REQUEST_FRAMES:
        if tuple(toks[:len(frame)]) == frame:
            toks = toks[len(frame):]
            break
    if not toks or toks[0] in _NOT_IMPERATIVE or toks[0] in _EMPTY_WORDS:
        return False
    rest = toks[1:]
    if rest and rest[0] in _PEOPLE - {"them"}:
        return False  # "hand me the vessel loop", "give us a minute"
    verb = toks[0]
    on_it = bool(rest) and rest[0] in _DISPLAY_PRONOUNS
    particle = any(t in _PARTICLES for t in rest)
    if on_it and verb in _LIGHT_VERBS and rest[1:2] in (["a"], ["an"], ["another"]):
        return True
    if on_it and verb in _SCREEN_VERBS and particle:
        return True
    return particle and any(t in _DEGREE for t in rest)


# Words that make a sentence a console command even without a known object.
_CONTENT = DOMAIN_WORDS | {
    "zoom", "rotate", "turn", "spin", "swing", "reset", "clear", "remove", "hide", "show",
    "display", "open", "close", "erase", "initialize", "restore", "again", "more", "repeat",
    "up", "down", "left", "right", "forward", "back", "front", "bigger", "smaller", "enlarge",
    "shrink", "magnify", "old", "tall", "heavy", "rul", "rml", "rll", "lul", "lll", "3d",
    "slice", "next", "previous", "middle", "max", "min", "top", "bottom", "first", "last",
    "stop", "where", "move", "go", "add", "diagnosed", "operated", "above", "below",
    "behind", "underneath", "beneath", "closer", "perspective", "angle", "rear",
    "views", "dx", "pmh", "ax", "cor", "sag", "ant", "post", "lat", "info", "fields",
    "procedure", "disease", "diseases", "conditions", "illness", "illnesses",
    "minimize", "maximize", "minimise", "maximise", "continue", "further", "keep", "farther",
    "fullscreen", "full", "lingula", "bronchial", "tilt", "freeze", "still", "planned",
    "cancer", "lesion", "mass", "fev1", "fvc", "dlco", "windpipe", "trachea",
    "demographics", "history", "static",
    # where things are on screen ("home position please", "the usual layout")
    "position", "positions", "layout", "orientation", "arrangement",
}


def has_domain_content(text: str, vocabulary: frozenset[str] | set[str] = frozenset()) -> bool:
    """Does the text name anything of the console (a domain word, a grammar word, a number)?"""
    toks = tokens_of(text)
    return any(t in _CONTENT or t in vocabulary or _NUM_RE.match(t) for t in toks)


_has_domain_content = has_domain_content  # the older private name


# ---------------------------------------------------------------------------------------------
# how much a transcript reads as a console command (speech-recognition n-best rescoring)
# ---------------------------------------------------------------------------------------------

# Words that carry no content either way: left out of the coverage's denominator.
_FUNCTION_WORDS = frozenset(_words("""
a an the and or but in on of to at by for from with into onto it its is are be am was me us
my her his she he i you we our your please then also now just this that these those so um uh
er can could would will do does let there here what how out all
"""))


class CommandScorer:
    """Domain coverage of a transcript for the speech recogniser's n-best rescoring
    (``app.voice.stt.choose_hypothesis``): the share of its content words (function words
    aside) that the console knows — domain words, the grammar's vocabulary, numbers — after
    normalisation and repair. "Zoom in." covers 1.0, "Two men." 0.5, "See you now." 0.
    ``pinned``: a transcript the console rejects as out of scope is never traded for an
    in-domain near-homophone."""

    def __init__(self, vocabulary: frozenset[str] | set[str] | None = None) -> None:
        if vocabulary is None:
            from app.language.vocabulary import VOCABULARY  # noqa: PLC0415

            vocabulary = VOCABULARY
        self.vocabulary = frozenset(vocabulary)
        self._known = DOMAIN_WORDS | _CONTENT | self.vocabulary

    def _fixed(self, text: str) -> str:
        return correct(normalize(text), protected=self.vocabulary).text

    def reading(self, text: str) -> str:
        """``text`` as the console reads it after normalisation and repair."""
        return self._fixed(text)

    def coverage(self, text: str) -> float:
        toks = [t for t in tokens_of(self._fixed(text)) if t != ","]
        content = [t for t in toks if t not in _FUNCTION_WORDS]
        if not content:
            return 0.0
        known = sum(1 for t in content if t in self._known or _NUM_RE.match(t))
        return known / len(content)

    def pinned(self, text: str) -> bool:
        v = validate(self._fixed(text), (), self.vocabulary)
        return not v.valid and v.reason.startswith("Out of scope")


__all__ = [
    "DEFAULT_LEXICON", "DOMAIN_WORDS", "EMPTY_REASON", "UNFAMILIAR_REASON", "CommandScorer",
    "CorrectionResult",
    "Lexicon", "Validity", "correct", "has_domain_content", "is_empty", "normalize",
    "sounds_like_command", "tokens_of", "validate",
]
