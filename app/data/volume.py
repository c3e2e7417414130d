"""The CT volume as the rest of the console sees it.

Canonical orientation (the contract for IV): ``data[a, c, s]`` with
- axis 0 = axial index, increasing toward the patient's head (superior, "up"),
- axis 1 = coronal index, increasing toward the patient's front (anterior, "forward"),
- axis 2 = sagittal index, increasing toward the patient's left, i.e. toward the screen's
  right in the radiological display convention ("right" = sagittal +).
Loaders reorder the stored voxels into this order with axis permutations and flips (numpy
views, no copies). ``affine`` maps canonical indices (a, c, s, 1) to patient LPS millimetres,
so true geometry, including oblique orientations, is never lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.data.problems import Problem

PLANES = ("axial", "coronal", "sagittal")


@dataclass
class Volume:
    data: np.ndarray
    affine: np.ndarray
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(int(n) for n in self.data.shape)  # type: ignore[return-value]

    @property
    def spacing(self) -> tuple[float, float, float]:
        """Voxel size in mm along (axial, coronal, sagittal) axes."""
        return tuple(float(v) for v in np.linalg.norm(self.affine[:3, :3], axis=0))  # type: ignore[return-value]

    @property
    def size(self) -> dict[str, int]:
        """Slice counts per plane, as in the state snapshot's ``iv.size``."""
        return dict(zip(PLANES, self.shape, strict=True))

    def index_to_lps(self, index: np.ndarray | tuple[float, float, float]) -> np.ndarray:
        ijk = np.asarray(index, dtype=float)
        return (self.affine[:3, :3] @ ijk.T).T + self.affine[:3, 3]

    def lps_to_index(self, lps: np.ndarray | tuple[float, float, float]) -> np.ndarray:
        inv = np.linalg.inv(self.affine)
        p = np.asarray(lps, dtype=float)
        return (inv[:3, :3] @ p.T).T + inv[:3, 3]


def canonicalize(data: np.ndarray, affine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reorder ``data`` (any axis order, with ``affine`` index→LPS) into the canonical order.

    Picks, for each canonical direction (superior, anterior, patient-left), the stored axis whose
    direction is closest to it, then flips axes that run the other way. Returns numpy views.
    """
    targets = np.array([[0, 0, 1], [0, -1, 0], [1, 0, 0]], dtype=float)  # S, A, L in LPS
    dirs = affine[:3, :3] / np.linalg.norm(affine[:3, :3], axis=0)
    order: list[int] = []
    for t in targets:
        scores = [abs(float(dirs[:, ax] @ t)) if ax not in order else -1.0 for ax in range(3)]
        order.append(int(np.argmax(scores)))
    out = np.transpose(data, order)
    perm = np.eye(4)
    perm[:3, :3] = np.eye(3)[:, order]
    new_affine = affine @ perm
    for axis, t in enumerate(targets):
        if float(new_affine[:3, axis] @ t) < 0:
            out = np.flip(out, axis=axis)
            n = out.shape[axis]
            flip = np.eye(4)
            flip[axis, axis] = -1
            flip[axis, 3] = n - 1
            new_affine = new_affine @ flip
    return out, new_affine
