"""Token shapes of phrasal verbs, discourse markers and remarks: "get the model up", "right,
show ...", a statement about the case, a complaint that is a request in disguise.
"""

from __future__ import annotations

from app.agents.grammar_clauses import (
    _PARTICLE_TAIL,
    Clause,
    _is_num,
)
from app.agents.grammar_ir import (
    ir_fields,
)
from app.agents.structure_names import ar_structures
from app.language import words as language_words
from app.language.command_words import _words
from app.language.vocabulary import (
    DIRECTIONS,
    FILLER,
    HIDE_VERBS,
    MOVE_VERBS,
    NAMED_POS,
    PLANE_WORDS,
    QUESTION_WORDS,
    ROTATE_VERBS,
    SHOW_VERBS,
    ZOOM_IN_WORDS,
    ZOOM_OUT_WORDS,
)

_PARTICLE_VERBS = {"bring", "pull", "put", "open", "show", "call", "pop", "load", "fire",
                   "light", "set", "give", "hand", "turn", "switch"}


# Verbs that take "up" as a particle meaning "on screen" ("get the model up", "pop the CT up")
# and verbs that take "down" as "off screen" ("take the model down"). Only when the words in
# between are the object (no plane, number or rotation verb) and nothing after "up"/"down"
# gives a step: "bring the axial up 20", "take it down a bit" stay moves.
_SHOW_PARTICLE_VERBS = {"get", "bring", "put", "pull", "pop", "call", "load", "throw", "stick",
                        "flash", "fire", "readd", "have", "chuck", "whack", "slap", "bung",
                        "shove"}
_HIDE_PARTICLE_VERBS = {"take", "bring", "put", "shut", "close"}
# Wishes with "up" that put a display on screen when a display is their object ("I'd like the
# CT up", "we want the model up"); a plane or slice there stays a move ("I want the axial up").
_WISH_VERBS = {"like", "want", "need", "wanna"}
_DISPLAY_UP = {"model", "3d", "reconstruction", "ct", "scan", "scans", "images", "box", "info",
               "information", "details", "data", "anatomy", "rendering", "sheet"}
_CLAUSE_END = {",", "and", "then", "also", "after", "afterwards", "next", "plus"}
# Words that end an object noun phrase ("and" does not: "put her age and gender up").
_OBJECT_BREAKS = (_CLAUSE_END - {"and"}) | MOVE_VERBS | ROTATE_VERBS | HIDE_VERBS | {
    "zoom", "show", "display", "open", "make", "go"}
# Words that make "down" a step rather than a particle ("take it down a bit").
_STEP_WORDS = {"a", "bit", "little", "slightly", "more", "further", "by", "some", "touch",
               "tad", "notch", "another", "again", "lot"}


def _particle_object(tokens: list[str], verb: int, particle: int) -> bool:
    """Are the words between a phrasal verb and its particle an object to show or hide?"""
    between = tokens[verb + 1:particle]
    # a comma may list objects ("put the diagnosis, the comorbidities and the name up")
    return len(between) <= 10 and not any(
        t in PLANE_WORDS or t in DIRECTIONS or t in ROTATE_VERBS or t in NAMED_POS
        or t in _OBJECT_BREAKS and t != "," or _is_num(t) for t in between)


def _closes_clause(tokens: list[str], i: int) -> bool:
    """Does nothing after token i, up to the end of its clause, give a step or direction?"""
    for t in tokens[i + 1:]:
        if t in _CLAUSE_END:
            return True
        if t not in _PARTICLE_TAIL:
            return False
    return True


# Words that may stand with a display noun in a verbless "X up" ("the CT scan up").
_BARE_UP_OBJECT = _DISPLAY_UP | {"the", "a", "lung", "lungs", "patient", "her", "his", "our",
                                 "3d", "ct", "please", "uh", "um"}


