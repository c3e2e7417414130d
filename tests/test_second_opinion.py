"""The second-opinion STT (``WhisperSTT.second_opinion``): when tiny Whisper hears a command
as something not wholly console words, a second model is asked and its hearing is kept only
when it reads as more of a command — never out of scope, never a wake word the first did not
hear — and the live pipeline asks it only about commands, never about chatter."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.voice.pipeline import VoicePipeline
from app.voice.stt import SttConfig, Transcript, WhisperSTT
from app.voice.vad import VadSegmenter
from tests.test_voice_units import EnergyVad, FakeHandler, ScriptedSTT, utterances

AUDIO = np.zeros(16000, dtype=np.float32)


class Scorer:
    """Console words: show, the, ct, zoom, in, out, davinci; 'stapler' pins (out of scope)."""
    words = {"show", "the", "ct", "zoom", "in", "out", "davinci"}

    def coverage(self, text: str) -> float:
        toks = [t.strip(".,?!").lower() for t in text.split()]
        return sum(t in self.words or t.isdigit() for t in toks) / max(1, len(toks))

    def pinned(self, text: str) -> bool:
        return "stapler" in text.lower()

    def variants(self, text: str) -> list[str]:
        return []


class Second:
    def __init__(self, text: str, logprob: float | None = None) -> None:
        self.text, self.calls, self.logprob = text, 0, logprob

    def transcribe(self, audio: Any) -> Transcript:
        self.calls += 1
        alts = [(self.text, self.logprob, 1.0)] if self.logprob is not None else []
        return Transcript(self.text, ms=300.0, model="base", alternatives=alts)


def stt_with(second_text: str, second_logprob: float | None = None, **cfg: Any,
             ) -> tuple[WhisperSTT, Second]:
    stt = WhisperSTT(SttConfig(**cfg), lock=None, scorer=Scorer())
    second = Second(second_text, second_logprob)
    stt._second = second  # type: ignore[assignment]
    return stt, second


def first(text: str, dropped: list[str] | None = None, logprob: float | None = None,
          ) -> Transcript:
    alts = [(text, logprob, 1.0)] if logprob is not None else []
    return Transcript(text, ms=100.0, model="tiny.en", dropped=dropped or [], alternatives=alts)


def test_taken_when_it_reads_as_more_of_a_command() -> None:
    stt, second = stt_with("Show the CT.")
    tr = stt.second_opinion(AUDIO, first("Show the city."))
    assert tr.text == "Show the CT." and tr.model == "base" and second.calls == 1
    assert tr.second == {"model": "base", "text": "Show the CT.", "taken": True,
                         "first_text": "Show the city.", "first_model": "tiny.en", "ms": 300.0,
                         "why": "not console words"}
    assert tr.ms == 400.0 and tr.to_dict()["second"]["taken"] is True


def test_not_asked_when_the_first_hearing_is_sure_console_words_or_out_of_scope() -> None:
    for text, lp in (("Zoom in.", None), ("Zoom in.", -0.1), ("Hand me the stapler.", -2.0)):
        stt, second = stt_with("Show the CT.", -0.05)
        tr = stt.second_opinion(AUDIO, first(text, logprob=lp))
        assert tr.text == text and second.calls == 0 and tr.second is None


def test_an_unsure_all_console_hearing_yields_to_a_surer_one() -> None:
    # tiny unsure of console words ("Tilt the right lung." -0.82): base's all-console
    # hearing wins only when base is surer by the margin
    stt, second = stt_with("Show the CT.", -0.2)
    tr = stt.second_opinion(AUDIO, first("Zoom in.", logprob=-0.8))
    assert tr.text == "Show the CT." and second.calls == 1
    assert tr.second is not None and tr.second["why"] == "unsure" and tr.second["taken"]
    for other, lp in (("Show the CT.", -0.7),          # not surer by 0.2
                      ("Show the city.", -0.1),         # not all console words
                      ("Show the CT stapler.", -0.1),   # out of scope
                      ("Davinci, zoom in.", -0.1)):     # adds a wake word
        stt, second = stt_with(other, lp)
        tr = stt.second_opinion(AUDIO, first("Zoom in.", logprob=-0.8))
        assert tr.text == "Zoom in." and second.calls == 1, other
        assert tr.second is not None and tr.second["taken"] is False
    # numbers are tiny's to hear: base writing a term for one is not taken
    stt, second = stt_with("Zoom in the CT.", -0.1)
    assert stt.second_opinion(AUDIO, first("Zoom in 50.", logprob=-0.8)).text == "Zoom in 50."
    stt, second = stt_with("Show the CT.", -0.05, second_below_logprob=None)
    assert stt.second_opinion(AUDIO, first("Zoom in.", logprob=-0.8)).text == "Zoom in."
    assert second.calls == 0


def test_kept_first_when_the_second_covers_no_more_is_out_of_scope_or_adds_a_wake() -> None:
    for other in ("Show the city.", "Zoom in on the stapler.", "Davinci, zoom in."):
        stt, second = stt_with(other)
        tr = stt.second_opinion(AUDIO, first("Show the city."))
        assert tr.text == "Show the city." and second.calls == 1, other
        assert tr.second is not None and tr.second["taken"] is False


def test_an_empty_first_hearing_may_be_replaced_but_not_a_too_short_clip() -> None:
    stt, second = stt_with("Zoom out.")
    assert stt.second_opinion(AUDIO, first("", ["low-confidence"])).text == "Zoom out."
    stt, second = stt_with("Zoom out.")
    assert stt.second_opinion(AUDIO, first("", ["too-short"])).text == ""
    assert second.calls == 0


def test_off_by_configuration_and_after_a_failed_load() -> None:
    stt, second = stt_with("Show the CT.", second_model=None)
    assert stt.second_opinion(AUDIO, first("Show the city.")).text == "Show the city."
    assert second.calls == 0
    broken = WhisperSTT(SttConfig(second_model="no-such-model"), lock=None, scorer=Scorer())
    assert broken.second_opinion(AUDIO, first("Show the city.")).text == "Show the city."
    assert broken._second_failed  # said once, not tried again per command


class TwoOpinionSTT(ScriptedSTT):
    """Tiny's hearing scripted; the second opinion replaces 'city' with 'CT'."""

    def __init__(self, texts: list[str]) -> None:
        super().__init__(texts)
        self.asked: list[str] = []

    def second_opinion(self, audio: Any, tr: Transcript) -> Transcript:
        self.asked.append(tr.text)
        text = tr.text.replace("city", "CT")
        if text == tr.text:
            return tr
        out = Transcript(text, ms=tr.ms + 2.0, raw_text=text, model="base")
        out.second = {"model": "base", "text": text, "taken": True, "first_text": tr.text}
        return out


