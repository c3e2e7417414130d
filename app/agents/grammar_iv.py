"""The grammar's CT viewer decoder: slice moves, named positions, zoom and window from a clause.
"""

from __future__ import annotations

from typing import Any

from app.agents.decision import Memory
from app.agents.display_cues import _WINDOW_SWITCH
from app.agents.grammar_clauses import (
    _NUM_RE,
    _TIMES_RE,
    Clause,
    _Ctx,
    _is_num,
    split_clauses,
)
from app.core.registry import Step
from app.language.command_words import is_unknown_word
from app.language.vocabulary import (
    _APPROXIMATORS,
    _INDEX_NOUNS,
    _NEGATION,
    _STEP_GLUE,
    _VAGUE_POS,
    DIRECTIONS,
    HIDE_VERBS,
    MOVE_VERBS,
    NAMED_POS,
    PLANE_WORDS,
    REPEAT_COUNTS,
    RESET_VERBS,
    SHOW_VERBS,
    SIGN_WORDS,
    WINDOWS,
    ZOOM_IN_WORDS,
    ZOOM_OUT_WORDS,
)

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
    if t == "back" and i > 0 and toks[i - 1] in _IV_DISPLAY_NOUNS and not any(
            w in PLANE_WORDS or _is_num(w) for w in toks) and nxt in ("", ",", "on", "up", "please",
                                                                      "again", "now"):
        return "modifier"  # "the CT back on", "bring the scan back": the display again
    if heads_for:
        return "target"
    return "move"


_IV_DISPLAY_NOUNS = {"ct", "scan", "scans", "images", "mpr", "views", "cts"}


def _last_sign(ctx: _Ctx, plane: str) -> int:
    """The direction a plane last moved in, from the remembered commands (+1 if none)."""
    # (imported here: the token shapes read fields and structures, whose decoders read this)
    from app.agents.token_shapes import _prepare

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


def _direction_of_count(toks: list[str], k: int) -> bool:
    """Is a direction said right after a count of slices, with no other plane named between or
    right after it ("axial, twenty slices, down"; not "axial 20 slices, coronal down" or
    "axial 40 slices, down the coronal")?"""
    for j in range(k, min(k + 3, len(toks))):
        if toks[j] in PLANE_WORDS:
            return False
        if toks[j] in DIRECTIONS:
            return not any(t in PLANE_WORDS for t in toks[j + 1:j + 4])
    return False


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
    named_slice: set[str] = set()  # planes sent to a slice said with "to" / "at" / "slice"
    attached: set[int] = set()  # direction words whose plane was named after them
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
                                                    "middle", "side") and not (
                    nxt == "side" and any(w in PLANE_WORDS for w in toks))):
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
            elif (orphans and isinstance(orphans[-1][1], int) and all(
                    x in ("slices", "slice", "steps", "to", "the", "towards", "toward", ",",
                          "more", "go", "move", "further", "farther")
                    for x in toks[orphans[-1][0] + 1:i]) and not (
                    set(toks[orphans[-1][0] + 1:i]) & {"more", "go", "move", "further",
                                                        "farther"} and
                    toks[orphans[-1][0] - 1:orphans[-1][0]] in (["to"], ["at"], ["slice"])) and
                    not (orphans[-1][0] and toks[orphans[-1][0] - 1] in PLANE_WORDS and
                         set(toks[orphans[-1][0] + 1:i]) & {"more", "go", "move"})):
                _, v = orphans.pop()  # "20 slices up", "40 slices to the right", "30 more go down"
                dir_events.append([dplane, dsign, 1, v, i])
            elif pending and not pending_filled:
                # "move axial up 20": the plane is named, the word gives the sign; the same
                # word said again multiplies the default step ("axial down down" = -20)
                if sign == dsign and i and toks[i - 1] == t:
                    sign_reps += 1
                else:
                    sign, sign_reps = dsign, 1
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
            between = toks[dir_events[-1][4] + 1:i] if dir_events else []
            if (prev == "by" or sign is None and len(pending) == 1 and
                    sum(x in PLANE_WORDS for x in between) == 1) and not s and \
                    dir_events and dir_events[-1][3] is None and all(
                    x in _STEP_GLUE | {"on", "in", "through", "along", "slices", ",", "for"} |
                    set(PLANE_WORDS) for x in between):
                # "scroll down on the axial by 20", "go down on the axial, like, fifteen
                # slices": the step of the direction said before the plane
                dir_events[-1][3] = v
                if prev != "by":
                    dir_events[-1][0] = pending[0]
                    pending_filled = True
                    attached.add(dir_events[-1][4])
                c.use_words({"on", "in", "through", "along"})
            elif pending and not pending_filled and not (
                    sign is None and not absolute_hint and not s and
                    nxt in ("slices", "steps") and _direction_of_count(toks, i + 2)):
                # ("axial, twenty slices, down": a count of slices waits for its direction)
                for p in pending:
                    if isinstance(value, str):
                        rel[p] = rel.get(p, 0) + int(value)
                        moves.pop(p, None)
                    else:
                        moves[p] = value
                        rel.pop(p, None)
                        if prev in ("to", "at") or prev in _INDEX_NOUNS:
                            named_slice.add(p)
                pending_filled = True
            elif dir_events and dir_events[-1][3] is None and all(
                    x in _STEP_GLUE or x in (",", "and") for x in between) and (
                    "and" not in between or set(between) & _APPROXIMATORS):
                dir_events[-1][3] = v  # "left 20", "up by 15", "forward, say, 40"
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
            not orphans and not attached and \
            len({e[0] for e in dir_events}) == 1 and dir_events[0][0] != pending[0]:
        for e in dir_events:
            e[0] = pending[0]
        pending_filled = True
    # "coronal back twenny", "axial plus ate": a word the console does not know where the
    # amount goes makes the default step a guess (the sound-alike readings may say the number)
    defaulted = bool(pending and not pending_filled and sign is not None) or any(
        e[3] is None for e in dir_events)
    if defaulted and not orphans and any(
            (toks[k] in DIRECTIONS or toks[k] in SIGN_WORDS or toks[k] == "by") and k + 1 < n
            and is_unknown_word(toks[k + 1])
            for k in range(n)):
        c.guess = True
    # planes named with a sign but no number: one default step ("move axial up")
    if pending and not pending_filled and sign is not None:
        for p in pending:
            rel[p] = rel.get(p, 0) + sign * 10 * count * sign_reps
        pending_filled = True
    # "a little lower on the axial, maybe thirty slices down": the amount said refines the
    # vague step that way; it is not added to it
    counted = {(e[0], e[1]) for e in dir_events if e[3] is not None}
    dir_events = [e for e in dir_events if e[3] is not None or (e[0], e[1]) not in counted]
    for dplane, dsign, k, step, _ in dir_events:
        if step is None and dplane in named_slice and dplane not in rel:
            continue  # "go down on the axial to 15": the slice said is where it goes
        amount = step if step is not None else 10 * k * count
        rel[dplane] = rel.get(dplane, 0) + dsign * amount
    left = [p for p in pending if p not in rel and p not in moves]
    if left and not pending_filled and sign is None and not orphans and \
            len(rel) + len(moves) == 1 and set(toks) & {"too", "also", "same", "well"}:
        # "axial down 15 and the coronal too": the plane named last takes the same move
        for p in left:
            if rel:
                rel[p] = next(iter(rel.values()))
            else:
                moves[p] = next(iter(moves.values()))
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
    elif len(named) == 1:
        ctx.iv_plane = named[0]  # "show me the coronal on the CT, big": the plane said
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
