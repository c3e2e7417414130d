"""The console's vocabulary (DESIGN §2 app/language): the word tables the grammar reads and the
recogniser scores against — planes, directions, views, rotations, structures, fields, verbs,
routing cues, and ``VOCABULARY``, every word the grammar reads. One home for agents and voice
alike (voice used to import the grammar to get them). The open word classes a hospital extends
without Python are in ``data/words.toml``; these tables are the fixed core of the grammar.
"""

from __future__ import annotations

import re


def _words(text: str) -> list[str]:
    """A word list written as a block of text (easier to read and extend than a literal)."""
    return text.split()

# ---------------------------------------------------------------------------------------------
# vocabulary
# ---------------------------------------------------------------------------------------------

PLANE_WORDS = {
    "axial": "axial", "axials": "axial", "ax": "axial", "transverse": "axial",
    "transaxial": "axial", "coronal": "coronal", "coronals": "coronal", "cor": "coronal",
    "frontal": "coronal", "sagittal": "sagittal", "sagittals": "sagittal", "sag": "sagittal",
}
# IV direction words (DESIGN §4, display convention): word -> (plane, sign).
DIRECTIONS = {
    "right": ("sagittal", 1), "rightward": ("sagittal", 1), "rightwards": ("sagittal", 1),
    "left": ("sagittal", -1), "leftward": ("sagittal", -1), "leftwards": ("sagittal", -1),
    "forward": ("coronal", 1), "forwards": ("coronal", 1), "front": ("coronal", 1),
    "anterior": ("coronal", 1), "anteriorly": ("coronal", 1), "ahead": ("coronal", 1),
    "back": ("coronal", -1), "backward": ("coronal", -1), "backwards": ("coronal", -1),
    "posterior": ("coronal", -1), "posteriorly": ("coronal", -1),
    "up": ("axial", 1), "upward": ("axial", 1), "upwards": ("axial", 1),
    "superior": ("axial", 1), "superiorly": ("axial", 1), "cranial": ("axial", 1),
    "cranially": ("axial", 1), "higher": ("axial", 1), "headward": ("axial", 1),
    "down": ("axial", -1), "downward": ("axial", -1), "downwards": ("axial", -1),
    "inferior": ("axial", -1), "inferiorly": ("axial", -1), "caudal": ("axial", -1),
    "caudally": ("axial", -1), "lower": ("axial", -1), "footward": ("axial", -1),
    "deeper": ("coronal", -1), "shallower": ("coronal", 1),
}
SIGN_WORDS = {
    "raise": 1, "elevate": 1, "plus": 1, "increase": 1, "increment": 1, "advance": 1,
    "next": 1, "further": 1,
    "minus": -1, "decrease": -1, "decrement": -1, "reduce": -1, "previous": -1, "prior": -1,
}
NAMED_POS = {
    "middle": "middle", "center": "middle", "centre": "middle", "mid": "middle",
    "midpoint": "middle", "halfway": "middle", "max": "max", "maximum": "max", "last": "max",
    "top": "max", "end": "max", "topmost": "max", "highest": "max", "min": "min",
    "minimum": "min", "first": "min", "bottom": "min", "start": "min", "beginning": "min",
    "lowest": "min", "bottommost": "min", "midline": "middle", "centerline": "middle",
}
WINDOWS = {
    "lung": "lung", "pulmonary": "lung", "parenchyma": "lung", "mediastinum": "mediastinum",
    "mediastinal": "mediastinum", "mediast": "mediastinum",
    "soft": "soft_tissue", "tissue": "soft_tissue",
    "bone": "bone", "bony": "bone", "skeletal": "bone",
}
_VAGUE_POS = {"start", "end", "beginning"}
# words that may stand between a direction and its step ("down by another 10")
_STEP_GLUE = {"by", "another", "additional", "extra", "a", "further", "more", "the", "of",
              "about", "around", "like", "roughly", "approximately", "exactly", "just", "some",
              "maybe", "say", "nearly", "almost", "approx", "circa", "farther"}
