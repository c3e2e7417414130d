"""The grammar's clauses and routing (DESIGN §3 tier 2): a command split into clauses, each
clause's intent, and which agent its words name. Shared by the per-agent decoders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from app.agents.decision import Memory
from app.agents.display_cues import (
    _dominant_agent,
    _is_num,
    agent_scores,
)
from app.core.state import ConsoleState
from app.language import words as language_words
from app.language.known_words import mid_particles
from app.language.normalize import _NUMBER_WORDS
from app.language.vocabulary import (
    _APPROXIMATORS,
    _STEP_GLUE,
    DIRECTIONS,
    FILLER,
    HIDE_VERBS,
    NAMED_POS,
    ONLY_WORDS,
    PLANE_WORDS,
    QUESTION_WORDS,
    REPEAT_WORDS,
    RESET_VERBS,
    ROTATE_VERBS,
    SEPARATORS,
    SEQ_SEPARATORS,
    SHOW_VERBS,
    STOP_WORDS_ROT,
    STRUCT_WORDS,
    ZOOM_IN_WORDS,
    ZOOM_OUT_WORDS,
)

ACCEPT = 0.75  # decisions at or above this confidence are taken without asking later tiers
# The most the grammar claims for a command with no console word in it (below the
# interpreter's floor: without a later tier such a command is asked again, never guessed).
_UNFAMILIAR_CONF = 0.5

_NUM_RE = re.compile(r"^([+-]?)(\d+)(?:st|nd|rd|th)?$")
_TIMES_RE = re.compile(r"^(\d+)x$|^x(\d+)$")


# ---------------------------------------------------------------------------------------------
# clauses
# ---------------------------------------------------------------------------------------------

@dataclass
class Clause:
    toks: list[str]
    sep: str = ""  # the separator spoken before this clause
    inherited: list[str] = field(default_factory=list)  # verb carried from the clause before
    used: list[bool] = field(default_factory=list)
    planes: list[str] = field(default_factory=list)  # planes named (set by iv_moves)
    guess: bool = False  # a rule filled in something the words did not say

    def __post_init__(self) -> None:
        if not self.used:
            self.used = [False] * len(self.toks)

    @property
    def words(self) -> list[str]:
        return self.inherited + self.toks

    def has(self, *words: str) -> bool:
        s = set(self.toks) | set(self.inherited)
        return any(w in s for w in words)

    def index(self, word: str, start: int = 0) -> int:
        try:
            return self.toks.index(word, start)
        except ValueError:
            return -1

    def use(self, *idx: int) -> None:
        for i in idx:
            if 0 <= i < len(self.used):
                self.used[i] = True

    def use_words(self, words: Iterable[str]) -> bool:
        ws = set(words)
        hit = False
        for i, t in enumerate(self.toks):
            if t in ws:
                self.used[i] = True
                hit = True
        return hit

    def find_phrase(self, phrase: Sequence[str]) -> int:
        n = len(phrase)
        for i in range(len(self.toks) - n + 1):
            if tuple(self.toks[i:i + n]) == tuple(phrase):
                return i
        return -1

    def use_phrase(self, phrase: Sequence[str]) -> bool:
        i = self.find_phrase(phrase)
        if i < 0:
            return False
        self.use(*range(i, i + len(phrase)))
        return True

    def leftover(self) -> list[str]:
        # manner adverbs ("slowly and carefully") say how, which the console does not vary
        # "the upper lobe, the lower lobe, both add": "both" before the verb points back at
        # what was named, as "them" does
        return [t for k, (t, u) in enumerate(zip(self.toks, self.used, strict=True))
                if not u and t not in FILLER and t != "," and not _MANNER_ADVERB.match(t)
                and not (t == "both" and self.toks[k + 1:k + 2] and
                         self.toks[k + 1] in _BOTH_VERBS)
                and not (t in _EVERY_DISPLAY and _dominant_agent(self.toks) is not None
                         and _exception_at(self.toks) is None)]


# Adverbs of manner by their shape ("carefully", "gradually", "slowly", "gently", "steadily");
# not nouns that happen to end in -ly ("family", "anomaly").
_MANNER_ADVERB = re.compile(r"^(?:[a-z]{2,}(?:ful|ous|ent|ant|ive|ate|ed|al|ic|ible|able|less|"
                            r"ish|ow|ick|ft|th|nt|ct|rm|ar|et|nd|ng|ure)ly|[a-z]{3,}(?<!fam)ily)$")


_STEP_ON = {"on", "in", "for", "the", "that", "this", "slices", "slice", "steps"}


def _has_head(toks: list[str]) -> bool:
    """Does a segment carry its own command (a verb, a move, a question)?"""
    s = set(toks)
    if s & (SHOW_VERBS - {"let", "need", "want", "get", "look", "give", "put", "pull"}):
        return True
    if s & (HIDE_VERBS - {"off", "away", "without", "rid", "well"}) or s & RESET_VERBS:
        return True
    if s & {"zoom", "rotate", "spin", "turn", "swing", "add", "move", "go", "scroll",
            "take", "switch", "make", "put", "bring", "set", "increase", "decrease", "stop",
            "enlarge", "magnify", "shrink", "look", "give", "get"}:
        return True
    if s & set(PLANE_WORDS) and any(_is_num(t) or t in NAMED_POS for t in toks):
        return True
    if s & ZOOM_IN_WORDS or s & ZOOM_OUT_WORDS:
        return True
    return bool(s & REPEAT_WORDS and len(toks) <= 3)


def _only_directions(toks: list[str]) -> bool:
    core = [t for t in toks if t not in FILLER]
    return bool(core) and all(t in DIRECTIONS or _is_num(t) for t in core)


_EDIT_VERBS = HIDE_VERBS | {"zoom", "add", "remove", "hide", "take", "rotate", "move",
                            "include", "turn", "put", "bring"}


def leaves_out(toks: Sequence[str], i: int) -> bool:
    """"only the right lung, no airway": "no" and a structure (no article: "no, the LLL" and
    "no the LLL" take back) after a selection with no verb of editing, leaves it out."""
    return toks[i] == "no" and 0 < i < len(toks) - 1 and toks[i - 1] in (",", "and") and \
        toks[i + 1] in STRUCT_WORDS and bool(set(toks[:i]) & ONLY_WORDS) and \
        not set(toks[:i]) & _EDIT_VERBS


_DEGREE_WORDS = {"a", "bit", "little", "more", "touch", "tad", "slightly", "lot", "even"}
# "no, keep them, take the airway off": leaving something as it is, said first, asks for
# nothing of its own ("hide the nodules, keep those" is no such thing: asked)
_KEEP_AS_IS = (["keep", "them"], ["keep", "it"], ["keep", "those"], ["keep", "that"],
               ["leave", "them"], ["leave", "it"])
_POINTERS = (["this", "one"], ["that", "one"], ["this", "one", "here"], ["that", "one", "there"])
_PRONOUNS = {"it", "this", "these", "that", "those", "them", "em", "one", "ones", "both"}
# app/language/data/words.toml: a clause that is only the lead of a request ("tell me, how
# old is she?") is the verb of what follows; "first" before a request verb orders it
_LEAD_ONLY = language_words("request_lead_only")
_ORDER_THEN_VERB = SHOW_VERBS | HIDE_VERBS | language_words("order_then_verb")
_MOVE_VERBS = {"bring", "put", "move", "go", "take", "set", "send", "make", "it", "you", "we",
               "minus", "plus", "to", "at", "slice"}
_VERB_TAIL = {"please", "on", "off", "up", "out", "in", "away", "for", "me", "us", "now",
              "too", "also", "only", "just", "alone", "add", "show"}


_DISPLAY_NOUNS = {"the", "patient", "patients", "box", "info", "information", "chart",
                  "details", "data", "ct", "scan", "mpr", "images", "3d", "model", "anatomy",
                  "reconstruction", "recon", "lungs", "lung"}


def _names_a_display_only(toks: list[str], shown: bool = False) -> bool:
    """"patient box", "the CT": a display named and nothing else; with ``shown``, also "show
    the patient information" (then the fields named next say what it shows)."""
    core = [t for t in toks if t not in FILLER and (not shown or t not in _TOPIC_VERBS)]
    return bool(core) and set(core) <= _DISPLAY_NOUNS and set(core) != {"the"} and \
        _dominant_agent(core) is not None


