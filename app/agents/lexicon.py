"""Tier 2 of the interpreter (DESIGN §3): a deterministic grammar over the domain vocabulary.

The corrected command is split into clauses ("and", "then", commas); each clause is routed to
an agent by the words that name one (CT, slice, lobe, BMI …), else by the clause before it in
the same command, else by memory (the last agent used, DESIGN §4), and then decoded by that
agent's rules into registry steps in the exact parameter forms of ``app.core.actions``.
Every token a rule uses is marked; the confidence falls with every content word left over, so
an unfamiliar phrasing comes out with low confidence (for the semantic/LLM tiers) instead of
a wrong confident answer.

Decisions taken where DESIGN §4 is silent (documented here, tested in tests/test_lexicon.py):
- "where is the tumour/nodule" asks for the ``tumor_location`` IR field, unless the words name
  the 3D model or the 3D model is the agent in use; then it adds the nodules to the model.
- Bare direction words ("left", "up") move the CT (DESIGN's direction convention), except
  right after the 3D model was used, where left/right/up/down rotate it and anterior/posterior/
  superior/inferior choose its view.
- "show the sagittal view" (a plane named, nothing moved) enlarges that plane.
- Within one command, adjacent IR.SHOW (or AR.SHOW) steps merge into one step; CT moves stay
  one step per spoken part.
- Phrasal verbs: "get/bring/pop/put the model up" shows it and "take/bring the CT down" hides
  it, unless a plane is the object or a step follows ("bring the axial up 20" moves).
- Another word for the same direction is emphasis, not a repetition ("a bit higher up" = one
  step; "up up" = two); "right up to the top" is "all the way"; "further"/"farther" continue
  in the named direction, else in the direction that plane last moved.
- A remark about the case ("the right upper lobe is really adherent today") is read with a
  confidence below the floor; before a request ("that view is perfect, now zoom in") it is
  dropped. A leading "right,"/"okay,"/"so," is a discourse marker, not a direction.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from app.agents.decision import Decision, Memory
from app.core.registry import Step
from app.core.state import ConsoleState
from app.core.vocab import AR_GROUPS, AR_STRUCTURES, IR_ALL_FIELDS, IV_DEFAULT_STEP, LOBES
from app.language import words as language_words
from app.language.normalize import _NUMBER_WORDS, _words, has_domain_content, tokens_of
from app.language.vocabulary import (
    _APPROXIMATORS,
    _INDEX_NOUNS,
    _NEGATION,
    _PFT_NOUNS,
    _PFT_QUALIFIERS,
    _PFT_RE,
    _STEP_GLUE,
    _VAGUE_POS,
    ADD_WORDS,
    AR_STRONG,
    AR_VIEW_WORDS,
    DIRECTIONS,
    FIELD_PHRASES,
    FIELD_WORDS,
    FILLER,
    HIDE_VERBS,
    IR_STRONG,
    IV_STRONG,
    LOBE_POS,
    MOVE_VERBS,
    NAMED_POS,
    ONLY_WORDS,
    OP_WORDS,
    PLANE_WORDS,
    QUESTION_WORDS,
    REPEAT_COUNTS,
    REPEAT_WORDS,
    RESET_VERBS,
    ROTATE_DIRS,
    ROTATE_VERBS,
    SEPARATORS,
    SEQ_SEPARATORS,
    SHOW_VERBS,
    SIDES,
    SIGN_WORDS,
    STOP_WORDS_ROT,
    STRUCT_WORDS,
    VOCABULARY,
    WINDOWS,
    ZOOM_IN_WORDS,
    ZOOM_OUT_WORDS,
    _singular,
    verb_lemmas,
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
        return [t for t, u in zip(self.toks, self.used, strict=True)
                if not u and t not in FILLER and t != "," and not _MANNER_ADVERB.match(t)]


# Adverbs of manner by their shape ("carefully", "gradually", "slowly", "gently", "steadily");
# not nouns that happen to end in -ly ("family", "anomaly").
_MANNER_ADVERB = re.compile(r"^(?:[a-z]{2,}(?:ful|ous|ent|ant|ive|ate|ed|al|ic|ible|able|less|"
                            r"ish|ow|ick|ft|th|nt|ct|rm|ar|et|nd|ng|ure)ly|[a-z]{3,}(?<!fam)ily)$")


def _is_num(tok: str) -> bool:
    return bool(_NUM_RE.match(tok))


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


def _joining_plus(tokens: list[str], i: int) -> bool:
    """Is "plus" at i a joiner ("the small views plus a close-up of the nodule") rather than
    a relative step ("coronal plus 100", "axial plus a few")?"""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
    prev = tokens[i - 1] if i else ""
    return bool(nxt) and not _is_num(nxt) and nxt not in _NUMBER_WORDS and \
        prev not in PLANE_WORDS and prev not in DIRECTIONS


def split_clauses(tokens: list[str]) -> list[Clause]:
    """Split at "and/then/also/," where a new command starts; lists stay together."""
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
    # drop segments of fillers only ("uh, show the CT"): they carry no command
    segs = [(s, c) for s, c in segs if c and not all(t in FILLER for t in c)]
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
        repeated = bool(core) and bool(prev_core) and set(core) == {prev_core[-1]} and \
            core[0] in DIRECTIONS and _only_directions(prev.toks) and sep not in SEQ_SEPARATORS
        # "axial, twenty down": a plane said alone names the plane of the move after it
        plane_only = len(prev_core) == 1 and prev_core[0] in PLANE_WORDS and sep == "," and \
            bool(core) and all(t in DIRECTIONS or _is_num(t) or t in FILLER or t in
                               ("by", "slices", "steps", "more", "please") for t in core)
        if bare_nums or repeated or plane_only:
            prev.toks.extend(seg)  # "move to 10, 20, 50", "left, left, left"
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
    return clauses


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


# ---------------------------------------------------------------------------------------------
# routing
# ---------------------------------------------------------------------------------------------



# The field's own names for where the tumour is ("tumour site", "tumour information"): the
# patient field, not the nodules in the model.
_TUMOR_FIELD_RE = re.compile(r"\b(?:" + "|".join(
    re.escape(" ".join(ph)) for ph, fields in FIELD_PHRASES
    if fields == ("tumor_location",) and "tumor" in ph) + r")\b")


def agent_scores(words: Sequence[str]) -> dict[str, float]:
    """How strongly the words name each agent (routing cues, not yet a decision)."""
    s = {"IR": 0.0, "IV": 0.0, "AR": 0.0}
    ws = list(words)
    text = " ".join(ws)
    for w in ws:
        if w in IR_STRONG:
            s["IR"] += 2 if w in ("info", "information", "data", "values", "details", "date",
                                  "record") else 3
        if w in IV_STRONG:
            s["IV"] += 2 if w in ("level", "images", "imaging", "pictures", "films",
                                  "chest", "layout", "grid") else 3
        if w in AR_STRONG and w != "readd":
            s["AR"] += 3
    if "readd" in ws and s["IR"] == 0 and s["IV"] == 0:
        s["AR"] += 3  # "bring it back" after the model; "bring the CT back" is the CT's
    if _PFT_RE.search(text):
        s["AR"] -= 3
        s["IR"] += 1
    if re.search(r"\b(lung|bone|soft|mediastin\w*|pulmonary) (window|tissue|preset|setting)",
                 text):
        s["AR"] = max(0.0, s["AR"] - 3)
        s["IR"] = max(0.0, s["IR"] - 3)
    if _TUMOR_FIELD_RE.search(text) or re.search(
            r"\b(which|what) (lobe|part|side|area|region|segment|portion)", text) and \
            re.search(r"\b(tumor|tumors|nodule|nodules|lesion|mass|cancer)\b", text) or \
            re.search(r"\b(which|what) lobe\b", text):
        s["AR"] = max(0.0, s["AR"] - 3)
        s["IR"] += 2
    if _WINDOW_SWITCH.search(text):
        s["IV"] += 3
    if re.search(r"\b(small|three|3|smaller|all|multiple|multi) (views?|panels?|windows?)", text):
        s["IV"] += 3
    if re.search(r"\b(view|views|perspective|angle|aspect|projection|orientation)\b", text) \
            and any(
            w in AR_VIEW_WORDS for w in ws if w not in PLANE_WORDS):
        s["AR"] += 2
    if re.search(r"\b(from|look at it from)( the)?( patient| patients| her| his| its)? (front|"
                 r"behind|back|above|below|top|bottom|left|right|side|underneath|anterior|"
                 r"posterior|superior|inferior|rear)", text):
        s["AR"] += 2
    if "patient" in ws or "pt" in ws or {"her", "she", "his", "he"} & set(ws):
        s["IR"] += 1
    if re.search(r"\b(of|on|in) the (scan|ct)\b", text):
        s["IV"] += 1
    if re.search(r"\bfrontal (view|side|perspective)\b", text) and not any(
            _is_num(w) or w in ("slice", "plane", "ct", "scan") for w in ws):
        s["IV"] = max(0.0, s["IV"] - 3)
        s["AR"] += 3
    if re.search(r"\b(left|right) (upper|middle|lower)\b|\b(upper|middle|lower) (left|right)\b",
                 text):
        s["AR"] += 3
    if re.search(r"\bturn(ing)? (it|the model|this|that)? ?(to the )?(left|right|up|down|around)"
                 r"\b", text):
        s["AR"] += 3
    if re.search(r"\bwhere\b|\b(which|what) (lobe|side|lung|part|area|region|segment|"
                 r"portion|bit)\b", text) and re.search(
            r"\b(tumor|tumors|nodule|nodules|lesion|mass|cancer)\b", text) and not re.search(
            r"\b(3d|model|anatomy|reconstruction)\b", text):
        s["IR"] += 3  # "where is the tumour?" asks for the tumour location field
        s["tumor_q"] = 1.0
    return s


def _dominant_agent(words: Sequence[str]) -> str | None:
    s = agent_scores(words)
    s.pop("tumor_q", None)
    best = max(s, key=s.__getitem__)
    if s[best] <= 0:
        return None
    tied = [a for a, v in s.items() if v == s[best]]
    return best if len(tied) == 1 else None


# What each agent can do: a clause whose intent an agent cannot serve is not routed there.
CAPABLE = {
    "IR": {"show", "hide", "reset", "add", "question"},
    "IV": {"show", "hide", "reset", "zoom_in", "zoom_out", "move", "question", "repeat"},
    "AR": {"show", "hide", "reset", "zoom_in", "zoom_out", "rotate", "view", "add",
           "question", "repeat", "move"},
}


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
    if s & hide_words or negated or (
            "without" in s and not s & (SHOW_VERBS - QUESTION_WORDS)) or \
            re.search(r"\b(turn|switch|take|shut)( \w+){0,4} (off|away)\b|\bget rid\b|"
                      r"\boff (the )?(screen|monitor|display|overlay)\b|\b(everything|all) off\b|"
                      # "that's enough patient info", "enough of the model"
                      r"(?<!big )(?<!close )(?<!far )(?<!zoomed )\benough (of |with )?(the |that |"
                      r"this |her |his )?(?!(for|now|please|thanks)\b)[a-z0-9]+|"
                      r"\btake away\b|\bshut (it |them )?down\b|\bput( \w+){0,3} away\b|"
                      r"\b(turn|switch) (it |them |\w+ )?off\b", text):
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


# ---------------------------------------------------------------------------------------------
# IV
# ---------------------------------------------------------------------------------------------

def _num_value(tok: str) -> tuple[int, str]:
    m = _NUM_RE.match(tok)
    assert m
    return int(m.group(2)), m.group(1)


def _rel(v: int) -> str:
    return f"+{v}" if v >= 0 else str(v)


def _repeat_count(c: Clause) -> int:
    """'twice', 'three times', '3x' anywhere in the clause (consumed)."""
    toks = c.toks
    for i, t in enumerate(toks):
        if t in REPEAT_COUNTS:
            c.use(i)
            if toks[i + 1:i + 2] in (["more"], ["again"]):
                c.use(i + 1)  # "zoom in once more": the count, said as a repeat
            return REPEAT_COUNTS[t]
        m = _TIMES_RE.match(t)
        if m:
            c.use(i)
            return int(m.group(1) or m.group(2))
        if t in ("times", "time") and i > 0 and _is_num(toks[i - 1]):
            c.use(i - 1, i)
            return max(1, _num_value(toks[i - 1])[0])
    return 1


def _direction_role(toks: list[str], i: int) -> str:
    """How the direction word at i is used: "move" (a step that way), "modifier" (it only
    intensifies or qualifies the next word) or "target" (it heads for a named position)."""
    t = toks[i]
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    after = [w for w in toks[i + 2:i + 5] if w not in ("the", "slice", "very", "a")]
    heads_for = nxt == "to" and bool(after) and (
        after[0] in NAMED_POS or _is_num(after[0]) and after[0][0] not in "+-")
    if t == "right" and nxt in DIRECTIONS and nxt not in ("right", "left"):
        # "right up to the top", "right down to the bottom": "right" means "all the way"
        return "modifier" if _direction_role(toks, i + 1) == "target" else "move"
    if t == "right" and heads_for and not _is_num(after[0]):
        return "modifier"  # "go right to the end" ("right to 300" may be the sagittal)
    if t == "back" and nxt in DIRECTIONS and nxt != "back" and DIRECTIONS[nxt][0] != "coronal":
        # "go back up" is up again, unless the coronal plane is named ("back up 10 on the
        # coronal": back is the direction, up the particle of "back up")
        named = {PLANE_WORDS[w] for w in toks if w in PLANE_WORDS}
        return "move" if "coronal" in named and DIRECTIONS[nxt][0] not in named \
            else "modifier"
    if i > 0 and toks[i - 1] == "back" and t in DIRECTIONS and DIRECTIONS[t][0] != "coronal":
        named = {PLANE_WORDS[w] for w in toks if w in PLANE_WORDS}
        if "coronal" in named and DIRECTIONS[t][0] not in named:
            return "modifier"
    if heads_for:
        return "target"
    return "move"


def _last_sign(ctx: _Ctx, plane: str) -> int:
    """The direction a plane last moved in, from the remembered commands (+1 if none)."""
    scratch = _Ctx(ctx.state, Memory())
    for text in reversed(ctx.memory.recent):
        for clause in split_clauses(_prepare(text)):
            try:
                moves = iv_moves(clause, scratch)
            except (ValueError, IndexError):
                continue
            v = moves.get(plane)
            if isinstance(v, str) and v[:1] in "+-" and int(v) != 0:
                return 1 if int(v) > 0 else -1
    return 1


_POSITION_NOUNS = {"slice", "slices", "image", "images", "plane", "position", "level", "cut",
                   "section", "one"}


def _ordinal_attached(toks: list[str], i: int) -> bool:
    """DESIGN §4: "first" / "last" name a slice only attached to a plane, a slice noun or a
    target ("the first slice", "axial last", "go to the first"); "first, show me the CT" and
    "the first thing I want" move nothing."""
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    prev = toks[i - 1] if i else ""
    before = toks[i - 2] if i > 1 else ""
    if nxt in ("thing", "things", "command", "time", "of", ","):
        return False
    return nxt in _POSITION_NOUNS or nxt in PLANE_WORDS or prev in PLANE_WORDS or \
        prev in ("to", "at") or prev == "the" and before in ("to", "at")


def iv_moves(c: Clause, ctx: _Ctx) -> dict[str, Any]:
    """Slice moves named in a clause: {plane: int | "+N" | "-N" | "middle"/"max"/"min"}."""
    toks = c.toks
    n = len(toks)
    count = _repeat_count(c)
    moves: dict[str, Any] = {}
    rel: dict[str, int] = {}
    pending: list[str] = []  # planes named, waiting for a value
    pending_filled = False
    sign: int | None = None
    sign_reps = 1  # the same direction word said again after a named plane
    absolute_hint = False  # "to", "at", "slice": the next number is a slice index
    orphans: list[tuple[int, Any]] = []  # (token index, value) with no plane
    dir_events: list[list[Any]] = []  # [plane, sign, count, step or None, token index]
    # "all the way down": to the end of that direction's plane
    for k in range(n - 2):
        if toks[k:k + 2] == ["the", "way"] and k > 0 and toks[k - 1] == "all":
            j = k + 2
            while j < n and toks[j] in ("to", "the"):
                j += 1
            if j < n and toks[j] in DIRECTIONS:
                dplane, dsign = DIRECTIONS[toks[j]]
                moves[dplane] = "max" if dsign > 0 else "min"
                c.use(k - 1, k, k + 1, *range(k + 2, j + 1))
                toks = [t if not c.used[x] or x < k - 1 or x > j else "" for x, t in
                        enumerate(toks)]
    all_planes = bool(c.has("all", "every", "planes", "everything")) and not any(
        t in PLANE_WORDS for t in toks)
    i = 0
    while i < n:
        t = toks[i]
        prev = toks[i - 1] if i else ""
        nxt = toks[i + 1] if i + 1 < n else ""
        if t in PLANE_WORDS and not (t == "frontal" and nxt == "view" and not any(
                _is_num(x) for x in toks)):
            if pending and not pending_filled and sign is not None:
                # "move the axial up and the coronal back": the plane before got its
                # direction and no number, so one default step; the new plane starts anew
                for p in pending:
                    rel[p] = rel.get(p, 0) + sign * 10 * count * sign_reps
                pending_filled = True
            if pending_filled:
                pending, pending_filled = [], False
                sign, absolute_hint = None, False  # a new plane starts a new move
            pending.append(PLANE_WORDS[t])
            c.use(i)
        elif t == "back" and nxt in ("to", "at"):
            c.use(i)  # "back to the middle": a return, not the direction "back"
        elif t in DIRECTIONS and not (t == "lower" and nxt in ("lobe", "lobes")) and not (
                t in ("right", "left") and nxt in ("lung", "lobe", "lobes", "upper", "lower",
                                                    "middle", "side")):
            dplane, dsign = DIRECTIONS[t]
            c.use(i)
            role = _direction_role(toks, i)
            if role == "modifier":
                pass  # "right up to the top", "go back up": not a direction of its own
            elif role == "target":
                # "up to the top", "down to 20": the word names the plane, the target the value
                if not any(w in PLANE_WORDS for w in toks) and not (
                        pending and not pending_filled):
                    pending, pending_filled = [dplane], False
                    sign, absolute_hint = None, True
            elif pending and not pending_filled:
                # "move axial up 20": the plane is named, the word gives the sign; the same
                # word said again multiplies the default step ("axial down down" = -20)
                if sign == dsign and i and toks[i - 1] == t:
                    sign_reps += 1
                else:
                    sign, sign_reps = dsign, 1
            elif (orphans and isinstance(orphans[-1][1], int) and all(
                    x in ("slices", "slice", "steps", "to", "the", "towards", "toward")
                    for x in toks[orphans[-1][0] + 1:i])):
                _, v = orphans.pop()  # "20 slices up", "40 slices to the right"
                dir_events.append([dplane, dsign, 1, v, i])
            elif dir_events and dir_events[-1][0] == dplane and dir_events[-1][1] == dsign \
                    and dir_events[-1][3] is None and dir_events[-1][4] == i - 1:
                # "left left left" multiplies the step; another word for the same direction
                # is emphasis, not a repetition ("a bit higher up", "down lower")
                if toks[i - 1] == t:
                    dir_events[-1][2] += 1
                dir_events[-1][4] = i
            else:
                dir_events.append([dplane, dsign, 1, None, i])
        elif t in ("further", "farther"):
            c.use(i)
            # "further down": continue in the named direction; "move the axial further":
            # continue in the direction that plane last moved
            if not any(w in DIRECTIONS for w in toks):
                plane = pending[-1] if pending else ctx.context_plane()
                sign = _last_sign(ctx, plane)
        elif t in SIGN_WORDS and not (t in ("next", "previous") and nxt in ("slice", "image")):
            sign = SIGN_WORDS[t]
            c.use(i)
        elif t in ("next", "previous", "prior") and nxt in ("slice", "image"):
            plane = pending[-1] if pending else ctx.context_plane()
            rel[plane] = rel.get(plane, 0) + SIGN_WORDS[t]
            c.use(i, i + 1)
            pending_filled = True
            i += 2
            continue
        elif t in _INDEX_NOUNS or t in ("to", "at", "level"):
            absolute_hint = t in ("to", "at") or t in _INDEX_NOUNS and t != "image"
            if t in _INDEX_NOUNS:
                c.use(i)
        elif t in ("by", "another", "additional", "extra"):
            c.use(i)
            if sign is None and t == "by" and not (dir_events and dir_events[-1][3] is None):
                sign = 1
        elif _is_num(t) and nxt not in ("times", "time"):
            v, s = _num_value(t)
            c.use(i)
            if nxt in ("slices", "slice", "steps", "step"):
                c.use(i + 1)
            if prev in _APPROXIMATORS:
                c.use(i - 1)  # "about 20": the number is meant as said
            if toks[i + 1:i + 3] == ["or", "so"] or nxt == "ish":
                c.use(i + 1, i + 2)
            if s:
                value: Any = _rel(v if s == "+" else -v)
            elif sign is not None and not (absolute_hint and prev in ("to", "at") and
                                           toks[i - 2:i - 1] != ["plus"]):
                # ("further over, sagittal to 299": "to" names the slice itself)
                value = _rel(sign * v)
            else:
                value = v
            if prev == "by" and not s and dir_events and dir_events[-1][3] is None and all(
                    x in _STEP_GLUE | {"on", "in", "through", "along", "slices"} |
                    set(PLANE_WORDS) for x in toks[dir_events[-1][4] + 1:i]):
                # "scroll down on the axial by 20": the step of the direction said before
                dir_events[-1][3] = v
                c.use_words({"on", "in", "through", "along"})
            elif pending and not pending_filled:
                for p in pending:
                    if isinstance(value, str):
                        rel[p] = rel.get(p, 0) + int(value)
                        moves.pop(p, None)
                    else:
                        moves[p] = value
                        rel.pop(p, None)
                pending_filled = True
            elif dir_events and dir_events[-1][3] is None and all(
                    x in _STEP_GLUE for x in toks[dir_events[-1][4] + 1:i]):
                dir_events[-1][3] = v  # "left 20", "up by 15", "down by another 10"
            else:
                if isinstance(value, int) and not absolute_hint and sign is None and \
                        nxt in ("slices", "steps"):
                    orphans.append((i, v))
                else:
                    orphans.append((i, value))
            sign, absolute_hint = None, False
        elif t in _VAGUE_POS and not (nxt in ("slice", "slices", "plane", "image") or any(
                w in PLANE_WORDS or w in ("slice", "ct", "scan") for w in toks) or (
                prev == "to" or prev == "the" and i > 1 and toks[i - 2] == "to")
                and pending and not pending_filled):
            pass  # "start the timer": start/end name a slice only next to slice words
            # (or as the target of a direction: "go up to the end")
        elif t in NAMED_POS and not (t in ("top", "bottom") and nxt in ("view",)) and not (
                t in ("middle", "mid", "lower", "upper") and nxt in ("lobe", "lobes")) and not (
                t in ("first", "last") and not _ordinal_attached(toks, i)):
            c.use(i)
            k = i - 1
            while k >= 0 and (toks[k] in _APPROXIMATORS or toks[k] == "the"):
                c.use(k)  # "somewhere around the middle"
                k -= 1
            if nxt in ("slice", "slices", "image", "plane", "position", "level", "point"):
                c.use(i + 1)
            named = NAMED_POS[t]
            if pending and not pending_filled:
                for p in pending:
                    moves[p] = named
                    rel.pop(p, None)
                pending_filled = True
            else:
                orphans.append((i, named))
            sign = None
        i += 1
    # "down 10 on the coronal": the only plane named got no value of its own, and the
    # direction words name one other plane: they give the named plane its sign
    if len(pending) == 1 and not pending_filled and sign is None and dir_events and \
            not orphans and \
            len({e[0] for e in dir_events}) == 1 and dir_events[0][0] != pending[0]:
        for e in dir_events:
            e[0] = pending[0]
        pending_filled = True
    # planes named with a sign but no number: one default step ("move axial up")
    if pending and not pending_filled and sign is not None:
        for p in pending:
            rel[p] = rel.get(p, 0) + sign * 10 * count * sign_reps
        pending_filled = True
    for dplane, dsign, k, step, _ in dir_events:
        amount = step if step is not None else 10 * k * count
        rel[dplane] = rel.get(dplane, 0) + dsign * amount
    if orphans:
        vals = [v for _, v in orphans]
        if len(vals) == 3 and not pending:
            for p, v in zip(("axial", "coronal", "sagittal"), vals, strict=True):
                moves[p] = v  # "move to 10, 20, 50": axial, coronal, sagittal
        elif all_planes and len(vals) == 1:
            for p in ("axial", "coronal", "sagittal"):
                moves[p] = vals[0]
        else:
            plane = pending[-1] if pending else ctx.context_plane()
            v = vals[-1]
            if isinstance(v, str) and v[:1] in "+-":
                rel[plane] = rel.get(plane, 0) + int(v)
            else:
                moves[plane] = v
    out: dict[str, Any] = {}
    for p, v in moves.items():
        out[p] = v
    for p, v in rel.items():
        out[p] = _rel(v)
    # keep the spoken order of planes (the last moved plane becomes the main view)
    order = [PLANE_WORDS[t] for t in toks if t in PLANE_WORDS]
    order += [e[0] for e in dir_events]
    ordered = {p: out[p] for p in dict.fromkeys(order) if p in out}
    ordered.update({p: v for p, v in out.items() if p not in ordered})
    c.planes = list(dict.fromkeys(PLANE_WORDS[t] for t in c.toks if t in PLANE_WORDS))
    return ordered


def _window(c: Clause) -> str | None:
    for i, t in enumerate(c.toks):
        if t in ("window", "windowing", "preset", "presets", "setting", "settings", "kernel",
                 "contrast", "windows", "level", "mode") and i > 0:
            j = i - 1
            if c.toks[j] in WINDOWS:
                c.use(i, j)
                c.use_words({"use", "apply", "switch", "change", "set", "go", "back", "select"})
                if c.toks[j] == "tissue" and j > 0 and c.toks[j - 1] == "soft":
                    c.use(j - 1)
                return WINDOWS[c.toks[j]]
    # "switch to bone", "change to mediastinal please": a preset named after switching
    m = _WINDOW_SWITCH.search(" ".join(c.toks))
    if m:
        word = m.group(4).split()[-1]
        c.use_words({"switch", "change", "go", "flip", "to", "back", "the", "soft", word})
        return WINDOWS[word]
    return None


_WINDOW_SWITCH = re.compile(r"\b(switch|change|go|flip)( back)? to( the)? (bone|bony|mediastinal|"
                            r"mediastinum|soft tissue|lung|pulmonary|parenchyma)"
                            r"(?= please| now| thanks|$| ,| and| then)")


def decide_iv(c: Clause, ctx: _Ctx, intent: str) -> list[Step]:
    c.use_words({"ct", "scan", "scans", "cts", "views", "view", "image", "images", "mpr",
                 "dicom", "plane", "planes", "slice", "slices", "radiology", "screen", "layout",
                 "grid",
                 "imaging", "pictures", "films", "chest", "radiograph", "radiographs",
                 "tomography", "of"})
    if intent == "hide":
        c.use_words(HIDE_VERBS | _NEGATION | {"all", "everything", "turn", "switch", "take",
                                              "get"})
        ctx.iv_mode = "none"
        return [Step("IV.REMOVE", {})]
    if intent == "reset":
        c.use_words(RESET_VERBS | {"all", "everything", "back", "views"})
        ctx.iv_plane, ctx.iv_mode = None, "small_views"
        return [Step("IV.RESET", {})]
    if intent == "zoom_out":
        c.use_words(ZOOM_OUT_WORDS | SHOW_VERBS | {
            "fully", "zoom", "out", "back", "away", "three", "3", "all", "multiple", "views",
            "panels", "go", "return", "normal", "size", "make", "them", "way", "switch",
            "restore", "get"})
        ctx.iv_mode = "small_views"
        steps = [Step("IV.ZOOM_OUT", {})]
        if not any(t in PLANE_WORDS or _is_num(t) for t in c.toks):
            c.use_words({"back", "down"})  # "shrink it back down"
            return steps
        rest = iv_moves(c, ctx)
        if rest:
            steps.append(Step("IV.SHOW_MOVE", rest))
            ctx.iv_plane = list(rest)[-1]
        return steps
    window = _window(c)
    moves = iv_moves(c, ctx)
    named = c.planes
    # "the coronal one" is "the coronal view" ("one" after a plane is a pronoun, see
    # normalize): naming one plane as a thing to see enlarges it
    plane_one = any(t == "one" and k and c.toks[k - 1] in PLANE_WORDS
                    for k, t in enumerate(c.toks))
    # one plane named while a plane is already enlarged ("now the coronal"): it becomes the
    # main view, as moving a plane while zoomed does (DESIGN §4)
    zoomed = (ctx.iv_mode or ctx.state.iv.mode) == "zoom_view"
    if intent == "zoom_in" or (intent in ("show", "move") and not moves and len(named) == 1
                               and window is None and (c.has("view", "image", "only", "just")
                                                       or plane_one or zoomed)
                               and not c.has("move", "go")):
        c.use_words(ZOOM_IN_WORDS | SHOW_VERBS | {"zoom", "in", "into", "on", "onto", "make",
                                                  "it", "main", "full", "screen", "up",
                                                  "blow"})
        if len(named) >= 1 and not moves:
            plane = named[-1]
        elif moves:
            plane = list(moves)[-1]
            if named and named[-1] not in moves:
                plane = named[-1]
        elif c.has("it", "that", "this") and ctx.iv_plane:
            plane = ctx.iv_plane
        else:
            plane = ctx.zoom_plane()
        params: dict[str, Any] = {"plane": plane, **moves}
        if window:
            params["window"] = window
        ctx.iv_plane, ctx.iv_mode = plane, "zoom_view"
        return [Step("IV.ZOOM_IN_MOVE", params)]
    c.use_words(SHOW_VERBS | MOVE_VERBS | {"it", "them", "all", "planes", "everything", "on",
                                            "up", "very", "back", "slices", "steps"}
                - {"what", "where"})
    if moves and any(t in DIRECTIONS for t in c.toks):
        c.use_words({"more", "towards", "toward"})  # "a bit more to the right"
    if c.has("what", "where", "how") and (moves or c.has("ct", "scan")):
        c.use_words({"what", "where", "how", "whats"})
    params = dict(moves)
    if window:
        params["window"] = window
    if moves:
        ctx.iv_plane = list(moves)[-1]
    if ctx.iv_mode is None:
        ctx.iv_mode = "small_views" if ctx.state.iv.mode == "none" else ctx.state.iv.mode
    said = [t for t in c.toks if t in DIRECTIONS]
    if not window and len(moves) > 1 and c.has("and") and all(
            isinstance(v, str) and v[:1] in "+-" for v in moves.values()) and \
            len({DIRECTIONS[t][0] for t in said}) == len(moves):
        # "move left twenty and up ten": two moves, in the order said (the last one said is
        # the plane the zoom view shows)
        order = list(dict.fromkeys(DIRECTIONS[t][0] for t in said))
        return [Step("IV.SHOW_MOVE", {p: moves[p]}) for p in order if p in moves]
    return [Step("IV.SHOW_MOVE", params)]


# ---------------------------------------------------------------------------------------------
# AR
# ---------------------------------------------------------------------------------------------

def ar_structures(c: Clause, tumor_lobes: Sequence[str] = ()) -> list[str]:
    """Structure keys named in a clause, groups as their group key (e.g. "left_lung")."""
    toks = c.toks
    out: list[str] = []
    n = len(toks)
    i = 0
    while i < n:
        t = toks[i]
        if t in STRUCT_WORDS:
            if t in ("tumor", "tumors") and i + 1 < n and toks[i + 1] in ("location", "site"):
                i += 1
                continue
            out.append(STRUCT_WORDS[t])
            c.use(i)
            if t in ("bronchi", "bronchus", "trachea") and i + 2 < n and toks[i + 1] == "and" \
                    and toks[i + 2] in ("bronchi", "bronchus", "trachea"):
                c.use(i + 1, i + 2)
                i += 3
                continue
            i += 1
            continue
        if t == "tumorlobe":
            out.extend(tumor_lobes or LOBES)
            c.use(i)
            i += 1
            continue
        if t == "bronchial" and i + 1 < n and toks[i + 1] == "tree":
            out.append("trachea_bronchia")
            c.use(i, i + 1)
            i += 2
            continue
        # side / position / lobe phrases: "right upper and lower lobes", "upper right lobe"
        j = i
        side: str | None = None
        positions: list[str] = []
        took: list[int] = []
        while j < n:
            w = toks[j]
            if w in SIDES and side is None:
                side = SIDES[w]
                took.append(j)
            elif w in SIDES and j >= 2 and toks[j - 1] == "and" and toks[j - 2] in SIDES:
                side = "both"  # "left and right lower lobes"
                took.extend([j - 1, j])
            elif w in LOBE_POS and (j + 1 < n and (toks[j + 1] in LOBE_POS or toks[j + 1] in (
                    "lobe", "lobes", "and", ",", "or") or toks[j + 1] in SIDES)
                    or side is not None or (j + 1 == n and side is not None)):
                positions.append(LOBE_POS[w])
                took.append(j)
            elif w in ("and", "or") and (positions or side) and j + 1 < n and (
                    toks[j + 1] in LOBE_POS or (side and not positions and toks[j + 1] in SIDES)):
                took.append(j)
            elif w in ("lobe", "lobes", "lung", "lungs", "side", "lobar"):
                took.append(j)
                j += 1
                break
            else:
                break
            j += 1
        kind = toks[took[-1]] if took else ""
        if kind in ("lung", "lungs") and not positions and j < n and \
                STRUCT_WORDS.get(toks[j]) == "lung_nodules":
            c.use(*took)  # "lung nodules", "left lung nodule": the lung only says where they are
            i = j
            continue
        if took and (positions or kind in ("lung", "lungs", "lobe", "lobes")) and not (
                kind == "side" and not positions):
            c.use(*took)
            k = i - 2 if i > 1 and toks[i - 1] == "the" else i - 1
            if k >= 0 and toks[k] in ("whole", "entire", "all", "complete", "both"):
                c.use(k)  # "all the lobes", "the whole left lung"
            sides = ["left", "right"] if side in (None, "both") else [side]
            if positions:
                for pos in positions:
                    keys = [f"{sd}_{pos}_lobe" for sd in sides if f"{sd}_{pos}_lobe" in LOBES]
                    if side is None and len(keys) > 1 and kind != "lobes":
                        # "the upper lobe" with no side: the tumour's, if it is one of them
                        keys = [k for k in keys if k in tumor_lobes] or keys
                    out.extend(keys)
            elif side in ("left", "right"):
                out.append(f"{side}_lung")
            else:
                out.append("lungs")
            i = max(j, i + 1)
            continue
        if t == "all" and out and toks[i + 1:i + 3] in (["of", "them"], ["of", "those"],
                                                         ["of", "these"]):
            c.use(i, i + 1, i + 2)  # "the lobes, all of them": the ones just named
            i += 3
            continue
        if t in ("everything", "all") and i + 1 < n and toks[i + 1] in (
                "structures", "lobes", "parts", "of"):
            # "all lobes" is the five lobes, like "all the lobes" (DESIGN §4 keeps nodules and
            # airway apart from the lobes); "all structures" / "all of it" is everything
            out.extend(LOBES if toks[i + 1] == "lobes" else AR_STRUCTURES)
            c.use(i, i + 1)
            i += 2
            continue
        i += 1
    return list(dict.fromkeys(out))


# The pronouns that may stand for the structures the previous command named.
_PRONOUNS = {"it", "them", "that", "those"}
# Words that name the model as a whole: with them, "it" is the model, not a structure.
_WHOLE_MODEL = {"model", "3d", "anatomy", "reconstruction", "rendering", "everything", "all",
                "whole", "entire"}


def _prior_referent(c: Clause, ctx: _Ctx, after: frozenset[str] | None = None
                    ) -> list[str] | None:
    """The structures a pronoun in the first clause stands for: those the previous command
    named ("add the RML" ... "zoom in on it"); None when it named none (then "it" is the model).
    Later clauses refer within the command (``_Ctx.ar_named``). ``after``: the words the
    pronoun must follow ("zoom in on it" names a target, "make it bigger" does not)."""
    if ctx.agent is not None or not ctx.prior_named or not c.has(*_PRONOUNS) \
            or c.has(*_WHOLE_MODEL):
        return None
    if after is not None and not any(t in _PRONOUNS and i and c.toks[i - 1] in after
                                     for i, t in enumerate(c.toks)):
        return None
    c.use_words(_PRONOUNS)
    ctx.referred_back = True
    return ctx.prior_named


_TARGET_PREPS = frozenset({"on", "onto", "into", "to", "toward", "towards", "at"})
# Verbs that with the particle "in" put a structure onto the model beside what is shown
# ("put the airway in", "pop the nodules back in", "throw in the RML").
_PUT_IN_VERBS = {"put", "pop", "stick", "throw", "slot", "bung", "chuck", "bring", "readd"}


def _on_shown_side(keys: list[str], c: Clause, state: ConsoleState) -> list[str]:
    """"the lower lobe" with no side said, while the model shows the lobes of one lung only:
    that lung's lower lobe (both lower lobes otherwise)."""
    pair = {k.split("_", 1)[1] for k in keys if k.startswith(("left_", "right_"))}
    if len(keys) != 2 or len(pair) != 1 or {k.split("_", 1)[0] for k in keys} != {
            "left", "right"} or any(t in SIDES for t in c.toks) or \
            c.has("lobes", "both", "all") or not state.ar.visible:
        return keys
    sides = {k.split("_", 1)[0] for k in state.ar.structures if k.endswith("_lobe")}
    if len(sides) != 1:
        return keys
    (shown,) = sides
    return [k for k in keys if k.startswith(shown + "_")]


