"""False wake-word triggers on long non-wake speech in operating-room noise (issue 6).

Goal: at most 1 false trigger per hour on at least 1 hour of non-wake speech mixed with OR
noise, while "davinci" is still detected ≥ 97% of the time. This module builds that hour and
streams it through the *real* wake path, the way the realtime mode hears a microphone:
:class:`~app.voice.pipeline.VoicePipeline` frame loop → Silero VAD segments (speculative STT
included) → Whisper tiny.en with the domain prompt → the pipeline's wake-word checks
(:class:`~app.voice.wakeword.WakeWordSpotter` at its default sensitivity and cooldown, the
transcript-confidence floor). It also scores detection on wake-word clip sets (DESIGN §5.4
audio JSONL) through the same path, one clip at a time.

Corpus (cached, not in git; default ``<user cache>/visa-console/false-wake``):

* sentences: every command of the text datasets (dev, test, paraphrase_dev; console
  commands *and* out-of-scope OR sentences), the OR babble sentences, and
  :data:`EXTRA_SENTENCES` — OR chatter written for this, much of it starting with words that
  sound a little like "da Vinci" ("the finch", "Devin", "division", "Davis", "of Vinnie",
  "devices", "the vinyl gloves"). Nothing contains the wake word.
* one stream per (voice, condition): 8 voices (Piper ×3, espeak ×3, flite ×2) × clean / 20 /
  10 / 5 dB SNR; the sentences are spoken in turns of 1-3 with short pauses (some shorter than
  the end-of-speech pause, so a VAD segment can hold two sentences, as in conversation) and
  longer pauses between turns; room tone everywhere; the OR scene of :mod:`app.eval.noise`
  (suction, monitor beeps, electrosurgical buzz, HVAC, background babble) under the noisy ones
  at the stream's SNR over its active speech.
* every random choice follows from the seed: a stream is rebuilt bit for bit.

Measuring costs one Whisper call per VAD segment (~0.4-1 s on two cores), so transcripts are
cached by the segment's audio and the STT settings: re-scoring after a change to the wake
logic replays the VAD and the pipeline but not Whisper. Results are written per stream as it
finishes (resumable; partial results are reported).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from app.eval import audio_synth as A
from app.eval import noise as N

SR = A.SR
DEFAULT_MINUTES = 68.0
DEFAULT_CONDITIONS = "clean,20,10,5"
DEFAULT_SEED = 20261130
CORPUS_VERSION = 2
INTRA_TURN_PAUSE_S = (0.25, 0.9)   # between sentences of one speaker's turn
INTER_TURN_PAUSE_S = (0.8, 3.0)    # between turns
TURN_SENTENCES = (1, 3)

#: OR chatter that is not addressed to the console, without the wake word. Many open with a
#: word that sounds a bit like "da Vinci" — the hard cases for a spotter that reads the start.
EXTRA_SENTENCES: tuple[str, ...] = (
    "Pass me the grasper, please.",
    "Can you increase the insufflation pressure to fifteen?",
    "The vinyl gloves are in the second drawer.",
    "Of Vinnie's two cases today, this one is the longer.",
    "The finch outside the window has been singing all morning.",
    "Devices on the back table need to be counted.",
    "Division of the inferior pulmonary ligament is done.",
    "Davis, could you check the suction canister?",
    "Devin, can you grab another reload?",
    "David is scrubbing the next case.",
    "Dave, when you get a moment, call the lab.",
    "Vincent from radiology called about the films.",
    "The vents are blowing cold air on the patient.",
    "The vein is a bit fragile here, go slowly.",
    "The fence around the parking lot is being repaired.",
    "Divine timing, the porter just arrived.",
    "Da Silva is on call for vascular tonight.",
    "The vendor rep is waiting in the corridor.",
    "Evince is the program that opens the PDF.",
    "Convince me that the margin is clear.",
    "Doctor Levine wants a frozen section.",
    "The bench top centrifuge is broken again.",
    "The winch on the table is stuck.",
    "Kevin, please bring the warming blanket.",
    "Devon is covering the recovery room.",
    "Dividing the fissure now with the stapler.",
    "The vinegar smell is from the cleaning solution.",
    "Davina will take over anaesthesia at three.",
    "Dawn, can you adjust the light?",
    "Vinnie, the next patient is in holding.",
    "The venti latte is for the anaesthetist.",
    "Of the four ports, the camera port is the largest.",
    "The division chief wants to watch this case.",
    "The video tower needs a reboot.",
    "Give me the vessel sealer.",
    "Clip, clip, and cut.",
    "Irrigation, please, and then suction.",
    "The blood pressure is ninety over sixty.",
    "Heart rate is seventy two and stable.",
    "Saturation is ninety eight percent.",
    "Estimated blood loss is about fifty millilitres.",
    "Give five milligrams of ephedrine.",
    "Can we get the bed tilted ten degrees to the left?",
    "Undock the arms, we are converting.",
    "Swap the needle driver for the fenestrated bipolar.",
    "Instrument exchange on arm three.",
    "The fourth arm is clashing with the camera.",
    "Energy is on, watch the bowel.",
    "Time out: patient name, procedure, side, all confirmed.",
    "We are starting the right upper lobectomy.",
    "Specimen bag, please.",
    "Remove the specimen through the utility port.",
    "Count is correct, twenty sponges and three needles.",
    "Call pathology, the frozen section is ready to go.",
    "Lower the table a little.",
    "More light, please.",
    "Suction is blocked, can you change the tip?",
    "Tell the family we will be another hour.",
    "Is the chest tube ready?",
    "The tidal volume is four hundred.",
    "Let's go to one lung ventilation.",
    "Deflate the right lung, please.",
    "End tidal CO2 is thirty five.",
    "Anything on the bleeding from the port site?",
    "Hold pressure for two minutes.",
    "The stapler misfired, give me a new cartridge.",
    "Forty five millimetre, green load.",
    "Sixty, purple reload next.",
    "Number three, number seven, number twelve.",
    "That is six hundred and twenty five.",
    "It was twenty twenty four when we started this programme.",
    "Room seven is running late.",
    "Who has the pager for the trauma team?",
    "Dimitri and Vanessa are both off this week.",
    "Daphne, can you log the implant?",
    "Tell Vince the scope is back from cleaning.",
    "Dante, please hold the retractor.",
    "The devil is in the details with this dissection.",
    "Develop the plane between the artery and the bronchus.",
    "Deviation of the trachea to the left on the film.",
    "The visitors' badges are at the front desk.",
    "Vascular clamps on standby.",
    "Davies and Vince both trained in Leeds.",
    "Davis and Finch is the name of the law firm.",
    "The vincristine is for the oncology patient upstairs.",
    "Da capo, from the top: list the instruments again.",
    "The vintage monitor in room two finally died.",
    "Avengers was on last night.",
    "The dentist cancelled my appointment.",
    "Dev ops pushed an update to the scheduling system.",
    "Devise a plan for the next case, please.",
    "Diffusion capacity was reduced on the function tests.",
    "The vision system is calibrated.",
    "Dabigatran was stopped five days ago.",
    "Let's take a short break before closing.",
    "Open the four-oh vicryl.",
    "Vicryl for the fascia, monocryl for the skin.",
    "Dermabond on the incisions.",
    "Thank you everybody, nice work.",
)


def _words(text: str) -> list[str]:
    import re  # noqa: PLC0415

    return re.findall(r"[a-z']+", text.lower())


def contains_wake_word(text: str) -> bool:
    """Written wake word ("davinci", "da vinci") anywhere: such a sentence is not non-wake."""
    compact = "".join(_words(text))
    return "davinci" in compact or "vinci" in _words(text)


def corpus_sentences(datasets: Sequence[Path] | None = None,
                     extra: Iterable[str] = EXTRA_SENTENCES) -> list[str]:
    """The non-wake sentences: dataset texts (non-empty), OR babble, ``extra``; deduplicated,
    in a stable order, none containing the wake word."""
    if datasets is None:
        datasets = [p for p in (A.DATASETS_DIR / f"{s}.jsonl"
                                for s in ("dev", "test", "paraphrase_dev")) if p.is_file()]
    out: dict[str, None] = {}
    for p in datasets:
        for row in A.read_rows(Path(p)):
            t = row["text"].strip()
            if t:
                out.setdefault(t, None)
    for t in (*A.BABBLE_SENTENCES, *extra):
        out.setdefault(t.strip(), None)
    return [t for t in out if t and not contains_wake_word(t)]


# ------------------------------------------------------------------------------ corpus
@dataclass(frozen=True)
class StreamSpec:
    voice: A.VoiceSpec
    condition: str
    snr_db: float | None
    seconds: float  # of speech (the pauses come on top)
    sentences: tuple[str, ...]  # the pool this stream draws from, in order
    seed: int
    path: Path

    @property
    def name(self) -> str:
        return f"{self.voice.name}-{self.condition}"


def plan_streams(out_dir: Path, minutes: float = DEFAULT_MINUTES,
                 voices: Sequence[A.VoiceSpec] | None = None,
                 conditions: str | Sequence[str] = DEFAULT_CONDITIONS,
                 sentences: Sequence[str] | None = None,
                 seed: int = DEFAULT_SEED) -> list[StreamSpec]:
    """One stream per (voice, condition), each with ``minutes / n`` of speech. Each voice goes
    through the whole sentence list (shuffled per voice) across its conditions, so every sentence is
    heard in several voices."""
    if voices is None:
        voices, _ = A.resolve_voices(list(A.FAMILIES))
    conds = A.parse_conditions(conditions)
    sents = list(sentences if sentences is not None else corpus_sentences())
    n = len(voices) * len(conds)
    per = minutes * 60.0 / max(n, 1)
    specs = []
    for v in voices:
        order = sents[:]
        random.Random(N.seed_from(seed, "order", v.name)).shuffle(order)
        for k, (cond, snr) in enumerate(conds):
            # Rotate the start so each condition of a voice begins elsewhere in the list.
            off = (k * len(order)) // len(conds)
            pool = tuple(order[off:] + order[:off])
            key = A._key({"v": CORPUS_VERSION, "voice": v.describe(), "cond": cond,
                          "seconds": round(per, 1), "seed": seed, "pool": pool,
                          "noise": N.COMPONENT_LEVELS_DB, "pause": [INTRA_TURN_PAUSE_S,
                                                                    INTER_TURN_PAUSE_S]})
            specs.append(StreamSpec(v, cond, snr, per, pool, N.seed_from(seed, v.name, cond),
                                    out_dir / "streams" / f"{v.name}-{cond}-{key[:10]}.wav"))
    return specs


def _babble_bank(out_dir: Path, seed: int) -> list[np.ndarray]:
    """Background talkers (voices never used for the corpus), cached as WAVs."""
    bank = []
    for b in A.BABBLE_VOICES:
        ok, _ = A.engine_available(b.engine)
        if not ok:
            continue
        for s in A.BABBLE_SENTENCES:
            p = out_dir / "babble" / b.name / f"{A.clean_key(b, s, False, seed)}.wav"
            if not p.is_file():
                A.run_clean_job(A.CleanJob(b, s, False, p.stem, p))
            bank.append(A.trim(A.read_wav(p)[0]))
    return bank


def render_stream(spec: StreamSpec, babble_bank: Sequence[np.ndarray] | None = None) -> Path:
    """Speak the stream and mix it; writes ``spec.path`` (16-bit WAV) and ``.json`` beside it
    with each sentence's start and end in seconds."""
    rng = np.random.default_rng(N.seed_from(spec.seed, "layout"))
    synth = A.make_synth(spec.voice, N.seed_from(spec.seed, "engine"))
    pieces: list[np.ndarray] = [np.zeros(int(rng.uniform(0.5, 1.5) * SR))]
    t = pieces[0].size
    said: list[dict[str, Any]] = []
    i = 0
    spoken = 0
    target = int(spec.seconds * SR)
    while spoken < target:
        turn = int(rng.integers(TURN_SENTENCES[0], TURN_SENTENCES[1] + 1))
        for j in range(turn):
            text = spec.sentences[i % len(spec.sentences)]
            i += 1
            x = A.speech_segment(synth, text, spec.voice.name)
            said.append({"text": text, "start": round(t / SR, 3),
                         "end": round((t + x.size) / SR, 3)})
            pieces.append(x)
            t += x.size
            spoken += x.size
            gap = (INTRA_TURN_PAUSE_S if j < turn - 1 else INTER_TURN_PAUSE_S)
            g = np.zeros(int(rng.uniform(*gap) * SR))
            pieces.append(g)
            t += g.size
    speech = np.concatenate(pieces)
    room = N.room_tone(speech.size, SR, N.seed_from(spec.seed, "room"), A.ROOM_TONE_DBFS)
    if spec.snr_db is None:
        audio = speech + room
    else:
        noise = N.or_noise(speech.size, SR, N.seed_from(spec.seed, "noise"),
                           list(babble_bank or []) or None)
        audio = N.mix_at_snr(speech + room, noise, spec.snr_db, SR,
                             active=N.active_mask(speech, SR))
    A.write_wav(spec.path, audio)
    meta = {"voice": spec.voice.describe(), "condition": spec.condition, "snr_db": spec.snr_db,
            "seconds": round(audio.size / SR, 2), "sentences": said,
            "speech_seconds": round(sum(s["end"] - s["start"] for s in said), 1)}
    A._atomic_text(spec.path.with_suffix(".json"), json.dumps(meta, indent=1) + "\n")
    return spec.path


