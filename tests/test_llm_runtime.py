"""LLM runtime: JSON checking, the heavy-stage lock, the remote client against a fake server,
and (slow) the in-process model: warm/hit/restore, disk round trip, timeouts, preemption."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.agents import prompts
from app.agents.llm_local import LocalLlama, default_state_dir
from app.agents.llm_remote import RemoteOpenAI
from app.agents.llm_runtime import make_runtime
from app.agents.llm_types import (
    DEFAULT_MODEL_ID,
    ERR_PARSE,
    ERR_SCHEMA,
    ERR_TIMEOUT,
    ERR_TRUNCATED,
    ERR_UNAVAILABLE,
    StagePrompt,
    chatml_prefix,
    check_json,
    parse_json_answer,
)
from app.runtime.scheduler import HeavyStageLock

SMALL_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0},
                                                 "ok": {"type": "boolean"}},
                "required": ["n"], "additionalProperties": False}


# ------------------------------------------------------------------ JSON checking
def test_check_json_accepts_a_plan_and_rejects_bad_shapes() -> None:
    schema = prompts.plan_schema(("IV",))
    good = {"valid": True, "steps": [{"action": "IV.SHOW_MOVE", "params": {"coronal": "+10"}}]}
    assert check_json(good, schema) == []
    assert check_json({"valid": True}, schema)  # steps missing
    bad_action = {"valid": True, "steps": [{"action": "IV.FLY", "params": {}}]}
    assert check_json(bad_action, schema)
    bad_param = {"valid": True, "steps": [{"action": "IV.SHOW_MOVE", "params": {"zoom": 2}}]}
    assert check_json(bad_param, schema)
    bad_value = {"valid": True, "steps": [{"action": "IV.SHOW_MOVE",
                                           "params": {"coronal": "forward"}}]}
    assert check_json(bad_value, schema)
    too_many = {"valid": True, "steps": [good["steps"][0]] * (prompts.MAX_STEPS + 1)}
    assert check_json(too_many, schema)
    assert check_json({"n": True}, SMALL_SCHEMA)  # bool is not an integer
    assert check_json({"n": -1}, SMALL_SCHEMA)


@pytest.mark.parametrize("raw,err", [
    ('{"n": 3}', None),
    ('```json\n{"n": 3}\n```', None),
    ("I think the answer is 3", ERR_PARSE),
    ('{"n": 3, "extra": 1}', ERR_SCHEMA),
    ("[1, 2]", ERR_SCHEMA),
    ("", ERR_PARSE),
])
def test_parse_json_answer(raw: str, err: str | None) -> None:
    data, code, detail = parse_json_answer(raw, SMALL_SCHEMA)
    assert code == err
    assert (data is not None) == (err is None)
    if err:
        assert detail


def test_parse_json_answer_reports_truncation() -> None:
    data, code, _ = parse_json_answer('{"n": 3, "ok": tr', SMALL_SCHEMA, truncated=True)
    assert data is None and code == ERR_TRUNCATED


def test_chatml_prefix_puts_examples_before_the_open_user_turn() -> None:
    text = chatml_prefix("SYS", [("u1", "a1")])
    assert text.startswith("<|im_start|>system\nSYS<|im_end|>\n")
    assert text.index("u1") < text.index("a1")
    assert text.endswith("<|im_start|>user\n")  # the user's words come last, after the prefix


def test_stage_prompt_hash_is_stable_and_distinct() -> None:
    a = StagePrompt("s", "system", (("u", "a"),))
    assert a.prefix_hash() == StagePrompt("other", "system", (("u", "a"),)).prefix_hash()
    assert a.prefix_hash() != StagePrompt("s", "system.", (("u", "a"),)).prefix_hash()


# ------------------------------------------------------------------ heavy-stage lock
def test_heavy_lock_times_out_instead_of_blocking() -> None:
    lock = HeavyStageLock()
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with lock.hold("stt"):
            held.set()
            release.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    with lock.hold("llm", timeout=0.05) as got:
        assert not got
    assert lock.holder == "stt"
    release.set()
    t.join()
    with lock.hold("llm", timeout=1) as got:
        assert got
        with lock.hold("llm-inner", timeout=0) as again:  # re-entrant for the same thread
            assert again
    assert lock.holder is None


def test_foreground_preempts_background_holder() -> None:
    lock = HeavyStageLock()
    stop = threading.Event()
    order: list[str] = []
    started = threading.Event()

    def background() -> None:
        with lock.hold("warm", background=True, preempt=stop.set):
            started.set()
            stop.wait(5)  # stands for an abortable computation
            order.append("warm yielded")
        # a background acquirer waits while a foreground stage is waiting or running
        with lock.hold("warm", background=True):
            order.append("warm resumed")

    t = threading.Thread(target=background)
    t.start()
    started.wait(5)
    with lock.hold("llm", timeout=5) as got:
        assert got
        order.append("foreground ran")
    t.join(5)
    assert order == ["warm yielded", "foreground ran", "warm resumed"]


# ------------------------------------------------------------------ factory and config
def test_make_runtime_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("VISA_LLM_URL", raising=False)
    monkeypatch.setenv("VISA_CACHE_DIR", str(tmp_path))
    rt = make_runtime({"n_threads": 2, "model_id": "qwen2.5-coder-0.5b"}, shared=False)
    assert isinstance(rt, LocalLlama) and rt.n_threads == 2 and rt.model_id.endswith("0.5b")
    assert rt.state_dir == tmp_path / "llm-state" == default_state_dir()
    assert not rt.loaded  # lazy: nothing is loaded until asked
    assert make_runtime({"n_ctx": 1024}) is make_runtime({"n_ctx": 1024})  # one shared model
    monkeypatch.setenv("VISA_LLM_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("VISA_LLM_MODEL", "qwen")
    remote = make_runtime({}, shared=False)
    assert isinstance(remote, RemoteOpenAI)
    assert remote.url == "http://127.0.0.1:9/v1/chat/completions" and remote.model == "qwen"
    with pytest.raises(ValueError):
        make_runtime({"backend": "cloud"}, shared=False)


def test_local_runtime_reports_a_missing_model(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    rt = LocalLlama(model_file=tmp_path / "missing.gguf", state_dir=tmp_path)
    res = rt.complete_json("s", "sys", "hi", SMALL_SCHEMA, 8, 5.0)
    assert not res.ok and res.error == ERR_UNAVAILABLE and "could not be loaded" in res.detail


# ------------------------------------------------------------------ remote, fake server
Behaviour = Callable[[dict[str, Any]], tuple[int, Any, float]]


class _FakeServer:
    """An OpenAI-compatible endpoint on 127.0.0.1 whose answers a test scripts."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body})
                status, payload, delay = outer.behaviour(body)
                time.sleep(delay)
                if isinstance(payload, list):  # SSE stream of chunks
                    self.send_response(status)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for obj in payload:
                        self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _completion(content: str, finish: str = "stop") -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": content},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 6,
                      "prompt_tokens_details": {"cached_tokens": 40}}}


