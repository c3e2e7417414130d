"""The video view: shows the newest composed frame, letterboxed to keep its aspect.

The frame is wrapped in a ``QImage`` that points at the render loop's buffer (no copy); the
render loop leaves that buffer alone until the next frame is taken. The render loop composes at
this widget's pixel size (see :meth:`VideoView.pixel_size`), so painting is normally a 1:1
blit on the UI thread.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.ui.qtcompat import emit

BACKGROUND = QColor(0, 0, 0)


class VideoView(QWidget):
    resized = Signal(int, int)  # the view's size in device pixels

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(320, 180)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._array: np.ndarray | None = None  # keeps the QImage's memory alive
        self._image: QImage | None = None
        self.frames_shown = 0
        self.frame_seq = 0

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(1280, 720)

    def pixel_size(self) -> tuple[int, int]:
        ratio = self.devicePixelRatioF()
        return max(1, round(self.width() * ratio)), max(1, round(self.height() * ratio))

    def show_frame(self, array: np.ndarray, seq: int = 0) -> None:
        """Display an (H, W, 3) uint8 RGB array; it must stay unchanged until the next call."""
        h, w = array.shape[:2]
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        self._array = array
        self._image = QImage(array.data, w, h, array.strides[0], QImage.Format.Format_RGB888)
        self.frame_seq = seq
        self.frames_shown += 1
        self.update()

    def current_frame(self) -> np.ndarray | None:
        """A copy of the frame on screen (tests, screenshots)."""
        return None if self._array is None else self._array.copy()

    def image_rect(self) -> QRect:
        """Where the frame is drawn inside the widget (logical pixels)."""
        if self._image is None:
            return QRect(0, 0, self.width(), self.height())
        iw, ih = self._image.width(), self._image.height()
        k = min(self.width() / iw, self.height() / ih)
        w, h = max(1, round(iw * k)), max(1, round(ih * k))
        return QRect((self.width() - w) // 2, (self.height() - h) // 2, w, h)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        try:
            if self._image is None:
                p.fillRect(self.rect(), BACKGROUND)
                return
            target = self.image_rect()
            # Black bars only where the picture is not (no full-widget fill under it).
            full = self.rect()
            if target.top() > 0:
                p.fillRect(QRect(0, 0, full.width(), target.top()), BACKGROUND)
                p.fillRect(QRect(0, target.bottom() + 1, full.width(),
                                 full.height() - target.bottom() - 1), BACKGROUND)
            if target.left() > 0:
                p.fillRect(QRect(0, 0, target.left(), full.height()), BACKGROUND)
                p.fillRect(QRect(target.right() + 1, 0, full.width() - target.right() - 1,
                                 full.height()), BACKGROUND)
            ratio = self.devicePixelRatioF()
            if (round(target.width() * ratio) == self._image.width()
                    and round(target.height() * ratio) == self._image.height()):
                self._image.setDevicePixelRatio(ratio)
                p.drawImage(QPoint(target.x(), target.y()), self._image)
            else:  # the render loop has not caught up with a resize yet
                p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
                p.drawImage(target, self._image)
        finally:
            p.end()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        emit(self.resized, *self.pixel_size())


__all__ = ["VideoView"]
