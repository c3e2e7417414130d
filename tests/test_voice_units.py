"""Voice pipeline logic without models: events, end-of-speech, audio sources, the microphone
path (faked and absent), wake word, stop words, self-hearing, STT filters, speech and chimes,
and the pipeline's run/event sequences with a scripted transcriber (app/voice/).

Real models run in tests/test_voice_models.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.voice import audio as audio_mod
from app.voice.audio import (
    NO_MIC_MESSAGE,
    ClipMarker,
    ClipSequence,
    FileSource,
    MicrophoneSource,
    NoMicrophone,
    RingBuffer,
    find_input_device,
    iter_text_lines,
    list_input_devices,
    read_audio,
    write_wav,
)
from app.voice.events import ErrorCode, EventType, ListeningState, PipelineEvent
from app.voice.pipeline import Mode, PipelineConfig, VoicePipeline
from app.voice.stt import (
    Segment,
    SttConfig,
    Transcript,
    collapse_loops,
    filter_segments,
    is_prompt_echo,
    speech_level_dbfs,
)
from app.voice.tts import NullPlayer, SilentEngine, Speaker, chime_tone, make_engine
from app.voice.vad import EndOfSpeech, EndpointConfig, VadSegmenter
from app.voice.wakeword import (
    SelfHearingGuard,
    WakeWordSpotter,
    contains_stop_word,
    is_stop_command,
    sensitivity_to_threshold,
)

SR = 16_000
WIN = 512


# ============================================================================ helpers
class EnergyVad:
    """A deterministic stand-in for Silero: loud windows are speech."""

    window = WIN

    def probability(self, window: np.ndarray) -> float:
        return 1.0 if float(np.sqrt(np.mean(window ** 2))) > 0.02 else 0.0

    def reset(self) -> None:
        pass


def tone(seconds: float, amp: float = 0.3, f: float = 220.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return (amp * np.sin(2 * np.pi * f * t)).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SR), np.float32)


def utterances(*durations: float, gap: float = 1.2) -> np.ndarray:
    """Speech-like bursts separated by silence longer than the end-of-speech pause."""
    parts = [silence(0.3)]
    for d in durations:
        parts += [tone(d), silence(gap)]
    return np.concatenate(parts)


class ScriptedSTT:
    """Returns the next scripted transcript for each utterance."""

    model_name = "scripted"

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.heard: list[float] = []  # durations of the audio it got

    def transcribe(self, audio: np.ndarray) -> Transcript:
        self.heard.append(len(audio) / SR)
        text = self.texts.pop(0) if self.texts else ""
        return Transcript(text, ms=1.0, raw_text=text)


class FakeHandler:
    def __init__(self, fail_on: str = "") -> None:
        self.calls: list[tuple[str, dict | None]] = []
        self.fail_on = fail_on

    def handle_text(self, text: str, stt: dict | None = None) -> dict[str, Any]:
        self.calls.append((text, stt))
        if self.fail_on and text == self.fail_on:
            raise RuntimeError("boom")
        ok = "stapler" not in text
        return {"id": str(len(self.calls)), "state": {"agent": "IV"}, "tier": "lexicon",
                "flow": ["audio", "stt", "correct", "route", "IV", "end"],
                "reply": {"ok": ok, "text": "Done." if ok else "Out of scope."}}


class ArraySource:
    """Frames of one array, not paced; optional callbacks at given frame numbers."""

    realtime = False
    sample_rate = SR
    frame_samples = 480

    def __init__(self, x: np.ndarray, at: dict[int, Any] | None = None) -> None:
        self.x, self.at = x, at or {}
        self.closed = False

    def frames(self) -> Iterator[np.ndarray]:
        for k, i in enumerate(range(0, len(self.x), self.frame_samples)):
            if k in self.at:
                self.at[k]()
            f = self.x[i:i + self.frame_samples]
            yield np.pad(f, (0, self.frame_samples - len(f)))

    def close(self) -> None:
        self.closed = True


def make_pipeline(texts: list[str], handler: Any = None, *, tts: Any = None,
                  config: PipelineConfig | None = None, mode: str = "synthesized",
                  guard: SelfHearingGuard | None = None) -> tuple[VoicePipeline, list]:
    events: list[PipelineEvent] = []
    p = VoicePipeline(handler if handler is not None else FakeHandler(), stt=ScriptedSTT(texts),
                      vad=VadSegmenter(EnergyVad(), EndpointConfig()), mode=mode,
                      tts=tts, config=config or PipelineConfig(), guard=guard)
    p.subscribe(events.append)
    return p, events


def listening(events: list[PipelineEvent]) -> list[str]:
    return [str(e.data["state"]) for e in events if e.type == EventType.LISTENING]


def types(events: list[PipelineEvent], run_id: str | None = None) -> list[str]:
    return [str(e.type) for e in events
            if e.type != EventType.LISTENING and (run_id is None or e.run_id == run_id)]


# ============================================================================ events
def test_event_names_follow_home_assistant() -> None:
    assert [str(t) for t in EventType][:13] == [
        "run-start", "run-end", "wake_word-start", "wake_word-end", "stt-start",
        "stt-vad-start", "stt-vad-end", "stt-end", "intent-start", "intent-end", "tts-start",
        "tts-end", "error"]
    assert ErrorCode.STT_NO_TEXT_RECOGNIZED == "stt-no-text-recognized"
    assert ErrorCode.WAKE_WORD_TIMEOUT == "wake-word-timeout"
    assert ErrorCode.NO_MICROPHONE == "no-microphone"
    assert {s.value for s in ListeningState} >= {"idle", "wake_heard", "recording", "thinking",
                                                 "done", "rejected", "speaking"}
    ev = PipelineEvent(EventType.ERROR, "v1", {"code": ErrorCode.NO_MICROPHONE,
                                               "arr": (1, 2), "obj": Path("/x")})
    d = json.loads(json.dumps(ev.to_dict()))
    assert d["type"] == "error" and d["data"]["code"] == "no-microphone"
    assert d["data"]["arr"] == [1, 2] and d["data"]["obj"] == "/x"


# ============================================================================ end of speech
def feed(eos: EndOfSpeech, probs: list[float], amp: float = 0.1) -> list:
    out = []
    for p in probs:
        out += eos.process(np.full(WIN, amp if p > 0.5 else 0.0, np.float32), p)
    return out


def n_win(seconds: float) -> int:
    return int(round(seconds * SR / WIN))


def test_end_of_speech_finds_one_utterance_with_preroll_and_tail() -> None:
    cfg = EndpointConfig(silence_s=0.6, preroll_s=0.5, tail_s=0.3)
    eos = EndOfSpeech(cfg)
    ev = feed(eos, [0.0] * n_win(1.0) + [0.9] * n_win(1.0) + [0.0] * n_win(1.0))
    kinds = [e.kind for e in ev]
    assert kinds == ["start", "end"]
    end = ev[1]
    assert end.reason == "silence"
    assert end.speech_start == pytest.approx(1.0, abs=0.04)
    assert end.speech_end == pytest.approx(2.0, abs=0.04)
    assert end.eos_wait_s == pytest.approx(0.6, abs=0.04)
    # pre-roll + speech + kept tail
    assert end.duration_s == pytest.approx(0.5 + 1.0 + 0.3, abs=0.07)
    assert end.voiced_s == pytest.approx(1.0, abs=0.04)
    assert eos.state == "silence"


def test_end_of_speech_ignores_blips_and_drops_too_little_speech() -> None:
    eos = EndOfSpeech(EndpointConfig(onset_s=0.1, min_speech_s=0.3))
    # one window (32 ms) is below the onset: nothing at all
    assert feed(eos, [0.0] * 10 + [0.9] + [0.0] * 40) == []
    # 0.16 s of speech opens an utterance but is too short to be a command: discarded
    ev = feed(eos, [0.9] * 5 + [0.0] * 40)
    assert [e.kind for e in ev] == ["start", "discard"]
    assert ev[1].reason == "too-short" and ev[1].audio is None


def test_end_of_speech_hysteresis_keeps_a_word_together() -> None:
    eos = EndOfSpeech(EndpointConfig(threshold=0.5, neg_threshold=0.3, silence_s=0.2))
    # 0.4 is between the thresholds: still speech, so no pause is counted
    ev = feed(eos, [0.9] * 10 + [0.4] * 20 + [0.9] * 5 + [0.0] * 20)
    assert [e.kind for e in ev] == ["start", "end"]
    assert ev[1].voiced_s == pytest.approx(35 * WIN / SR, abs=0.01)


def test_end_of_speech_hard_cap_then_continues() -> None:
    eos = EndOfSpeech(EndpointConfig(max_s=2.0))
    ev = feed(eos, [0.9] * n_win(5.0) + [0.0] * n_win(1.0))
    kinds = [e.kind for e in ev]
    assert kinds[:2] == ["start", "end"] and ev[1].reason == "max-length"
    assert ev[1].t - ev[1].speech_start == pytest.approx(2.0, abs=0.05)
    assert kinds.count("end") == 3  # 2 s + 2 s + the last 1 s ended by silence


def test_end_of_speech_manual_push_to_talk() -> None:
    eos = EndOfSpeech(EndpointConfig(silence_s=0.3, preroll_s=0.25, max_manual_s=3.0))
    feed(eos, [0.0] * n_win(1.0))
    start = eos.start()
    assert start.manual and eos.in_utterance
    # a long pause does not end a held push-to-talk
    ev = feed(eos, [0.9] * n_win(0.5) + [0.0] * n_win(1.0) + [0.9] * n_win(0.5))
    assert ev == []
    end = eos.end()
    assert end is not None and end.kind == "end" and end.reason == "manual" and end.manual
    assert end.duration_s == pytest.approx(0.25 + 2.0, abs=0.1)
    assert eos.end() is None  # nothing open any more
    # the hard cap still applies to a held button
    eos.start()
    ev = feed(eos, [0.0] * n_win(4.0))
    assert [e.reason for e in ev if e.kind == "end"] == ["max-length"]


def test_end_of_speech_flush_and_sensitivity_presets() -> None:
    eos = EndOfSpeech()
    feed(eos, [0.9] * n_win(1.0))
    ev = eos.end("end-of-stream")
    assert ev is not None and ev.reason == "end-of-stream"
    assert EndpointConfig.from_sensitivity("low").threshold > \
        EndpointConfig.from_sensitivity("high").threshold
    assert EndpointConfig.from_sensitivity(end="relaxed").silence_s > \
        EndpointConfig.from_sensitivity(end="aggressive").silence_s
    assert EndpointConfig().silence_s == 0.6  # well under the reference's 4 s
    c = EndpointConfig.from_sensitivity(0.5, 0.8, max_s=6.0)
    assert (c.threshold, c.silence_s, c.max_s) == (0.5, 0.8, 6.0)


def test_segmenter_rechunks_30ms_frames() -> None:
    seg = VadSegmenter(EnergyVad())
    x = utterances(0.8, 0.6)
    events = []
    for i in range(0, len(x), 480):
        events += seg.feed(x[i:i + 480])
    assert [e.kind for e in events] == ["start", "end", "start", "end"]
    assert len(VadSegmenter(EnergyVad()).speech_segments(x)) == 2


# ============================================================================ audio
def test_ring_buffer_keeps_the_latest() -> None:
    rb = RingBuffer(5)
    rb.write(np.arange(3, dtype=np.float32))
    assert rb.last(10).tolist() == [0, 1, 2]
    rb.write(np.arange(3, 7, dtype=np.float32))
    assert rb.last(5).tolist() == [2, 3, 4, 5, 6]
    rb.write(np.arange(10, 20, dtype=np.float32))
    assert rb.last(3).tolist() == [17, 18, 19] and rb.total == 17


def test_read_audio_resamples_and_mixes(tmp_path: Path) -> None:
    sr = 22_050
    t = np.arange(sr) / sr
    stereo = np.stack([np.sin(2 * np.pi * 440 * t), np.zeros(sr)], axis=1) * 0.5
    p = tmp_path / "stereo.wav"
    with wave.open(str(p), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes((stereo * 32767).astype("<i2").tobytes())
    x = read_audio(p)
    assert x.dtype == np.float32 and len(x) == pytest.approx(SR, abs=2)
    assert 0.2 < np.max(np.abs(x)) < 0.3  # the mono mix halves the one-sided tone
    with pytest.raises(audio_mod.AudioFileError):
        read_audio(tmp_path / "missing.wav")
    (tmp_path / "junk.wav").write_bytes(b"not audio at all")
    with pytest.raises(audio_mod.AudioFileError):
        read_audio(tmp_path / "junk.wav")


@pytest.mark.skipif(shutil.which("sox") is None, reason="sox not installed")
def test_read_audio_flac_through_pyav(tmp_path: Path) -> None:
    src = write_wav(tmp_path / "a.wav", tone(0.5))
    subprocess.run(["sox", str(src), "-r", "44100", str(tmp_path / "a.flac")], check=True)
    x = read_audio(tmp_path / "a.flac")
    assert len(x) == pytest.approx(0.5 * SR, abs=40)
    assert np.max(np.abs(x)) == pytest.approx(0.3, abs=0.03)


def test_file_source_and_clip_sequence(tmp_path: Path) -> None:
    a = write_wav(tmp_path / "1.wav", tone(0.3))
    b = write_wav(tmp_path / "10.wav", tone(0.2))
    write_wav(tmp_path / "2.wav", tone(0.1))
    (tmp_path / "notes.txt").write_text("x")
    fs = FileSource(a, tail_silence_s=0.5)
    frames = list(fs.frames())
    assert all(len(f) == 480 for f in frames)
    assert len(frames) == int(np.ceil(0.8 * SR / 480))
    seq = ClipSequence.from_folder(tmp_path)
    assert [Path(c).name for c in seq.clips] == ["1.wav", "2.wav", "10.wav"]  # natural order
    bad = ClipSequence([a, tmp_path / "missing.wav", b], gap_s=0.1, lead_s=0.0)
    marks = [m for m in bad.frames() if isinstance(m, ClipMarker)]
    assert [(m.index, m.kind) for m in marks] == [(0, "start"), (0, "end"), (1, "error"),
                                                  (2, "start"), (2, "end")]
    assert bad.errors and "missing.wav" in bad.errors[0][0]


def test_realtime_pacing_is_at_the_speed_of_sound() -> None:
    fs = FileSource(silence(0.3), realtime=True)
    t0 = time.perf_counter()
    n = sum(1 for _ in fs.frames())
    assert n == 10
    assert time.perf_counter() - t0 >= 0.25  # never faster than real time


def test_text_lines(tmp_path: Path) -> None:
    f = tmp_path / "cmds.txt"
    f.write_text("show the CT\n\n# a comment\n  zoom in  \n")
    assert iter_text_lines(f) == ["show the CT", "zoom in"]
    assert iter_text_lines(["a", " ", "#b", "c"]) == ["a", "c"]


# ============================================================================ microphone
class FakeStream:
    """A sounddevice.InputStream that delivers ``blocks`` from a thread once started."""

    instances: list[FakeStream] = []
    fail_rates: set[int] = set()

    def __init__(self, device: int, channels: int, samplerate: int, dtype: str, blocksize: int,
                 callback: Any) -> None:
        if samplerate in self.fail_rates:
            raise audio_mod._sounddevice().PortAudioError("Invalid sample rate")
        self.samplerate, self.callback, self.blocksize = samplerate, callback, blocksize
        self.stopped = False
        FakeStream.instances.append(self)

    def start(self) -> None:
        def run() -> None:
            x = tone(0.6, amp=0.5, f=300.0)
            if self.samplerate != SR:
                x = audio_mod.resample(x, SR, self.samplerate)
            for i in range(0, len(x) - self.blocksize + 1, self.blocksize):
                if self.stopped:
                    return
                self.callback(x[i:i + self.blocksize, None], self.blocksize, None, None)

        threading.Thread(target=run, daemon=True).start()

    def stop(self) -> None:
        self.stopped = True

    def close(self) -> None:
        pass


def _fake_devices(monkeypatch: pytest.MonkeyPatch, devices: list[dict] | Exception) -> None:
    sd = audio_mod._sounddevice()

    def query_devices() -> list[dict]:
        if isinstance(devices, Exception):
            raise devices
        return devices

    monkeypatch.setattr(sd, "query_devices", query_devices)


MIC = {"name": "USB Headset Mic", "max_input_channels": 1, "max_output_channels": 0,
       "default_samplerate": 48000.0}
SPEAKER = {"name": "HDMI out", "max_input_channels": 0, "max_output_channels": 2,
           "default_samplerate": 48000.0}


def test_no_microphone_is_a_plain_message(monkeypatch: pytest.MonkeyPatch) -> None:
    sd = audio_mod._sounddevice()
    _fake_devices(monkeypatch, sd.PortAudioError("Error querying device -1"))
    assert list_input_devices() == []
    with pytest.raises(NoMicrophone) as ei:
        MicrophoneSource().open()
    assert str(ei.value) == NO_MIC_MESSAGE == \
        "No microphone was found; touch and text commands still work."
    _fake_devices(monkeypatch, [SPEAKER])  # output only
    with pytest.raises(NoMicrophone):
        find_input_device(None)
    _fake_devices(monkeypatch, [SPEAKER, MIC])
    assert find_input_device("headset").index == 1
    assert find_input_device(1).name == MIC["name"]
    with pytest.raises(NoMicrophone, match="No microphone"):
        find_input_device("studio")


def test_pipeline_without_a_microphone_reports_and_stays_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sd = audio_mod._sounddevice()
    _fake_devices(monkeypatch, sd.PortAudioError("Error querying device -1"))
    p, events = make_pipeline([], mode="realtime")
    runs = p.run()  # the default microphone
    assert runs == []
    errors = [e for e in events if e.type == EventType.ERROR]
    assert [e.data["code"] for e in errors] == ["no-microphone"]
    assert errors[0].data["message"] == NO_MIC_MESSAGE
    assert p.listening == ListeningState.OFF
    # push-to-talk with no microphone: said plainly, nothing raised
    p.push_to_talk(True)
    assert [e.data["code"] for e in events if e.type == EventType.ERROR][-1] == "no-microphone"
    # and text commands still work through the same pipeline object's handler
    t = VoicePipeline(p.handler, stt=ScriptedSTT([]), vad=p.vad, mode="text")
    t.run(["show the CT"])
    assert p.handler.calls[-1][0] == "show the CT"


def test_background_start_without_microphone(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_devices(monkeypatch, [])
    p, events = make_pipeline([], mode="realtime")
    p.start().join(5)
    assert not p.running
    assert any(e.data.get("code") == "no-microphone" for e in events)


def test_microphone_capture_with_a_fake_device(monkeypatch: pytest.MonkeyPatch) -> None:
    sd = audio_mod._sounddevice()
    _fake_devices(monkeypatch, [SPEAKER, MIC])
    FakeStream.instances = []
    FakeStream.fail_rates = {SR}  # the device refuses 16 kHz: capture at 48 kHz, resample
    monkeypatch.setattr(sd, "InputStream", FakeStream)
    levels: list[tuple[float, float]] = []
    mic = MicrophoneSource("usb", on_level=lambda r, p: levels.append((r, p)), preroll_s=0.3)
    got: list[np.ndarray] = []
    for f in mic.frames():
        got.append(f)
        if len(got) == 15:
            break
    mic.close()
    assert FakeStream.instances[-1].samplerate == 48_000
    assert all(len(f) == 480 and f.dtype == np.float32 for f in got)
    assert np.max(np.abs(np.concatenate(got))) == pytest.approx(0.5, abs=0.05)
    assert levels and -10 < levels[0][0] < 0  # a 0.5-amplitude tone is about -9 dBFS RMS
    assert len(mic.preroll()) == int(0.3 * SR)
    # mute: the callback replaces input with silence (the chime is never transcribed)
    mic2 = MicrophoneSource(1)
    mic2.mute(5.0)
    frames = []
    for f in mic2.frames():
        frames.append(f)
        if len(frames) == 5:
            break
    mic2.close()
    assert max(float(np.max(np.abs(f))) for f in frames) == 0.0


# ============================================================================ wake word
POSITIVE = ["davinci, show the CT.", "Da Vinci, shoulder CT.", "Hey, da Vinci. Zoom in.",
            "The Vinci, show the CT", "Okay, Davinci, rotate left.", "Devinci, zoom out",
            "Da Vinchi, show the airway", "D.A. Vinci, show", "Da Vinci's show the CT",
            "DaVenti, a bit more.", "davinci"]
NEGATIVE = ["show the CT", "hand me the stapler", "Come in, kid, show the city",
            "The vein is bleeding", "Divine intervention", "David, pass the clamp",
            "Devin, show it", "the fence is up", "And inside, show the CT.", "Vincent is here",
            "we need more suction", "the patient is coughing", "The vent is alarming",
            "check the vent", "the venting is fine", "Adventure time", "", "..."]


@pytest.mark.parametrize("text", POSITIVE)
def test_wake_word_spotted(text: str) -> None:
    m = WakeWordSpotter().match(text)
    assert m.detected, m


@pytest.mark.parametrize("text", NEGATIVE)
def test_wake_word_not_spotted(text: str) -> None:
    assert not WakeWordSpotter().match(text).detected


def test_wake_word_command_in_one_breath_and_wake_only() -> None:
    w = WakeWordSpotter()
    m = w.match("Davinci, show the CT.")
    assert (m.heard, m.command, m.wake_only) == ("Davinci", "show the CT.", False)
    assert w.match("da Vinci.").wake_only
    assert w.strip_wake("davinci zoom in") == "zoom in"
    assert w.strip_wake("zoom in") == "zoom in"
    # only at the start (after fillers): a name in the middle is not for us
    assert not w.match("tell the nurse davinci is ready").detected
    assert not WakeWordSpotter(max_lead_words=0).match("hey davinci").detected


def test_wake_word_cooldown_and_sensitivity() -> None:
    now = [100.0]
    w = WakeWordSpotter(clock=lambda: now[0])
    assert w.detect("davinci").detected
    now[0] += 1.0
    m = w.detect("davinci, zoom in")
    assert not m.detected and m.reason == "cooldown"
    now[0] += 1.5  # 2.5 s after the first: cooldown over
    assert w.detect("davinci, zoom in").detected
    assert w.detect("davinci", now=200.0).detected and not w.detect("davinci", now=201.0).detected
    assert sensitivity_to_threshold(0.5) == pytest.approx(0.87)
    strict, loose = WakeWordSpotter(sensitivity=0.0), WakeWordSpotter(sensitivity=1.0)
    assert loose.match("Vinci, show the CT").detected  # a clipped "da"
    assert not strict.match("Vinci, show the CT").detected
    assert not strict.match("the vince, zoom").detected


def test_wake_prefilter_hook() -> None:
    seen = []
    w = WakeWordSpotter(prefilter=lambda a: seen.append(len(a)) or False)
    assert not w.passes_prefilter(np.zeros(10))
    assert seen == [10]
    broken = WakeWordSpotter(prefilter=lambda a: 1 / 0)
    assert broken.passes_prefilter(np.zeros(3))  # a broken pre-filter never deafens us


def test_stop_words() -> None:
    for t in ["Stop.", "cancel", "Cancel that!", "be quiet", "Davinci, stop.", "okay stop",
              "never mind"]:
        assert is_stop_command(t), t
    for t in ["stop the rotation", "show the CT", "", "stopwatch"]:
        assert not is_stop_command(t), t
    assert contains_stop_word("CT views shown stop")
    assert not contains_stop_word("rotation stopped", ignore="")
    assert not contains_stop_word("stop rotating", ignore="Say stop to stop rotating")


def test_self_hearing_guard() -> None:
    now = [0.0]
    g = SelfHearingGuard(tail_s=0.5, memory_s=2.0, clock=lambda: now[0])
    assert not g.is_guarded()
    g.speaking("CT views shown.")
    assert g.is_guarded() and g.is_echo("CT views shown")
    now[0] = 3.0
    g.done()
    assert g.is_guarded()  # the tail
    now[0] = 3.6
    assert not g.is_guarded()
    assert g.is_echo("views shown")  # a fragment of it, just after
    assert not g.is_echo("zoom in")
    now[0] = 6.0
    assert not g.is_echo("CT views shown")  # long after: the user may say the same words


# ============================================================================ STT filters
def seg(text: str, lp: float = -0.3, ns: float = 0.05, cr: float = 1.2) -> Segment:
    return Segment(text, 0.0, 1.0, lp, ns, cr)


def test_filters_drop_silence_hallucinations() -> None:
    cfg = SttConfig()
    # What tiny.en says over silence with the vocabulary prompt (measured): a prompt echo.
    text, why = filter_segments([seg(" davinci, CT,", -0.96, 0.94, 0.6)], -120.0, cfg)
    assert text == "" and why == ["no-speech"]
    text, why = filter_segments([seg(" davinci, CT,", -0.4, 0.5, 0.6)], -60.0, cfg)
    assert text == "" and why == ["prompt-echo"]
    # base loops on the prompt over noise
    loop = " PFT, " + "BMI, " * 60
    text, why = filter_segments([seg(loop, -0.09, 0.81, 18.6)], -25.0, cfg)
    assert text == "" and why
    # "thank you" over quiet audio is dropped; said loudly and confidently it stays
    assert filter_segments([seg(" Thank you.")], -60.0, cfg)[0] == ""
    assert filter_segments([seg(" you", -0.9, 0.2)], -30.0, cfg)[0] == ""
    assert filter_segments([seg(" Thank you.")], -20.0, cfg)[0] == "Thank you."
    assert filter_segments([seg(" ...")], -20.0, cfg) == ("", ["punctuation-only"])
    # the brief's rule: low log-probability together with a likely no-speech
    assert filter_segments([seg(" show", -1.2, 0.65)], -20.0, cfg)[0] == ""
    # a real command is kept, including domain words alone when loud and sure
    assert filter_segments([seg(" davinci, show the CT.")], -18.0, cfg)[0] == \
        "davinci, show the CT."
    assert filter_segments([seg(" CT")], -18.0, cfg)[0] == "CT"


def test_loops_collapse_but_repeated_directions_stay() -> None:
    assert collapse_loops("show the CT show the CT show the CT") == "show the CT"
    assert collapse_loops("left left left") == "left left left"
    assert collapse_loops("zoom in, zoom in, zoom in, zoom in") == "zoom in,"
    assert is_prompt_echo("Vocabulary: davinci, CT.") and not is_prompt_echo("show the CT")
    assert speech_level_dbfs(np.zeros(SR)) < -100
    assert speech_level_dbfs(tone(1.0, amp=0.5)) == pytest.approx(-9.0, abs=0.5)


def test_prompt_leak_is_decoded_again_without_the_prompt() -> None:
    from types import SimpleNamespace

    from app.voice.stt import WhisperSTT, prompt_leak

    # Transcripts measured on the dev split (Piper voice) where the vocabulary prompt's list
    # style leaked in, and ordinary ones that must not trigger a second decode.
    for t in ["davinci, davinci, davinci, davinci,", "PFT,", "trachea, CT.",
              "axial, dinci, axial,", "PFT, VINci, remove the 3D model and the CT.",
              "PFT, pathologist.", "CHO, axial,"]:
        assert prompt_leak(t), t
    for t in ["davinci, show the CT.", "coronal, plus 100.", "sagittal, 200.",
              "left, left, left.", "Davinci, zoom in.", "show the PFT and the tumor location.",
              "BMI please", "davinci, anterior.", "Davinci, CT", ""]:
        assert not prompt_leak(t), t

    class FakeModel:
        def __init__(self) -> None:
            self.prompts: list[str | None] = []
            self.prefixes: list[str | None] = []

        def transcribe(self, x: np.ndarray, initial_prompt: str | None = None,
                       prefix: str | None = None, **kw: Any) -> tuple[list, None]:
            self.prompts.append(initial_prompt)
            self.prefixes.append(prefix)
            text = " davinci, davinci, davinci," if initial_prompt else f" {prefix} erase all."
            return [SimpleNamespace(text=text, start=0.0, end=1.0, avg_logprob=-0.2,
                                    no_speech_prob=0.05, compression_ratio=1.1)], None

    stt = WhisperSTT(SttConfig(nbest=1), lock=None)
    stt._model = FakeModel()
    tr = stt.transcribe(tone(1.0))
    # the wake word heard first is kept as a forced prefix of the second decode
    assert tr.text == "davinci, erase all." and tr.dropped[0] == "prompt-leak"
    assert tr.first_raw_text == "davinci, davinci, davinci,"
    assert stt._model.prompts[0] and stt._model.prompts[1] is None
    assert stt._model.prefixes == [None, "davinci,"]
    assert tr.to_dict()["first_raw_text"]


def test_nbest_rescoring_prefers_the_command_whisper_ranked_second() -> None:
    from app.language.validation import CommandScorer
    from app.voice.hearing_choice import choose_hypothesis

    sc = CommandScorer()
    # Beams measured on the dev split (tiny.en, Piper voice): the command is in the beam but
    # not on top.
    beam = [("Two men.", -0.32), ("Zoom in.", -0.88), ("2 men.", -0.98), ("zoom in.", -1.11)]
    assert choose_hypothesis(beam, sc, weight=1.5)[0] == 1
    beam = [("Joby, am I?", -0.74), ("Jobi, am I?", -0.9), ("Show BMI.", -1.04)]
    assert choose_hypothesis(beam, sc, weight=1.5)[0] == 2
    # Whisper's choice stands: no scorer, a far-fetched alternative, no better coverage, or
    # an out-of-scope top that must not turn into a console command.
    assert choose_hypothesis(beam, None)[0] == 0
    assert choose_hypothesis([("Two men.", -0.3), ("Zoom in.", -1.5)], sc, 1.5, 0.8)[0] == 0
    assert choose_hypothesis([("Show the CT.", -0.3), ("Show the city.", -0.4)], sc, 1.5)[0] == 0
    assert choose_hypothesis([("Page the pathologist.", -0.3), ("Page the PFT.", -0.5)],
                             sc, 1.5)[0] == 0
    # an out-of-scope reading ranked above a candidate blocks it (measured on the dev split)
    beam = [("What's the selection setting?", -0.41), ("What's the suction setting?", -0.43),
            ("What's the function setting?", -0.64)]
    assert choose_hypothesis(beam, sc, 2.0, 1.0)[0] == 0
    # chatter does not become a command that only partly reads as one
    beam = [("That's amazing.", -1.05), ("It's amazing.", -1.14), ("And I'm gonna rotate.", -1.67)]
    assert choose_hypothesis(beam, sc)[0] == 0
    assert choose_hypothesis(beam, sc, min_coverage=0.0)[0] == 2
    # the wake word is Whisper's call: no false wake from a rescored hypothesis
    assert choose_hypothesis([("The vent is fine.", -0.3), ("Davinci, show the CT.", -0.5)],
                             sc, 1.5)[0] == 0
    idx, covs = choose_hypothesis([("Zoom in.", -0.2)], sc)
    assert idx == 0 and covs == [1.0]


def test_command_scorer_coverage_counts_console_words() -> None:
    from app.language.validation import CommandScorer

    sc = CommandScorer()
    assert sc.coverage("Zoom in.") == 1.0
    assert sc.coverage("See you now.") == 0.0
    assert sc.coverage("Two men.") == 0.5          # a number is a console word, "men" is not
    assert sc.coverage("Move inferior 15.") == 1.0
    assert sc.coverage("davinci, show the CT") == 1.0  # the wake word is not counted
    assert sc.coverage("") == 0.0
    assert sc.pinned("page the pathologist") and not sc.pinned("show the CT")


# ============================================================================ speech
class ToneEngine:
    name = "tone"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def synthesize(self, text: str) -> tuple[np.ndarray, int]:
        return tone(self.seconds), SR


def test_chimes() -> None:
    for kind in ("wake", "done", "error"):
        c = chime_tone(kind, volume=0.5)
        assert c.dtype == np.float32 and 0.05 < len(c) / 22050 <= 0.25
        assert np.max(np.abs(c)) <= 0.5 + 1e-6
        assert abs(c[0]) < 0.01 and abs(c[-1]) < 0.05  # faded: no click
    assert np.max(np.abs(chime_tone("wake", volume=0.0))) == 0.0
    s = Speaker(SilentEngine(), player=NullPlayer(), chime=True, chime_volume=0.3)
    assert s.chime("wake") > 0
    assert Speaker(SilentEngine(), player=NullPlayer(), chime=False).chime("wake") == 0.0


def test_stop_interrupts_speech_at_once() -> None:
    ends: list[Any] = []
    s = Speaker(ToneEngine(3.0), player=NullPlayer(simulate=True), on_end=ends.append)
    t0 = time.perf_counter()
    s.say("A long confirmation that nobody wants to hear.")
    time.sleep(0.1)
    assert s.is_speaking
    assert s.stop() is True
    assert time.perf_counter() - t0 < 1.5
    assert not s.is_speaking and ends and ends[0].interrupted
    assert s.stop() is False  # nothing playing


def test_silent_engine_and_engine_choice() -> None:
    assert make_engine("none").name == "none"
    with pytest.raises(ValueError):
        make_engine("festival")
    starts, ends = [], []
    s = Speaker("none", player=NullPlayer(), on_start=starts.append, on_end=ends.append)
    s.say("CT views shown.", block=True)
    assert starts[0].duration_s == 0 and not ends[0].spoken and not ends[0].interrupted
    assert make_engine("auto").name in ("piper", "espeak-ng", "none")


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_espeak_engine_as_a_separate_process() -> None:
    audio, sr = make_engine("espeak").synthesize("CT views shown.")
    assert sr > 8000 and 0.3 < len(audio) / sr < 4 and np.max(np.abs(audio)) > 0.05


# ============================================================================ pipeline
ONE_BREATH = ["run-start", "wake_word-start", "stt-vad-start", "stt-vad-end", "stt-start",
              "stt-end", "wake_word-end", "intent-start", "intent-end", "tts-start", "tts-end",
              "run-end"]


def test_pipeline_wake_and_command_in_one_breath() -> None:
    p, events = make_pipeline(["Davinci, show the CT."])
    runs = p.run([utterances(1.0)])
    assert p.handler.calls[0][0] == "show the CT."
    stt_info = p.handler.calls[0][1]
    assert stt_info["text"] == "show the CT." and stt_info["ms"] == 1.0
    assert [r.outcome for r in runs] == ["done"]
    assert runs[0].types() == ONE_BREATH
    assert listening(events) == ["idle", "wake_heard", "thinking", "done", "idle", "off"]
    end = next(e for e in events if e.type == EventType.INTENT_END)
    lat = end.data["latency"]
    assert lat["clock"] == "audio+wall" and lat["eos_wait_ms"] == pytest.approx(600, abs=40)
    assert lat["total_ms"] >= lat["eos_wait_ms"]
    # the audio Whisper got: pre-roll + speech + a short tail, not the whole pause
    assert p.stt.heard[0] == pytest.approx(0.5 + 1.0 + 0.3, abs=0.1)  # pre-roll is 0.5 s


def test_pipeline_wake_only_then_command() -> None:
    p, events = make_pipeline(["davinci", "zoom in"])
    runs = p.run([utterances(0.6), utterances(0.8)])  # two clips, one run
    assert [c[0] for c in p.handler.calls] == ["zoom in"]
    assert len(runs) == 1 and runs[0].outcome == "done"
    assert runs[0].types() == [
        "run-start", "wake_word-start", "stt-vad-start", "stt-vad-end", "stt-start", "stt-end",
        "wake_word-end", "stt-vad-start", "stt-vad-end", "stt-start", "stt-end",
        "intent-start", "intent-end", "tts-start", "tts-end", "run-end"]
    assert listening(events) == ["idle", "wake_heard", "recording", "thinking", "done", "idle",
                                 "off"]


def test_pipeline_tells_the_stt_when_only_its_name_can_matter() -> None:
    # waiting for the wake word, the STT may skip its extra work on other talk; for the
    # command after a lone wake word it must not
    p, _ = make_pipeline(["davinci", "zoom in"])
    seen: list[bool] = []
    p.stt.domain_needs_wake = False
    orig = p.stt.transcribe

    def transcribe(audio: np.ndarray) -> Transcript:
        seen.append(p.stt.domain_needs_wake)
        return orig(audio)

    p.stt.transcribe = transcribe  # type: ignore[method-assign]
    p.run([utterances(0.6), utterances(0.8)])
    assert seen[0] is True and seen[-1] is False


def test_pipeline_wake_only_times_out() -> None:
    p, events = make_pipeline(["davinci"], config=PipelineConfig(wake_timeout_s=2.0))
    x = np.concatenate([utterances(0.6), silence(3.0)])
    runs = p.run([x])
    assert p.handler.calls == []
    assert runs[0].outcome == "timeout"
    assert [e.data["code"] for e in events if e.type == EventType.ERROR] == ["wake-word-timeout"]
    assert listening(events)[-2:] == ["idle", "off"]


def test_pipeline_ignores_speech_without_the_wake_word() -> None:
    p, events = make_pipeline(["hand me the stapler", "show the CT"])
    runs = p.run([utterances(1.0, 0.8)])
    assert p.handler.calls == []
    assert [r.outcome for r in runs] == ["no-wake", "no-wake"]
    # the indicator never claimed to be listening to other people's conversation
    assert listening(events) == ["idle", "off"]


def test_pipeline_distrusts_a_wake_word_whisper_doubts() -> None:
    class DoubtfulSTT(ScriptedSTT):
        def transcribe(self, audio: np.ndarray) -> Transcript:
            tr = super().transcribe(audio)
            tr.segments = [Segment(tr.text, 0, 1, -1.47, 0.06, 1.0)]
            return tr

    p = VoicePipeline(FakeHandler(), stt=DoubtfulSTT(["So, davinci, homely."]),
                      vad=VadSegmenter(EnergyVad()), mode="synthesized")
    runs = p.run([utterances(1.0)])
    assert p.handler.calls == [] and runs[0].outcome == "no-wake"
    end = next(e for e in runs[0].events if e.type == EventType.WAKE_WORD_END)
    assert end.data["reason"] == "low-confidence" and end.data["avg_logprob"] == -1.47


def test_pipeline_stop_word_needs_no_wake_word() -> None:
    p, events = make_pipeline(["stop"])
    runs = p.run([utterances(0.4)])
    assert runs[0].outcome == "stop" and p.handler.calls == []
    assert "stop" in runs[0].types()


def test_pipeline_cancel_while_waiting_for_the_command() -> None:
    p, events = make_pipeline(["davinci", "cancel"])
    runs = p.run([utterances(0.6, 0.5)])
    assert p.handler.calls == [] and runs[0].outcome == "stop"
    stop = next(e for e in events if e.type == EventType.STOP)
    assert stop.data["cancelled"] is True


def test_pipeline_nothing_recognised_after_the_wake_word() -> None:
    p, events = make_pipeline(["davinci", ""])
    runs = p.run([utterances(0.6, 0.6)])
    assert p.handler.calls == [] and runs[0].outcome == "no-text"
    assert [e.data["code"] for e in events if e.type == EventType.ERROR] == \
        ["stt-no-text-recognized"]
    assert "rejected" in listening(events)


def test_pipeline_without_wake_and_empty_commands_passed_on() -> None:
    cfg = PipelineConfig(require_wake=False, empty_command="pass")
    p, events = make_pipeline(["show the CT", ""], config=cfg)
    runs = p.run([utterances(0.8), utterances(0.5)])
    assert [c[0] for c in p.handler.calls] == ["show the CT", ""]
    assert runs[0].types()[:3] == ["run-start", "stt-vad-start", "stt-vad-end"]


def test_pipeline_rejected_command_and_failing_handler() -> None:
    h = FakeHandler(fail_on="crash")
    p, events = make_pipeline(["davinci hand me the stapler", "davinci crash", "davinci zoom in"],
                              handler=h)
    runs = p.run([utterances(1.0), utterances(1.0), utterances(1.0)])
    assert [r.outcome for r in runs] == ["rejected", "intent-failed", "done"]
    assert [e.data["code"] for e in events if e.type == EventType.ERROR] == ["intent-failed"]
    assert "rejected" in listening(events)


def test_pipeline_self_hearing_is_ignored() -> None:
    now = [0.0]
    guard = SelfHearingGuard(clock=lambda: now[0])
    p, events = make_pipeline(["davinci, zoom in", "CT views shown"], guard=guard)
    guard.speaking("Davinci, zoom in. CT views shown.")  # the console is talking
    runs = p.run([utterances(1.0, 1.0)])
    assert p.handler.calls == []  # even its own "davinci, zoom in" is not obeyed
    assert [r.outcome for r in runs] == ["self-hearing", "self-hearing"]
    assert all(e.data["code"] == "self-hearing-ignored"
               for e in events if e.type == EventType.ERROR)
    # and a reply heard back just after it ended is an echo, not a command
    guard.done()
    now[0] = 1.0
    p2, _ = make_pipeline(["zoom in"], guard=guard)
    guard.speaking("zoom in")
    guard.done()
    now[0] = 2.0
    assert p2.run([utterances(0.6)])[0].outcome == "self-hearing"


def test_pipeline_barge_in_stop_interrupts_the_reply() -> None:
    speaker = Speaker(ToneEngine(4.0), player=NullPlayer(simulate=True), chime=False)
    p, events = make_pipeline(["davinci, show the CT", "stop"], tts=speaker)

    def reply_playing() -> None:  # the second utterance starts once the reply is audible
        deadline = time.monotonic() + 3
        while p.listening != ListeningState.SPEAKING and time.monotonic() < deadline:
            time.sleep(0.01)

    t0 = time.perf_counter()
    # "stop" (at 2.5 s, frame 83) comes while the 4 s reply plays
    runs = p.run(ArraySource(utterances(1.0, 0.4), at={80: reply_playing}))
    speaker.wait(5)
    assert time.perf_counter() - t0 < 3.5
    assert [r.outcome for r in runs] == ["done", "stop"]
    stop = next(e for e in events if e.type == EventType.STOP)
    assert stop.data["interrupted_tts"] is True
    tts_end = next(e for e in events if e.type == EventType.TTS_END)
    assert tts_end.data["interrupted"] is True
    assert "speaking" in listening(events)


def test_pipeline_push_to_talk_skips_the_wake_word() -> None:
    p, events = make_pipeline(["zoom in"])
    x = np.concatenate([silence(0.5), tone(0.4), silence(1.0), tone(0.4), silence(0.5)])
    # press at 0.3 s, release at 2.4 s: the 1 s pause inside does not end the command
    src = ArraySource(x, at={10: lambda: p.push_to_talk(True), 80: lambda: p.push_to_talk(False)})
    p._source = src  # as if the microphone were open
    runs = p.run(src)
    assert [c[0] for c in p.handler.calls] == ["zoom in"]
    assert len(p.stt.heard) == 1 and p.stt.heard[0] > 1.8
    assert runs[0].trigger == "push-to-talk" and runs[0].types()[:2] == ["run-start",
                                                                         "stt-vad-start"]
    assert listening(events) == ["idle", "recording", "thinking", "done", "idle", "off"]


def test_pipeline_transcribes_during_the_pause() -> None:
    # A 0.4 s pause inside the command: transcribed speculatively after 0.25 s, then the
    # speaker resumes, so that transcript is thrown away; the final pause's one is used
    # without transcribing again at the endpoint.
    p, events = make_pipeline(["davinci show", "davinci show the CT"])
    x = np.concatenate([silence(0.3), tone(0.6), silence(0.4), tone(0.5), silence(1.2)])
    runs = p.run([x])
    assert [c[0] for c in p.handler.calls] == ["show the CT"]
    assert len(p.stt.heard) == 2
    stt_end = [e for e in events if e.type == EventType.STT_END]
    assert len(stt_end) == 1 and stt_end[0].data["speculative"] is True
    lat = runs[0].latency
    assert lat["speculative"] and lat["eos_wait_ms"] == pytest.approx(600, abs=40)
    # without speculation: one transcription, at the endpoint
    p2, events2 = make_pipeline(["davinci show the CT"],
                                config=PipelineConfig(speculative_stt_s=None))
    p2.run([x])
    assert len(p2.stt.heard) == 1 and p2.handler.calls[0][0] == "show the CT"
    assert next(e for e in events2 if e.type == EventType.STT_END).data["speculative"] is False


def test_push_to_talk_barges_in_and_is_never_self_hearing() -> None:
    speaker = Speaker(ToneEngine(4.0), player=NullPlayer(simulate=True), chime=False)
    p, events = make_pipeline(["davinci, show the CT", "CT views shown"], tts=speaker)

    def press() -> None:  # while the 4 s reply plays: the user presses and talks
        deadline = time.monotonic() + 3
        while p.listening != ListeningState.SPEAKING and time.monotonic() < deadline:
            time.sleep(0.01)
        p.push_to_talk(True)

    x = np.concatenate([utterances(1.0), tone(0.5), silence(0.3)])
    src = ArraySource(x, at={85: press, 100: lambda: p.push_to_talk(False)})
    p._source = src
    runs = p.run(src)
    speaker.wait(5)
    # the reply was cut off, and the push-to-talk command went through even though it
    # repeats what the console was saying
    assert [c[0] for c in p.handler.calls] == ["show the CT", "CT views shown"]
    assert any(e.type == EventType.STOP and e.data.get("source") == "push-to-talk"
               for e in events)
    assert runs[-1].trigger == "push-to-talk" and runs[-1].outcome == "done"


def test_pipeline_text_mode() -> None:
    p, events = make_pipeline([], mode="text")
    runs = p.run(["davinci, show the CT", "# a comment", "stop", "zoom in"])
    assert [c[0] for c in p.handler.calls] == ["show the CT", "zoom in"]
    assert p.handler.calls[0][1] is None  # no STT stage in the trace
    assert [r.outcome for r in runs] == ["done", "stop", "done"]
    assert runs[0].types() == ["run-start", "intent-start", "intent-end", "tts-start", "tts-end",
                               "run-end"]


def test_pipeline_keeps_the_last_runs_and_debug_recordings(tmp_path: Path) -> None:
    texts = [f"davinci zoom in {i}" for i in range(12)]
    p, _ = make_pipeline(texts, config=PipelineConfig(record_dir=tmp_path / "rec"))
    runs = p.run([utterances(*[0.5] * 12)])
    assert len(runs) == 10 and runs[0].id == "v3"
    wavs = sorted((tmp_path / "rec").glob("*.wav"))
    assert len(wavs) == 12
    assert p.handler.calls[-1][1]["audio"] == str(wavs[-1]) or \
        Path(p.handler.calls[-1][1]["audio"]).exists()
    assert json.dumps(runs[-1].to_dict())


def test_pipeline_survives_a_broken_subscriber_and_stops_cleanly() -> None:
    p, events = make_pipeline(["davinci zoom in"] * 100)
    p.subscribe(lambda e: 1 / 0)

    class Endless:
        realtime = True
        sample_rate, frame_samples = SR, 480

        def __init__(self) -> None:
            self.closed = threading.Event()

        def frames(self) -> Iterator[np.ndarray]:
            x = utterances(0.5)
            while not self.closed.is_set():
                for i in range(0, len(x) - 480, 480):
                    time.sleep(0.001)
                    yield x[i:i + 480]

        def close(self) -> None:
            self.closed.set()

    p.start(Endless())
    deadline = time.time() + 5
    while not p.handler.calls and time.time() < deadline:
        time.sleep(0.02)
    p.stop(timeout=5)
    assert not p.running and p.handler.calls
    assert p.listening == ListeningState.OFF
    with pytest.raises(RuntimeError):
        p.start(Endless())
        p.start(Endless())
    p.stop()


def test_pipeline_reports_unreadable_clips(tmp_path: Path) -> None:
    good = write_wav(tmp_path / "a.wav", utterances(0.8))
    p, events = make_pipeline(["davinci zoom in"])
    runs = p.run([tmp_path / "missing.wav", good])
    assert [e.data["code"] for e in events if e.type == EventType.ERROR] == \
        ["audio-source-failed"]
    assert [r.outcome for r in runs] == ["done"]


def test_mode_values_and_push_to_talk_while_stopped() -> None:
    assert [m.value for m in Mode] == ["realtime", "synthesized", "text"]
    p, events = make_pipeline([])
    p.push_to_talk(True)  # nothing running, but a microphone was never missing
    assert [e.data["code"] for e in events if e.type == EventType.ERROR] == ["not-listening"]


# ============================================================================ python -m app.voice
def test_voice_cli_devices_text_and_no_microphone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from app.session.voice_main import main

    monkeypatch.setenv("VISA_TIERS", "")  # the lexicon tier only: no model loads here
    _fake_devices(monkeypatch, [])
    assert main(["--list-devices"]) == 0
    assert "No audio devices were found." in capsys.readouterr().out
    cmds = tmp_path / "cmds.txt"
    cmds.write_text("davinci, show the CT\nzoom in\n")
    assert main(["--mode", "text", "--commands", str(cmds), "--tts", "none"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert any("intent-end" in line for line in out)
    assert json.loads(out[-1])["iv"]["mode"] == "zoom_view"
    # realtime without a microphone: a plain sentence and a non-zero status, no traceback
    assert main(["--mode", "realtime", "--tts", "none"]) == 2
    assert NO_MIC_MESSAGE in capsys.readouterr().err


def test_sensitivity_can_change_while_configured() -> None:
    p, events = make_pipeline([])
    p.set_sensitivity(wake=0.9, vad="low", end_silence_s=1.0)
    assert p.wake.sensitivity == 0.9 and p.wake.threshold < 0.8
    assert p.vad.config.threshold == 0.65 and p.vad.config.silence_s == 1.0
    assert events[-1].data["settings"]["end_silence_s"] == 1.0


def test_soundalike_rewrites_propose_console_words_for_unknown_ones() -> None:
    from app.language.soundalike import SoundalikeScorer, alike, variants

    # Mishearings measured on the dev split's audio (tiny.en): the meant text is proposed.
    assert "Show the right lung." in variants("Chill the right lung.")
    assert "Erase all." in variants("Grace all.")
    assert "What's at the very top of the scan?" in variants(
        "What's at the very top of the skin?")
    assert {"Anterior 20.", "Posterior 20."} <= set(variants("Asterior 20."))
    assert any(t == "RML" for t, _ in alike("Agoramal"))
    # Every word known (or a number): nothing to propose; the limit holds.
    assert variants("Zoom in on the nodule.") == []
    assert variants("Coronal plus 40.") == []
    assert variants("Show the 3D model.") == []  # "3D" is one word, not "3" and "D"
    assert len(variants("Let me know when the stapler is ready.", limit=3)) <= 3
    sc = SoundalikeScorer(limit=2)
    assert len(sc.variants("What's at the very top of the skin?")) == 2
    assert sc.coverage("Zoom in.") == 1.0 and sc.pinned("Page the pathologist.")


def test_soundalike_rewrites_offer_both_readings_of_a_hyphenated_plane_step() -> None:
    from app.language.soundalike import SoundalikeScorer

    sc = SoundalikeScorer()
    # Whisper writes "sag minus 40" as "sag-40" and "ax 40" as "Ax-40": the audio picks
    assert sc.variants("sag-40.")[:2] == ["sag minus 40.", "sag 40."]
    assert sc.variants("Ax-40.")[:2] == ["Ax minus 40.", "Ax 40."]
    assert sc.variants("X-30.")[:2] == ["X minus 30.", "X 30."]
    assert sc.variants("Show the CT.") == []
    assert sc.variants("Covid-19.") == [] or "Covid minus 19." not in sc.variants("Covid-19.")


def test_choose_soundalike_needs_the_audio_to_agree() -> None:
    from app.language.soundalike import SoundalikeScorer
    from app.voice.hearing_choice import choose_soundalike

    sc = SoundalikeScorer()
    top = "Chill the right lung."
    # per-token log-probabilities of a forced decode (measured: -0.50 vs -0.73)
    scores = {top: -0.50, "Show the right lung.": -0.73, "3D lung.": -1.9}
    assert choose_soundalike(top, top, scores, sc) == "Show the right lung."
    # the audio says otherwise: too far below Whisper's own reading
    assert choose_soundalike(top, top, {**scores, "Show the right lung.": -1.8}, sc) is None
    # an out-of-scope top is never rewritten into a command; a rewrite must add coverage
    oos = "Page the pathologist."
    assert choose_soundalike(oos, oos, {oos: -0.3, "Page the PFT.": -0.31}, sc) is None
    assert choose_soundalike("Zoom in.", "Zoom in.", {"Zoom in.": -0.3, "Zoom out.": -0.2},
                             sc) is None
    # the wake word is never made or lost by a rewrite; unscored texts are no choice
    assert choose_soundalike("Chill the CT.", "Chill the CT.",
                             {"Chill the CT.": -0.4, "Davinci, show the CT.": -0.2}, sc) is None
    assert choose_soundalike(top, top, {"Show the right lung.": -0.2}, sc) is None


def test_choose_repair_lets_the_audio_pick_between_spelling_repairs() -> None:
    from app.language.soundalike import SoundalikeScorer
    from app.voice.hearing_choice import choose_repair

    sc = SoundalikeScorer()
    top = "Asterior 20."  # the text correction reads it "anterior 20": spelling alone
    assert sc.reading(top) == "anterior 20"
    # measured forced decodes (dev split, Piper voice, "posterior 20" said)
    scores = {top: -0.788, "Anterior 20.": -3.021, "Posterior 20.": -1.719}
    assert choose_repair(top, top, scores, sc, 1.0, 0.75) == "Posterior 20."
    # the audio prefers the correction's reading, or not by the margin: the correction stays
    assert choose_repair(top, top, {**scores, "Anterior 20.": -1.5}, sc, 1.0, 0.75) is None
    # too far below Whisper's own reading
    assert choose_repair(top, top, scores, sc, 0.5, 0.75) is None
    # no rewrite reads as the correction does: nothing to compare with, the correction stays
    assert choose_repair(top, top, {top: -0.788, "Posterior 20.": -0.9}, sc, 1.0, 0.75) is None
    # out of scope is never repaired into a command; the wake word never changes
    oos = "Page the pathologist."
    assert choose_repair(oos, oos, {oos: -0.3, "Page the PFT.": -0.31}, sc) is None
    assert choose_repair(top, top, {**scores, "Davinci, posterior 20.": -0.8}, sc, 1.0,
                         0.75) == "Posterior 20."