@pytest.fixture
def fake_server() -> Iterator[Callable[[Behaviour], _FakeServer]]:
    servers: list[_FakeServer] = []

    def start(behaviour: Behaviour) -> _FakeServer:
        s = _FakeServer(behaviour)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.close()


def test_remote_json_schema_round_trip(fake_server: Callable[[Behaviour], _FakeServer]) -> None:
    srv = fake_server(lambda body: (200, _completion('{"n": 7, "ok": true}'), 0.0))
    rt = RemoteOpenAI(srv.url, "m")
    res = rt.complete_json("stage.one", "SYS", "USER", SMALL_SCHEMA, 16, 5.0,
                           examples=[("EX-U", "EX-A")])
    assert res.ok and res.data == {"n": 7, "ok": True}
    assert res.cache == "hit" and res.cached_tokens == 40 and res.prompt_tokens == 50
    body = srv.requests[0]["body"]
    assert srv.requests[0]["path"] == "/v1/chat/completions"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SMALL_SCHEMA
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert body["messages"][-1]["content"] == "USER"  # the user's words last


def test_remote_falls_back_to_json_object_mode(
        fake_server: Callable[[Behaviour], _FakeServer]) -> None:
    def behaviour(body: dict[str, Any]) -> tuple[int, Any, float]:
        if body["response_format"]["type"] == "json_schema":
            return 422, {"detail": "response_format.type must be text or json_object"}, 0.0
        return 200, _completion('{"n": 1}'), 0.0

    srv = fake_server(behaviour)
    rt = RemoteOpenAI(srv.url + "/v1/", "m")
    res = rt.complete_json("s", "sys", "u", SMALL_SCHEMA, 16, 5.0)
    assert res.ok and res.data == {"n": 1}
    assert rt.mode == "json_object"  # remembered for the next call
    assert srv.requests[1]["body"]["response_format"] == {"type": "json_object",
                                                          "schema": SMALL_SCHEMA}
    res2 = rt.complete_json("s", "sys", "u", SMALL_SCHEMA, 16, 5.0)
    assert res2.ok and len(srv.requests) == 3


