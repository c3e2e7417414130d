"""Speech-to-text with faster-whisper, tuned for short spoken commands on two CPU cores.

* Models: ``tiny.en`` (default; manifest ``whisper-tiny.en``) or ``base`` (``whisper-base``),
  CTranslate2 int8, ``cpu_threads=2``, loaded once per process (:func:`get_model`).
* Decoding: English, temperature 0 only — Whisper pads every clip to 30 s, so a command costs
  the same fixed encoder time whatever its length, and temperature fallbacks would multiply
  that on exactly the clips (noise, silence) where they help least. ``max_new_tokens`` bounds
  a runaway repetition loop.
* N-best domain rescoring: a beam of 5 hypotheses (one encoder pass; the beam adds ~0.1 s on
  a short command) and :func:`choose_hypothesis` picks the one that reads most like a console
  command among those Whisper finds nearly as likely. tiny.en often has the command in its
  beam but not on top ("Two men." over "Zoom in.", "Joby, am I?" over "Show BMI."). Measured
  on the dev split's audio (single-pass success over Piper-, espeak- and flite-first runs of
  210 commands): clean 431 → 496 of 630 with the beam and the rescoring (beam alone 452),
  10 dB SNR 288 → 338; a beam of 10 gains nothing more. ``nbest=1`` restores greedy decoding.
* Sound-alike rewrites: when the chosen hypothesis still holds words the console does not
  know ("Chill the right lung.", "… top of the skin?"), the domain's sound-alike terms
  (``app.language.soundalike``) rewrite it, and each rewrite is scored against the audio by a
  forced decode (CTranslate2 ``align``, the encoder output reused, one batch, ~30–60 ms per
  text on two cores, only on such commands); :func:`choose_soundalike` keeps a rewrite only when
  the audio supports it within ``soundalike_gap`` of Whisper's own reading. Dev split, clean:
  502 → 515 of 630.
* Joint second opinion (``SttConfig(second_mode="joint")``, not the default): each model's
  likeliest hearings are scored against the audio by both (:func:`choose_joint`). Dev split
  replays, where it was tuned: single-pass 451 → 476 of 630; the test split: 609 vs 610 of
  888 over six voice/noise runs, ~0.4 s slower on doubtful commands — so not the default.
* tiny.en vs base (dev split, clean, same rescoring): base 473 of 630 against tiny.en's 496
  (worse on espeak, even elsewhere) at ~1.0 s against ~0.56 s per command on a loaded 2-core
  machine, so tiny.en stays the default.
* Domain words: ``initial_prompt`` is a *vocabulary list*, not a command (a command-shaped
  prompt gets copied into transcripts), plus ``hotwords``. Measured on espeak-ng clips: "da
  Vinci" heard as "Come in, kid" without them and as "davinci" with them.
* The price of a prompt: on silence Whisper recites it ("davinci, CT," — a false wake word!)
  and base loops on it ("BMI, BMI, …"). So every segment is checked: no-speech probability
  with log-probability, compression ratio (loops), prompt echoes, and a blacklist of the
  phrases Whisper invents on silence ("thank you", "you", "thanks for watching" — ANCHORS §3.5)
  applied only when the audio is quiet or the model itself doubts there was speech. A surgeon
  who really says "thank you" loudly still gets through (and the interpreter declines it).
* Whisper and the LLM must not run at full threads together on two cores (DESIGN §6): the
  transcription holds ``app.runtime.scheduler.HEAVY_STAGE_LOCK``.

The rules that choose among hearings (beam rescoring, sound-alike rewrites, spelling repairs,
the joint second opinion) are pure functions in :mod:`app.voice.hearing_choice`.

``make_transcriber()`` is what ``visa-console eval --mode audio`` uses:
``transcribe(path) -> {"text", "ms", ...}`` with the wake word, if spoken, removed.
"""

from __future__ import annotations

import os