_WORKER_BANK: dict[str, list[np.ndarray]] = {}


def _render_job(args: tuple[StreamSpec, str, int]) -> Path:
    spec, out_dir, seed = args
    with contextlib.suppress(OSError):
        os.nice(5)
    if out_dir not in _WORKER_BANK:
        _WORKER_BANK[out_dir] = _babble_bank(Path(out_dir), seed)
    return render_stream(spec, _WORKER_BANK[out_dir] if spec.snr_db is not None else None)


def build_corpus(out_dir: Path, specs: Sequence[StreamSpec], jobs: int = 2, seed: int = DEFAULT_SEED,
                 log: Callable[[str], None] = print) -> list[Path]:
    """Render the streams that are not cached yet."""
    todo = [s for s in specs if not (s.path.is_file() and s.path.with_suffix(".json").is_file())]
    if todo:
        _babble_bank(out_dir, seed)  # once, before the workers read it
    t0 = time.monotonic()
    done = len(specs) - len(todo)
    log(f"corpus: {done}/{len(specs)} streams cached, rendering {len(todo)}")
    if jobs <= 1:
        for s in todo:
            _render_job((s, str(out_dir), seed))
            done += 1
            log(f"  [{done}/{len(specs)}] {s.name} ({time.monotonic() - t0:.0f} s)")
    else:
        with ProcessPoolExecutor(max_workers=min(jobs, A.MAX_JOBS)) as ex:
            futs = {ex.submit(_render_job, (s, str(out_dir), seed)): s for s in todo}
            for f in as_completed(futs):
                f.result()
                done += 1
                log(f"  [{done}/{len(specs)}] {futs[f].name} ({time.monotonic() - t0:.0f} s)")
    return [s.path for s in specs]


