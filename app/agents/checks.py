"""Checks every tier's decision must pass (DESIGN §3), and the structure-edit reading (§4).

``contradiction`` is the polarity rule: a plan that shows what the user said to take away (or
takes away what they said to show), or zooms the other way, is not a reading of those words,
whichever tier produced it. ``as_structure_edit`` is the §4 meaning of naming structures: they
are added to those shown unless the words make them a selection of their own ("only X",
"everything but X"). The word classes live in ``app/language/data/words.toml``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from app.agents.decision import Decision
from app.core.registry import Step
from app.core.vocab import IR_ALL_FIELDS
from app.language import has_any, matches, which_of, words
from app.language.scope import other_talk_why, other_talk_word
from app.language.vocabulary import ONLY_WORDS


def _only_then_without(tokens: Sequence[str]) -> bool:
    """"only the right lung, without the airway": the exclusion narrows the selection."""
    only = [k for k, t in enumerate(tokens) if t in ONLY_WORDS]
    return bool(only) and "without" in tokens[only[0]:]


def contradiction(steps: Sequence[Step], tokens: Sequence[str]) -> str | None:
    """Why the plan contradicts an explicit opposite in the words, or None."""
    said = which_of(tokens, ("polarity_show", "polarity_hide"))
    show, hide = "polarity_show" in said, "polarity_hide" in said
    kinds_of = {_polarity_of(s) for s in steps} - {None}
    if kinds_of == {"show", "hide"}:
        show = hide = False  # "enough of the model, show me the CT": each part its own words
    zoom = which_of(tokens, ("zoom_in_markers", "zoom_out_markers"))
    zin, zout = "zoom_in_markers" in zoom, "zoom_out_markers" in zoom
    kinds = {s.action_id.split(".", 1)[1] for s in steps}
    if kinds & {"ZOOM_IN", "ZOOM_IN_MOVE"} and "ZOOM_OUT" in kinds:
        if zin != zout and not set(tokens) & _REPEAT_SAID:
            # "zoom out one more": a plan that zooms both ways is not its reading ("again, and
            # then zoom out" repeats the last zoom in first)
            return f"the words zoom {'in' if zin else 'out'} only; the reading zooms both ways"
        zin = zout = False  # a composite that zooms both ways: each part has its own words
    why = _against_directions(steps, tokens) or _negated_verb(steps, tokens)
    if why is not None:
        return why
    for s in steps:
        agent, action = s.action_id.split(".", 1)
        op = s.params.get("op")
        selection = op in (None, "set") and (has_any(tokens, "structure_only")
                                             or has_any(tokens, "structure_whole_set"))
        if selection and s.action_id == "AR.SHOW" and has_any(tokens, "structure_only") \
                and hide and not show and "structures" in s.params and \
                not _only_then_without(tokens):
            return "the words ask to hide only those structures; the reading shows them alone"
        if s.action_id == "AR.SHOW" and "structures" in s.params and not selection:
            if op == "remove" and show and not hide:
                return "the words ask to show structures; the reading removes them"
            if op != "remove" and hide and not show:
                return "the words ask to take structures away; the reading shows them"
        if s.action_id == "IR.SHOW" and op != "remove" and hide and not show:
            return "the words ask to hide patient information; the reading shows it"
        if s.action_id == "IR.SHOW" and op == "remove" and show and not hide:
            return "the words ask to show patient information; the reading hides it"
        if s.action_id in ("AR.SHOW", "IR.SHOW", "IV.SHOW_MOVE") and not s.params and hide \
                and not show:
            return "the words ask to take a display away; the reading shows it"
        if action in ("HIDE", "REMOVE") and show and not hide and agent != "IV":
            return "the words ask to show; the reading hides"
        if action in ("ZOOM_IN", "ZOOM_IN_MOVE") and zout and not zin:
            return "the words say zoom out; the reading zooms in"
        if action == "ZOOM_OUT" and zin and not zout:
            return "the words say zoom in; the reading zooms out"
    return None


_VERB_KINDS = {"rotate": "turn", "spin": "turn", "turn": "turn", "swing": "turn", "tilt": "turn",
               "zoom": "zoom", "enlarge": "zoom", "magnify": "zoom", "move": "move",
               "scroll": "move", "go": "move", "show": "show", "display": "show", "open": "show",
               "bring": "show", "add": "show"}
_NEGATORS = {"not", "never", "dont"}


def _step_kinds(step: Step) -> set[str]:
    action = step.action_id.split(".", 1)[1]
    kinds = {_polarity_of(step) or ""}
    if action == "ROTATE":
        kinds.add("turn")
    if action.startswith("ZOOM"):
        kinds.add("zoom")
    if step.action_id == "IV.SHOW_MOVE" and step.params:
        kinds.add("move")
    return kinds - {""}


def _negated_verb(steps: Sequence[Step], tokens: Sequence[str]) -> str | None:
    """"don't hide it", "do not spin the model": a verb said with "not" before it and not
    said again without it; a plan doing that is the opposite of the words."""
    hide_words = words("polarity_hide")
    negated, plain = set(), set()
    for k, t in enumerate(tokens):
        kind = "hide" if t in hide_words else _VERB_KINDS.get(t)
        if kind is None:
            continue
        before = [x for x in tokens[max(0, k - 3):k] if x not in ("please", "just", "you", "ever")]
        (negated if before[-1:] and before[-1] in _NEGATORS else plain).add(kind)
    negated -= plain
    done = set().union(*(_step_kinds(s) for s in steps)) if steps else set()
    hit = negated & done
    return f"the words say not to {sorted(hit)[0]}; the reading does" if hit else None


def _polarity_of(step: Step) -> str | None:
    """Whether a step shows ("show") or takes away ("hide") something, or neither."""
    action = step.action_id.split(".", 1)[1]
    if action in ("HIDE", "REMOVE") or step.params.get("op") == "remove":
        return "hide"
    if action in ("SHOW", "SHOW_MOVE"):
        return "show"
    return None


def _relative(v: object) -> int | None:
    if hasattr(v, "kind") and hasattr(v, "value"):  # a parsed SliceValue
        return int(v.value) if v.kind == "rel" else None
    t = str(v)
    return int(t) if t[:1] in "+-" and t[1:].isdigit() else None


def _against_directions(steps: Sequence[Step], tokens: Sequence[str]) -> str | None:
    """A CT step the direction words contradict: with no plane named, "down ten" moves the
    axial down (DESIGN §4 direction convention), never the coronal, never up."""
    from app.language.vocabulary import DIRECTIONS, PLANE_WORDS

    if any(t in PLANE_WORDS for t in tokens):
        return None  # the plane is named: the grammar pairs words and planes
    dirs = {**DIRECTIONS, "ant": ("coronal", 1), "post": ("coronal", -1), "sup": ("axial", 1),
            "inf": ("axial", -1)}  # the shorthand a surgeon says ("ant 40")
    toks = list(tokens)
    names = {"lobe", "lobes", "lung", "lungs", "side"}
    said = {dirs[t] for i, t in enumerate(toks) if t in dirs
            and not names & set(toks[i + 1:i + 3])}  # "left lower lobe" is no direction
    if not said:
        return None
    for s in steps:
        if not s.action_id.startswith("IV."):
            continue
        for plane, v in dict(s.params).items():
            step = _relative(v) if plane in ("axial", "coronal", "sagittal") else None
            if not step:
                continue
            signs = {sign for p, sign in said if p == plane}
            if not signs:
                return f"it moves the {plane}; the direction words name another plane"
            if (1 if step > 0 else -1) not in signs:
                return f"it moves the {plane} against the direction said"
    return None


def as_structure_edit(steps: Sequence[Step], tokens: Sequence[str]) -> list[Step]:
    """AR.SHOW steps that name structures with no operation become additions, unless the
    words make the named set a selection of its own ("only the RUL", "everything but the
    airway"): DESIGN §4 structure edits."""
    explicit_add = has_any(tokens, "add_markers")  # "just add the LLL too" still adds
    if explicit_add and has_any(tokens, "structure_only_over_too") and \
            not has_any(tokens, "add_verbs"):
        explicit_add = False  # "the RUL only, nodules too": the two are the selection
    if not explicit_add and (has_any(tokens, "structure_only")
                             or has_any(tokens, "structure_whole_set")):
        return list(steps)
    out: list[Step] = []
    for s in steps:
        if s.action_id == "AR.SHOW" and s.params.get("structures") and \
                s.params.get("op", "set") == "set":
            s = replace(s, params={**dict(s.params), "op": "add"})
        out.append(s)
    return out


_ZOOM_WORDS = {"zoom", "zoomed", "zooming", "enlarge", "magnify", "bigger", "larger", "closer",
               "smaller", "shrink", "unzoom", "wider", "widen", "blow", "big", "large",
               "maximise", "maximize", "minimise", "minimize", "focus", "fill", "full", "expand",
               "close", "nearer", "farther", "further", "out", "in", "into"}
# Movement words an exemplar match may read as a rotation ("give it a wiggle").
_ROTATION_EXTRA = {"wiggle", "wobble", "jiggle", "shake", "twirl", "spin", "round", "around",
                   "revolve", "circle", "flip", "tumble"}
_RESET_WORDS = {"reset", "initialize", "initialise", "reinitialize", "restore", "restart",
                "default", "defaults", "original", "start", "fresh", "init"}
_REPEAT_SAID = {"again", "repeat", "same", "once", "twice"}
_OTHER_VIEW_WORDS = {"other", "opposite", "flip", "reverse", "mirror", "turn", "round", "around"}
_VIEW_NOUNS = {"view", "views", "side", "angle", "perspective", "vantage", "aspect", "from",
               "look", "looking"}
_IR_NOUNS = {"patient", "patients", "info", "information", "details", "data", "chart",
             "clinical", "record", "records", "box", "function", "index", "location", "site",
             "disease", "diseases", "history", "surgery", "operation", "procedure", "op",
             "date", "name", "called", "conditions", "fields", "everything", "all", "stats",
             "vitals", "summary", "demographics", "physical", "body", "lobe", "tumor",
             "tumour", "measurements", "breathing", "lung", "pulmonary"}
_AMOUNT_WORDS = {"bit", "little", "touch", "slightly", "step", "more", "further", "once",
                 "twice", "thrice"}
# Words that name structures (or point at ones named before) for a structure edit.
_STRUCTURE_POINTERS = {"them", "those", "these", "both", "all", "everything", "every", "lung",
                       "lungs", "lobe", "lobes", "structures", "structure", "lobar"}


def _rotation_ungrounded(direction: str, tokens: list[str], verbs: set[str],
                         dirs: dict[str, str], stops: set[str]) -> str | None:
    """A rotation needs a word that turns the model ("turn" in "turn on/off" switches) and,
    unless it is the default full turn, a word for its direction."""
    toks = [t.lower() for t in tokens]
    turning = [i for i, t in enumerate(toks) if t in verbs
               and not ({"on", "off"} & set(toks[i + 1:i + 5]))]
    if direction == "static":
        return None if set(toks) & stops else "a stop nobody asked for"
    if not turning:
        return "a rotation nobody asked for"
    said = {dirs[t] for t in toks if t in dirs}
    if direction == "horizontal" and not said:
        return None  # "rotate it": the default full turn
    if direction not in said:
        return f"a rotation {direction} nobody asked for"
    return None


def ungrounded(steps: Sequence[Step], tokens: Sequence[str]) -> str | None:
    """What a plan from a later tier (exemplar match, LLM) does that no word asked for: a
    rotation, a view, a zoom, a reset, patient fields or a slice number nobody said (DESIGN
    §3: "checks apply to the LLM too"; "a rotation nobody asked for is refused")."""
    from app.language.vocabulary import (
        AR_VIEW_WORDS,
        DIRECTIONS,
        FIELD_WORDS,
        NAMED_POS,
        RESET_VERBS,
        ROTATE_DIRS,
        ROTATE_VERBS,
        SIGN_WORDS,
        STOP_WORDS_ROT,
        STRUCT_WORDS,
        WINDOWS,
    )

    toks = {t.lower() for t in tokens}
    digits = {int(t.lstrip("+-")) for t in toks if t.lstrip("+-").isdigit()}
    agents = {s.action_id.split(".", 1)[0] for s in steps}
    if len(agents) > 1 and not toks & _EVERY_DISPLAY:
        # a plan across displays names each ("hide the patient info, no, the CT" is not
        # "hide all three")
        for agent in sorted(agents):
            if not toks & _DISPLAY_WORDS[agent]:
                return f"the {_DISPLAY_NAMES[agent]}, which nobody named"
    named = {a for a, ws in _DISPLAY_WORDS.items() if toks & ws}
    for agent in sorted(agents):
        if named and agent not in named and not toks & (_EVERY_DISPLAY - {"all"}):
            # "also add all the fields" is the patient box's, not the model's
            return (f"the words name the {', '.join(_DISPLAY_NAMES[a] for a in sorted(named))},"
                    f" not the {_DISPLAY_NAMES[agent]}")
    if not named and not toks & (_EVERY_DISPLAY | _POINTERS) and any(
            s.action_id.split(".", 1)[1] in ("REMOVE", "HIDE") for s in steps):
        other = _not_console_words(tokens)
        if other:
            # "move the nurse's cart out of the way": a display is hidden only when named,
            # pointed at, or said bare ("remove"), not when the words name another thing
            return f"hides a display while the words name something else ({', '.join(other)})"
    for s in steps:
        agent, action = s.action_id.split(".", 1)
        p = dict(s.params)
        if action == "ROTATE":
            why = _rotation_ungrounded(str(p.get("direction", "")), list(tokens),
                                       ROTATE_VERBS | _ROTATION_EXTRA, ROTATE_DIRS,
                                       STOP_WORDS_ROT)
            if why:
                return why
        if "view" in p and not toks & (set(AR_VIEW_WORDS) | _VIEW_NOUNS):
            return "a 3D view nobody named"
        if "view" in p and agent == "AR":
            said = {AR_VIEW_WORDS[t] for t in toks if t in AR_VIEW_WORDS}
            if said and str(p["view"]) not in said and not toks & _OTHER_VIEW_WORDS:
                # "the left upper lobe on ...": "left" names a lobe's side; a view the words
                # name nowhere ("anterior") is the later tier's own
                return f"the {p['view']} view, which nobody named"
        if p.get("window") and not toks & (set(WINDOWS) | {"window", "preset", "windows"}):
            return "a CT window nobody named"
        if action in ("ZOOM_IN", "ZOOM_OUT") and not toks & _ZOOM_WORDS:
            return "a zoom nobody asked for"
        if action == "ZOOM_IN_MOVE" and not toks & (_ZOOM_WORDS | {"main", "one", "only"}):
            return "a zoom nobody asked for"
        if action == "RESET" and not toks & (RESET_VERBS | _RESET_WORDS):
            return "a reset nobody asked for"
        if s.action_id == "AR.SHOW" and p.get("structures") and not toks & (
                set(STRUCT_WORDS) | _STRUCTURE_POINTERS
                | {"rul", "rml", "rll", "lul", "lll"}):
            return "structures nobody named"
        if s.action_id == "IR.SHOW" and p.get("fields") and \
                not toks & (set(FIELD_WORDS) | _IR_NOUNS):
            return "patient fields nobody named"
        if agent == "IV":
            for plane in ("axial", "coronal", "sagittal"):
                v = p.get(plane)
                if v is None:
                    continue
                if hasattr(v, "kind") and hasattr(v, "value"):  # a parsed SliceValue
                    v = v.value if v.kind != "rel" else f"{int(v.value):+d}"
                if isinstance(v, str) and v in ("middle", "max", "min"):
                    if not toks & set(NAMED_POS):
                        return f"a {plane} position nobody named"
                    continue
                n = abs(int(str(v))) if str(v).lstrip("+-").isdigit() else None
                if n is None or n in digits:
                    continue
                # a number nobody said is the default step, or that step per direction word
                # said ("left left" = 20): "again" or "the other way" are the grammar's
                # memory, not a licence for any amount
                said = sum(1 for t in tokens if t in DIRECTIONS or t in SIGN_WORDS)
                stepped = n % 10 == 0 and 10 <= n <= 10 * max(1, said) and (
                    said or toks & _AMOUNT_WORDS)
                if not stepped:
                    return f"a {plane} slice number nobody said ({v})"
    return None


_POINTERS = {"it", "this", "that", "them", "these", "those", "one"}


def _not_console_words(tokens: Sequence[str]) -> list[str]:
    """The words of ``tokens`` that the console's language does not hold."""
    from app.language.command_words import is_unknown_word
    return [t for t in tokens if is_unknown_word(t)]


def _display_words() -> dict[str, set[str]]:
    from app.language.vocabulary import AR_STRONG, IR_STRONG, IV_STRONG
    return {"IR": (set(IR_STRONG) | _IR_NOUNS) - _EVERY_DISPLAY, "IV": set(IV_STRONG) | {"ct", "scan", "scans"},
            "AR": set(AR_STRONG)}


_EVERY_DISPLAY = {"all", "everything", "every", "each", "displays", "overlays", "screens",
                  "both"}
_DISPLAY_WORDS = _display_words()


def displays_named(tokens: Sequence[str]) -> set[str]:
    """The displays ("IR", "IV", "AR") that the words name by one of their own nouns."""
    toks = {t.lower() for t in tokens}
    return {a for a, ws in _DISPLAY_WORDS.items() if toks & ws}
_DISPLAY_NAMES = {"IR": "patient information", "IV": "CT", "AR": "3D model"}

# Verbs that make words a request to the console even amid talk to the room.
_CONSOLE_VERBS = {"show", "display", "hide", "remove", "zoom", "rotate", "spin", "move", "scroll",
                  "enlarge", "reset", "add", "bring", "put", "davinci", "open", "close", "go",
                  "make", "clear", "take"}
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'’]*|[,.;:!?]")


def _domain_words() -> frozenset[str]:
    from app.language.command_words import DOMAIN_WORDS
    return DOMAIN_WORDS


_DOMAIN = _domain_words()
_DISPLAY_NAMES_SAID = {"ct", "scan", "scans", "mpr", "model", "3d", "chart", "box", "info",
                       "information", "reconstruction", "recon", "console", "davinci"}
_ACTION_VERBS = {"show", "hide", "zoom", "rotate", "move", "remove", "display", "reset", "clear",
                 "spin", "turn", "add", "bring", "put"}


# after "…, doctor, ": the words that go on talking to that person ("that's why he can
# tolerate a lobectomy", "you see", "this is the vein"), not a request to the console
_TEACHING_NEXT = {"that", "thats", "this", "these", "those", "it", "its", "you", "we", "he",
                  "she", "they", "there", "see", "look", "remember", "notice"}
_TEACHING_BEFORE = {"look", "see", "you", "your", "notice", "remember"}  # "have a look at …"


def addressed_to_person(raw: str, known: frozenset[str] | set[str] = frozenset()) -> str | None:
    """Why the words are said to a person, not to the console, or None (DESIGN §4: talk
    addressed to people is out of scope even with display or direction words in it): a name
    called out beside a comma ("..., Tom?", "Morag, ..."), or an opener that asks someone
    ("can someone ...", "did you say ..."). A name is a capitalised word no word class of the
    console knows; typed lower-case text has no names to find."""
    toks = _WORD_RE.findall(raw or "")
    low = [t.lower() for t in toks]
    if has_any(low, "asks_a_person"):
        return "it asks a person, not the console"
    if any(not (b and low[b - 1] in words("request_modals")) for b, _ in
           matches(low, "talk_to_people")) and not set(low) & _CONSOLE_VERBS:
        # ("could you pull up the MPR" asks the console: "you pull" after a modal is a request)
        return "it is said to the people in the room"
    if any(low[i] in words("group_address") and (
            toks[i - 1:i] == [","] or toks[i + 1:i + 2] == [","]) for i in range(len(low))) and \
            (not any(t in _DOMAIN for t in low) or _tells_the_group(raw)):
        # ("Okay team, quick recap: right upper lobe adenocarcinoma": the case told to them)
        return "it is said to the people in the room"
    if low and low[0] in words("group_address") and not set(low) & _DISPLAY_NAMES_SAID and \
            not set(low) & _ACTION_VERBS:
        # "everyone look up at the screen, this is the bronchus": the room is taught
        return "it is said to the people in the room"
    not_name = (words("not_a_name") | words("discourse_markers") | words("command_fillers")
                | words("answer_yes") | words("answer_no") | words("correction_no")
                | words("correction_sorry"))
    for i, t in enumerate(low[:-1]):
        # "Doctor Lee, ...", "Sister Mary, ...": a title and a name called out
        if t in words("person_titles") and toks[i + 1][:1].isupper() and \
                toks[i + 1].lower() not in known and (i == 0 or toks[i - 1] == ","):
            return f"it calls on {toks[i]} {toks[i + 1]}, a person"
    for i, t in enumerate(low):
        # "have a look at his FEV1 there, doctor, that's why …": a title called between pauses
        if t in words("person_titles") and i == 1 and toks[2:3] == [","] and low[0] not in (
                words("discourse_markers") | words("answer_yes") | words("command_fillers")):
            return f"it calls on the {t}, a person"  # "Domnule doctor, rotate the lung …"
        if not (i and t in words("person_titles") and toks[i - 1] == ","):
            continue
        nxt = re.split(r"['’]", low[i + 2])[0] if toks[i + 1:i + 2] == [","] and \
            low[i + 2:i + 3] else None
        ends = all(x in ".?!" for x in toks[i + 1:])
        if nxt in _TEACHING_NEXT or ends and set(low[:i]) & _TEACHING_BEFORE:
            return f"it is said to the {toks[i].lower()}, a person"
    for i, t in enumerate(toks):
        if not (t[:1].isupper() and t[1:].islower() and len(t) >= 3 and t.isalpha()):
            continue
        lw = t.lower()
        if lw in not_name or lw in known:
            continue
        before = toks[i - 1] if i else ""
        after = toks[i + 1] if i + 1 < len(toks) else ""
        if (i == 0 and after == ",") or (before == "," and after in ("?", ".", "!", "", ",")):
            # ("Stapler, white load.": the thing asked for is named, not a person)
            return other_talk_why(lw) or f"it calls on {t}, a person"
    return None


def _tells_the_group(raw: str) -> bool:
    """Words that tell the people addressed something ("quick recap", "we're doing", "this
    is"), not a request of the console's."""
    from app.language.normalize import normalize, tokens_of

    return bool(matches(tokens_of(normalize(raw)), "group_statement_leads"))


def unknown_opener(raw: str, known: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The words after a capitalised opener that no word class knows and that is no given
    name ("Hao, again.", "Basi, zoom out."), or None. Such an opener may be a word of the
    speaker's own language as well as a name: the caller acts on the rest only when the rest
    is a confident command of its own."""
    from app.language import given_names

    toks = _WORD_RE.findall(raw or "")
    if len(toks) < 3 or toks[1] != "," or not (toks[0][:1].isupper() and toks[0].isalpha()):
        return None
    low = toks[0].lower()
    if low in known or low in given_names() or low in words("person_titles") or \
            low in words("roles_called") or other_talk_word(low):
        return None  # ("Stapler, white load.": an instrument asked for, not a word of another
        # language)
    cut = (raw or "").find(",")
    rest = (raw or "")[cut + 1:].strip()
    return rest or None


def _opens_with_and(tokens: Sequence[str]) -> bool:
    fill = words("command_fillers") - {"and"}
    for t in tokens:
        if t in fill or t == ",":
            continue
        return t == "and"
    return False


def _adds_from_the_start(tokens: Sequence[str]) -> bool:
    """An add marker said before the first field ("also the BMI", "add the PFT"); one said
    later adds from its own part on ("what's the diagnosis, and also show the spirometry"
    sets the box to the diagnosis, then adds the PFT)."""
    from app.language import matches
    from app.language.vocabulary import FIELD_WORDS

    toks = list(tokens)
    spans = matches(toks, "add_markers")
    if not spans:
        return False
    at = min(a for a, _ in spans)
    first_field = next((i for i, t in enumerate(toks) if t in FIELD_WORDS), len(toks))
    if first_field > at:  # a field of several words before the marker ("tumor location")
        first_field = next((i for i in range(at) if _names_a_field(toks[:i + 1])), first_field)
    # a marker with no field after it ("the medical history, too", "..., add it to the
    # chart") is about everything before it; one after "show X and ..." adds to X only
    # ("show the diagnosis and add the comorbidities" sets the box to both)
    shown_first = any(t in _SHOW_FIRST for t in toks[:first_field])
    return at < first_field or "," not in toks[:at] and not shown_first or \
        not _names_a_field(toks[at:])


def _names_a_field(toks: list[str]) -> bool:
    from app.agents.grammar_clauses import Clause
    from app.agents.grammar_ir import ir_fields

    found = ir_fields(Clause(list(toks)))
    return bool(found) and len(found) < len(IR_ALL_FIELDS)


_SHOW_FIRST = {"show", "display", "open", "give", "bring", "pull", "put"}


_DATE_WORDS = {"date", "dates", "day", "when", "scheduled", "dos", "dated"}


def as_field_edit(steps: Sequence[Step], tokens: Sequence[str]) -> list[Step]:
    """DESIGN §4 IR: "show X" sets the box to X; "also/too/and X" or "add X" adds X, and the
    parts of one composite add up — whichever tier read the fields."""
    adds = _opens_with_and(tokens) or _adds_from_the_start(tokens)
    dated = bool({t.lower() for t in tokens} & _DATE_WORDS)
    out: list[Step] = []
    seen_ir = False
    for s in steps:
        fields = list(s.params.get("fields") or [])
        if s.action_id == "IR.SHOW" and not dated and "operation_date" in fields and \
                len(fields) > 1:
            # "patient details, the lot": every field is every key but the date (DESIGN §4);
            # a later tier that lists the date too added what nobody asked for
            s = replace(s, params={**dict(s.params),
                                   "fields": [f for f in fields if f != "operation_date"]})
        if s.action_id == "IR.SHOW" and s.params.get("op", "set") == "set" and (adds or seen_ir):
            # "also add all the fields": every field on top of what is shown (the date stays)
            fields = s.params.get("fields") or list(IR_ALL_FIELDS)
            s = replace(s, params={**dict(s.params), "fields": fields, "op": "add"})
        if s.action_id == "IR.SHOW":
            seen_ir = True
        out.append(s)
    return out


def as_whole_sheet(decision: Decision, tokens: Sequence[str]) -> Decision:
    """A later tier's reading of a request that names no field ("patient details, the lot"):
    a list of several fields from it is its own pick, and a request naming no field shows
    them all (DESIGN §4 IR)."""
    from app.language.vocabulary import FIELD_WORDS, OP_WORDS

    toks = {t.lower() for t in tokens}
    if not decision.valid or toks & (set(FIELD_WORDS) | OP_WORDS | _DATE_WORDS):
        return decision
    steps = [replace(s, params={**dict(s.params), "fields": list(IR_ALL_FIELDS)})
             if s.action_id == "IR.SHOW" and s.params.get("op") != "remove" and
             len(s.params.get("fields") or ()) >= 3 else s for s in decision.steps]
    return replace(decision, steps=steps) if steps != list(decision.steps) else decision


def checked(decision: Decision, tokens: Sequence[str], unexplained: Sequence[str] = ()
            ) -> Decision:
    """A tier's decision with the §4 structure-edit reading applied and the polarity rule
    checked: a contradicting reading keeps its plan for the trace but loses its confidence,
    so a later tier is asked and, if none does better, the console asks the user.
    ``unexplained``: words the grammar could not place, held against a later tier's reading
    too (its own diagnostics name none)."""
    if not decision.valid or not decision.steps:
        return decision
    steps = as_field_edit(as_structure_edit(decision.steps, tokens), tokens)
    why = contradiction(steps, tokens)
    from app.language.vocabulary import IR_STRONG  # words that name the patient box itself

    said = [*((decision.diagnostics or {}).get("leftover") or []), *unexplained]
    left: list[str] = []
    if said:
        # words that never name a field: openers, particles, fillers and grammar words of the
        # language data ("oya show me the patient information", "please, if you can, open")
        plain = IR_STRONG.union(*(words(c) for c in (
            "add_markers", "polarity_show", "command_fillers", "discourse_markers",
            "lead_openers", "grammar_words", "final_particles", "terms_of_address",
            "particle_tail", "wake_fillers")))
        left = [w for w in dict.fromkeys(said) if w not in plain]
    if why is None and left and any(s.action_id == "IR.SHOW" and not s.params.get("fields")
                                    and s.params.get("op") != "remove" for s in steps):
        # "how auld is the patient": a field word nobody taught the console is not a request
        # for every field (DESIGN §3 coverage; the "synonyms falling back to all")
        why = f"every patient field, though {', '.join(map(str, left))} named something else"
    if why is None:
        return replace(decision, steps=steps) if steps != list(decision.steps) else decision
    diag = {**(decision.diagnostics or {}), "polarity": why}
    return replace(decision, steps=steps, confidence=0.0, diagnostics=diag,
                   reason=f"{decision.reason} (refused: {why})".strip())


__all__ = ["addressed_to_person", "as_field_edit", "as_structure_edit", "checked", "contradiction",
           "displays_named", "ungrounded", "as_whole_sheet", "unknown_opener"]
