"""The voice pipeline with its real models on real speech (slow: Silero VAD, Whisper).

Speech is synthesised once per session with espeak-ng at several voices and speeds, then
pushed through the real VAD, Whisper tiny.en (loaded once), the wake-word logic and — for the
pipeline tests — the real Orchestrator and command registry.

espeak-ng says the written word "davinci" badly (Whisper hears "And inside"); it pronounces
"da Vinci" the way people do, so the clips are written that way. Assertions on transcripts
are loose on purpose ("show" and "CT"/"city"): the interpreter's corrector repairs the rest,
and these tests are about the voice path, not about the corrector.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.voice.audio import SAMPLE_RATE, read_audio, write_wav
from app.voice.events import EventType, ListeningState, PipelineEvent
from app.voice.pipeline import PipelineConfig, VoicePipeline
from app.voice.vad import SileroOnnx, VadSegmenter, make_vad_backend, sherpa_onnx_supports
from app.voice.wakeword import SelfHearingGuard, WakeWordSpotter

pytestmark = pytest.mark.slow

VOICES = [("en-us", 150), ("en-us+m3", 170), ("en", 140)]
WAKE_CMD = "da Vinci, show the CT"


def _espeak(text: str, voice: str, speed: int, out: Path, pad_s: float = 0.3) -> Path:
    raw = out.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(raw), text],
                   check=True, capture_output=True)
    x = read_audio(raw)  # espeak writes 22.05 kHz: resampled to 16 kHz mono here
    raw.unlink()
    pad = np.zeros(int(pad_s * SAMPLE_RATE), np.float32)
    return write_wav(out, np.concatenate([pad, x, pad]))


@pytest.fixture(scope="session")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    d = tmp_path_factory.mktemp("voice_clips")
    out: dict[str, Path] = {}
    for i, (voice, speed) in enumerate(VOICES):
        out[f"wake_cmd_{i}"] = _espeak(WAKE_CMD, voice, speed, d / f"wake_cmd_{i}.wav")
    for name, text in {"wake_only": "da Vinci", "zoom_in": "zoom in",
                       "show_ct": "show the CT", "stapler": "hand me the stapler",
                       "coughing": "the patient is coughing",
                       "wake_ir": "da Vinci, show age and sex", "stop": "stop",
                       "own_reply": "da Vinci, zoom in. CT views shown."}.items():
        out[name] = _espeak(text, "en-us", 150, d / f"{name}.wav")
    rng = np.random.default_rng(0)
    out["silence"] = write_wav(d / "silence.wav", np.zeros(2 * SAMPLE_RATE, np.float32))
    out["noise"] = write_wav(d / "noise.wav",
                             (0.1 * rng.standard_normal(2 * SAMPLE_RATE)).astype(np.float32))
    # Two commands in one recording, 1.5 s apart: two utterances.
    two = np.concatenate([read_audio(out["zoom_in"]), np.zeros(int(1.5 * SAMPLE_RATE)),
                          read_audio(out["show_ct"])])
    out["two"] = write_wav(d / "two.wav", two)
    return out


@pytest.fixture(scope="session")
def whisper() -> Any:
    from app.voice.stt import SttUnavailable, WhisperSTT

    try:
        return WhisperSTT(model="tiny.en").load()
    except SttUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def silero() -> SileroOnnx:
    return SileroOnnx()


def _segmenter(silero: SileroOnnx) -> VadSegmenter:
    silero.reset()
    return VadSegmenter(silero)


# ============================================================================ VAD
def test_silero_finds_speech_and_not_silence(clips: dict[str, Path], silero: SileroOnnx) -> None:
    for i in range(len(VOICES)):
        x = read_audio(clips[f"wake_cmd_{i}"])
        segs = _segmenter(silero).speech_segments(x)
        assert len(segs) == 1, f"voice {VOICES[i]}: {segs}"
        s = segs[0]
        assert 0.15 < s.speech_start < 0.6  # the clip has 0.3 s of silence first
        assert s.speech_end > len(x) / SAMPLE_RATE - 0.8
        assert s.voiced_s > 0.8
    for name in ("silence", "noise"):
        assert _segmenter(silero).speech_segments(read_audio(clips[name])) == [], name
    two = _segmenter(silero).speech_segments(read_audio(clips["two"]))
    assert len(two) == 2 and two[1].speech_start - two[0].speech_end > 1.0


def test_vad_backend_choice_never_kills_the_process() -> None:
    # faster-whisper's Silero v6 makes sherpa-onnx exit() the process: it must be detected
    # first and run through onnxruntime instead.
    from app.voice.vad import SherpaSilero, VadUnavailable, silero_model_file

    path = silero_model_file()
    assert not sherpa_onnx_supports(path)
    assert isinstance(make_vad_backend(), SileroOnnx)
    with pytest.raises(VadUnavailable):
        SherpaSilero(path)
    # the per-window cost is small (never asserted as a time: shared CI cores)
    b = SileroOnnx()
    p = [b.probability(np.zeros(512, np.float32)) for _ in range(10)]
    assert all(0.0 <= v < 0.5 for v in p)


# ============================================================================ STT
def test_whisper_transcribes_the_wake_word_and_command(clips: dict[str, Path],
                                                      whisper: Any) -> None:
    spotter = WakeWordSpotter()
    for i in range(len(VOICES)):
        tr = whisper.transcribe(read_audio(clips[f"wake_cmd_{i}"]))
        low = tr.text.lower()
        # espeak's "show the" often comes out as "shoulder": the corrector's job, not ours
        assert "sho" in low and ("ct" in low or "city" in low), tr.text
        assert tr.ms > 0 and tr.audio_s > 1
        m = spotter.match(tr.text)
        assert m.detected, f"voice {VOICES[i]}: {tr.text!r}"
        assert "sho" in m.command.lower() and "vinci" not in m.command.lower()


def test_whisper_alone_on_silence_and_noise_says_nothing(clips: dict[str, Path],
                                                         whisper: Any) -> None:
    # No VAD in front: the filters alone must catch what Whisper invents (with our vocabulary
    # prompt tiny.en recites "davinci, CT," over silence — a false wake word).
    for name in ("silence", "noise"):
        tr = whisper.transcribe(read_audio(clips[name]))
        assert tr.text == "", (name, tr.raw_text, tr.dropped)
        assert not WakeWordSpotter().match(tr.text).detected


def test_no_wake_word_in_other_speech(clips: dict[str, Path], whisper: Any) -> None:
    spotter = WakeWordSpotter()
    for name in ("show_ct", "stapler", "coughing"):
        tr = whisper.transcribe(read_audio(clips[name]))
        assert tr.text, name
        assert not spotter.match(tr.text).detected, (name, tr.text)


def test_make_transcriber_for_the_eval_harness(clips: dict[str, Path], whisper: Any) -> None:
    from app.eval.harness import find_transcriber
    from app.voice.stt import make_transcriber

    transcribe = make_transcriber()
    r = transcribe(clips["wake_cmd_0"])
    assert set(r) >= {"text", "ms"} and r["ms"] > 0
    assert r["wake"] and r["wake"]["detected"]
    assert r["text"].lower().startswith("sho") and "vinci" not in r["text"].lower()
    for name in ("silence", "noise"):  # VAD finds no speech: Whisper is not even run
        r = transcribe(clips[name])
        assert r["text"] == "" and r["dropped"] == ["no-speech-detected"]
    found, why = find_transcriber()
    assert found is not None, why
    assert "sho" in found(clips["wake_cmd_1"])["text"].lower()


def test_base_model_is_selectable(clips: dict[str, Path]) -> None:
    from app.voice.stt import SttUnavailable, WhisperSTT

    try:
        base = WhisperSTT(model="base").load()
    except SttUnavailable as exc:
        pytest.skip(f"Whisper base is optional: {exc}")
    tr = base.transcribe(read_audio(clips["wake_cmd_0"]))
    assert tr.model == "base" and "sho" in tr.text.lower()


def test_joint_second_opinion_scores_both_models_real_audio(clips: dict[str, Path],
                                                           whisper: Any) -> None:
    """The joint second opinion on real audio: both models' hearings, each forced through both
    models (real CTranslate2 decodes), and a choice that stays a console command."""
    from app.voice.stt import SttConfig, WhisperSTT

    stt = WhisperSTT(SttConfig(second_mode="joint", joint_below_logprob=0.0)).load()  # every command
    if stt.second_stt() is None:
        pytest.skip("Whisper base is optional")
    x = read_audio(clips["wake_cmd_0"])
    first = stt.transcribe(x)
    assert first.scoring is not None and first.scoring["texts"]  # what a forced decode needs
    tr = stt.second_opinion(x, first)
    info = tr.second
    assert info is not None and info["mode"] == "joint" and info["model"] == "base"
    assert info["candidates"] >= 2 and len(info["scores"]) == info["candidates"]
    for lp_first, lp_second in info["scores"].values():
        assert lp_first <= 0.0 and lp_second <= 0.0  # per-token log-probabilities
    assert "sho" in tr.text.lower() and "vinci" in tr.text.lower()
    # the encoder outputs (megabytes) are used once and never kept, and only in joint mode
    assert first.scoring is None and tr.scoring is None
    assert whisper.transcribe(x).scoring is None


# ============================================================================ pipeline
def _orchestrator() -> Any:
    """The real Orchestrator and registry with the fast interpreter's lexicon tier (the slower
    semantic and LLM tiers are other tests' business: here the voice path is under test)."""
    try:
        from app.agents.interpreter import FastInterpreter
        from app.agents.orchestrator import Orchestrator
        from app.core.registry import CommandRegistry
        from app.core.state import CaseContext, ConsoleState

        state = ConsoleState()
        state.set_case(CaseContext(iv_size=(("axial", 128), ("coronal", 512),
                                            ("sagittal", 512)),
                                   tumor_lobes=("right_upper_lobe",)))
        orch = Orchestrator(CommandRegistry(state), interpreter=FastInterpreter())
        orch.handle_text("")  # builds the interpreter now, not inside the first voice command
        orch.reset()
        return orch
    except Exception:  # pragma: no cover - the agents layer is part of this build
        pytest.skip("the orchestrator cannot be built in this checkout")