def _clause_start_back(tokens: list[str], i: int) -> int:
    """How many tokens before i belong to i's clause."""
    k = i
    while k > 0 and tokens[k - 1] not in _CLAUSE_END:
        k -= 1
    return i - k


def _bare_display_up(tokens: list[str], i: int) -> bool:
    """A verbless "<display> up" ending its clause ("model up", "scan up, please") puts that
    display on screen, as "get the model up" does; a plane ("axial up") or a verb ("move
    up", "rotate the model up") keeps it a move."""
    obj = tokens[i - _clause_start_back(tokens, i):i]
    return bool(obj) and all(t in _BARE_UP_OBJECT for t in obj) and \
        bool(set(obj) & _DISPLAY_UP) and _closes_clause(tokens, i)


def _drop_particles(tokens: list[str]) -> list[str]:
    """Phrasal-verb particles that are not directions: "get the model up" shows the model,
    "take the CT down" hides it ("turn it up" stays: it may be a rotation)."""
    out: list[str] = []
    for i, t in enumerate(tokens):
        prev = tokens[i - 1] if i else ""
        if t == "up" and prev in _PARTICLE_VERBS - {"turn", "switch", "show"}:
            continue
        if t == "down" and prev in _HIDE_PARTICLE_VERBS and out and out[-1] == prev:
            end = next((k for k in range(i + 1, len(tokens)) if tokens[k] in _CLAUSE_END),
                       len(tokens))
            obj = tokens[i + 1:end]
            if obj and _particle_object(tokens, i, end) and not set(obj) & _STEP_WORDS:
                out[-1] = "hide"  # "take down the model"
                continue
        if t == "up" and _bare_display_up(tokens, i):
            k = len(out) - _clause_start_back(tokens, i)
            out.insert(k, "show")  # "model up", "scan up, please": put it on screen
            continue
        if t in ("up", "down") and (_closes_clause(tokens, i) or t == "up" and tokens[
                i + 1:i + 2] in (["at"], ["on"]) and not _is_num(prev)):
            verbs = _SHOW_PARTICLE_VERBS | _WISH_VERBS if t == "up" else _HIDE_PARTICLE_VERBS
            j = next((k for k in range(i - 1, max(-1, i - 12), -1) if tokens[k] in verbs
                      or tokens[k] in _OBJECT_BREAKS and tokens[k] != ","), -1)
            if j >= 0 and tokens[j] in verbs and j < i - 1 and _particle_object(tokens, j, i) \
                    and (tokens[j] not in _WISH_VERBS or _DISPLAY_UP & set(tokens[j + 1:i])):
                if t == "down":
                    k = len(out) - (i - j)
                    out[k] = "hide"  # "take the model down" = hide the model
                continue
        out.append(t)
    return out


# Words that open an utterance without being part of the command ("right, zoom in",
# "okay so show the CT", "perfect, now the model").
_DISCOURSE = set(language_words("discourse_markers"))  # app/language/data/words.toml
# Words that show the marker before them was not a command word ("right let us see the CT").
_DISCOURSE_NEXT = _DISCOURSE - {"right"} | {"let", "lets", "can", "could", "would", "i", "we"}


def _drop_discourse(tokens: list[str]) -> list[str]:
    """Drop discourse markers opening the command. "right" stays a direction when it is
    not followed by a pause or another marker, or when only directions and steps follow
    ("right, right", "right, 20")."""
    i = 0
    while i < len(tokens) and tokens[i] in _DISCOURSE:
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if nxt == ",":
            j = i + 2
        elif nxt in _DISCOURSE_NEXT:
            j = i + 1
        else:
            break
        core = [t for t in tokens[j:] if t not in FILLER and t != "," and t not in _DISCOURSE]
        verb = any(t in MOVE_VERBS or t in SHOW_VERBS or t in ROTATE_VERBS or t == "go"
                   for t in tokens[j:])
        if not core or tokens[i] == "right" and not verb and all(
                t in DIRECTIONS or _is_num(t) for t in core):
            break
        i = j
    return tokens[i:]


