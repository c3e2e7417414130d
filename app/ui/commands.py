"""One serialised path into the command registry for every input of the window.

Touch and hotkeys dispatch on the UI thread; typed (and later spoken) commands dispatch on a
worker thread through the orchestrator. ``ConsoleState`` and ``CommandRegistry`` are not
thread-safe, so :class:`LockedRegistry` wraps the registry with one lock around every mutation.
A dispatch takes milliseconds, so the UI thread never waits long; the slow part of a typed
command (interpretation) runs outside the lock.

:class:`CommandRunner` runs typed commands one at a time, in order, on its own thread.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import queue
import threading
from collections.abc import Callable, Mapping
from typing import Any

from app.core.registry import Actor, CommandRegistry, CommandResult

log = logging.getLogger(__name__)

TOUCH = Actor(role="nurse", source="touch")
HOTKEY = Actor(role="nurse", source="hotkey")
TYPED = Actor(role="surgeon", source="text")

TEXT_UNAVAILABLE = "Text commands are not available yet in this build."


class LockedRegistry:
    """A :class:`CommandRegistry` whose mutations are serialised; everything else passes through
    (``state``, ``results``, ``audit``, ``can_undo`` …), so it can stand in for the registry
    (e.g. given to the orchestrator)."""

    def __init__(self, registry: CommandRegistry) -> None:
        self._registry = registry
        self.lock = threading.RLock()

    @property
    def inner(self) -> CommandRegistry:
        return self._registry

    def dispatch(self, action_id: str, params: Mapping[str, Any] | None = None,
                 actor: Actor | None = None) -> CommandResult:
        with self.lock:
            return self._registry.dispatch(action_id, params, actor)

    def dispatch_plan(self, plan: Any, actor: Actor | None = None) -> CommandResult:
        with self.lock:
            return self._registry.dispatch_plan(plan, actor)

    def undo(self, actor: Actor | None = None) -> CommandResult:
        with self.lock:
            return self._registry.undo(actor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._registry, name)


def text_commands_available() -> bool:
    """Whether the text interpreter is part of this build (checked without importing it)."""
    try:
        return importlib.util.find_spec("app.agents.interpreter") is not None
    except (ImportError, ValueError):
        return False


def make_orchestrator(registry: Any) -> Any:
    """The orchestrator for typed commands; raises ImportError when the interpreter is missing.

    It imports the interpreter at once (not at the first command), so a missing or broken
    module is found here, on the runner's thread, and reported in plain words.
    """
    from app.session.console import orchestrator_for

    importlib.import_module("app.agents.interpreter")
    return orchestrator_for(registry, actor=TYPED)


class CommandRunner:
    """Runs typed commands through an orchestrator on one worker thread, in arrival order.

    ``factory`` builds the orchestrator lazily on the worker thread (importing the interpreter
    and its lexicon takes a moment). ``on_record(record)`` is called on the worker thread with
    each trace record (DESIGN §5.3 plus ``reply``); ``on_unavailable(message)`` when no
    orchestrator can be built.
    """

    def __init__(self, factory: Callable[[], Any], on_record: Callable[[dict[str, Any]], None],
                 on_unavailable: Callable[[str], None] | None = None) -> None:
        self._factory = factory
        self._on_record = on_record
        self._on_unavailable = on_unavailable
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._orchestrator: Any = None
        self._unavailable: str | None = None
        self._pending = 0
        self._count_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="commands", daemon=True)
        self._thread.start()

    @property
    def pending(self) -> int:
        """Commands submitted and not finished yet."""
        with self._count_lock:
            return self._pending

    @property
    def orchestrator(self) -> Any:
        return self._orchestrator

    def submit(self, text: str) -> None:
        with self._count_lock:
            self._pending += 1
        self._queue.put(text)

    def stop(self, timeout: float = 2.0) -> None:
        self._queue.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            text = self._queue.get()
            if text is None:
                return
            try:
                self._handle(text)
            except Exception:  # noqa: BLE001 - the runner must survive any command
                log.exception("typed command failed")
            finally:
                with self._count_lock:
                    self._pending -= 1

    def _handle(self, text: str) -> None:
        if self._orchestrator is None and self._unavailable is None:
            try:
                self._orchestrator = self._factory()
            except ImportError as exc:
                log.warning("text commands unavailable: %s", exc)
                self._unavailable = TEXT_UNAVAILABLE
            except Exception as exc:  # noqa: BLE001
                log.exception("could not start the command interpreter")
                self._unavailable = ("Text commands are not available: the interpreter could "
                                     f"not start ({type(exc).__name__}).")
        if self._orchestrator is None:
            if self._on_unavailable is not None:
                self._on_unavailable(self._unavailable or TEXT_UNAVAILABLE)
            return
        record = self._orchestrator.handle_text(text)
        self._on_record(record)


__all__ = [
    "CommandRunner", "HOTKEY", "LockedRegistry", "TEXT_UNAVAILABLE", "TOUCH", "TYPED",
    "make_orchestrator", "text_commands_available",
]
