"""The false-wake measurement (app/eval/false_wake.py) and the wake path on real non-wake speech.

Fast tests check the corpus and the measuring loop with stand-ins (energy VAD, scripted
Whisper). The slow test streams a few seconds of real synthesised OR talk (espeak-ng) through
the real Silero VAD, Whisper tiny.en and the wake-word logic: no wake; then "da Vinci, …" in
the same stream: exactly one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.eval import audio_synth as A
from app.eval import false_wake as F
from app.voice.audio import SAMPLE_RATE, read_audio
from app.voice.pipeline import PipelineConfig, VoicePipeline
from app.voice.stt import Segment, Transcript
from app.voice.vad import EndpointConfig, VadSegmenter
from app.voice.wakeword import WakeWordSpotter

SR = SAMPLE_RATE


class EnergyVad:
    window = 512

    def probability(self, window: np.ndarray) -> float:
        return 1.0 if float(np.sqrt(np.mean(window ** 2))) > 0.02 else 0.0

    def reset(self) -> None:
        pass


class ScriptedSTT:
    model_name = "scripted"

    def __init__(self, texts: list[str], logprob: float = -0.2) -> None:
        self.texts, self.logprob, self.calls = list(texts), logprob, 0

    def transcribe(self, audio: np.ndarray, **_: Any) -> Transcript:
        self.calls += 1
        text = self.texts.pop(0) if self.texts else ""
        return Transcript(text, ms=1.0, raw_text=text,
                          segments=[Segment(text, 0.0, 1.0, self.logprob, 0.01, 1.0)])


def bursts(*durations: float, gap: float = 1.2) -> np.ndarray:
    parts = [np.zeros(int(0.3 * SR), np.float32)]
    for d in durations:
        t = np.arange(int(d * SR)) / SR
        parts += [(0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32),
                  np.zeros(int(gap * SR), np.float32)]
    return np.concatenate(parts)


# ============================================================================ corpus
def test_corpus_sentences_hold_no_wake_word() -> None:
    sents = F.corpus_sentences()
    assert len(sents) >= 500 and len(set(sents)) == len(sents)
    assert not any(F.contains_wake_word(s) for s in sents)
    assert F.contains_wake_word("ok Da Vinci, zoom in") and F.contains_wake_word("davinci")
    assert not F.contains_wake_word("the vincristine is upstairs")
    # the near-homophones the brief asks for are in
    for s in ("Pass me the grasper, please.", "The vinyl gloves are in the second drawer."):
        assert s in sents


def test_streams_cover_every_voice_and_condition(tmp_path: Path) -> None:
    voices = [A.voice_by_name("espeak-gb"), A.voice_by_name("flite-slt")]
    specs = F.plan_streams(tmp_path, minutes=4.0, voices=voices, conditions="clean,10",
                           sentences=[f"sentence {i}" for i in range(10)])
    assert [(s.voice.name, s.condition) for s in specs] == [
        ("espeak-gb", "clean"), ("espeak-gb", "snr10"), ("flite-slt", "clean"),
        ("flite-slt", "snr10")]
    assert all(s.seconds == pytest.approx(60.0) for s in specs)
    # each voice starts its conditions at different places of its shuffled list
    assert specs[0].sentences[0] != specs[1].sentences[0]
    assert sorted(specs[0].sentences) == sorted(specs[1].sentences)
    again = F.plan_streams(tmp_path, minutes=4.0, voices=voices, conditions="clean,10",
                           sentences=[f"sentence {i}" for i in range(10)])
    assert [s.path for s in again] == [s.path for s in specs]  # deterministic names


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_render_stream_mixes_speech_turns_in_noise(tmp_path: Path) -> None:
    v = A.voice_by_name("espeak-gb")
    spec = F.plan_streams(tmp_path, minutes=0.1, voices=[v], conditions="10",
                          sentences=["pass me the grasper", "more light please"])[0]
    path = F.render_stream(spec)
    meta = json.loads(path.with_suffix(".json").read_text())
    x = read_audio(path)
    assert meta["speech_seconds"] >= 6.0 and len(x) / SR == pytest.approx(meta["seconds"], 0.01)
    assert [s["text"] for s in meta["sentences"][:2]] == ["pass me the grasper",
                                                          "more light please"]
    ends = [s["end"] for s in meta["sentences"]]
    starts = [s["start"] for s in meta["sentences"]]
    assert all(b - a >= F.INTRA_TURN_PAUSE_S[0] - 0.01 for a, b in zip(ends, starts[1:],
                                                                       strict=False))
    # noise fills the pauses (SNR 10 dB): no stretch of digital silence
    pause = x[int((ends[0] + 0.05) * SR):int((starts[1] - 0.05) * SR)]
    assert np.sqrt(np.mean(pause ** 2)) > 1e-3


# ============================================================================ measuring
def test_cached_stt_remembers_by_audio(tmp_path: Path) -> None:
    inner = ScriptedSTT(["pass me the grasper", "second"])
    c = F.CachedSTT(inner, tmp_path / "cache.jsonl")
    a = np.ones(1600, np.float32) * 0.1
    t1 = c.transcribe(a)
    t2 = c.transcribe(a.copy())
    assert (t1.text, t2.text, inner.calls, c.hits) == ("pass me the grasper",
                                                       "pass me the grasper", 1, 1)
    assert t2.segments[0].avg_logprob == pytest.approx(-0.2)
    c2 = F.CachedSTT(ScriptedSTT([]), tmp_path / "cache.jsonl")  # from the file
    assert c2.transcribe(a).text == "pass me the grasper" and c2.misses == 0


def test_run_stream_reports_each_wake_decision() -> None:
    stt = ScriptedSTT(["pass me the grasper", "davinci", "zoom in", "the finch"])
    p = VoicePipeline(F._null_handler, stt=stt, vad=VadSegmenter(EnergyVad(), EndpointConfig()),
                      wake=WakeWordSpotter(), mode="realtime",
                      config=PipelineConfig(speak_replies=False, speculative_stt_s=None))
    d = F.run_stream(p, bursts(1.0, 1.0, 1.0, 1.0, gap=3.0))
    # the wake word opens a command; the next utterance is that command, not a wake check
    assert [(x["text"], x["detected"]) for x in d] == [
        ("pass me the grasper", False), ("davinci", True), ("the finch", False)]
    assert d[1]["t"] == pytest.approx(4.3, abs=0.4)


def test_measure_streams_and_summary(tmp_path: Path) -> None:
    streams = tmp_path / "streams"
    streams.mkdir()
    for i, texts in enumerate([["a"], ["b"]]):
        p = streams / f"s{i}.wav"
        A.write_wav(p, bursts(1.0 + i))
        p.with_suffix(".json").write_text(json.dumps({
            "voice": {"name": f"v{i}"}, "condition": "clean", "seconds": 1800.0,
            "speech_seconds": 900.0, "sentences": [{"text": texts[0], "start": 0.3,
                                                     "end": 1.3}]}))
    stt = ScriptedSTT(["da Vinci, show the CT", "hand me the stapler"])

    def factory() -> WakeWordSpotter:
        return WakeWordSpotter()

    logs: list[str] = []
    s = F.measure_streams(sorted(streams.glob("*.wav")), tmp_path / "results",
                          F.CachedSTT(stt, None), wake_factory=factory, log=logs.append,
                          speculative=False, vad=lambda: VadSegmenter(EnergyVad()))
    assert (s["streams"], s["minutes"], s["false_wakes"], s["per_hour"]) == (2, 60.0, 1, 1.0)
    assert s["per_hour_of_speech"] == 2.0
    assert s["triggers"][0]["heard"] == "da Vinci, show the CT"
    assert s["triggers"][0]["spoken"] == "a"
    assert len(logs) == 2 and "1 false wake" in logs[0]
    # resumable: finished streams are not measured again
    again = F.measure_streams(sorted(streams.glob("*.wav")), tmp_path / "results",
                              F.CachedSTT(ScriptedSTT([]), None), log=logs.append)
    assert again["false_wakes"] == 1 and len(logs) == 2


# ============================================================================ real audio
def _espeak(text: str, voice: str = "en-us", speed: int = 160) -> np.ndarray:
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "x.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(out), text],
                       check=True, capture_output=True)
        return read_audio(out)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_real_non_wake_speech_does_not_wake_the_console() -> None:
    from app.voice.stt import WhisperSTT  # noqa: PLC0415

    talk = ["Pass me the grasper, please.", "Can you increase the insufflation?",
            "The vinyl gloves are in the second drawer.", "Devices on the back table.",
            "Heart rate is seventy two."]
    gap = np.zeros(int(1.2 * SR), np.float32)
    parts = [gap]
    for i, t in enumerate(talk):
        parts += [_espeak(t, ("en-us", "en-gb", "en-us+m3")[i % 3]), gap]
    stream = np.concatenate(parts)
    stt = WhisperSTT(model="tiny.en").load()
    pipe = F.make_wake_pipeline(stt)
    decisions = F.run_stream(pipe, stream)
    assert len(decisions) >= 4, decisions  # the speech was heard and transcribed
    assert not any(d["detected"] for d in decisions), decisions
    # the same path still wakes on the wake word in that stream
    woke = F.run_stream(pipe, np.concatenate([stream, _espeak("da Vinci, show the CT"), gap]))
    assert [d["detected"] for d in woke].count(True) == 1, woke


# ============================================================================ wake rules
@pytest.mark.parametrize("text", ["The finch outside the window has been singing.",
                                  "the finch", "The Fensch outside the window"])
def test_a_wake_spelling_needs_its_v(text: str) -> None:
    assert not WakeWordSpotter().match(text).detected


@pytest.mark.parametrize("text", ["The Vinci, show the CT", "DaVenti, a bit more.",
                                  "Devinci, zoom out", "davinci"])
def test_the_v_rule_keeps_the_real_spellings(text: str) -> None:
    assert WakeWordSpotter().match(text).detected


class FakeVerifier:
    def __init__(self, score: float, floor: float = -15.0) -> None:
        self.score, self.min_logprob, self.last_score, self.calls = score, floor, None, 0

    def __call__(self, audio: np.ndarray) -> bool:
        self.calls += 1
        self.last_score = self.score
        return self.score >= self.min_logprob


def test_spotter_verify_hook() -> None:
    assert WakeWordSpotter().verify(np.zeros(10))  # no verifier: the transcript decides
    assert not WakeWordSpotter(verifier=FakeVerifier(-18.0)).verify(np.zeros(10))
    assert WakeWordSpotter(verifier=FakeVerifier(-3.0)).verify(np.zeros(10))

    def broken(_: np.ndarray) -> bool:
        raise RuntimeError("model gone")

    assert WakeWordSpotter(verifier=broken).verify(np.zeros(10))  # never deafens


def _pipe(texts: list[str], verifier: Any) -> tuple[VoicePipeline, list[Any]]:
    events: list[Any] = []
    calls: list[str] = []

    def handler(text: str, stt: Any = None) -> dict[str, Any]:
        calls.append(text)
        return {"reply": {"ok": True, "text": ""}}

    p = VoicePipeline(handler, stt=ScriptedSTT(texts),
                      vad=VadSegmenter(EnergyVad(), EndpointConfig()),
                      wake=WakeWordSpotter(verifier=verifier), mode="realtime",
                      config=PipelineConfig(speak_replies=False, speculative_stt_s=None))
    p.subscribe(events.append)
    p.calls = calls  # type: ignore[attr-defined]
    return p, events


def test_pipeline_drops_a_wake_word_the_audio_does_not_support() -> None:
    from app.voice.audio import FileSource  # noqa: PLC0415
    from app.voice.events import EventType  # noqa: PLC0415

    ver = FakeVerifier(-19.1)  # measured: "Devon is covering…" heard as "davinci's covering…"
    p, events = _pipe(["davinci's covering the recovery room."], ver)
    runs = p.run(FileSource(bursts(1.0)))
    end = next(e for e in events if e.type == EventType.WAKE_WORD_END)
    assert (end.data["detected"], end.data["reason"]) == (False, "unconfirmed")
    assert end.data["verify_logprob"] == -19.1 and ver.calls == 1
    assert p.calls == [] and runs[-1].outcome == "no-wake"  # type: ignore[attr-defined]

    ver = FakeVerifier(-4.0)
    p, events = _pipe(["davinci, show the CT", "pass me the grasper"], ver)
    p.run(FileSource(bursts(1.0, 1.0)))
    assert p.calls == ["show the CT"]  # type: ignore[attr-defined]
    assert ver.calls == 1  # only a transcript with the wake word is checked


def test_cached_verifier_scores_once(tmp_path: Path) -> None:
    cache = F.CachedSTT(ScriptedSTT([]), tmp_path / "c.jsonl")
    inner = FakeVerifier(-16.0)
    v = F.CachedVerifier(inner, cache)
    a = np.ones(3200, np.float32) * 0.1
    assert not v(a) and not v(a.copy()) and inner.calls == 1 and v.last_score == -16.0
    again = F.CachedVerifier(FakeVerifier(0.0), F.CachedSTT(ScriptedSTT([]), tmp_path / "c.jsonl"))
    assert not again(a) and again.verifier.calls == 0
    # a stand-in transcriber gets the plain spotter, a Whisper one the verifier
    assert F.default_spotter(ScriptedSTT([])).verifier is None


def test_the_verifier_checks_the_audio_whisper_transcribed() -> None:
    from app.voice.audio import FileSource  # noqa: PLC0415

    class Recording(FakeVerifier):
        def __call__(self, audio: np.ndarray) -> bool:
            self.seen = len(audio)
            return super().__call__(audio)

    class LenSTT(ScriptedSTT):
        def transcribe(self, audio: np.ndarray, **kw: Any) -> Transcript:
            self.lens = [*getattr(self, "lens", []), len(audio)]
            return super().transcribe(audio, **kw)

    ver = Recording(-3.0)
    stt = LenSTT(["davinci, zoom in"])
    p = VoicePipeline(F._null_handler, stt=stt, vad=VadSegmenter(EnergyVad(), EndpointConfig()),
                      wake=WakeWordSpotter(verifier=ver), mode="realtime",
                      config=PipelineConfig(speak_replies=False, speculative_stt_s=0.25))
    p.run(FileSource(bursts(1.0)))
    # transcribed during the pause (speculatively): the verifier gets that same audio, so
    # it can reuse Whisper's encoding of it
    assert stt.calls == 1 and ver.seen == stt.lens[0]


def test_encoder_memo_reuses_the_last_encoding() -> None:
    from app.voice.wake_verify import _EncoderMemo  # noqa: PLC0415

    class Model:
        calls = 0

        def encode(self, features: np.ndarray) -> str:
            Model.calls += 1
            return f"enc{Model.calls}"

    m = Model()
    memo = _EncoderMemo.install(m)
    assert _EncoderMemo.install(m) is memo  # once per model
    f = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert m.encode(f) == "enc1" and memo.lookup(f.copy()) == "enc1"
    assert memo.lookup(f + 1) is None
    m.encode(f + 1)
    m.encode(f + 2)  # keeps the last two
    assert memo.lookup(f) is None and memo.lookup(f + 2) == "enc3" and Model.calls == 3


def test_a_verifier_lets_near_spellings_through_to_the_audio_check() -> None:
    from app.voice.audio import FileSource  # noqa: PLC0415

    plain, checked = WakeWordSpotter(), WakeWordSpotter(verifier=FakeVerifier(-5.0))
    assert (plain.candidate_threshold, checked.candidate_threshold) == (0.87, 0.78)
    # heard on the dev split at 10 dB for "da Vinci, …" (flite, Piper)
    for text in ("Javinci, move back.", "The venti, make the axial big.", "Ravinci, zoom in."):
        assert not plain.match(text).detected
        assert checked.match(text, checked.candidate_threshold).detected
    p, _ = _pipe(["Javinci, move back."], FakeVerifier(-5.0))
    p.run(FileSource(bursts(1.0)))
    assert p.calls == ["move back."]  # type: ignore[attr-defined]
    p, _ = _pipe(["Javinci, move back."], FakeVerifier(-20.0))  # the audio says otherwise
    p.run(FileSource(bursts(1.0)))
    assert p.calls == []  # type: ignore[attr-defined]


class RescuingVerifier(FakeVerifier):
    """A verifier whose forced decode finds the name the transcript lost to noise."""

    def __init__(self, score: float, again: str, floor: float = -9.0) -> None:
        super().__init__(score)
        self.rescue_logprob, self.again, self.rescued = floor, again, 0

    def rescue(self, audio: np.ndarray) -> str | None:
        self.rescued += 1
        self.last_score = self.score
        return self.again if self.score >= self.rescue_logprob else None


def test_a_wake_word_lost_in_the_transcript_is_rescued_by_the_audio() -> None:
    from app.voice.audio import FileSource  # noqa: PLC0415
    from app.voice.events import EventType  # noqa: PLC0415

    # 10 dB noise: Whisper wrote no name at all; the forced "Da Vinci" scores -5
    ver = RescuingVerifier(-5.0, "davinci, zoom out.")
    p, events = _pipe(["Bench, zoom out."], ver)
    p.run(FileSource(bursts(1.0)))
    end = next(e for e in events if e.type == EventType.WAKE_WORD_END)
    assert end.data["detected"] and end.data["rescued"] and end.data["verify_logprob"] == -5.0
    assert p.calls == ["zoom out."]  # type: ignore[attr-defined]
    # OR talk with no name in the audio either: no wake, no command
    ver = RescuingVerifier(-16.0, "davinci, pass the grasper.")
    p, events = _pipe(["Pass the grasper."], ver)
    runs = p.run(FileSource(bursts(1.0)))
    assert p.calls == [] and runs[-1].outcome == "no-wake"  # type: ignore[attr-defined]
    assert ver.rescued == 1
    # a second transcript that still holds no wake word wakes nothing
    ver = RescuingVerifier(-5.0, "Pass the grasper.")
    p, _ = _pipe(["Pass the grasper."], ver)
    p.run(FileSource(bursts(1.0)))
    assert p.calls == []  # type: ignore[attr-defined]


def test_cached_verifier_rescues_once(tmp_path: Path) -> None:
    cache = F.CachedSTT(ScriptedSTT([]), tmp_path / "c.jsonl")
    inner = RescuingVerifier(-6.0, "davinci, show the CT.")
    v = F.CachedVerifier(inner, cache)
    a = np.ones(3200, np.float32) * 0.1
    assert v.rescue(a) == "davinci, show the CT." and v.rescue(a.copy()) == v.rescue(a)
    assert inner.rescued == 1 and inner.calls == 1 and v.last_score == -6.0
    low = F.CachedVerifier(RescuingVerifier(-12.0, "davinci, x"), F.CachedSTT(ScriptedSTT([]),
                                                                            None))
    assert low.rescue(a) is None and low.verifier.rescued == 0
    assert F.CachedVerifier(FakeVerifier(-1.0), cache).rescue(a) is None  # no rescue floor