def _put_in(c: Clause) -> bool:
    """Is the clause "put X in" / "put in X" (an addition)? Uses the particle when it is."""
    for i, t in enumerate(c.toks):
        if t != "in" or not i or not any(w in _PUT_IN_VERBS for w in c.toks[:i]):
            continue
        if c.toks[i - 1] in _PUT_IN_VERBS or all(w in _PARTICLE_TAIL for w in c.toks[i + 1:]):
            c.use(i, *(k for k in range(i) if c.toks[k] in _PUT_IN_VERBS))
            return True
    return False


def _ar_hide_except(c: Clause, tumor_lobes: Sequence[str]) -> list[Step] | None:
    """"hide every lobe except the RUL" / "take away everything but the LLL": the exception
    stays. Hiding named structures spares the exception; hiding everything (or the model)
    leaves the exception alone on show."""
    cut = _exception_at(c.toks)
    if cut is None:
        return None
    i, j = cut
    head, tail = Clause(c.toks[:i]), Clause(c.toks[j:])
    spared = _expand(ar_structures(tail, tumor_lobes))
    if not spared:
        return None
    named = _expand(ar_structures(head, tumor_lobes))
    c.use(*(k for k, u in enumerate(head.used) if u), *range(i, j),
          *(j + k for k, u in enumerate(tail.used) if u))
    c.use_words({"all", "everything", "every", "each", "model", "3d", "for", "the"})
    gone = [k for k in named if k not in spared]
    if not named or not gone or set(named) == set(AR_STRUCTURES):
        return [Step("AR.SHOW", {"structures": spared})]
    return [Step("AR.SHOW", {"structures": gone, "op": "remove"})]


