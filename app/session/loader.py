"""Loading a case off the UI thread: the demo case (generated on first use) or a case folder,
then its 3D surfaces (built once, then read from the mesh cache). The window is up meanwhile
and shows the progress; nothing here raises into the UI — failures become plain messages."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]


@dataclass
class LoadedCase:
    case: Any = None  # app.data.case.Case, None when the folder could not be used at all
    model: Any = None  # app.render.scene.AnatomyModel or None
    error: str | None = None  # why there is no case, in plain words
    notes: list[str] = field(default_factory=list)  # what else went wrong (e.g. 3D build)


def load_case_and_model(path: Path | None, progress: Progress | None = None) -> LoadedCase:
    """The case at ``path`` (the demo case when None) and its 3D model."""
    report = progress or (lambda what, frac: None)
    try:
        if path is None:
            from app.data.demo import ensure_demo_case

            report("Preparing the demo case\u2026", 0.0)
            path = ensure_demo_case(progress=lambda stage, f: report(
                f"Preparing the demo case ({stage})\u2026", 0.3 * f))
        from app.data.case import load_case

        case = load_case(path, progress=lambda stage, f: report(
            f"Loading the case: {stage}\u2026", 0.3 + 0.4 * f))
    except Exception as exc:  # noqa: BLE001 - the console runs without a case
        log.exception("case could not be loaded")
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        return LoadedCase(error=f"The case could not be loaded: {message}")
    loaded = LoadedCase(case=case)
    if case.labels is not None and case.labels.structures():
        try:
            from app.render.scene import load_anatomy_model

            report("Building the 3D model\u2026", 0.7)
            loaded.model = load_anatomy_model(case, progress=lambda f, key: report(
                "Building the 3D model" + (f" ({key.replace('_', ' ')})" if key else "")
                + "\u2026", 0.7 + 0.3 * f))
        except Exception as exc:  # noqa: BLE001
            log.exception("3D model could not be built")
            loaded.notes.append(f"The 3D model could not be built ({type(exc).__name__}); "
                                "the console runs without it.")
    report("Case loaded", 1.0)
    return loaded


class CaseLoader:
    """Runs :func:`load_case_and_model` on a thread; ``done(LoadedCase)`` on that thread."""

    def __init__(self, path: Path | None, done: Callable[[LoadedCase], None],
                 progress: Progress | None = None,
                 load: Callable[[Path | None, Progress | None], LoadedCase] | None = None) -> None:
        self.path = path
        self._done = done
        self._progress = progress
        self._load = load or load_case_and_model
        self.thread = threading.Thread(target=self._run, name="case-loader", daemon=True)

    def start(self) -> CaseLoader:
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            result = self._load(self.path, self._progress)
        except Exception as exc:  # noqa: BLE001
            log.exception("case loader failed")
            result = LoadedCase(error=f"The case could not be loaded ({type(exc).__name__}).")
        self._done(result)


__all__ = ["CaseLoader", "LoadedCase", "load_case_and_model"]