def test_pipeline_asks_about_commands_only_and_passes_the_second_hearing_on() -> None:
    stt = TwoOpinionSTT(["Nice weather in the city today.", "Davinci, show the city."])
    handler = FakeHandler()
    p = VoicePipeline(handler, stt=stt, vad=VadSegmenter(EnergyVad()), mode="synthesized")
    runs = p.run([utterances(1.0, 1.0)])
    assert stt.asked == ["Davinci, show the city."]  # the chatter was never sent to it
    assert [c[0] for c in handler.calls] == ["show the CT."]
    assert handler.calls[0][1]["second"]["taken"] is True
    ends = [e for e in runs[-1].events if e.type == "stt-end"]
    assert ends[-1].data["second"]["first_text"] == "Davinci, show the city."


def test_no_second_opinion_from_the_same_model() -> None:
    stt, second = stt_with("Show the CT.", model="base", second_model="base")
    stt._second = None  # nothing preloaded: the accessor decides
    assert stt.second_stt() is None
    assert stt.second_opinion(AUDIO, first("Show the city.")).text == "Show the city."


# --------------------------------------------------------------------- the joint second opinion
def test_choose_joint_takes_the_reading_both_models_support() -> None:
    from app.voice.hearing_choice import choose_joint

    sc = Scorer()
    # tiny's own choice "Show the city." against base's "Show the CT.": base finds the city
    # unlikely, both find the CT about as likely
    first = {"Show the city.": -0.3, "Show the CT.": -0.5}
    second = {"Show the city.": -2.5, "Show the CT.": -0.4}
    assert choose_joint("Show the city.", "Show the city.", first, second, sc) == "Show the CT."
    # with the weight all on the first model, the first model's reading stands
    assert choose_joint("Show the city.", "Show the city.", first, second, sc, weight=0.0,
                        first_weight=1.0) == "Show the city."


