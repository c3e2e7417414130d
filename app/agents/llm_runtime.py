"""LLM runtimes: the in-process llama.cpp model and an OpenAI-compatible server (DESIGN §3, §6).

Every LLM stage of the console asks for one JSON object that matches a JSON schema:

    runtime.complete_json(stage, system, user, schema, max_tokens, timeout_s) -> LLMResult

and gets back the parsed data (or ``None``), the raw text, ``ok``/``error``, timings, token counts
and the prompt-cache outcome for the trace. Nothing here raises for a bad answer: a stage that
times out, returns garbage or cannot reach its server comes back as ``ok=False`` with an error
code and a plain-words ``detail``, so the caller can fall back instead of blocking the console.

Why the local runtime looks the way it does (measured on 2 cores, DESIGN §3/§6):

* Prompt processing is the cost (~12-34 tokens/s), so each stage's prompt is split into a fixed
  **prefix** (system prompt + few-shot turns) and a short **suffix** (context + the user's words,
  always last). Prefix and suffix are tokenised separately and concatenated, so the prefix tokens
  are byte-for-byte identical on every call and llama.cpp's longest-common-prefix reuse applies.
* **Prefix warming**: ``warm(stages)`` evaluates every stage's prefix once, in a background
  thread at start-up, and keeps the llama.cpp state of each (in RAM and on disk under
  ``user_cache_dir("visa-console")/llm-state``, keyed by model and prefix hash). A call whose
  stage prefix is already in the live KV cache is a ``"hit"``; one that must switch stages gets
  that stage's saved state back (``"restored"``, a memcpy instead of seconds of compute); only a
  never-seen prefix is computed (``"miss"``), and then saved.
* **Context warming** (SurgicalRoomAgent warms its prefix after every device-status change):
  the per-call suffix is itself split into ``context`` (state summary, memory - known as soon
  as the previous command finished) and the user's words. ``warm_context(stage, context)``
  evaluates prefix + context in the background right after a command, so the next call only
  computes the handful of tokens of the words actually spoken.
* **Timeouts never block**: a deadline sets an abort flag that llama.cpp checks *inside*
  ``llama_decode`` (the abort callback), plus a stopping criterion between tokens.
* **CPU-thread discipline**: the two cores are shared by Whisper, the LLM and VTK. Every heavy
  stage takes :data:`HEAVY_STAGE_LOCK` around its compute; background work (the warm-up) takes
  it as *background* and yields as soon as a foreground stage asks for it.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import logging
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from app.runtime.scheduler import HEAVY_STAGE_LOCK, HeavyStageLock
from app.runtime.settings import settings

log = logging.getLogger(__name__)

DEFAULT_MODEL_ID = "qwen2.5-coder-1.5b"
FAST_MODEL_ID = "qwen2.5-coder-0.5b"

CacheStatus = Literal["hit", "miss", "restored", "unknown"]
ProgressFn = Callable[[float, str], None]
TextFn = Callable[[str], None]
Examples = Sequence[tuple[str, str]]

# Error codes of LLMResult.error (``detail`` carries the plain-words explanation).
ERR_TIMEOUT = "timeout"  # the deadline passed (while waiting for the CPU or generating)
ERR_PARSE = "parse"  # the text is not one JSON object
ERR_SCHEMA = "schema"  # valid JSON that does not match the schema
ERR_TRUNCATED = "truncated"  # max_tokens reached before the JSON closed
ERR_UNAVAILABLE = "unavailable"  # model missing / server unreachable
ERR_RUNTIME = "runtime"  # anything else the engine reported


# --------------------------------------------------------------------------------- results
@dataclass
class LLMTimings:
    prompt_ms: float = 0.0  # prefix restore/compute + suffix prefill, up to the first token
    gen_ms: float = 0.0  # first token to the end
    total_ms: float = 0.0  # the whole call, including waiting for the CPU
    wait_ms: float = 0.0  # waiting for HEAVY_STAGE_LOCK / model load


@dataclass
class LLMResult:
    data: dict[str, Any] | None
    raw_text: str
    ok: bool
    error: str | None = None
    detail: str = ""
    timings: LLMTimings = field(default_factory=LLMTimings)
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens that were not computed in this call
    completion_tokens: int = 0
    cache: CacheStatus = "unknown"
    stage: str = ""
    backend: str = ""

    def trace(self) -> dict[str, Any]:
        """The compact form for Decision.diagnostics and the trace record (DESIGN §5.3)."""
        return {
            "stage": self.stage, "backend": self.backend, "ok": self.ok, "error": self.error,
            "detail": self.detail, "cache": self.cache, "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens, "completion_tokens": self.completion_tokens,
            "prompt_ms": round(self.timings.prompt_ms, 1), "gen_ms": round(self.timings.gen_ms, 1),
            "wait_ms": round(self.timings.wait_ms, 1), "ms": round(self.timings.total_ms, 1),
            "raw": self.raw_text[:400],
        }


@dataclass(frozen=True)
class StagePrompt:
    """The fixed part of one stage's prompt: what ``warm`` evaluates and caches."""

    stage: str
    system: str
    examples: tuple[tuple[str, str], ...] = ()

    def prefix_hash(self) -> str:
        blob = json.dumps([self.system, [list(e) for e in self.examples]], ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


# ----------------------------------------------------------------------- the protocol
class LLMRuntime(Protocol):
    """What the LLM tier and the visa strategy need from a model."""

    name: str

    def complete_json(self, stage: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int = 128, timeout_s: float = 10.0, *,
                      examples: Examples = (), context: str = "",
                      on_text: TextFn | None = None) -> LLMResult: ...

    def warm(self, stages: Sequence[StagePrompt], progress: ProgressFn | None = None, *,
             background: bool = True) -> WarmHandle: ...

    def warm_context(self, stage: StagePrompt, context: str) -> WarmHandle: ...

    def close(self) -> None: ...


class WarmHandle:
    """Progress of a warm-up (for the progress indicator); ``wait`` joins it."""

    def __init__(self) -> None:
        self.fraction = 0.0
        self.message = ""
        self.error: str | None = None
        self.stats: dict[str, Any] = {}
        self._done = threading.Event()
        self._cancel = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def _report(self, progress: ProgressFn | None, fraction: float, message: str) -> None:
        self.fraction, self.message = fraction, message
        if progress is not None:
            try:
                progress(fraction, message)
            except Exception:  # a broken indicator must not stop the warm-up
                log.exception("warm-up progress callback failed")

    def _finish(self) -> None:
        self._done.set()


# The heavy-stage lock lives in app.runtime.scheduler (shared by STT, TTS, LLM, VTK).


# --------------------------------------------------------------- JSON helpers
def check_json(data: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Validate ``data`` against the subset of JSON Schema our stages use; returns problems.

    Grammar-constrained decoding already guarantees the shape locally, but a remote server may
    only honour "JSON mode", and a truncated or hand-edited answer must never slip through.
    """
    errs: list[str] = []
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema.get("oneOf") or []
        if not any(not check_json(data, o, path) for o in options):
            errs.append(f"{path}: matches none of the allowed forms")
        return errs
    if "const" in schema and data != schema["const"]:
        return [f"{path}: must be {schema['const']!r}"]
    if "enum" in schema and data not in schema["enum"]:
        return [f"{path}: {data!r} is not one of {schema['enum']}"]
    types = schema.get("type")
    if types is not None:
        tlist = types if isinstance(types, list) else [types]
        if not any(_is_type(data, t) for t in tlist):
            return [f"{path}: expected {'/'.join(tlist)}, got {type(data).__name__}"]
    if isinstance(data, dict):
        props = schema.get("properties", {})
        for req in schema.get("required", []):
            if req not in data:
                errs.append(f"{path}: missing {req!r}")
        extra = schema.get("additionalProperties", True)
        for k, v in data.items():
            if k in props:
                errs.extend(check_json(v, props[k], f"{path}.{k}"))
            elif extra is False:
                errs.append(f"{path}: unexpected key {k!r}")
            elif isinstance(extra, Mapping):
                errs.extend(check_json(v, extra, f"{path}.{k}"))
    elif isinstance(data, list):
        if len(data) < schema.get("minItems", 0):
            errs.append(f"{path}: needs at least {schema['minItems']} items")
        if "maxItems" in schema and len(data) > schema["maxItems"]:
            errs.append(f"{path}: at most {schema['maxItems']} items")
        if "items" in schema:
            for i, v in enumerate(data):
                errs.extend(check_json(v, schema["items"], f"{path}[{i}]"))
    elif isinstance(data, int | float) and not isinstance(data, bool):
        if "minimum" in schema and data < schema["minimum"]:
            errs.append(f"{path}: below {schema['minimum']}")
        if "maximum" in schema and data > schema["maximum"]:
            errs.append(f"{path}: above {schema['maximum']}")
    elif isinstance(data, str) and "pattern" in schema and not re.search(schema["pattern"], data):
        errs.append(f"{path}: {data!r} does not match {schema['pattern']}")
    return errs


def _is_type(v: Any, t: str) -> bool:
    return {
        "object": isinstance(v, dict), "array": isinstance(v, list),
        "string": isinstance(v, str), "boolean": isinstance(v, bool), "null": v is None,
        "integer": isinstance(v, int) and not isinstance(v, bool),
        "number": isinstance(v, int | float) and not isinstance(v, bool),
    }.get(t, True)


def parse_json_answer(raw: str, schema: Mapping[str, Any], *, truncated: bool = False
                      ) -> tuple[dict[str, Any] | None, str | None, str]:
    """(data, error code, detail) for a model's answer: parse, then check against the schema."""
    text = raw.strip()
    if text.startswith("```"):  # remote models in plain JSON mode like fences
        text = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", text)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if truncated:
            return None, ERR_TRUNCATED, "The answer was cut off before the JSON closed."
        return None, ERR_PARSE, f"The answer is not JSON ({exc.msg} at {exc.pos})."
    if not isinstance(data, dict):
        return None, ERR_SCHEMA, "The answer is JSON but not an object."
    problems = check_json(data, schema)
    if problems:
        return None, ERR_SCHEMA, "; ".join(problems[:4])
    return data, None, ""


# ------------------------------------------------------------------ chat formatting
# Qwen2.5 (both packaged models) uses ChatML. We render it ourselves rather than through the
# chat handler so the prefix tokens are exactly the same on every call (see module docstring).
_IM_START, _IM_END = "<|im_start|>", "<|im_end|>"


def chatml_prefix(system: str, examples: Examples = ()) -> str:
    parts = [f"{_IM_START}system\n{system}{_IM_END}\n"]
    for u, a in examples:
        parts.append(f"{_IM_START}user\n{u}{_IM_END}\n{_IM_START}assistant\n{a}{_IM_END}\n")
    parts.append(f"{_IM_START}user\n")
    return "".join(parts)


_SUFFIX_TAIL = f"{_IM_END}\n{_IM_START}assistant\n"


def _sanitise_user(text: str) -> str:
    # The user's words are tokenised without special tokens; strip look-alikes anyway so a
    # transcript can never close the turn early.
    return text.replace("<|", "< |")


class _JsonCloser:
    """Says when a streamed JSON object has closed (strings and escapes respected)."""

    def __init__(self) -> None:
        self.depth = 0
        self.started = False
        self.in_str = False
        self.esc = False

    def feed(self, text: str) -> bool:
        for c in text:
            if self.in_str:
                if self.esc:
                    self.esc = False
                elif c == "\\":
                    self.esc = True
                elif c == '"':
                    self.in_str = False
            elif c == '"':
                self.in_str = True
            elif c in "{[":
                self.depth += 1
                self.started = True
            elif c in "}]":
                self.depth -= 1
                if self.started and self.depth == 0:
                    return True
        return False


# ------------------------------------------------------------------ local llama.cpp
def default_state_dir() -> Path:
    """Where warmed prefix states are kept: ``$VISA_CACHE_DIR/llm-state`` or the user cache."""
    env = settings().cache_dir
    if env:
        return env / "llm-state"
    import platformdirs

    return Path(platformdirs.user_cache_dir("visa-console")) / "llm-state"


@dataclass
class _PrefixState:
    """A saved llama.cpp context holding exactly one stage's prefix."""

    stage: str
    tokens: list[int]
    blob: bytes
    seed: int = 0


_STATE_MAGIC = b"VISA-LLM-STATE 1\n"
_MAX_STATE_FILES = 48


class _AbortFlag:
    """A flag llama.cpp checks inside ``llama_decode`` without calling back into Python.

    The abort callback runs on llama.cpp's compute threads once per graph node. A Python
    callback there would need the GIL hundreds of times per token, so a busy UI thread could
    stall the model. Instead the callback is libc ``strlen`` over a 2-byte buffer: it returns
    0 while the flag byte is 0 and 1 once it is set - a pure-C check. Where libc cannot be
    found the flag still works between prompt chunks and between tokens.
    """

    def __init__(self) -> None:
        self._buf = ctypes.create_string_buffer(2)
        self.reason = ""
        self._cb: Any = None

    def install(self, llm: Any) -> bool:
        try:
            from llama_cpp import llama_cpp as lc

            libc = ctypes.CDLL("msvcrt") if sys.platform == "win32" else ctypes.CDLL(None)
            fn = lc._lib.llama_set_abort_callback
            fn.argtypes = [ctypes.c_void_p, lc.ggml_abort_callback, ctypes.c_void_p]
            fn.restype = None
            self._cb = ctypes.cast(libc.strlen, lc.ggml_abort_callback)  # keep alive
            fn(llm._ctx.ctx, self._cb, ctypes.cast(self._buf, ctypes.c_void_p))
            return True
        except Exception as exc:  # older builds: fall back to between-token checks
            log.warning("llama.cpp abort callback unavailable (%s); timeouts act per token", exc)
            return False

    def set(self, reason: str) -> None:
        if not self.is_set():
            self.reason = reason
        self._buf[0] = b"\x01"

    def clear(self) -> None:
        self._buf[0] = b"\x00"
        self.reason = ""

    def is_set(self) -> bool:
        return self._buf[0] != b"\x00"


class LocalLlama:
    """The in-process llama.cpp runtime (llama-cpp-python) with per-stage prefix caching."""

    name = "local"

    def __init__(self, model_id: str = DEFAULT_MODEL_ID, *, model_file: str | Path | None = None,
                 n_ctx: int = 2048, n_threads: int = 2, n_batch: int = 256,
                 state_dir: str | Path | None = None, persist: bool = True,
                 heavy_lock: HeavyStageLock | None = None, verbose: bool = False) -> None:
        self.model_id = model_id
        self._model_file = Path(model_file) if model_file else None
        self.n_ctx, self.n_threads, self.n_batch = n_ctx, max(1, n_threads), n_batch
        self.state_dir = Path(state_dir) if state_dir else default_state_dir()
        self.persist = persist
        self.heavy = heavy_lock or HEAVY_STAGE_LOCK
        self.verbose = verbose
        self._llm: Any = None
        self._load_lock = threading.Lock()
        self._load_error: str | None = None
        self._abort = _AbortFlag()
        self._states: dict[str, _PrefixState] = {}  # prefix key -> saved state (RAM)
        self._grammars: dict[str, Any] = {}
        self._model_key = ""
        self._call_id = 0
        self._savers: list[threading.Thread] = []
        self.load_ms = 0.0

    # -- loading --------------------------------------------------------------------------
    @property
    def model_file(self) -> Path:
        if self._model_file is None:
            from app.runtime.models import model_path

            self._model_file = model_path(self.model_id)
        return self._model_file

    @property
    def loaded(self) -> bool:
        return self._llm is not None

    def load(self, timeout: float | None = None) -> bool:
        """Load the model once (lazily). False when it could not be loaded in time / at all."""
        if self._llm is not None:
            return True
        if not self._load_lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            return False
        try:
            if self._llm is not None:
                return True
            t0 = time.monotonic()
            try:
                from llama_cpp import Llama

                path = self.model_file
                llm = Llama(str(path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                            n_threads_batch=self.n_threads, n_batch=self.n_batch,
                            n_ubatch=self.n_batch, verbose=self.verbose)
            except Exception as exc:
                self._load_error = f"The language model could not be loaded: {exc}"
                log.error("%s", self._load_error)
                return False
            template = str(llm.metadata.get("tokenizer.chat_template", ""))
            if template and _IM_START not in template:
                self._load_error = (f"{path.name} does not use the ChatML chat format this "
                                    "runtime writes; use a Qwen2.5 model.")
                return False
            st = path.stat()
            from llama_cpp import __version__ as llama_version

            self._model_key = json.dumps({
                "model": path.name, "size": st.st_size, "mtime": st.st_mtime_ns,
                "llama_cpp": llama_version, "n_ctx": self.n_ctx, "format": "chatml-1",
            }, sort_keys=True)
            self._abort.install(llm)
            self._llm = llm
            self._load_error = None
            self.load_ms = (time.monotonic() - t0) * 1000
            log.info("LLM loaded: %s in %.0f ms", path.name, self.load_ms,
                     extra={"data": {"event": "llm.load", "model": path.name,
                                     "ms": round(self.load_ms)}})
            return True
        finally:
            self._load_lock.release()

    def close(self) -> None:
        """Free the model (waits for a running generation; the next call loads it again)."""
        with self.heavy.hold("llm:close"), self._load_lock:
            llm, self._llm = self._llm, None
            if llm is not None:
                with contextlib.suppress(Exception):
                    llm.close()

    # -- tokens and keys ------------------------------------------------------------------
    def _tokens(self, system: str, examples: Examples, user: str, context: str = ""
                ) -> tuple[list[int], list[int], list[int]]:
        """(prefix, context, suffix) tokens, each tokenised on its own so that every part is a
        token-exact prefix of the next call that shares it."""
        llm = self._llm
        prefix = llm.tokenize(chatml_prefix(system, examples).encode(), add_bos=False,
                              special=True)
        ctx = (llm.tokenize(_sanitise_user(context).encode(), add_bos=False, special=False)
               if context else [])
        suffix = (llm.tokenize(_sanitise_user(user).encode(), add_bos=False, special=False)
                  + llm.tokenize(_SUFFIX_TAIL.encode(), add_bos=False, special=True))
        return prefix, ctx, suffix

    def _key(self, prefix: list[int]) -> str:
        h = hashlib.sha256(self._model_key.encode())
        h.update(b"|" + ",".join(map(str, prefix)).encode())
        return h.hexdigest()[:32]

    def _live_lcp(self, tokens: Sequence[int]) -> int:
        llm = self._llm
        n = min(llm.n_tokens, len(tokens))
        live = llm.input_ids[:n]
        i = 0
        while i < n and int(live[i]) == tokens[i]:
            i += 1
        return i

    # -- saved states ---------------------------------------------------------------------
    def _capture(self, stage: str, prefix: list[int]) -> _PrefixState:
        # llama_state_get_data directly: Llama.save_state also copies the n_tokens x vocab
        # logits matrix (~0.6 MB per token) that nothing here needs.
        from llama_cpp import llama_cpp as lc

        ctx = self._llm._ctx.ctx
        size = lc.llama_state_get_size(ctx)
        buf = (ctypes.c_uint8 * int(size))()
        n = lc.llama_state_get_data(ctx, buf, size)
        return _PrefixState(stage, list(prefix), bytes(memoryview(buf)[: int(n)]),
                            int(getattr(self._llm, "_seed", 0) or 0))

    def _restore(self, st: _PrefixState) -> None:
        """Put a saved prefix back into the live context (what Llama.load_state does).

        Llama.load_state also rewrites and scans the n_ctx x vocab logits matrix (over 1 GB of
        memory for this model), which is most of its ~2.6 s; the logits are not needed because
        the suffix is always evaluated after a restore.
        """
        import numpy as np
        from llama_cpp import llama_cpp as lc

        llm = self._llm
        n = len(st.tokens)
        arr = (ctypes.c_uint8 * len(st.blob)).from_buffer_copy(st.blob)
        if hasattr(llm, "_requires_eval"):
            if lc.llama_state_set_data(llm._ctx.ctx, arr, len(st.blob)) != len(st.blob):
                raise RuntimeError("llama.cpp refused the saved state")
            llm.input_ids[:n] = np.asarray(st.tokens, dtype=llm.input_ids.dtype)
            llm.n_tokens = n
            llm._requires_eval = True
        else:  # a different llama-cpp-python: use the public path
            from llama_cpp.llama import LlamaState

            ids = np.zeros_like(llm.input_ids)
            ids[:n] = st.tokens
            llm.load_state(LlamaState(ids, np.zeros((1, llm.n_vocab()), np.float32), n,
                                      st.blob, len(st.blob), st.seed))

    def _state_file(self, key: str) -> Path:
        return self.state_dir / f"{key}.llstate"

    def _save_disk(self, key: str, st: _PrefixState) -> None:
        if not self.persist:
            return
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            header = json.dumps({"stage": st.stage, "n_tokens": len(st.tokens),
                                 "seed": st.seed, "bytes": len(st.blob),
                                 "model": self._model_key}).encode()
            import numpy as np

            tmp = self._state_file(key).with_suffix(f".tmp{os.getpid()}")
            with open(tmp, "wb") as f:
                f.write(_STATE_MAGIC + header + b"\n")
                f.write(np.asarray(st.tokens, dtype="<i4").tobytes())
                f.write(st.blob)
            os.replace(tmp, self._state_file(key))
            files = sorted(self.state_dir.glob("*.llstate"), key=lambda p: p.stat().st_mtime)
            for old in files[:-_MAX_STATE_FILES]:
                with contextlib.suppress(OSError):
                    old.unlink()
        except OSError as exc:  # a read-only cache only loses the speed-up
            log.warning("could not save the LLM prefix state: %s", exc)

    def _load_disk(self, key: str, prefix: list[int]) -> _PrefixState | None:
        path = self._state_file(key)
        if not self.persist or not path.is_file():
            return None
        try:
            import numpy as np

            with open(path, "rb") as f:
                if f.readline() != _STATE_MAGIC:
                    raise ValueError("not a state file")
                header = json.loads(f.readline())
                n = int(header["n_tokens"])
                tokens = np.frombuffer(f.read(4 * n), dtype="<i4").tolist()
                blob = f.read()
            if tokens != prefix or len(blob) != int(header["bytes"]):
                raise ValueError("prefix or size mismatch")
            os.utime(path)  # most recently used survives pruning
            return _PrefixState(str(header.get("stage", "")), tokens, blob,
                                int(header.get("seed", 0)))
        except (OSError, ValueError, KeyError) as exc:
            log.warning("ignoring the saved LLM state %s: %s", path.name, exc)
            with contextlib.suppress(OSError):
                path.unlink()
            return None

    def saved_state_path(self, system: str, examples: Examples = ()) -> Path | None:
        """The disk file of a stage prefix (for tests and the benchmark); None if not loaded."""
        if not self.load():
            return None
        prefix = self._llm.tokenize(chatml_prefix(system, examples).encode(), add_bos=False,
                                    special=True)
        return self._state_file(self._key(prefix))

    def flush_saves(self, timeout: float | None = 60.0) -> None:
        """Wait until every prefix state computed so far is on disk."""
        for t in list(self._savers):
            t.join(timeout)

    def forget_states(self, *, memory: bool = True, disk: bool = False) -> None:
        """Drop saved prefixes (benchmarks measure cold starts with this)."""
        if memory:
            self._states.clear()
        if disk:
            self.flush_saves()  # a save still running would bring a file back
        if disk and self.state_dir.is_dir():
            for p in self.state_dir.glob("*.llstate"):
                with contextlib.suppress(OSError):
                    p.unlink()

    def reset_context(self) -> None:
        """Forget what the live KV cache holds (next call is not a "hit")."""
        with self.heavy.hold("llm:reset"):
            if self._llm is not None:
                self._llm.n_tokens = 0

    # -- the prefix ----------------------------------------------------------------------
    def _ensure_prefix(self, stage: str, prefix: list[int]) -> tuple[CacheStatus, str]:
        """Make the live context start with ``prefix``; returns (cache status, source).

        May raise RuntimeError when the abort flag stops the computation.
        """
        key = self._key(prefix)
        if self._live_lcp(prefix) >= len(prefix):
            return "hit", "live"
        st = self._states.get(key)
        source = "ram"
        if st is None:
            st = self._load_disk(key, prefix)
            source = "disk"
        if st is not None:
            self._restore(st)
            self._states[key] = st
            return "restored", source
        llm = self._llm
        start = self._live_lcp(prefix)
        llm.n_tokens = start  # eval() trims the KV cache from here
        # Evaluate in chunks so an abort (deadline or a foreground stage) is honoured between
        # chunks even without the in-decode abort callback.
        for i in range(start, len(prefix), self.n_batch):
            if self._abort.is_set():
                raise RuntimeError("aborted")
            llm.eval(prefix[i:i + self.n_batch])
        st = self._capture(stage, prefix)
        self._states[key] = st
        # Written off the request path (a few MB); flush_saves() waits for it.
        saver = threading.Thread(target=self._save_disk, args=(key, st), daemon=True,
                                 name="llm-state-save")
        self._savers = [t for t in self._savers if t.is_alive()] + [saver]
        saver.start()
        return "miss", "computed"

    def prepare(self, stage: StagePrompt, timeout_s: float | None = None
                ) -> tuple[CacheStatus | None, str, float]:
        """Make ``stage``'s prefix live now; (cache status, source, ms). None: busy/failed.

        Lets a caller switch stages ahead of a call (and the benchmark time a restore alone).
        """
        t0 = time.monotonic()
        if not self.load(timeout_s):
            return None, "unloaded", 0.0
        with self.heavy.hold(f"llm:{stage.stage}", timeout_s) as got:
            if not got:
                return None, "busy", 0.0
            self._abort.clear()
            prefix = self._llm.tokenize(chatml_prefix(stage.system, stage.examples).encode(),
                                        add_bos=False, special=True)
            try:
                status, source = self._ensure_prefix(stage.stage, prefix)
            except RuntimeError:
                return None, "aborted", (time.monotonic() - t0) * 1000
            return status, source, (time.monotonic() - t0) * 1000

    def _grammar(self, schema: Mapping[str, Any]) -> Any:
        text = json.dumps(schema, sort_keys=True)
        g = self._grammars.get(text)
        if g is None:
            from llama_cpp import LlamaGrammar

            g = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            self._grammars[text] = g
        return g

    # -- the call ------------------------------------------------------------------------
    def complete_json(self, stage: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int = 128, timeout_s: float = 10.0, *,
                      examples: Examples = (), context: str = "",
                      on_text: TextFn | None = None) -> LLMResult:
        t0 = time.monotonic()
        deadline = t0 + max(0.0, timeout_s)
        res = LLMResult(None, "", False, stage=stage, backend=f"local:{self.model_id}")

        def done(error: str | None, detail: str = "") -> LLMResult:
            res.error, res.detail = error, detail
            res.ok = error is None
            res.timings.total_ms = (time.monotonic() - t0) * 1000
            return res

        if not self.load(timeout=max(0.0, deadline - time.monotonic())):
            if self._load_error:
                return done(ERR_UNAVAILABLE, self._load_error)
            return done(ERR_TIMEOUT, "The language model is still loading.")
        with self.heavy.hold(f"llm:{stage}", timeout=max(0.0, deadline - time.monotonic())
                             ) as got:
            res.timings.wait_ms = (time.monotonic() - t0) * 1000
            if not got:
                return done(ERR_TIMEOUT, f"The processor was busy ({self.heavy.holder}).")
            return self._generate(res, stage, system, user, schema, max_tokens, deadline,
                                  examples, context, on_text, done)

    def _generate(self, res: LLMResult, stage: str, system: str, user: str,
                  schema: dict[str, Any], max_tokens: int, deadline: float, examples: Examples,
                  context: str, on_text: TextFn | None, done: Callable[..., LLMResult]
                  ) -> LLMResult:
        from llama_cpp import StoppingCriteriaList

        llm = self._llm
        t_start = time.monotonic()
        self._abort.clear()
        self._call_id += 1
        call_id = self._call_id

        def expire() -> None:
            if self._call_id == call_id:  # a late timer must not abort the next call
                self._abort.set("deadline")

        timer = threading.Timer(max(0.0, deadline - t_start), expire)
        timer.daemon = True
        timer.start()
        pieces: list[str] = []
        finish: str | None = None
        t_first: float | None = None
        try:
            prefix, ctx, suffix = self._tokens(system, examples, user, context)
            tokens = prefix + ctx + suffix
            res.prompt_tokens = len(tokens)
            if len(tokens) + max_tokens >= self.n_ctx:
                return done(ERR_RUNTIME, f"The prompt ({len(tokens)} tokens) does not fit the "
                                         f"{self.n_ctx}-token context.")
            res.cache, source = self._ensure_prefix(stage, prefix)
            # generate() replays one token when the whole prompt is cached; count what it skips.
            res.cached_tokens = min(self._live_lcp(tokens), len(tokens) - 1)
            if res.cache == "miss":
                res.cached_tokens = 0
            log.debug("llm %s: cache %s (%s), %d/%d prompt tokens cached", stage, res.cache,
                      source, res.cached_tokens, len(tokens))

            def past_deadline(_ids: Any, _logits: Any) -> bool:
                return time.monotonic() >= deadline

            stream = llm.create_completion(
                tokens, max_tokens=max_tokens, temperature=0.0, top_k=1, repeat_penalty=1.0,
                grammar=self._grammar(schema), stream=True,
                stopping_criteria=StoppingCriteriaList([past_deadline]))
            closer = _JsonCloser()
            for chunk in stream:
                choice = chunk["choices"][0]
                text = choice.get("text") or ""
                if t_first is None:
                    t_first = time.monotonic()
                if text:
                    pieces.append(text)
                    res.completion_tokens += 1
                    if on_text is not None:
                        on_text(text)
                finish = choice.get("finish_reason") or finish
                if text and closer.feed(text):
                    # The object is complete: the grammar allows only whitespace and the
                    # end-of-turn token now, so skip those decode steps.
                    finish = "stop"
                    stream.close()
                    break
        except RuntimeError as exc:
            res.raw_text = "".join(pieces)
            self._timings(res, t_start, t_first)
            if self._abort.is_set() or time.monotonic() >= deadline:
                return done(ERR_TIMEOUT, "The language model did not answer in time.")
            return done(ERR_RUNTIME, f"llama.cpp failed: {exc}")
        except Exception as exc:  # grammar errors, bad tokens: report, never raise
            res.raw_text = "".join(pieces)
            self._timings(res, t_start, t_first)
            log.exception("LLM stage %s failed", stage)
            return done(ERR_RUNTIME, f"The language model failed: {exc}")
        finally:
            timer.cancel()
            self._abort.clear()
        res.raw_text = "".join(pieces)
        self._timings(res, t_start, t_first)
        if time.monotonic() >= deadline and finish != "length":
            data, err, _ = parse_json_answer(res.raw_text, schema)
            if err is not None:
                return done(ERR_TIMEOUT, "The language model did not answer in time.")
            res.data = data
            return done(None)
        data, err, detail = parse_json_answer(res.raw_text, schema,
                                              truncated=finish == "length")
        res.data = data
        return done(err, detail)

    @staticmethod
    def _timings(res: LLMResult, t_start: float, t_first: float | None) -> None:
        now = time.monotonic()
        first = t_first if t_first is not None else now
        res.timings.prompt_ms = (first - t_start) * 1000
        res.timings.gen_ms = (now - first) * 1000

    # -- warm-up -------------------------------------------------------------------------
    def warm(self, stages: Sequence[StagePrompt], progress: ProgressFn | None = None, *,
             background: bool = True) -> WarmHandle:
        """Evaluate (or load from disk) every stage prefix; the first stage ends up live.

        Runs in a daemon thread by default, holding the heavy-stage lock as *background* work
        so a command being answered (or Whisper) preempts it between compute steps.
        """
        handle = WarmHandle()
        stages = list(stages)

        def run() -> None:
            try:
                self._warm(stages, handle, progress)
            except Exception as exc:
                handle.error = str(exc)
                handle._report(progress, 1.0, f"Language model unavailable: {exc}")
                log.exception("LLM warm-up failed")
            finally:
                handle._finish()

        if background:
            handle.thread = threading.Thread(target=run, name="llm-warm", daemon=True)
            handle.thread.start()
        else:
            run()
        return handle

    def _warm(self, stages: list[StagePrompt], handle: WarmHandle,
              progress: ProgressFn | None) -> None:
        t0 = time.monotonic()
        n = max(1, len(stages))
        handle._report(progress, 0.0, "Loading the language model...")
        if not self.load():
            raise RuntimeError(self._load_error or "model not loaded")
        stats: dict[str, Any] = {"load_ms": round(self.load_ms), "stages": {}}
        for i, sp in enumerate(stages):
            if handle.cancelled:
                break
            handle._report(progress, (i + 0.05) / n,
                           f"Preparing the language model ({sp.stage}, {i + 1}/{n})...")
            prefix = self._llm.tokenize(chatml_prefix(sp.system, sp.examples).encode(),
                                        add_bos=False, special=True)
            key = self._key(prefix)
            ts = time.monotonic()
            if key in self._states:
                how = "memory"
            elif (st := self._load_disk(key, prefix)) is not None:
                self._states[key] = st
                how = "disk"
            else:
                how = self._warm_compute(sp.stage, prefix, handle)
            stats["stages"][sp.stage] = {"how": how, "tokens": len(prefix),
                                         "ms": round((time.monotonic() - ts) * 1000)}
        if stages and not handle.cancelled:  # the most likely stage first: its call is a hit
            sp = stages[0]
            prefix = self._llm.tokenize(chatml_prefix(sp.system, sp.examples).encode(),
                                        add_bos=False, special=True)
            with self.heavy.hold("llm:warm", background=True, preempt=self._preempt):
                with contextlib.suppress(RuntimeError):
                    self._ensure_prefix(sp.stage, prefix)
                self._abort.clear()
        stats["ms"] = round((time.monotonic() - t0) * 1000)
        handle.stats = stats
        from_disk = sum(1 for s in stats["stages"].values() if s["how"] == "disk")
        handle._report(progress, 1.0, f"Language model ready ({len(stages)} stages, "
                                      f"{from_disk} from disk, {stats['ms'] / 1000:.1f} s).")
        log.info("LLM warm-up done", extra={"data": {"event": "llm.warm", **stats}})

    def _preempt(self) -> None:
        self._abort.set("preempt")

    def warm_context(self, stage: StagePrompt, context: str) -> WarmHandle:
        """Evaluate ``stage``'s prefix + ``context`` in the background, right now.

        Call it when a command has finished (the state and memory the next command will be
        judged against are known): the next call for this stage with the same context then
        computes only the user's words. Background and preemptible: a foreground stage that
        needs the CPU stops it, and it is not retried (the next call computes what it needs).
        """
        handle = WarmHandle()

        def run() -> None:
            try:
                if not self.load():
                    raise RuntimeError(self._load_error or "model not loaded")
                with self.heavy.hold(f"llm:context:{stage.stage}", background=True,
                                     preempt=self._preempt):
                    self._abort.clear()
                    try:
                        prefix, ctx, _ = self._tokens(stage.system, stage.examples, "", context)
                        status, _src = self._ensure_prefix(stage.stage, prefix)
                        tokens = prefix + ctx
                        start = self._live_lcp(tokens)
                        if start < len(tokens):
                            self._llm.n_tokens = start
                            self._llm.eval(tokens[start:])
                        handle.stats = {"prefix": status, "context_tokens": len(ctx),
                                        "computed": len(tokens) - start}
                        handle._report(None, 1.0, f"{stage.stage} context ready")
                    except RuntimeError:
                        handle.error = ("preempted" if self._abort.reason == "preempt"
                                        else "aborted")
                    finally:
                        self._abort.clear()
            except Exception as exc:  # only a lost speed-up
                handle.error = str(exc)
                log.warning("LLM context warm-up failed: %s", exc)
            finally:
                handle._finish()

        handle.thread = threading.Thread(target=run, name="llm-context", daemon=True)
        handle.thread.start()
        return handle

    def _warm_compute(self, stage: str, prefix: list[int], handle: WarmHandle) -> str:
        while not handle.cancelled:
            with self.heavy.hold("llm:warm", background=True, preempt=self._preempt):
                self._abort.clear()
                try:
                    status, _ = self._ensure_prefix(stage, prefix)
                    return "computed" if status == "miss" else status
                except RuntimeError:
                    if self._abort.reason != "preempt":
                        raise
                    log.debug("LLM warm-up of %s preempted; resuming later", stage)
                finally:
                    self._abort.clear()
        return "cancelled"


# ------------------------------------------------------------------ remote server
class RemoteOpenAI:
    """The same protocol against an OpenAI-compatible server (llama-server, vLLM, SGLang).

    ``response_format`` mode: ``"json_schema"`` (OpenAI structured outputs; vLLM, SGLang,
    llama-server), ``"json_object"`` (JSON mode with a ``schema`` field: llama-cpp-python's
    server, llama-server), ``"json"`` (plain JSON mode, no schema) or ``"auto"`` (try them in
    that order and remember the first the server accepts). Answers are always validated here.
    """

    name = "remote"
    _MODES = ("json_schema", "json_object", "json")

    def __init__(self, url: str, model: str = "default", *, api_key: str | None = None,
                 response_format: str = "auto", connect_timeout_s: float = 3.0) -> None:
        url = url.rstrip("/")
        if url.endswith("/chat/completions"):
            url = url[: -len("/chat/completions")]
        self.base = url if url.endswith("/v1") else f"{url}/v1"
        self.url = f"{self.base}/chat/completions"
        self.model = model
        self.api_key = api_key
        if response_format != "auto" and response_format not in self._MODES:
            raise ValueError(f"unknown response_format mode {response_format!r}")
        self.mode = response_format
        self.connect_timeout_s = connect_timeout_s
        self._lock = threading.Lock()

    def close(self) -> None:
        pass

    def _messages(self, system: str, examples: Examples, user: str) -> list[dict[str, str]]:
        msgs = [{"role": "system", "content": system}]
        for u, a in examples:
            msgs += [{"role": "user", "content": u}, {"role": "assistant", "content": a}]
        msgs.append({"role": "user", "content": user})
        return msgs

    @staticmethod
    def _format(mode: str, stage: str, schema: dict[str, Any]) -> dict[str, Any]:
        if mode == "json_schema":
            name = re.sub(r"[^a-zA-Z0-9_-]", "_", stage)[:60] or "answer"
            return {"type": "json_schema",
                    "json_schema": {"name": name, "schema": schema, "strict": True}}
        if mode == "json_object":
            return {"type": "json_object", "schema": schema}
        return {"type": "json_object"}

    def _post(self, body: dict[str, Any], timeout: float) -> Any:
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"},
                                     method="POST")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        return urllib.request.urlopen(req, timeout=max(0.05, timeout))

    def complete_json(self, stage: str, system: str, user: str, schema: dict[str, Any],
                      max_tokens: int = 128, timeout_s: float = 10.0, *,
                      examples: Examples = (), context: str = "",
                      on_text: TextFn | None = None) -> LLMResult:
        t0 = time.monotonic()
        deadline = t0 + max(0.0, timeout_s)
        res = LLMResult(None, "", False, stage=stage, backend=f"remote:{self.base}")

        def done(error: str | None, detail: str = "") -> LLMResult:
            res.error, res.detail, res.ok = error, detail, error is None
            res.timings.total_ms = (time.monotonic() - t0) * 1000
            return res

        body: dict[str, Any] = {
            "model": self.model, "messages": self._messages(system, examples, context + user),
            "temperature": 0.0, "max_tokens": max_tokens, "stream": on_text is not None,
        }
        modes = self._MODES if self.mode == "auto" else (self.mode,)
        last_http = ""
        for mode in modes:
            body["response_format"] = self._format(mode, stage, schema)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return done(ERR_TIMEOUT, "The language model server did not answer in time.")
            try:
                with self._post(body, remaining) as resp:
                    t_sent = time.monotonic()
                    if on_text is not None:
                        payload = self._read_stream(resp, res, on_text, deadline)
                    else:
                        payload = json.loads(resp.read().decode("utf-8"))
                        msg = payload["choices"][0]
                        res.raw_text = (msg.get("message") or {}).get("content") or ""
                        payload["_finish"] = msg.get("finish_reason")
            except urllib.error.HTTPError as exc:
                detail = _http_detail(exc)
                last_http = f"HTTP {exc.code}: {detail}"
                if exc.code in (400, 415, 422, 500, 501) and self.mode == "auto":
                    log.info("server refused response_format %s (%s); trying the next", mode,
                             last_http)
                    continue
                return done(ERR_RUNTIME, f"The language model server refused the request "
                                         f"({last_http}).")
            except TimeoutError:
                return done(ERR_TIMEOUT, "The language model server did not answer in time.")
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, TimeoutError):
                    return done(ERR_TIMEOUT, "The language model server did not answer in time.")
                return done(ERR_UNAVAILABLE, f"The language model server at {self.base} cannot "
                                             f"be reached ({exc.reason}).")
            except (OSError, ValueError, KeyError, IndexError) as exc:
                return done(ERR_RUNTIME, f"Bad answer from the language model server: {exc}")
            if self.mode == "auto":
                self.mode = mode  # remember what this server accepts
            self._fill_usage(res, payload, t0, t_sent)
            if time.monotonic() >= deadline and payload.get("_finish") is None:
                return done(ERR_TIMEOUT, "The language model server did not answer in time.")
            data, err, detail = parse_json_answer(res.raw_text, schema,
                                                  truncated=payload.get("_finish") == "length")
            res.data = data
            return done(err, detail)
        return done(ERR_RUNTIME, f"The language model server accepts no JSON output mode "
                                 f"({last_http}).")

    def _read_stream(self, resp: Any, res: LLMResult, on_text: TextFn, deadline: float
                     ) -> dict[str, Any]:
        pieces: list[str] = []
        payload: dict[str, Any] = {}
        for raw in resp:
            if time.monotonic() >= deadline:
                break
            line = raw.decode("utf-8").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            obj = json.loads(data)
            if obj.get("usage"):
                payload["usage"] = obj["usage"]
            if obj.get("timings"):
                payload["timings"] = obj["timings"]
            for ch in obj.get("choices") or []:
                text = (ch.get("delta") or {}).get("content") or ""
                if text:
                    pieces.append(text)
                    on_text(text)
                    res.completion_tokens += 1
                    if "_first" not in payload:
                        payload["_first"] = time.monotonic()
                if ch.get("finish_reason"):
                    payload["_finish"] = ch["finish_reason"]
        res.raw_text = "".join(pieces)
        return payload

    @staticmethod
    def _fill_usage(res: LLMResult, payload: dict[str, Any], t0: float, t_sent: float) -> None:
        usage = payload.get("usage") or {}
        res.prompt_tokens = int(usage.get("prompt_tokens") or 0)
        res.completion_tokens = int(usage.get("completion_tokens") or res.completion_tokens)
        details = usage.get("prompt_tokens_details") or {}
        timings = payload.get("timings") or {}  # llama-server reports its own timings
        cached = details.get("cached_tokens")
        if cached is None and "cache_n" in timings:
            cached = timings["cache_n"]
        if cached is not None:
            res.cached_tokens = int(cached)
            res.cache = "hit" if res.cached_tokens > 0 else "miss"
        if "prompt_ms" in timings:
            res.timings.prompt_ms = float(timings["prompt_ms"])
            res.timings.gen_ms = float(timings.get("predicted_ms", 0.0))
        elif "_first" in payload:
            res.timings.prompt_ms = (payload["_first"] - t0) * 1000
            res.timings.gen_ms = (time.monotonic() - payload["_first"]) * 1000
        else:
            res.timings.gen_ms = (time.monotonic() - t0) * 1000

    def warm(self, stages: Sequence[StagePrompt], progress: ProgressFn | None = None, *,
             background: bool = True) -> WarmHandle:
        """Send each prefix once with ``max_tokens=1`` so the server's prompt cache holds it."""
        handle = WarmHandle()

        def run() -> None:
            n = max(1, len(stages))
            try:
                for i, sp in enumerate(stages):
                    if handle.cancelled:
                        break
                    handle._report(progress, i / n, f"Preparing the language model server "
                                                    f"({sp.stage}, {i + 1}/{n})...")
                    body = {"model": self.model, "max_tokens": 1, "temperature": 0.0,
                            "messages": self._messages(sp.system, sp.examples, "")}
                    try:
                        with self._post(body, 120.0) as resp:
                            resp.read()
                    except (OSError, urllib.error.URLError) as exc:
                        handle.error = f"The language model server cannot be reached ({exc})."
                        break
                handle._report(progress, 1.0, handle.error or "Language model server ready.")
            finally:
                handle._finish()

        if background:
            handle.thread = threading.Thread(target=run, name="llm-warm-remote", daemon=True)
            handle.thread.start()
        else:
            run()
        return handle

    def warm_context(self, stage: StagePrompt, context: str) -> WarmHandle:
        """Send prefix + context with ``max_tokens=1`` so the server caches both."""
        handle = WarmHandle()

        def run() -> None:
            body = {"model": self.model, "max_tokens": 1, "temperature": 0.0,
                    "messages": self._messages(stage.system, stage.examples, context)}
            try:
                with self._post(body, 60.0) as resp:
                    resp.read()
            except (OSError, urllib.error.URLError) as exc:
                handle.error = str(exc)
            finally:
                handle._finish()

        handle.thread = threading.Thread(target=run, name="llm-context-remote", daemon=True)
        handle.thread.start()
        return handle


def _http_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read().decode("utf-8", "replace")
    except Exception:
        text = ""
    return (text or str(exc.reason)).strip().replace("\n", " ")[:200]


# ------------------------------------------------------------------ factory
_SHARED: dict[str, LLMRuntime] = {}
_SHARED_LOCK = threading.Lock()


def make_runtime(config: Mapping[str, Any] | None = None, *, shared: bool = True) -> LLMRuntime:
    """The configured runtime; by default one shared instance per configuration.

    Sharing matters: the LLM tier, the visa strategy and the benchmark may each ask for a
    runtime, and every local instance would otherwise load its own ~1.2 GB model and keep its
    own prefix cache.

    Keys (all optional): ``backend`` ("local" | "remote"; remote when a URL is set),
    ``url``/``model``/``api_key``/``response_format`` for a server (env ``VISA_LLM_URL``,
    ``VISA_LLM_MODEL``, ``VISA_LLM_API_KEY``), and for the local model ``model_id``
    (manifest id, default ``qwen2.5-coder-1.5b``; env ``VISA_LLM_MODEL_ID``), ``model_file``,
    ``n_threads`` (default 2; env ``VISA_LLM_THREADS``), ``n_ctx``, ``n_batch``, ``state_dir``,
    ``persist``.
    """
    cfg = dict(config or {})
    env = settings()
    if shared:
        key = json.dumps({**cfg, "_env": [env.llm_url, env.llm_model, env.llm_model_id,
                                          env.llm_threads, env.cache_dir]},
                         sort_keys=True, default=str)
        with _SHARED_LOCK:
            rt = _SHARED.get(key)
            if rt is None:
                rt = _SHARED[key] = make_runtime(cfg, shared=False)
            return rt
    url = cfg.get("url") or env.llm_url
    backend = cfg.get("backend") or ("remote" if url else "local")
    if backend == "remote":
        if not url:
            raise ValueError("The remote LLM backend needs a URL (VISA_LLM_URL or 'url').")
        return RemoteOpenAI(
            url, cfg.get("model") or env.llm_model or "default",
            api_key=cfg.get("api_key") or env.llm_api_key,
            response_format=cfg.get("response_format", "auto"))
    if backend != "local":
        raise ValueError(f"unknown LLM backend {backend!r} (use 'local' or 'remote')")
    return LocalLlama(
        cfg.get("model_id") or env.llm_model_id or DEFAULT_MODEL_ID,
        model_file=cfg.get("model_file"),
        n_ctx=int(cfg.get("n_ctx", 2048)),
        n_threads=int(cfg.get("n_threads") or env.llm_threads or 2),
        n_batch=int(cfg.get("n_batch", 256)),
        state_dir=cfg.get("state_dir"),
        persist=bool(cfg.get("persist", True)),
        verbose=bool(cfg.get("verbose", False)),
    )