# Adjectives of manner or quality that say nothing the console can do ("nice and big",
# "slow and steady", "big and clear"), and the size/manner words they pair with.
_QUALITY_ADJ = {"nice", "good", "lovely", "real", "clear", "sharp", "crisp", "bright",
                "steady", "easy", "gentle", "smooth", "tidy", "neat", "proper", "slow",
                "slowly", "gently", "nicely", "clearly"}
_SIZE_ADJ = ZOOM_IN_WORDS | ZOOM_OUT_WORDS | {"close", "wide", "centered", "centred", "high",
                                              "low", "quick", "quickly", "tight"}
_PAIR_FOLLOW = {"", ",", "please", "for", "now", "on", "then", "and", "thanks", "so", "if",
                "again", "too", "as", "also", "in", "there", "here"}


def _join_adjective_pairs(tokens: list[str]) -> list[str]:
    """"nice and big" is one modifier, not two requests: keep the size word, drop "and" and
    the quality words ("clear" would otherwise read as a verb: "make it big and clear")."""
    out: list[str] = []
    i = 0
    n = len(tokens)
    while i < n:
        t = tokens[i]
        if i + 2 < n and tokens[i + 1] == "and" and \
                t in _QUALITY_ADJ | _SIZE_ADJ and tokens[i + 2] in _QUALITY_ADJ | _SIZE_ADJ \
                and (t in _QUALITY_ADJ or tokens[i + 2] in _QUALITY_ADJ) and \
                (tokens[i + 3] if i + 3 < n else "") in _PAIR_FOLLOW:
            # "close" as an adjective is "closer" (as a verb it would hide)
            out.extend("closer" if w == "close" else w for w in (t, tokens[i + 2])
                       if w not in _QUALITY_ADJ)
            i += 3
            continue
        out.append(t)
        i += 1
    return out


# A statement about the case ("the right upper lobe is really adherent today", "her lung
# function is borderline") names console things without asking for anything. Its shape: a
# subject noun phrase opened by a determiner, then a finite verb; or "I"/"we" with a verb of
# thinking or narrating. Requests with "I"/"we" use wanting verbs ("I need the coronal big").
_SUBJECT_DETERMINERS = {"the", "that", "this", "these", "those", "her", "his", "its", "our",
                        "their", "my", "your"}
_FINITE_VERBS = set(_words("""
is are was were looks look looked seems seem seemed feels feel felt made makes has have had
match matches matched came comes went goes did does will would should could might must
appears appeared showed shows gets got sits sat lies lay runs ran lives sitting lying
"""))
# Words that are verbs of ours but nouns after a determiner ("that view is perfect").
_VERB_NOUNS = {"view", "views", "display", "scan", "set", "step", "position", "slide", "turn",
               "head", "center", "centre", "change", "switch", "roll", "tip", "flip", "page"}
_FIRST_PERSON = {"i", "we"}
# "she has …", "he's got …": a remark about the patient (not "she wants …", a relayed request)
_PRONOUN_SUBJECTS = {"she", "he", "shes", "hes", "they"}
_STATE_VERBS = {"is", "was", "has", "had", "got", "looks", "looked", "seems", "seemed", "feels",
                "gets", "are", "were", "have"}
_AUXILIARIES = {"would", "will", "am", "are", "do", "did", "really", "just", "also", "still",
                "now", "definitely", "probably", "all"}
_THINKING_VERBS = set(_words("""
think thought guess believe reckon suppose feel felt know knew expect expected wonder hope
should checked went got had was were love loved hate planned said told saw
"""))
_STATEMENT_QUESTION_WORDS = {"what", "which", "where", "how", "when", "who", "whats"}


_ATTENTION_WORDS = {"see", "look", "listen", "watch", "so", "now"}


