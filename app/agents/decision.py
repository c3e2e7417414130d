"""The typed decision every interpreter tier produces (DESIGN §3, §5.3).

A tier turns a corrected command (plus memory) into a ``Decision``: valid or not, which agent(s),
and the ordered plan of registry steps. The orchestrator picks the first confident decision,
applies its plan through the command registry, and writes the trace record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from app.core.registry import Step
from app.core.state import ConsoleState


@dataclass
class Decision:
    valid: bool
    steps: list[Step] = field(default_factory=list)
    agent: str | None = None  # the routed agent; the first step's agent for composites
    confidence: float = 0.0  # 0..1, calibrated per tier
    tier: str = "lexicon"  # "lexicon" | "semantic" | "llm" | "visa" | "memory"
    reason: str = ""  # why invalid / how decided, in plain words
    # Stages' timings and diagnostics for the trace (e.g. LLM cache hit/miss, tokens).
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def agents(self) -> list[str]:
        seen: list[str] = []
        for s in self.steps:
            a = s.action_id.split(".", 1)[0]
            if a not in seen:
                seen.append(a)
        return seen


@dataclass
class Memory:
    """The last agent used and the last 3 corrected commands (DESIGN §4)."""

    last_agent: str | None = None
    recent: list[str] = field(default_factory=list)
    size: int = 3

    def remember(self, corrected: str, agent: str | None) -> None:
        if corrected:
            self.recent.append(corrected)
            del self.recent[:-self.size]
        if agent:
            self.last_agent = agent

    def to_dict(self) -> dict[str, Any]:
        return {"last_agent": self.last_agent, "recent": list(self.recent)}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Memory:
        d = d or {}
        return cls(last_agent=d.get("last_agent"), recent=list(d.get("recent") or [])[-3:])


class Tier(Protocol):
    """One interpreter tier. ``decide`` returns None when it has nothing to say."""

    name: str

    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None: ...