# Nouns that make the next number a slice index ("slice 40", "positions 20, 250 and 260").
_INDEX_NOUNS = {"slice", "number", "numbers", "position", "positions", "index", "indices",
                "indexes", "image", "coordinates", "coordinate"}
# Words that hedge a number ("about 20", "20 or so"): the number is meant as said.
_APPROXIMATORS = {"about", "around", "roughly", "approximately", "approx", "some", "like",
                  "maybe", "say", "nearly", "almost", "circa", "or", "so", "ish", "somewhere",
                  "near", "close"}
REPEAT_COUNTS = {"once": 1, "twice": 2, "thrice": 3, "double": 2, "triple": 3}

AR_VIEW_WORDS = {
    "anterior": "anterior", "front": "anterior", "frontal": "anterior", "ant": "anterior",
    "posterior": "posterior", "back": "posterior", "behind": "posterior", "rear": "posterior",
    "post": "posterior", "dorsal": "posterior", "left": "left", "right": "right",
    "superior": "superior", "top": "superior", "above": "superior", "overhead": "superior",
    "cranial": "superior", "sup": "superior", "inferior": "inferior", "bottom": "inferior",
    "below": "inferior", "underneath": "inferior", "beneath": "inferior", "under": "inferior",
    "caudal": "inferior", "inf": "inferior", "surgical": "surgical", "surgeon": "surgical",
    "operative": "surgical", "operating": "surgical", "default": "surgical",
    "standard": "surgical", "console": "surgical",
}
ROTATE_VERBS = {"rotate", "rotation", "rotating", "rotated", "spin", "spinning", "swing",
                "swivel", "revolve", "twist", "orbit", "turn", "turning", "roll", "tilt", "tip",
                "pivot", "twirl", "whirl", "rock"}
ROTATE_DIRS = {
    "left": "left", "right": "right", "up": "up", "down": "down", "upward": "up",
    "upwards": "up", "downward": "down", "downwards": "down", "horizontal": "horizontal",
    "horizontally": "horizontal", "vertical": "vertical", "vertically": "vertical",
    "horiz": "horizontal", "vert": "vertical",
    "clockwise": "right", "counterclockwise": "left", "anticlockwise": "left",
    "sideways": "horizontal", "around": "horizontal", "360": "horizontal",
    "leftward": "left", "rightward": "right",
}
STOP_WORDS_ROT = {"stop", "freeze", "static", "still", "halt", "pause", "stationary", "cease"}

# Structures (AR)
STRUCT_WORDS = {
    "nodule": "lung_nodules", "nodules": "lung_nodules", "tumor": "lung_nodules",
    "tumors": "lung_nodules", "lesion": "lung_nodules", "lesions": "lung_nodules",
    "mass": "lung_nodules", "masses": "lung_nodules", "cancer": "lung_nodules",
    "airway": "trachea_bronchia", "airways": "trachea_bronchia",
    "trachea": "trachea_bronchia", "bronchi": "trachea_bronchia",
    "bronchus": "trachea_bronchia", "windpipe": "trachea_bronchia",
    "tracheobronchial": "trachea_bronchia", "lingula": "left_upper_lobe",
    "trach": "trachea_bronchia", "bronch": "trachea_bronchia", "nods": "lung_nodules",
    "rul": "right_upper_lobe", "rml": "right_middle_lobe", "rll": "right_lower_lobe",
    "lul": "left_upper_lobe", "lll": "left_lower_lobe",
}
LOBE_POS = {"upper": "upper", "superior": "upper", "top": "upper", "middle": "middle",
            "mid": "middle", "lower": "lower", "inferior": "lower", "bottom": "lower"}
SIDES = {"left": "left", "right": "right", "both": "both", "bilateral": "both", "bilat": "both",
         "r": "right", "l": "left", "rt": "right", "lt": "left"}