_TOPIC_VERBS = {"show", "display", "open", "bring", "up", "me", "us", "and", "on"}


def _object_then_verb(prev: list[str], core: list[str]) -> bool:
    """"the trachea, disable it", "the lesion, the nodules, these only show", "lung function,
    FEV1, this also add", "the trachea I don't need it, remove": a clause with no verb that
    names something, then a clause that is a verb and a pronoun (or the verb alone)."""
    scores = agent_scores(prev)
    scores.pop("tumor_q", None)
    if not core or _has_head([t for t in prev if t not in QUESTION_WORDS]) or \
            max(scores.values()) <= 0:
        return False
    verbs = [t for t in core if t in SHOW_VERBS or t in HIDE_VERBS or t == "add"]
    rest = [t for t in core if t not in verbs and t not in FILLER]
    return bool(verbs) and all(t in _PRONOUNS or t in _VERB_TAIL for t in rest) and \
        _has_head(core)


def _joining_plus(tokens: list[str], i: int) -> bool:
    """Is "plus" at i a joiner ("the small views plus a close-up of the nodule") rather than
    a relative step ("coronal plus 100", "axial plus a few")?"""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    prev = tokens[i - 1] if i else ""
    return bool(nxt) and not _is_num(nxt) and nxt not in _NUMBER_WORDS and \
        prev not in PLANE_WORDS and prev not in DIRECTIONS


