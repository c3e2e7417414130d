"""Request frames: the words that wrap a request without adding to it (DESIGN §3, §4).

A polite or indirect speaker says the command inside a frame — "I wonder if we could move the
coronal forward", "would you be kind enough to take the RLL out", "Dr Okafor wants the axial at
slice forty", "reset the model, she says". The frame's words are data (``words.toml``:
``request_leads``, ``request_tails``, ``hedge_leads``, ``relay_verbs``, ``relay_persons``,
``person_titles``); this module finds them and returns the request and the frame apart, keeping
the request's own characters (capitals matter to the check for names called out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.language import matches, word_rewrites, words
from app.language.command_words import DOMAIN_WORDS
from app.language.normalize import _ascii_fold, _is_num_word

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")

# Contractions as the frames are written (the interpreter's normaliser expands them the same way)
_CONTRACTIONS = {"n't": ("not",), "'s": ("is",), "'d": ("would",), "'re": ("are",),
                 "'m": ("am",), "'ll": ("will",), "'ve": ("have",)}
_COURTESY = {"please", "thanks", "thank", "you"}
_IRREGULAR = {"can't": ("can", "not"), "won't": ("will", "not"), "let's": ("let", "us"),
              "shan't": ("shall", "not"), "ain't": ("is", "not")}


@dataclass(frozen=True)
class Framed:
    """The request said inside a frame, and the frame's words (for the trace)."""

    request: str
    frame: str
    hedge: bool = False  # only thinking aloud was set aside: the grammar must read the rest


def _words_of(text: str) -> list[tuple[str, int, int]]:
    """Lower-case words with the character span each came from (a contraction gives two)."""
    out: list[tuple[str, int, int]] = []
    regional = word_rewrites()
    for m in _WORD.finditer(text):
        w = _ascii_fold(m.group(0).lower())  # "né" → "ne": the data has no accents
        if w in regional:
            out += [(p, m.start(), m.end()) for p in regional[w]]
            continue
        if w in _IRREGULAR:
            out += [(p, m.start(), m.end()) for p in _IRREGULAR[w]]
            continue
        tail = next((c for c in _CONTRACTIONS if w.endswith(c) and len(w) > len(c)), None)
        if tail is None:
            out.append((w, m.start(), m.end()))
        else:
            out.append((w[:-len(tail)], m.start(), m.end()))
            out += [(p, m.start(), m.end()) for p in _CONTRACTIONS[tail]]
    return out


def _lead_start(toks: list[str]) -> int:
    """Where a frame may begin: after the wake word and discourse markers ("davinci, good
    morning." is not part of the request either)."""
    skip = words("wake_fillers") | words("discourse_markers") | {"davinci", "and", "good",
                                                                  "morning", "afternoon"}
    i = 0
    while i < len(toks) and toks[i] in skip:
        i += 1
    return i


def _at(toks: list[str], i: int, name: str) -> int:
    """End of the longest entry of class ``name`` starting exactly at ``i``, else -1."""
    spans = [(a, b) for a, b in matches(toks[i:], name) if a == 0]
    return i + max(b for _, b in spans) if spans else -1


def _relay_end(raw: list[tuple[str, int, int]], text: str, i: int) -> int:
    """End of "Dr Okafor wants" / "the consultant would like to" / "she says" at ``i``."""
    toks = [w for w, _, _ in raw]
    j = _at(toks, i, "relay_persons")
    if j < 0 and i < len(toks) and toks[i] in words("person_titles") and i + 1 < len(toks):
        j = i + 2  # a title and a name
    if j < 0 and i < len(toks):
        start = raw[i][1]
        if text[start:start + 1].isupper() and text[start + 1:raw[i][2]].islower():
            j = i + 1  # a name alone ("Okafor wants ...")
    if j < 0:
        return -1
    k = _at(toks, j, "relay_verbs")
    return k


