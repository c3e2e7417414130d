"""Speech-to-text settings and results: the packaged Whisper model names, the domain prompt
and hotwords, what Whisper says over silence, ``SttConfig``, ``Segment`` and ``Transcript``.
"""

from __future__ import annotations

import os

# No model may be downloaded at run time (DESIGN §6): keep huggingface_hub off the network even
# if a path is mistyped and faster-whisper falls back to treating it as a hub id.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

#: Short names accepted for the packaged models → manifest ids.
MODEL_IDS = {"tiny.en": "whisper-tiny.en", "tiny": "whisper-tiny.en",
             "base": "whisper-base", "base.en": "whisper-base"}
DEFAULT_MODEL = "tiny.en"

#: Domain words Whisper would otherwise miss. A list, not a sentence (see the module docstring).
VOCABULARY = ("davinci", "CT", "axial", "coronal", "sagittal", "slice", "lobe", "nodule",
              "trachea", "bronchi", "airway", "lung", "PFT", "FEV1", "FVC", "BMI", "anterior",
              "posterior", "superior", "inferior", "zoom", "rotate")
DEFAULT_PROMPT = "Vocabulary: " + ", ".join(VOCABULARY) + "."
DEFAULT_HOTWORDS = "davinci CT"

#: What Whisper says over silence or noise (normalised: lower case, no punctuation).
HALLUCINATIONS = frozenset({
    "you", "thank you", "thank you very much", "thanks", "thanks for watching",
    "thank you for watching", "thanks for watching and see you next time", "bye", "bye bye",
    "goodbye", "please subscribe", "subscribe", "like and subscribe", "so", "oh", "uh", "um",
    "hmm", "mm", "okay", "the end", "i'm sorry", "music", "applause", "silence",
    "subtitles by the amara org community", "transcription by castingwords",
})


class SttUnavailable(RuntimeError):
    """The speech-to-text model could not be loaded (missing package or files)."""


@dataclass(frozen=True)
class SttConfig:
    model: str = DEFAULT_MODEL
    language: str = "en"
    beam_size: int = 1
    cpu_threads: int = 2
    initial_prompt: str | None = DEFAULT_PROMPT
    hotwords: str | None = DEFAULT_HOTWORDS
    max_new_tokens: int = 64            # a command is ~5–25 tokens; caps repetition loops
    # Filters (see filter_segments):
    no_speech_prob: float = 0.6         # with avg_logprob < logprob_with_no_speech → drop
    logprob_with_no_speech: float = -0.5
    min_avg_logprob: float = -1.0       # with no_speech_prob > doubt_no_speech → drop
    doubt_no_speech: float = 0.3
    max_compression_ratio: float = 2.4  # Whisper's own loop detector threshold
    low_energy_dbfs: float = -45.0      # below this the phrase blacklist applies unconditionally
    retry_on_prompt_leak: bool = True   # decode again without the prompt (see prompt_leak)
    lock_timeout_s: float = 15.0        # wait for the LLM to yield the cores, then go anyway
    # N-best domain rescoring (see choose_hypothesis): a beam of ``nbest`` hypotheses, and the
    # one best in (Whisper's per-token log-probability + domain_weight × domain coverage) wins,
    # among those within ``max_logprob_gap`` of Whisper's own first choice. nbest=1: greedy.
    nbest: int = 5
    domain_weight: float = 2.0          # tuned on the dev split (1.5–5 alike; 1.0 too timid)
    max_logprob_gap: float = 1.0
    min_coverage: float = 1.0
    # Sound-alike rewrites (see choose_soundalike): when the chosen hypothesis holds words the
    # console does not know, up to ``soundalikes`` rewrites with console terms that sound alike
    # are scored against the audio (forced decode) and may win. 0 turns it off.
    soundalikes: int = 8
    soundalike_gap: float = 0.5         # dev split: 0.5 and 1.0 alike clean, 0.5 safer
    # A hearing the text correction would repair by spelling ("Asterior 20." → anterior) has
    # its repair checked by the audio too (see choose_repair). Dev split: 2 of 53 such
    # hearings changed, the right one by 1.30, a wrong one by 0.56, hence the margin.
    repair_by_sound: bool = True
    repair_gap: float = 1.0
    repair_margin: float = 0.75
    # A third hearing (app.voice.domain_asr, choose_domain_hearing): pocketsphinx with a
    # language model of the console's phrasings, offered where Whisper's hearing is not
    # console words, within ``domain_asr_gap`` of Whisper's first choice when Whisper is forced
    # through it. An option, not the default: dev split single-pass 932 -> 951 of 1,260, but
    # the test split 611 -> 615 of 888 with multi-pass 680 -> 670 (flite clean 123
    # -> 117: phrasings the model never saw forced into ones it knows, acting where the console
    # used to ask again), docs/BENCHMARKS.md.
    domain_asr: bool = False
    domain_asr_gap: float = 2.5
    # Second opinion (see WhisperSTT.second_opinion): a command whose hearing is not wholly
    # console words is transcribed again by this larger model; its hearing wins when it reads
    # as more of a command. None turns it off.
    second_model: str | None = "base"
    # How the second opinion decides: "coverage" (base's hearing wins when it reads as more of
    # a command) or "joint" (each model's likeliest hearings are scored against the audio by
    # both models; the best in joint log-probability plus domain coverage wins, see
    # choose_joint). Joint won 25 more of 630 dev commands in replays but nothing on the test
    # split (609 vs 610 of 888 single-pass over six voice/noise runs) while adding ~0.4 s of
    # forced decodes to doubtful commands, so coverage stays the default (docs/BENCHMARKS.md).
    # joint_first_weight: the first model's share;
    # joint_below_logprob: a first hearing that is all console words is checked too when its
    # per-token log-probability is below this ("And how old is the patient?", "Tilt the right
    # lung." read as commands but wrong); 0.0 checks every command, None none of them. Dev
    # split replays (docs/BENCHMARKS.md): share 0.5 beat 0.7 and 0.85; -0.5 did as well as
    # checking every command (475 vs 472 of 630) and skips base on ~55% of clean commands.
    second_mode: str = "coverage"
    # Coverage mode: a hearing that is all console words but that tiny was unsure of (its
    # log-probability below ``second_below_logprob``) is asked about too, and base's hearing
    # wins when it is all console words and base is surer of it by ``second_margin`` ("Tilt
    # the right lung." -0.82 → base "Show the right lung." -0.23) and says the same numbers.
    # None: never asked.
    second_below_logprob: float | None = -0.3
    second_margin: float = 0.2
    joint_first_weight: float = 0.5
    joint_below_logprob: float | None = -0.5
    joint_max_gap: float | None = 0.5   # see choose_joint; dev: out-of-scope espeak +7, commands −3
    joint_nbest: int = 3                # hearings per model scored (dev: 3 as good as 5 + rewrites)