# No model may be downloaded at run time (DESIGN §6): keep huggingface_hub off the network even
# if a path is mistyped and faster-whisper falls back to treating it as a hub id.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import logging  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from app.voice.audio import SAMPLE_RATE, read_audio  # noqa: E402
from app.voice.hearing_choice import (  # noqa: E402
    DomainScorer,
    _default_scorer,
    _numbers,
    _starts_with_wake,
    choose_domain_hearing,
    choose_hypothesis,
    choose_joint,
    choose_repair,
    choose_soundalike,
)
from app.voice.stt_config import (  # noqa: E402
    DEFAULT_HOTWORDS,
    DEFAULT_MODEL,
    DEFAULT_PROMPT,
    HALLUCINATIONS,
    MODEL_IDS,
    VOCABULARY,
    Segment,
    SttConfig,
    SttUnavailable,
    Transcript,
)
from app.voice.stt_filters import (  # noqa: E402
    collapse_loops,
    filter_segments,
    is_prompt_echo,
    normalise,
    prompt_leak,
    speech_level_dbfs,
)

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------- models
#: Whisper decodes at most this much audio in one window.
_WINDOW_S = 30

_MODELS: dict[tuple[str, int], Any] = {}
_MODELS_LOCK = threading.Lock()


def resolve_model_id(model: str) -> str:
    return MODEL_IDS.get(model, model)


def get_model(model: str = DEFAULT_MODEL, cpu_threads: int = 2) -> Any:
    """The loaded ``WhisperModel`` (once per process and thread count: ~75–145 MB each)."""
    mid = resolve_model_id(model)
    key = (mid, cpu_threads)
    with _MODELS_LOCK:
        if key in _MODELS:
            return _MODELS[key]
        try:
            from faster_whisper import WhisperModel  # noqa: PLC0415

            from app.runtime.models import model_path  # noqa: PLC0415

            path = Path(model) if Path(model).is_dir() else model_path(mid)
            m = WhisperModel(str(path), device="cpu", compute_type="int8",
                             cpu_threads=cpu_threads, num_workers=1)
        except Exception as exc:
            raise SttUnavailable(f"speech-to-text model {model!r} could not be loaded: {exc}") \
                from exc
        _MODELS[key] = m
        return m


def _heavy_lock() -> Any:
    from app.runtime.scheduler import HEAVY_STAGE_LOCK  # noqa: PLC0415

    return HEAVY_STAGE_LOCK