# IR fields
FIELD_WORDS = {
    "age": ("age", "sex"), "old": ("age", "sex"), "years": ("age", "sex"),
    "sex": ("age", "sex"), "gender": ("age", "sex"), "male": ("age", "sex"),
    "female": ("age", "sex"), "demographics": ("age", "sex"), "demographic": ("age", "sex"),
    "diagnosis": ("diagnosis",), "diagnoses": ("diagnosis",), "dx": ("diagnosis",),
    "diagnosed": ("diagnosis",), "comorbidities": ("comorbidities",),
    "comorbidity": ("comorbidities",), "comorbid": ("comorbidities",),
    "comorbs": ("comorbidities",), "comorb": ("comorbidities",),
    "history": ("comorbidities",), "pmh": ("comorbidities",), "hx": ("comorbidities",),
    "dos": ("operation_date",),
    "height": ("height",), "tall": ("height",), "stature": ("height",), "ht": ("height",),
    "weight": ("weight",), "weigh": ("weight",), "weighs": ("weight",), "heavy": ("weight",),
    "wt": ("weight",), "bmi": ("bmi",), "pft": ("pft",), "pfts": ("pft",),
    "spirometry": ("pft",), "fev1": ("pft",), "fvc": ("pft",), "dlco": ("pft",),
    "man": ("age", "sex"), "woman": ("age", "sex"), "boy": ("age", "sex"),
    "girl": ("age", "sex"), "born": ("age", "sex"), "birthday": ("age", "sex"),
    "scheduled": ("operation_date",), "summary": (), "overview": (), "profile": (),
    "diabetes": ("comorbidities",), "diabetic": ("comorbidities",),
    "hypertension": ("comorbidities",), "hypertensive": ("comorbidities",),
    "copd": ("comorbidities",), "asthma": ("comorbidities",), "emphysema": ("comorbidities",),
    "hyperlipidemia": ("comorbidities",), "dyslipidemia": ("comorbidities",),
    "physical": ("height", "weight", "bmi"), "anthropometric": ("height", "weight", "bmi"),
    "anthropometrics": ("height", "weight", "bmi"), "physique": ("height", "weight", "bmi"),
}
FIELD_PHRASES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (("pulmonary", "function"), ("pft",)), (("lung", "function"), ("pft",)),
    (("respiratory", "function"), ("pft",)), (("breathing", "test"), ("pft",)),
    (("lung", "capacity"), ("pft",)), (("body", "mass", "index"), ("bmi",)),
    (("body", "mass"), ("bmi",)), (("body", "weight"), ("weight",)), (("tumor", "location"), ("tumor_location",)),
    (("location", "of", "the", "tumor"), ("tumor_location",)),
    (("location", "of", "tumor"), ("tumor_location",)),
    (("tumor", "site"), ("tumor_location",)), (("tumor", "position"), ("tumor_location",)),
    (("tumor", "information"), ("tumor_location",)), (("tumor", "info"), ("tumor_location",)),
    (("tumor", "details"), ("tumor_location",)),
    (("which", "lobe"), ("tumor_location",)), (("what", "lobe"), ("tumor_location",)),
    (("past", "medical", "history"), ("comorbidities",)),
    (("medical", "history"), ("comorbidities",)), (("past", "history"), ("comorbidities",)),
    (("underlying", "disease"), ("comorbidities",)),
    (("medical", "problems"), ("comorbidities",)), (("health", "problems"), ("comorbidities",)),
    (("other", "problems"), ("comorbidities",)),
    (("underlying", "diseases"), ("comorbidities",)),
    (("underlying", "conditions"), ("comorbidities",)),
    (("other", "diseases"), ("comorbidities",)), (("other", "conditions"), ("comorbidities",)),
    (("body", "measurements"), ("height", "weight", "bmi")),
    (("body", "size"), ("height", "weight", "bmi")),
    (("body", "info"), ("height", "weight", "bmi")),
    (("how", "old"), ("age", "sex")), (("how", "tall"), ("height",)),
    (("how", "heavy"), ("weight",)), (("how", "much", "does"), ()),
    (("date", "of", "surgery"), ("operation_date",)),
    (("date", "of", "the", "surgery"), ("operation_date",)),
    (("date", "of", "operation"), ("operation_date",)),
    (("date", "of", "the", "operation"), ("operation_date",)),
    (("male", "or", "female"), ("age", "sex")),
]
# "breathing tests", "lung function values": a word about breathing with a measurement noun
_PFT_QUALIFIERS = {"lung", "lungs", "pulmonary", "respiratory", "breathing", "spirometry",
                   "spirometric", "ventilatory", "pft"}