@dataclass
class Segment:
    text: str
    start: float
    end: float
    avg_logprob: float
    no_speech_prob: float
    compression_ratio: float
    dropped: str = ""  # why the filter removed it ("" = kept)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "start": round(self.start, 2), "end": round(self.end, 2),
                "avg_logprob": round(self.avg_logprob, 3),
                "no_speech_prob": round(self.no_speech_prob, 3),
                "compression_ratio": round(self.compression_ratio, 2),
                **({"dropped": self.dropped} if self.dropped else {})}


@dataclass
class Transcript:
    """One transcription. ``text`` is what survived the filters; ``raw_text`` what Whisper said."""

    text: str
    ms: float
    raw_text: str = ""
    segments: list[Segment] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    level_dbfs: float = -120.0
    audio_s: float = 0.0
    model: str = DEFAULT_MODEL
    lock_wait_ms: float = 0.0
    first_raw_text: str = ""  # the prompted transcript, when a prompt leak made us decode again
    #: The beam's hypotheses (text, per-token log-probability, domain coverage), Whisper's
    #: order; ``chosen`` is the index the domain rescoring picked (0: Whisper's own choice).
    alternatives: list[tuple[str, float, float]] = field(default_factory=list)
    chosen: int = 0
    #: When a second model was asked (see ``WhisperSTT.second_opinion``): its model, its
    #: text, whether it was taken, and the first model's text.
    second: dict[str, Any] | None = None
    #: When the phrasing model's hearing was offered (app.voice.domain_asr): what it heard,
    #: whether it was taken, and Whisper's forced scores of it and of its own first choice.
    domain: dict[str, Any] | None = None
    #: What a later forced decode needs (encoder output, prompt, tokenizer, the beam's texts);
    #: kept only in memory, for the joint second opinion.
    scoring: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def empty(self) -> bool:
        return not self.text.strip()

    @property
    def logprob(self) -> float | None:
        """Whisper's per-token log-probability of the text it gave (the chosen hypothesis,
        else the least confident kept segment); None when nothing was decoded."""
        if self.alternatives:
            return float(self.alternatives[self.chosen][1])
        kept = [s.avg_logprob for s in self.segments if not s.dropped]
        return float(min(kept)) if kept else None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "ms": round(self.ms, 1), "raw_text": self.raw_text,
                "segments": [s.to_dict() for s in self.segments], "dropped": self.dropped,
                "level_dbfs": round(self.level_dbfs, 1), "audio_s": round(self.audio_s, 2),
                "model": self.model, "lock_wait_ms": round(self.lock_wait_ms, 1),
                **({"first_raw_text": self.first_raw_text} if self.first_raw_text else {}),
                **({"alternatives": [[t, round(lp, 3), round(c, 3)]
                                     for t, lp, c in self.alternatives],
                    "chosen": self.chosen} if self.alternatives else {}),
                **({"second": dict(self.second)} if self.second else {}),
                **({"domain": dict(self.domain)} if self.domain else {})}