def _group_of(structures: Sequence[str]) -> str | None:
    """The group key whose members are exactly these structures, if any."""
    for name, members in AR_GROUPS.items():
        if set(members) == set(structures):
            return name
    return None


def _expand(keys: Iterable[str]) -> list[str]:
    out: list[str] = []
    for k in keys:
        out.extend(AR_GROUPS.get(k, (k,)))
    return sorted(dict.fromkeys(out))


def _ar_view(c: Clause) -> str | None:
    toks = c.toks
    text = " ".join(toks)
    m = re.search(r"\b(?:from|look at it from|seen from|viewed from)( the)?"
                  r"( patient| patients| her| his| its| their| our)? (\w+)", text)
    if m and m.group(3) in AR_VIEW_WORDS:
        word = m.group(3)
        idx = toks.index(word)
        c.use(idx)
        c.use_words({"patient", "patients"})
        c.use_words({"from", "look", "seen", "viewed", "side", "view", "perspective", "angle",
                     "lateral"})
        return AR_VIEW_WORDS[word]
    for i, t in enumerate(toks):
        if t in ("view", "views", "perspective", "angle", "projection", "orientation",
                 "side", "aspect", "approach", "position"):
            # the view word is before "view" ("anterior view", "right lat view")
            for j in range(i - 1, max(-1, i - 4), -1):
                w = toks[j]
                if w in AR_VIEW_WORDS:
                    c.use(i, j, *[k for k in range(j + 1, i) if toks[k] in (
                        "lat", "lateral", "side", "on", "sided")])
                    return AR_VIEW_WORDS[w]
            if i + 1 < len(toks) and toks[i + 1] in AR_VIEW_WORDS and t != "side":
                c.use(i, i + 1)
                return AR_VIEW_WORDS[toks[i + 1]]
    m = re.search(r"\b(see|show|view|face) (me )?(the |its |it from the )?(back|front|top|bottom|"
                  r"underside|rear|left side|right side)\b", text)
    after = text[m.end():].split()[:1] if m else []
    # "turn it so we see the back"; or the side named as all there is to see ("show me the
    # back", "see the back of the model"), not a part of something ("the back lobes")
    if m and (re.search(r"\b(turn|rotate|spin|so|can|view|look)\b", text)
              or not after or after[0] in ("of", "side", "view", ",", "please", "now", "and",
                                           "then", "too")):
        word = m.group(4).split()[0]
        c.use(toks.index(word))
        c.use_words({"see", "so", "turn", "rotate", "side", "underside", "view", "face"})
        return AR_VIEW_WORDS.get(word, "inferior")
    if re.search(r"\b(from|at) the side\b|\bside view\b|\blateral view\b|\bfrom the lateral\b",
                 text):
        c.use_words({"from", "side", "lateral", "view", "look", "at"})
        return "left"  # a lateral view with no side named: the standard left lateral
    for i, t in enumerate(toks):
        if t in ("behind", "above", "below", "underneath", "beneath"):
            c.use(i)
            c.use_words({"look", "it", "how", "does", "from", "seen", "view"})
            return AR_VIEW_WORDS[t]
    return None


_SIDE_OF_WHOLE = re.compile(
    r"\bthe (back|front|top|bottom|underside|rear|left side|right side) of (the |both |her |his "
    r"|the whole |the two )?(lungs|model|3d model|3d|anatomy|chest|it|them|reconstruction)\b")


def _side_of_whole(c: Clause) -> str | None:
    """A side of the whole model asked to be seen ("what does the back of the lungs look
    like?", "show me the front of the model") is a viewpoint, not the lungs as structures;
    "the back of the left lung" names a lung and is left to the other rules."""
    m = _SIDE_OF_WHOLE.search(" ".join(c.toks))
    if m is None or not c.has("look", "looks", "see", "show", "view", "like"):
        return None
    c.use_words({"of", "the", "both", "whole", "two", "lungs", "model", "3d", "anatomy",
                 "chest", "them", "reconstruction", "look", "looks", "like", "does", "do",
                 "what", "see", "show", "view", "side", "it"})
    word = m.group(1).split()[0]
    c.use(c.index(word))
    return AR_VIEW_WORDS.get(word, "inferior")  # "underside" is the bottom


def decide_ar(c: Clause, ctx: _Ctx, intent: str) -> list[Step]:
    state = ctx.state
    c.use_words({"3d", "model", "anatomy", "reconstruction", "rendering", "hologram",
                 "segmentation", "structures", "structure", "it", "them", "lungs"} if not
                c.has("lung", "lobe", "lobes") else {"3d", "model", "anatomy", "reconstruction",
                                                     "rendering", "hologram", "segmentation",
                                                     "it", "them"})
    tumor_lobes = state.case.tumor_lobes
    if intent == "reset":
        c.use_words(RESET_VERBS | {"all", "everything", "view", "back"})
        ctx.ar_target, ctx.ar_target_set = None, True
        return [Step("AR.RESET", {})]
    if intent == "zoom_out":
        c.use_words(ZOOM_OUT_WORDS | {"zoom", "out", "back", "away", "all", "way", "again",
                                      "go", "further"})
        count = _repeat_count(c)
        if c.use_words({"fully"}):  # all the way out: pop the whole zoom stack
            count = max(1, ctx.state.ar.zoom_level)
        return [Step("AR.ZOOM_OUT", {}) for _ in range(count)]
    if intent == "zoom_in":
        c.use_words(ZOOM_IN_WORDS | {"zoom", "in", "into", "on", "onto", "toward", "towards",
                                     "get", "go", "move", "come", "up", "the", "make", "bring",
                                     "it", "look", "give", "take"})
        count = _repeat_count(c)
        keys = ar_structures(c, tumor_lobes)
        target = keys[0] if keys else None
        if keys and len(keys) > 1:
            ctx.notes.append("several structures named; zooming toward the first")
        if target is None and ctx.ar_named and c.use_words({"it", "them", "that", "there"}):
            target = ctx.ar_named  # "show the right lung and zoom in on it"
        prior = None if target else _prior_referent(c, ctx, _TARGET_PREPS)
        if prior:
            target = _group_of(prior) or prior[0]  # "add the RML" ... "zoom in on it"
        if target is None:
            target = ctx.current_ar_target()
        params = {"target": target} if target else {}
        ctx.ar_target, ctx.ar_target_set = target, True
        steps = [Step("AR.ZOOM_IN", params) for _ in range(count)]
        view = _ar_view(c)
        if view:
            steps.append(Step("AR.SHOW", {"view": view}))
        return steps
    if intent == "rotate" or (c.has(*STOP_WORDS_ROT) and c.has(
            "rotation", "rotating", "spinning", "rotate", "spin", "turning", "moving",
            "motion", "animation")):
        if c.has(*STOP_WORDS_ROT) or c.has("no"):
            c.use_words(STOP_WORDS_ROT | ROTATE_VERBS | {"no", "the", "it", "moving", "motion",
                                                         "animation", "model", "hold"})
            return [Step("AR.ROTATE", {"direction": "static"})]
        c.use_words(ROTATE_VERBS | {"to", "the", "it", "model", "direction", "side", "degrees",
                                    "full", "circle", "all", "way", "axis", "around", "make",
                                    "start", "keep", "slowly"})
        text = " ".join(c.toks)
        direction = None
        m = re.search(r"\bto (the |its )?(back|front|rear|underside|top|bottom)\b", text)
        if m:  # "turn it round to the back": a viewpoint, not a swing
            c.use_words({"to", "the", "its", m.group(2), "around", "side"})
            return [Step("AR.SHOW", {"view": AR_VIEW_WORDS.get(m.group(2), "inferior")})]
        if re.search(r"\bvertical axis\b", text):
            direction = "horizontal"
        elif re.search(r"\bhorizontal axis\b", text):
            direction = "vertical"
        else:
            for i, t in enumerate(c.toks):
                nxt = c.toks[i + 1] if i + 1 < len(c.toks) else ""
                if t == "around" and (_is_num(nxt) or nxt in ("by", "about")):
                    c.use(i)  # "around 30 degrees to the left": an approximate angle
                    continue
                if t in ROTATE_DIRS and not (t == "around" and any(
                        w in ROTATE_DIRS and w != "around" for w in c.toks[i + 1:])):
                    # "swing it round to the right": the named side, "round" is the manner
                    direction = ROTATE_DIRS[t]
                    c.use(i)
                    break
                if t == "around":
                    c.use(i)
            for i, t in enumerate(c.toks):
                if t in ("degrees", "degree") and i and _is_num(c.toks[i - 1]):
                    c.use(i - 1, i)  # the swing angle is fixed (DESIGN §4)
        if direction is None:
            view = _ar_view(c)
            if view is None:
                for i, t in enumerate(c.toks):
                    if t in ("anterior", "posterior", "superior", "inferior", "surgical"):
                        view, _ = AR_VIEW_WORDS[t], c.use(i)
                        break
            if view is not None:  # "rotate to the anterior view": a viewpoint
                c.use_words({"to", "the", "view"})
                return [Step("AR.SHOW", {"view": view})]
        if direction is None:
            if c.has("360", "full", "circle", "around"):
                direction = "horizontal"
            elif c.has("flip", "tumble", "somersault"):
                direction = "vertical"
            elif c.has("spin", "spinning", "revolve", "orbit", "turntable"):
                direction = "horizontal"  # spinning is the turntable turn
            else:
                direction = "horizontal"
                ctx.notes.append("rotation without a direction: turning horizontally")
                c.guess = True
        _repeat_count(c)
        return [Step("AR.ROTATE", {"direction": direction})]
    if intent == "hide":
        c.use_words(HIDE_VERBS | _NEGATION | {"turn", "switch", "take", "get", "the"})
        spared = _ar_hide_except(c, tumor_lobes)
        if spared is not None:
            return spared
        keys = _on_shown_side(ar_structures(c, tumor_lobes), c, ctx.state)
        prior = None if keys else _prior_referent(c, ctx)
        if prior:  # "hide the airway", "bring it back", "hide it again": the airway
            return [Step("AR.SHOW", {"structures": prior, "op": "remove"})]
        # removing every structure ("the model, all of it") is hiding the model
        if keys and not c.has("everything") and set(_expand(keys)) != set(AR_STRUCTURES):
            return [Step("AR.SHOW", {"structures": _expand(keys), "op": "remove"})]
        c.use_words({"all", "everything"})
        ctx.ar_target, ctx.ar_target_set = None, True
        return [Step("AR.REMOVE", {})]
    # show / add / view / question / move (bare directions after the model was used)
    cut = next((i for i, t in enumerate(c.toks) if t in (
        "except", "without", "excluding", "but", "minus", "apart") and i > 0), None)
    if cut is not None:
        head = Clause(c.toks[:cut])
        tail = Clause(c.toks[cut + 1:])
        pos = _expand(ar_structures(head, tumor_lobes))
        neg = _expand(ar_structures(tail, tumor_lobes))
        if neg:
            c.used[:cut] = head.used
            c.used[cut + 1:] = tail.used
            c.use(cut)
            c.use_words(SHOW_VERBS | ONLY_WORDS | {"all", "everything", "from", "the", "me",
                                                   "but", "not", "for"})
            if not pos and c.has("everything", "all"):
                pos = list(AR_STRUCTURES)
            if pos:
                return [Step("AR.SHOW", {"structures": [k for k in pos if k not in neg]})]
            return [Step("AR.SHOW", {"structures": neg, "op": "remove"})]
    keys = _on_shown_side(ar_structures(c, tumor_lobes), c, ctx.state)
    view = _ar_view(c)
    side = _side_of_whole(c)
    if side is not None:
        view, keys = side, []  # "what does the back of the lungs look like": a viewpoint
    params: dict[str, Any] = {}
    prior = None if keys or view else _prior_referent(c, ctx)
    if prior:  # "take the airway off" ... "bring it back": the airway, added to what is shown
        c.use_words(SHOW_VERBS | ADD_WORDS | REPEAT_WORDS | {"back", "in", "on", "please"})
        return [Step("AR.SHOW", {"structures": prior, "op": "add"})]
    if keys:
        params["structures"] = _expand(keys)
        ctx.ar_named = keys[0] if len(keys) == 1 else _group_of(params["structures"])
        only = c.use_words(ONLY_WORDS)
        add = c.use_words({"add", "also", "too", "include", "additionally", "plus", "another",
                           "readd"}) or _put_in(c) \
            or c.use_phrase(("as", "well")) or c.use_phrase(("in", "addition")) \
            or c.use_phrase(("along", "with")) \
            or (c.sep in ("and", "plus") and ctx.agent is None and ctx.state.ar.visible)
        question = (c.has("where", "which") or bool(c.toks) and c.toks[0] in ("is", "are")
                    or any(c.find_phrase(q) >= 0 for q in (
            ("is", "there"), ("are", "there"), ("do", "we", "see"), ("can", "you", "see"),
            ("do", "you", "see"))) or c.has("how", "what") and c.has("does", "do")
            and c.has("look", "run", "runs", "go", "goes", "sit", "sits", "lie", "lies")) \
            and not c.has("show", "display")
        # "show the model and the airway": the model as it is, plus the airway
        with_model = c.has("model", "3d", "anatomy", "reconstruction") and c.has("and", "with")
        if (add or question or with_model) and not only:
            params["op"] = "add"
        if question:
            c.use_words({"where", "which", "is", "are", "located", "find", "on",
                         "in", "side", "part", "area", "region", "of", "visible", "shown",
                         "showing", "displayed", "there"})
    if view is None and not keys:
        # bare view/direction words in an AR clause: "anterior", "from the top"
        for i, t in enumerate(c.toks):
            if t in ("anterior", "posterior", "superior", "inferior", "surgical", "front",
                     "behind", "top", "bottom") or t in ("ant", "post", "sup", "inf") and (
                    c.toks[i - 1:i] == ["to"] or c.toks[i + 1:i + 2] == ["view"] or
                    c.toks[i - 1:i] in (["3d"], ["model"])):  # "flip to ant", "3D ant"
                view = AR_VIEW_WORDS[t]
                c.use(i)
                break
        else:
            for i, t in enumerate(c.toks):
                if t in ("left", "right", "up", "down"):
                    c.use(i)
                    c.use_words({"to", "the", "move", "go", "turn"})
                    return [Step("AR.ROTATE", {"direction": ROTATE_DIRS[t]})]
    if view:
        params["view"] = view
        k = c.index("back")
        if k >= 0 and k + 1 < len(c.toks) and c.toks[k + 1] == "to":
            c.use(k)  # "back to the surgical view"
    c.use_words(SHOW_VERBS | {"all", "everything", "go", "switch", "change", "to", "up", "on",
                              "bring", "me", "with", "and", "can", "we", "look", "does", "how",
                              "it", "like", "seen", "out", "whole", "entire", "complete", "full"})
    if c.has("everything", "all") and not keys and not c.has("view"):
        params["structures"] = list(AR_STRUCTURES)
    return [Step("AR.SHOW", params)]


