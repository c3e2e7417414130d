"""The headless console (DESIGN §2): the one composition root. The window, the CLI (`do`,
`eval`), the voice runs and the tests build the console through ``build_console``."""

from app.session.console import HeadlessConsole, build_console, case_context

__all__ = ["HeadlessConsole", "build_console", "case_context"]