def _closing_remark(raw: list[tuple[str, int, int]], text: str, toks: list[str], i: int,
                    stop: int) -> list[tuple[int, int]]:
    """"LLL off, I don't need it", "take the LUL off, I've changed my mind": a remark of the
    speaker's own after a pause, naming nothing of the console, ends the utterance."""
    seg_end = stop
    for a in range(stop - 1, i, -1):
        if "," not in text[raw[a - 1][2]:raw[a][1]]:
            continue
        if _at(toks, a, "closing_remark_leads") > a and not any(
                t in DOMAIN_WORDS or t.isdigit() for t in toks[a:stop]):
            return [(a, stop)]
        if _at(toks, a, "seeing_past_remarks") == stop and any(t in _ACTION_WORDS
                                                                 for t in toks[i:a]):
            return [(a, stop)]
        if _at(toks, a, "reason_leads") > a and any(t in _ACTION_WORDS for t in toks[i:a]) and \
                not any(t in DOMAIN_WORDS or t.isdigit() for t in toks[a:stop]):
            return [(a, stop)]
        if _at(toks, a, "descriptive_remark_leads") > a and (_names_a_thing(toks[i:a]) or any(
                t.isdigit() or _is_num_word(t) for t in toks[i:a])) and \
                not any(t in _ACTION_WORDS or t.isdigit() for t in toks[a:stop]):
            return [(a, stop)]
        if any(t in DOMAIN_WORDS or t in _ACTION_WORDS or t.isdigit() for t in toks[a:seg_end]):
            break
        seg_end = a  # "…, it's out now, after all": the remark may run over several pauses
    return []


_ACTION_WORDS = {"show", "hide", "zoom", "rotate", "turn", "spin", "move", "add", "remove",
                 "take", "put", "bring", "go", "scroll", "reset", "clear", "display", "open",
                 "close", "enlarge", "shrink", "rotating", "spinning", "moving", "zooming",
                 "up", "down", "left", "right", "forward", "backward", "plus", "minus", "again"}


def _names_a_thing(toks: list[str]) -> bool:
    """Whether the words name a display, plane, field or structure (not only a direction)."""
    from app.language.vocabulary import AR_STRONG, IR_STRONG, IV_STRONG

    return any(t in IR_STRONG or t in IV_STRONG or t in AR_STRONG for t in toks)


_DETERMINERS = {"the", "this", "that", "our", "a", "an", "her", "his"}


def _purpose(toks: list[str], i: int, stop: int) -> list[tuple[int, int]]:
    """"switch to the posterior view for the fissure", "add the left lung for comparison":
    what the request is for, naming nothing of the console, ends the utterance (the request
    is read without it)."""
    for a in range(stop - 2, i + 2, -1):
        said_for = toks[a] == "for" and toks[a + 1] in _DETERMINERS or \
            toks[a] in ("for", "to", "just") and toks[a + 1] in words("purpose_words") and \
            _names_a_thing(toks[i:a])
        if said_for and stop - a <= 5 and not any(
                t in DOMAIN_WORDS or t.isdigit() for t in toks[a:stop]):
            return [(a, stop)]
    return []


def unframe(text: str) -> Framed | None:
    """The request inside ``text``'s frame, or None when no frame wraps it."""
    said = _last_sentence_request(text)
    if said is not None:
        return said
    return _unframe(text)


def _last_sentence_request(text: str) -> Framed | None:
    """"Thank you so much. Could you also show the age?", "Hmm, that was one step too far.
    Could we go back to where we were?": what was said before a framed request in a sentence
    of its own is no part of it."""
    cuts = [m.end() for m in re.finditer(r"[.?!;]+\s+(?=\S)", text)]
    if not cuts:
        return None
    last = text[cuts[-1]:]
    inner = _unframe(last)
    if inner is None or inner.hedge:
        return None
    toks = [w for w, _, _ in _words_of(last)]
    i = _lead_start(toks)
    if _at(toks, i, "request_leads") < 0 and _relay_end(_words_of(last), last, i) < 0:
        return None  # the last sentence has no frame of its own: the whole is read
    return Framed(inner.request, f"{text[:cuts[-1]].strip()} … {inner.frame}")