# ------------------------------------------------------------------------------ STT cache
class CachedSTT:
    """A transcriber that remembers Whisper's answer per (audio, settings): the wake logic can
    be re-scored on the same segments without running Whisper again. Appends to a JSONL."""

    def __init__(self, stt: Any, path: Path | None) -> None:
        self.stt = stt
        self.model_name = getattr(stt, "model_name", "?")
        self.path = path
        cfg = getattr(stt, "config", None)
        src = Path(__file__).resolve().parents[1] / "voice" / "stt.py"
        # Keyed by the STT settings; app/voice/stt.py's own hash is recorded, not keyed (it
        # changes with every edit of its comments or rescoring details): rerun with a fresh
        # cache file when the decoding itself changed.
        self.settings = hashlib.sha256(repr(cfg).encode()).hexdigest()[:12]
        self.source_hash = hashlib.sha256(src.read_bytes()).hexdigest()[:12]
        self.cache: dict[str, dict[str, Any]] = {}
        self.hits = self.misses = 0
        self.whisper_s = 0.0
        if path is not None and path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):
                    d = json.loads(line)
                    self.cache[d["key"]] = d["tr"]

    def key(self, audio: np.ndarray) -> str:
        x = np.asarray(audio, dtype=np.float32).reshape(-1)
        return hashlib.sha1(self.settings.encode() + x.tobytes()).hexdigest()

    def transcribe(self, audio: np.ndarray) -> Any:
        from app.voice.stt import Segment, Transcript  # noqa: PLC0415

        k = self.key(audio)
        d = self.cache.get(k)
        if d is None:
            self.misses += 1
            t0 = time.perf_counter()
            tr = self.stt.transcribe(audio)
            self.whisper_s += time.perf_counter() - t0
            d = tr.to_dict()
            d["segments"] = [{**s.__dict__} for s in tr.segments]
            d["ms"] = tr.ms
            self.cache[k] = d
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"key": k, "tr": d}) + "\n")
            return tr
        self.hits += 1
        segs = [Segment(**s) for s in d.get("segments", [])]
        return Transcript(d["text"], float(d.get("ms", 0.0)), raw_text=d.get("raw_text", ""),
                          segments=segs, dropped=list(d.get("dropped", [])),
                          level_dbfs=float(d.get("level_dbfs", -120.0)),
                          audio_s=float(d.get("audio_s", 0.0)), model=d.get("model", ""),
                          first_raw_text=d.get("first_raw_text", ""))


