"""Work-arounds for defects of the Qt binding in use, detected at run time.

**PySide6 6.12.0: ``SignalInstance.emit()`` drops a reference to ``True``.** ``emit`` returns
``True`` without owning a reference to it, so every emit from Python lowers ``True``'s
reference count by one; on Python 3.11 (where ``True`` is not immortal) the interpreter aborts
with "Fatal Python error: bool_dealloc" after a few thousand emits — a couple of minutes of
video at 30 frames per second. Every Python-side emit in ``app/ui`` therefore goes through
:func:`emit`, which gives the lost reference back when (and only when) the defect was detected
at import. Connecting a signal to ``other_signal.emit`` has the same effect when Qt calls it:
connect to the signal itself (``a.connect(b)``) or use :func:`emitter`.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

_incref = ctypes.pythonapi.Py_IncRef
_incref.argtypes = [ctypes.py_object]
_incref.restype = None


class _Probe(QObject):
    ping = Signal()


def _emit_drops_a_reference(n: int = 32) -> bool:
    """Emit ``n`` times and see whether ``True`` lost about one reference per emit."""
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(n):
        probe.ping.emit()
    lost = before - sys.getrefcount(True)
    if lost >= n // 2:
        for _ in range(lost):  # give back what the probe itself took
            _incref(True)
        return True
    return False


EMIT_DROPS_REFERENCE = _emit_drops_a_reference()


def emit(signal: Any, *args: Any) -> None:
    """``signal.emit(*args)``, keeping Python's reference counts right (see the module doc)."""
    result = signal.emit(*args)
    if EMIT_DROPS_REFERENCE and (result is True or result is False):
        _incref(result)


def emitter(signal: Any) -> Callable[..., None]:
    """A plain callable that emits ``signal`` safely (for callbacks from other threads)."""

    def fire(*args: Any) -> None:
        emit(signal, *args)

    return fire


__all__ = ["EMIT_DROPS_REFERENCE", "emit", "emitter"]