# ---------------------------------------------------------------------------------------------
# IR
# ---------------------------------------------------------------------------------------------

def ir_fields(c: Clause) -> list[str] | None:
    """Fields named in a clause (None: none named; IR_ALL_FIELDS for "all")."""
    out: list[str] = []
    toks = c.toks
    # Field phrases match whatever the number of their nouns ("breathing tests", "lung
    # function values"): compare singular forms.
    forms = [_singular(t) for t in toks]
    for phrase, fields in FIELD_PHRASES:
        ph = [_singular(w) for w in phrase]
        for k in range(len(forms) - len(ph) + 1):
            if forms[k:k + len(ph)] == ph:
                c.use(*range(k, k + len(ph)))
                out.extend(fields)
                break
    for i, t in enumerate(toks):
        # "lung function tests", "breathing numbers", "spirometry results": a breathing
        # word with a measurement noun is the PFT
        if t in _PFT_QUALIFIERS and i + 1 < len(toks) and forms[i + 1] in _PFT_NOUNS:
            c.use(i, i + 1)
            if i + 2 < len(toks) and forms[i + 2] in _PFT_NOUNS:
                c.use(i + 2)
            out.append("pft")
    for i, t in enumerate(toks):
        if c.used[i] and t not in ("how",):
            continue
        if t not in FIELD_WORDS and forms[i] in FIELD_WORDS:
            t = forms[i]  # "weights", "heights"
        if t in FIELD_WORDS:
            if t == "old" and not c.has("how", "years", "age", "patient", "she", "he", "her",
                                         "his"):
                continue
            if t == "years" and not c.has("old", "age"):
                continue
            out.extend(FIELD_WORDS[t])
            c.use(i)
        elif t in OP_WORDS:
            nxt = toks[i + 1] if i + 1 < len(toks) else ""
            c.use(i)
            # another operation word carries the date ("the operation and the operation
            # date"): this one is the operation's name
            dated_elsewhere = any(toks[k] in OP_WORDS and toks[k + 1:k + 2] in (
                ["date"], ["day"]) for k in range(len(toks)) if k != i)
            # "the operation and the date": two fields, listed
            listed = nxt in ("and", ",", "plus") and "date" in toks[i + 1:i + 4]
            if nxt in ("date", "day", "time", "scheduled") or (
                    c.has("when", "date", "day") and not dated_elsewhere and not listed):
                out.append("operation_date")
                c.use_words({"date", "day", "when", "scheduled", "time", "what"})
                if c.has("name", "type", "planned", "kind"):
                    out.append("operation_name")
                    c.use_words({"name", "type", "planned", "kind"})
            else:
                out.append("operation_name")
                c.use_words({"name", "type", "planned", "kind", "called", "performed"})
        elif t == "date":
            out.append("operation_date")
            c.use(i)
        elif t in ("tumor", "tumors", "location", "site", "located") and (
                c.has("location", "where", "site", "located", "lobe", "info", "information",
                      "position", "side", "which")):
            out.append("tumor_location")
            c.use_words({"tumor", "tumors", "location", "where", "site", "located", "lobe",
                         "position", "nodule", "side", "which", "lung", "in", "on", "part",
                         "area", "region", "segment", "portion"})
        elif t == "where" and c.has("tumor", "nodule", "lesion", "cancer", "mass"):
            out.append("tumor_location")
            c.use_words({"where", "tumor", "nodule", "lesion", "cancer", "mass", "located",
                         "sit", "sits", "lie", "lies", "situated", "found"})
    whole = ("all", "everything", "every", "full", "complete", "whole", "entire")
    # "everything about the patient, including the date": all of it, and that too
    about_patient = any(c.find_phrase((w, prep, *who)) >= 0
                        for w in ("everything", "all") for prep in ("about", "on", "for")
                        for who in (("the", "patient"), ("the", "patients"), ("her",),
                                    ("him",), ("this", "patient")))
    if out and c.has("summary", "overview", "rundown", "synopsis") or out and about_patient or \
            out and any(c.find_phrase((w, *mid, noun)) >= 0 for w in whole
                   for mid in ((), ("the",), ("the", "patient"), ("patient",), ("her",),
                               ("his",), ("of", "the"), ("the", "patients"))
                   for noun in ("fields", "info", "information", "details", "data")):
        # "all the patient fields and the operation date": everything, and that too
        c.use_words({*whole, "fields", "info", "information", "details", "data", "of", "summary",
                     "overview", "rundown", "synopsis", "with", "about", "including",
                     "include", "patient", "patients"})
        return sorted(dict.fromkeys([*IR_ALL_FIELDS, *out]))
    if c.has(*whole) and not out:
        c.use_words({"all", "everything", "every", "full", "complete", "whole", "entire",
                     "fields", "field", "info", "information", "data", "details"})
        return list(IR_ALL_FIELDS)
    if not out:
        return None
    # age and sex are one display item (DESIGN §4)
    return sorted(dict.fromkeys(out))


_EXCEPTIONS = (("except",), ("except", "for"), ("excluding",), ("but", "not"),
               ("apart", "from"), ("other", "than"), ("besides",), ("minus",), ("without",),
               ("but", "leave", "out"), ("leaving", "out"))


def _exception_at(toks: list[str]) -> tuple[int, int] | None:
    for k in range(1, len(toks)):
        for ex in sorted(_EXCEPTIONS, key=len, reverse=True):
            if tuple(toks[k:k + len(ex)]) == ex:
                return k, k + len(ex)
    return None


def decide_ir(c: Clause, ctx: _Ctx, intent: str) -> list[Step]:
    c.use_words({"conditions", "diseases", "problems", "illnesses", "disease", "condition",
                 "summary", "overview", "profile", "about", "remind", "of", "any", "known",
                 "info", "information", "fields", "field", "details", "data", "box",
                 "textbox", "sheet", "clinical", "chart", "values", "value", "record", "patient",
                 "pt", "her", "she", "his", "he", "text", "panel", "overlay", "result",
                 "results", "test", "tests", "numbers", "stats", "characteristics"})
    if intent == "reset":
        c.use_words(RESET_VERBS | {"all", "everything"})
        return [Step("IR.RESET", {})]
    fields = ir_fields(c)
    if intent == "hide":
        c.use_words(HIDE_VERBS | _NEGATION | {"turn", "switch", "take", "get", "all",
                                              "everything"})
        if fields and set(fields) != set(IR_ALL_FIELDS):
            return [Step("IR.SHOW", {"fields": fields, "op": "remove"})]
        return [Step("IR.HIDE", {})]
    c.use_words(SHOW_VERBS | {"is", "are", "does", "have", "has", "much", "about", "any",
                              "up", "on", "bring", "tell", "me", "know", "the", "whats",
                              "s", "many"})
    cut = _exception_at(c.toks)
    if cut is not None:
        # "everything except the weight": all fields (or those named first) minus the rest
        i, j = cut
        named = ir_fields(Clause(c.toks[:i])) or list(IR_ALL_FIELDS)
        left_out = ir_fields(Clause(c.toks[j:]))
        if left_out:
            c.use(*range(len(c.toks)))
            keep = [f for f in named if f not in left_out and
                    not ({f, *left_out} <= {"age", "sex"})]
            if keep:
                return [Step("IR.SHOW", {"fields": sorted(keep)})]
    params: dict[str, Any] = {}
    if fields is not None and set(fields) != set(IR_ALL_FIELDS):
        params["fields"] = fields
        only = c.use_words(ONLY_WORDS)
        add = c.use_words({"add", "also", "too", "include", "additionally", "plus", "readd"}) \
            or c.use_phrase(("as", "well")) or c.use_phrase(("in", "addition")) \
            or (c.sep in ("and", "plus") and ctx.agent is None)  # "and her FEV1"
        if add and not only:
            params["op"] = "add"
    return [Step("IR.SHOW", params)]


def _names_no_field(c: Clause) -> bool:
    probe = Clause(list(c.toks))
    return ir_fields(probe) is None


def _vague_ir_leads(clauses: Sequence[RoutedClause]) -> set[int]:
    """Patient questions that name no field ("who are we operating on today") next to ones
    that do ("what is the patient's sex and age"): the vague one only leads in, so the
    named fields are the request (asking for everything is said with "all"/"everything",
    which ``ir_fields`` reads as a field list)."""
    ir = [k for k, rc in enumerate(clauses) if rc.agent == "IR"]
    vague = {k for k in ir if clauses[k].intent == "question" and
             _names_no_field(clauses[k].clause) and
             not _names_the_operation(clauses[:k], clauses[k].clause)}
    named = [k for k in ir if k not in vague and clauses[k].intent in ("show", "question", "add")
             and not _names_no_field(clauses[k].clause)]
    return vague if named else set()


_QUESTION_OPENERS = {"what", "whats", "how", "where", "which"}


def _ct_question_leads(clauses: Sequence[RoutedClause]) -> set[int]:
    """A CT question that gives no step ("what is above this on the axial") followed by a
    CT move that gives one ("can you go up 20") only leads in to that move."""
    out: set[int] = set()
    for k, rc in enumerate(clauses[:-1]):
        toks = rc.clause.toks
        if rc.agent != "IV" or not toks or toks[0] not in _QUESTION_OPENERS or \
                any(_is_num(t) for t in toks):
            continue
        if any(n.agent == "IV" and n.intent == "move" and any(_is_num(t) for t in n.clause.toks)
               for n in clauses[k + 1:]):
            out.add(k)
    return out


_NAME_WORDS = {"called", "name", "named"}


def _names_the_operation(before: Sequence[RoutedClause], c: Clause) -> bool:
    """"what is it called" after a part that named the operation asks for its name."""
    return bool(before) and c.has("it", "its") and c.has(*_NAME_WORDS) and \
        _names_no_field(c) and any(rc.clause.has(*OP_WORDS) for rc in before)


# ---------------------------------------------------------------------------------------------
# the tier
# ---------------------------------------------------------------------------------------------

@dataclass
class RoutedClause:
    clause: Clause
    agent: str | None
    intent: str
    source: str  # "words" | "carried" | "memory" | "state" | "lookahead" | "guess"


@dataclass
class Analysis:
    """The route stage's output: clauses with agents (the decide stage turns them into steps)."""

    text: str
    clauses: list[RoutedClause]
    repeat_of: str | None = None  # a repeat ("again") resolved to this earlier command
    step_override: int | None = None  # "20 more": the repeated move with this step
    reverse: bool = False  # "the other way": the repeated move or swing, reversed
    times: int = 1  # "twice more": the repeated plan this many times over
    statement: bool = False  # a remark about the case rather than a request
    # "sorry, 250" / "no, from above": the earlier command this one corrects (its plan is
    # read again with the new value; a relative CT move then only makes up the difference)
    replaces: str | None = None
    # the words read instead of the command's own, when context rewrote them ("and down"
    # after a swing is "rotate the model down"): the semantic tier matches these
    rewritten: str | None = None
    # "a bit more", "a little further": the repeated CT move by the default step, not again
    # by the last one's (which may have been 30)
    small: bool = False
    rules: list[str] = field(default_factory=list)  # the context rules that applied

    @property
    def agent(self) -> str | None:
        return self.clauses[0].agent if self.clauses else None


@dataclass
class Reading:
    """One command on its way through the context rules: the words as they stand and what
    the rules have found so far (a repeat, a reversal, a step, a remark)."""

    corrected: str
    state: ConsoleState
    memory: Memory
    nested: bool  # read for another command's context rule: those rules do not apply again
    tokens: list[str]
    own: list[str] = field(default_factory=list)  # the words as said (after preparation)
    repeat_of: str | None = None
    step_override: int | None = None
    reverse: bool = False
    small: bool = False
    times: str | None = None
    statement: bool = False
    core: list[str] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)
    rewrote: bool = False  # a rule put other words in the command's place

    def __post_init__(self) -> None:
        self.own = list(self.tokens)


class ContextRule(Protocol):
    """A named context rule (the inventory is ``app.agents.context_rules.CONTEXT_RULES``)."""

    name: str
    rewrites: bool  # its words stand for the command's own (the semantic tier matches them)

    def apply(self, grammar: GrammarTier, reading: Reading) -> Analysis | bool: ...


def _state_agent(state: ConsoleState, intent: str) -> str | None:
    """An agent that is on screen and can serve the intent (last resort)."""
    cands = []
    if state.ar.visible:
        cands.append("AR")
    if state.iv.mode != "none":
        cands.append("IV")
    if state.ir.visible:
        cands.append("IR")
    for a in cands:
        if intent in CAPABLE[a]:
            return a
    return None


_MORE_WORDS = {"more", "another", "further", "again"}


def _repeat_times(tokens: list[str]) -> str | None:
    """The count word of a counted repeat ("twice more", "three times again", "do that
    twice"), or None: the repeat words with one count and nothing else."""
    core = " ".join(t for t in tokens if t not in FILLER and t != ",")
    core = re.sub(r"\b(\d+) times\b", r"\1x", core).split()  # "3 times more" → "3x more"
    counts = [t for t in core if t in REPEAT_COUNTS and t != "once" or _TIMES_RE.match(t)]
    if len(counts) != 1:
        return None
    rest = [t for t in core if t != counts[0]]
    if not rest:  # "do that twice", "same again twice": a pro-form names the last command
        return counts[0] if {"that", "it", "this", "same"} & set(tokens) else None
    return counts[0] if _is_repeat(rest) else None


def _is_repeat(tokens: list[str]) -> bool:
    core = [t for t in tokens if t not in FILLER and t != ","]
    if not core:
        return bool({"again", "same"} & set(tokens))
    return all(t in REPEAT_WORDS | {"once", "time", "1", "bit", "little", "lot", "much",
                                    "please", "one", "do", "it", "that", "going", "even",
                                    "slightly", "a", "but", "only", "this"} for t in core)


_PARTICLE_VERBS = {"bring", "pull", "put", "open", "show", "call", "pop", "load", "fire",
                   "light", "set", "give", "hand", "turn", "switch"}