class CachedVerifier:
    """The wake verifier (:mod:`app.voice.wake_verify`) with its scores kept in the
    :class:`CachedSTT` store, so a rerun does not encode the audio again."""

    def __init__(self, verifier: Any, cache: CachedSTT) -> None:
        self.verifier = verifier
        self.cache = cache
        self.min_logprob = verifier.min_logprob
        self.last_score: float | None = None

    def _remember(self, key: str, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        d = self.cache.cache.get(key)
        if d is None:
            d = compute()
            self.cache.cache[key] = d
            if self.cache.path is not None:
                with self.cache.path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"key": key, "tr": d}) + "\n")
        return d

    def _score(self, audio: np.ndarray) -> float | None:
        def compute() -> dict[str, Any]:
            self.verifier(audio)
            return {"score": self.verifier.last_score}

        self.last_score = self._remember("verify:" + self.cache.key(audio), compute)["score"]
        return self.last_score

    def __call__(self, audio: np.ndarray) -> bool:
        score = self._score(audio)
        return score is None or score >= self.min_logprob

    def rescue(self, audio: np.ndarray) -> str | None:
        """``WhisperWakeVerifier.rescue`` with the score and the second transcript cached."""
        floor = getattr(self.verifier, "rescue_logprob", None)
        if floor is None or audio is None or len(audio) < 1600:
            return None
        score = self._score(audio)
        if score is None or score < floor:
            return None
        d = self._remember("rescue2:" + self.cache.key(audio),
                           lambda: {"text": self.verifier.rescue(audio)})
        self.last_score = score
        return d["text"]