# A rest of verbs and particles only: "also" before it does not start a command of its own.
_VERB_ONLY = HIDE_VERBS | SHOW_VERBS | {"turn", "off", "on", "out", "away", "take", "remove",
                                        "put", "switch", "it", "them"}
_BOTH_VERBS = _VERB_ONLY | {"add"}
# "all the overlays away: the model, the CT and the box": the displays as one, said beside
# the names of each
_EVERY_DISPLAY = {"overlays", "overlay", "displays", "screens", "windows", "panels"}


# The last word of a display's name ("the CT", "the patient info", "the 3D model").
_DISPLAY_NAME_ENDS = {"ct", "scan", "scans", "mpr", "model", "chart", "box", "info",
                      "information", "reconstruction", "recon", "sheet", "details", "images"}


def _display_list_pauses(tokens: list[str]) -> list[str]:
    """"hide the ct the patient info and the model": a list of displays written without its
    commas (recogniser text) gets them back where one display's name ends and another's
    begins."""
    out: list[str] = []
    start = 0
    for i, t in enumerate(tokens):
        if t == "the" and i and tokens[i - 1] in _DISPLAY_NAME_ENDS:
            before, after = _dominant_agent(tokens[start:i]), _dominant_agent(tokens[i:i + 4])
            if before and after and before != after:
                out.append(",")
                start = i
        out.append(t)
    return out


