"""Synthesised operating-room noise and SNR mixing, for the audio evaluation dataset.

Pure numpy, deterministic by seed: the same ``(n, sr, seed)`` always gives the same samples,
so a noisy dataset can be regenerated bit for bit and a failing clip can be reproduced.

Noise sources (each returns float64 samples; the level conventions are below):

- :func:`suction_hiss` - band-passed noise (about 1-7 kHz) with a faint whistle resonance and
  slow amplitude modulation, switched on and off the way a suction tip is used.
- :func:`monitor_beeps` - a pulse-oximeter pattern: short 800-1000 Hz tones at the heart rate,
  whose pitch drifts from beat to beat (the oximeter maps SpO2 to pitch).
- :func:`electrosurgical_buzz` - bursts of a harmonic-rich 50/60 Hz-ish buzz while the pencil is
  active, with high-frequency crackle (tissue sizzle) on top.
- :func:`hvac_rumble` - low-passed, reddish noise with a faint fan tone: ventilation.
- :func:`babble` - background talk: 3-4 talkers made of other voices' sentences, time-shifted,
  some reversed (unintelligible, so it cannot be mistaken for a console command). Without any
  source sentences it falls back to speech-shaped, syllable-modulated noise.
- :func:`room_tone` - a very quiet pinkish floor (about -60 dBFS) used to pad clips, so that a
  voice-activity detector never sees digital silence, which no real microphone produces.

:func:`or_scene` / :func:`or_noise` combine them into one operating-room scene per seed (which
sources are present, their relative levels and timing all follow from the seed).

Level convention: every source is scaled to unit RMS **while it is sounding** (over its
on-time for intermittent sources), so the relative levels in :data:`COMPONENT_LEVELS_DB` mean
"how loud it is when it is there". :func:`or_noise` then scales the sum to unit RMS; the final
level is set by :func:`mix_at_snr`.

SNR definition (:func:`snr_db`, :func:`mix_at_snr`): the ratio of mean speech power to mean
noise power, both measured over the **speech-active samples only** - the 20 ms frames of the
clean speech whose energy is within 40 dB of its loudest frame (and above -70 dBFS). The pauses
and the room-tone padding around a command are excluded, so a command with long pauses is not
mixed louder than a short one for the same nominal SNR (the idea of ITU-T P.56 active speech
level, simplified). Intermittent noise is counted only where it overlaps the speech.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

SR = 16000
FRAME_MS = 20.0
ACTIVE_REL_DB = 40.0
ACTIVE_FLOOR_DBFS = -70.0
PEAK_LIMIT = 0.98  # below full scale, so the int16 conversion can never wrap or saturate

# Relative level (dB) of each source while it sounds, and how often a scene contains it.
COMPONENT_LEVELS_DB: dict[str, float] = {
    "hvac": 0.0, "suction": 0.0, "beeps": -6.0, "buzz": -3.0, "babble": -4.0,
}
COMPONENT_PRESENCE: dict[str, float] = {
    "hvac": 1.0, "suction": 0.6, "beeps": 0.85, "buzz": 0.5, "babble": 0.75,
}
LEVEL_JITTER_DB = 3.0
COMPONENTS: tuple[str, ...] = tuple(COMPONENT_LEVELS_DB)


# ------------------------------------------------------------------------------ helpers
def seed_from(*parts: object) -> int:
    """A stable 63-bit seed from any printable parts (Python's hash() is salted per process)."""
    h = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "little") >> 1


def _rng(seed: int, stream: int = 0) -> np.random.Generator:
    # Separate streams per component: adding or reordering one source never changes the others.
    return np.random.default_rng(np.random.SeedSequence([int(seed) & (2**63 - 1), stream]))


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0


def dbfs(x: np.ndarray) -> float:
    """RMS level in dBFS: 20·log10(RMS), full scale being 1.0."""
    r = rms(x)
    return 20.0 * np.log10(r) if r > 0 else -np.inf


