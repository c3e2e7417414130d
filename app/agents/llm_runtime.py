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

import json
import threading
from collections.abc import Mapping
from typing import Any

from app.agents.llm_local import (
    LocalLlama,
)
from app.agents.llm_remote import (
    RemoteOpenAI,
)
from app.agents.llm_types import (
    DEFAULT_MODEL_ID,
    LLMRuntime,
)
from app.runtime.settings import settings

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