def _is_statement(tokens: list[str]) -> bool:
    """Is the command's first part a statement rather than a request (see above)?"""
    if len(tokens) > 2 and tokens[0] in _ATTENTION_WORDS and tokens[1] == ",":
        return _is_statement(tokens[2:])  # "See, the tumour sits right at the top ..."
    if "," in tokens:
        cut = tokens.index(",")
        if 0 < cut < len(tokens) - 1 and set(tokens[:cut]) <= language_words(
                "discourse_markers"):
            return _is_statement(tokens[cut + 1:])  # "Well shoot, that is not right, ..."
    first: list[str] = []
    for t in tokens:
        if t == ",":
            break
        first.append(t)
    negated_need = "not" in first and bool(set(first) & {
        "needed", "required", "necessary", "wanted", "need", "want", "useful", "helpful"})
    if not first or set(first) & _STATEMENT_QUESTION_WORDS or negated_need or "enough" in first:
        # a question, a negated request ("the CT is not needed"), or "that's enough X"
        # ("that is not right" stays a remark)
        return False
    if first[0] in _SUBJECT_DETERMINERS:
        for t in first[1:8]:
            if t in _FINITE_VERBS:
                return True
            if (t in SHOW_VERBS - QUESTION_WORDS or t in MOVE_VERBS or t in ROTATE_VERBS) \
                    and t not in _VERB_NOUNS:
                return False  # "the model, rotate it" / "the CT put up"
        return False
    if first[0] in _PRONOUN_SUBJECTS and (first[0] in ("shes", "hes") or any(
            t in _STATE_VERBS for t in first[1:3])):
        return True  # "she has a small chest", "he's got bad lungs": about the patient
    if first[0] in _FIRST_PERSON:
        rest = [t for t in first[1:] if t not in _AUXILIARIES]
        if not rest:
            return False
        verb, nxt = rest[0], rest[1] if len(rest) > 1 else ""
        if verb == "should" and nxt != "have":
            return False  # "we should zoom in": a suggestion is a request
        if verb in ("love", "hate") and nxt == "to":
            return False  # "I'd love to see the model"
        return verb in _THINKING_VERBS or verb == "are" and nxt not in ("done", "finished")
    return False


# A complaint about how something looks is a request in disguise ("the model is too small",
# "the patient box is in the way"): it is rewritten into the request it implies before the
# statement rule would reject it as a remark. Only these shapes count, so a remark such as
# "the nodule is small" stays a remark.
_COMPLAINT_SUBJECTS = _SUBJECT_DETERMINERS | {"it", "they", "everything", "things"}
_COMPLAINT_LINKS = {"is", "are", "looks", "look", "seems", "seem", "got", "gets", "was",
                    "were", "appears", "appear"}
_COMPLAINT_SOFTENERS = {"a", "bit", "little", "way", "far", "much", "really", "still",
                        "rather", "quite", "kind", "sort", "of", "kinda", "so", "just", "now",
                        "getting", "very", "pretty", "somewhat", "all", "too"}
_COMPLAINTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("too", "small"), ("zoom", "in")), (("too", "tiny"), ("zoom", "in")),
    (("not", "big", "enough"), ("zoom", "in")),
    (("hard", "to", "see"), ("zoom", "in")), (("hard", "to", "read"), ("zoom", "in")),
    (("difficult", "to", "see"), ("zoom", "in")), (("difficult", "to", "read"), ("zoom", "in")),
    (("too", "far", "away"), ("zoom", "in")), (("too", "far", "out"), ("zoom", "in")),
    (("too", "big"), ("zoom", "out")), (("too", "large"), ("zoom", "out")),
    (("too", "close"), ("zoom", "out")), (("too", "zoomed", "in"), ("zoom", "out")),
    (("in", "the", "way"), ("hide",)), (("covering",), ("hide",)), (("blocking",), ("hide",)),
    (("obstructing",), ("hide",)), (("distracting",), ("hide",)),
    (("cluttering",), ("hide",)), (("not", "needed"), ("hide",)),
)
_DISPLAY_NOUNS = {"model", "3d", "reconstruction", "ct", "scan", "scans", "image", "images",
                  "view", "views", "slice", "slices", "picture", "pictures", "box", "info",
                  "information", "text", "panel", "overlay", "window", "windows", "axial",
                  "coronal", "sagittal", "display", "screen", "details", "data", "lungs",
                  "anatomy", "rendering", "chart", "mpr", "recon", "sheet", "card", "summary"}
