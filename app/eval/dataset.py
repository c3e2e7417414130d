"""Load and validate an evaluation dataset (DESIGN §5.4 JSONL plus the team's extensions).

A dataset is one JSON object per line, run in file order with the state carried over. Our
extensions (datasets/README.md) are optional here: ``session`` (a new value starts from the
initial state), ``agents`` (every agent of a cross-agent composite, in spoken order),
``actions`` (the canonical plan) and ``tags``. A dataset written by another hospital may have
none of them: rows without ``session`` belong to the session of the row before them, so a
file without sessions is one long session, as DESIGN §5.4 describes.

Every problem is reported with its line number in plain words, all at once (up to a limit),
because a labelling slip found one error per run wastes an afternoon.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.actions import ACTIONS
from app.core.vocab import AGENTS

STRUCTURES = ("single", "composite")
TYPES = ("explicit", "implicit", "nlq")
EXPRESSIONS = ("baseline", "abbreviation", "paraphrase")
CATEGORY_VALUES: dict[str, tuple[str, ...]] = {
    "structure": STRUCTURES, "type": TYPES, "expression": EXPRESSIONS,
}
# The keys a partial snapshot (`expect`) may hold: DESIGN §5.1. A typo such as "postion" would
# otherwise never be compared and the row would silently pass, so unknown keys are errors.
SNAPSHOT_KEYS: dict[str, tuple[str, ...] | None] = {
    "agent": None,
    "ir": ("visible", "fields"),
    "iv": ("mode", "main", "pos", "size"),
    "ar": ("visible", "structures", "view", "rotation", "zoom_level", "zoom_target"),
}
ACTION_NAMES: dict[str, set[str]] = {}
for _a in ACTIONS:
    ACTION_NAMES.setdefault(_a.agent, set()).add(_a.name)

MAX_REPORTED_ERRORS = 25
log = logging.getLogger(__name__)


class DatasetError(ValueError):
    """The dataset file cannot be used; ``problems`` lists each one with its line number."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        shown = problems[:MAX_REPORTED_ERRORS]
        more = len(problems) - len(shown)
        lines = "\n".join(f"  - {p}" for p in shown)
        tail = f"\n  ... and {more} more" if more > 0 else ""
        super().__init__(f"The dataset {path} has {len(problems)} problem(s):\n{lines}{tail}")


@dataclass(frozen=True)
class Row:
    """One command of the dataset, validated."""

    line: int
    id: str
    text: str
    agent: str | None
    valid: bool
    structure: str
    type: str
    expression: str
    expect: dict[str, Any]
    session: str
    audio: tuple[Path, ...] = ()  # resolved against the dataset file; alternatives in order
    agents: tuple[str, ...] | None = None
    actions: list[dict[str, Any]] | None = None
    tags: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def categories(self) -> dict[str, str]:
        return {"structure": self.structure, "type": self.type, "expression": self.expression}

    def expected_agents(self) -> list[str]:
        """Agents the command should run, in order: [] for invalid commands."""
        if not self.valid:
            return []
        if self.actions is not None:
            return distinct([str(a["agent"]) for a in self.actions])
        if self.agents:
            return list(self.agents)
        return [self.agent] if self.agent else []


@dataclass
class Dataset:
    path: Path
    rows: list[Row]
    # datasets/case.json beside the file, if any: what the dataset assumes about the case.
    case_expectations: dict[str, Any] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def sessions(self) -> list[tuple[str, list[Row]]]:
        """Rows grouped by session, in file order (sessions are contiguous: validated)."""
        out: list[tuple[str, list[Row]]] = []
        for r in self.rows:
            if not out or out[-1][0] != r.session:
                out.append((r.session, []))
            out[-1][1].append(r)
        return out

    def has_audio(self) -> bool:
        return any(r.audio for r in self.rows)


def distinct(items: list[str]) -> list[str]:
    seen: list[str] = []
    for i in items:
        if i not in seen:
            seen.append(i)
    return seen


DEFAULT_SESSION = "default"