@pytest.mark.parametrize("content,finish,err", [
    ("sure! here you go: n=3", "stop", ERR_PARSE),
    ('{"n": "three"}', "stop", ERR_SCHEMA),
    ('{"n": 3, "ok": tr', "length", ERR_TRUNCATED),
])
def test_remote_bad_answers_are_errors(fake_server: Callable[[Behaviour], _FakeServer],
                                       content: str, finish: str, err: str) -> None:
    srv = fake_server(lambda body: (200, _completion(content, finish), 0.0))
    res = RemoteOpenAI(srv.url, "m").complete_json("s", "sys", "u", SMALL_SCHEMA, 16, 5.0)
    assert not res.ok and res.error == err and res.data is None and res.raw_text == content


def test_remote_timeout(fake_server: Callable[[Behaviour], _FakeServer]) -> None:
    srv = fake_server(lambda body: (200, _completion('{"n": 1}'), 1.5))
    res = RemoteOpenAI(srv.url, "m").complete_json("s", "sys", "u", SMALL_SCHEMA, 16, 0.3)
    # the server would have answered correctly, later: only the deadline makes this an error
    assert not res.ok and res.error == ERR_TIMEOUT and res.data is None


def test_remote_unreachable_has_a_clear_message() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    res = RemoteOpenAI(f"http://127.0.0.1:{port}", "m").complete_json(
        "s", "sys", "u", SMALL_SCHEMA, 16, 3.0)
    assert not res.ok and res.error == ERR_UNAVAILABLE
    assert f"127.0.0.1:{port}" in res.detail and "cannot be reached" in res.detail