def _run_types(events: list[PipelineEvent]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in events:
        if e.run_id and e.type != EventType.LISTENING:
            out.setdefault(e.run_id, []).append(str(e.type))
    return out


def test_synthesized_mode_through_the_real_console(clips: dict[str, Path], whisper: Any,
                                                   silero: SileroOnnx) -> None:
    orch = _orchestrator()
    events: list[PipelineEvent] = []
    p = VoicePipeline(orch, stt=whisper, vad=_segmenter(silero), mode="synthesized")
    p.subscribe(events.append)
    order = ["wake_cmd_0", "wake_only", "zoom_in", "stapler", "silence", "noise", "wake_ir",
             "stop"]
    runs = p.run_clips([clips[n] for n in order])

    # tiny.en hears espeak's "show age and sex" as "shoulder, age, and sex": with a word it
    # cannot place the console asks rather than guesses (DESIGN §3), and "yes" answers it
    if runs[3].outcome == "rejected":
        q = runs[3].record.get("question") or {}
        assert any("age and sex" in o for o in q.get("options", [])), runs[3].record
        assert orch.handle_text("yes")["tier"] == "ask"
        runs[3].outcome = "done"
    assert [r.outcome for r in runs] == ["done", "done", "no-wake", "done", "stop"]
    by_run = _run_types(events)
    one_breath = ["run-start", "wake_word-start", "stt-vad-start", "stt-vad-end", "stt-start",
                  "stt-end", "wake_word-end", "intent-start", "intent-end", "tts-start",
                  "tts-end", "run-end"]
    assert by_run["v1"] == one_breath
    assert by_run["v2"] == one_breath[:7] + ["stt-vad-start", "stt-vad-end", "stt-start",
                                             "stt-end"] + one_breath[7:]
    assert by_run["v3"] == one_breath[:7] + ["run-end"]  # "hand me the stapler": not for us
    assert by_run["v5"] == one_breath[:6] + ["stop", "run-end"]

    # What reached the interpreter: the commands, with the wake word removed.
    commands = [r.command.lower() for r in runs if r.outcome == "done"]
    assert "sho" in commands[0] and "zoom" in commands[1] and "age" in commands[2]
    # The resulting console state.
    state = orch.state.snapshot()
    assert state["iv"]["mode"] == "zoom_view"
    assert state["ir"]["visible"] and {"age", "sex"} <= set(state["ir"]["fields"])
    # Trace records carry the STT stage and the audio they came from.
    rec = runs[0].record
    assert rec["flow"][:2] == ["audio", "stt"] and rec["input"]["audio"].endswith("wake_cmd_0.wav")
    # Latency from end of speech to the state change is measured for every command.
    lats = [r.latency for r in runs if r.latency]
    assert len(lats) == 3 and all(v["total_ms"] > v["eos_wait_ms"] > 0 for v in lats)
    assert p.listening == ListeningState.OFF


def test_realtime_paced_run_measures_wall_clock_latency(clips: dict[str, Path], whisper: Any,
                                                       silero: SileroOnnx) -> None:
    orch = _orchestrator()
    p = VoicePipeline(orch, stt=whisper, vad=_segmenter(silero), mode="synthesized",
                      config=PipelineConfig(realtime_playback=True, clip_gap_s=0.8))
    t0 = time.perf_counter()
    runs = p.run_clips([clips["wake_cmd_2"]])
    assert time.perf_counter() - t0 >= read_audio(clips["wake_cmd_2"]).size / SAMPLE_RATE
    assert runs[0].outcome == "done" and runs[0].latency["clock"] == "wall"
    assert runs[0].latency["total_ms"] >= runs[0].latency["stt_ms"]
    assert orch.state.snapshot()["iv"]["mode"] == "small_views"


def test_the_console_does_not_obey_its_own_voice(clips: dict[str, Path], whisper: Any,
                                                 silero: SileroOnnx) -> None:
    orch = _orchestrator()
    guard = SelfHearingGuard()
    p = VoicePipeline(orch, stt=whisper, vad=_segmenter(silero), mode="synthesized",
                      guard=guard)
    # The microphone picks up the console saying something that contains the wake word.
    guard.speaking("Da Vinci, zoom in. CT views shown.")
    runs = p.run_clips([clips["own_reply"]])
    guard.done()
    assert [r.outcome for r in runs] == ["self-hearing"]
    assert orch.state.snapshot()["iv"]["mode"] == "none"


def test_piper_speaks_when_installed() -> None:
    from app.voice.tts import PiperEngine, TtsUnavailable

    try:
        engine = PiperEngine()
        engine.load()
    except (TtsUnavailable, Exception) as exc:  # optional extra (GPL) or voice missing
        pytest.skip(f"Piper not available: {exc}")
    audio, sr = engine.synthesize("CT views shown.")
    assert sr > 8000 and 0.4 < len(audio) / sr < 4 and np.max(np.abs(audio)) > 0.05


def test_forced_decode_scores_what_was_said_above_a_soundalike(clips: dict[str, Path],
                                                               whisper: Any) -> None:
    """The sound-alike check's audio side: the decoder forced through the words actually
    spoken scores better than through a sound-alike rewrite, on real synthesized speech."""
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.tokenizer import Tokenizer

    m = whisper._model
    tok = Tokenizer(m.hf_tokenizer, m.model.is_multilingual, task="transcribe", language="en")
    x = read_audio(clips["show_ct"])
    feats = m.feature_extractor(x)
    frames = feats.shape[-1] - 1
    enc = m.encode(pad_or_trim(feats[:, :frames]))
    ids = [*tok.sot_sequence, tok.no_timestamps]
    s = whisper._forced_logprobs(enc, ids, frames, tok,
                                 ["Show the CT.", "Hide the CT.", "Zoom out."])
    assert s["Show the CT."] > s["Hide the CT."] > -20 and s["Show the CT."] > s["Zoom out."]
    # and transcribing keeps working with the check on (it runs only on unknown words)
    tr = whisper.transcribe(x)
    assert "ct" in tr.text.lower() or "city" in tr.text.lower(), tr.text


def test_wake_rescue_forces_the_name_only_where_the_audio_says_it(clips: dict[str, Path],
                                                                 whisper: Any) -> None:
    from app.voice.wake_verify import WhisperWakeVerifier

    ver = WhisperWakeVerifier(whisper)
    again = ver.rescue(read_audio(clips["wake_cmd_0"]))
    assert again is not None and WakeWordSpotter().match(again).detected, again
    assert "sho" in WakeWordSpotter().match(again).command.lower()
    for name in ("stapler", "coughing", "show_ct"):  # no name in the audio: no rescue
        assert ver.rescue(read_audio(clips[name])) is None, (name, ver.last_score)


# ===================================================================== the third hearing
def test_the_phrasing_model_hears_commands_in_real_audio(clips: dict[str, Path],
                                                         tmp_path: Path) -> None:
    pytest.importorskip("pocketsphinx")
    from app.language.soundalike import SoundalikeScorer
    from app.voice.domain_asr import DomainRecognizer

    rec = DomainRecognizer(cache_dir=tmp_path)  # the LM built from datasets/, cached there
    sc = SoundalikeScorer()
    for name in ("zoom_in", "show_ct"):
        heard = rec.hear(read_audio(clips[name]))
        assert heard and sc.coverage(heard) == 1.0, (name, heard)
    silent = rec.hear(read_audio(clips["silence"]))  # at most a filler ("Um.")
    assert not silent or sc.coverage(silent) < 1.0, silent
    assert list(tmp_path.glob("*/domain.arpa"))  # built once, then reused from the cache


@pytest.fixture(scope="session")
def whisper_domain(whisper: Any) -> Any:
    """tiny.en with the phrasing model on (an option; the loaded model is shared)."""
    from dataclasses import replace

    from app.voice.stt import WhisperSTT

    pytest.importorskip("pocketsphinx")
    return WhisperSTT(replace(whisper.config, domain_asr=True)).load()


def test_whisper_keeps_what_it_heard_as_console_words(clips: dict[str, Path],
                                                      whisper_domain: Any) -> None:
    whisper = whisper_domain
    whisper.last_domain = None
    tr = whisper.transcribe(clips["show_ct"])
    assert "ct" in tr.text.lower()
    # a hearing wholly of console words is never put to the phrasing model
    assert whisper.last_domain is None


def test_the_phrasing_model_is_not_asked_about_talk_while_waiting_for_the_name(
        clips: dict[str, Path], whisper_domain: Any, whisper: Any) -> None:
    whisper.transcribe(clips["coughing"])
    assert whisper.last_domain is None  # off by default
    whisper = whisper_domain
    try:
        whisper.domain_needs_wake = True
        whisper.transcribe(clips["coughing"])
        assert whisper.last_domain is None
        whisper.domain_needs_wake = False
        tr = whisper.transcribe(clips["coughing"])  # talk, not console words: offered
        assert whisper.last_domain is not None and "heard" in whisper.last_domain
        assert tr.domain == whisper.last_domain
        assert not tr.domain["taken"] or "cough" not in tr.text.lower()
    finally:
        whisper.domain_needs_wake = False


def test_a_spoken_answer_to_the_consoles_question(clips: dict[str, Path], whisper: Any,
                                                  silero: SileroOnnx, tmp_path: Path) -> None:
    """Ask, don't guess, by voice: the console asked about an unsure command; "da Vinci, yes"
    spoken into the real pipeline (a WAV through VAD, wake word and Whisper) answers it."""
    from app.agents.interpreter import FastInterpreter
    from app.session import build_console

    con = build_console(interpreter=FastInterpreter())  # the grammar alone: deterministic
    asked = con.say("do the fnord with the model")
    assert asked["question"]["options"] == ["show the 3D model"]
    assert not con.state.ar.visible
    yes = _espeak("da Vinci, yes", "en-us", 150, tmp_path / "yes.wav")
    p = VoicePipeline(con.orchestrator, stt=whisper, vad=_segmenter(silero), mode="synthesized")
    runs = p.run_clips([yes])
    assert [r.outcome for r in runs] == ["done"], [(r.outcome, r.command) for r in runs]
    rec = runs[0].record
    assert rec["tier"] == "ask" and rec["invalid_cycles"] == 1, rec
    assert rec["flow"][:2] == ["audio", "stt"]
    assert con.state.ar.visible
