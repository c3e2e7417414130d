"""The local LLM runtime: llama.cpp through llama-cpp-python, with the warmed prompt prefix
kept in memory and on disk, aborts between tokens, and the heavy-stage CPU lock.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.agents.llm_types import (
    _IM_START,
    _SUFFIX_TAIL,
    DEFAULT_MODEL_ID,
    ERR_RUNTIME,
    ERR_TIMEOUT,
    ERR_UNAVAILABLE,
    CacheStatus,
    Examples,
    LLMResult,
    ProgressFn,
    StagePrompt,
    TextFn,
    WarmHandle,
    _JsonCloser,
    _sanitise_user,
    chatml_prefix,
    parse_json_answer,
)
from app.runtime.scheduler import HEAVY_STAGE_LOCK, HeavyStageLock
from app.runtime.settings import settings

log = logging.getLogger(__name__)


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
