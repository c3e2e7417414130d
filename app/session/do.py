"""`visa-console do "TEXT" [--case PATH] [--state FILE] [--json]` (DESIGN §5.2).

Interprets and applies one command headless. With ``--state FILE`` the state (plus the memory
of the last agent and commands) is read from and written back to FILE, so calls chain.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.agents.ask_back import PendingQuestion
from app.agents.decision import Memory
from app.core.registry import Actor, CommandResult, Step
from app.core.state import ConsoleState
from app.session.console import build_console, case_context

#: Undo steps kept in a ``--state`` file (each a whole state before a command).
UNDO_KEPT = 10


def _read_question(path: Path) -> PendingQuestion | None:
    """The question the last call asked, if it is still to be answered."""
    data = json.loads(path.read_text(encoding="utf-8")).get("_question")
    try:
        return PendingQuestion.from_file(data) if isinstance(data, dict) else None
    except (KeyError, TypeError, ValueError):
        return None  # a damaged question is dropped; the state itself is still good


def _read_state(path: Path) -> tuple[ConsoleState, Memory, list[Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    undo = []
    for item in data.get("_undo") or []:
        # "undo that" in a later call: the states before the last commands, as the registry
        # keeps them (the actions in trace form: enough to say what was undone)
        undo.append((tuple(Step(f"{a['agent']}.{a['action']}", dict(a.get("params") or {}))
                           for a in item.get("actions") or []),
                     ConsoleState.from_dict(item["before"])))
    return ConsoleState.from_dict(data), Memory.from_dict(data.get("_memory")), undo


def _write_state(path: Path, state: ConsoleState, memory: Memory,
                 undo: list[Any] | None = None,
                 question: PendingQuestion | None = None) -> None:
    data: dict[str, Any] = state.to_dict()
    data["_memory"] = memory.to_dict()
    if question is not None:  # asked in this call: the next call may answer it
        data["_question"] = question.to_file()
    if undo:
        data["_undo"] = [{"actions": CommandResult(True, list(steps), "").actions(),
                          "before": before.to_dict()} for steps, before in undo[-UNDO_KEPT:]]
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write-then-rename so an interrupted call never leaves a half-written state file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    os.replace(tmp, path)


def run_do_command(text: str, case: Path | None, state_file: Path | None, as_json: bool,
                   strategy: str = "fast") -> int:
    from app.data.problems import LoadError

    state: ConsoleState | None = None
    memory = Memory()
    undo: list[Any] = []
    question: PendingQuestion | None = None
    if state_file is not None and state_file.exists():
        try:
            state, memory, undo = _read_state(state_file)
            question = _read_question(state_file)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: the state file {state_file} cannot be used: {exc}", file=sys.stderr)
            return 2
    try:
        if state is None:
            state = ConsoleState()
            state.set_case(case_context(case))
        elif case is not None:
            ctx = case_context(case)
            if ctx != state.case:
                state.set_case(ctx)
    except LoadError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    console = build_console(state=state, strategy=strategy,
                            actor=Actor(role="surgeon", source="cli"))
    registry, orch = console.registry, console.orchestrator
    registry._undo.extend(undo)
    orch.memory = memory
    orch.pending = question
    record = orch.handle_text(text)
    if state_file is not None:
        try:
            _write_state(state_file, state, orch.memory, registry._undo, orch.pending)
        except OSError as exc:
            print(f"error: the state could not be saved to {state_file}: {exc}", file=sys.stderr)
            return 2
    if as_json:
        print(json.dumps(record, indent=None, default=str))
    else:
        reply = record["reply"]
        print(reply["text"])
    return 0 if record["reply"]["ok"] else 1