def default_spotter(stt: Any) -> Any:
    """The spotter ``make_pipeline`` builds: default sensitivity and cooldown, and the
    Whisper verifier on the same model (scores cached when ``stt`` is a :class:`CachedSTT`)."""
    from app.voice.wake_verify import WhisperWakeVerifier  # noqa: PLC0415
    from app.voice.wakeword import WakeWordSpotter  # noqa: PLC0415

    inner = stt.stt if isinstance(stt, CachedSTT) else stt
    if not hasattr(inner, "_model"):  # a stand-in transcriber: no acoustic check
        return WakeWordSpotter()
    ver = WhisperWakeVerifier(inner)
    return WakeWordSpotter(verifier=CachedVerifier(ver, stt) if isinstance(stt, CachedSTT)
                           else ver)


# ------------------------------------------------------------------------------ measuring
def _null_handler(text: str, stt: Any = None) -> dict[str, Any]:
    return {"reply": {"ok": True, "text": ""}}


def make_wake_pipeline(stt: Any, wake_factory: Callable[[], Any] | None = None,
                       config: Any = None, speculative: bool = True,
                       vad: Callable[[], Any] | None = None) -> Any:
    """The realtime-mode voice pipeline with the real VAD and wake logic, a silent speaker and
    an interpreter that does nothing (we count wakes, not commands). ``speculative=False``
    turns off the transcription during pauses: the same decisions on the same audio (less
    0.05 s of trailing silence), without the Whisper calls wasted when the speaker resumes."""
    from app.voice.pipeline import PipelineConfig, VoicePipeline  # noqa: PLC0415
    from app.voice.vad import VadSegmenter  # noqa: PLC0415
    cfg = config or PipelineConfig(speak_replies=False)
    if not speculative:
        cfg = replace(cfg, speculative_stt_s=None)
    wake = wake_factory() if wake_factory is not None else default_spotter(stt)
    return VoicePipeline(_null_handler, stt=stt, vad=vad() if vad else VadSegmenter(), wake=wake,
                         mode="realtime", config=cfg)


