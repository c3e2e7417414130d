"""The one command registry: voice agents, touch buttons, hotkeys and the CLI dispatch here.

Role checks (RBAC), validation, undo and the audit hook are enforced once, in this module.
A plan of several actions (a composite command) is validated and applied as one transaction:
either every step applies, in order, or none does; it is undone as one step.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.actions import ACTIONS, Action
from app.core.events import Emitter
from app.core.params import CommandError, SliceValue, validate_params
from app.core.state import ConsoleState
from app.core.vocab import ROLES

log = logging.getLogger(__name__)

UNDO_DEPTH = 50


@dataclass(frozen=True)
class Actor:
    """Who asked: a person's role and the input path (voice, touch, hotkey, cli, eval)."""

    role: str = "surgeon"
    source: str = "voice"
    name: str = ""


@dataclass(frozen=True)
class Step:
    action_id: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class CommandResult:
    ok: bool
    steps: list[Step]
    message: str
    notes: list[str] = field(default_factory=list)
    error_code: str | None = None
    changed: list[str] = field(default_factory=list)  # state sections that changed

    def actions(self) -> list[dict[str, Any]]:
        """Trace form of the steps (DESIGN §5.3)."""
        out = []
        for s in self.steps:
            agent, name = s.action_id.split(".", 1)
            params = {k: (v.as_param() if isinstance(v, SliceValue) else
                          list(v) if isinstance(v, tuple) else v) for k, v in s.params.items()}
            out.append({"agent": agent, "action": name, "params": params})
        return out


@dataclass(frozen=True)
class AuditRecord:
    ts: float
    actor: Actor
    kind: str  # "dispatch" | "undo"
    steps: tuple[Step, ...]
    ok: bool
    message: str
    snapshot_after: dict[str, Any]


def role_allows(actor_role: str, required: str) -> bool:
    if actor_role not in ROLES:
        return False
    return ROLES.index(actor_role) >= ROLES.index(required)


class CommandRegistry:
    def __init__(self, state: ConsoleState, actions: Iterable[Action] = ACTIONS) -> None:
        self.state = state
        self._actions: dict[str, Action] = {}
        for a in actions:
            if a.id in self._actions:
                raise ValueError(f"duplicate action id {a.id}")
            self._actions[a.id] = a
        self._undo: list[tuple[tuple[Step, ...], ConsoleState]] = []
        self.audit: Emitter[AuditRecord] = Emitter()
        self.results: Emitter[CommandResult] = Emitter()

    # -- lookup --------------------------------------------------------------------------
    def ids(self) -> list[str]:
        return list(self._actions)

    def get(self, action_id: str) -> Action:
        try:
            return self._actions[action_id]
        except KeyError:
            raise CommandError(f"There is no action called {action_id}.", "unknown_action") from None

    def validate(self, action_id: str, params: Mapping[str, Any] | None = None) -> Step:
        action = self.get(action_id)
        return Step(action_id, validate_params(action_id, action.params, params))

    # -- dispatch ------------------------------------------------------------------------
    def dispatch(self, action_id: str, params: Mapping[str, Any] | None = None,
                 actor: Actor | None = None) -> CommandResult:
        return self.dispatch_plan([(action_id, params or {})], actor)

    def dispatch_plan(self, plan: Iterable[tuple[str, Mapping[str, Any]] | Step],
                      actor: Actor | None = None) -> CommandResult:
        actor = actor or Actor()
        raw = [p if isinstance(p, Step) else Step(p[0], p[1]) for p in plan]
        try:
            if not raw:
                raise CommandError("Nothing to do.", "empty")
            steps = [self.validate(s.action_id, s.params) for s in raw]
            for s in steps:
                required = self._actions[s.action_id].role
                if not role_allows(actor.role, required):
                    raise CommandError(
                        f"The {actor.role} role may not use {s.action_id} (needs {required}).",
                        "forbidden")
            # Apply to a scratch copy first: all steps must succeed before the state changes.
            scratch = self.state.copy()
            messages: list[str] = []
            notes: list[str] = []
            for s in steps:
                action = self._actions[s.action_id]
                outcome = action.apply(scratch, dict(s.params))
                scratch.apply(agent=action.agent, **outcome.sections)
                messages.append(outcome.message)
                notes.extend(outcome.notes)
        except CommandError as exc:
            result = CommandResult(False, raw, exc.message, error_code=exc.code)
            self._emit("dispatch", actor, tuple(raw), result)
            return result
        before = self.state.copy()
        changes = self.state.restore(scratch)
        if changes:
            self._undo.append((tuple(steps), before))
            del self._undo[:-UNDO_DEPTH]
        result = CommandResult(True, steps, " ".join(messages), notes,
                               changed=[c.section for c in changes])
        self._emit("dispatch", actor, tuple(steps), result)
        return result

    # -- undo ----------------------------------------------------------------------------
    def before_last_move(self) -> ConsoleState | None:
        """The state before the most recent command that moved a CT slice (for "back to where
        we were", which returns the slices and leaves the rest as it is), or None."""
        for steps, before in reversed(self._undo):
            if any(s.action_id in ("IV.SHOW_MOVE", "IV.ZOOM_IN_MOVE")
                   and set(dict(s.params)) & {"axial", "coronal", "sagittal"} for s in steps):
                return before
        return None

    def can_undo(self) -> bool:
        return bool(self._undo)

    def undo(self, actor: Actor | None = None) -> CommandResult:
        actor = actor or Actor()
        if not role_allows(actor.role, "nurse"):
            result = CommandResult(False, [], f"The {actor.role} role may not undo.", error_code="forbidden")
        elif not self._undo:
            result = CommandResult(False, [], "There is nothing to undo.", error_code="empty")
        else:
            steps, before = self._undo.pop()
            changes = self.state.restore(before)
            names = ", ".join(s.action_id for s in steps)
            result = CommandResult(True, list(steps), f"Undone: {names}.",
                                   changed=[c.section for c in changes])
        self._emit("undo", actor, tuple(result.steps), result)
        return result

    # -- audit ---------------------------------------------------------------------------
    def add_audit_hook(self, fn: Callable[[AuditRecord], None]) -> Callable[[], None]:
        return self.audit.connect(fn)

    def _emit(self, kind: str, actor: Actor, steps: tuple[Step, ...], result: CommandResult) -> None:
        rec = AuditRecord(time.time(), actor, kind, steps, result.ok, result.message,
                          self.state.snapshot())
        log.info("%s %s", kind, result.message,
                 extra={"data": {"event": f"command.{kind}", "ok": result.ok,
                                 "role": actor.role, "source": actor.source,
                                 "actions": result.actions()}})
        self.audit.emit(rec)
        self.results.emit(result)