# Multi-word expressions read as one word before anything else (longest first).
_CANON: list[tuple[re.Pattern[str], str]] = [(re.compile(p), r) for p, r in (
    (r"\bbody mass index\b|\bbody mass\b", "bmi"),
    (r"\bfull screen\b|\bfull size\b|\bwhole screen\b", "fullscreen"),
    (r"\bblow (it |this |that )?up\b", "enlarge"),
    (r"\bclose up\b|\bcloser look\b", "closer"),
    # camera talk: "tighter" is closer; "fully out" / "step back out" zoom out
    (r"^(a bit |a little |go |get )?tighter\b", "zoom in"),
    (r"\b(get|go|come|move) (a bit |a little )?nearer( to)?\b|\bnearer to\b", "zoom in on"),
    (r"^(all the way|fully|completely) out\b", "zoom out fully"),
    (r"\bstep (back )?out\b", "zoom out"),
    # "that's enough spinning": stop turning; "kind enough to" is only politeness
    (r"\b(that is|that's|thats|ok|okay) enough (spinning|rotating|rotation|turning|of that "
     r"spinning|of the spinning)\b|\benough (spinning|rotating|rotation|turning)\b",
     "stop rotating"),
    (r"\b(kind|good) enough to\b", "please"),
    # "could it go round once": one full turn
    (r"\b(it|model) (go|spin|swing) (all the way )?(a)?round( once| one time| fully)?\b"
     r"(?! (vertically|horizontally|up|down|left|right|to))", "\\1 rotate horizontally"),
    # "restore that lobe": put back the lobe just taken away
    (r"\brestore (that|this|the last) (lobe|structure)\b", "readd it"),
    # "what are we taking out today": the operation
    (r"\bwhat (are|is) (we|she|he) (taking out|removing|doing|having( done)?|operating on)"
     r"( today| here| now)?\b", "what is the operation name"),
    (r"\bwhat('s| has| is|s) (she|he|the patient) got\b", "what is the diagnosis"),
    # "heart or lung history": her medical history, not the 3D model's heart
    (r"\b(heart|cardiac|lung|pulmonary|cardiopulmonary)( or (heart|lung|cardiac|pulmonary))? "
     r"(history|problems|disease|conditions)\b", "medical history"),
    # "the slice above": the next slice up (axial)
    (r"\b(the )?(slice|one|image) above( that| it| this)?\b", "up"),
    (r"\b(the )?(slice|one|image) below( that| it| this)?\b", "down"),
    # the three-view layout in any display noun ("the three small pictures", "3 panes")
    (r"\b(all )?(the )?(3|three) (small |little |smaller )?(views|panels|images|pictures|panes|"
     r"tiles|windows|frames|boxes|screens)\b(?! (to|at) )", "small views"),
    (r"\b(all )?(the )?(3|three) planes\b(?= (to|at|on|onto|by|up|down|left|right|forward|back|"
     r"middle|center|[+-]?\d))", "all planes"),
    # "middle slice on all three planes": that position on every plane
    (r"\b(middle|center|centre|mid|max|maximum|min|minimum|top|bottom)( slice| slices| position)? "
     r"(on|of|in|for|across) (all|every|each)( the)?( 3| three)? (planes|views|slices)\b",
     "all planes to the \\1"),
    # "center all three planes", "the middle slices": every plane to its middle slice
    (r"\b(center|centre|middle) (all|every|each)( the)?( 3| three)? (planes|views|slices)\b",
     "all planes to the middle"),
    (r"\b(the )?(middle|center|centre|mid) slices\b(?! (of|on|in|for) )", "all planes to the middle"),
    (r"\b(all )?(3|three) (small )?planes\b", "small views"),
    (r"\b(one|1|a single) (step|notch|level|click|more time)\b", "once"),
    (r"\b(\d+) (steps|levels|notches|clicks)\b(?! (up|down|left|right|forward|back))",
     "\\1 times"),
    (r"\bmake it stop\b|\bstop it\b", "stop"),
    (r"\b(back to|as) (how it was|it was|before|the original|the start)\b", "reset"),
    # "twenty down" / "axial, 20 down": the step said before its direction
    (r"(?<!\bto )(?<!\bslice )\b(\d+) (down|up|left|right|forward|backward|back)\b(?! \d)",
     "\\2 \\1"),
    # "her FEV1 before surgery": when it was measured, not the operation field
    (r"\b(before|prior to|ahead of|pre) (the |her |his |this )?(surgery|operation|procedure|op)\b"
     r"(?= *[?.!,]?$)", ""),
    # "show nothing but the airway": only the airway
    (r"\bnothing (but|except|other than|apart from|besides)\b", "only"),
    # "the 3D model of the lungs": the model is of the lungs; no structure is picked out
    (r"\b(3d |lung )?(model|reconstruction|rendering) of (the |her |his )?(lungs?|chest|thorax)\b",
     "\\1\\2"),
    # "back to the middle": a return to the middle slice, not a step backward (coronal)
    (r"\b(go |move )?back to (the )?(middle|centre|center)\b", "to the middle"),
    (r"\b(disappear|vanish)\b", "hide"),
    # "make the model go away", "make it vanish": hide (not "go away" = zoom out)
    (r"\bmake ((the |it |them |that |this |those )?(\w+ ){0,3})(go away|disappear|vanish)\b",
     "hide \\1"),
    (r"\b(pull|go|come|zoom|back) ?(all the way|right) (back )?out\b|"
     r"\bback out (all the way|fully|completely)\b|^all the way (back )?out\b", "zoom out fully"),
    (r"\b(further|farther|move|go|step) away\b|\bback out\b|\bzoom back( out)?\b|"
     r"\b(back|ease|pull) off\b|\bease (it )?back\b", "zoom out"),
    (r"\b(bring|put|add|get) back\b", "readd"),
    (r"\b(put|bring|get|pop|stick|slot) ((the |them |it |that |those |all )?(\w+ ){0,4})back\b"
     r"(?! to)",
     "readd \\2"),
    # "I want the nodules back", "can I have her BMI back": wanting a thing back re-adds it
    # ("move the coronal back 10" is a direction: a step or a target follows)
    (r"\b(want|need|have|give me|show me|show|display|restore) ((?:it |them |that |those |"
     r"everything |(?:(?:the|her|his|all|all the|those|these) )?(?:(?!(?:to|see|look|at|the|a|an|"
     r"me|us|from|of)\b)\w+ ){1,3}))back\b(?! (of|to|by|\d|a |up|down|slightly|further|more))",
     "readd \\2"),
    # "start the CT over", "begin it again": reset that thing
    (r"\b(start|begin) ((the |it |them |that |this )?((?!(rotat|spin|turn|swing|mov|scroll)\w*)"
     r"\w+ ){0,2})(over|again|afresh)\b", "reset \\2"),
    (r"\b(back )?(the way|how) (it|they|things|everything) (was|were|started|began|looked)"
     r"( at the start| originally| before| at first)?\b", "reset"),
    (r"\boperat(ed|ing|e) (on (her|him|them|the patient|this patient) )?for\b", "diagnosis"),
    (r"\b(3|three) ?dimensional\b|\b3 dimension\b", "3d"),
    (r"\btowards? the (head|top)\b|\bcranially\b", "up"),
    (r"\btowards? the (feet|foot|legs|bottom)\b|\bcaudally\b", "down"),
    (r"\b(done|finished) with\b", "hide"),
    (r"\bhold (it |that |this )?(there|still|steady|in place)\b|\bkeep it still\b", "stop"),
    (r"\bnot so close\b|\btoo close\b|\bpull (it )?back\b|\bpull out\b", "zoom out"),
    (r"\breset the zoom\b|\bzoom (all the way|completely|fully) out\b|"
     r"\bzoom out (all the way|completely|fully)\b|\bno zoom\b", "zoom out fully"),
    (r"\b(a )?(few|couple of|couple|several) (more )?(slices|steps)\b", "slices"),
    (r"\bdate of birth\b|\bdob\b|\bbirth date\b", "birthday"),
    (r"\bpage (up|down)\b", "scroll \\1"),
    (r"\bbirds? s? ?eye( view)?\b", "top view"),
    (r"\bfrontal view\b|\bfrontal perspective\b", "anterior view"),
    (r"\bdefault view\b|\bnormal view\b|\bstandard view\b|\bhome view\b",
     "surgical view"),
    (r"\boperated (for|on for)\b", "diagnosis"),
    (r"\bwhat is wrong with (the patient|her|him|them)\b|\bwhy (is|are|does|do|were|was) (she|he|the patient|they|we)\b[^,]*\b"
     r"(surgery|operation|procedure|operated|operating|operate|here|having)\b", "diagnosis"),
    (r"\bback to (normal|default|defaults|the default|the beginning|start|original)\b|"
     r"\bstart over\b|\bfrom scratch\b", "reset"),
    (r"\bupside down\b|\bflip(?!( it| the model| this)?( over| around)? (to|so)\b)"
     r"( it| the model| this)?( over| around)?\b|"
     r"\bhead over heels\b", "rotate vertically"),
    (r"\bpoint out\b|\bhighlight\b|\bindicate\b|\bmark\b", "readd"),
    (r"\b(other|underlying|chronic|past|previous|existing|coexisting|associated) "
     r"(medical |health )?(diseases?|conditions?|illness(es)?|problems?|issues?)\b",
     "comorbidities"),
    (r"\b(what|which) ((kind|type|sort) of )?(disease|illness|condition|cancer|tumor|lesion)\b",
     "diagnosis"),
    (r"\bhow big is (she|he|the patient)\b|\b(body )?measurements\b", "physical"),
    (r"^(everything|all of it|all of them|the lot|all)$", "show everything"),
    (r"\b(the )?other way( around| round)?\b|\b(the )?(opposite|other) (way|direction)\b|"
     r"\breverse (it|that|direction)\b", "opposite"),
    (r"\blung (model|anatomy|3d|reconstruction|rendering)\b", "model"),
    # the lobe holding the tumour (from the clinical data)
    (r"\b(tumor|tumors|affected|diseased|target|involved|cancer|tumor bearing) (lobe|lobes)\b|"
     r"(?<!upper )(?<!lower )(?<!middle )\b(lobe|lobes) (with|containing|that has|holding|of) "
     r"the (tumor|nodule|lesion|cancer)\b",
     "tumorlobe"),
    (r"\b3d lungs?\b", "3d"),
    # a bare "in"/"out" after zooming ("and out again", "in a bit more") zooms
    (r"^((and|now|then|okay|ok|so) )*(in|out)\b(?=(( again| a bit| a little| more| further|"
     r"| please| then| once more))*$)", "zoom \\3"),
    # a sweep from one side to the other is the full turn on that axis
    (r"\b(spin|rotate|turn|swing|twirl|roll|rock|tip|swivel|spinning|rotating)\b(.*?)\b(from )?"
     r"(left to right|right to left|side to side)\b", "\\1\\2 horizontally"),
    (r"\b(spin|rotate|turn|swing|twirl|roll|rock|tip|swivel|spinning|rotating|flip)\b(.*?)"
     r"\b(from )?(top to bottom|bottom to top|up and down|head to toe|end over end)\b",
     "\\1\\2 vertically"),
    (r"\bwould (love|like) to\b", "want to"),
    (r"\b(turn|spin|swing|rotate|swivel|twirl|whirl)( it| them| the model| that| this)? round\b",
     "\\1\\2 around"),
    # "what's she in for?": why she is here is her diagnosis
    (r"\bwhat (is|are) (she|he|they|the patient|the pt) (here |in )for\b", "diagnosis"),
    # "what's she being treated for?", "what was he admitted for": the reason is the diagnosis
    (r"\bwhat (is|are|was|were|has|have) (she|he|they|the patient|the pt) (being |been )?"
     r"(treated|admitted|seen|followed|managed|referred|listed|scheduled) for\b", "diagnosis"),
    # "according to her notes, ...": where to look, not a request of its own
    (r"\b(according to|going by|as per|per) (her|his|the|our|their)( patient| clinical| "
     r"medical| case)? (notes|chart|charts|records?|file|sheet|paperwork|history)\b ?,?", ""),
    # "I'd love the sagittal on 180": a wish like "I'd like" when a display or view follows
    # ("I'd love a 3D printer" is talk)
    (r"\b(i|we) (would|d) (really )?love(?= (the|to see|to have|to get|to look at) )",
     "\\1 would like"),
    # an intensifier before a named position adds nothing ("bang in the middle", "dead centre")
    (r"\b(bang|slap|smack|dead|spot|smack bang|right|exactly|precisely) (in |on |at )?(the )?"
     r"(middle|centre|center|midline)\b(?! (lobe|lobes)\b)(?! (and|or|plus) (upper|lower)\b)",
     "to the \\4"),
    # degree nouns are "a bit" ("up a touch", "a tad to the left", "down a notch"); an
    # intensifier before a comparative or direction, or "still" after one, adds nothing
    (r"\ba (touch|tad|smidge|smidgen|hair|fraction|notch|wee bit|little bit|tiny bit)\b",
     "a bit"),
    (r"\b(a lot|lots|much|(?<!the )way|loads|a good bit|a fair bit) (?=(further|farther|more|higher|"
     r"lower|closer|bigger|smaller|larger|up|down|left|right|back|forward|in|out)\b)", ""),
    (r"\b(closer|further|farther|higher|lower|bigger|smaller|larger|more) still\b", "\\1"),
    # "breathing tests", "respiratory numbers": the PFT, named without a console word
    (r"\b(breathing|respiratory|spirometric|ventilatory) (function )?(tests?|testing|"
     r"values?|results?|numbers?|measurements?|stud(y|ies)|figures?|scores?|readings?|"
     r"parameters?|data)\b", "pft"),
    # "close" after a degree word or "in" is the adjective ("get in close", "really close
    # on the nodule"), not the verb that hides; "close in on" zooms
    (r"\bclose in (on|to|toward|towards)\b", "zoom in \\1"),
    (r"\b(in|very|real|really|nice|right|up) close\b", "\\1 closer"),
    (r"\b(get|come|go|move) close (to|on)\b", "\\1 closer \\2"),
    # chart shorthand after a plane ("cor post 20", "ax sup 10")
    (r"\b(cor|coronal|ax|axial|sag|sagittal)( plane| view| slice| slices)? ant\b", "\\1\\2 anterior"),
    (r"\b(cor|coronal|ax|axial|sag|sagittal)( plane| view| slice| slices)? post\b",
     "\\1\\2 posterior"),
    (r"\b(cor|coronal|ax|axial|sag|sagittal)( plane| view| slice| slices)? sup\b", "\\1\\2 superior"),
    (r"\b(cor|coronal|ax|axial|sag|sagittal)( plane| view| slice| slices)? inf\b", "\\1\\2 inferior"),
    (r"\bflip (over |across |round |around )?to\b", "switch to"),
    (r"\bget rid of\b", "remove"),
    (r"\b(bin|ditch|scrap) the\b", "remove the"),
    # slang for putting something on screen ("chuck the scan up", "whack the 3D model up")
    (r"\b(chuck|whack|slap|bung|shove)\b(?=.*\b(up|on)\b)", "bring"),
    (r"\bsm views\b|\bsml views\b", "small views"), (r"\brot\b", "rotate"),
    # "RML off, LUL on": a structure or field switched off or on; "left lung off", "the right
    # lower lobe on"
    (r"\b((?:(?:left|right|both) )?(?:(?:upper|middle|lower) )?(?:lung|lungs|lobe|lobes)) off\b",
     "remove \\1"),
    (r"\b((?:(?:left|right|both) )?(?:(?:upper|middle|lower) )?(?:lung|lungs|lobe|lobes)) on\b"
     r"(?= ?(,|$|please|too|again|now|as well))", "add \\1"),
    (r"\b(rul|rml|rll|lul|lll|nodules|nodule|airway|airways|trachea|bmi|pft|weight|height|age|"
     r"diagnosis|dx|comorbidities) off\b", "remove \\1"),
    (r"\b(rul|rml|rll|lul|lll|nodules|nodule|airway|airways|trachea|bmi|pft|weight|height|age|"
     r"diagnosis|dx|comorbidities) on\b(?= ?(,|$|please|too|again|now|as well))", "add \\1"),
    # a request passed on for someone else ("the doctor would like the airways hidden")
    (r"\b(the )?(doctor|surgeon|consultant|professor|attending|boss|dr \w+) (would like|wants|"
     r"asks for|needs|asked for|would want)\b", "i would like"),
    # non-native order: object first ("the airway also you add", "the coronal you move back")
    (r"(^|, )(?!(?:could|can|would|will|do|did|are|if|when|so|and|thank|as|have|should|may|"
     r"might|please|what|how|why|where|who|i|we|let|okay|ok|now)\b)"
     r"(the |her |his )?([a-z0-9 ]{2,40}?) (also )?you (add|show|remove|hide|move|rotate|"
     r"turn|zoom|put|take|bring|make|enlarge)\b", "\\1\\5 \\4\\2\\3"),
    (r"\bevery (structure|structures|part|thing on the model)\b", "all structures"),
    # "turn to the left side view": a viewpoint, not a swing
    (r"\b(turn|rotate|swing|spin|move|go)( it| the model)? (over )?to the (\w+)( side| lateral)? "
     r"(view|aspect|perspective)\b", "switch to the \\4\\5 view"),
    # "drop the axial by a hundred": the slice goes down
    (r"\b(drop|lower|bring down) (the )?(axial|coronal|sagittal)( slice| plane| view)? by\b",
     "\\3 down by"),
    # "what's the operation and when is it": the date of the operation
    (r"\b(operation|surgery|procedure|op)\b(.*) and when (is|was|will) (it|that)( be)?\b",
     "\\1\\2 and the operation date"),
    # "scroll the volume": the CT volume
    (r"\b(scroll|page|move|go|step|flick)( back| forward| up| down)? (through )?(the )?volume\b",
     "\\1\\2 \\3the ct"),
    (r"\bblow (it |that |this |them |the \w+ |the \w+ \w+ )?up\b", "enlarge \\1"),
    (r"\bcamera ?eye view\b|\bcamera s eye view\b", "surgical view"),
    # "view it the way the surgeon sees it": the surgeon's viewpoint is the surgical view
    (r"\b(the way|how|as) (the |a |our )?(operating )?(surgeon|surgeons|operator) "
     r"(sees|see|views|looks at|would see|will see|is seeing)( it| them| the model| this)?\b",
     "from the surgical view"),
    # a number said as "sixty-something" is a remark, never an amount ("sixty-something,
    # wasn't she? let me see the age")
    (r"\b(\d+|(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)) ?something\b", ""),
    (r"\b(\d+) ish\b", "\\1"),  # "down 20ish": about 20
    # a number said of a person is her age, never a slice ("she's 60 ish, show the age")
    (r"\b(she|he)( is| was| must be| should be)? (about |around |maybe |nearly |over )?"
     r"\d+( ish)?\b", "\\1"),
    # a tag question adds nothing ("her FEV1 was borderline, wasn't it, ...")
    (r",? (is|was|are|were|does|did|has|have|do) not (it|she|he|they|there) ?(,|$)", ","),
    (r"\b(closer|further|farther|bigger|smaller|larger|higher|lower|more|less) than "
     r"(that|this|before|now|it is|that one)\b", "\\1"),
    (r"\b(ditch|scrap|bin|lose|drop|kill) (it|that|this|them|those)\b", "remove \\2"),
    # "the lower lobe on the right": the side named after the lobe
    (r"\b(upper|middle|lower) lobe (on|of) the (right|left)( side| lung)?\b", "\\3 \\1 lobe"),  # "flip to the front view"
    # "two more slices up": the number is the step ("more" only says it goes on)
    (r"\b(\d+) more (slices?|steps?|images?)\b", "\\1 \\2"),
    (r"\bpull up\b|\bbring up\b|\bput up\b|\bopen up\b|\bpop up\b|\bcall up\b",
     "show"),
)]


