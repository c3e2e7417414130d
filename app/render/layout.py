"""Where each overlay goes on a video frame (ARCHITECTURE "Rendering and threads").

- CT strip: three square small views (axial, coronal, sagittal, top to bottom) stacked along the
  right edge whenever the CT is shown (``small_views`` and ``zoom_view``).
- IR box: top right of the area left of the strip.
- AR panel: a square (~0.42·h) below the IR box, right-aligned with it (upper-right area).
- Zoom view: one large square (~0.8·h) centred in the free area left of the strip and of the
  IR/AR column, so nothing overlaps and the video stays visible around it.

All rectangles are ``(x, y, w, h)`` integer pixels, inside the frame and mutually disjoint.
"""

from __future__ import annotations

from typing import NamedTuple

STRIP_KEYS = ("ct_axial", "ct_coronal", "ct_sagittal")  # one per plane, in PLANES order
ZOOM_KEY = "ct_main"
IR_KEY = "ir"
AR_KEY = "ar"

MARGIN_FRAC = 0.02  # outer margin and gap, as a fraction of the frame height
AR_FRAC = 0.42
ZOOM_FRAC = 0.8
IR_WIDTH_FRAC = 0.42  # default IR box width (same as the AR panel: one tidy column)
IR_HEIGHT_FRAC = 0.40  # default IR box height when the caller has not rendered it yet


class Rect(NamedTuple):
    x: int
    y: int
    w: int
    h: int

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h

    def intersects(self, other: Rect) -> bool:
        return (self.x < other.right and other.x < self.right
                and self.y < other.bottom and other.y < self.bottom)

    def contains(self, px: float, py: float) -> bool:
        return self.x <= px < self.right and self.y <= py < self.bottom


class Layout:
    @staticmethod
    def margin(h: int) -> int:
        return max(2, round(MARGIN_FRAC * h))

    @staticmethod
    def for_frame(w: int, h: int, iv_mode: str, ir_visible: bool, ar_visible: bool,
                  ir_box_size: tuple[int, int] | None = None) -> dict[str, Rect]:
        """The rectangles of the overlays shown, keyed by STRIP_KEYS / ZOOM_KEY / IR_KEY / AR_KEY.

        ``ir_box_size`` is the rendered IR box (w, h); without it a default size is reserved.
        """
        if w <= 0 or h <= 0:
            raise ValueError(f"bad frame size {w}x{h}")
        if iv_mode not in ("none", "small_views", "zoom_view"):
            raise ValueError(f"unknown CT view mode {iv_mode!r}")
        m = Layout.margin(h)
        rects: dict[str, Rect] = {}

        # CT strip along the right edge; it never shrinks below what three views need.
        right = w  # right edge of the area still free for the other overlays
        if iv_mode != "none":
            s = max(1, min((h - 4 * m) // 3, w // 3))
            x = w - m - s
            for i, key in enumerate(STRIP_KEYS):
                rects[key] = Rect(x, m + i * (s + m), s, s)
            right = x

        # IR/AR column at the top right of what is left.
        col_right = right - m
        col_left = col_right
        y = m
        if ir_visible:
            iw, ih = ir_box_size if ir_box_size else (round(IR_WIDTH_FRAC * h),
                                                       round(IR_HEIGHT_FRAC * h))
            iw = max(1, min(int(iw), col_right - m))
            ih = max(1, min(int(ih), h - 2 * m))
            rects[IR_KEY] = Rect(col_right - iw, y, iw, ih)
            col_left = min(col_left, col_right - iw)
            y += ih + m
        if ar_visible:
            a = round(AR_FRAC * h)
            below = min(a, h - m - y, col_right - m)
            left_edge = rects[IR_KEY].x - m if IR_KEY in rects else col_right
            beside = min(a, h - 2 * m, left_edge - m)
            # Below the IR box unless a tall box would shrink the model to a thumbnail; then
            # beside it — but not in zoom view, where the large CT view needs that room.
            squeezed = below < 0.7 * a or below < round(0.25 * h)
            if squeezed and beside > below and (iv_mode != "zoom_view" or below < 1):
                a = max(1, beside)
                rects[AR_KEY] = Rect(left_edge - a, m, a, a)
            else:
                a = max(1, below)
                rects[AR_KEY] = Rect(col_right - a, y, a, a)
            col_left = min(col_left, rects[AR_KEY].x)

        # Zoom view: centred in the free area left of everything on the right.
        if iv_mode == "zoom_view":
            free_right = (col_left - m) if (ir_visible or ar_visible) else (right - m)
            free_w = free_right - m
            z = max(1, min(round(ZOOM_FRAC * h), free_w, h - 2 * m))
            zx = max(0, m + (free_w - z) // 2)
            zy = (h - z) // 2
            rects[ZOOM_KEY] = Rect(zx, zy, z, z)
        return rects


__all__ = ["AR_KEY", "IR_KEY", "Layout", "Rect", "STRIP_KEYS", "ZOOM_KEY"]
