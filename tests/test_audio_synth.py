"""The audio dataset generator: OR noise synthesis, SNR mixing, multi-voice clips, caching.

Fast (a few seconds): the synthesis tests use espeak-ng voices only (Piper, ~0.5 s a clip, is
checked on one clip when it is installed).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import wave
from pathlib import Path

import numpy as np
import pytest

from app.eval import audio_synth as A
from app.eval import noise as N
from app.eval.dataset import load_dataset

SR = 16000
ROOT = Path(__file__).resolve().parents[1]


def power_fraction(x: np.ndarray, lo: float, hi: float, sr: int = SR) -> float:
    p = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(x.size, 1.0 / sr)
    return float(p[(f >= lo) & (f < hi)].sum() / p.sum())


def peak_hz(x: np.ndarray, sr: int = SR, pad: int = 1) -> float:
    p = np.abs(np.fft.rfft(x, n=x.size * pad)) ** 2
    return float(np.fft.rfftfreq(x.size * pad, 1.0 / sr)[int(np.argmax(p))])


def fake_speech(seconds: float = 2.0, pad_s: float = 0.5, seed: int = 0,
                level_dbfs: float = -20.0) -> np.ndarray:
    """Voiced-speech stand-in: a harmonic tone with syllable bursts, silent pads around it."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    f0 = 120 + 20 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / SR
    x = sum(np.sin(k * phase) / k for k in range(1, 15))
    x = x * np.maximum(np.sin(2 * np.pi * 4 * t + rng.uniform(0, 6)), 0) ** 2
    x = x / N.rms(x[N.active_mask(x)]) * 10 ** (level_dbfs / 20)
    pad = np.zeros(int(pad_s * SR))
    return np.concatenate([pad, x, pad])


# ------------------------------------------------------------------------------ noise
GENERATORS = {
    "suction": N.suction_hiss,
    "beeps": N.monitor_beeps,
    "buzz": N.electrosurgical_buzz,
    "hvac": N.hvac_rumble,
    "babble": lambda n, sr, seed: N.babble(n, None, sr, seed),
    "room": N.room_tone,
    "scene": N.or_noise,
}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_noise_is_deterministic_by_seed(name: str) -> None:
    gen = GENERATORS[name]
    n = 3 * SR
    a, b, c = gen(n, SR, 7), gen(n, SR, 7), gen(n, SR, 8)
    assert a.shape == (n,) and np.isfinite(a).all()
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)


def test_beeps_peak_at_their_frequency_and_pitch_varies() -> None:
    steady = N.monitor_beeps(5 * SR, SR, seed=1, base_hz=900.0, drift_hz=0.0)
    assert abs(peak_hz(steady, pad=2) - 900.0) < 3.0
    x = N.monitor_beeps(20 * SR, SR, seed=4, bpm=75.0)
    assert 780.0 <= peak_hz(x) <= 1020.0
    assert power_fraction(x, 700, 1100) > 0.95
    # One pitch per beat: find the beats and measure each one's frequency.
    on = np.abs(x) > 0.05
    starts = np.flatnonzero(on[1:] & ~np.convolve(on, np.ones(400), "full")[: x.size - 1]
                            .astype(bool))
    beats = [x[s:s + 900] for s in starts[:-1]]
    assert 20 <= len(beats) <= 30  # 75 bpm for 20 s
    freqs = [peak_hz(b, pad=64) for b in beats]
    assert np.std(freqs) > 3.0, "the pulse-oximeter pitch should drift from beat to beat"
    assert min(freqs) >= 770 and max(freqs) <= 1030


def test_electrosurgical_buzz_is_low_hum_plus_crackle_in_bursts() -> None:
    n = 4 * SR
    hum = N.electrosurgical_buzz(n, SR, seed=2, mains_hz=60.0, crackle=False, intermittent=False)
    assert power_fraction(hum, 0, 1000) > 0.85
    f = peak_hz(hum)
    assert f < 1000 and abs(f / 60.0 - round(f / 60.0)) < 0.03  # a harmonic of ~60 Hz
    sizzle = N.electrosurgical_buzz(n, SR, seed=2, mains_hz=60.0, intermittent=False)
    assert power_fraction(sizzle, 3000, 8000) > 5 * power_fraction(hum, 3000, 8000)
    bursts = N.electrosurgical_buzz(10 * SR, SR, seed=2)
    win = np.sqrt(np.mean(bursts[: 10 * SR].reshape(100, -1) ** 2, axis=1))
    assert win.min() < 0.05 * win.max(), "the buzz should come and go"


