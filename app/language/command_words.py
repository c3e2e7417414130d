"""The domain lexicon's words (what fuzzy repair aims at, what it must never touch, the
confusion pairs) and whether a text sounds like a command to the console at all.
"""

from __future__ import annotations

import re
from typing import Any

from app.language.normalize import (
    tokens_of,
)

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
_LETTER_DIRECTIONS = {"l": "left", "r": "right", "u": "up", "d": "down", "rt": "right",
                      "lt": "left"}
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
                r"([lrud]|rt|lt)\b(?! ?[uml]l\b)(?! (?:lung|lungs|side|lobe|lobes|upper|lower|middle)\b)"),
     lambda m: f"{m.group(1)}{m.group(2)} {_LETTER_DIRECTIONS[m.group(3)]}",
     "abbreviated direction"),
]
_NUM_RE = re.compile(r"^[+-]?\d+(th|st|nd|rd)?$")


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
    core = [t for t in toks if t not in ("please", "now")]
    if len(core) == 2 and "off" in core and set(core) - {"off"} <= _DISPLAY_PRONOUNS:
        return True  # "off it", "that off": a pronoun and the particle alone
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


def is_unknown_word(tok: str) -> bool:
    """A word the console's language does not hold: no domain word, grammar word, function
    word or filler ("twenny", "cart"); numbers and punctuation are not words here."""
    from app.language.vocabulary import FILLER, VOCABULARY

    return tok.isalpha() and tok not in VOCABULARY and tok not in _CONTENT and \
        tok not in _FUNCTION_WORDS and tok not in FILLER


# ---------------------------------------------------------------------------------------------
# how much a transcript reads as a console command (speech-recognition n-best rescoring)
# ---------------------------------------------------------------------------------------------

# Words that carry no content either way: left out of the coverage's denominator.
_FUNCTION_WORDS = frozenset(_words("""
a an the and or but in on of to at by for from with into onto it its is are be am was me us
my her his she he i you we our your please then also now just this that these those so um uh
er can could would will do does let there here what how out all
"""))