_PFT_NOUNS = {"function", "test", "testing", "value", "result", "number", "measurement",
              "capacity", "study", "volume", "parameter", "figure", "score", "stat", "reading",
              "data", "report"}
_PFT_RE = re.compile(r"\b(?:" + "|".join(sorted(_PFT_QUALIFIERS)) + r") (?:"
                     + "|".join(sorted(_PFT_NOUNS)) + r")(?:s|es)?\b")


def _singular(tok: str) -> str:
    """The singular of a plural noun, roughly ("tests" → test, "studies" → study); other
    words unchanged. Only used to match field phrases, so rough is enough."""
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is", "ics")):
        return tok[:-1]
    return tok


OP_WORDS = {"operation", "surgery", "procedure", "op", "surgical", "operative", "surg"}

# Verbs and cue words
SHOW_VERBS = {"remind", "visible", "readd", "show", "display", "open", "see", "view",
              "visualize", "visualise", "present",
              "check", "load", "activate", "enable", "launch", "reveal", "unhide", "bring",
              "pull", "put", "give", "look", "let", "need", "want", "get", "tell", "list",
              "read", "pop", "what", "how", "where", "which", "who", "when", "stick", "chuck",
              "bung", "whack", "slap"}
HIDE_VERBS = {"hide", "remove", "clear", "close", "erase", "delete", "dismiss", "disable",
              "deactivate", "kill", "drop", "without", "exclude", "lose", "off", "away",
              "rid", "cancel", "eliminate", "unshow", "wipe", "bin", "ditch", "scrap", "dump",
              "nix"}
RESET_VERBS = {"reset", "initialize", "reinitialize", "restore", "restart", "refresh",
               "default", "defaults", "initial", "original"}
ADD_WORDS = {"add", "also", "too", "include", "additionally", "plus", "well", "addition",
             "along", "together", "another"}
ONLY_WORDS = {"only", "just", "alone", "solely", "exclusively"}
ZOOM_IN_WORDS = {"enlarge", "magnify", "bigger", "larger", "big", "large", "closer",
                 "maximize", "maximise", "expand", "fullscreen", "closeup", "focus", "near",
                 "nearer"}
ZOOM_OUT_WORDS = {"smaller", "shrink", "minimize", "minimise", "unzoom", "wider",
                  "farther", "reduce", "small"}
MOVE_VERBS = {"move", "go", "scroll", "step", "jump", "navigate", "shift", "slide", "set",
              "put", "take", "bring", "change", "switch", "page", "flip", "advance", "head",
              "travel", "skip", "position", "center", "centre", "increase", "decrease", "push",
              "raise", "elevate", "knock", "nip", "shunt", "scoot", "scootch", "inch", "edge",
              "creep", "come", "bump"}
QUESTION_WORDS = {"what", "how", "where", "which", "who", "when", "whats", "is", "are", "does",
                  "do", "can", "could"}
# The words of a negated request ("I don't need …", "no longer needed"), read by hide.
_NEGATION = {"not", "no", "longer", "anymore", "needed", "required", "necessary", "wanted",
             "need", "want", "any", "more", "show", "display", "see", "enough"}
REPEAT_WORDS = {"again", "more", "repeat", "another", "further", "same", "keep", "continue"}

# Words with no meaning of their own here: never counted as left over.
FILLER = set(_words("""
the a an please can could would will you me i we us let lets of in on for with it its this
that these those now just kindly want wanna like need is are be some my our your so okay ok
then and also there their here bit little slightly quickly slowly quick do does did have has get
got give see look at to by from patient patients pt her she his he him them they current
currently actually very really um uh er hey go want lets maybe kind sort thing things same
one again thanks thank hmm yeah yes real nice good alright as well too into onto um uh erm
mind kindly perhaps possibly quick or pls plz thx even
hm ah oh doing today going gonna performing here right_now moment quickly guys team folks
mate mates buddy boss doc sir madam love righto cheers
exactly there's anything something screen monitor overlay
toward towards over is am was were been being being should shall might must up down
settings setting preset presets ones aware
""")) - {"up", "down"}
SEPARATORS = {",", "and", "then", "also", "afterwards", "afterward", "next", "plus"}
SEQ_SEPARATORS = {"then", "afterwards", "afterward", "after", "next"}


