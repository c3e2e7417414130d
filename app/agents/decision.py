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
    # A phrase the grammar reads as this same plan, for decisions a later tier made: memory
    # keeps it so that "again", "a bit more" and "the other way" can repeat the plan.
    reading: str | None = None
    # "undo that": no plan; the registry restores the state before its last command
    undo: bool = False

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
    # recent command -> a phrase the grammar reads as the plan that ran (``Decision.reading``)
    readings: dict[str, str] = field(default_factory=dict)
    # recent command -> the agent it ended on ("again on the CT" repeats the last CT command)
    agents: dict[str, str] = field(default_factory=dict)

    def remember(self, corrected: str, agent: str | None, reading: str | None = None) -> None:
        if corrected:
            self.recent.append(corrected)
            del self.recent[:-self.size]
            if reading and reading != corrected:
                self.readings[corrected] = reading
            else:
                self.readings.pop(corrected, None)
            self.readings = {k: v for k, v in self.readings.items() if k in self.recent}
            if agent:
                self.agents[corrected] = agent
            self.agents = {k: v for k, v in self.agents.items() if k in self.recent}
        if agent:
            self.last_agent = agent

    def reading_of(self, corrected: str) -> str:
        """What to re-read when this earlier command is repeated."""
        return self.readings.get(corrected, corrected)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"last_agent": self.last_agent, "recent": list(self.recent)}
        if self.readings:
            d["readings"] = dict(self.readings)
        if self.agents:
            d["agents"] = dict(self.agents)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Memory:
        d = d or {}
        recent = list(d.get("recent") or [])[-3:]
        raw = d.get("readings")
        readings = {str(k): str(v) for k, v in raw.items() if k in recent} \
            if isinstance(raw, dict) else {}
        raw_agents = d.get("agents")
        agents = {str(k): str(v) for k, v in raw_agents.items() if k in recent} \
            if isinstance(raw_agents, dict) else {}
        return cls(last_agent=d.get("last_agent"), recent=recent, readings=readings,
                   agents=agents)


class Tier(Protocol):
    """One interpreter tier. ``decide`` returns None when it has nothing to say."""

    name: str

    def decide(self, corrected: str, state: ConsoleState, memory: Memory) -> Decision | None: ...
