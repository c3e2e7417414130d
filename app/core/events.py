"""A tiny synchronous event emitter (the evented-model pattern, without Qt)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


class Emitter(Generic[T]):
    """Calls every subscriber with each emitted value.

    A failing subscriber is logged and skipped: one broken widget must not stop the others
    (or the command that caused the change) from seeing it.
    """

    def __init__(self) -> None:
        self._subs: list[Callable[[T], None]] = []

    def connect(self, fn: Callable[[T], None]) -> Callable[[], None]:
        self._subs.append(fn)

        def disconnect() -> None:
            if fn in self._subs:
                self._subs.remove(fn)

        return disconnect

    def emit(self, value: T) -> None:
        for fn in list(self._subs):
            try:
                fn(value)
            except Exception:  # noqa: BLE001 - isolate subscribers
                log.exception("event subscriber %r failed", fn)

    def __len__(self) -> int:
        return len(self._subs)
