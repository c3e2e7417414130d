"""Multi-planar CT views (IV): slices in display orientation, window/level, orientation letters,
slice readout and crosshair, as RGBA layers for the compositor (no Qt).

Display conventions (radiological, ARCHITECTURE "CT orientation"), on the canonical volume
``data[a, c, s]``:
- axial ``data[a]``: rows = coronal (anterior at the top), cols = sagittal (patient right on
  screen left);
- coronal ``data[:, c]``: rows = axial (head at the top), cols = sagittal;
- sagittal ``data[:, :, s]``: rows = axial (head at the top), cols = coronal (anterior on the
  left).
Orientation letters are computed from the affine, never assumed, so oblique or flipped
geometry is labelled truthfully.

Plane colours (border, readout and that plane's crosshair line in the other views):
axial yellow, coronal green, sagittal cyan.

Not thread-safe: use one ``MPRSlicer`` from one render thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import cv2
import numpy as np

from app.data.volume import Volume
from app.render.layout import Rect
from app.render.textbox import text_sprite

PLANES = ("axial", "coronal", "sagittal")
PLANE_SHORT = {"axial": "AX", "coronal": "COR", "sagittal": "SAG"}
PLANE_COLORS: dict[str, tuple[int, int, int]] = {  # RGB
    "axial": (255, 214, 0),
    "coronal": (40, 225, 100),
    "sagittal": (0, 200, 255),
}
DEFAULT_WINDOW = (1500.0, -600.0)  # (width, level) HU: lung (DESIGN §1)

BG_RGB = (8, 10, 14)
BG_ALPHA = 190  # semi-transparent: the video stays faintly visible around the image
LETTER_RGB = (240, 240, 240)
TEXT_RGB = (225, 228, 235)

# (plane axis, row axis, rows flipped, col axis, cols flipped) in canonical index space.
_GEOM: dict[str, tuple[int, int, bool, int, bool]] = {
    "axial": (0, 1, True, 2, False),
    "coronal": (1, 0, True, 2, False),
    "sagittal": (2, 0, True, 1, True),
}
_LPS_LETTERS = (("R", "L"), ("A", "P"), ("I", "S"))  # (negative, positive) along LPS x, y, z
_LPS_AXIS_NAMES = "xyz"


def _minus(text: str) -> str:
    return text.replace("-", "\u2212")  # a real minus sign reads better than a hyphen


def _letter(vec: np.ndarray) -> str:
    k = int(np.argmax(np.abs(vec)))
    return _LPS_LETTERS[k][1 if vec[k] > 0 else 0]


class MPRSlicer:
    """Slices and renders the three planes of one :class:`Volume`."""

    def __init__(self, volume: Volume) -> None:
        self.volume = volume
        self._data = volume.data
        self._shape = volume.shape
        self._affine = np.asarray(volume.affine, dtype=float)
        self._spacing = volume.spacing
        # Per (plane, size, title): the last windowed image, reused when only the crosshair
        # changes (the other planes animating).
        self._gray_cache: dict[tuple, tuple[tuple, np.ndarray]] = {}
        self._bg_cache: dict[tuple, np.ndarray] = {}

    # -- geometry -----------------------------------------------------------------------
    def n(self, plane: str) -> int:
        return self._shape[_GEOM[plane][0]]

    def display_shape(self, plane: str) -> tuple[int, int]:
        _, ra, _, ca, _ = _GEOM[plane]
        return self._shape[ra], self._shape[ca]

    def physical_size(self, plane: str) -> tuple[float, float]:
        """(height, width) of the slice in mm: voxel counts times spacing."""
        _, ra, _, ca, _ = _GEOM[plane]
        return self._shape[ra] * self._spacing[ra], self._shape[ca] * self._spacing[ca]

    def screen_directions(self, plane: str) -> tuple[np.ndarray, np.ndarray]:
        """Unit LPS vectors of screen right and screen down for ``plane``."""
        _, ra, rflip, ca, cflip = _GEOM[plane]
        m = self._affine[:3, :3]
        right = m[:, ca] * (-1.0 if cflip else 1.0)
        down = m[:, ra] * (-1.0 if rflip else 1.0)
        return right / np.linalg.norm(right), down / np.linalg.norm(down)

    def orientation_labels(self, plane: str) -> dict[str, str]:
        """Letters (R/L/A/P/S/I) for the screen edges: the dominant LPS axis of each direction."""
        right, down = self.screen_directions(plane)
        return {"top": _letter(-down), "bottom": _letter(down),
                "left": _letter(-right), "right": _letter(right)}

    def slice_position_mm(self, plane: str, index: float) -> tuple[str, float]:
        """(LPS axis name, mm) of the slice centre along the LPS axis closest to the normal."""
        axis = _GEOM[plane][0]
        normal = self._affine[:3, axis]
        k = int(np.argmax(np.abs(normal)))
        ijk = np.array([(n - 1) / 2.0 for n in self._shape])
        ijk[axis] = index
        lps = self._affine[:3, :3] @ ijk + self._affine[:3, 3]
        return _LPS_AXIS_NAMES[k], float(lps[k])

    def readout(self, plane: str, index: float, target: float | None = None) -> str:
        """``"AX 32/64 · z −123.5 mm"``: 0-based slice (as in the state snapshot), count, mm."""
        i = int(round(self._clamp(plane, index)))
        name, mm = self.slice_position_mm(plane, i)
        where = f"{i}"
        if target is not None and int(round(target)) != i:
            where = f"{i}\u2192{int(round(target))}"  # animating: show where it is heading
        return _minus(f"{PLANE_SHORT[plane]} {where}/{self.n(plane)} \u00b7 {name} {mm:.1f} mm")

    def _clamp(self, plane: str, index: float) -> float:
        return min(max(float(index), 0.0), float(self.n(plane) - 1))

    # -- slicing ------------------------------------------------------------------------
    def _raw(self, plane: str, i: int) -> np.ndarray:
        """Slice ``i`` as a numpy view in display orientation (no copy)."""
        axis, _, rflip, _, cflip = _GEOM[plane]
        d = self._data
        sl: np.ndarray = d[i] if axis == 0 else d[:, i] if axis == 1 else d[:, :, i]
        if rflip:
            sl = sl[::-1]
        if cflip:
            sl = sl[:, ::-1]
        return sl

    def slice_hu(self, plane: str, index: float) -> np.ndarray:
        """2-D float32 HU in display orientation; a fractional index blends the two neighbours
        linearly, so an animation glides instead of stepping."""
        x = self._clamp(plane, index)
        i0 = int(math.floor(x))
        f = x - i0
        out = np.ascontiguousarray(self._raw(plane, i0), dtype=np.float32)
        if f > 1e-4 and i0 + 1 < self.n(plane):
            out *= np.float32(1.0 - f)
            out += np.float32(f) * self._raw(plane, i0 + 1).astype(np.float32)
        return out

    # -- rendering ----------------------------------------------------------------------
    def _metrics(self, size: int) -> dict[str, int]:
        return {
            "border": max(1, round(size / 160)),
            "pad": max(2, round(size / 60)),
            "title_px": min(26, max(11, round(size * 0.056))),
            "letter_px": min(30, max(11, round(size * 0.068))),
            "line": max(1, round(size / 300)),
            "gap": max(3, round(size * 0.035)),
        }

    def image_rect(self, plane: str, size: int, title: bool = True) -> Rect:
        """Where the slice image lies inside the ``size``×``size`` view (letterboxed to the
        slice's physical aspect)."""
        mt = self._metrics(size)
        inset = mt["border"] + mt["pad"]
        top = inset + (round(mt["title_px"] * 1.45) if title else 0)
        aw, ah = size - 2 * inset, size - top - inset
        ph, pw = self.physical_size(plane)
        k = min(aw / pw, ah / ph)
        w, h = max(1, round(pw * k)), max(1, round(ph * k))
        return Rect(inset + (aw - w) // 2, top + (ah - h) // 2, w, h)

    def _background(self, plane: str, size: int, title: bool) -> np.ndarray:
        key = (plane, size, title)
        bg = self._bg_cache.get(key)
        if bg is None:
            bt = self._metrics(size)["border"]
            bg = np.empty((size, size, 4), np.uint8)
            bg[:] = (*BG_RGB, BG_ALPHA)
            color = (*PLANE_COLORS[plane], 255)
            bg[:bt], bg[-bt:], bg[:, :bt], bg[:, -bt:] = color, color, color, color
            bg.flags.writeable = False
            self._bg_cache[key] = bg
        return bg

    def _gray(self, plane: str, index: float, rect: Rect, window: tuple[float, float],
              cache_key: tuple) -> np.ndarray:
        x = self._clamp(plane, index)
        want = (round(x, 3), float(window[0]), float(window[1]), rect.w, rect.h)
        hit = self._gray_cache.get(cache_key)
        if hit is not None and hit[0] == want:
            return hit[1]
        hu = self.slice_hu(plane, x)
        rows, cols = hu.shape
        # Area averaging when shrinking (no aliasing of the fine lung texture), linear when
        # enlarging.
        interp = cv2.INTER_AREA if rect.w < cols and rect.h < rows else cv2.INTER_LINEAR
        img = cv2.resize(hu, (rect.w, rect.h), interpolation=interp)
        width, level = float(window[0]), float(window[1])
        lo = level - width / 2.0
        # Window/level, never min-max: the same HU is the same grey on every slice and case.
        np.subtract(img, np.float32(lo), out=img)
        np.multiply(img, np.float32(255.0 / max(width, 1e-6)), out=img)
        np.clip(img, 0.0, 255.0, out=img)
        img += np.float32(0.5)
        gray = img.astype(np.uint8)
        self._gray_cache[cache_key] = (want, gray)
        return gray

    def crosshair_px(self, plane: str, pos: Mapping[str, float], size: int,
                     title: bool = True) -> dict[str, tuple[str, int]]:
        """For each other plane in ``pos``: ("row"|"col", pixel in the view) of its line."""
        rect = self.image_rect(plane, size, title)
        _, ra, rflip, ca, cflip = _GEOM[plane]
        out: dict[str, tuple[str, int]] = {}
        for q, idx in pos.items():
            if q == plane or q not in _GEOM:
                continue
            qa = _GEOM[q][0]
            n = self._shape[qa]
            v = self._clamp(q, idx)
            if qa == ra:
                d = (n - 1 - v) if rflip else v
                out[q] = ("row", rect.y + int((d + 0.5) * rect.h / n))
            elif qa == ca:
                d = (n - 1 - v) if cflip else v
                out[q] = ("col", rect.x + int((d + 0.5) * rect.w / n))
        return out

    def render_view(self, plane: str, index: float, pos: Mapping[str, float] | None = None,
                    size: int = 240, window: tuple[float, float] = DEFAULT_WINDOW,
                    crosshair: bool = True, title: bool = True,
                    target: float | None = None) -> np.ndarray:
        """One view as RGBA uint8 ``size``×``size``: the windowed slice letterboxed to its
        physical aspect on a semi-transparent dark panel with a border in the plane's colour,
        orientation letters, the slice readout (``target``: where an animation is heading) and
        the other planes' crosshair lines (positions from ``pos``). The same function draws
        the small views and the large main view."""
        if plane not in _GEOM:
            raise ValueError(f"unknown plane {plane!r}")
        size = int(size)
        mt = self._metrics(size)
        rect = self.image_rect(plane, size, title)
        out = self._background(plane, size, title).copy()
        gray = self._gray(plane, index, rect, window, (plane, size, title))
        region = out[rect.y:rect.bottom, rect.x:rect.right]
        region[..., :3] = gray[..., None]
        region[..., 3] = 255

        if crosshair and pos:
            self._draw_crosshair(out, plane, pos, size, title, rect, mt)
        self._draw_letters(out, plane, rect, mt)
        if title:
            self._draw_title(out, plane, index, target, mt)
        if size >= 360:  # the main view also states the window, as presets can change
            w, lv = window
            text = _minus(f"W {w:g}  L {lv:g}")
            spr = text_sprite(text, max(11, round(mt["letter_px"] * 0.7)), TEXT_RGB, False, 1)
            _blit(out, spr, rect.x + 4, rect.bottom - spr.shape[0] - 2)
        return out

    def _draw_crosshair(self, out: np.ndarray, plane: str, pos: Mapping[str, float],
                        size: int, title: bool, rect: Rect, mt: dict[str, int]) -> None:
        lines = self.crosshair_px(plane, pos, size, title)
        t, g = mt["line"], mt["gap"]
        cross = {kind: px for kind, px in lines.values()}
        for q, (kind, px) in lines.items():
            color = (*PLANE_COLORS[q], 255)
            a = px - t // 2
            # Leave a gap where the lines cross, so the point of interest stays visible.
            other = cross.get("col" if kind == "row" else "row")
            lo, hi = (rect.x, rect.right) if kind == "row" else (rect.y, rect.bottom)
            spans = [(lo, hi)] if other is None else [(lo, other - g), (other + g + 1, hi)]
            for s0, s1 in spans:
                s0, s1 = max(s0, lo), min(s1, hi)
                if s1 <= s0:
                    continue
                if kind == "row":
                    out[max(a, rect.y):min(a + t, rect.bottom), s0:s1] = color
                else:
                    out[s0:s1, max(a, rect.x):min(a + t, rect.right)] = color

    def _draw_letters(self, out: np.ndarray, plane: str, rect: Rect, mt: dict[str, int]) -> None:
        labels = self.orientation_labels(plane)
        px, m = mt["letter_px"], 3
        for edge, letter in labels.items():
            spr = text_sprite(letter, px, LETTER_RGB, True, max(1, px // 12))
            h, w = spr.shape[:2]
            if edge == "top":
                x, y = rect.x + (rect.w - w) // 2, rect.y + m
            elif edge == "bottom":
                x, y = rect.x + (rect.w - w) // 2, rect.bottom - h - m
            elif edge == "left":
                x, y = rect.x + m, rect.y + (rect.h - h) // 2
            else:
                x, y = rect.right - w - m, rect.y + (rect.h - h) // 2
            _blit(out, spr, x, y)

    def _draw_title(self, out: np.ndarray, plane: str, index: float, target: float | None,
                    mt: dict[str, int]) -> None:
        px = mt["title_px"]
        inset = mt["border"] + mt["pad"]
        text = self.readout(plane, index, target)
        short, _, rest = text.partition(" ")
        head = text_sprite(short, px, PLANE_COLORS[plane], True)
        _blit(out, head, inset, inset)
        tail = text_sprite(rest, px, TEXT_RGB, False)
        _blit(out, tail, inset + head.shape[1] + max(3, px // 3), inset)

    def render_small_views(self, pos_display: Mapping[str, float],
                           pos_cmd: Mapping[str, float] | None = None, size: int = 240,
                           window: tuple[float, float] = DEFAULT_WINDOW,
                           crosshair: bool = True) -> dict[str, np.ndarray]:
        """The strip: one ``render_view`` per plane at the displayed (animated) positions, the
        readout also naming the commanded target while an animation runs."""
        cmd = pos_cmd or {}
        return {p: self.render_view(p, pos_display[p], pos_display, size, window, crosshair,
                                    True, cmd.get(p))
                for p in PLANES if p in pos_display}


def _blit(dst: np.ndarray, sprite: np.ndarray, x: int, y: int) -> None:
    """Straight-alpha "over" of an RGBA sprite onto an RGBA image, clipped to it."""
    h, w = sprite.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, dst.shape[1]), min(y + h, dst.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    src = sprite[y0 - y:y1 - y, x0 - x:x1 - x].astype(np.float32)
    d = dst[y0:y1, x0:x1]
    a = src[..., 3:4] / 255.0
    da = d[..., 3:4].astype(np.float32) / 255.0
    out_a = a + da * (1.0 - a)
    rgb = (src[..., :3] * a + d[..., :3] * da * (1.0 - a)) / np.maximum(out_a, 1e-6)
    d[..., :3] = np.clip(rgb + 0.5, 0, 255).astype(np.uint8)
    d[..., 3:4] = np.clip(out_a * 255.0 + 0.5, 0, 255).astype(np.uint8)


__all__ = ["DEFAULT_WINDOW", "MPRSlicer", "PLANE_COLORS", "PLANE_SHORT", "PLANES"]