def split_clauses(tokens: list[str]) -> list[Clause]:
    """Split at "and/then/also/," where a new command starts; lists stay together."""
    if tokens[:1] in (["first"], ["firstly"], ["finally"], ["lastly"]) and tokens[1:2] and \
            tokens[1] in _ORDER_THEN_VERB:
        tokens = tokens[1:]  # "first tell me, how old is she": an order, not the first slice
    tokens = _display_list_pauses(tokens)
    segs: list[tuple[str, list[str]]] = []
    cur: list[str] = []
    sep = ""
    i = 0
    while i < len(tokens):
        t = tokens[i]
        two = " ".join(tokens[i:i + 2])
        if " ".join(tokens[i:i + 3]) == "as well as" and cur:
            # "clear the CT as well as the patient box": a joiner like "and" (a closing
            # "as well" still means add)
            segs.append((sep, cur))
            cur, sep = [], "and"
            i += 3
            continue
        if two == "and all" and all(t in ("please", ",", "then") for t in tokens[i + 2:]):
            cur.extend(["as", "well"])  # "the weight and all": British "as well"
            i += 2
            continue
        if two in ("after that", "and then", "then also", "and also", "as well", "followed by"):
            if two == "as well":  # "as well" means add, it does not split
                cur.extend(["as", "well"])
                i += 2
                continue
            segs.append((sep, cur))
            cur, sep = [], ("then" if two in ("after that", "and then", "followed by") else "and")
            if two in ("then also", "and also"):
                cur.append("also")
            i += 2
            continue
        if t in SEPARATORS and (t != "plus" or _joining_plus(tokens, i)):
            if t in ("also", "too") and (i + 1 == len(tokens) or tokens[i + 1] in (
                    "please", ",")):
                cur.append(t)  # "weight and height also": a closing "also" adds
                i += 1
                continue
            rest = [w for w in tokens[i + 1:] if w not in ("please", ",")]
            if t == "also" and cur and rest and all(w in _VERB_ONLY for w in rest):
                cur.append(t)  # "lesion also turn off": the verb said last is the noun's
                i += 1
                continue
            if t == "next" and i + 1 < len(tokens) and tokens[i + 1] in ("slice", "image"):
                cur.append(t)
                i += 1
                continue
            segs.append((sep, cur))
            cur, sep = [], t
            if t == "also":
                cur.append("also")
            i += 1
            continue
        cur.append(t)
        i += 1
    segs.append((sep, cur))
    # drop segments of fillers only ("uh, show the CT"), and a pointer at what was just named
    # ("coronal, this one, zoom in"): they carry no command of their own
    # and a particle of the speaker's own language opening the request or between two pauses
    # ("und also the date add", "the trachea, genau, remove it"), unless it is also a word of
    # ours ("coronal, right")
    aside = mid_particles()
    segs = [(s, c) for k, (s, c) in enumerate(segs) if c and not all(t in FILLER for t in c)
            and not (k and s == "," and [t for t in c if t not in FILLER] in _POINTERS)
            and not ((k == 0 or s == ",") and len(segs) > 1 and
                     all(t in FILLER or t in aside for t in c))
            and not (k == 0 and len(segs) > 1 and [t for t in c if t != "please"] in _KEEP_AS_IS)
            # "make the views small again, the three": the count of the views, no slice
            and not (k and [t for t in c if t != "please"] in (["the", "3"], ["all", "3"])
                     and {"views", "view"} & set(segs[k - 1][1]))]
    clauses: list[Clause] = []
    for sep, seg in segs:
        if not clauses:
            clauses.append(Clause(list(seg), sep))
            continue
        prev = clauses[-1]
        head = _has_head(seg)
        prev_agent = _dominant_agent(prev.words)
        seg_agent = _dominant_agent(seg)
        # a step said on its own after a comma belongs to the move before it ("move to 10,
        # 20, 50", "further down, about 20 slices"); approximators come with such numbers
        bare_nums = all(_is_num(t) or t in FILLER or t in ("slices", "slice", "steps")
                        or t in _APPROXIMATORS for t in seg) and (
            any(_is_num(t) for t in seg) or not set(seg) & _APPROXIMATORS)
        core = [t for t in seg if t not in FILLER]
        prev_core = [t for t in prev.toks if t not in FILLER]
        # "left, left, left", "axial down, down": the direction said again multiplies the
        # step ("right, right" after a move with a number may be a tag: not merged)
        repeated = bool(core) and bool(prev_core) and set(core) == {prev_core[-1]} and \
            core[0] in DIRECTIONS and sep not in SEQ_SEPARATORS and (
                _only_directions(prev.toks) or not any(_is_num(t) for t in prev.toks))
        # "axial, twenty down", "the coronal also to 300", "coronal, zoom in": a plane said
        # alone names the plane of the move or zoom after it
        named = [t for t in prev_core if t != "the"]
        plane_only = len(named) == 1 and named[0] in PLANE_WORDS and sep in (",", "also") and \
            bool(core) and not any(t in PLANE_WORDS for t in core) and (all(
                t in DIRECTIONS or _is_num(t) or t in FILLER or t in
                ("by", "slices", "steps", "more", "please", "side") for t in core) or any(
                _is_num(t) for t in core) and all(
                t in _STEP_GLUE or t in _MOVE_VERBS or _is_num(t) or t in FILLER
                for t in core) or bool(set(core) & ZOOM_IN_WORDS) or seg[:2] == ["zoom", "in"])
        # "axial and coronal to the middle": two planes share the value said after them
        shared = sep == "and" and len(named) == 1 and named[0] in PLANE_WORDS and \
            bool(core) and core[0] in PLANE_WORDS and sum(t in PLANE_WORDS for t in core) == 1 \
            and any(_is_num(t) or t in NAMED_POS for t in core)
        # "axial, twenty slices, down": the direction of the count said before the pause
        counted = _only_directions(seg) and prev_core[-1:] in (["slices"], ["steps"]) and \
            sep == ","
        # "zoom in, a bit more", "left, a little more": how much of the request before
        degree = sep == "," and bool(core) and set(core) <= _DEGREE_WORDS and \
            bool(set(core) & {"more", "bit", "little", "touch", "tad"}) and _has_head(prev.toks) \
            and not any(_is_num(t) for t in prev.toks)
        # "take me forward, say, forty on that coronal": the amount after the pause, with
        # the plane it is on
        step_on = sep == "," and bool(core) and _is_num(core[0]) and core[0][:1] not in "+-" \
            and any(t in DIRECTIONS for t in prev_core) and \
            not any(_is_num(t) for t in prev_core) and \
            sum(t in PLANE_WORDS for t in core) == 1 and set(core[1:]) <= _STEP_ON | set(
                PLANE_WORDS) and bool(set(prev_core) & _APPROXIMATORS) and any(
                t in DIRECTIONS and DIRECTIONS[t][0] == PLANE_WORDS.get(x)
                for t in prev_core for x in core)
        if bare_nums or repeated or plane_only or counted or shared or degree or step_on:
            prev.toks.extend(seg)  # "move to 10, 20, 50", "left, left, left"
            continue
        if sep == "," and head and (_names_a_display_only(prev.toks) and (
                seg_agent is None or seg_agent == prev_agent) or _names_a_display_only(
                prev.toks, shown=True) and seg_agent == prev_agent == "IR"):
            prev.toks.extend(seg)  # "patient box, the tumour location show": the topic first
            continue
        if sep == "," and prev.toks[-1:] in (["me"], ["us"]) and bool(core) and \
                all(t in _LEAD_ONLY or t in FILLER for t in prev.toks):
            prev.toks.extend(seg)  # "tell me, how old is the patient"
            continue
        if _object_then_verb(prev.toks, core):
            prev.toks.extend(seg)  # "the trachea, disable it": one command, object first
            continue
        if not head:
            if sep in SEQ_SEPARATORS:
                clauses.append(Clause(list(seg), sep, _verb_of(prev)))
            elif seg_agent is None or prev_agent is None or seg_agent == prev_agent:
                prev.toks.extend(["and", *seg])
            else:
                carried = _verb_of(prev, generic_only=True)
                if not carried and set(core) <= _DISPLAY_ONLY:
                    # "zoom out on the CT and on the model too": the same verb, other display
                    carried = _verb_of(prev)
                if carried == ["remove"] and seg[-1] in ("on", "up", "back"):
                    carried = ["show"]  # "turn the CT off and the model on"
                clauses.append(Clause(list(seg), sep, carried))
            continue
        clauses.append(Clause(list(seg), sep))
    for c in clauses:
        c.used = [False] * len(c.toks)
        if set(c.inherited) & (HIDE_VERBS | {"remove"}) and _names_a_slice(c.toks):
            c.inherited = ["show"]  # "hide the model and now the CT, coronal 200": shown
    return clauses


