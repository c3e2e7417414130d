"""The console's settings from the environment, in one place (DESIGN §2 app/runtime).

Every ``VISA_*`` variable the console reads is declared here with what it does; the layers
ask :func:`settings` instead of reading the environment themselves, and ``visa-console
settings`` prints the effective values (secrets masked) for the hospital's IT department.
The environment is read on each call, so a test or an operator changing it is seen at once.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Variable:
    name: str
    field: str
    help: str
    secret: bool = False


VARIABLES: tuple[Variable, ...] = (
    Variable("VISA_CACHE_DIR", "cache_dir", "where embeddings, meshes and the LLM prefix cache "
             "are kept (default: the user cache folder)"),
    Variable("VISA_LOG_DIR", "log_dir", "where the structured logs and traces are written"),
    Variable("VISA_LANGUAGE_DIR", "language_dir", "a folder with the hospital's own language "
             "files (words.toml, phrases.toml, exemplars.toml, out_of_scope.toml)"),
    Variable("VISA_DATA_DIR", "data_dir", "where the demo case is built"),
    Variable("VISA_MODELS_DIR", "models_dir", "a folder of model files used before the "
             "installed packages"),
    Variable("VISA_MODELS_MANIFEST", "models_manifest", "another model manifest (TOML)"),
    Variable("VISA_TIERS", "tiers", "the interpreter tiers after the grammar: "
             "'semantic,llm' (default), 'llm', 'semantic' or 'none'"),
    Variable("VISA_LLM_URL", "llm_url", "an OpenAI-compatible LLM server to use instead of "
             "the local model"),
    Variable("VISA_LLM_MODEL", "llm_model", "the model name to ask that server for"),
    Variable("VISA_LLM_API_KEY", "llm_api_key", "the key for that server", secret=True),
    Variable("VISA_LLM_MODEL_ID", "llm_model_id", "the local LLM's model id in the manifest"),
    Variable("VISA_LLM_THREADS", "llm_threads", "CPU threads for the local LLM (default 2)"),
    Variable("VISA_LLM_TIMEOUT_S", "llm_timeout_s", "seconds the LLM tier may take before the "
             "console asks instead (default 12; `visa-console eval` uses 120 so that its "
             "figures do not depend on how busy the machine is)"),
    Variable("VISA_VTK_WINDOW", "vtk_window", "the VTK render window class (e.g. "
             "vtkEGLRenderWindow, vtkOSOpenGLRenderWindow)"),
    Variable("VISA_AUDIO_CACHE", "audio_cache", "where synthesised evaluation audio is kept"),
)


@dataclass(frozen=True)
class Settings:
    cache_dir: Path | None = None
    log_dir: Path | None = None
    language_dir: Path | None = None
    data_dir: Path | None = None
    models_dir: Path | None = None
    models_manifest: Path | None = None
    tiers: str | None = None
    llm_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_model_id: str | None = None
    llm_threads: int | None = None
    llm_timeout_s: float | None = None
    vtk_window: str | None = None
    audio_cache: Path | None = None
    # Variables whose value cannot be used, in plain words: each is left unset (its default
    # applies) so that one mistyped variable never stops the console.
    problems: tuple[str, ...] = ()


_TYPES = {f.name: f.type for f in fields(Settings)}


_WARNED: set[str] = set()


def settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The effective settings (unset, empty or unusable variables are None)."""
    env = os.environ if environ is None else environ
    values: dict[str, object] = {}
    problems: list[str] = []
    for v in VARIABLES:
        raw = (env.get(v.name) or "").strip()
        if not raw:
            if v.name in env and v.field == "tiers":
                values["tiers"] = ""  # set but empty: no optional tier
            continue
        kind = _TYPES[v.field]
        if "Path" in kind:
            values[v.field] = Path(raw).expanduser()
        elif "int" in kind:
            try:
                values[v.field] = int(raw)
            except ValueError:
                problems.append(f"{v.name} must be a whole number, not {raw!r}: the default "
                                "is used")
        elif "float" in kind:
            try:
                values[v.field] = float(raw)
                if not values[v.field] > 0:  # type: ignore[operator]
                    raise ValueError(raw)
            except ValueError:
                values.pop(v.field, None)
                problems.append(f"{v.name} must be a positive number of seconds, not {raw!r}: "
                                "the default is used")
        else:
            values[v.field] = raw
    for msg in problems:
        if msg not in _WARNED:  # said once per process, not on every call
            _WARNED.add(msg)
            log.warning("%s", msg)
    return Settings(**values, problems=tuple(problems))  # type: ignore[arg-type]


def describe(environ: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
    """(variable, effective value or "(unset)", what it does) for every setting."""
    s = settings(environ)
    out = []
    for v in VARIABLES:
        value = getattr(s, v.field)
        shown = "(unset)" if value is None else "********" if v.secret else str(value)
        out.append((v.name, shown, v.help))
    return out


def run_settings_command(as_json: bool = False) -> int:
    """``visa-console settings``: every variable, its effective value and what it does."""
    import json

    rows = describe()
    problems = settings().problems
    if as_json:
        print(json.dumps({"settings": [{"variable": n, "value": v, "help": h}
                                       for n, v, h in rows], "problems": list(problems)},
                         indent=2))
        return 2 if problems else 0
    width = max(len(n) for n, _, _ in rows)
    for name, value, help_text in rows:
        print(f"{name:<{width}}  {value}\n{'':<{width}}  {help_text}")
    for msg in problems:
        print(f"problem: {msg}", file=sys.stderr)
    return 2 if problems else 0


__all__ = ["VARIABLES", "Settings", "describe", "run_settings_command", "settings"]