def _unframe(text: str) -> Framed | None:
    raw = _words_of(text)
    toks = [w for w, _, _ in raw]
    if len(toks) < 2:
        return None
    i = _lead_start(toks)
    end, hedge = -1, False
    relay = _relay_end(raw, text, i)
    if relay > i:
        end = relay
        lead = _at(toks, end, "request_leads")  # "Dr Okafor asks if we could ..."
        end = lead if lead > end else end
    else:
        end = _at(toks, i, "request_leads")
        if end < 0:  # an aside first: "and if it is not too much bother, the RLL as well"
            end = _at(toks, i, "request_tails")
            end = end if end > i and "," in text[raw[end - 1][2]:raw[end][1] if end < len(
                toks) else len(text)] else -1
        if end < 0:
            end = _at(toks, i, "hedge_leads")
            hedge = end > i
    stop = len(toks)
    while True:  # tails, last first: "..., if that is all right, please"
        spans = [(a, b) for a, b in matches(toks[:stop], "request_tails") if b == stop]
        # "put the CT on, pet": a term of address after a pause, never the PET scan
        spans += [(a, b) for a, b in matches(toks[:stop], "terms_of_address")
                  if b == stop and a > i and "," in text[raw[a - 1][2]:raw[a][1]]]
        # "again la", "LLL off sha": a sentence-final particle, pause or not
        spans += [(a, b) for a, b in matches(toks[:stop], "final_particles")
                  if b == stop and a > i]
        spans += _closing_remark(raw, text, toks, i, stop)
        spans += _purpose(toks, i, stop)
        if not spans or min(a for a, _ in spans) <= max(end, i):
            break
        stop = min(a for a, _ in spans)
    if end <= i and (stop == len(toks) or set(toks[stop:]) <= _COURTESY):
        return None  # only "please" / "thanks" after a plain command: no frame to set aside
    begin_char = raw[end][1] if 0 <= end < len(toks) else (raw[i][1] if i < len(toks) else 0)
    if end >= len(toks) or stop <= max(end, i):
        return None  # nothing left but the frame
    if end < 0:  # only a tail: the request is everything before it, as said
        begin_char, end = 0, i
    end_char = raw[stop - 1][2]
    request = text[begin_char:end_char].strip(" ,.;:")
    frame_words = toks[i:end] + (["…"] if stop < len(toks) else []) + toks[stop:]
    if not request or len(request.split()) < 1:
        return None
    if hedge:
        # "I think... yeah, remove the RUL, I want to see behind it": a yes after the musing
        # opens the one request; thinking aloud before several parts is the interpreter's
        # musing rule
        core = re.sub(r"^(?:\s*(?:yeah|yes|okay|ok|so|well|right)\b[\s,.]*)+", "", request,
                      flags=re.IGNORECASE)
        if end <= i or re.search(r"[,.;:!?]", core) or not core or \
                stop < len(toks) and core == request:
            return None
        request = core
    if 0 < end <= len(toks) and toks[end - 1] == "mind":
        request = _base_verb_first(request)  # "would you mind putting up the CT"
    return Framed(request, " ".join(frame_words), hedge=hedge)


def _base_verb_first(request: str) -> str:
    """The request with its first word, a verb in -ing, as the console's verb ("putting up
    the CT" → "put up the CT", "taking it back" → "take it back")."""
    first, _, rest = request.partition(" ")
    low = first.lower()
    if not low.endswith("ing") or len(low) < 6:
        return request
    from app.language.known_words import known_words  # (it reads the frames' word lists)

    stem, said = low[:-3], known_words()
    for verb in (stem[:-1] if stem[-1] == stem[-2] else "", stem + "e", stem):
        if verb and verb in said:
            return f"{verb} {rest}".strip()
    return request


_LEAD_FILLERS = {"oh", "ah", "and", "well", "um", "uh", "er", "so", "but"}


def _is_courtesy(part: str) -> bool:
    """Is the clause courtesy and nothing else ("I'm sorry to bother you again", "if it's no
    trouble at all", "thank you so much for your help"): a whole phrase of
    ``courtesy_clauses``, fillers aside?"""
    toks = [w for w, _, _ in _words_of(part)]
    while toks and toks[0] in _LEAD_FILLERS:
        toks = toks[1:]
    return any(a == 0 and b == len(toks) for a, b in matches(toks, "courtesy_clauses"))


def _filler_only(part: str) -> bool:
    return all(w in _LEAD_FILLERS for w, _, _ in _words_of(part))


def request_within_courtesy(text: str) -> str | None:
    """The clauses of ``text`` between clauses that are courtesy and nothing else ("I'm sorry
    to bother you again, but could you please bring up the CT scan as well?", "…, would you
    please clear all the CT images? Thank you so much for your help"), or None when no such
    clause leads or closes it. Only whole courtesy phrases are set aside (a clause that takes
    back, delays, calls on someone or asks is none); the interpreter acts on the rest only
    when it is a confident command by itself."""
    parts = [p.strip() for p in re.split(r"[,.;:!?]+", text) if p.strip()]
    if len(parts) < 2:
        return None
    i, j = 0, len(parts)
    while i < j - 1 and (_is_courtesy(parts[i]) or _filler_only(parts[i])):
        i += 1
    while j > i + 1 and _is_courtesy(parts[j - 1]):
        j -= 1
    if not any(_is_courtesy(p) for p in parts[:i] + parts[j:]):
        return None
    rest = ", ".join(parts[i:j])
    first = next((w for w, _, _ in _words_of(rest)), "")
    if first in ("not", "no", "never") or first in words("person_titles") | words(
            "group_address"):
        return None  # "…, doctor, could you …", "…, everyone, hide …": said to people
    return rest


__all__ = ["Framed", "request_within_courtesy", "unframe"]
