"""Typed parameter schemas for actions: validation and normalisation with plain-word errors."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal


class CommandError(Exception):
    """A command that cannot be carried out. ``message`` is one plain sentence for the team."""

    def __init__(self, message: str, code: str = "invalid") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


Kind = Literal["slice", "enum", "enum_list", "int", "bool"]

# Named absolute slice positions.
SLICE_NAMES = {
    "middle": "middle", "center": "middle", "centre": "middle", "mid": "middle",
    "max": "max", "maximum": "max", "last": "max", "top": "max", "end": "max",
    "min": "min", "minimum": "min", "first": "min", "bottom": "min", "start": "min",
}
_REL_RE = re.compile(r"^\s*([+-])\s*(\d+)\s*$")
_ABS_RE = re.compile(r"^\s*(\d+)\s*$")


@dataclass(frozen=True)
class SliceValue:
    """A slice target: absolute index, relative step, or a named position."""

    kind: Literal["abs", "rel", "named"]
    value: int | str

    def resolve(self, current: int, n: int) -> tuple[int, bool]:
        """Target index clamped to [0, n-1]; also says whether clamping happened."""
        if self.kind == "named":
            target = {"middle": n // 2, "max": n - 1, "min": 0}[str(self.value)]
        elif self.kind == "rel":
            target = current + int(self.value)
        else:
            target = int(self.value)
        clamped = min(max(target, 0), n - 1)
        return clamped, clamped != target

    def as_param(self) -> int | str:
        """The trace form (DESIGN §5.3): "+100"/"-30" relative, 120 absolute, "middle"."""
        if self.kind == "rel":
            v = int(self.value)
            return f"+{v}" if v >= 0 else str(v)
        return self.value


def parse_slice(value: Any, name: str) -> SliceValue:
    if isinstance(value, SliceValue):
        return value
    if isinstance(value, bool):
        raise CommandError(f"'{name}' needs a slice number, not {value!r}.")
    if isinstance(value, int):
        return SliceValue("abs", value)
    if isinstance(value, float) and value.is_integer():
        return SliceValue("abs", int(value))
    if isinstance(value, str):
        low = value.strip().lower()
        if low in SLICE_NAMES:
            return SliceValue("named", SLICE_NAMES[low])
        m = _REL_RE.match(low)
        if m:
            step = int(m.group(2))
            return SliceValue("rel", step if m.group(1) == "+" else -step)
        m = _ABS_RE.match(low)
        if m:
            return SliceValue("abs", int(m.group(1)))
    raise CommandError(
        f"'{name}' must be a slice number, a step such as +10 or -30, or middle/max/min; "
        f"got {value!r}."
    )


def _key(value: Any) -> str:
    return re.sub(r"[\s\-]+", "_", str(value).strip().lower())


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    choices: tuple[str, ...] = ()
    required: bool = False
    description: str = ""
    # enum_list only: extra names that expand to several choices (groups, abbreviations).
    aliases: Mapping[str, tuple[str, ...]] | None = None

    def normalise(self, value: Any) -> Any:
        if self.kind == "slice":
            return parse_slice(value, self.name)
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise CommandError(f"'{self.name}' must be a whole number, not {value!r}.")
            try:
                return int(value)
            except ValueError:
                raise CommandError(f"'{self.name}' must be a whole number, not {value!r}.") from None
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise CommandError(f"'{self.name}' must be true or false, not {value!r}.")
        if self.kind == "enum":
            k = _key(value)
            if self.aliases and k in self.aliases and len(self.aliases[k]) == 1:
                k = self.aliases[k][0]
            if k not in self.choices and not (self.aliases and k in self.aliases):
                raise CommandError(
                    f"'{value}' is not a valid {self.name.replace('_', ' ')}; "
                    f"choose one of: {', '.join(self.choices)}."
                )
            return k
        # enum_list
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple | set | frozenset):
            raise CommandError(f"'{self.name}' must be a list, not {value!r}.")
        out: list[str] = []
        for item in items:
            k = _key(item)
            expanded = self.aliases.get(k) if self.aliases else None
            if expanded is not None:
                out.extend(expanded)
            elif k in self.choices:
                out.append(k)
            else:
                raise CommandError(
                    f"'{item}' is not a known {self.name.rstrip('s').replace('_', ' ')}; "
                    f"known: {', '.join(self.choices)}."
                )
        return tuple(dict.fromkeys(out))  # de-duplicate, keep order


def validate_params(action_id: str, schema: tuple[Param, ...], params: Mapping[str, Any] | None
                    ) -> dict[str, Any]:
    """Check names, presence and types; returns normalised values. Unknown names are errors."""
    params = dict(params or {})
    by_name = {p.name: p for p in schema}
    unknown = [k for k in params if k not in by_name]
    if unknown:
        known = ", ".join(by_name) or "none"
        raise CommandError(
            f"{action_id} has no parameter {', '.join(repr(u) for u in unknown)} "
            f"(its parameters: {known})."
        )
    for p in schema:
        if p.required and params.get(p.name) is None:
            raise CommandError(f"{action_id} needs the parameter '{p.name}'.")
    # in the order given: "coronal 12, axial 100" in the zoom view makes the axial main
    return {k: by_name[k].normalise(v) for k, v in params.items() if v is not None}
