"""Builds the tiered interpreter of DESIGN §3: lexicon → semantic matcher → LLM.

The semantic tier is cheap (~15 ms), so it is also asked about lexicon readings that are
confident but not certain (it catches the grammar's confident mistakes; the surer valid reading
wins). The LLM tier costs seconds on a CPU, so it is asked only when both faster tiers are
unsure. Each tier that cannot start (a missing model package, no memory) disables itself with a
plain reason; the lexicon alone always works.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from app.agents.interpreter import FastInterpreter
from app.runtime.settings import settings

log = logging.getLogger(__name__)

# Lexicon readings below this confidence are double-checked by the semantic tier.
SEMANTIC_CONSULT_BELOW = 0.975


@dataclass
class InterpreterConfig:
    semantic: bool = True
    llm: bool = True
    llm_config: dict[str, Any] = field(default_factory=dict)
    llm_timeout_s: float = 12.0

    @classmethod
    def from_env(cls) -> InterpreterConfig:
        """``VISA_TIERS`` = comma list of the optional tiers to use (default "semantic,llm");
        ``VISA_LLM_TIMEOUT_S`` = the LLM tier's deadline."""
        s = settings()
        timeout = s.llm_timeout_s or cls.llm_timeout_s
        if s.tiers is None:
            return cls(llm_timeout_s=timeout)
        names = {t.strip().lower() for t in s.tiers.split(",") if t.strip()}
        return cls(semantic="semantic" in names, llm="llm" in names, llm_timeout_s=timeout)


def build_interpreter(config: InterpreterConfig | None = None) -> FastInterpreter:
    config = config or InterpreterConfig.from_env()
    tiers: list[Any] = []
    problems: dict[str, str] = {}  # tier name -> why it could not start (the UI says so)
    if config.semantic:
        try:
            from app.agents.semantic import SemanticTier

            sem = SemanticTier()
            sem.consult_below = SEMANTIC_CONSULT_BELOW  # type: ignore[attr-defined]
            tiers.append(sem)
        except Exception as exc:  # noqa: BLE001 - a tier that cannot start must not stop the console
            log.warning("semantic tier unavailable: %s", exc)
            problems["semantic"] = str(exc) or type(exc).__name__
    if config.llm:
        try:
            from app.agents.llm_runtime import make_runtime
            from app.agents.llm_tier import LLMTier

            tiers.append(LLMTier(make_runtime(config.llm_config), timeout_s=config.llm_timeout_s))
        except Exception as exc:  # noqa: BLE001
            log.warning("LLM tier unavailable: %s", exc)
            problems["llm"] = str(exc) or type(exc).__name__
    interpreter = FastInterpreter(tiers=tiers)
    interpreter.tier_problems = problems  # type: ignore[attr-defined]
    return interpreter


def start_warmup(interpreter: FastInterpreter, progress: Any = None) -> list[Any]:
    """Warm the slow tiers in the background (semantic exemplars, LLM prompt prefixes)."""
    handles: list[Any] = []
    for tier in interpreter.tiers:
        try:
            if getattr(tier, "name", "") == "semantic" and hasattr(tier, "start_warm"):
                handles.append(tier.start_warm())
            elif getattr(tier, "name", "") == "llm" and hasattr(tier, "warm"):
                handles.append(tier.warm(progress, background=True))
        except Exception as exc:  # noqa: BLE001
            log.warning("warm-up of the %s tier failed: %s", getattr(tier, "name", "?"), exc)
    return handles
