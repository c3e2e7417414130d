"""Choosing what was said among Whisper's hearings: the domain rules of the STT stage.

Pure functions over texts and their log-probabilities (no model, no audio), so each rule is
unit-tested on its own and replayable on cached hearings. :mod:`app.voice.stt` decodes the
beams and forced scores and calls these; the measured effect of each rule is in its docstring
and in ``docs/BENCHMARKS.md``. Shared safety rules: an out-of-scope reading (``pinned``) is
never traded for a console reading, and whether a text starts with the wake word never
changes (rescoring must not make or lose a wake).
"""

from __future__ import annotations

import re


def _starts_with_wake(text: str) -> bool:
    from app.voice.wakeword import WakeWordSpotter  # noqa: PLC0415

    return WakeWordSpotter().match(text).detected


class DomainScorer:
    """What the rescoring asks of the interpreter's vocabulary (see :func:`choose_hypothesis`):
    ``coverage(text)`` 0..1, how much of a transcript is console words; ``pinned(text)``, a
    transcript that must not be traded for another (one the console rejects as out of scope:
    "page the pathologist" must not become an in-domain near-homophone)."""

    def coverage(self, text: str) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def pinned(self, text: str) -> bool:  # pragma: no cover - interface
        return False

    def variants(self, text: str) -> list[str]:  # pragma: no cover - interface
        """Rewrites of ``text`` with console words that sound alike (may be empty)."""
        return []

    def reading(self, text: str) -> str:  # pragma: no cover - interface
        """What the console reads ``text`` as after its own (spelling) correction."""
        return text


def _default_scorer() -> DomainScorer | None:
    try:
        from app.language.soundalike import SoundalikeScorer  # noqa: PLC0415
    except Exception:  # the agents layer missing must not break STT
        return None
    return SoundalikeScorer()


def choose_hypothesis(hyps: list[tuple[str, float]], scorer: DomainScorer | None,
                      weight: float = 2.0, max_gap: float = 1.0,
                      min_coverage: float = 1.0) -> tuple[int, list[float]]:
    """Pick among a beam's hypotheses ``(text, per-token log-probability)``, best first.

    Tiny Whisper often has the command in its beam but not on top: a short "zoom in" comes out
    "Two men." (-0.30) with "Zoom in." second (-0.84); "show BMI" as "Joby, am I?" with "Show
    BMI." third. A domain language model would settle it; the console's vocabulary is one: a
    hypothesis wins when its log-probability plus ``weight`` × its domain coverage beats the
    top's, it covers strictly more of the domain than the top and at least ``min_coverage``
    (by default it reads wholly as a console command: chatter such as "That's amazing." must
    not become "And I'm gonna rotate."), and it is within ``max_gap`` of the top in
    log-probability (so far-fetched readings never win). The top stays when the
    scorer pins it (out of scope), and nothing ranked below a pinned hypothesis wins ("What's
    the selection setting?" / "… suction setting?" / … / "… function setting?" stays a
    question about suction, not a request for the pulmonary function). A hypothesis that differs from the top in whether it
    starts with the wake word is never chosen: rescoring must not make false wakes.
    Returns (index, coverages)."""
    if scorer is None or not hyps:
        return 0, [0.0] * len(hyps)
    covs = [scorer.coverage(t) for t, _ in hyps]
    if len(hyps) == 1 or scorer.pinned(hyps[0][0]):
        return 0, covs
    top_lp = hyps[0][1]
    top_wake = _starts_with_wake(hyps[0][0])
    best, best_score = 0, top_lp + weight * covs[0]
    for i, ((text, lp), cov) in enumerate(zip(hyps, covs, strict=True)):
        if i == 0:
            continue
        if lp < top_lp - max_gap:
            break  # best first: the rest are further still
        if scorer.pinned(text):
            break  # a likelier reading is out of scope: nothing below it may win
        if cov <= covs[0] or cov < min_coverage:
            continue
        if _starts_with_wake(text) != top_wake:
            continue  # whether the wake word was said stays Whisper's call (false wakes)
        if lp + weight * cov > best_score:
            best, best_score = i, lp + weight * cov
    return best, covs


def choose_soundalike(top: str, current: str, scores: dict[str, float],
                      scorer: DomainScorer, weight: float = 2.0, max_gap: float = 1.0,
                      ) -> str | None:
    """Pick a sound-alike rewrite over the current transcript, or None.

    ``scores``: per-token log-probability of each text under the audio (one forced decode
    each, the same prompt, so they compare). A rewrite wins, as in :func:`choose_hypothesis`,
    when its log-probability plus ``weight`` × domain coverage beats the current
    transcript's, it covers strictly more of the domain, it is within ``max_gap`` of Whisper's
    own first choice, and neither it nor the top is out of scope (pinned). Measured on the dev
    split's audio (630 commands, three voices, clean): "Chill the right lung." → "Show the
    right lung.", "What's at the very top of the skin?" → "… of the scan?", "Zoom in on the
    corner …" → "… the coronal …", "… the sagittal beater?" → "… bigger?"; single-pass
    success 502 → 515 of 630."""
    if top not in scores or current not in scores or scorer.pinned(top):
        return None
    cov_cur = scorer.coverage(current)
    best, best_score = None, scores[current] + weight * cov_cur
    wake = _starts_with_wake(top)
    for text, lp in scores.items():
        if text in (top, current) or lp < scores[top] - max_gap:
            continue
        if _starts_with_wake(text) != wake:
            continue  # never make (or lose) a wake word by rewriting
        cov = scorer.coverage(text)
        if cov <= cov_cur or scorer.pinned(text):
            continue
        if lp + weight * cov > best_score:
            best, best_score = text, lp + weight * cov
    return best