_DISMISS_LINKS = {"has", "have", "needs", "need", "can"}
_REQUEST_BY_SHOULD = {"bigger": ("zoom", "in"), "larger": ("zoom", "in"),
                      "smaller": ("zoom", "out")}


_REFERENT_WORDS = {"nodule", "nodules", "lesion", "tumor", "tumors", "tumour", "lobe", "lobes",
                   "airway", "airways", "trachea", "rul", "rml", "rll", "lul", "lll", "lung"}


def _with_referent(request: list[str], remark: list[str]) -> list[str]:
    """"that nodule is tiny, zoom in on it": "it" is what the remark was about."""
    verb = next((i for i, t in enumerate(remark) if t in _FINITE_VERBS), len(remark))
    subject = [t for t in remark[:verb] if t not in _SUBJECT_DETERMINERS]
    if not subject or not set(subject) & _REFERENT_WORDS:
        return request
    for i, t in enumerate(request):
        if t in ("it", "them") and i > 0:
            return [*request[:i], "the", *subject, *request[i + 1:]]
    return request


def _complaint_request(tokens: list[str]) -> list[str] | None:
    """The request a complaint implies ("the CT images are too small" -> "zoom in ct images"),
    or None. Only the whole command counts (nothing after a comma), so "the model is in the
    way, move it" keeps its explicit request."""
    if not tokens or "," in tokens or tokens[0] not in _COMPLAINT_SUBJECTS:
        return None
    link = next((i for i, t in enumerate(tokens[:8]) if t in _COMPLAINT_LINKS
                 or t in _DISMISS_LINKS or t == "should"), None)
    if link is None:
        return None
    subject = [t for t in tokens[:link] if t not in _COMPLAINT_SUBJECTS]
    rest = tokens[link + 1:]
    if tokens[link] in _DISMISS_LINKS:  # "the CT has to go", "the model can go now"
        # what can go may be a shown part too ("the BMI can go too", "the nodules can go")
        if subject and not set(subject) & _DISPLAY_NOUNS and not ir_fields(
                Clause(subject)) and not ar_structures(Clause(subject)):
            return None
        tail = [t for t in rest if t not in ("now", "please", "away", "off", "too", "also",
                                             "as", "well")]
        return ["hide", *subject] if tail in (["to", "go"], ["go"], ["to", "come"]) else None
    if subject and not set(subject) & _DISPLAY_NOUNS:
        return None  # "the nodule is too small": a remark about the anatomy, not the screen
    if tokens[link] == "should":  # "the views should be bigger"
        if rest[:1] == ["be"] and len(rest) >= 2 and rest[-1] in _REQUEST_BY_SHOULD and \
                all(t in _COMPLAINT_SOFTENERS | {"be", "a", "lot"} for t in rest[1:-1]):
            return [*_REQUEST_BY_SHOULD[rest[-1]], *subject]
        return None
    for i in range(len(rest)):
        if rest[i] not in _COMPLAINT_SOFTENERS or rest[i] == "too":
            break
    else:
        return None
    tail = rest[i:]
    for cue, request in _COMPLAINTS:
        if tuple(tail[:len(cue)]) == cue:
            after = tail[len(cue):]
            # "covering the view" / "too small to read" / "in the way of the video": what
            # follows only says what is hidden or why
            if after and request != ("hide",) and after[0] not in ("to", "for", "on", "now"):
                return None
            return [*request, *subject]
    return None
