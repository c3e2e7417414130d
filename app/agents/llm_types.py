"""The LLM runtime's shared types (DESIGN §3 tier 4): results and timings, the stage prompt,
the ``LLMRuntime`` protocol and warm handle, JSON answer checking and ChatML formatting.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

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