def _numbers(text: str) -> list[str]:
    """The numbers a hearing says, as the console reads them ("Right, 50." → ["50"]). Tiny
    hears numbers well; the vocabulary prompt makes base write a term for one ("Right, FVC."
    for "right 50", "sagittal plus surgery" for "... plus 30"), so a surer second hearing
    must say the same numbers."""
    try:
        from app.language.normalize import normalize
    except Exception:  # noqa: BLE001 - the agents layer missing: digits as written
        return sorted(re.findall(r"\d+", text))
    return sorted(re.findall(r"\d+", normalize(text)))


def choose_repair(top: str, current: str, scores: dict[str, float], scorer: DomainScorer,
                  max_gap: float = 0.5, margin: float = 0.0) -> str | None:
    """Let the audio choose how a hearing the console would repair by spelling is repaired.

    A transcript can read wholly as console words only because the text correction fixes a
    word Whisper wrote ("Asterior 20." is read "anterior 20"), and spelling cannot tell
    which console word was said ("asterior" is as near "posterior"). ``scores``: per-token
    log-probability under the audio of ``top``, ``current`` and sound-alike rewrites of
    ``current``. A rewrite wins when it reads wholly as console words, is within ``max_gap``
    of Whisper's first choice, the audio prefers it to every rewrite that reads as the
    correction would, and one such rewrite was proposed (so the choice is between readings
    the sound supports; otherwise the correction stays). Out-of-scope readings never win or
    lose, and the wake word never changes."""
    if top not in scores or current not in scores or scorer.pinned(top) or \
            scorer.pinned(current):
        return None
    wake = _starts_with_wake(top)
    reading = scorer.reading(current)
    # each rewrite's reading once: the text correction is the costly part
    cands = {t: scorer.reading(t) for t in scores if t not in (top, current)}
    agree = [scores[t] for t, r in cands.items() if r == reading]
    if not agree:
        return None
    best, best_lp = None, max(agree) + margin
    for text, r in cands.items():
        lp = scores[text]
        if lp <= best_lp or lp < scores[top] - max_gap or _starts_with_wake(text) != wake:
            continue
        if r == reading or scorer.coverage(text) < 1.0 or scorer.pinned(text):
            continue
        best, best_lp = text, lp
    return best


def choose_joint(current: str, top: str, first: dict[str, float], second: dict[str, float],
                 scorer: DomainScorer, weight: float = 2.0, first_weight: float = 0.5,
                 max_gap: float | None = 0.5) -> str:
    """Pick among the hearings of two models, each text scored against the audio by both.

    ``first`` / ``second``: per-token log-probability of each candidate text under each
    model (forced decodes; the same texts). The winner maximises ``first_weight`` × first +
    (1 − ``first_weight``) × second + ``weight`` × domain coverage; ``current`` (the first
    model's own choice) stays unless another text beats it, and only a text within ``max_gap``
    of the reading the two models find likeliest (joint log-probability alone) may win: the
    coverage bonus must not carry a far-fetched console reading of other talk ("What's the
    biggest?" → "What's the CT?"). As elsewhere, nothing is traded
    for an out-of-scope reading: a pinned top or current keeps ``current``, a pinned candidate
    never wins, and whether the text starts with the wake word never changes."""
    if current not in first or current not in second or scorer.pinned(top) or \
            scorer.pinned(current):
        return current
    wake = _starts_with_wake(top)

    def heard(text: str) -> float:
        return first_weight * first[text] + (1 - first_weight) * second[text]

    likeliest = max(heard(t) for t in first if t in second)
    best, best_score = current, heard(current) + weight * scorer.coverage(current)
    for text in first:
        if text == current or text not in second or _starts_with_wake(text) != wake:
            continue
        if max_gap is not None and heard(text) < likeliest - max_gap:
            continue
        score = heard(text) + weight * scorer.coverage(text)
        if score > best_score and not scorer.pinned(text):
            best, best_score = text, score
    return best


def choose_domain_hearing(top: str, current: str, domain: str, scores: dict[str, float],
                          scorer: DomainScorer, max_gap: float = 2.5) -> str | None:
    """Take the phrasing model's hearing (:mod:`app.voice.domain_asr`) over Whisper's, or
    None. Only where Whisper's chosen hearing is not wholly console words (a hearing that is
    stays: the phrasing model turns any talk into command-like words), the domain hearing is,
    neither it nor Whisper's top is out of scope, both agree on the wake word, and Whisper
    itself, forced through the domain hearing (``scores``: per-token log-probability of
    ``top`` and ``domain``), finds it within ``max_gap`` of its own first choice. The gap is
    wide because another recogniser's wording always scores below Whisper's own (case and
    punctuation alone cost ~0.5); it still keeps what the audio contradicts. Dev split
    (phrasing model built without the dev sentences): single-pass 932 → 951 of 1,260 over six
    voice/noise runs; the test split did not follow (see ``SttConfig.domain_asr``)."""
    if not domain or domain == current or top not in scores or domain not in scores:
        return None
    if scorer.coverage(current) >= 1.0 or scorer.coverage(domain) < 1.0:
        return None
    if scorer.pinned(top) or scorer.pinned(current) or scorer.pinned(domain):
        return None
    if _starts_with_wake(domain) != _starts_with_wake(top):
        return None
    return domain if scores[domain] >= scores[top] - max_gap else None


__all__ = ["DomainScorer", "choose_domain_hearing", "choose_hypothesis", "choose_joint", "choose_repair",
           "choose_soundalike"]
