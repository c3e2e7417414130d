"""Build the console once, one way (DESIGN §2 app/session).

``build_console`` composes the state, the command registry and the orchestrator (with its
tiered interpreter) for a case; ``HeadlessConsole`` is that composition, usable without a
window. The GUI builds its orchestrator here too (``orchestrator_for``), on its own registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.agents.orchestrator import Orchestrator
from app.core.registry import Actor, CommandRegistry
from app.core.state import CaseContext, ConsoleState


def case_context(case_path: Path | None) -> CaseContext:
    """What a case offers (CT size, tumour lobe, structures); the demo case by default."""
    from app.data.case import load_case

    if case_path is None:
        from app.data.demo import ensure_demo_case

        case_path = ensure_demo_case()
    case = load_case(case_path, load_video=False)
    return case.context()


@dataclass
class HeadlessConsole:
    state: ConsoleState
    registry: CommandRegistry
    orchestrator: Orchestrator

    def say(self, text: str) -> dict[str, Any]:
        """Interpret and apply one command; its trace record (DESIGN §5.3) plus the reply."""
        return self.orchestrator.handle_text(text)

    def snapshot(self) -> dict[str, Any]:
        return self.state.snapshot()

    def wait_ready(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Warm every enabled interpreter tier; the tiers that could not get ready."""
        return self.orchestrator.wait_ready(progress)


def orchestrator_for(registry: CommandRegistry, *, strategy: str = "fast",
                     interpreter: Any | None = None, actor: Actor | None = None) -> Orchestrator:
    """The orchestrator on an existing registry (the window owns its state and registry)."""
    return Orchestrator(registry, strategy=strategy, interpreter=interpreter, actor=actor)


def build_console(context: CaseContext | None = None, *, case_path: Path | None = None,
                  state: ConsoleState | None = None, strategy: str = "fast",
                  interpreter: Any | None = None, actor: Actor | None = None) -> HeadlessConsole:
    """The console for a case: ``state`` as given (a resumed ``--state`` file), else a fresh
    state for ``context`` (or the case at ``case_path``, or the demo case)."""
    if state is None:
        state = ConsoleState()
        state.set_case(context if context is not None else case_context(case_path))
    registry = CommandRegistry(state)
    orch = orchestrator_for(registry, strategy=strategy, interpreter=interpreter, actor=actor)
    return HeadlessConsole(state, registry, orch)


__all__ = ["HeadlessConsole", "build_console", "case_context", "orchestrator_for"]