def test_choose_joint_never_trades_for_out_of_scope_or_a_wake_word() -> None:
    from app.voice.hearing_choice import choose_joint

    sc = Scorer()
    s = {"Show the city.": -0.9, "Show the stapler.": -0.1, "Davinci, show the CT.": -0.1}
    assert choose_joint("Show the city.", "Show the city.", s, s, sc) == "Show the city."
    # a pinned (out-of-scope) top or current keeps the current
    s2 = {"Hand me the stapler.": -0.5, "Show the CT.": -0.1}
    assert choose_joint("Hand me the stapler.", "Hand me the stapler.", s2, s2, sc) == \
        "Hand me the stapler."
    # texts only one model scored are not compared
    assert choose_joint("Show the city.", "Show the city.", {"Show the city.": -0.9,
                        "Show the CT.": -0.1}, {"Show the city.": -0.9}, sc) == "Show the city."


class JointSecond:
    """A second model whose hearing carries what a forced decode needs (scores by text)."""

    def __init__(self, text: str, alts: list[str], scores: dict[str, float]) -> None:
        self.text, self.alts, self.scores, self.calls = text, alts, scores, 0

    def transcribe(self, audio: Any) -> Transcript:
        self.calls += 1
        return Transcript(self.text, ms=300.0, model="base",
                          alternatives=[(t, -0.5, 1.0) for t in self.alts],
                          scoring={"enc": None, "ids": [], "frames": 0, "tok": None,
                                   "texts": list(self.alts)})

    def _forced_logprobs(self, enc: Any, ids: Any, frames: int, tok: Any,
                         texts: list[str]) -> dict[str, float]:
        return {t: self.scores.get(t, -5.0) for t in texts}


def test_joint_mode_scores_both_hearings_with_both_models(monkeypatch: Any) -> None:
    stt = WhisperSTT(SttConfig(second_mode="joint", joint_below_logprob=0.0), lock=None,
                     scorer=Scorer())
    second = JointSecond("Show the CT.", ["Show the CT."], {"Show the CT.": -0.3,
                                                            "Show the city.": -2.0})
    stt._second = second  # type: ignore[assignment]
    tiny_scores = {"Show the city.": -0.4, "Show the CT.": -0.6}
    monkeypatch.setattr(stt, "_forced_logprobs",
                        lambda enc, ids, frames, tok, texts: {t: tiny_scores.get(t, -5.0)
                                                              for t in texts})
    heard = Transcript("Show the city.", ms=100.0, model="tiny.en",
                       alternatives=[("Show the city.", -0.4, 0.67)],
                       scoring={"enc": None, "ids": [], "frames": 0, "tok": None,
                                "texts": ["Show the city."]})
    tr = stt.second_opinion(AUDIO, heard)
    assert tr.text == "Show the CT." and second.calls == 1
    assert tr.second is not None and tr.second["mode"] == "joint" and tr.second["taken"]
    assert tr.second["scores"]["Show the CT."] == [-0.6, -0.3]
    assert tr.logprob == -0.6  # the first model's own score of the text taken
    # a hearing already all console words is still checked when tiny doubted it, and kept
    # when both models prefer it
    heard2 = Transcript("Show the CT.", ms=100.0, model="tiny.en",
                        alternatives=[("Show the CT.", -0.2, 1.0)],
                        scoring={"enc": None, "ids": [], "frames": 0, "tok": None,
                                 "texts": ["Show the CT."]})
    tr2 = stt.second_opinion(AUDIO, heard2)
    assert tr2.text == "Show the CT." and tr2.second is not None and not tr2.second["taken"]
    # ... but not when tiny was sure of it (the default threshold): base is not even asked
    stt.config = SttConfig(second_mode="joint")
    calls = second.calls
    heard3 = Transcript("Show the CT.", ms=100.0, model="tiny.en",
                        alternatives=[("Show the CT.", -0.2, 1.0)],
                        scoring={"enc": None, "ids": [], "frames": 0, "tok": None,
                                 "texts": ["Show the CT."]})
    assert stt.second_opinion(AUDIO, heard3).second is None and second.calls == calls


