"""The per-command view of accuracy (DESIGN §5.4): each command judged from the state the
console actually had, next to the session view (the state matches the story). Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any


def canon(value: Any) -> Any:
    """Comparison form: dict keys recursed, lists sorted (DESIGN §5.1: lists are sets)."""
    if isinstance(value, dict):
        return {str(k): canon(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [canon(v) for v in value]
        try:
            return sorted(items)
        except TypeError:  # mixed types (None among strings): a stable textual order
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    return value


def merge_expect(story: dict[str, Any], expect: dict[str, Any]) -> dict[str, Any]:
    """``story`` with the partial ``expect`` laid over it: the state a session with every
    command right so far would have (the basis of the per-command view)."""
    out = dict(story)
    for k, v in expect.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge_expect(out[k], v)
        else:
            out[k] = v
    return out


def per_command_expect(expect: dict[str, Any], story_before: dict[str, Any],
                       actual_before: dict[str, Any]) -> dict[str, Any]:
    """``expect`` re-based on the console's own state before the command (DESIGN §5.4, the
    per-command view): what the command should have done, read off the difference between
    the story's states before and after it, applied to the state the console actually had.

    A slice position or zoom level that the story moved by d moves by d from where the
    console was (clamped to the volume); a structure or field list that the story only
    extended (or only shrank) gets the same additions (removals) on the console's own list.
    Everything else (modes, views, visibility, a list replaced outright) is absolute. The
    command is right per command when its state matches ``expect`` or this re-based one:
    an absolute move lands on ``expect`` whatever the state before (each value is judged on
    its own: see ``either_match``)."""
    def rebase(e: Any, p: Any, a: Any, path: tuple[str, ...]) -> Any:
        if isinstance(e, dict):
            pd = p if isinstance(p, dict) else {}
            ad = a if isinstance(a, dict) else {}
            return {k: rebase(v, pd.get(k), ad.get(k), (*path, str(k))) for k, v in e.items()}
        num = (int, float)
        if (isinstance(e, num) and isinstance(p, num) and isinstance(a, num)
                and not any(isinstance(x, bool) for x in (e, p, a))):
            if path[:2] == ("iv", "pos") and len(path) == 3:
                size = ((actual_before.get("iv") or {}).get("size") or {}).get(path[2])
                hi = size - 1 if isinstance(size, int) and size > 0 else None
                v = a + (e - p)
                return max(0, min(hi, v)) if hi is not None else max(0, v)
            if path == ("ar", "zoom_level"):
                return max(0, a + (e - p))
            return e
        if isinstance(e, list) and isinstance(p, list) and isinstance(a, list):
            try:
                es, ps, as_ = set(e), set(p), set(a)
            except TypeError:
                return e
            if es >= ps or es <= ps:
                return sorted((as_ | (es - ps)) - (ps - es))
            return e
        return e

    return rebase(expect, story_before, actual_before, ())


def either_match(expect: Any, rebased: Any, got: Any) -> bool:
    """Every leaf of ``got`` equals the absolute (``expect``) or the re-based value: "coronal
    to 250" is absolute while the axial beside it kept the console's own slice."""
    if isinstance(expect, dict):
        return isinstance(got, dict) and all(
            k in got and either_match(v, (rebased or {}).get(k), got[k])
            for k, v in expect.items())
    return canon(got) in (canon(expect), canon(rebased))


__all__ = ["canon", "either_match", "merge_expect", "per_command_expect"]