def _names_a_slice(toks: list[str]) -> bool:
    return any(t in PLANE_WORDS and _is_num(n) for t, n in zip(toks, toks[1:], strict=False))


_GENERIC_VERBS = SHOW_VERBS | HIDE_VERBS | RESET_VERBS | {"add"}
_DISPLAY_ONLY = {"on", "the", "too", "also", "as", "well", "for", "to", "with", "model", "3d",
                 "ct", "scan", "scans", "images", "anatomy", "reconstruction", "views", "viewer"}


def _verb_of(c: Clause, generic_only: bool = False) -> list[str]:
    words = c.words
    for i, t in enumerate(words):
        if t == "zoom" and not generic_only:
            return words[i:i + 2] if i + 1 < len(words) and words[i + 1] in ("in", "out") \
                else ["zoom", "in"]
        if t in ("rotate", "turn", "spin") and not generic_only:
            return [t]
        if t in ("off", "away", "rid"):
            # "take away the scans and the model", "turn off the CT and the model": the
            # particle made the verb a removal, so the later part is removed too
            return ["remove"]
        if t in _GENERIC_VERBS and t not in ("what", "how", "where", "which", "who", "when"):
            return [t]
        if t in ("what", "how", "where", "which") and not generic_only:
            return [t]
    return []