# Inflected forms of the verbs the grammar reads ("would you mind showing the CT").
# Verb forms read as the verb ("swinging it upward", "taking the RLL out"): generated for the
# grammar's verbs, then the forms the rules do not cover.
_LEMMA = {**verb_lemmas(
    SHOW_VERBS | HIDE_VERBS | MOVE_VERBS | ROTATE_VERBS | RESET_VERBS
    | {"zoom", "add", "enlarge", "include", "magnify", "shrink"},
    set(PLANE_WORDS) | set(DIRECTIONS) | set(STRUCT_WORDS) | set(FIELD_WORDS)
    | set(AR_VIEW_WORDS) | set(NAMED_POS)),
    "showing": "show", "shows": "show", "showed": "show", "shown": "show",
    "displaying": "display", "displayed": "display", "opening": "open", "opened": "open",
    "hiding": "hide", "hidden": "hide", "removing": "remove", "removed": "remove",
    "clearing": "clear", "cleared": "clear", "closing": "close", "closed": "close",
    "resetting": "reset", "zooming": "zoom", "zoomed": "zoom", "enlarging": "enlarge",
    "enlarged": "enlarge", "magnifying": "magnify", "magnified": "magnify",
    "increasing": "increase", "decreasing": "decrease", "scrolling": "scroll",
    "going": "go", "bringing": "bring", "adding": "add", "added": "add",
    "rotated": "rotate", "turned": "turn", "spun": "spin", "moved": "move",
    "nudge": "move", "bump": "move", "scrolls": "scroll", "including": "include",
    "initialise": "initialize", "initialized": "initialize", "restoring": "restore",
    "displays": "display", "opens": "open", "zooms": "zoom", "rotates": "rotate",
    "visualizing": "visualize", "erasing": "erase", "deleting": "delete",
    "functioning": "function", "functions": "function",
}


def canonical(text: str) -> str:
    """The corrected text with multi-word expressions and verb forms in the grammar's words."""
    for pat, rep in _CANON:
        text = pat.sub(rep, text)
    text = " ".join(_LEMMA.get(t, t) for t in text.split())
    return re.sub(r"\s+", " ", text).strip()


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
# What may follow a closing particle in the same clause ("get the model up for me please").
_PARTICLE_TAIL = language_words("particle_tail")
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
                  "anatomy", "rendering"}
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


# Words that mark a correction and where the corrected part starts.
_CORRECTION_PAIRS = {("i", "mean"), ("i", "meant"), ("or", "rather"), ("make", "that"),
                     ("make", "it"), ("no", "wait")}
_VERBISH = SHOW_VERBS | MOVE_VERBS | ROTATE_VERBS | {"zoom", "hide", "remove", "reset",
                                                      "add", "rotate", "enlarge"}


def _correction_marker(tokens: list[str]) -> tuple[int, int] | None:
    """(start, end) of the last correction marker: ", no," / "sorry," / "I mean" / "or rather"
    / "make that" (only before a value: "make it the coronal", not "make it bigger")."""
    found = None
    n = len(tokens)
    for i, t in enumerate(tokens):
        after_pause = i == 0 or tokens[i - 1] == ","
        nxt = tokens[i + 1] if i + 1 < n else ""
        # "no" corrects only after or before a pause ("left, no, right"; "no, 250"): "no
        # nodules" / "no spinning" are requests
        if t == "no" and nxt == "wait" and after_pause:
            found = (i, i + 2)  # "sagittal big, no wait, the coronal"
        elif (t, nxt) in (("no", "sorry"), ("sorry", "no"), ("no", "no")) and 0 < i < n - 2:
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
        elif t == "well" and i > 1 and after_pause and nxt == ",":
            found = (i, i + 1)  # "take everything off, well, leave the model, …"
        elif t == "no" and nxt and nxt not in ("more", "longer", "need") and (
                nxt == "," or i > 0 and tokens[i - 1] == ",") or \
                t == "sorry" and after_pause and (nxt and nxt != "," or i + 1 == n and i > 1):
            found = (i, i + 1)  # (a closing "sorry": "vertically, horizontally, sorry")
        elif t == "sorry" and after_pause and nxt == "," and i + 2 < n:
            found = (i, i + 2)
        elif (t, nxt) in _CORRECTION_PAIRS and (after_pause or tokens[i - 1] in (
                "actually", "sorry", "oh", "wait", "no", "nah")):  # "actually make that 320"
            if t == "make" and not (i + 2 < n and (tokens[i + 2] == "the" or
                                                   _is_num(tokens[i + 2]))):
                continue
            found = (i, i + 2)
    return found


def _kinds(tokens: list[str]) -> set[str]:
    """What sort of value the words are (a number replaces a number, a side a side)."""
    return {"num" if _is_num(t) else "dir" if t in DIRECTIONS else "field" if t in FIELD_WORDS
            else "plane" if t in PLANE_WORDS else "structure" if t in STRUCT_WORDS
            or t in ("lobe", "lung") else "word"
            for t in tokens if t not in ("the", "a", "an")}


def _only_side(tokens: list[str]) -> str | None:
    """"only the left", "just the right side", "the left one only": the side, else None."""
    core = [t for t in tokens if t not in ("now", "please", "the", ",", "then", "okay", "ok")]
    if not core or not ({"only", "just"} & set(core)):
        return None
    rest = [t for t in core if t not in ("only", "just", "show", "me", "side", "one", "lung",
                                         "lobes", "half")]
    return rest[0] if rest in (["left"], ["right"]) else None


def _plan_size(steps: Sequence[Step]) -> int:
    return sum(len(v) if isinstance(v, (list, tuple)) else 1
               for s in steps for v in dict(s.params).values())


_SPLIT_OFF_VERBS = {"take", "get", "put", "move", "clear", "pull", "shift", "chuck", "knock"}
_SPLIT_OFF_ENDS = (("off",), ("away",), ("out", "of", "the", "way"), ("out", "of", "view"),
                   ("off", "the", "screen"), ("off", "screen"), ("off", "the", "display"),
                   ("off", "the", "monitor"), ("away", "from", "the", "screen"))


def _hoist_particle(tokens: list[str]) -> list[str]:
    """"take the CT and the patient info off the screen": a removal verb split from its
    particle by a list of objects removes every object ("remove the ct and the patient
    info"); read clause by clause, the first object would be shown."""
    verb = next((i for i, t in enumerate(tokens) if t in _SPLIT_OFF_VERBS), None)
    if verb is not None and "remove" in tokens[verb + 2:]:
        # "chuck the nodules and the RUL off" ("RUL off" already read as "remove RUL"): the
        # verb and its particle around a list remove every item
        k = tokens.index("remove", verb + 2)
        head = tokens[verb + 1:k]
        while head and head[-1] == "the":
            head = head[:-1]
        if head and head[-1] == "and" and not set(head) & (_VERBISH | {","}):
            return [*tokens[:verb], "remove", *tokens[verb + 1:k], *tokens[k + 1:]]
    if verb is not None and tokens[verb] in ("take", "get", "pull") and "out" in tokens[verb + 2:]:
        # "take the RLL out of the model": the verb and its particle around the object
        k = tokens.index("out", verb + 2)
        obj, after = tokens[verb + 1:k], tokens[k + 1:]
        if obj and not set(obj) & (_VERBISH | {","}) and (not after or after[0] in (
                "of", ",", "please", "now", "too", "as", "and")):
            for gone in (["of", "the", "way"], ["of", "view"], ["of", "sight"]):
                if after[:len(gone)] == gone:
                    after = after[len(gone):]
            after = ["from", *after[1:]] if after and after[0] == "of" else after
            return [*tokens[:verb], "remove", *obj, *after]
    if verb is not None:
        # "put the patient info away and the CT too": the particle before the list goes on
        for k in range(verb + 2, len(tokens) - 2):
            if tokens[k] in ("away", "off") and tokens[k + 1] == "and" and \
                    not set(tokens[k + 2:]) & (_VERBISH | {","}):
                return [*tokens[:verb], "remove", *tokens[verb + 1:k], *tokens[k + 1:]]
    body = tokens[:-1] if tokens and tokens[-1] in ("please", "now", "too") else tokens
    for end in sorted(_SPLIT_OFF_ENDS, key=len, reverse=True):
        if tuple(body[-len(end):]) == end:
            head = body[:-len(end)]
            verb = next((i for i, t in enumerate(head) if t in _SPLIT_OFF_VERBS), None)
            if verb is not None and "and" in head[verb + 1:] and "," not in head[verb + 1:]:
                return [*head[:verb], "remove", *head[verb + 1:]]
            break
    return tokens


# Openers of an explanation said next to a request ("..., which means the vessels are lower",
# "that is where the bronchus branches", "these matter for the risk", "I am wondering about
# the lower lobe, so ..."): such a part asks for nothing, even when it names console things.
_ASIDE_OPENERS = (("which",), ("this", "is"), ("it", "is", "rather"), ("it", "is", "in"),
                  ("it", "is", "getting"), ("it", "is", "blocking"), ("these",), ("those",), ("that", "is", "where"),
                  ("that", "is", "why"), ("that", "is", "how"), ("it", "is", "where"),
                  ("because",), ("since",), ("as", "you", "can", "see"), ("i", "am", "wondering"),
                  ("i", "wonder"), ("so", "the"), ("the", "first", "thing"),
                  # "we're done, close everything": the reason given before the request
                  ("we", "are", "done"), ("we", "are", "finished"), ("i", "am", "done"),
                  ("all", "done"))
_REQUEST_VERBS = SHOW_VERBS - {"see", "view", "look", "visible", "remind", "where", "what", "which",
                                 "is", "are", "how", "whats"} | HIDE_VERBS | \
    RESET_VERBS | ROTATE_VERBS | MOVE_VERBS - {"come", "head", "go"} | {"zoom", "add", "enlarge"}


def _comma_parts(tokens: list[str]) -> list[list[str]]:
    """The parts of a command between commas; a part of fillers alone separates nothing
    ("uh, the nodules, um, add those")."""
    parts: list[list[str]] = [[]]
    for t in tokens:
        if t == ",":
            parts.append([])
        else:
            parts[-1].append(t)
    return [p for p in parts if any(t not in FILLER for t in p)] or parts


def _drop_asides(tokens: list[str]) -> tuple[list[str], bool]:
    """Drop explanation parts next to a request; (tokens, whether any part was dropped)."""
    if "," not in tokens:
        return tokens, False
    parts = _comma_parts(tokens)
    def aside(part: list[str]) -> bool:
        core = [t for t in part if t not in ("and", "so", "now", "hmm", "okay", "ok", "well")]
        return any(tuple(core[:len(o)]) == o for o in _ASIDE_OPENERS) and \
            not set(core[len(core) and 1:]) & _REQUEST_VERBS
    kept = [p for p in parts if p and not aside(p)]
    if len(kept) == len([p for p in parts if p]) or not kept or not any(
            _has_head(p) or set(p) & set(DIRECTIONS) or has_domain_content(" ".join(p))
            for p in kept):
        return tokens, False
    out: list[str] = []
    for p in kept:
        out.extend([",", *p] if out else p)
    return out, True


# "... but leave the model where it is", "..., keep the patient box up": the display named
# after these stays as it is; the words ask for nothing.
_SPARING_VERBS = {"leave", "leaving", "keep", "keeping"}
_JOINERS = {"but", "and", ","}
_SPARING_TAILS = {"where", "as", "it", "is", "they", "are", "up", "on", "alone", "there",
                  "visible", "open", "showing", "displayed", "shown", "in", "place", "untouched",
                  "unchanged", "be", "was", "were", "please"}


def _spared_span(tokens: list[str], k: int) -> int | None:
    """End of the sparing part starting at joiner ``k``, or None when there is none."""
    nxt = tokens[k + 1] if k + 1 < len(tokens) else ""
    if nxt not in _SPARING_VERBS and not (nxt == "not" and tokens[k] in ("but", ",")):
        return None
    end = k + 2
    while end < len(tokens) and tokens[end] not in (",", "then") and not (
            tokens[end] == "and" and _has_head(tokens[end + 1:])):
        end += 1
    return end


def _drop_sparing(tokens: list[str]) -> list[str]:
    """Drop what only says a display stays ("hide the CT but not the patient box", "clear
    the model and leave the patient info up"), and a negated part corrected by an "only"
    part ("not the diagnosis, just the operation name"). An exception inside one display
    ("all fields but not the weight", "the lobes but not the RUL") is no such part: it is
    read by the agent's grammar."""
    if tokens[:1] in (["leave"], ["keep"]) and "," in tokens[:6]:
        # "leave the model, just take off the CT": the part that stays, then the request
        cut = tokens.index(",")
        rest = [t for t in tokens[cut + 1:] if t not in ("just", "only")]
        if _dominant_agent(tokens[1:cut]) is not None and _has_head(rest):
            return _drop_sparing(rest)
    if tokens[:1] in (["not"], ["no"]) and "," in tokens:
        cut = tokens.index(",")
        rest = tokens[cut + 1:]
        if rest[:1] and rest[0] in ONLY_WORDS | {"but"} and not _has_head(tokens[:cut]):
            return rest[1:] if rest[0] == "but" else rest
    for k in range(1, len(tokens) - 1):
        if tokens[k] not in _JOINERS:
            continue
        end = _spared_span(tokens, k)
        if end is None:
            continue
        spared = [t for t in tokens[k + 2:end] if t not in _SPARING_TAILS]
        before = tokens[:k]
        mine, theirs = _dominant_agent(spared), _dominant_agent(before)
        rest_of = spared[-2:] in (["the", "rest"], ["everything", "else"], ["the", "others"])
        if (mine is not None and theirs is not None and mine != theirs or rest_of) and \
                _has_head(before):
            return _drop_sparing(before + tokens[end:])
    return tokens


# Nouns naming a display as a whole: "back to the model" returns to it ("back" is no view).
_RETURN_NOUNS = {"model", "3d", "reconstruction", "anatomy", "ct", "scan", "scans", "images",
                 "patient", "box", "info", "information", "sheet"}


def _drop_return(tokens: list[str]) -> list[str]:
    """"back to the model, zoom in again" / "back on the CT": a switch of display; "back" is
    neither a posterior view nor a zoom out there."""
    if tokens[:3] == ["back", "to", "the"] and "," in tokens[3:7]:
        # "back to the patient box, add the PFT": the header only names where the request
        # goes; a field named after it says it (the header alone would show every field)
        k = tokens.index(",", 3)
        rest = tokens[k + 1:]
        if set(tokens[3:k]) <= {"patient", "box", "info", "information", "sheet", "patient's"} \
                and set(rest) & set(FIELD_WORDS):
            return rest
    out: list[str] = []
    for i, t in enumerate(tokens):
        nxt = tokens[i + 1:i + 4]
        if t == "back" and nxt[:1] in (["to"], ["on"], ["onto"]) and (
                nxt[1:2] == ["the"] and nxt[2:3] and nxt[2] in _RETURN_NOUNS
                or nxt[1:2] and nxt[1] in _RETURN_NOUNS):
            continue
        out.append(t)
    return out