def run_stream(pipeline: Any, audio: np.ndarray, lead_s: float = 0.2) -> list[dict[str, Any]]:
    """Feed ``audio`` through the pipeline's realtime frame loop (as fast as it can go) and
    return one record per wake-word decision: time, transcript, detected, score, reason."""
    from app.voice.audio import FileSource  # noqa: PLC0415
    from app.voice.events import EventType  # noqa: PLC0415

    out: list[dict[str, Any]] = []
    pending: dict[str, dict[str, Any]] = {}

    def on(ev: Any) -> None:
        if ev.type == EventType.STT_VAD_END and ev.run_id:
            pending.setdefault(ev.run_id, {}).update(
                t=ev.data.get("speech_start", ev.data.get("t")), dur=ev.data.get("duration_s"))
        elif ev.type == EventType.STT_END and ev.run_id:
            pending.setdefault(ev.run_id, {}).update(text=ev.data.get("text", ""),
                                                     raw=ev.data.get("raw_text", ""))
        elif ev.type == EventType.WAKE_WORD_END and ev.run_id:
            rec = {**pending.pop(ev.run_id, {}), **{k: ev.data.get(k) for k in (
                "detected", "score", "variant", "heard", "command", "reason", "avg_logprob",
                "verify_logprob", "rescue_logprob", "rescued")}}
            out.append(rec)

    pipeline.wake.reset_cooldown()
    unsub = pipeline.subscribe(on)
    try:
        pipeline.run(FileSource(np.asarray(audio, np.float32), lead_silence_s=lead_s,
                                tail_silence_s=1.5))
    finally:
        unsub()
    return out


def _spoken_at(meta: dict[str, Any], t: float | None) -> str:
    if t is None:
        return ""
    near = [s for s in meta.get("sentences", []) if s["start"] - 1.0 <= t <= s["end"] + 0.5]
    return " | ".join(s["text"] for s in near)


def measure_streams(paths: Sequence[Path], results_dir: Path, stt: CachedSTT,
                    wake_factory: Callable[[], Any] | None = None, tag: str = "default",
                    log: Callable[[str], None] = print, force: bool = False,
                    speculative: bool = True,
                    vad: Callable[[], Any] | None = None) -> dict[str, Any]:
    """Every stream through the wake path; per-stream results in ``results_dir/tag`` (a
    finished stream is not run again unless ``force``); returns the summary so far."""
    from app.voice.audio import read_audio  # noqa: PLC0415

    rdir = results_dir / tag
    rdir.mkdir(parents=True, exist_ok=True)
    pipe = make_wake_pipeline(stt, wake_factory, speculative=speculative, vad=vad)
    t0 = time.monotonic()
    for n, p in enumerate(paths, 1):
        rp = rdir / f"{p.stem}.json"
        if rp.is_file() and not force:
            continue
        meta = json.loads(p.with_suffix(".json").read_text(encoding="utf-8"))
        x = read_audio(p)
        ts = time.monotonic()
        h0, m0 = stt.hits, stt.misses
        pipe.wake = wake_factory() if wake_factory is not None else default_spotter(stt)
        decisions = run_stream(pipe, x)
        false = [{**d, "spoken": _spoken_at(meta, d.get("t"))} for d in decisions
                 if d.get("detected")]
        res = {"stream": p.name, "voice": meta["voice"]["name"], "condition": meta["condition"],
               "seconds": meta["seconds"], "speech_seconds": meta["speech_seconds"],
               "segments": len(decisions), "false_wakes": false,
               "near_misses": sorted((d for d in decisions if not d.get("detected")
                                      and (d.get("score") or 0) >= 0.75),
                                     key=lambda d: -(d.get("score") or 0))[:10],
               "transcripts": [[d.get("t"), d.get("text", "")] for d in decisions],
               "stt_calls": stt.misses - m0, "stt_cached": stt.hits - h0,
               "wall_s": round(time.monotonic() - ts, 1)}
        A._atomic_text(rp, json.dumps(res, indent=1) + "\n")
        s = summarize(results_dir, tag)
        log(f"[{n}/{len(paths)}] {p.stem}: {len(decisions)} segments, {len(false)} false "
            f"wake(s) {[f['text'] for f in false]} | total {s['false_wakes']} in "
            f"{s['minutes']:.1f} min = {s['per_hour']:.2f}/h | {time.monotonic() - t0:.0f} s")
    return summarize(results_dir, tag)


