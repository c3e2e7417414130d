"""The remote LLM runtime: an OpenAI-compatible server (llama.cpp server, vLLM, ...) asked over
HTTP with the same prompt, schema and deadlines as the local one.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from app.agents.llm_types import (
    ERR_RUNTIME,
    ERR_TIMEOUT,
    ERR_UNAVAILABLE,
    Examples,
    LLMResult,
    ProgressFn,
    StagePrompt,
    TextFn,
    WarmHandle,
    parse_json_answer,
)

log = logging.getLogger(__name__)


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