_BEFORE_AN_ADJECTIVE = {"very", "so", "quite", "pretty", "really", "is", "are", "was", "were",
                        "looks", "look", "seems", "nice", "crystal", "more", "less", "too",
                        "not", "be", "fairly", "nicely", "perfectly", "a", "an"}
_COPULAS = {"is", "are", "was", "were"}  # a question about a state ("is the airway clear")
_A_SIDE_OF = (["lower"], ["upper"], ["middle"], ["lobe"], ["lung"], ["lungs"], ["one"])


def clause_intent(c: Clause) -> str:
    w = c.words
    s = set(w)
    text = " ".join(w)
    # "farther" alone is farther away (zoom out); "farther down" continues a move
    zoom_out = s & ZOOM_OUT_WORDS
    if zoom_out == {"farther"} and any(t in DIRECTIONS for t in w):
        zoom_out = set()
    if re.search(r"\bzoom( \w+){0,3} (out|back|away)\b|\bzoom out\b", text) or zoom_out:
        return "zoom_out"
    if "zoom" in s or s & ZOOM_IN_WORDS:
        return "zoom_in"
    if s & RESET_VERBS:
        return "reset"
    core = {t for t in w if t not in FILLER}
    # "stop", "hold still", "no motion": a stop word with at most the thing that moves
    if core & (STOP_WORDS_ROT | {"hold", "no"}) and core <= STOP_WORDS_ROT | {
            "rotation", "rotating", "spinning", "moving", "hold", "motion", "animation", "no",
            "model"}:
        return "rotate"
    if s & (ROTATE_VERBS - {"turn"}) or re.search(
            r"\bturn (it |the model |\w+ )?(to the )?(left|right|up|down|around|horizontal\w*|"
            r"vertical\w*|sideways|over|clockwise|counterclockwise|anticlockwise|360)", text):
        return "rotate"
    hide_words = {"remove", "hide", "clear", "close", "erase", "delete", "dismiss", "disable",
                  "exclude", "deactivate", "wipe", "eliminate", "drop", "lose", "cancel", "kill",
                  "unshow", "bin", "ditch", "scrap", "dump", "nix"}
    # "I don't need the right lower lobe", "no need for the CT any more": not wanting
    # something shown is asking for it to go
    negated = re.search(r"\b(do|does|did|will|would) not (want|need|show|display|see|require|"
                        r"have)\b|\bno (longer )?need (for|of)\b|\bnot (needed|required|"
                        r"necessary|wanted)\b|\bno longer (want|need)\b", text)
    # "the model away", "away with the chart": "away" with no verb of its own is a removal
    away = "away" in s and not s & (SHOW_VERBS | set(_MOVE_VERBS) | ROTATE_VERBS | {
        "keep", "stay", "careful", "far"}) and " away from " not in f" {text} " and \
        not any(t in DIRECTIONS and w[k + 1:k + 2] not in _A_SIDE_OF for k, t in enumerate(w))
    if "clear" in s and all(k and w[k - 1] in _BEFORE_AN_ADJECTIVE or w[0] in _COPULAS and
                            "," not in w[:k] for k, t in enumerate(w) if t == "clear"):
        # "very clear today", "the view is clear", "a clear view", "is the airway clear"
        hide_words = hide_words - {"clear"}
    if s & hide_words or negated or away or (
            "without" in s and not s & (SHOW_VERBS - QUESTION_WORDS) and not (
                s & ONLY_WORDS and w.index("without") > min(
                    k for k, t in enumerate(w) if t in ONLY_WORDS))) or \
            re.search(r"\b(turn|switch|take|shut)( \w+){0,4} (off|away)\b|\bget rid\b|"
                      r"\boff (the )?(screen|monitor|display|overlay)\b|\b(everything|all) off\b|"
                      # "that's enough patient info", "enough of the model"
                      r"(?<!big )(?<!close )(?<!far )(?<!zoomed )\benough (of |with )?(the |that |"
                      r"this |her |his )?(?!(for|now|please|thanks)\b)[a-z0-9]+|"
                      r"\btake away\b|(?<!will )(?<!going to )(?<!gonna )(?<!we )(?<!i )\btake out\b|"
                      r"\btake (the|those|these) \w+( \w+){0,3} out\b|\bshut (it |them )?down\b|\bput( \w+){0,3} away\b|"
                      r"\b(turn|switch) (it |them |\w+ )?off\b|"
                      # "off it", "that off": a pronoun and the particle alone
                      r"^(off (it|that|this|them)|(it|that|this|them) off)( please| now)?$", text):
        return "hide"
    if "add" in s:
        return "add"
    if any(t in DIRECTIONS or t in PLANE_WORDS or t in NAMED_POS or _is_num(t) for t in w):
        return "move"
    if s & {"what", "how", "where", "which", "who", "when", "whats"}:
        return "question"
    return "show"