def summarize(results_dir: Path, tag: str = "default") -> dict[str, Any]:
    rows = [json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((results_dir / tag).glob("*.json"))]
    seconds = sum(r["seconds"] for r in rows)
    speech = sum(r["speech_seconds"] for r in rows)
    fw = sum(len(r["false_wakes"]) for r in rows)
    by: dict[str, dict[str, float]] = {}
    for key in ("voice", "condition"):
        for r in rows:
            d = by.setdefault(f"{key}:{r[key]}", {"false_wakes": 0, "minutes": 0.0})
            d["false_wakes"] += len(r["false_wakes"])
            d["minutes"] = round(d["minutes"] + r["seconds"] / 60, 2)
    return {"tag": tag, "streams": len(rows), "minutes": round(seconds / 60, 2),
            "speech_minutes": round(speech / 60, 2),
            "segments": sum(r["segments"] for r in rows), "false_wakes": fw,
            "per_hour": round(fw / (seconds / 3600), 3) if seconds else 0.0,
            "per_hour_of_speech": round(fw / (speech / 3600), 3) if speech else 0.0,
            "by": by,
            "triggers": [{"stream": r["stream"], "t": f.get("t"), "heard": f.get("text"),
                          "spoken": f.get("spoken"), "score": f.get("score")}
                         for r in rows for f in r["false_wakes"]]}


# ------------------------------------------------------------------------------ detection
def measure_detection(jsonl: Path, stt: CachedSTT, wake_factory: Callable[[], Any] | None = None,
                      voices: Sequence[int] | None = None, limit: int | None = None,
                      log: Callable[[str], None] = print,
                      speculative: bool = True) -> dict[str, Any]:
    """Wake-word clips (audio JSONL rows, every voice of each row) through the same pipeline,
    one clip per run: detected when a wake-word decision in the clip says so."""
    from app.voice.audio import read_audio  # noqa: PLC0415

    rows = A.read_rows(jsonl, limit)
    base = jsonl.parent
    pipe = make_wake_pipeline(stt, wake_factory, speculative=speculative)
    hit = total = 0
    misses: list[dict[str, Any]] = []
    clips: list[dict[str, Any]] = []
    per_voice: dict[str, list[int]] = {}
    t0 = time.monotonic()
    for i, row in enumerate(rows, 1):
        audio = row.get("audio") or []
        audio = [audio] if isinstance(audio, str) else audio
        for vi, rel in enumerate(audio):
            if voices is not None and vi not in voices:
                continue
            p = base / rel
            pipe.wake = wake_factory() if wake_factory is not None else default_spotter(stt)
            decisions = run_stream(pipe, read_audio(p))
            ok = any(d.get("detected") for d in decisions)
            total += 1
            hit += ok
            voice = Path(rel).parent.name
            pv = per_voice.setdefault(voice, [0, 0])
            pv[0] += ok
            pv[1] += 1
            rec = {"id": row["id"], "voice": voice, "text": row["text"], "detected": ok,
                   "heard": [d.get("text") for d in decisions],
                   "why": [d.get("reason") for d in decisions],
                   "score": [d.get("score") for d in decisions],
                   "avg_logprob": [d.get("avg_logprob") for d in decisions],
                   "verify_logprob": [d.get("verify_logprob") for d in decisions],
                   "rescue_logprob": [d.get("rescue_logprob") for d in decisions]}
            clips.append(rec)
            if not ok:
                misses.append(rec)
        if i % 20 == 0 or i == len(rows):
            log(f"  {jsonl.name}: {i}/{len(rows)} rows, {hit}/{total} detected "
                f"({time.monotonic() - t0:.0f} s)")
    return {"set": jsonl.name, "detected": hit, "clips": total,
            "rate": round(hit / total, 4) if total else 0.0,
            "per_voice": {k: f"{a}/{b}" for k, (a, b) in per_voice.items()}, "misses": misses,
            "records": clips}


__all__ = ["CachedSTT", "CachedVerifier", "default_spotter", "DEFAULT_CONDITIONS", "DEFAULT_MINUTES", "EXTRA_SENTENCES", "StreamSpec",
           "build_corpus", "contains_wake_word", "corpus_sentences", "make_wake_pipeline",
           "measure_detection", "measure_streams", "plan_streams", "render_stream",
           "run_stream", "summarize"]
