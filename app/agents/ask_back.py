"""Ask, don't guess (DESIGN §3): one short question when no tier is confident, and its answer.

When the interpreter has readings but none it may act on, the console asks ("Did you mean:
add the left lower lobe to the model, or show the 3D model?") and keeps the candidates. The
next command may answer it — by voice, typed, or by a touch button that sends "option N":
"yes" (one candidate), "the first/second", a word that only one candidate's wording holds
("the lobe"), or "no"/"cancel". Anything else is a new command and the question is dropped;
so is a question left unanswered for ``timeout_s``. Nothing changes the state until answered.
The answer words are data (``app/language/data/words.toml``: answer_yes, answer_no, ...).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.agents.decision import Decision
from app.language import has_any, matches
from app.language.normalize import normalize, tokens_of

QUESTION_TIMEOUT_S = 30.0
MAX_OPTIONS = 2
# Words that say nothing about which option is meant.
# Words that say nothing about which option is meant (polarity words are not among them:
# "left lower lobe on" does not answer "remove the left lower lobe").
_NEUTRAL = {"the", "a", "an", "to", "of", "and", "then", "please", "one", "it", "i", "mean",
            "meant", "want", "just", "yes"}


@dataclass
class PendingQuestion:
    text: str
    options: list[Decision]
    labels: list[str]
    asked_at: float = field(default_factory=time.monotonic)

    def expired(self, now: float | None = None, timeout_s: float = QUESTION_TIMEOUT_S) -> bool:
        return ((now if now is not None else time.monotonic()) - self.asked_at) > timeout_s

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "options": list(self.labels)}

    def to_file(self) -> dict[str, object]:
        """Everything needed to answer it in a later process (``visa-console do --state``):
        the candidate plans in trace form and when it was asked (wall clock)."""
        from app.core.registry import CommandResult

        age = time.monotonic() - self.asked_at
        return {"text": self.text, "labels": list(self.labels), "asked": time.time() - age,
                "options": [{"agent": d.agent, "tier": d.tier,
                             "actions": CommandResult(True, list(d.steps), "").actions()}
                            for d in self.options]}

    @classmethod
    def from_file(cls, data: dict[str, object]) -> PendingQuestion:
        from app.core.registry import Step

        options = [Decision(True, [Step(f"{a['agent']}.{a['action']}", dict(a.get("params") or {}))
                                   for a in o["actions"]], o.get("agent"), 0.5,
                            str(o.get("tier") or "lexicon"))
                   for o in data["options"]]  # type: ignore[union-attr]
        age = max(0.0, time.time() - float(data["asked"]))  # type: ignore[arg-type]
        return cls(str(data["text"]), options, [str(x) for x in data["labels"]],  # type: ignore[union-attr]
                   asked_at=time.monotonic() - age)


def make_question(candidates: Sequence[Decision],
                  describe: Callable[[Sequence[object]], str | None]) -> PendingQuestion | None:
    """The question for up to two distinct candidate plans that can be put in words."""
    options: list[Decision] = []
    labels: list[str] = []
    for d in candidates:
        if not d.valid or not d.steps:
            continue
        label = describe(d.steps)
        if label:  # as a screen writes them
            label = re.sub(r"\bct\b", "CT", re.sub(r"\b3d\b", "3D", label))
        if not label or label in labels:
            continue
        options.append(d)
        labels.append(label)
        if len(options) == MAX_OPTIONS:
            break
    if not options:
        return None
    if len(options) == 1:
        text = f"Did you mean: {labels[0]}?"
    else:
        text = f"Did you mean: {labels[0]}, or {labels[1]}?"
    return PendingQuestion(text, options, labels)


def _whole(tokens: list[str], name: str) -> bool:
    """The answer is one of the class's phrases and nothing else (fillers aside)."""
    spans = matches(tokens, name)
    if not spans:
        return False
    covered = {i for a, b in spans for i in range(a, b)}
    return all(i in covered or t in (",", "please", "the", "um", "uh", "okay", "ok")
               for i, t in enumerate(tokens))


def resolve(question: PendingQuestion, text: str) -> int | str | None:
    """Which option the answer picks (its index), "cancel", or None (not an answer). An
    answer whose words contradict the option it would pick ("yes, hide it" to "show the 3D
    model?") is no answer: it is read as a new command."""
    pick = _pick(question, text)
    if isinstance(pick, int):
        from app.agents.checks import contradiction

        if contradiction(question.options[pick].steps, tokens_of(normalize(text or ""))):
            return None
    return pick


def is_answer_phrase(text: str) -> bool:
    """The whole utterance is an answer ("option 2", "the first one"): with no question
    pending it must not be read as a command ("two" is not axial slice 2)."""
    raw = re.findall(r"[a-z0-9']+|,", (text or "").lower())
    return bool(raw) and (raw[0] == "option" or _whole(raw, "answer_first")
                          or _whole(raw, "answer_second"))


def _pick(question: PendingQuestion, text: str) -> int | str | None:
    # the words as said ("the second one"; the normaliser would write "2nd") and as read
    raw = re.findall(r"[a-z0-9']+|,", (text or "").lower())
    toks = tokens_of(normalize(text or ""))
    if not toks:
        return None
    if _whole(raw, "answer_first"):
        return 0
    if _whole(raw, "answer_second") and len(question.options) > 1:
        return 1
    n = len(question.options)
    if _whole(toks, "answer_first"):
        return 0
    if _whole(toks, "answer_second") and n > 1:
        return 1
    if _whole(toks, "answer_no"):
        return "cancel"
    if n == 1 and (_whole(toks, "answer_yes") or has_any(toks[:1], "answer_yes")
                   and len(toks) <= 3):
        return 0
    # "the lobe" / "the whole lung": a word only one option's wording holds
    # (every word said must be in that option's wording: "left lower lobe off" is a new
    # command, not the answer "add the left lower lobe")
    said = {t for t in toks if t not in _NEUTRAL and t != ","}
    if said and len(toks) <= 5:
        hits = [i for i, lab in enumerate(question.labels)
                if said <= set(tokens_of(normalize(lab)))]
        if len(hits) == 1:
            return hits[0]
    return None


__all__ = ["MAX_OPTIONS", "PendingQuestion", "QUESTION_TIMEOUT_S", "is_answer_phrase",
           "make_question", "resolve"]
