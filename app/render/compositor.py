"""Alpha-blend RGBA overlay layers onto RGB video frames (ARCHITECTURE "Rendering and threads").

Per layer, premultiplied colour ``C·α`` and ``255 − α`` are computed once per version (cache
keyed by name and version), so a frame only costs, inside each layer's rectangle,

    out = round((C·α + frame·(255 − α)) / 255)

in uint16 integer math (exact; ``round(x/255)`` via ``(x + 128 + ((x + 128) >> 8)) >> 8``).
Pixels outside every layer are a plain copy of the frame. Fully transparent borders are cropped
away and fully opaque layers are copied. Output goes to reusable buffers; the input frame is
left untouched unless ``inplace=True``. Not thread-safe: one Compositor per composing thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)
class Layer:
    """An RGBA uint8 image placed with its top-left corner at (x, y) on the frame.

    Bump ``version`` whenever the pixels change: the compositor reuses its precomputed blend
    terms while (name, version) stay the same. ``opacity`` fades the whole layer.
    """

    name: str
    image_rgba: np.ndarray
    x: int
    y: int
    version: int = 0
    opacity: float = 1.0


@dataclass(slots=True)
class _Prepared:
    key: tuple
    ox: int  # offset of the cropped (non-transparent) part inside the layer image
    oy: int
    premul: np.ndarray | None  # (h, w, 3) uint16: C·α
    inv: np.ndarray | None  # (h, w, 1) uint16: 255 − α
    rgb: np.ndarray | None  # (h, w, 3) uint8 when the layer is fully opaque
    scratch: np.ndarray | None  # (h, w, 3) uint16 work buffers, reused every frame
    scratch2: np.ndarray | None

    @property
    def shape(self) -> tuple[int, int]:
        arr = self.rgb if self.rgb is not None else self.premul
        return (0, 0) if arr is None else (arr.shape[0], arr.shape[1])


def _prepare(layer: Layer, key: tuple) -> _Prepared:
    img = np.asarray(layer.image_rgba)
    if img.ndim != 3 or img.shape[2] not in (3, 4) or img.dtype != np.uint8:
        raise ValueError(f"layer {layer.name!r}: expected an (h, w, 4) uint8 RGBA image, "
                         f"got {img.shape} {img.dtype}")
    alpha = np.full(img.shape[:2], 255, np.uint8) if img.shape[2] == 3 else img[..., 3]
    if layer.opacity < 1.0:
        alpha = ((alpha.astype(np.uint16) * int(round(255 * max(layer.opacity, 0.0))) + 127)
                 // 255).astype(np.uint8)
    rows = np.flatnonzero(alpha.any(axis=1))
    if rows.size == 0:  # nothing visible
        return _Prepared(key, 0, 0, None, None, None, None, None)
    cols = np.flatnonzero(alpha.any(axis=0))
    y0, y1, x0, x1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    a = alpha[y0:y1, x0:x1]
    rgb = img[y0:y1, x0:x1, :3]
    if bool((a == 255).all()):
        return _Prepared(key, int(x0), int(y0), None, None, np.ascontiguousarray(rgb), None, None)
    a16 = a.astype(np.uint16)[..., None]
    premul = rgb.astype(np.uint16) * a16
    inv = np.uint16(255) - a16
    h, w = a.shape
    return _Prepared(key, int(x0), int(y0), premul, inv, None,
                     np.empty((h, w, 3), np.uint16), np.empty((h, w, 3), np.uint16))


class Compositor:
    def __init__(self, buffers: int = 2) -> None:
        """``buffers``: output buffers used in turn, so the frame returned by one call stays
        intact while the next is composed (the UI may still be showing it)."""
        self._n_buffers = max(1, int(buffers))
        self._buffers: list[np.ndarray] = []
        self._next = 0
        self._prepared: dict[str, _Prepared] = {}

    def forget(self, name: str) -> None:
        self._prepared.pop(name, None)

    def clear(self) -> None:
        self._prepared.clear()

    def _buffer(self, shape: tuple[int, ...]) -> np.ndarray:
        if not self._buffers or self._buffers[0].shape != shape:
            self._buffers = [np.empty(shape, np.uint8) for _ in range(self._n_buffers)]
            self._next = 0
        buf = self._buffers[self._next]
        self._next = (self._next + 1) % self._n_buffers
        return buf

    def _get(self, layer: Layer) -> _Prepared:
        img = layer.image_rgba
        key = (layer.version, id(img), img.shape, float(layer.opacity))
        prep = self._prepared.get(layer.name)
        if prep is None or prep.key != key:
            prep = _prepare(layer, key)
            self._prepared[layer.name] = prep
        return prep

    def compose(self, frame_rgb: np.ndarray, layers: list[Layer],
                out: np.ndarray | None = None, inplace: bool = False) -> np.ndarray:
        """``frame_rgb`` (H, W, 3) uint8 with ``layers`` blended on top, in list order.

        Returns ``out`` if given, ``frame_rgb`` itself if ``inplace``, else one of the
        compositor's reusable buffers (valid until ``buffers`` more calls: copy to keep it).
        """
        if frame_rgb.ndim != 3 or frame_rgb.shape[2] != 3 or frame_rgb.dtype != np.uint8:
            raise ValueError(f"expected an (H, W, 3) uint8 frame, got {frame_rgb.shape} "
                             f"{frame_rgb.dtype}")
        if inplace:
            dst = frame_rgb
        else:
            dst = self._buffer(frame_rgb.shape) if out is None else out
            np.copyto(dst, frame_rgb)
        fh, fw = dst.shape[:2]
        for layer in layers:
            prep = self._get(layer)
            ph, pw = prep.shape
            if ph == 0:
                continue
            lx, ly = int(layer.x) + prep.ox, int(layer.y) + prep.oy
            x0, y0 = max(lx, 0), max(ly, 0)
            x1, y1 = min(lx + pw, fw), min(ly + ph, fh)
            if x1 <= x0 or y1 <= y0:
                continue  # entirely outside the frame
            src = (slice(y0 - ly, y1 - ly), slice(x0 - lx, x1 - lx))
            d = dst[y0:y1, x0:x1]
            if prep.rgb is not None:
                np.copyto(d, prep.rgb[src])
                continue
            t = prep.scratch[src]  # type: ignore[index]
            t2 = prep.scratch2[src]  # type: ignore[index]
            np.multiply(d, prep.inv[src], out=t)  # type: ignore[index]
            t += prep.premul[src]  # type: ignore[index]
            t += 128
            np.right_shift(t, 8, out=t2)
            t += t2
            t >>= 8
            np.copyto(d, t, casting="unsafe")
        return dst


__all__ = ["Compositor", "Layer"]
