"""README screenshots of the real console window in a few representative states.

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python -m app.ui.screenshots docs/screenshots

Runs the same :class:`~app.ui.main.MainWindow` as ``visa-console`` on the built-in demo case,
drives it with typed commands (through the orchestrator, as a user would; the trace pane shows
them) and touch-panel tabs, waits until the video and every overlay are drawn, and saves each
window grab as a PNG kept under ``--max-kb`` (downscaled and palette-quantised when needed).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtWidgets import QApplication

from app.ui.main import MainWindow, apply_dark_theme, console_ready

# name: (typed commands, touch-panel tab, a pause for animations to end)
STATES: dict[str, tuple[tuple[str, ...], int, float]] = {
    "console": (("show sex age diagnosis tumor location and pft", "show the ct",
                 "show the 3d model"), 0, 0.0),
    "console_ct_zoom": (("zoom in on coronal", "show all patient info"), 1, 4.5),
    "console_3d_zoom": (("remove the ct", "hide the patient info",
                         "zoom in on the nodule", "anterior view"), 2, 3.5),
}


def _pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.005)


def _wait(app: QApplication, window: MainWindow, timeout: float = 120.0) -> bool:
    end = time.monotonic() + timeout
    settled = None
    while time.monotonic() < end:
        _pump(app, 0.05)
        if console_ready(window):
            settled = settled or time.monotonic()
            if time.monotonic() - settled > 0.4:
                return True
        else:
            settled = None
    return False


def save_png(window: MainWindow, path: Path, max_kb: int) -> int:
    """Grab the window; write it as PNG under ``max_kb`` (quantised if needed). Returns bytes."""
    from PIL import Image

    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    window.grab().save(buf, "PNG")
    img = Image.open(io.BytesIO(bytes(buf.data()))).convert("RGB")
    candidates = [
        lambda im: im,
        lambda im: im.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE),
        lambda im: im.resize((round(im.width * 0.8), round(im.height * 0.8)),
                             Image.Resampling.LANCZOS).quantize(
                                 colors=256, method=Image.Quantize.FASTOCTREE,
                                 dither=Image.Dither.NONE),
    ]
    data = b""
    for make in candidates:
        out = io.BytesIO()
        make(img).save(out, "PNG", optimize=True)
        data = out.getvalue()
        if len(data) <= max_kb * 1024:
            break
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return len(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder for the PNGs")
    ap.add_argument("--size", type=int, nargs=2, default=(1600, 900), help="window size")
    ap.add_argument("--max-kb", type=int, default=380)
    ap.add_argument("--only", nargs="*", help="state names to shoot")
    args = ap.parse_args(argv)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    apply_dark_theme(app)
    window = MainWindow(mode="text")
    window.resize(*args.size)
    window.show()
    window.load_case(None)
    if not _wait(app, window):
        print("the console did not become ready", file=sys.stderr)
        return 1
    for name, (commands, tab, pause) in STATES.items():
        for text in commands:
            window.submit_text(text)
            _pump(app, 0.05)
        window.touch.tabs.setCurrentIndex(tab)
        _pump(app, pause)
        if not _wait(app, window):
            print(f"{name}: not ready, shot anyway", file=sys.stderr)
        if args.only and name not in args.only:
            continue
        window.render_now()
        _pump(app, 0.1)
        size = save_png(window, args.out / f"{name}.png", args.max_kb)
        print(f"{args.out / f'{name}.png'}: {size // 1024} KB")
    window.shutdown()
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
