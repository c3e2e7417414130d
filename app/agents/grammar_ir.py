"""The grammar's patient information decoder: the fields a clause asks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.agents.grammar_clauses import (
    Clause,
    RoutedClause,
    _Ctx,
    _exception_at,
    _is_num,
)
from app.core.registry import Step
from app.core.vocab import IR_ALL_FIELDS
from app.language.vocabulary import (
    _NEGATION,
    _PFT_NOUNS,
    _PFT_QUALIFIERS,
    FIELD_PHRASES,
    FIELD_WORDS,
    HIDE_VERBS,
    ONLY_WORDS,
    OP_WORDS,
    RESET_VERBS,
    SHOW_VERBS,
    _singular,
)

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


def decide_ir(c: Clause, ctx: _Ctx, intent: str) -> list[Step]:
    c.use_words({"conditions", "diseases", "problems", "illnesses", "condition",
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
