"""Structured logging: one JSON object per line to a log file, readable text to stderr."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from platformdirs import user_log_dir

from app.runtime.settings import settings


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(record.created))
            + f".{int(record.msecs):03d}",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        extra = getattr(record, "data", None)
        if isinstance(extra, dict):
            data.update(extra)
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str)


def log_dir() -> Path:
    return settings().log_dir or Path(user_log_dir("visa-console"))


def setup_logging(level: int = logging.INFO) -> None:
    root = logging.getLogger()
    if getattr(root, "_visa_configured", False):
        return
    root.setLevel(level)
    err = logging.StreamHandler()
    err.setLevel(logging.WARNING)
    err.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(err)
    try:
        d = log_dir()
        d.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(d / "visa-console.jsonl", encoding="utf-8")
        fh.setFormatter(JsonFormatter())
        root.addHandler(fh)
    except OSError as exc:  # a read-only home must not stop the console
        root.warning("cannot write the log file: %s", exc)
    root._visa_configured = True  # type: ignore[attr-defined]