IR_STRONG = set(FIELD_WORDS) | {"summary", "overview", "profile", "comorbidities",
                                 "diagnosis", "info", "information", "fields", "field", "details",
                                 "demographics", "location", "box", "sheet", "clinical",
                                 "chart", "operation", "surgery", "procedure", "date",
                                 "values", "textbox", "data", "record", "file", "notes",
                                 "records", "case"}
IV_STRONG = set(PLANE_WORDS) | {"images", "imaging", "pictures", "films", "chest", "radiograph",
                                "radiographs", "tomography", "ct", "scan", "scans", "slice",
                                "slices", "plane", "planes",
                                "window", "mediastinum", "mediastinal", "mpr", "dicom",
                                "radiology", "cts", "level", "windowing", "layout", "grid"}
AR_STRONG = set(STRUCT_WORDS) | {"tumorlobe", "bronchial", "3d", "model", "anatomy",
                                 "reconstruction", "rendering",
                                 "hologram", "lobe", "lobes", "lung", "lungs", "structures",
                                 "structure", "rotate", "rotation", "spin", "swing",
                                 "vertically", "horizontally", "lobar", "segmentation",
                                 "rotating", "spinning", "swivel", "revolve", "twist", "orbit",
                                 "tilt", "tip", "pivot", "twirl", "whirl", "clockwise",
                                 "counterclockwise", "anticlockwise",
                                 "readd"}


# Every word the grammar reads: the validator counts a sentence with one of them as a command.
VOCABULARY: frozenset[str] = frozenset(
    set(PLANE_WORDS) | set(DIRECTIONS) | set(SIGN_WORDS) | set(NAMED_POS) | set(WINDOWS)
    | set(REPEAT_COUNTS) | set(AR_VIEW_WORDS) | ROTATE_VERBS | set(ROTATE_DIRS)
    | STOP_WORDS_ROT | set(STRUCT_WORDS) | set(LOBE_POS) | set(FIELD_WORDS) | OP_WORDS
    | (SHOW_VERBS - QUESTION_WORDS - {"let", "need", "want", "get", "give", "put", "see",
                                      "look", "tell", "check"})
    | (HIDE_VERBS - {"off", "away", "without", "rid", "drop", "lose", "kill", "cancel"})
    | RESET_VERBS | ZOOM_IN_WORDS | ZOOM_OUT_WORDS | IR_STRONG | IV_STRONG | AR_STRONG
    | {"zoom", "add", "readd", "move", "scroll", "slice", "slices", "side", "lateral",
       "upside", "flip", "remind", "highlight", "head", "feet", "foot", "hold", "pull",
       "nudge", "deeper", "shallower", "midline", "done", "finished", "imaging", "images",
       "pictures", "chest", "dimensional", "showing", "displaying", "bring", "opposite",
       "measurements", "everything"}
)


# ---------------------------------------------------------------------------------------------
# verb forms
# ---------------------------------------------------------------------------------------------

_VOWELS = set("aeiou")
_IRREGULAR_FORMS = {"spun": "spin", "swung": "swing", "shown": "show", "hidden": "hide",
                    "brought": "bring", "taken": "take", "took": "take", "gone": "go",
                    "went": "go", "got": "get", "gotten": "get", "put": "put", "set": "set"}
# Verbs whose -ing/-ed forms are ordinary talk more often than requests ("looking good",
# "we need it", "let me see"): their forms stay words of their own.
_TALK_VERBS = {"look", "see", "let", "need", "want", "get", "give", "tell", "read", "check",
               "go", "come", "head", "put", "set", "keep", "continue", "like",
               # members of the verb tables that are not verbs
               "off", "away", "without", "rid", "well", "how", "what", "where", "which", "who",
               "when", "visible", "initial", "original", "default", "defaults", "lose"}


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

