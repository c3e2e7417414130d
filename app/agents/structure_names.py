"""The 3D model's structures named in a clause: lobes by side and position ("the right upper
and lower lobes", "the lobe inferior left"), lungs, groups, the nodules and the airway.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.agents.grammar_clauses import Clause
from app.core.vocab import AR_STRUCTURES, LOBES
from app.language.vocabulary import AR_VIEW_WORDS, LOBE_POS, ROTATE_VERBS, SIDES, STRUCT_WORDS

# "I want the left side in there too": a side added is that lung, not the view from it
_SIDE_ADDED = {"too", "also", "add", "include", "including", "in"}
_VIEW_CUES = {"view", "views", "from", "look", "looking", "perspective", "angle", "rotate",
              "turn", "spin"}


_PLACE_WORDS = {"on", "of", "from", "to", "in", "at", "toward", "towards", "into", "onto"}


def _side_added(toks: list[str], start: int, end: int) -> bool:
    """Is the side phrase toks[start:end] ("the left side") something added? Not when it
    says where ("the nodules on the left side", "the left side of the airway")."""
    if toks[start] not in SIDES:
        return False
    k = start - 1 if start and toks[start - 1] == "the" else start
    if k and toks[k - 1] in _PLACE_WORDS or toks[end:end + 1] == ["of"]:
        return False
    return bool(set(toks) & _SIDE_ADDED) and not set(toks) & _VIEW_CUES


# "the lung left" said last, as a request (not "the lungs left and right", a move or a question)
_AFTER_A_SIDE = {"too", "also", "as", "well", "please", "now", "then", "thanks", "thank", "you"}
_NOT_A_LUNG_EDIT = {"turn", "move", "pan", "shift", "drag", "slide", "push", "is", "which",
                    "what", "or", "where", "whether"}

# ("the other three lobes", "the left three lobes", "the three lobes near the tumour")
_NOT_THE_RIGHT_THREE = {"left", "other", "others", "remaining", "rest", "upper", "lower",
                        "middle", "near", "around", "of", "beside", "next"}


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
        at = j + 2 if toks[j + 1:j + 2] == ["the"] else j + 1
        if side is None and (positions or kind == "lobes") and kind in ("lobe", "lobes") and \
                at < n and \
                toks[j] in ("on", "of", "in") and toks[at] in SIDES:
            # "the lower lobe on the right", "the upper lobes of both lungs": the side after
            side = SIDES[toks[at]]
            took.extend(range(j, at + 1))
            j = at + 1
            if j < n and toks[j] in ("side", "lung", "lungs", "hemithorax", "chest"):
                took.append(j)
                j += 1
        if side is None and positions and kind not in _STRUCT_NOUNS and all(
                toks[x] in AR_VIEW_WORDS for x in took if toks[x] in LOBE_POS):
            # "view inferior, from below": a level word that is also a view, with no side and
            # no lobe noun, names the view, not both lobes at that level
            i += 1
            continue
        if kind == "lobes" and not positions and side is None and toks[i - 1:i] == ["3"] and \
                "right" in toks and not set(toks) & _NOT_THE_RIGHT_THREE:
            side = "right"  # "right lung fully, all three lobes": only the right lung has three
            c.use(i - 1)
        if kind in ("lobe", "lobes") and not positions and side is None:
            # "the lobe inferior left" (the order of French or Spanish): after the noun
            k = j
            while k < n and k < j + 3 and (toks[k] in LOBE_POS or toks[k] in _AFTER_NOUN
                                           or toks[k] in SIDES):
                if toks[k] in SIDES:
                    side = SIDES[toks[k]]
                else:
                    positions.append(LOBE_POS.get(toks[k]) or _AFTER_NOUN[toks[k]])
                took.append(k)
                k += 1
            at = k + 2 if toks[k + 1:k + 2] == ["the"] else k + 1
            if positions and side is None and at < n and toks[k] in ("on", "of", "in") and \
                    toks[at] in SIDES:
                side = SIDES[toks[at]]  # "the lobe inferior of the right (lung)"
                took.extend(range(k, at + 1))
                k = at + 1
                if k < n and toks[k] in ("side", "lung", "lungs", "hemithorax", "chest"):
                    took.append(k)
                    k += 1
            if positions:
                j = k
            else:
                side = None
                took = [x for x in took if x < j]
        if kind == "lung" and side is None and not positions and j < n and \
                toks[j] in SIDES and set(toks[j + 1:]) <= _AFTER_A_SIDE and \
                not set(toks) & (ROTATE_VERBS | _NOT_A_LUNG_EDIT):
            side = SIDES[toks[j]]  # "the lung left" (the order of Spanish or French)
            took.append(j)
            j += 1
        if kind in ("lung", "lungs") and not positions and j < n and \
                STRUCT_WORDS.get(toks[j]) == "lung_nodules":
            c.use(*took)  # "lung nodules", "left lung nodule": the lung only says where they are
            i = j
            continue
        if took and (positions or kind in ("lung", "lungs", "lobe", "lobes") or
                     kind == "side" and side is not None and _side_added(toks, i, j)) and not (
                kind == "side" and not positions and not (side is not None and _side_added(
                    toks, i, j))):
            c.use(*took)
            k = i - 2 if i > 1 and toks[i - 1] == "the" else i - 1
            if k >= 0 and toks[k] in ("whole", "entire", "all", "complete", "both"):
                c.use(k)  # "all the lobes", "the whole left lung"
            if side is None and "middle" in positions and not set(toks[:j]) & {
                    "all", "both", "every", "each"}:
                side = "right"  # "the middle and lower lobes": only the right has a middle
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
            elif kind in ("lobe", "lobes") and (toks[j:j + 1] == ["of"] and any(
                    w in SIDES for w in toks[j + 1:j + 3])):
                pass  # "the lobes of the right lung": the lung named next says which
            elif kind in ("lobe", "lobes") and out and out[-1] in ("left_lung", "right_lung") \
                    and _after_lung(toks, i):
                pass  # "right lung all lobe": the lobes of the lung just named
            else:
                out.append("lungs")
            i = max(j, i + 1)
            continue
        if t == "all" and out and toks[i + 1:i + 3] in (["of", "them"], ["of", "those"],
                                                         ["of", "these"], ["of", "it"]):
            # "the lobes, all of them", "the right lung in, all of it": the ones just named
            c.use(i, i + 1, i + 2)
            i += 3
            continue
        if t in ("everything", "all") and i + 1 < n and toks[i + 1] in (
                "structures", "lobes", "parts", "of"):
            # "all lobes" is the five lobes, like "all the lobes" (DESIGN §4 keeps nodules and
            # airway apart from the lobes); "all structures" / "all of it" is everything
            if not (toks[i + 1] == "lobes" and out and out[-1] in ("left_lung", "right_lung")
                    and _after_lung(toks, i + 1)):  # "right lung, all lobes": that lung's
                out.extend(LOBES if toks[i + 1] == "lobes" else AR_STRUCTURES)
            c.use(i, i + 1)
            i += 2
            continue
        i += 1
    return list(dict.fromkeys(out))


def _after_lung(toks: list[str], i: int) -> bool:
    """Whether the words before ``i`` are a lung named, then at most "all"/"the"/"its"."""
    k = i - 1
    while k >= 0 and toks[k] in ("all", "the", "its", "every", "each", ","):
        k -= 1
    return k >= 0 and toks[k] in ("lung", "lungs")


_AFTER_NOUN = {"inferior": "lower", "superior": "upper"}  # "lobe inferior left"
_STRUCT_NOUNS = {"lobe", "lobes", "lung", "lungs", "lobar"}