class WhisperSTT:
    """Transcribe 16 kHz float32 arrays (VAD segments) or files."""

    def __init__(self, config: SttConfig | None = None, *, model: str | None = None,
                 lock: Any = "default", scorer: DomainScorer | None | str = "default") -> None:
        cfg = config or SttConfig()
        if model is not None:
            cfg = SttConfig(**{**cfg.__dict__, "model": model})
        self.config = cfg
        self.lock = _heavy_lock() if lock == "default" else lock
        #: How well a hypothesis reads as a console command (None: Whisper's order stands).
        self.scorer: DomainScorer | None = _default_scorer() if scorer == "default" else \
            scorer  # type: ignore[assignment]
        self._model: Any = None
        #: The last sound-alike check: texts scored and the one picked (for tuning, traces).
        self.last_soundalikes: dict[str, Any] | None = None
        #: The last phrasing-model hearing offered (app.voice.domain_asr) and whether taken.
        self.last_domain: dict[str, Any] | None = None
        #: Set by the voice pipeline while it waits for the wake word: then only a hearing
        #: that starts with the name can matter, and the phrasing model is not asked about
        #: the rest (OR talk), which saves its ~0.1 s per utterance of chatter.
        self.domain_needs_wake = False
        self._second: WhisperSTT | None = None
        self._second_failed = False
        self._last_scoring: dict[str, Any] | None = None

    @property
    def model_name(self) -> str:
        return self.config.model

    def load(self) -> WhisperSTT:
        if self._model is None:
            self._model = get_model(self.config.model, self.config.cpu_threads)
        return self

    def transcribe(self, audio: np.ndarray | str | Path, *, prompt: str | None = "default",
                   prefix: str | None = None) -> Transcript:
        """``audio``: a segment already cut by our VAD (so Whisper's own VAD stays off) or a
        file path. ``prompt=None`` disables the vocabulary prompt for this call; ``prefix``
        forces the transcript's first words (the wake word, when the audio says it is there)."""
        self.load()
        cfg = self.config
        t0 = time.perf_counter()
        x = read_audio(audio) if isinstance(audio, (str, Path)) else \
            np.asarray(audio, dtype=np.float32).reshape(-1)
        level = speech_level_dbfs(x)
        audio_s = len(x) / SAMPLE_RATE
        if len(x) < SAMPLE_RATE // 10:  # under 0.1 s: nothing Whisper could read
            return Transcript("", _ms(t0), level_dbfs=level, audio_s=audio_s, model=cfg.model,
                              dropped=["too-short"])
        use_prompt = cfg.initial_prompt if prompt == "default" else prompt
        wait_ms = 0.0
        lock = self.lock
        got = False
        if lock is not None:
            tl = time.perf_counter()
            got = lock.acquire("stt", timeout=cfg.lock_timeout_s)
            wait_ms = _ms(tl)
            if not got:
                log.warning("STT ran while %s held the heavy-stage lock for %.0f s",
                            lock.holder, cfg.lock_timeout_s)
        self._last_scoring = None
        self.last_domain = None
        try:
            segments, alts = self._decode(x, use_prompt,
                                          cfg.hotwords if prompt is not None else None,
                                          prefix=prefix)
            text, reasons = filter_segments(segments, level, cfg)
            retried = False
            if use_prompt and cfg.retry_on_prompt_leak and text and prompt_leak(text):
                # Heard the wake word first? Keep it as a forced prefix (Whisper then decodes
                # the command after it, without the prompt's list bias); else hotwords only.
                prefix = "davinci," if _starts_with_wake(text) else None
                again, alts2 = self._decode(x, None, cfg.hotwords, prefix=prefix)
                text2, reasons2 = filter_segments(again, level, cfg)
                if text2:
                    reasons = ["prompt-leak", *reasons2]
                    first_raw = " ".join(s.text.strip() for s in segments).strip()
                    segments, text, retried, alts = again, text2, True, alts2
        finally:
            if got:
                lock.release()
        raw = " ".join(s.text.strip() for s in segments).strip()
        tr = Transcript(text, _ms(t0), raw_text=raw, segments=segments, dropped=reasons,
                        level_dbfs=level, audio_s=audio_s, model=cfg.model, lock_wait_ms=wait_ms)
        if alts is not None:
            tr.alternatives, tr.chosen = alts
            if cfg.second_mode == "joint":  # ~2–3 MB of encoder output: only when used
                tr.scoring = self._last_scoring
        self._last_scoring = None
        if retried:
            tr.first_raw_text = first_raw
        tr.domain = self.last_domain
        return tr

    def second_stt(self) -> WhisperSTT | None:
        """The second model (``config.second_model``), loaded on first use; None when it is
        off or could not be loaded (then said once in the log, not per command)."""
        cfg = self.config
        if not cfg.second_model or self._second_failed or \
                resolve_model_id(cfg.second_model) == resolve_model_id(cfg.model):
            return None  # off, broken, or the same model again (base chosen as the first)
        if self._second is None:
            try:
                # the joint choice scores the second model's beam itself: its own sound-alike
                # check would only cost time
                self._second = WhisperSTT(replace(cfg, model=cfg.second_model,
                                                  second_model=None, domain_asr=False,
                                                  soundalikes=0 if cfg.second_mode == "joint"
                                                  else cfg.soundalikes),
                                          lock=self.lock, scorer=self.scorer).load()
            except SttUnavailable as exc:
                log.warning("second-opinion STT off: %s", exc)
                self._second_failed = True
                return None
        return self._second

    def second_opinion(self, audio: np.ndarray | str | Path, first: Transcript) -> Transcript:
        """Ask the second model (``config.second_model``) about a command tiny Whisper heard
        as something not wholly made of console words, and keep the hearing that reads as more
        of a command.

        Tiny and base err differently: on the dev split's audio (630 commands, three voices)
        base alone was worse than tiny (418 vs 438 transcripts exact), but taking base's
        hearing when it covers more of the console's vocabulary than tiny's raised single-pass
        success 522 → 541 clean and 290 → 318 at 10 dB SNR (``docs/BENCHMARKS.md``). Never
        asked when tiny's hearing is already all console words or is out of scope (pinned);
        base's hearing is never taken when it is out of scope, when it differs from tiny's in
        whether it starts with the wake word (no false wakes from here), or when it covers no
        more. For commands only: the live pipeline asks after the wake word, never about
        chatter. Costs one base decode (~0.3–0.6 s on two cores) on the doubtful commands.

        With ``second_mode="joint"`` (an option; see :class:`SttConfig`) the decision is no
        longer base's hearing against tiny's coverage: each model's likeliest hearings are
        scored against the audio by both models (:meth:`_joint`, :func:`choose_joint`), and
        base is also asked about a hearing that is all console words when tiny was unsure of
        it (``joint_below_logprob``), since tiny also mishears commands into other console
        words ("And how old is the patient?", "Tilt the right lung."). An empty first hearing
        falls back to the coverage rule."""
        scorer, cfg = self.scorer, self.config
        if not cfg.second_model or scorer is None or self._second_failed or \
                "too-short" in first.dropped:
            return first
        text = first.text or ""
        cov = scorer.coverage(text) if text else 0.0
        scoring, first.scoring = first.scoring, None  # used at most once, never kept
        joint = cfg.second_mode == "joint" and scoring is not None
        if text and scorer.pinned(text):
            return first
        lp1 = first.logprob
        unsure = bool(text) and cov >= 1.0 and not joint and lp1 is not None and \
            cfg.second_below_logprob is not None and lp1 < cfg.second_below_logprob
        if text and cov >= 1.0 and not unsure and not (
                joint and cfg.joint_below_logprob is not None and
                (lp1 or 0.0) < cfg.joint_below_logprob):
            return first
        second = self.second_stt()
        if second is None:
            return first
        other = second.transcribe(audio)
        other_scoring, other.scoring = other.scoring, None
        if joint and other_scoring is not None and text:
            return self._joint(first, scoring, other, other_scoring, second)
        t2 = other.text or ""
        taken = bool(t2) and not scorer.pinned(t2) and \
            _starts_with_wake(t2) == _starts_with_wake(text)
        if unsure:  # both all console words: the surer model's hearing, same numbers
            lp2 = other.logprob
            taken = taken and t2 != text and scorer.coverage(t2) >= 1.0 and lp2 is not None \
                and lp1 is not None and lp2 > lp1 + cfg.second_margin and \
                _numbers(t2) == _numbers(text)
        else:
            taken = taken and scorer.coverage(t2) > cov
        info = {"model": other.model, "text": t2, "taken": taken, "first_text": text,
                "first_model": first.model, "ms": round(other.ms, 1),
                "why": "unsure" if unsure else "not console words"}
        if not taken:
            first.second = info
            first.ms += other.ms
            return first
        other.second = info
        other.ms += first.ms
        return other

    def _joint(self, first: Transcript, a: dict[str, Any], other: Transcript,
               b: dict[str, Any], second: WhisperSTT) -> Transcript:
        """The joint second opinion (see :func:`choose_joint`): both models score each
        model's likeliest hearings and tiny's choice, with their own encoder output (``a``,
        ``b``: the transcripts' scoring) reused; one batched forced decode each."""
        t0 = time.perf_counter()
        top = first.alternatives[0][0] if first.alternatives else first.text
        current = first.text or ""
        k = max(1, self.config.joint_nbest)
        # each model's likeliest few hearings and tiny's choice: a forced decode costs
        # ~30–120 ms per text on two cores, and more texts won nothing on the dev split
        texts = [t for t in dict.fromkeys([current, *a.get("texts", [])[:k],
                                           *b.get("texts", [])[:k]]) if t]
        info: dict[str, Any] = {"model": other.model, "text": other.text, "mode": "joint",
                                "first_text": current, "first_model": first.model,
                                "candidates": len(texts)}
        picked = current
        if current and texts:
            lock, got = self.lock, False
            if lock is not None:
                got = lock.acquire("stt", timeout=self.config.lock_timeout_s)
            s1: dict[str, float] = {}
            s2: dict[str, float] = {}
            try:
                s1 = self._forced_logprobs(a["enc"], a["ids"], a["frames"], a["tok"], texts)
                s2 = second._forced_logprobs(b["enc"], b["ids"], b["frames"], b["tok"], texts)
            except Exception as exc:  # noqa: BLE001 - a failed second look keeps the first
                log.warning("joint second opinion failed, first hearing kept: %s", exc)
                info["error"] = f"{type(exc).__name__}: {exc}"
            finally:
                if got:
                    lock.release()
            if s1 and s2:
                picked = choose_joint(current, top, s1, s2, self.scorer,
                                      self.config.domain_weight, self.config.joint_first_weight,
                                      self.config.joint_max_gap)
                info["scores"] = {t: [round(s1[t], 3), round(s2[t], 3)] for t in texts}
        info["taken"] = picked != current
        first.ms += other.ms + _ms(t0)
        info["ms"] = round(other.ms + _ms(t0), 1)
        first.second = info
        if picked != current:
            first.alternatives.append((picked, float(s1[picked]), self.scorer.coverage(picked)))
            first.chosen = len(first.alternatives) - 1
            first.text = picked
        return first

    def _decode(self, x: np.ndarray, initial_prompt: str | None, hotwords: str | None,
                prefix: str | None = None,
                ) -> tuple[list[Segment], tuple[list[tuple[str, float, float]], int] | None]:
        """Segments, and the beam's hypotheses with the rescoring's choice (or None)."""
        if self.config.nbest > 1 and len(x) <= _WINDOW_S * SAMPLE_RATE:
            return self._decode_nbest(x, initial_prompt, hotwords, prefix)
        segs_iter, _info = self._model.transcribe(
            x, language=self.config.language, beam_size=self.config.beam_size,
            temperature=0.0, vad_filter=False, without_timestamps=True,
            condition_on_previous_text=False, initial_prompt=initial_prompt, hotwords=hotwords,
            prefix=prefix,
            max_new_tokens=self.config.max_new_tokens,
            # The filters decide; Whisper's own skip rule would hide why text vanished.
            no_speech_threshold=None, log_prob_threshold=None, compression_ratio_threshold=None)
        return [Segment(s.text, float(s.start), float(s.end), float(s.avg_logprob),
                        float(s.no_speech_prob), float(s.compression_ratio))
                for s in segs_iter], None

    def _decode_nbest(self, x: np.ndarray, initial_prompt: str | None, hotwords: str | None,
                      prefix: str | None,
                      ) -> tuple[list[Segment], tuple[list[tuple[str, float, float]], int]]:
        """One 30 s window decoded by beam search into ``nbest`` hypotheses (faster-whisper's
        own steps: features, encoder, prompt with hotwords/prefix, generate), then
        :func:`choose_hypothesis`. The filters see Whisper's top hypothesis's confidence."""
        from faster_whisper.audio import pad_or_trim  # noqa: PLC0415
        from faster_whisper.tokenizer import Tokenizer  # noqa: PLC0415
        from faster_whisper.transcribe import (  # noqa: PLC0415
            get_compression_ratio,
            get_suppressed_tokens,
        )

        cfg, m = self.config, self._model
        tok = Tokenizer(m.hf_tokenizer, m.model.is_multilingual, task="transcribe",
                        language=cfg.language)
        feats = m.feature_extractor(x)
        content = feats.shape[-1] - 1
        enc = m.encode(pad_or_trim(feats[:, :content]))
        previous = tok.encode(" " + initial_prompt.strip()) if initial_prompt else []
        ids = m.get_prompt(tok, previous, without_timestamps=True, prefix=prefix,
                           hotwords=hotwords)
        n = max(1, cfg.nbest)
        res = m.model.generate(enc, [ids], beam_size=max(n, cfg.beam_size), num_hypotheses=n,
                               length_penalty=1.0, max_length=len(ids) + cfg.max_new_tokens,
                               return_scores=True, return_no_speech_prob=True,
                               suppress_blank=True,
                               suppress_tokens=get_suppressed_tokens(tok, [-1]))[0]
        hyps: list[tuple[str, float]] = []
        for seq, score in zip(res.sequences_ids, res.scores, strict=True):
            text = tok.decode(seq).strip()  # a forced prefix is part of the sequence
            hyps.append((text, float(score)))
        # The average log-probability faster-whisper reports (cumulative over length + 1).
        top_len = len(res.sequences_ids[0])
        avg = hyps[0][1] * top_len / (top_len + 1)
        chosen, covs = choose_hypothesis(hyps, self.scorer, cfg.domain_weight,
                                         cfg.max_logprob_gap, cfg.min_coverage)
        alts = [(t, lp, c) for (t, lp), c in zip(hyps, covs, strict=True)]
        if cfg.soundalikes > 0 and self.scorer is not None and hyps[0][0] and (
                covs[chosen] < 1.0 or cfg.repair_by_sound):
            picked = self._soundalike(enc, ids, content, tok, hyps[0][0], hyps[chosen][0],
                                      repair=covs[chosen] >= 1.0)
            if picked is not None:
                text_, lp_ = picked
                alts.append((text_, lp_, self.scorer.coverage(text_)))
                chosen = len(alts) - 1
        # not for a forced prefix (the wake rescue) and not when a rewrite was just taken
        if cfg.domain_asr and prefix is None and self.scorer is not None and hyps[0][0] \
                and chosen < len(hyps) and covs[chosen] < 1.0 and (
                    not self.domain_needs_wake or _starts_with_wake(hyps[0][0])):
            picked = self._domain_hearing(x, enc, ids, content, tok, hyps[0][0],
                                          hyps[chosen][0])
            if picked is not None:
                alts.append((picked[0], picked[1], 1.0))
                chosen = len(alts) - 1
        text = alts[chosen][0]
        self._last_scoring = {"enc": enc, "ids": ids, "frames": content, "tok": tok,
                              "texts": list(dict.fromkeys(h for h, _ in hyps if h))}
        dur = (len(x) / SAMPLE_RATE)
        seg = Segment(" " + text if text else "", 0.0, round(dur, 2), float(avg),
                      float(res.no_speech_prob), float(get_compression_ratio(text)))
        return ([seg] if text else []), (alts, chosen)

    def _soundalike(self, enc: Any, prompt_ids: list[int], frames: int, tok: Any, top: str,
                    current: str, repair: bool = False) -> tuple[str, float] | None:
        """Score sound-alike rewrites of the top and current hypotheses against the audio and
        return the winning rewrite with its per-token log-probability (see
        :func:`choose_soundalike`; with ``repair``, a hearing wholly of console words after
        correction, rewrites of ``current`` only and :func:`choose_repair`). The encoder
        output is reused; one batched forced decode."""
        scorer, cfg = self.scorer, self.config
        variants = getattr(scorer, "variants", None)
        if variants is None or scorer is None or scorer.pinned(top) or (
                repair and not hasattr(scorer, "reading")):  # a plain scorer: no repair
            return None
        cands: list[str] = []
        for t in dict.fromkeys((current,) if repair else (current, top)):
            cands += [v for v in variants(t) if v not in cands]
        cands = cands[:cfg.soundalikes]
        if not cands:
            return None
        texts = list(dict.fromkeys((top, current, *cands)))
        scores = self._forced_logprobs(enc, prompt_ids, frames, tok, texts)
        if repair:
            best = choose_repair(top, current, scores, scorer, cfg.repair_gap,
                                 cfg.repair_margin)
        else:
            best = choose_soundalike(top, current, scores, scorer, cfg.domain_weight,
                                     cfg.soundalike_gap)
        self.last_soundalikes = {"scored": {t: round(v, 3) for t, v in scores.items()},
                                 "picked": best}
        return (best, scores[best]) if best is not None else None

    def _domain_hearing(self, x: np.ndarray, enc: Any, prompt_ids: list[int], frames: int,
                        tok: Any, top: str, current: str) -> tuple[str, float] | None:
        """The phrasing model's hearing of ``x`` when :func:`choose_domain_hearing` takes it
        (Whisper forced through it, the encoder output reused), with its log-probability."""
        from app.voice.domain_asr import shared_recognizer  # noqa: PLC0415

        rec = shared_recognizer()
        if not rec.available:
            return None
        heard = rec.hear(x)
        self.last_domain = {"heard": heard, "taken": False}
        if not heard or heard == current or self.scorer is None or \
                self.scorer.coverage(heard) < 1.0 or self.scorer.pinned(heard):
            return None  # cannot win (choose_domain_hearing): no forced decode for it
        scores = self._forced_logprobs(enc, prompt_ids, frames, tok,
                                       list(dict.fromkeys((top, heard))))
        best = choose_domain_hearing(top, current, heard, scores, self.scorer,
                                     self.config.domain_asr_gap)
        self.last_domain = {"heard": heard, "taken": best is not None,
                            "logprob": round(scores[heard], 3), "top": round(scores[top], 3)}
        return (best, scores[best]) if best is not None else None

    def _forced_logprobs(self, enc: Any, prompt_ids: list[int], frames: int, tok: Any,
                         texts: list[str]) -> dict[str, float]:
        """Per-token log-probability of each text as the transcript of the encoded audio
        (CTranslate2 ``align``: the decoder forced through the text, same prompt)."""
        import ctranslate2  # noqa: PLC0415

        toks = [tok.encode(" " + t.strip()) for t in texts]
        e = np.asarray(enc)
        batch = ctranslate2.StorageView.from_array(
            np.ascontiguousarray(np.repeat(e[:1], len(toks), axis=0)))
        res = self._model.model.align(batch, prompt_ids, toks, frames)
        out: dict[str, float] = {}
        for t, tk, r in zip(texts, toks, res, strict=True):
            p = np.asarray(r.text_token_probs[:len(tk)], dtype=np.float64)
            out[t] = float(np.log(np.maximum(p, 1e-12)).sum() / max(1, len(tk)))
        return out


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)


