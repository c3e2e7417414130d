"""Problems found while loading a case, in plain words for the surgical team."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Problem:
    """One thing that is wrong or noteworthy about an input.

    ``part`` names what it concerns ("ct", "labels", "clinical", "video", "case", "models");
    ``message`` is one plain sentence a nurse can read; ``detail`` is for engineers.
    """

    severity: Severity
    part: str
    message: str
    detail: str = ""

    def __str__(self) -> str:
        text = f"[{self.severity}] {self.part}: {self.message}"
        return f"{text} ({self.detail})" if self.detail else text


class LoadError(Exception):
    """A part of a case could not be loaded at all. ``problems`` says why, in plain words."""

    def __init__(self, part: str, message: str, detail: str = "",
                 problems: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.part = part
        self.message = message
        self.detail = detail
        self.problems: list[Problem] = list(problems or [])
        self.problems.append(Problem("error", part, message, detail))


@dataclass
class ProblemList:
    """An ordered collection of problems with convenience adders."""

    items: list[Problem] = field(default_factory=list)

    def error(self, part: str, message: str, detail: str = "") -> None:
        self.items.append(Problem("error", part, message, detail))

    def warning(self, part: str, message: str, detail: str = "") -> None:
        self.items.append(Problem("warning", part, message, detail))

    def info(self, part: str, message: str, detail: str = "") -> None:
        self.items.append(Problem("info", part, message, detail))

    def extend(self, problems: list[Problem]) -> None:
        self.items.extend(problems)

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
