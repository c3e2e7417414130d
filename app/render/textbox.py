"""The IR patient-information box and the shared text helpers (Pillow, no Qt).

``render_text_box`` turns the (header, value) lines of ``app.data.clinical.format_ir_lines``
into a semi-transparent dark rounded RGBA panel. Sizes are given for a 1080p frame and scaled by
``scale`` (= frame height / 1080), so values are 24 px tall on a 1080p monitor: readable at arm's
length from the console. Results are cached by content.
"""

from __future__ import annotations

import importlib.util
import math
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

# Colours (RGB) chosen for contrast over bright, red endoscope video.
PANEL_RGBA = (12, 14, 20, 210)
PANEL_OUTLINE_RGBA = (255, 255, 255, 70)
TITLE_RGB = (120, 200, 255)
HEADER_RGB = (170, 185, 205)
VALUE_RGB = (248, 248, 248)

# Pixel sizes at 1080p (multiplied by ``scale``).
TITLE_PX, HEADER_PX, VALUE_PX = 22, 19, 24
MIN_PX = 9


def _font_candidates(bold: bool) -> list[Path]:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    paths = [Path("/usr/share/fonts/truetype/dejavu") / name]
    for root in (Path("/usr/share/fonts"), Path("/usr/local/share/fonts")):
        if root.is_dir():
            paths.extend(sorted(root.rglob(name)))
    # matplotlib ships DejaVu; look for it without importing matplotlib (slow).
    spec = importlib.util.find_spec("matplotlib")
    if spec and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            paths.append(Path(loc) / "mpl-data" / "fonts" / "ttf" / name)
    return paths


@lru_cache(maxsize=2)
def font_path(bold: bool = False) -> str | None:
    """Path of DejaVu Sans (bold or regular), or None to fall back to Pillow's default font."""
    return next((str(p) for p in _font_candidates(bold) if p.is_file()), None)


@lru_cache(maxsize=64)
def load_font(px: int, bold: bool = False) -> Font:
    px = max(MIN_PX, int(px))
    path = font_path(bold)
    if path is not None:
        return ImageFont.truetype(path, px)
    return ImageFont.load_default(size=px)


def _line_height(font: Font) -> int:
    ascent, descent = font.getmetrics()  # type: ignore[union-attr]
    return int(ascent + descent)


@lru_cache(maxsize=1024)
def text_sprite(text: str, px: int, rgb: tuple[int, int, int], bold: bool = False,
                stroke: int = 0) -> np.ndarray:
    """One line of text as a tight RGBA sprite (read-only, cached).

    The height is the font's ascent + descent (+ stroke), not the ink box, so sprites of
    different strings at the same size share a baseline. ``stroke`` adds a black outline that
    keeps letters readable over any image.
    """
    font = load_font(px, bold)
    x0, _, x1, _ = font.getbbox(text, anchor="la", stroke_width=stroke)
    w = max(1, int(x1 - min(0, x0)) + stroke)
    h = _line_height(font) + 2 * stroke
    img = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    ImageDraw.Draw(img).text((stroke - min(0, x0), stroke), text, font=font, anchor="la",
                             fill=(*rgb, 255), stroke_width=stroke, stroke_fill=(0, 0, 0, 255))
    arr = np.asarray(img).copy()
    arr.flags.writeable = False
    return arr


SEP = " \u00b7 "  # the item separator of format_ir_lines ("165 cm · 62 kg · BMI 22.8")


def wrap_text(text: str, font: Font, max_w: float) -> list[str]:
    """Greedy word wrap to ``max_w`` pixels; words longer than a line are cut."""
    lines: list[str] = []
    for para in str(text).split("\n"):
        # "165 cm · 62 kg · BMI 22.8": break between the items, never inside "BMI 22.8".
        items = para.split(SEP)
        if len(items) > 1 and all(font.getlength(it) <= max_w for it in items):
            line = ""
            for it in items:
                cand = f"{line}{SEP}{it}" if line else it
                if line and font.getlength(cand) > max_w:
                    lines.append(line)
                    cand = it
                line = cand
            lines.append(line)
            continue
        line = ""
        for word in para.split(" "):
            cand = f"{line} {word}" if line else word
            if font.getlength(cand) <= max_w:
                line = cand
                continue
            if line:
                lines.append(line)
            while len(word) > 1 and font.getlength(word) > max_w:
                k = len(word) - 1
                while k > 1 and font.getlength(word[:k]) > max_w:
                    k -= 1
                lines.append(word[:k])
                word = word[k:]
            line = word
        lines.append(line)
    return lines