def load_dataset(path: Path | str) -> Dataset:
    """Read and validate a dataset JSONL file. Raises DatasetError listing every problem."""
    path = Path(path).expanduser()
    if not path.exists():
        raise DatasetError(path, [f"the file {path} does not exist"])
    if path.is_dir():
        raise DatasetError(path, [f"{path} is a folder; give the .jsonl file itself"])
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DatasetError(path, ["the file is not UTF-8 text (is it really JSONL?)"]) from None
    except OSError as exc:
        raise DatasetError(path, [f"the file cannot be read: {exc.strerror or exc}"]) from None

    problems: list[str] = []
    rows: list[Row] = []
    seen_ids: dict[str, int] = {}
    finished_sessions: set[str] = set()
    session = DEFAULT_SESSION
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue  # blank lines are harmless (an editor's trailing newline)
        where = f"line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{where}: expected a JSON object {{...}}, got {type(obj).__name__}")
            continue
        errs: list[str] = []
        row = _parse_row(obj, n, path.parent, session, errs)
        if row is not None:
            if row.id in seen_ids:
                errs.append(f"id {row.id!r} is already used on line {seen_ids[row.id]}")
            else:
                seen_ids[row.id] = n
            if row.session != session:
                # A session that comes back after another one would be reset twice and start
                # from a fresh state mid-story: refuse instead of judging it wrongly.
                if row.session in finished_sessions:
                    errs.append(f"session {row.session!r} appears again after other sessions; "
                                "keep each session's rows together")
                finished_sessions.add(session)
                session = row.session
        problems.extend(f"{where}: {e}" for e in errs)
        if row is not None and not errs:
            rows.append(row)
    if not problems and not rows:
        problems.append("the file holds no commands")
    if problems:
        raise DatasetError(path, problems)
    return Dataset(path=path, rows=rows, case_expectations=_read_case_json(path.parent))


def parse_row(obj: dict[str, Any], line: int = 1, base: Path | None = None,
              session: str = DEFAULT_SESSION) -> Row:
    """Validate one row given as a dict (tests, tools). Raises DatasetError on a problem."""
    errs: list[str] = []
    row = _parse_row(obj, line, base or Path("."), session, errs)
    if errs or row is None:
        raise DatasetError(Path("<row>"), [f"line {line}: {e}" for e in errs])
    return row


def _read_case_json(folder: Path) -> dict[str, Any] | None:
    p = folder / "case.json"
    if not p.is_file():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # the harness warns about the case; an unreadable note is not fatal
    return data if isinstance(data, dict) else None


def _one_of(obj: dict[str, Any], key: str, allowed: tuple[str, ...], errs: list[str]) -> str:
    v = obj.get(key)
    if key not in obj:
        errs.append(f"missing {key!r} (one of {', '.join(allowed)})")
    elif v not in allowed:
        errs.append(f"{key!r} must be one of {', '.join(allowed)} (got {v!r})")
    return v if isinstance(v, str) else ""