def test_choose_joint_keeps_far_fetched_console_readings_out() -> None:
    from app.voice.hearing_choice import choose_joint

    sc = Scorer()
    # both models find "What's the biggest?" likely; "Show the CT." is all console words but
    # 1.0 less likely to both: coverage alone must not carry it
    s1 = {"What's the biggest?": -0.4, "Show the CT.": -1.4}
    s2 = {"What's the biggest?": -0.6, "Show the CT.": -1.6}
    assert choose_joint("What's the biggest?", "What's the biggest?", s1, s2, sc) == \
        "What's the biggest?"
    # without the gap the coverage bonus would have taken it
    assert choose_joint("What's the biggest?", "What's the biggest?", s1, s2, sc,
                        max_gap=None) == "Show the CT."


def test_joint_scores_only_each_models_likeliest_hearings(monkeypatch: Any) -> None:
    stt = WhisperSTT(SttConfig(second_mode="joint", joint_below_logprob=0.0, joint_nbest=2),
                     lock=None, scorer=Scorer())
    beam = ["Show the city.", "Show the sea tea.", "So the city.", "Show this city."]
    second = JointSecond("Show the CT.", ["Show the CT.", "Show a CT.", "So the CT."],
                         {"Show the CT.": -0.3})
    stt._second = second  # type: ignore[assignment]
    scored: list[list[str]] = []

    def forced(enc: Any, ids: Any, frames: int, tok: Any, texts: list[str]) -> dict[str, float]:
        scored.append(list(texts))
        return {t: -0.5 for t in texts}

    monkeypatch.setattr(stt, "_forced_logprobs", forced)
    heard = Transcript("Show the city.", ms=100.0, model="tiny.en",
                       alternatives=[(t, -0.4, 0.67) for t in beam],
                       scoring={"enc": None, "ids": [], "frames": 0, "tok": None,
                                "texts": beam})
    tr = stt.second_opinion(AUDIO, heard)
    assert scored == [["Show the city.", "Show the sea tea.", "Show the CT.", "Show a CT."]]
    assert tr.second is not None and tr.second["candidates"] == 4


def test_a_failed_joint_scoring_keeps_the_first_hearing(monkeypatch: Any) -> None:
    stt = WhisperSTT(SttConfig(second_mode="joint", joint_below_logprob=0.0), lock=None,
                     scorer=Scorer())
    stt._second = JointSecond("Show the CT.", ["Show the CT."], {})  # type: ignore[assignment]

    def broken(*args: Any) -> dict[str, float]:
        raise RuntimeError("align failed")

    monkeypatch.setattr(stt, "_forced_logprobs", broken)
    heard = Transcript("Show the city.", ms=100.0, model="tiny.en",
                       alternatives=[("Show the city.", -0.4, 0.67)],
                       scoring={"enc": None, "ids": [], "frames": 0, "tok": None,
                                "texts": ["Show the city."]})
    tr = stt.second_opinion(AUDIO, heard)
    assert tr.text == "Show the city." and tr.second is not None
    assert not tr.second["taken"] and "align failed" in tr.second["error"]