_CACHE: OrderedDict[tuple, np.ndarray] = OrderedDict()
_CACHE_SIZE = 32


def render_text_box(lines: list[tuple[str, str]], width_px: int, scale: float = 1.0,
                    title: str | None = "Patient") -> np.ndarray:
    """The IR box as RGBA uint8 of width ``width_px`` and the tight height its text needs.

    Headers (muted, left column) sit beside their values (bright, bold, wrapped); a narrow box
    stacks each header above its value instead. The returned array is shared by the cache:
    treat it as read-only.
    """
    key = (tuple((str(h), str(v)) for h, v in lines), int(width_px), round(float(scale), 4),
           title)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    arr = _render_text_box(list(key[0]), int(width_px), float(scale), title)
    arr.flags.writeable = False
    _CACHE[key] = arr
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return arr


def _render_text_box(lines: list[tuple[str, str]], width: int, scale: float,
                     title: str | None) -> np.ndarray:
    s = max(scale, 0.1)
    pad = max(4, round(16 * s))
    row_gap = max(2, round(8 * s))
    col_gap = max(4, round(14 * s))
    f_title = load_font(round(TITLE_PX * s), bold=True)
    f_head = load_font(round(HEADER_PX * s))
    f_val = load_font(round(VALUE_PX * s), bold=True)
    lh_t, lh_h, lh_v = _line_height(f_title), _line_height(f_head), _line_height(f_val)
    inner = max(1, width - 2 * pad)

    # Header column as wide as the widest header, but never more than 40% of the box.
    head_w = max((f_head.getlength(h) for h, _ in lines), default=0.0)
    head_col = math.ceil(min(head_w, 0.40 * inner))
    stacked = inner - head_col - col_gap < 6 * lh_v  # too narrow for two columns
    val_x = pad if stacked else pad + head_col + col_gap
    val_w = inner if stacked else inner - head_col - col_gap

    # Layout pass: (x, y, text, font, rgb) for every text line, and the total height.
    items: list[tuple[int, int, str, Font, tuple[int, int, int]]] = []
    y = pad
    sep_y = None
    if title:
        for t in wrap_text(title, f_title, inner):
            items.append((pad, y, t, f_title, TITLE_RGB))
            y += lh_t
        sep_y = y + row_gap // 2
        y += row_gap
    asc_h, asc_v = f_head.getmetrics()[0], f_val.getmetrics()[0]  # type: ignore[union-attr]
    for i, (head, value) in enumerate(lines):
        if i or title:
            y += row_gap
        h_lines = wrap_text(head, f_head, inner if stacked else head_col) if head else []
        v_lines = wrap_text(value, f_val, val_w)
        if stacked:
            for t in h_lines:
                items.append((pad, y, t, f_head, HEADER_RGB))
                y += lh_h
            for t in v_lines:
                items.append((val_x, y, t, f_val, VALUE_RGB))
                y += lh_v
        else:
            # Align the first header line's baseline with the first value line's.
            dy = max(0, asc_v - asc_h)
            for k, t in enumerate(h_lines):
                items.append((pad, y + dy + k * lh_h, t, f_head, HEADER_RGB))
            for k, t in enumerate(v_lines):
                items.append((val_x, y + k * lh_v, t, f_val, VALUE_RGB))
            y += max(dy + len(h_lines) * lh_h, len(v_lines) * lh_v)
    height = y + pad

    panel = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(panel)
    draw.rounded_rectangle((0, 0, width - 1, height - 1), radius=max(2, round(12 * s)),
                           fill=PANEL_RGBA, outline=PANEL_OUTLINE_RGBA,
                           width=max(1, round(1.5 * s)))
    text = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    tdraw = ImageDraw.Draw(text)
    if sep_y is not None:
        tdraw.line((pad, sep_y, width - pad, sep_y), fill=(*TITLE_RGB, 110),
                   width=max(1, round(s)))
    for x, yy, t, font, rgb in items:
        tdraw.text((x, yy), t, font=font, fill=(*rgb, 255), anchor="la")
    return np.asarray(Image.alpha_composite(panel, text)).copy()


def clear_cache() -> None:
    _CACHE.clear()


__all__ = ["load_font", "render_text_box", "text_sprite", "wrap_text"]