def _parse_row(obj: dict[str, Any], n: int, base: Path, session: str,
               errs: list[str]) -> Row | None:
    rid = obj.get("id")
    if "id" not in obj:
        errs.append("missing 'id'")
    elif not isinstance(rid, (str, int)) or isinstance(rid, bool) or str(rid).strip() == "":
        errs.append(f"'id' must be a non-empty string (got {rid!r})")
    text = obj.get("text")
    if "text" not in obj:
        errs.append("missing 'text' (use \"\" for a silent input)")
    elif not isinstance(text, str):
        errs.append(f"'text' must be a string (got {type(text).__name__})")
    valid = obj.get("valid")
    if "valid" not in obj:
        errs.append("missing 'valid' (true or false)")
    elif not isinstance(valid, bool):
        errs.append(f"'valid' must be true or false (got {valid!r})")
    agent = obj.get("agent")
    if "agent" not in obj:
        errs.append("missing 'agent' (\"IR\", \"IV\", \"AR\" or null)")
    elif agent is not None and agent not in AGENTS:
        errs.append(f"'agent' must be one of {', '.join(AGENTS)} or null (got {agent!r})")
    elif valid is False and agent is not None:
        errs.append(f"an invalid command (valid: false) must have agent null (got {agent!r})")
    elif valid is True and agent is None:
        errs.append("a valid command needs its 'agent' (IR, IV or AR)")
    structure = _one_of(obj, "structure", STRUCTURES, errs)
    typ = _one_of(obj, "type", TYPES, errs)
    expression = _one_of(obj, "expression", EXPRESSIONS, errs)
    expect = obj.get("expect")
    if "expect" not in obj:
        errs.append("missing 'expect' (the partial state after the command; "
                    "datasets/build_dataset.py --fill computes it)")
    elif not isinstance(expect, dict):
        errs.append(f"'expect' must be an object (got {type(expect).__name__})")
    else:
        _check_expect(expect, errs)

    sess = obj.get("session", session)
    if not isinstance(sess, (str, int)) or isinstance(sess, bool) or str(sess).strip() == "":
        errs.append(f"'session' must be a non-empty string (got {sess!r})")
        sess = session

    audio: tuple[Path, ...] = ()
    if obj.get("audio") is not None:
        a = obj["audio"]
        items = [a] if isinstance(a, str) else a
        if not isinstance(items, list) or not items or not all(
                isinstance(x, str) and x.strip() for x in items):
            errs.append("'audio' must be a file path or a non-empty list of file paths")
        else:
            # Relative to the dataset file, so a dataset folder can be moved as a whole.
            audio = tuple((base / x).expanduser() if not Path(x).is_absolute() else Path(x)
                          for x in items)

    agents: tuple[str, ...] | None = None
    if obj.get("agents") is not None:
        ag = obj["agents"]
        if not isinstance(ag, list) or not ag or any(x not in AGENTS for x in ag):
            log.info("dataset line %d: 'agents' is not a list of IR/IV/AR: ignored", n)
        else:
            agents = tuple(ag)
            if agent is not None and ag[0] != agent:
                errs.append(f"'agents' must start with the row's agent {agent!r} (got {ag[0]!r})")

    actions: list[dict[str, Any]] | None = None
    notes: list[str] = []
    if "actions" in obj:
        actions = _check_actions(obj["actions"], valid, notes)

    tags: tuple[str, ...] = ()
    if obj.get("tags") is not None:
        t = obj["tags"]
        if isinstance(t, list) and all(isinstance(x, str) for x in t):
            tags = tuple(t)
        else:
            notes.append("'tags' is not a list of strings: ignored")
    for note in notes:
        log.info("dataset line %d: %s", n, note)

    if errs:
        return None
    return Row(line=n, id=str(rid), text=str(text), agent=agent, valid=bool(valid),
               structure=structure, type=typ, expression=expression, expect=dict(expect or {}),
               session=str(sess), audio=audio, agents=agents, actions=actions, tags=tags,
               raw=obj)


def _check_expect(expect: dict[str, Any], errs: list[str]) -> None:
    for key, value in expect.items():
        if key not in SNAPSHOT_KEYS:
            errs.append(f"'expect' has an unknown key {key!r} "
                        f"(allowed: {', '.join(SNAPSHOT_KEYS)})")
            continue
        sub = SNAPSHOT_KEYS[key]
        if sub is None:
            if value is not None and value not in AGENTS:
                errs.append(f"'expect.agent' must be IR, IV, AR or null (got {value!r})")
            continue
        if not isinstance(value, dict):
            errs.append(f"'expect.{key}' must be an object (got {type(value).__name__})")
            continue
        for k in value:
            if k not in sub:
                errs.append(f"'expect.{key}' has an unknown key {k!r} (allowed: {', '.join(sub)})")


def _check_actions(acts: Any, valid: Any, notes: list[str]) -> list[dict[str, Any]] | None:
    """Our canonical plan, when ``actions`` has our shape; otherwise None (DESIGN §5.4: keys
    a tool does not recognise are ignored — other tools write gold action lists of their own
    shape under the same name). Why it was ignored goes to ``notes``, never to the errors."""
    if not isinstance(acts, list):
        notes.append("'actions' is not a list of {agent, action, params}: ignored")
        return None
    out: list[dict[str, Any]] = []
    for i, a in enumerate(acts, 1):
        ag = a.get("agent") if isinstance(a, dict) else None
        name = a.get("action") if isinstance(a, dict) else None
        params = a.get("params", {}) if isinstance(a, dict) else None
        if ag not in ACTION_NAMES or name not in ACTION_NAMES[ag] or not isinstance(params, dict):
            notes.append(f"'actions' item {i} is not one of our actions: the plan is ignored")
            return None
        out.append({"agent": ag, "action": name, "params": params})
    if valid is False and out:
        notes.append("an invalid command lists actions: the plan is ignored")
        return None
    return out


__all__ = [
    "CATEGORY_VALUES", "DEFAULT_SESSION", "Dataset", "DatasetError", "EXPRESSIONS",
    "Row", "STRUCTURES", "TYPES", "distinct", "load_dataset", "parse_row",
]