def _unit(x: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """Scale to unit RMS, measured over ``where`` (the on-time) when given."""
    ref = x[where] if where is not None and where.any() else x
    r = rms(ref)
    return x / r if r > 0 else x


def _freq_filter(x: np.ndarray, sr: int, gain: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    # FFT-domain filtering: exact magnitude response, no scipy needed. It is circular, which is
    # harmless for noise (and makes the result loop seamlessly).
    spec = np.fft.rfft(x)
    f = np.fft.rfftfreq(x.size, 1.0 / sr)
    return np.fft.irfft(spec * gain(f), n=x.size)


def _band(f: np.ndarray, lo: float | None, hi: float | None, order: int = 4) -> np.ndarray:
    """Butterworth-like magnitude response of a band-pass (lo/hi None = that side open)."""
    g = np.ones_like(f)
    with np.errstate(divide="ignore"):
        if lo is not None:
            g = g / np.sqrt(1.0 + (lo / np.maximum(f, 1e-6)) ** (2 * order))
        if hi is not None:
            g = g / np.sqrt(1.0 + (f / hi) ** (2 * order))
    return g


def _tilt(f: np.ndarray, db_per_octave: float, ref_hz: float = 1000.0) -> np.ndarray:
    """A spectral slope: -3 dB/oct is pink, -6 dB/oct is red (brown)."""
    return (np.maximum(f, 20.0) / ref_hz) ** (db_per_octave / (20.0 * np.log10(2.0)))


def shaped_noise(n: int, sr: int, rng: np.random.Generator, lo: float | None, hi: float | None,
                 order: int = 4, tilt_db_per_octave: float = 0.0) -> np.ndarray:
    """Gaussian noise band-limited to [lo, hi] with an optional slope, unit RMS."""
    white = rng.standard_normal(n)
    return _unit(_freq_filter(white, sr, lambda f: _band(f, lo, hi, order)
                              * _tilt(f, tilt_db_per_octave)))


def slow_noise(n: int, sr: int, rng: np.random.Generator, cutoff_hz: float) -> np.ndarray:
    """Smooth random fluctuation (unit standard deviation) varying slower than ``cutoff_hz``."""
    z = _freq_filter(rng.standard_normal(n), sr, lambda f: _band(f, None, cutoff_hz, order=2))
    s = float(np.std(z))
    return z / s if s > 0 else z


def gate(n: int, sr: int, rng: np.random.Generator, on_s: tuple[float, float],
         off_s: tuple[float, float], fade_s: float = 0.04, start_on: float = 0.7) -> np.ndarray:
    """An on/off envelope (0..1) with raised-cosine fades: intermittent use of a device.

    The first segment is on with probability ``start_on``; a gate that would stay off for the
    whole clip is turned on in its middle, so a "present" source is always heard.
    """
    env = np.zeros(n)
    t, on = 0, bool(rng.random() < start_on)
    # Start mid-segment, so a clip does not always begin on a segment boundary.
    first = True
    while t < n:
        lo, hi = on_s if on else off_s
        length = int(rng.uniform(lo, hi) * sr)
        if first:
            length = int(length * rng.uniform(0.2, 1.0))
            first = False
        length = max(length, 1)
        if on:
            env[t:t + length] = 1.0
        t += length
        on = not on
    if not env.any():
        a = n // 4
        env[a:a + max(n // 2, 1)] = 1.0
    fade = int(fade_s * sr)
    if fade > 1:
        # Smooth each edge with a raised-cosine kernel (a moving average of the hard gate).
        k = np.hanning(2 * fade + 1)
        k /= k.sum()
        env = np.convolve(env, k, mode="same")
    return np.clip(env, 0.0, 1.0)


def _t(n: int, sr: int) -> np.ndarray:
    return np.arange(n) / sr


# ------------------------------------------------------------------------------ sources
def suction_hiss(n: int, sr: int = SR, seed: int = 0, intermittent: bool = True) -> np.ndarray:
    """Suction: broadband hiss (about 1-7 kHz), a faint whistle, slow amplitude modulation."""
    rng = _rng(seed, 1)
    lo, hi = rng.uniform(800.0, 1500.0), rng.uniform(5500.0, 7500.0)
    whistle_hz, whistle_db = rng.uniform(2000.0, 4000.0), rng.uniform(3.0, 8.0)

    def gain(f: np.ndarray) -> np.ndarray:
        bump = 1.0 + (10 ** (whistle_db / 20) - 1.0) * np.exp(-0.5 * ((f - whistle_hz) / 150.0) ** 2)
        return _band(f, lo, hi, order=3) * bump

    x = _unit(_freq_filter(rng.standard_normal(n), sr, gain))
    t = _t(n, sr)
    am = (1.0 + 0.3 * np.sin(2 * np.pi * rng.uniform(0.2, 0.8) * t + rng.uniform(0, 2 * np.pi)))
    am *= np.exp(0.25 * slow_noise(n, sr, rng, 1.5))  # the tip moving through fluid
    env = gate(n, sr, rng, (1.0, 4.0), (0.5, 3.0)) if intermittent else np.ones(n)
    return _unit(x * am * env, env > 0.5)


def monitor_beeps(n: int, sr: int = SR, seed: int = 0, bpm: float | None = None,
                  base_hz: float | None = None, drift_hz: float = 12.0) -> np.ndarray:
    """Pulse-oximeter beeps: one short tone per heartbeat, 800-1000 Hz, pitch drifting.

    ``drift_hz`` is the standard deviation of the beat-to-beat pitch step (0 = steady tone).
    """
    rng = _rng(seed, 2)
    bpm = float(rng.uniform(55.0, 100.0)) if bpm is None else float(bpm)
    f = float(rng.uniform(820.0, 980.0)) if base_hz is None else float(base_hz)
    period = 60.0 / bpm
    dur = rng.uniform(0.06, 0.10)
    m = int(dur * sr)
    attack, release = int(0.004 * sr), int(0.02 * sr)
    env = np.ones(m)
    env[:attack] = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, attack))
    env[m - release:] = 0.5 + 0.5 * np.cos(np.linspace(0, np.pi, release))
    out = np.zeros(n)
    on = np.zeros(n, dtype=bool)
    tt = np.arange(m) / sr
    t = rng.uniform(0.0, period)
    while t * sr < n:
        a = int(t * sr)
        ph = rng.uniform(0, 2 * np.pi)
        # A small loudspeaker: mostly the fundamental, a little 2nd and 3rd harmonic.
        tone = (np.sin(2 * np.pi * f * tt + ph) + 0.1 * np.sin(4 * np.pi * f * tt)
                + 0.05 * np.sin(6 * np.pi * f * tt)) * env
        b = min(n, a + m)
        out[a:b] += tone[: b - a]
        on[a:b] = True
        t += period * (1.0 + rng.normal(0.0, 0.02))
        f = float(np.clip(f + rng.normal(0.0, drift_hz), 780.0, 1020.0)) if drift_hz else f
    return _unit(out, on)


def electrosurgical_buzz(n: int, sr: int = SR, seed: int = 0, mains_hz: float | None = None,
                         crackle: bool = True, intermittent: bool = True) -> np.ndarray:
    """Electrosurgery: bursts of harmonic-rich 50/60 Hz-ish buzz plus high-frequency crackle."""
    rng = _rng(seed, 3)
    f0 = (float(rng.choice([50.0, 60.0])) if mains_hz is None else float(mains_hz))
    f0 *= 1.0 + rng.uniform(-0.01, 0.01)  # "-ish": generators and fans are never exact
    t = _t(n, sr)
    hum = np.zeros(n)
    for k in range(1, int(1500.0 / f0) + 1):
        amp = k ** -0.9 * 10 ** (rng.normal(0.0, 3.0) / 20) * (1.0 if k % 2 else 0.5)
        hum += amp * np.sin(2 * np.pi * k * f0 * t + rng.uniform(0, 2 * np.pi))
    hum = _unit(hum) * (1.0 + 0.15 * slow_noise(n, sr, rng, 20.0))  # a rough, unsteady buzz
    env = gate(n, sr, rng, (0.4, 1.5), (0.6, 3.0), fade_s=0.01) if intermittent else np.ones(n)
    x = hum
    if crackle:
        # Tissue sizzle: a Poisson train of random-sized clicks, high-passed above ~2.5 kHz.
        rate = rng.uniform(150.0, 400.0)
        clicks = (rng.random(n) < rate / sr) * np.minimum(rng.lognormal(0.0, 0.5, n), 4.0)
        cr = _freq_filter(clicks, sr, lambda f: _band(f, 2500.0, 7000.0, order=3))
        x = hum + 0.5 * _unit(cr)
    return _unit(x * env, env > 0.5)


def hvac_rumble(n: int, sr: int = SR, seed: int = 0) -> np.ndarray:
    """Ventilation: reddish low-passed noise, a faint fan tone and a little air hiss."""
    rng = _rng(seed, 4)
    cutoff = rng.uniform(150.0, 300.0)
    rumble = shaped_noise(n, sr, rng, 20.0, cutoff, order=2, tilt_db_per_octave=-3.0)
    fan = rng.uniform(60.0, 150.0)
    t = _t(n, sr)
    tone = np.sin(2 * np.pi * fan * t) + 0.4 * np.sin(2 * np.pi * 2 * fan * t + 1.0)
    air = shaped_noise(n, sr, rng, 300.0, 6000.0, order=2, tilt_db_per_octave=-3.0)
    x = rumble + 0.2 * _unit(tone) + 0.04 * air
    return _unit(x * (1.0 + 0.1 * slow_noise(n, sr, rng, 0.5)))


def _fit(x: np.ndarray, n: int) -> np.ndarray:
    """Tile or cut ``x`` to ``n`` samples."""
    if x.size == 0:
        return np.zeros(n)
    if x.size < n:
        x = np.tile(x, int(np.ceil(n / x.size)))
    return x[:n]


def babble(n: int, sources: Sequence[np.ndarray] | None = None, sr: int = SR, seed: int = 0,
           talkers: int | None = None, reverse_prob: float = 0.5) -> np.ndarray:
    """Background talk: ``talkers`` (3-4) streams of other voices' sentences, at a distance.

    Each talker strings random sentences from ``sources`` (each at ``sr``) with short gaps,
    starting at a random offset (time-shifted against the command), about half of them played
    backwards. Without sources, speech-shaped noise with a syllable-rate envelope stands in.
    """
    rng = _rng(seed, 5)
    talkers = int(rng.integers(3, 5)) if talkers is None else int(talkers)
    srcs = [np.asarray(s, dtype=np.float64) for s in (sources or []) if np.size(s) > 0]
    out = np.zeros(n)
    for _ in range(talkers):
        if srcs:
            shift = int(rng.uniform(0.0, 1.5) * sr)
            parts: list[np.ndarray] = []
            total = 0
            while total < n + shift:
                s = srcs[int(rng.integers(len(srcs)))]
                s = s[::-1] if rng.random() < reverse_prob else s
                s = _unit(s, active_mask(s, sr))
                gap = np.zeros(int(rng.uniform(0.1, 0.6) * sr))
                parts += [s, gap]
                total += s.size + gap.size
            stream = np.concatenate(parts)[shift:shift + n]
        else:
            voice = shaped_noise(n, sr, rng, 150.0, 4000.0, order=2, tilt_db_per_octave=-4.0)
            syll = np.maximum(slow_noise(n, sr, rng, 5.0), 0.0)  # ~4-5 syllables a second
            stream = _unit(voice * syll)
        out += _unit(stream) * 10 ** (rng.uniform(-4.0, 0.0) / 20)
    # Distant talkers lose their highs (air absorption, the drapes between them and the mic).
    out = _freq_filter(out, sr, lambda f: _band(f, 80.0, 3500.0, order=2))
    return _unit(out)


def room_tone(n: int, sr: int = SR, seed: int = 0, level_dbfs: float = -60.0) -> np.ndarray:
    """A quiet pinkish noise floor at ``level_dbfs`` RMS: what a "silent" room records."""
    rng = _rng(seed, 6)
    return shaped_noise(n, sr, rng, 40.0, 7000.0, order=2, tilt_db_per_octave=-3.0) \
        * 10 ** (level_dbfs / 20)


# ------------------------------------------------------------------------------ scene
def or_scene(n: int, sr: int = SR, seed: int = 0,
             babble_sources: Sequence[np.ndarray] | None = None,
             components: Sequence[str] = COMPONENTS) -> dict[str, np.ndarray]:
    """One operating-room scene: the present sources, each already at its relative level.

    The seed decides which sources are present (ventilation always is), their levels
    (±3 dB around :data:`COMPONENT_LEVELS_DB`) and all their timing.
    """
    unknown = set(components) - set(COMPONENTS)
    if unknown:
        raise ValueError(f"unknown noise component(s) {sorted(unknown)}; known: {COMPONENTS}")
    rng = _rng(seed, 0)
    draws = {c: (rng.random(), rng.uniform(-LEVEL_JITTER_DB, LEVEL_JITTER_DB)) for c in COMPONENTS}
    makers: dict[str, Callable[[int], np.ndarray]] = {
        "hvac": lambda s: hvac_rumble(n, sr, s),
        "suction": lambda s: suction_hiss(n, sr, s),
        "beeps": lambda s: monitor_beeps(n, sr, s),
        "buzz": lambda s: electrosurgical_buzz(n, sr, s),
        "babble": lambda s: babble(n, babble_sources, sr, s),
    }
    scene: dict[str, np.ndarray] = {}
    for i, c in enumerate(COMPONENTS):
        p, jitter = draws[c]
        if c not in components or p >= COMPONENT_PRESENCE[c]:
            continue
        gain = 10 ** ((COMPONENT_LEVELS_DB[c] + jitter) / 20)
        scene[c] = makers[c](seed_from(seed, c, i)) * gain
    if not scene:  # only possible when the caller excluded hvac: keep one source
        c = components[0]
        scene[c] = makers[c](seed_from(seed, c))
    return scene


def or_noise(n: int, sr: int = SR, seed: int = 0,
             babble_sources: Sequence[np.ndarray] | None = None,
             components: Sequence[str] = COMPONENTS) -> np.ndarray:
    """The summed operating-room scene for ``seed``, unit RMS."""
    scene = or_scene(n, sr, seed, babble_sources, components)
    return _unit(np.sum(list(scene.values()), axis=0))


# ------------------------------------------------------------------------------ SNR
def active_mask(x: np.ndarray, sr: int = SR, frame_ms: float = FRAME_MS,
                rel_db: float = ACTIVE_REL_DB, floor_dbfs: float = ACTIVE_FLOOR_DBFS) -> np.ndarray:
    """Per-sample mask of the speech-active frames (see the module's SNR definition)."""
    x = np.asarray(x, dtype=np.float64)
    hop = max(int(sr * frame_ms / 1000), 1)
    nf = int(np.ceil(x.size / hop))
    if nf == 0:
        return np.zeros(0, dtype=bool)
    pad = np.zeros(nf * hop)
    pad[: x.size] = x
    e = np.mean(pad.reshape(nf, hop) ** 2, axis=1)
    with np.errstate(divide="ignore"):
        e_db = 10 * np.log10(e)
    if not np.isfinite(e_db).any():
        return np.zeros(x.size, dtype=bool)
    frames = (e_db >= np.max(e_db) - rel_db) & (e_db >= floor_dbfs)
    return np.repeat(frames, hop)[: x.size]


def snr_db(speech: np.ndarray, noise: np.ndarray, sr: int = SR,
           active: np.ndarray | None = None) -> float:
    """SNR (dB) of a speech and a noise signal of equal length, over the speech-active part."""
    mask = active_mask(speech, sr) if active is None else np.asarray(active, dtype=bool)
    if not mask.any():
        mask = np.ones(speech.size, dtype=bool)
    ps = float(np.mean(np.square(speech[mask], dtype=np.float64)))
    pn = float(np.mean(np.square(noise[: speech.size][mask], dtype=np.float64)))
    return 10 * np.log10(ps / pn) if pn > 0 else np.inf


@dataclass(frozen=True)
class Mix:
    """A mixture and its parts: ``audio == speech + noise`` (after any clipping protection)."""

    audio: np.ndarray
    speech: np.ndarray
    noise: np.ndarray
    snr_db: float
    noise_gain: float  # applied to the unit noise, including ``scale``
    scale: float  # < 1 when clipping protection turned the whole mixture down


def mix_at_snr_parts(speech: np.ndarray, noise: np.ndarray, snr_db: float, sr: int = SR, *,
                     active: np.ndarray | None = None, reference_dbfs: float | None = None,
                     peak: float = PEAK_LIMIT) -> Mix:
    """Mix ``noise`` (tiled or cut to length) under ``speech`` at ``snr_db``; see :func:`mix_at_snr`."""
    s = np.asarray(speech, dtype=np.float64)
    n = _fit(np.asarray(noise, dtype=np.float64), s.size)
    mask = active_mask(s, sr) if active is None else np.asarray(active, dtype=bool)
    pn = float(np.mean(n[mask] ** 2)) if mask.any() else 0.0
    if pn <= 0:
        pn = float(np.mean(n ** 2))  # the noise is silent under the speech: use its mean power
    if pn <= 0:
        raise ValueError("the noise is silent; cannot mix it at an SNR")
    if mask.any():
        ps = float(np.mean(s[mask] ** 2))
    elif reference_dbfs is not None:
        # No speech (a silent dataset row): put the noise where it would be under a nominal
        # command at ``reference_dbfs``, so "silent" rows get the room's noise, not silence.
        ps = 10 ** (reference_dbfs / 10)
    else:
        raise ValueError("the speech has no active part; give reference_dbfs to set the noise level")
    g = float(np.sqrt(ps / (pn * 10 ** (snr_db / 10))))
    mix = s + g * n
    m = float(np.max(np.abs(mix))) if mix.size else 0.0
    # Clipping protection: scale the whole mixture (speech and noise alike, so the SNR is kept)
    # instead of clipping peaks, which would add distortion that no room produces.
    k = peak / m if m > peak else 1.0
    return Mix(audio=mix * k, speech=s * k, noise=g * n * k, snr_db=float(snr_db),
               noise_gain=g * k, scale=k)


def mix_at_snr(speech: np.ndarray, noise: np.ndarray, snr_db: float, sr: int = SR, *,
               active: np.ndarray | None = None, reference_dbfs: float | None = None,
               peak: float = PEAK_LIMIT) -> np.ndarray:
    """``speech + g·noise`` with g chosen so that :func:`snr_db` of the parts is ``snr_db``.

    The SNR is measured over the speech-active samples (``active``, by default
    :func:`active_mask` of the speech). If the mixture's peak would exceed ``peak`` the whole
    mixture is scaled down (never clipped), which keeps the SNR. A speech signal without any
    active part needs ``reference_dbfs``: the noise is then set as if speech of that RMS level
    were there.
    """
    return mix_at_snr_parts(speech, noise, snr_db, sr, active=active,
                            reference_dbfs=reference_dbfs, peak=peak).audio


__all__ = [
    "COMPONENTS", "COMPONENT_LEVELS_DB", "COMPONENT_PRESENCE", "Mix", "PEAK_LIMIT", "SR",
    "active_mask", "babble", "dbfs", "electrosurgical_buzz", "gate", "hvac_rumble",
    "mix_at_snr", "mix_at_snr_parts", "monitor_beeps", "or_noise", "or_scene", "rms",
    "room_tone", "seed_from", "shaped_noise", "slow_noise", "snr_db", "suction_hiss",
]