def test_remote_streaming(fake_server: Callable[[Behaviour], _FakeServer]) -> None:
    parts = ['{"n"', ": 4", "}"]
    chunks = [{"choices": [{"delta": {"content": p}, "finish_reason": None}]} for p in parts]
    chunks.append({"choices": [{"delta": {}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 9, "completion_tokens": 3}})
    srv = fake_server(lambda body: (200, chunks, 0.0))
    seen: list[str] = []
    res = RemoteOpenAI(srv.url, "m").complete_json("s", "sys", "u", SMALL_SCHEMA, 16, 5.0,
                                                   on_text=seen.append)
    assert res.ok and res.data == {"n": 4} and seen == parts
    assert srv.requests[0]["body"]["stream"] is True


def test_remote_warm_sends_each_prefix_once(
        fake_server: Callable[[Behaviour], _FakeServer]) -> None:
    srv = fake_server(lambda body: (200, _completion("{}"), 0.0))
    stages = [StagePrompt("a", "SYS-A"), StagePrompt("b", "SYS-B", (("u", "a"),))]
    progress: list[float] = []
    h = RemoteOpenAI(srv.url, "m").warm(stages, lambda f, m: progress.append(f))
    assert h.wait(10) and h.error is None
    assert [r["body"]["messages"][0]["content"] for r in srv.requests] == ["SYS-A", "SYS-B"]
    assert all(r["body"]["max_tokens"] == 1 for r in srv.requests)
    assert progress[-1] == 1.0


# ------------------------------------------------------------------ the real model (slow)
@pytest.fixture(scope="session")
def real_runtime(tmp_path_factory: pytest.TempPathFactory) -> LocalLlama:
    """The default packaged model, loaded once per test session (shared by make_runtime)."""
    pytest.importorskip("llama_cpp")
    from app.runtime.models import ModelUnavailable, model_path

    try:
        model_path(DEFAULT_MODEL_ID)
    except ModelUnavailable as exc:
        pytest.skip(f"default LLM not installed: {exc}")
    rt = make_runtime({"state_dir": str(tmp_path_factory.getbasetemp() / "llm-state"),
                       "n_threads": 2})
    assert isinstance(rt, LocalLlama)
    return rt


def _actions(res: Any) -> list[str]:
    """The plan's action ids. Exact parameters are not compared between runs: llama.cpp's
    floating point depends on how the prompt was split into batches, which can flip a
    near-tie token (e.g. "+1" vs "+10" for "a little")."""
    assert res.ok and res.data is not None, (res.error, res.detail)
    return [s["action"] for s in res.data["steps"]]


# Generous: a shared 2-core machine can be slow; this is a hang guard, not a timing check.
CALL_TIMEOUT_S = 900.0


def _iv_call(rt: LocalLlama, command: str = "coronal plus 20",
             timeout_s: float = CALL_TIMEOUT_S):
    sp = prompts.decision_prompt(("IV",))
    from app.agents.decision import Memory
    from app.core.state import CaseContext, ConsoleState

    state = ConsoleState()
    state.set_case(CaseContext(iv_size=(("axial", 64), ("coronal", 512), ("sagittal", 512))))
    user = prompts.user_message(command, state, Memory(), ("IV",))
    return rt.complete_json(sp.stage, sp.system, user, prompts.plan_schema(("IV",)), 96,
                            timeout_s, examples=sp.examples)


@pytest.mark.slow
def test_warm_then_hit_then_restore(real_runtime: LocalLlama) -> None:
    iv, ar = prompts.decision_prompt(("IV",)), prompts.decision_prompt(("AR",))
    progress: list[tuple[float, str]] = []
    handle = real_runtime.warm([iv, ar], lambda f, m: progress.append((f, m)))
    assert handle.wait(900) and handle.error is None, handle.error
    fractions = [f for f, _ in progress]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert "ready" in progress[-1][1]
    assert set(handle.stats["stages"]) == {"decide.IV", "decide.AR"}

    first = _iv_call(real_runtime)  # the first warmed stage is live: a hit
    assert first.ok, first.detail
    assert first.cache == "hit" and first.cached_tokens > 200
    assert first.data["steps"][0]["action"] == "IV.SHOW_MOVE"

    sp = ar
    state_user = "state: 3D: hidden\ncommand: rotate the model to the right"
    other = real_runtime.complete_json(sp.stage, sp.system, state_user,
                                       prompts.plan_schema(("AR",)), 96, CALL_TIMEOUT_S,
                                       examples=sp.examples)
    assert other.ok and other.cache == "restored"  # switching stage restores, no recompute
    assert other.data["steps"][0]["action"] == "AR.ROTATE"

    again = _iv_call(real_runtime)
    assert again.ok and again.cache == "restored" and _actions(again) == _actions(first)
    third = _iv_call(real_runtime)
    assert third.cache == "hit" and third.cached_tokens >= again.cached_tokens


@pytest.mark.slow
def test_context_warm_leaves_only_the_words(real_runtime: LocalLlama) -> None:
    from app.agents.decision import Memory
    from app.core.state import CaseContext, ConsoleState

    sp = prompts.decision_prompt(("IV",))
    state = ConsoleState()
    state.set_case(CaseContext(iv_size=(("axial", 64), ("coronal", 512), ("sagittal", 512))))
    memory = Memory(last_agent="IV", recent=["coronal plus 100", "zoom in on the axial"])
    ctx = prompts.context_message(state, memory, ("IV",))
    handle = real_runtime.warm_context(sp, ctx)
    assert handle.wait(900) and handle.error is None, handle.error
    assert handle.stats["context_tokens"] > 10
    words = prompts.command_message("go a bit further up")
    res = real_runtime.complete_json(sp.stage, sp.system, words, prompts.plan_schema(("IV",)),
                                     96, CALL_TIMEOUT_S, examples=sp.examples, context=ctx)
    assert res.ok and res.cache == "hit"
    n_words = len(real_runtime._llm.tokenize(words.encode(), add_bos=False))
    # everything but the spoken words (and the turn's closing tokens) was already computed
    assert res.prompt_tokens - res.cached_tokens <= n_words + 8


@pytest.mark.slow
def test_state_survives_on_disk(real_runtime: LocalLlama) -> None:
    sp = prompts.decision_prompt(("IV",))
    before = _iv_call(real_runtime)
    assert before.ok, before.detail
    path = real_runtime.saved_state_path(sp.system, sp.examples)
    assert path is not None
    real_runtime.flush_saves()  # the save runs in a background thread
    assert path.is_file() and path.stat().st_size > 100_000
    # A "restart": nothing in RAM, nothing live. The prefix must come back from disk.
    real_runtime.forget_states(memory=True)
    real_runtime.reset_context()
    after = _iv_call(real_runtime)
    assert after.ok and after.cache == "restored"
    assert after.cached_tokens >= len(real_runtime._llm.tokenize(
        chatml_prefix(sp.system, sp.examples).encode(), add_bos=False, special=True)) - 1
    assert _actions(after) == _actions(before)
    # A damaged file is ignored (and removed), never trusted.
    real_runtime.forget_states(memory=True)
    real_runtime.reset_context()
    path.write_bytes(b"VISA-LLM-STATE 1\n{\"n_tokens\": 3}\n garbage")
    recomputed = _iv_call(real_runtime)
    assert recomputed.ok and recomputed.cache == "miss"
    assert _actions(recomputed) == _actions(before)


@pytest.mark.slow
def test_timeout_returns_promptly_and_the_runtime_recovers(real_runtime: LocalLlama) -> None:
    # A never-seen prefix must be computed (several seconds): a 0.3 s budget cannot cover it.
    system = "You answer with a number. " + "Numbers are counted in whole units. " * 30
    res = real_runtime.complete_json("test.timeout", system, "how many?", SMALL_SCHEMA, 16, 0.3)
    assert not res.ok and res.error == ERR_TIMEOUT and res.data is None
    assert res.completion_tokens == 0  # stopped while still reading the prompt
    ok = _iv_call(real_runtime)
    assert ok.ok and ok.data["steps"]


@pytest.mark.slow
def test_foreground_call_preempts_the_warm_up(real_runtime: LocalLlama) -> None:
    _iv_call(real_runtime)  # IV prefix cached
    long_stage = StagePrompt("test.preempt", "You help surgeons. " + "Be brief and exact. " * 60)
    handle = real_runtime.warm([long_stage])
    time.sleep(0.5)  # let the warm-up start computing the long prefix
    res = _iv_call(real_runtime, "sagittal minus 30")
    assert res.ok, res.detail
    assert res.data["steps"][0]["params"] == {"sagittal": "-30"}
    assert handle.wait(900) and handle.error is None
    assert handle.stats["stages"]["test.preempt"]["how"] in ("computed", "memory", "disk")