_FRONT_PRONOUNS = ("it", "them", "this", "that", "these", "those")
# What an object said first may be: a display, a structure, a plane, a patient field.
_OBJECT_NOUNS = (IR_STRONG | IV_STRONG | AR_STRONG | set(STRUCT_WORDS) | set(PLANE_WORDS)
                 | {"tumor", "lesion", "mass", "lobe", "lobes"})
_BARE_VERB_GLUE = {"please", "now", "then", "just", "and", "kindly"}


def _front_object(tokens: list[str]) -> list[str]:
    """The object said first, then the verb ("the airway, disable", "the model, show it",
    "the tumour, where is it?"): read as the verb with that object in the pronoun's place.
    Only a bare noun phrase (no verb, no number) followed by a part that is a verb alone or
    a verb with a pronoun is moved; anything else is left as said."""
    if "," not in tokens:
        return tokens
    parts = _comma_parts(tokens)
    for k in range(len(parts) - 1):
        obj, verb = parts[k], parts[k + 1]
        core = [t for t in obj if t not in FILLER and t not in ("the", "a")]
        if not set(core) & _OBJECT_NOUNS or len(obj) > 6 or _has_head(obj) or \
                any(_is_num(t) for t in obj) or \
                any(t in DIRECTIONS for t in core) and not set(core) & {
                    "lobe", "lobes", "lung", "lungs"} or not _has_head(verb):
            continue
        at = next((i for i, t in enumerate(verb) if t in _FRONT_PRONOUNS), None)
        rest = [t for t in verb if t not in _BARE_VERB_GLUE]
        if at is not None and at > 0:
            moved = [*verb[:at], *obj, *verb[at + 1:]]
        elif at is None and len(rest) == 1:
            moved = [*verb, *obj]  # "the airway, disable"
        else:
            continue
        parts = [*parts[:k], moved, *parts[k + 2:]]
        out: list[str] = []
        for i, part in enumerate(parts):
            out += ([","] if i else []) + part
        return out
    return tokens


_MODALS = {"could", "can", "should", "would", "might", "may", "will", "must"}


def _drop_passive_modal(tokens: list[str]) -> list[str]:
    """"the axial could be set to ninety", "the model can be turned": the verb alone."""
    out = list(tokens)
    for k in range(len(out) - 2, 0, -1):
        if out[k - 1] in _MODALS and out[k] == "be" and \
                out[k + 1] in _VERBISH | HIDE_VERBS | RESET_VERBS:
            del out[k - 1:k + 1]
    return out


def _side_over_lobes(tokens: list[str]) -> list[str]:
    """"the right middle and lower lobes": the side said once goes with each lobe listed."""
    out = list(tokens)
    for k in range(len(out) - 4):
        side, a, conj, b, noun = out[k:k + 5]
        if side in ("left", "right") and a in LOBE_POS and conj in ("and", "or", "plus") and \
                b in LOBE_POS and noun in ("lobe", "lobes"):
            return [*out[:k], side, a, "lobe", conj, side, b, "lobe", *out[k + 5:]]
    return out


_ROTATION_NOUNS = {"spin", "rotation", "turn", "swing", "twist", "orbit"}


def _with_rotation(tokens: list[str]) -> list[str]:
    """"anterior view with a vertical spin": the view, and then the rotation (DESIGN §4: a
    view named together with a rotation is two actions in order)."""
    for k, t in enumerate(tokens):
        if t in ("rotate", "spin", "turn", "swing") and k and tokens[k - 1] in ("view", "side") \
                and set(tokens[:k]) & set(AR_VIEW_WORDS):
            return [*tokens[:k], "and", *tokens[k:]]  # "left view rotate up"
        if t == "with" and k and set(tokens[k + 1:k + 4]) & _ROTATION_NOUNS and \
                set(tokens[:k]) & ({"view", "side"} | set(AR_VIEW_WORDS)):
            rest = [x for x in tokens[k + 1:] if x not in ("a", "an", "the")]
            return [*tokens[:k], "and", "rotate", *[x for x in rest if x not in
                                                    _ROTATION_NOUNS]]
    return tokens


_TOO_AFTER = set(FIELD_WORDS) | set(STRUCT_WORDS) | {"ct", "scan", "model", "3d", "chart", "info",
                                                     "information", "box", "lobe", "lung"}


def _closing_too(tokens: list[str]) -> list[str]:
    """"gender to", "the nodules to": a closing "to" after a thing named is "too" (a
    recogniser writes the sound both ways; no command ends in "to")."""
    if len(tokens) > 1 and tokens[-1] == "to" and tokens[-2] in _TOO_AFTER:
        return [*tokens[:-1], "too"]
    return tokens


def _prepare(text: str) -> list[str]:
    """The tokens the grammar reads for a corrected command."""
    return _closing_too(_side_over_lobes(_with_rotation(_drop_passive_modal(_front_object(_drop_discourse(
        _join_adjective_pairs(
            _drop_particles(_hoist_particle(_drop_return(tokens_of(canonical(text))))))))))))


_BARE_DIRECTION = {"left", "right", "up", "down", "anterior", "posterior", "superior",
                   "inferior", "front", "back", "top", "bottom"}


_NESTING = threading.local()

# "the same for X", "do the same with X", "likewise for X", "same goes for X", "ditto X"
_SAME_WORDS = {"same", "likewise", "ditto", "similarly"}
_SAME_LEAD = {"and", "now", "then", "do", "the", "please", ",", "thing", "again", "goes",
              "go", "applies"}
_SAME_PREPS = {"for", "with", "on", "to"}
_SAME_TAIL = {"please", "too", "as", "well", ",", "now", "also"}


def _same_for_object(tokens: list[str]) -> list[str] | None:
    """The object X of "the same for X" (the whole command), else None."""
    k = next((i for i, t in enumerate(tokens) if t in _SAME_WORDS), None)
    if k is None:
        return None
    if any(t not in _SAME_LEAD for t in tokens[:k]):
        # the plane first: "now coronal the same", "axial likewise please"
        head = [t for t in tokens[:k] if t not in _SAME_LEAD and t not in _SAME_TAIL]
        tail = [t for t in tokens[k + 1:] if t not in _SAME_TAIL]
        return head if len(head) == 1 and head[0] in PLANE_WORDS and not tail else None
    j = k + 1
    while j < len(tokens) and tokens[j] in _SAME_LEAD:
        j += 1
    if j < len(tokens) and tokens[j] in _SAME_PREPS:
        j += 1
    elif tokens[k] != "ditto" and not (
            len(tokens) == j + 1 and tokens[j] in PLANE_WORDS):  # "same ax", "same coronal"
        return None
    post = tokens[j:]
    while post and post[0] in ("the", ","):
        post = post[1:]
    while post and post[-1] in _SAME_TAIL:
        post = post[:-1]
    return post or None


# Words around "other side" when it is the whole request ("now from the other side", "look at
# it from the opposite side", "the other side, please").
_OTHER_SIDE_GLUE = {"now", "from", "the", "it", "show", "me", "view", "look", "at", "let", "us",
                    "see", "please", "and", ",", "then", "to", "go", "switch", "flip", "turn",
                    "can", "we", "could", "i", "have", "a", "of", "instead"}


_UNDO_FILL = {"that", "it", "this", "the", "last", "previous", "command", "change", "step",
              "move", "one", "action", "please", "now", ",", "just", "again", "what", "i",
              "did", "said", "you", "can", "could", "would", "we", "go", "ahead", "and",
              "oops", "sorry", "no", "wait"}


def is_undo(tokens: list[str]) -> bool:
    """"undo that", "undo the last command", "scratch that", "take that back", "revert the
    last change": the registry's undo (the state before the last command), not a new plan."""
    words = [t for t in tokens if t != ","]
    while words and words[0] in ("oops", "sorry", "no", "wait", "uh", "um", "please", "okay",
                                 "ok"):
        words = words[1:]
    extra = _UNDO_FILL | FILLER
    if "undo" in words:
        return all(t in extra or t == "undo" for t in words)
    for head in (("scratch", "that"), ("take", "that", "back"), ("revert",)):
        if tuple(words[:len(head)]) == head:
            return all(t in extra for t in words[len(head):])
    return _is_undo_phrase(words)


def _is_undo_phrase(words: list[str]) -> bool:
    """The whole command is one of the language's undo phrases, fillers aside."""
    from app.language import matches
    from app.language import words as word_class

    spans = matches(words, "undo_phrases") + matches(words, "position_back_phrases")
    if len(spans) != 1:
        return False
    a, b = spans[0]
    fill = word_class("command_fillers")
    return all(t in fill or t in (",", ".") for t in words[:a] + words[b:])


_DISPLAY_TOO_FILL = {"and", "the", "as", "well", "too", "also", "please", ",", "thank", "you",
                     "all", "thanks", "now", "that", "her", "his", "its"}
_DISPLAY_NOUN_AGENT = {"ct": "IV", "scan": "IV", "scans": "IV", "ct scan": "IV", "images": "IV",
                  "model": "AR", "3d": "AR", "3d model": "AR", "patient box": "IR",
                  "info box": "IR", "patient info": "IR", "patient information": "IR",
                  "information": "IR", "box": "IR"}
_AGENT_NAMING = {"ct": "IV", "scan": "IV", "scans": "IV", "images": "IV", "viewer": "IV",
                 "cts": "IV", "model": "AR", "3d": "AR", "anatomy": "AR", "patient": "IR",
                 "box": "IR", "info": "IR", "information": "IR"}
_AGENT_REPEAT_FILL = {"on", "the", "last", "move", "moves", "command", "step", "change", "that",
                      "do", "and", "to", "in", "one", "previous", "action", "a", "please",
                      "now", "there", "of", "with", "but"}


def _agent_repeat(tokens: list[str]) -> tuple[str, str | None, str | None] | None:
    """"again on the CT", "repeat the last CT move", "do the axial move again", "and once
    more on the model": (agent, plane or None, count word or None) of a repeat that names
    which display's last command to repeat; None otherwise."""
    core = [t for t in tokens if t != ","]
    if not ({"again", "repeat"} & set(core) or {"once", "more"} <= set(core)):
        return None
    if any(t in _AGENT_NAMING and nxt in ("on", "up", "back", "off")
           for t, nxt in zip(core, core[1:], strict=False)):
        return None  # "CT on again": the display put back, not its last command repeated
    agents = {_AGENT_NAMING[t] for t in core if t in _AGENT_NAMING}
    planes = {PLANE_WORDS[t] for t in core if t in PLANE_WORDS}
    if planes:
        agents.add("IV")
    if len(agents) != 1 or len(planes) > 1:
        return None
    counts = [t for t in core if t in REPEAT_COUNTS and t != "once"]
    allowed = REPEAT_WORDS | set(REPEAT_COUNTS) | _AGENT_REPEAT_FILL | set(_AGENT_NAMING) \
        | set(PLANE_WORDS) | FILLER
    if not all(t in allowed for t in core) or "same" in core or len(counts) > 1:
        return None
    return agents.pop(), (planes.pop() if planes else None), (counts[0] if counts else None)


_ADDITIVE = {"too", "also", "and", "as", "well", "plus"}


def _side_one(tokens: list[str]) -> tuple[str, bool] | None:
    """"and the right one too", "the left one": (side, added?) of a side named with "one"."""
    core = [t for t in tokens if t not in (",", "please", "now", "the")]
    sides = [t for t in core if t in ("left", "right")]
    if len(sides) != 1 or "one" not in core or not set(core) <= {*sides, "one"} | _ADDITIVE:
        return None
    return sides[0], bool(set(core) & _ADDITIVE)


def _readd_pronoun(tokens: list[str]) -> bool:
    """"bring it back", "put that back please": re-adding a pronoun, nothing named."""
    core = [t for t in tokens if t in ("it", "that", "them", "this") or t not in FILLER
            and t not in (",", "can", "you", "could", "please", "now")]
    return len(core) == 2 and core[0] == "readd" and core[1] in ("it", "that", "them", "this")


def _other_side(tokens: list[str]) -> bool:
    """Is the command only "the other side" (the last view or swing, reversed)?"""
    rest = [t for t in tokens if t not in FILLER and t not in _OTHER_SIDE_GLUE]
    return rest in (["other", "side"], ["opposite", "side"])