def test_suction_hiss_is_broadband() -> None:
    x = N.suction_hiss(5 * SR, SR, seed=3, intermittent=False)
    assert power_fraction(x, 1000, 8000) > 0.9
    bands = [power_fraction(x, lo, lo + 500) for lo in range(1000, 7000, 500)]
    assert max(bands) < 0.3 and sum(b > 0.02 for b in bands) >= 8


def test_hvac_rumble_is_low_frequency() -> None:
    assert power_fraction(N.hvac_rumble(5 * SR, SR, seed=5), 0, 500) > 0.9


def test_babble_uses_other_voices_at_a_distance() -> None:
    rng = np.random.default_rng(0)
    sources = [fake_speech(1.0 + i * 0.3, 0.1, seed=i) * rng.uniform(0.5, 2) for i in range(5)]
    a = N.babble(4 * SR, sources, SR, seed=9)
    assert np.array_equal(a, N.babble(4 * SR, sources, SR, seed=9))
    assert abs(N.rms(a) - 1.0) < 1e-6
    assert power_fraction(a, 0, 4000) > 0.95  # distant talkers lose their highs
    assert power_fraction(N.babble(4 * SR, None, SR, seed=9), 100, 4000) > 0.9


def test_or_scene_varies_its_sources_by_seed() -> None:
    present = [set(N.or_scene(SR, SR, seed)) for seed in range(40)]
    assert all("hvac" in p for p in present)
    for c in ("suction", "beeps", "buzz", "babble"):
        assert 0 < sum(c in p for p in present) < 40, c
    assert abs(N.rms(N.or_noise(2 * SR, SR, 3)) - 1.0) < 1e-6


def test_room_tone_level() -> None:
    assert abs(N.dbfs(N.room_tone(2 * SR, SR, 1, -60.0)) + 60.0) < 0.1


# ------------------------------------------------------------------------------ mixing
@pytest.mark.parametrize("snr", [20.0, 10.0, 5.0, 0.0])
def test_mix_hits_target_snr_over_active_speech(snr: float) -> None:
    s = fake_speech(seed=1)
    n = N.or_noise(s.size, SR, seed=11)
    m = N.mix_at_snr_parts(s, n, snr, SR)
    assert np.allclose(m.audio, m.speech + m.noise)
    active = N.active_mask(s)
    assert abs(N.snr_db(m.speech, m.noise, SR, active) - snr) < 0.5
    # The returned mixture alone: subtract the (possibly scaled) speech.
    residual = m.audio - m.scale * s
    assert abs(N.snr_db(m.scale * s, residual, SR, active) - snr) < 0.5
    assert np.max(np.abs(m.audio)) <= N.PEAK_LIMIT + 1e-9


def test_snr_is_measured_over_the_speech_not_the_pauses() -> None:
    s = fake_speech(seconds=1.0, pad_s=2.0, seed=2)  # mostly silence
    n = N.hvac_rumble(s.size, SR, seed=1)
    m = N.mix_at_snr_parts(s, n, 10.0, SR)
    whole = 10 * np.log10(np.mean(m.speech ** 2) / np.mean(m.noise ** 2))
    assert abs(N.snr_db(m.speech, m.noise, SR) - 10.0) < 0.5
    assert whole < 5.0  # a whole-clip SNR would have mixed this command much too quietly


def test_mix_never_clips_and_keeps_the_snr() -> None:
    s = fake_speech(seed=3)
    s = s / np.max(np.abs(s)) * 0.97  # a loud clip
    n = N.monitor_beeps(s.size, SR, seed=2) + N.electrosurgical_buzz(s.size, SR, seed=2)
    m = N.mix_at_snr_parts(s, n, 0.0, SR)
    assert m.scale < 1.0
    assert np.max(np.abs(m.audio)) <= N.PEAK_LIMIT + 1e-9
    assert abs(N.snr_db(m.speech, m.noise, SR, N.active_mask(s)) - 0.0) < 0.5
    assert np.array_equal(N.mix_at_snr(s, n, 0.0, SR), m.audio)


