"""One settings object (app/runtime/settings.py): every VISA_* variable declared once, read
from the environment on each call, a bad value named in plain words, secrets masked."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from app.runtime.settings import VARIABLES, describe, settings

ROOT = Path(__file__).resolve().parents[1]


def test_unset_variables_are_none_and_paths_are_expanded() -> None:
    s = settings({"VISA_CACHE_DIR": "~/cache", "VISA_LLM_THREADS": "3"})
    assert s.cache_dir == Path("~/cache").expanduser() and s.llm_threads == 3
    assert s.log_dir is None and s.tiers is None


def test_an_empty_tier_list_means_no_optional_tier() -> None:
    assert settings({"VISA_TIERS": ""}).tiers == ""
    assert settings({}).tiers is None


def test_a_bad_number_is_named_in_plain_words_and_left_to_its_default() -> None:
    s = settings({"VISA_LLM_THREADS": "two", "VISA_LOG_DIR": "/tmp/logs"})
    assert s.llm_threads is None and s.log_dir == Path("/tmp/logs")
    assert s.problems == ("VISA_LLM_THREADS must be a whole number, not 'two': the default "
                          "is used",)


def test_the_api_key_is_masked_when_described() -> None:
    rows = {n: v for n, v, _ in describe({"VISA_LLM_API_KEY": "s3cret"})}
    assert rows["VISA_LLM_API_KEY"] == "********" and "s3cret" not in str(rows)


def test_no_module_reads_a_visa_variable_but_the_settings() -> None:
    declared = {v.name for v in VARIABLES}
    readers = []
    for path in (ROOT / "app").rglob("*.py"):
        if path.name == "settings.py":
            continue
        for name in re.findall(r"environ(?:\.get)?\(\s*\"(VISA_[A-Z_]+)\"|getenv\(\"(VISA_\w+)",
                               path.read_text(encoding="utf-8")):
            readers.append((path.name, name))
    assert readers == [], readers
    assert "VISA_LANGUAGE_DIR" in declared


def test_the_settings_command_lists_every_variable(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "app.cli", "settings"], cwd=ROOT, text=True,
                         capture_output=True, env={"PATH": "/usr/bin:/bin",
                                                   "VISA_LOG_DIR": str(tmp_path),
                                                   "VISA_LLM_API_KEY": "k"}, check=True)
    for v in VARIABLES:
        assert v.name in out.stdout
    assert str(tmp_path) in out.stdout and " k\n" not in out.stdout


def test_the_llm_deadline_is_a_positive_number_of_seconds() -> None:
    assert settings({"VISA_LLM_TIMEOUT_S": "90"}).llm_timeout_s == 90.0
    bad = settings({"VISA_LLM_TIMEOUT_S": "-1"})
    assert bad.llm_timeout_s is None and "positive number of seconds" in bad.problems[0]


def test_the_interpreter_takes_the_llm_deadline_from_the_settings(monkeypatch) -> None:
    from app.agents.factory import InterpreterConfig

    monkeypatch.setenv("VISA_LLM_TIMEOUT_S", "45")
    assert InterpreterConfig.from_env().llm_timeout_s == 45.0
    monkeypatch.delenv("VISA_LLM_TIMEOUT_S")
    assert InterpreterConfig.from_env().llm_timeout_s == 12.0