# ---------------------------------------------------------------------------------------------
# the per-command context
# ---------------------------------------------------------------------------------------------

@dataclass
class _Ctx:
    """What earlier clauses of the same command did (later clauses read it)."""

    state: ConsoleState
    memory: Memory
    iv_plane: str | None = None  # plane moved or enlarged by an earlier clause
    iv_mode: str | None = None
    ar_target: str | None = None
    ar_target_set: bool = False
    agent: str | None = None  # agent of the clause before
    ar_named: str | None = None  # structure (or group) the clause before named: "it"
    # structure keys the previous command named ("hide the airway" ... "bring it back"), for a
    # pronoun in the first clause of this one; None when it named none
    prior_named: list[str] | None = None
    referred_back: bool = False  # a pronoun was read as ``prior_named``
    notes: list[str] = field(default_factory=list)

    def zoom_plane(self) -> str:
        iv = self.state.iv
        return self.iv_plane or iv.main or iv.last_main or iv.last_moved or "axial"

    def context_plane(self) -> str:
        """Plane for a slice named without a plane ("go to slice 40", "the middle slice")."""
        iv = self.state.iv
        if self.iv_plane:
            return self.iv_plane
        if iv.mode == "zoom_view" and iv.main:
            return iv.main
        return iv.last_moved or iv.main or "axial"

    def current_ar_target(self) -> str | None:
        return self.ar_target if self.ar_target_set else self.state.ar.zoom_target


_EXCEPTIONS = (("except",), ("except", "for"), ("excluding",), ("but", "not"),
               ("apart", "from"), ("other", "than"), ("besides",), ("minus",), ("without",),
               ("but", "leave", "out"), ("leaving", "out"))


def _exception_at(toks: list[str]) -> tuple[int, int] | None:
    for k in range(1, len(toks)):
        for ex in sorted(_EXCEPTIONS, key=len, reverse=True):
            if tuple(toks[k:k + len(ex)]) == ex:
                return k, k + len(ex)
    return None


# ---------------------------------------------------------------------------------------------
# the tier
# ---------------------------------------------------------------------------------------------

@dataclass
class RoutedClause:
    clause: Clause
    agent: str | None
    intent: str
    source: str  # "words" | "carried" | "memory" | "state" | "lookahead" | "guess"
# What may follow a closing particle in the same clause ("get the model up for me please").
_PARTICLE_TAIL = language_words("particle_tail")