def test_mix_silent_speech_uses_the_reference_level(tmp_path: Path) -> None:
    s = np.zeros(SR)
    n = N.or_noise(SR // 2, SR, seed=5)  # shorter than the speech: tiled
    with pytest.raises(ValueError):
        N.mix_at_snr(s, n, 10.0, SR)
    x = N.mix_at_snr(s, n, 10.0, SR, reference_dbfs=-20.0)
    assert x.size == SR and abs(N.dbfs(x) + 30.0) < 0.5
    A.write_wav(tmp_path / "x.wav", x)
    y, sr = A.read_wav(tmp_path / "x.wav")
    assert sr == SR and np.max(np.abs(y - x)) < 1e-4


# ------------------------------------------------------------------------------ voices
def test_voice_order_interleaves_families_and_skips_missing_engines() -> None:
    def avail(engine: str) -> tuple[bool, str]:
        return engine != "flite", "flite is not installed"

    voices, warnings = A.resolve_voices("piper,espeak,flite", available=avail)
    names = [v.name for v in voices]
    assert names[:4] == ["piper-joe-1.0", "espeak-us-f3", "piper-joe-0.85", "espeak-gb"]
    assert not any(n.startswith("flite") for n in names)
    assert len(warnings) == 1 and "flite" in warnings[0]
    voices, _ = A.resolve_voices(["espeak-gb", "flite-slt"], available=lambda e: (True, ""))
    assert [v.name for v in voices] == ["espeak-gb", "flite-slt"]
    with pytest.raises(ValueError):
        A.resolve_voices("robot")
    assert len({v.name for v in A.VOICES}) == len(A.VOICES)
    assert not {v.name for v in A.VOICES} & {b.name for b in A.BABBLE_VOICES}


def test_conditions_and_names() -> None:
    assert A.parse_conditions("clean,20,snr10,5,10") == [
        ("clean", None), ("snr20", 20.0), ("snr10", 10.0), ("snr5", 5.0)]
    with pytest.raises(ValueError):
        A.parse_conditions("loud")
    assert A.output_name("test", True, "snr10", None) == "test-wake-snr10.jsonl"
    assert A.output_name("test", False, "clean", 5) == "test-n5-clean.jsonl"


# ------------------------------------------------------------------------------ synthesis
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None,
                                  reason="espeak-ng is not installed")
ESPEAK = [A.voice_by_name("espeak-us-f3"), A.voice_by_name("espeak-gb")]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, A.BuildReport]:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    tmp = tmp_path_factory.mktemp("audio")
    rows = [json.loads(line) for line in (ROOT / "datasets" / "dev.jsonl").read_text().splitlines()]
    mini = rows[:2] + [next(r for r in rows if r["text"] == "" and r["session"] == rows[0]["session"])]
    src = tmp / "mini.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in mini))
    out = tmp / "cache"
    rep = A.build_audio_dataset([src], out, ESPEAK, A.parse_conditions("clean,10"), wake=True,
                                jobs=1, progress=False, babble=[A.BABBLE_VOICES[0]])
    return src, out, rep


def _wav_info(path: Path) -> tuple[int, int, int, float]:
    with wave.open(str(path), "rb") as w:
        return w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes() / 16000


@needs_espeak
def test_build_writes_jsonl_pointing_at_voice_files(built: tuple) -> None:
    src, out, rep = built
    names = sorted(p.name for p in rep.outputs)
    assert names == ["mini-clean.jsonl", "mini-snr10.jsonl", "mini-wake-clean.jsonl",
                     "mini-wake-snr10.jsonl"]
    text_rows = [json.loads(line) for line in src.read_text().splitlines()]
    for p in rep.outputs:
        ds = load_dataset(p)  # the harness's own loader: paths relative to the JSONL
        assert [r.id for r in ds] == [r["id"] for r in text_rows]
        for row in ds:
            assert len(row.audio) == 2 and all(a.is_file() for a in row.audio)
            assert "espeak-us-f3" in row.audio[0].parts and "espeak-gb" in row.audio[1].parts
        raw = json.loads(p.read_text().splitlines()[0])
        assert list(raw)[:4] == ["id", "session", "text", "audio"]
        assert raw["expect"] == text_rows[0]["expect"]
        assert ("wake_word" in raw) == ("-wake-" in p.name)
    manifest = json.loads((out / "manifest.json").read_text())
    assert [v["name"] for v in manifest["voices"]] == ["espeak-us-f3", "espeak-gb"]
    assert set(names) <= set(manifest["outputs"])
    assert manifest["outputs"]["mini-clean.jsonl"]["rows"] == 3
    assert manifest["noise"]["snr_definition"]


