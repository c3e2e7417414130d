"""What the semantic tier reads besides the embedding: the clause text it embeds, the
slots the grammar's readers find in the user's words, and plan comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from app.agents.grammar_ar import decide_ar
from app.agents.grammar_clauses import (
    Clause,
    RoutedClause,
    _Ctx,
    _is_num,
)
from app.agents.grammar_ir import decide_ir
from app.agents.grammar_iv import decide_iv
from app.core.registry import Step
from app.language.vocabulary import (
    _VAGUE_POS,
    AR_VIEW_WORDS,
    HIDE_VERBS,
    NAMED_POS,
    PLANE_WORDS,
    RESET_VERBS,
    ROTATE_VERBS,
    STRUCT_WORDS,
)

# Canonical tokens of the lexicon that are not English: put back into words before embedding.
_DECANON = {"readd": "bring back", "tumorlobe": "tumor lobe", "fullscreen": "full screen",
            "opposite": "the other way"}
_DETERMINERS = {"the", "a", "an", "her", "his", "their", "its", "my", "our", "that", "this",
                "those", "these"}


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


# Domain abbreviations the embedding model never saw in training ("sag max", "show RUL"):
# spelt out from the grammar's own dictionaries before embedding.
_ABBREV: dict[str, str] = {
    **{k: v for k, v in PLANE_WORDS.items() if len(k) <= 4 and k != v},
    **{k: v.replace("_", " ").replace("bronchia", "and bronchi").replace("lung nodules",
                                                                          "nodules")
       for k, v in STRUCT_WORDS.items() if len(k) <= 4 and k not in ("mass", "nods")},
    **{k: v for k, v in AR_VIEW_WORDS.items() if len(k) <= 4 and k != v and k in (
        "ant", "post", "sup", "inf")},
    "dx": "diagnosis", "hx": "history", "pmh": "past medical history", "ht": "height",
    "wt": "weight", "pt": "patient", "lat": "lateral",
}


# Words that say nothing about which action is meant (a repeat is the grammar's business).
_EMBED_DROP = {"again"}


def _embed_text(text: str) -> str:
    words = [w for w in text.split() if w not in _EMBED_DROP] or text.split()
    return " ".join(_ABBREV.get(w, _DECANON.get(w, w)) for w in words)


def _clause_text(c: Clause, first: Clause | None = None) -> str:
    """The words of a clause for embedding. A later part that starts with its object
    ("stick the CT and | the model up") shares the verb of the first part, which the grammar
    carries over only when it knows the verb: carry the first word over too."""
    words = list(c.words)
    if first is not None and not c.inherited and words and words[0] in _DETERMINERS \
            and first.toks and first.toks[0] not in _DETERMINERS:
        words = [first.toks[0], *words]
    return " ".join(words)


def _lexicon_clause(rc: RoutedClause, ctx: _Ctx) -> tuple[list[Step], list[str]]:
    """The grammar's own reading of one routed clause and the words it left unread."""
    c = Clause(list(rc.clause.toks), rc.clause.sep, list(rc.clause.inherited))
    if rc.agent == "IV":
        steps = decide_iv(c, ctx, rc.intent)
    elif rc.agent == "AR":
        steps = decide_ar(c, ctx, rc.intent)
    elif rc.agent == "IR":
        steps = decide_ir(c, ctx, rc.intent)
    else:
        return [], c.leftover()
    left = c.leftover()
    if c.guess:
        left.append("?")
    return steps, left


_SLOT_FIELDS = {"bmi", "pft", "pfts", "fev1", "fvc", "dlco", "diagnosis", "comorbidities",
                "height", "weight", "age", "sex", "gender", "dx", "pmh"}


def _is_slot(tok: str) -> bool:
    """Words that carry a value the plan should use (not verbs, not particles)."""
    return tok in STRUCT_WORDS or tok in PLANE_WORDS or tok in _SLOT_FIELDS or _is_num(tok)


def _named_positions(toks: Sequence[str]) -> list[str]:
    """Named slice positions in the words ("top" → max), as the grammar reads them."""
    out = []
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if t in NAMED_POS and t not in _VAGUE_POS and nxt not in ("lobe", "lobes", "view",
                                                                  "time", "one"):
            out.append(NAMED_POS[t])
    return out


def _verb_agrees(rc: RoutedClause) -> bool:
    """A verb carried over from the clause before ("take away the scans and the model")
    must be one the grammar read as this clause's intent; "off"/"away" are not, so such a
    clause is matched rather than trusted."""
    inherited = set(rc.clause.inherited)
    if not inherited:
        return True
    if inherited & HIDE_VERBS:
        return rc.intent == "hide"
    if inherited & RESET_VERBS:
        return rc.intent == "reset"
    if "zoom" in inherited:
        return rc.intent in ("zoom_in", "zoom_out")
    if inherited & ROTATE_VERBS:
        return rc.intent == "rotate"
    return True


_FIELD_INTENT = {"age": "ir.show.age_sex", "sex": "ir.show.age_sex"}


def _field_intent(fields: Sequence[str]) -> str | None:
    """The exemplar intent of a spoken field list (a single field or the physical group)."""
    fs = set(fields)
    if fs == {"height", "weight", "bmi"}:
        return "ir.show.physical"
    if fs <= {"age", "sex"}:
        return "ir.show.age_sex"
    if len(fs) == 1:
        f = next(iter(fs))
        return _FIELD_INTENT.get(f, f"ir.show.{f}")
    return None


def _norm_params(params: Any) -> tuple:
    out = []
    for k, v in sorted(dict(params).items()):
        if isinstance(v, list | tuple):
            v = tuple(sorted(v))
        out.append((k, v))
    return tuple(out)


def _same_plan(a: Sequence[Step], b: Sequence[Step]) -> bool:
    return [(s.action_id, _norm_params(s.params)) for s in a] == \
        [(s.action_id, _norm_params(s.params)) for s in b]