# ---------------------------------------------------------------------- eval transcriber
def make_transcriber(model: str = DEFAULT_MODEL, *, strip_wake: bool = True, use_vad: bool = True,
                     config: SttConfig | None = None) -> Callable[[str | Path], dict[str, Any]]:
    """``transcribe(path) -> {"text", "ms", ...}`` for ``visa-console eval --mode audio``.

    The clip goes through what the live pipeline does to an utterance: Silero VAD (no speech
    → empty text, Whisper not even run; otherwise the speech span with a little margin), then
    Whisper and the hallucination filters, then the wake word, if the clip starts with it, is
    removed so ``text`` is the command. Extra keys: ``raw_text``, ``wake`` (the match or None),
    ``dropped``, ``segments``, ``speech_s``, ``model``, and with n-best decoding
    ``alternatives`` and ``chosen``. The model loads here, once.
    """
    stt = WhisperSTT(config, model=model).load()
    from app.voice.wakeword import WakeWordSpotter  # noqa: PLC0415

    spotter = WakeWordSpotter()
    segmenter = None
    if use_vad:
        from app.voice.vad import EndpointConfig, VadSegmenter  # noqa: PLC0415

        # A generous pause: a whole clip is one command, never cut in two here.
        segmenter = VadSegmenter(config=EndpointConfig(silence_s=2.0, max_s=60.0,
                                                       min_speech_s=0.15))

    def transcribe(path: str | Path) -> dict[str, Any]:
        t0 = time.perf_counter()
        x = read_audio(path)
        speech_s = len(x) / SAMPLE_RATE
        if segmenter is not None:
            segs = segmenter.speech_segments(x)
            if not segs:
                return {"text": "", "ms": _ms(t0), "raw_text": "", "wake": None,
                        "dropped": ["no-speech-detected"], "segments": [], "speech_s": 0.0,
                        "model": stt.model_name}
            pad = int(0.3 * SAMPLE_RATE)
            a = max(0, int(segs[0].speech_start * SAMPLE_RATE) - pad)
            b = min(len(x), int(segs[-1].speech_end * SAMPLE_RATE) + pad)
            x = x[a:b]
            speech_s = sum(s.voiced_s for s in segs)
        tr = stt.second_opinion(x, stt.transcribe(x))  # a clip here is always a command
        text, wake = tr.text, None
        if strip_wake and text:
            m = spotter.match(text)
            if m.detected:
                text, wake = m.command, m.to_dict()
        d = tr.to_dict()
        return {"text": text, "ms": _ms(t0), "raw_text": tr.raw_text, "wake": wake,
                "logprob": tr.logprob, "dropped": tr.dropped, "segments": d["segments"],
                "speech_s": round(speech_s, 2), "model": tr.model,
                **{k: d[k] for k in ("alternatives", "chosen", "second", "domain") if k in d}}

    return transcribe


# The choice rules (app.voice.hearing_choice), the settings and results (app.voice.stt_config)
# and the output filters (app.voice.stt_filters) are re-exported for callers of this module.
__all__ = ["DEFAULT_HOTWORDS", "DEFAULT_MODEL", "DEFAULT_PROMPT", "HALLUCINATIONS", "VOCABULARY",
           "DomainScorer", "choose_hypothesis", "choose_joint", "choose_repair",
           "choose_soundalike", "Segment", "SttConfig", "SttUnavailable", "Transcript", "WhisperSTT",
           "collapse_loops", "filter_segments", "get_model", "is_prompt_echo",
           "make_transcriber", "normalise", "prompt_leak", "speech_level_dbfs"]