@needs_espeak
def test_clips_are_16k_mono_speech_with_padding(built: tuple) -> None:
    _, out, _ = built
    plain = load_dataset(out / "mini-clean.jsonl").rows
    wake = load_dataset(out / "mini-wake-clean.jsonl").rows
    for row, wrow in zip(plain, wake, strict=True):
        for a, wa in zip(row.audio, wrow.audio, strict=True):
            sr, ch, width, dur = _wav_info(a)
            assert (sr, ch, width) == (16000, 1, 2)
            x, _ = A.read_wav(a)
            if row.text.strip():
                assert 0.7 < dur < 8.0
                m = N.active_mask(x)
                assert abs(N.dbfs(x[m]) - A.LEVEL_DBFS) < 2.0  # normalised, clearly non-silent
                assert N.dbfs(x[: int(0.1 * SR)]) < -50  # a room-tone lead-in, then speech
                assert _wav_info(wa)[3] > dur + 0.5  # "da Vinci" and a pause come first
            else:
                assert 0.9 < dur < 1.9 and N.dbfs(x) < -55  # room tone only
                assert N.dbfs(A.read_wav(wa)[0]) > -30  # the wake word alone


@needs_espeak
def test_noisy_clips_are_at_the_target_snr(built: tuple) -> None:
    _, out, _ = built
    clean = load_dataset(out / "mini-clean.jsonl").rows
    noisy = load_dataset(out / "mini-snr10.jsonl").rows
    for c, n in zip(clean, noisy, strict=True):
        for ca, na in zip(c.audio, n.audio, strict=True):
            s, _ = A.read_wav(ca)
            y, _ = A.read_wav(na)
            assert y.size == s.size and np.max(np.abs(y)) <= N.PEAK_LIMIT + 1e-3
            if c.text.strip():
                g = float(np.dot(y, s) / np.dot(s, s))  # speech gain (clipping protection)
                assert abs(N.snr_db(g * s, y - g * s, SR) - 10.0) < 0.5
            else:
                assert abs(N.dbfs(y) + 30.0) < 1.0  # the room's noise, not silence


@needs_espeak
def test_second_run_generates_nothing_and_regeneration_is_identical(built: tuple) -> None:
    src, out, _ = built
    rows = load_dataset(out / "mini-snr10.jsonl").rows
    clean_rows = load_dataset(out / "mini-wake-clean.jsonl").rows
    args = dict(voices=ESPEAK, conditions=A.parse_conditions("clean,10"), wake=True, jobs=1,
                progress=False, babble=[A.BABBLE_VOICES[0]])
    again = A.build_audio_dataset([src], out, **args)
    assert again.total_made == 0 and again.reused["speech"] > 0 and again.reused["snr10"] == 12
    victims = [rows[0].audio[0], clean_rows[1].audio[1]]
    before = [p.read_bytes() for p in victims]
    for p in victims:
        p.unlink()
    third = A.build_audio_dataset([src], out, **args)
    assert third.made == {"speech": 1, "snr10": 1}
    assert [p.read_bytes() for p in victims] == before
    assert not list(out.rglob(".tmp-*"))


@pytest.mark.skipif(importlib.util.find_spec("piper") is None,
                    reason="the optional piper-tts engine is not installed")
def test_piper_clip_is_reproducible() -> None:
    ok, why = A.engine_available("piper")
    if not ok:
        pytest.skip(why)
    v = A.voice_by_name("piper-joe-1.0")
    a, spoken = A.render_clip(v, "zoom in", False, seed=5)
    b, _ = A.render_clip(v, "zoom in", False, seed=5)
    assert spoken and np.array_equal(a, b)
    assert 0.6 < a.size / SR < 3.0
    assert abs(N.dbfs(a[N.active_mask(a)]) - A.LEVEL_DBFS) < 2.0


def test_abbreviations_are_spelled_as_a_surgeon_says_them() -> None:
    from app.eval.audio_synth import clean_key, spoken_text

    assert spoken_text("add RML and RLL") == "add R M L and R L L"
    assert spoken_text("what's her FEV1?") == "what's her F E V 1?"
    assert spoken_text("zoom in on the LLL, then show the CT") == \
        "zoom in on the L L L, then show the CT"
    # words that merely contain the letters, and acronyms engines spell anyway, stay
    assert spoken_text("the rule of thumb, BMI and PFT") == "the rule of thumb, BMI and PFT"
    # the clip's cache key follows what is said, so only changed clips are rendered again
    from app.eval.audio_synth import VOICES

    v = VOICES[0]
    assert clean_key(v, "show RUL", False, 1) == clean_key(v, "show R U L", False, 1)
    assert clean_key(v, "show the CT", False, 1) != clean_key(v, "show the RUL", False, 1)