class GrammarTier:
    """The deterministic grammar (implements ``app.agents.decision.Tier``): clauses, routing
    and decoding, after the context rules it is given (``LexiconTier`` in
    ``app.agents.context_rules`` is this grammar with the console's inventory)."""

    name = "lexicon"

    def __init__(self, accept: float = ACCEPT, extra_fields: Iterable[str] = (),
                 rules: Sequence[ContextRule] = ()) -> None:
        self.accept = accept
        self.extra_fields = tuple(e.lower() for e in extra_fields)
        self.rules = tuple(rules)

    # -- route -----------------------------------------------------------------------------
    def analyse(self, corrected: str, state: ConsoleState, memory: Memory) -> Analysis:
        # Context rules read earlier commands, which may read theirs: bounded depth.
        depth = getattr(_NESTING, "depth", 0)
        _NESTING.depth = depth + 1
        try:
            return self._analyse(corrected, state, memory, nested=depth >= 2)
        finally:
            _NESTING.depth = depth

    def _analyse(self, corrected: str, state: ConsoleState, memory: Memory,
                 nested: bool) -> Analysis:
        # the context rules, in their declared order (app/agents/context_rules.py): each may
        # rewrite the words, resolve a repeat or correction, or settle the reading itself
        r = Reading(corrected, state, memory, nested, _prepare(corrected))
        for rule in self.rules:
            done = rule.apply(self, r)
            if isinstance(done, Analysis):
                done.rules = [*r.fired, rule.name]
                return done
            if done:
                r.fired.append(rule.name)
                r.rewrote = r.rewrote or rule.rewrites
        return self._route_reading(r)

    def _route_reading(self, r: Reading) -> Analysis:
        """The words (as the context rules left them) split into clauses, each routed."""
        tokens, state, memory = r.tokens, r.state, r.memory
        clauses = split_clauses(tokens)
        routed: list[RoutedClause] = []
        for c in clauses:
            intent = clause_intent(c)
            agent, source = self._route(c, intent, routed, state, memory)
            routed.append(RoutedClause(c, agent, intent, source))
        # DESIGN §4: a view named together with a rotation is the model's view, then the
        # rotation ("switch to posterior and rotate down"): a bare direction beside a
        # rotation of the model names the view, not a CT step
        if any(rc.agent == "AR" and rc.intent == "rotate" for rc in routed):
            for rc in routed:
                bare = [t for t in rc.clause.toks if t not in FILLER and t not in (
                    "switch", "change", "to", "the", "view", "side", "from")]
                if rc.agent == "IV" and rc.source == "weak" and len(bare) == 1 and \
                        bare[0] in AR_VIEW_WORDS:
                    rc.agent, rc.source = "AR", "carried"
        # a clause that memory cannot serve may take the agent named by the clause after it
        for i, rc in enumerate(routed):
            nxt = routed[i + 1] if i + 1 < len(routed) else None
            if rc.source in ("state", "guess") and nxt is not None and nxt.agent and \
                    nxt.source == "words" and rc.intent in CAPABLE[nxt.agent]:
                rc.agent, rc.source = nxt.agent, "lookahead"
        rewritten = " ".join(tokens) if r.repeat_of is None and tokens != r.own and \
            r.rewrote else None
        return Analysis(r.corrected, routed, r.repeat_of, r.step_override, r.reverse,
                        _times_of(r.times), r.statement, rewritten=rewritten, small=r.small,
                        rules=list(r.fired))

    def reading_of(self, steps: Sequence[Step], state: ConsoleState,
                   memory: Memory) -> str | None:
        """A phrase this grammar reads as exactly ``steps`` (checked by reading it back), so a
        plan another tier decided can be repeated, reversed or stepped ("a bit more")."""
        phrase = plan_phrase(steps)
        if phrase is None:
            return None
        back = self.decide(phrase, state, memory)
        if back is None or not _same_steps(back.steps, steps):
            return None
        return phrase

    def _named_before(self, state: ConsoleState, memory: Memory) -> list[str] | None:
        """The model structures the previous command named (shown, added, hidden or zoomed
        toward), read against the memory it had, so that its own "it" resolves in turn."""
        named: list[str] = []
        for st in self._last_steps(state, memory):
            if st.action_id == "AR.SHOW":
                named.extend(st.params.get("structures") or [])
            elif st.action_id == "AR.ZOOM_IN" and st.params.get("target"):
                named.extend(_expand([st.params["target"]]))
        return sorted(dict.fromkeys(named)) or None

    def _last_steps(self, state: ConsoleState, memory: Memory) -> list[Step]:
        """The plan of the previous command, read against the memory it had."""
        if not memory.recent:
            return []
        prev = memory.reading_of(memory.recent[-1])
        before = Memory(memory.last_agent, memory.recent[:-1], readings=dict(memory.readings),
                        agents=dict(memory.agents))
        return list(self.decide_from(self.analyse(prev, state, before), state, before).steps)

    @staticmethod
    def context_rewrite(corrected: str, memory: Memory) -> str | None:
        """A follow-up with no console word of its own that the previous command gives one,
        read before the scope check: "and when is it?" right after the operation was asked
        about is its date. None when there is nothing to rewrite."""
        toks = set(tokens_of(corrected))
        if memory.recent and {"when", "it"} <= toks and toks <= {
                "and", "when", "is", "it", "its", "was", "will", "be", "scheduled", "planned",
                "happening", "booked", ",", "please", "so"} and set(
                tokens_of(canonical(memory.recent[-1]))) & OP_WORDS:
            return ("and " if "and" in toks else "") + "when is the operation"
        return None

    def _route(self, c: Clause, intent: str, before: list[RoutedClause], state: ConsoleState,
               memory: Memory) -> tuple[str | None, str]:
        scores = agent_scores(c.words)
        # DESIGN §4: "where the tumour is" is the patient field, whichever display is in use
        # (the nodules in the model are named as such: "the tumour in the model")
        if scores.pop("tumor_q", 0):
            if not set(c.words) & {"tumor", "tumors", "cancer"} and \
                    (memory.last_agent or state.agent) == "AR" and state.ar.visible:
                scores["AR"] += 3  # "where's the nodule?" on the model: the model's nodules
                scores["IR"] = 0
            else:
                scores["AR"] = max(0.0, scores["AR"] - 3)
        # plain directions and numbers hint at the CT
        words = c.words
        weak_iv = sum(1 for i, t in enumerate(words) if t in DIRECTIONS or (
            _is_num(t) and words[i + 1:i + 2] not in (["times"], ["time"])) or (
            t in NAMED_POS and t not in _VAGUE_POS))
        best = max(scores, key=scores.__getitem__)
        if scores[best] > 0:
            ranked = sorted(scores, key=scores.__getitem__, reverse=True)
            for a in ranked:
                if scores[a] > 0 and intent in CAPABLE[a]:
                    if scores[a] == scores[ranked[0]] or a == ranked[0]:
                        # ties: prefer memory, then the clause before
                        tied = [x for x in ranked if scores[x] == scores[a]
                                and intent in CAPABLE[x]]
                        if len(tied) > 1:
                            for pref in (before[-1].agent if before else None,
                                         memory.last_agent):
                                if pref in tied:
                                    return pref, "words"
                        return a, "words"
                    return a, "words"
        last = memory.last_agent or state.agent
        if weak_iv and intent == "rotate":
            return "AR", "words"
        if weak_iv:
            bare = {t for t in c.toks if t not in FILLER}
            bare -= SHOW_VERBS - QUESTION_WORDS
            if last == "AR" and bare and bare <= _BARE_DIRECTION | {
                    "view", "side", "more", "from", "look", "change", "switch", "go", "turn",
                    "face", "facing"} \
                    and not before:
                return "AR", "memory"
            if before and before[-1].agent == "AR" and bare <= _BARE_DIRECTION | {
                    "view", "side"}:
                return "AR", "carried"
            if before and before[-1].agent in ("IV",):
                return "IV", "carried"
            return "IV", "weak"
        if before and before[-1].agent and intent in CAPABLE[before[-1].agent]:
            return before[-1].agent, "carried"
        if last and intent in CAPABLE[last]:
            return last, "memory"
        other = _state_agent(state, intent)
        if other:
            return other, "state"
        for a in ("AR", "IV", "IR"):
            if intent in CAPABLE[a]:
                return a, "guess"
        return None, "guess"

    # -- decide ----------------------------------------------------------------------------
    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        return self.decide_from(self.analyse(corrected, state, memory), state, memory)

    def decide_from(self, analysis: Analysis, state: ConsoleState, memory: Memory
                    ) -> Decision:
        ctx = _Ctx(state, memory)
        first = analysis.clauses[0] if analysis.clauses else None
        if first is not None and first.agent == "AR" and first.clause.has(*_PRONOUNS) and \
                first.intent in ("show", "hide", "zoom_in") and not analysis.repeat_of:
            ctx.prior_named = self._named_before(state, memory)
        steps: list[Step] = []
        leftovers: list[str] = []
        sources: list[str] = []
        guessed = False
        vague = _vague_ir_leads(analysis.clauses) | _ct_question_leads(analysis.clauses)
        for k, rc in enumerate(analysis.clauses):
            c, agent, intent = rc.clause, rc.agent, rc.intent
            sources.append(rc.source)
            if agent is None:
                leftovers.extend(c.leftover())
                continue
            if k in vague:
                continue  # "who are we operating on, what is her age": the named fields win
            if agent == "IR" and _names_the_operation(analysis.clauses[:k], c):
                # "when is the operation and what is it called": "it" is the operation
                c = Clause([*c.toks, "operation"], c.sep, list(c.inherited))
            if agent == "IV":
                part = decide_iv(c, ctx, intent)
            elif agent == "AR":
                part = decide_ar(c, ctx, intent)
            else:
                part = decide_ir(c, ctx, intent)
            left = c.leftover()
            # a clause with no verb read as "show" while words went unread: the verb was
            # probably one of those words ("do the fnord with the model")
            implicit_show = intent == "show" and not set(c.words) & SHOW_VERBS
            guessed = guessed or c.guess or (implicit_show and
                                                                       bool(left))
            ctx.agent = agent
            steps.extend(part)
            leftovers.extend(left)
        steps = merge_steps(steps)
        if analysis.step_override is not None:
            steps = _with_step(steps, analysis.step_override)
            if not steps:
                leftovers.append(str(analysis.step_override))
        if analysis.small and analysis.step_override is None:
            steps = _with_step(steps, IV_DEFAULT_STEP) or steps
        if analysis.times > 1:
            steps = _times_over(steps, analysis.times)
        if analysis.replaces:
            # the corrected command already moved the CT: only the difference is left to do
            before = self.decide(analysis.replaces, state, memory)
            steps = _made_up(steps, before.steps if before else [])
        if analysis.reverse:
            steps = _reversed(steps)
            if not steps:
                leftovers.append("opposite")
        conf = self._confidence(steps, leftovers, sources, guessed)
        if analysis.statement:
            # A remark about the case, not a request: the grammar does not act on it alone.
            conf = min(conf, _UNFAMILIAR_CONF)
            ctx.notes.append("reads as a statement, not a request")
        if not has_domain_content(analysis.text, VOCABULARY) and not has_domain_content(
                canonical(analysis.text), VOCABULARY) and (leftovers or any(
                rc.intent not in ("hide", "zoom_in", "zoom_out", "rotate", "reset")
                for rc in analysis.clauses)):
            # No word of the console at all ("give it a twirl", let through by the validator
            # as command-shaped): unless a phrasal verb fully read says what to do ("take it
            # away"), whatever the grammar made of it is a guess for the later tiers.
            conf = min(conf, _UNFAMILIAR_CONF)
        agent = steps[0].action_id.split(".")[0] if steps else (
            analysis.agent or memory.last_agent)
        how = "; ".join(f"{rc.agent or '?'}<-{rc.source}" for rc in analysis.clauses)
        reason = f"lexicon: {len(analysis.clauses)} part(s) [{how}]"
        if leftovers:
            reason += f"; words not understood: {', '.join(leftovers)}"
        if analysis.repeat_of:
            reason += f"; repeats '{analysis.repeat_of}'"
        if ctx.notes:
            reason += "; " + "; ".join(ctx.notes)
        return Decision(valid=True, steps=steps, agent=agent, confidence=conf,
                        tier=self.name, reason=reason,
                        diagnostics={"leftover": leftovers, "routing": sources,
                                     "repeat_of": analysis.repeat_of,
                                     "rewritten": analysis.rewritten,
                                     **({"context_rules": analysis.rules}
                                        if analysis.rules else {}),
                                     **({"refers_back": True} if ctx.referred_back else {})})

    @staticmethod
    def _confidence(steps: list[Step], leftovers: list[str], sources: list[str],
                    guessed: bool) -> float:
        if not steps:
            return 0.1
        conf = 0.97
        conf -= 0.17 * len(leftovers)
        if any(s in ("state", "guess") for s in sources):
            conf -= 0.2
        if leftovers and any(s in ("memory", "state", "guess", "carried", "weak")
                             for s in sources):
            conf -= 0.3  # no word named the agent and some words were not understood
        if guessed:
            conf -= 0.12
        return round(max(0.05, min(conf, 0.99)), 3)


_OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}
_OPPOSITE_VIEW = {"left": "right", "right": "left", "anterior": "posterior",
                  "posterior": "anterior", "superior": "inferior", "inferior": "superior"}


def _reversed(steps: list[Step]) -> list[Step]:
    """The repeated swing or relative move the other way; [] when it has no opposite."""
    if len(steps) != 1:
        return []
    s = steps[0]
    if s.action_id == "AR.SHOW" and set(s.params) == {"view"} and \
            s.params["view"] in _OPPOSITE_VIEW:
        return [Step("AR.SHOW", {"view": _OPPOSITE_VIEW[s.params["view"]]})]
    if s.action_id == "AR.ROTATE" and s.params.get("direction") in _OPPOSITE:
        return [Step("AR.ROTATE", {"direction": _OPPOSITE[s.params["direction"]]})]
    if s.action_id == "IV.SHOW_MOVE" and s.params and all(
            isinstance(v, str) and v[:1] in "+-" for v in s.params.values()):
        return [Step("IV.SHOW_MOVE", {p: _rel(-int(v)) for p, v in s.params.items()})]
    return []


def _move_kinds(steps: Sequence[Step]) -> list[list[bool]]:
    """Per CT move, which of its values are relative steps (the rest are slice targets)."""
    return [sorted(isinstance(v, str) and v[:1] in "+-" for k, v in st.params.items()
                   if k in ("axial", "coronal", "sagittal"))
            for st in steps if st.action_id == "IV.SHOW_MOVE"]


def _made_up(steps: list[Step], before: list[Step]) -> list[Step]:
    """A corrected relative CT move minus the move already made ("up 20" then "sorry, 30":
    10 more)."""
    done: dict[str, int] = {}
    for st in before:
        if st.action_id == "IV.SHOW_MOVE":
            for k, v in st.params.items():
                if isinstance(v, str) and v[:1] in "+-":
                    done[k] = done.get(k, 0) + int(v)
    if not done:
        return steps
    out = []
    for st in steps:
        if st.action_id == "IV.SHOW_MOVE":
            st = Step(st.action_id, {k: _rel(int(v) - done[k]) if k in done and isinstance(
                v, str) and v[:1] in "+-" else v for k, v in st.params.items()})
        out.append(st)
    return out


def _times_of(word: str | None) -> int:
    """2 for "twice", 3 for "3x"; 1 for no count word."""
    if word is None:
        return 1
    m = _TIMES_RE.match(word)
    return int(m.group(1) or m.group(2)) if m else REPEAT_COUNTS.get(word, 1)


def _times_over(steps: list[Step], times: int) -> list[Step]:
    """The plan done ``times`` times: relative CT moves scaled, a model zoom repeated;
    absolute targets and idempotent actions are the same however often they are done."""
    out: list[Step] = []
    for st in steps:
        if st.action_id == "IV.SHOW_MOVE":
            out.append(Step(st.action_id, {
                p: _rel(times * int(v)) if isinstance(v, str) and v[:1] in "+-" else v
                for p, v in st.params.items()}))
        elif st.action_id in ("AR.ZOOM_IN", "AR.ZOOM_OUT"):
            out.extend([st] * times)
        else:
            out.append(st)
    return out


def _with_step(steps: list[Step], step: int) -> list[Step]:
    """The repeated relative CT move, with a new step size ("20 more")."""
    if len(steps) != 1 or steps[0].action_id != "IV.SHOW_MOVE":
        return []
    rel = {p: v for p, v in steps[0].params.items() if isinstance(v, str) and v[:1] in "+-"}
    if len(rel) != 1:
        return []
    (plane, v), = rel.items()
    sign = -1 if v.startswith("-") else 1
    return [Step("IV.SHOW_MOVE", {plane: _rel(sign * step)})]


# Actions whose repetition changes nothing: a repeated one in a command is said twice, not
# meant twice ("the coronal view please, large").
_IDEMPOTENT = {"IV.ZOOM_IN_MOVE", "IV.ZOOM_OUT", "IV.REMOVE", "IV.RESET", "IR.HIDE", "IR.RESET",
               "AR.REMOVE", "AR.RESET", "AR.ROTATE"}


def merge_steps(steps: list[Step]) -> list[Step]:
    """Adjacent IR.SHOW / AR.SHOW steps of one command become one step (a spoken list)."""
    out: list[Step] = []
    for s in steps:
        if out and s.action_id in _IDEMPOTENT and s.action_id == out[-1].action_id and \
                dict(s.params) == dict(out[-1].params) and not any(
                    isinstance(v, str) and v[:1] in "+-" for v in s.params.values()):
            continue
        if out and s.action_id == out[-1].action_id and s.action_id in ("IR.SHOW", "AR.SHOW"):
            merged = _merge_show(out[-1], s)
            if merged is not None:
                out[-1] = merged
                continue
        out.append(s)
    return out


def _merge_show(a: Step, b: Step) -> Step | None:
    pa, pb = dict(a.params), dict(b.params)
    key = "fields" if a.action_id == "IR.SHOW" else "structures"
    if not pa and key == "fields" and pb.get("fields"):
        # "all the patient fields and the operation date as well" / "... but not the weight"
        everything = set(IR_ALL_FIELDS)
        fields = everything - set(pb["fields"]) if pb.get("op") == "remove" else \
            everything | set(pb["fields"])
        return replace(b, params={"fields": sorted(fields)})
    if not pa:
        return b  # "show the model and go to the surgical view"
    if not pb:
        return a
    if pa.get("op", "set") != pb.get("op", "set") and key in pa and key in pb:
        return None
    if "view" in pa and "view" in pb:
        return None
    out = {**pa, **pb}
    if key in pa and key in pb:
        out[key] = sorted(dict.fromkeys([*pa[key], *pb[key]]))
    return replace(b, params=out)


__all__ = [
    "ACCEPT", "VOCABULARY", "Analysis", "canonical", "Clause", "GrammarTier", "Reading",
    "agent_scores", "ar_structures",
    "clause_intent", "ir_fields", "iv_moves", "merge_steps", "split_clauses",
]


# ------------------------------------------------------------------ plans back to words
def _spoken(key: str) -> str:
    return "nodules" if key == "lung_nodules" else key.replace("_", " ")


def _slice_words(plane: str, value: Any) -> str:
    v = str(value)
    if v in ("middle", "max", "min"):
        return f"{plane} to the {'middle' if v == 'middle' else v + 'imum'}"
    if v[:1] in "+-":
        return f"{plane} {'plus' if v[0] == '+' else 'minus'} {v[1:]}"
    return f"{plane} slice {v}"


def _step_phrase(step: Step) -> str | None:
    agent, action = step.action_id.split(".", 1)
    p = dict(step.params)
    op = p.get("op", "set")
    if agent == "IR":
        if action == "SHOW":
            fields = " and ".join(_spoken(f) for f in p.get("fields") or ())
            if not fields:
                return "show all the patient information"
            return {"set": f"show only the patient {fields}", "add": f"add the patient {fields}",
                    "remove": f"remove the patient {fields}"}.get(op)
        return {"HIDE": "hide the patient information",
                "RESET": "reset the patient information"}.get(action)
    if agent == "IV":
        moves = [_slice_words(pl, p[pl]) for pl in ("axial", "coronal", "sagittal") if pl in p]
        if p.get("window"):
            moves.append(f"{_spoken(str(p['window']))} window")
        if action == "SHOW_MOVE":
            return ", ".join(moves) if moves else "show the ct"
        if action == "ZOOM_IN_MOVE":
            head = f"zoom in on the {p['plane']} ct view" if p.get("plane") else "zoom in the ct"
            return ", ".join([head, *moves])
        return {"ZOOM_OUT": "zoom out the ct", "REMOVE": "remove the ct",
                "RESET": "reset the ct"}.get(action)
    if action == "SHOW":
        parts = []
        names = " and ".join(_spoken(x) for x in p.get("structures") or ())
        if names:
            parts.append({"set": f"show only the {names} on the model",
                          "add": f"add the {names} to the model",
                          "remove": f"remove the {names} from the model"}.get(op, ""))
        if p.get("view"):
            parts.append(f"{_spoken(str(p['view']))} view of the model")
        return ", ".join(x for x in parts if x) or "show the 3d model"
    if action == "ROTATE":
        d = p.get("direction")
        return "stop rotating the model" if d == "static" else f"rotate the model {d}"
    if action == "ZOOM_IN":
        t = p.get("target")
        return f"zoom in on the {_spoken(str(t))} on the model" if t else "zoom in the model"
    return {"ZOOM_OUT": "zoom out the model", "REMOVE": "remove the model",
            "RESET": "reset the model"}.get(action)


def plan_phrase(steps: Sequence[Step]) -> str | None:
    """Words for a plan (one clause per step), or None when a step has none."""
    parts = [_step_phrase(st) for st in steps]
    if not parts or any(x is None for x in parts):
        return None
    return " and then ".join(x for x in parts if x)


def _same_steps(a: Sequence[Step], b: Sequence[Step]) -> bool:
    def norm(st: Step) -> tuple[str, str]:
        params = dict(st.params)
        if st.action_id == "IR.SHOW" and params.get("fields"):
            # age and sex are one display item (DESIGN §4)
            params["fields"] = sorted({"age" if f == "sex" else f for f in params["fields"]})
        return st.action_id, repr(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v)
                                         for k, v in params.items()))
    return [norm(x) for x in a] == [norm(x) for x in b]
