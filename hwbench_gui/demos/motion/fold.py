"""Keeping the target from folding: every triangle of a mesh keeps its orientation.

A warp folds where it turns part of the image over: a triangle of moved points whose signed area has
changed sign. Two meshes are checked, with the same signed areas:

- :class:`KeypointMesh`, the Delaunay triangles of the target's keypoints at rest: where the local
  motion (an expression carried from the driver) would turn one over, a keypoint crossing its
  neighbour (the lower lip past the chin), :meth:`KeypointMesh.bound` shrinks the displacements of
  its corners until none flips or gets thinner than ``min_area_frac`` of its rest area, and the rest
  of the face still moves in full. Head motion (a similarity) turns no triangle over;
- the warp's own grid (:func:`folded_cells`): the map from output pixels to target pixels, sampled on
  the grid it is interpolated from and ringed by the image border, which never moves. That mesh is
  what the image is drawn with: where a motion would fold one of its cells (a face pushed across the
  border, keypoints bunched by a large roll), ``ThinPlateWarp`` scales the displacement down by the
  largest share that folds none (:func:`largest_unfolded_share`), so the rendered image is fold-free,
  not only its keypoints. (Border anchors are left out of the keypoint mesh: its thin triangles
  between the face and the border turn over under head motions that fold nothing.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def signed_areas(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Twice the signed area of each triangle (rows of 3 indices into ``points``); positive when its
    corners turn clockwise on screen (y down), as (top-left, top-right, bottom-left) do."""
    a, b, c = points[triangles[:, 0]], points[triangles[:, 1]], points[triangles[:, 2]]
    return (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])


def grid_triangles(rows: int, cols: int) -> np.ndarray:
    """The four corner triangles of every cell of a rows×cols grid of nodes (row-major indices), each
    positively oriented on an undistorted grid. All four positive ⇔ the cell is a convex quad turning
    the right way, so bilinear interpolation inside it does not fold either."""
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(cols - 1), indexing="ij")
    tl = (r * cols + c).ravel()
    tr, bl, br = tl + 1, tl + cols, tl + cols + 1
    return np.concatenate([np.stack(t, 1) for t in ((tl, tr, bl), (tr, br, bl), (tl, tr, br), (tl, br, bl))])


def folded_cells(nodes_xy: np.ndarray) -> int:
    """How many corner triangles of a grid of mapped nodes (rows, cols, 2) are folded or flat (the
    triangles of :func:`grid_triangles`, on slices of the grid: this runs every frame)."""
    tl, tr, bl, br = nodes_xy[:-1, :-1], nodes_xy[:-1, 1:], nodes_xy[1:, :-1], nodes_xy[1:, 1:]

    def area(a, b, c):
        return (b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0])

    return int(sum(np.count_nonzero(area(a, b, c) <= 0) for a, b, c in
                   ((tl, tr, bl), (tr, br, bl), (tl, tr, br), (tl, br, bl))))


def _delaunay(points: np.ndarray) -> np.ndarray:
    """Delaunay triangles (rows of 3 indices); none for fewer than 3 points or points on one line."""
    from scipy.spatial import Delaunay, QhullError

    if len(points) < 3:
        return np.zeros((0, 3), np.int64)
    try:
        return Delaunay(points).simplices.astype(np.int64)
    except QhullError:
        return np.zeros((0, 3), np.int64)


def largest_unfolded_share(nodes_xy: np.ndarray, disp_xy: np.ndarray, min_area_frac: float = 0.05) -> float:
    """The largest t in [0, 1] for which ``nodes + t·disp`` (both (rows, cols, 2); the nodes an
    undistorted grid) keeps every corner triangle above ``min_area_frac`` of its area: each area is a
    quadratic in t, solved exactly (no refitting, no search)."""
    rows, cols = nodes_xy.shape[:2]
    tri = grid_triangles(rows, cols)
    p, d = nodes_xy.reshape(-1, 2), disp_xy.reshape(-1, 2)
    u, v = p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]]
    du, dv = d[tri[:, 1]] - d[tri[:, 0]], d[tri[:, 2]] - d[tri[:, 0]]

    def cross(a, b):
        return a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]

    a0 = cross(u, v)
    # area(t) - floor = c·t² + b·t + a, with a > 0 at t = 0: the first root in (0, 1] is where it turns.
    a, b, c = (1.0 - min_area_frac) * a0, cross(u, dv) + cross(du, v), cross(du, dv)
    t = np.full(len(a0), np.inf)
    lin = np.abs(c) < 1e-12 * np.maximum(np.abs(b), 1e-12)
    t[lin & (b < 0)] = -a[lin & (b < 0)] / b[lin & (b < 0)]
    disc = b * b - 4 * a * c
    q = ~lin & (disc >= 0)
    sq = np.sqrt(np.where(q, disc, 0.0))
    for root in ((-b - sq) / np.where(q, 2 * c, 1.0), (-b + sq) / np.where(q, 2 * c, 1.0)):
        ok = q & (root > 0)
        t[ok] = np.minimum(t[ok], root[ok])
    return float(min(1.0, t.min())) if len(t) else 1.0


@dataclass
class Bounded:
    """The keypoints after :meth:`KeypointMesh.bound`, and what it took."""

    points: np.ndarray  # (K, 2)
    flipped: int  # triangles that would have turned over (signed area ≤ 0) unbounded
    thin: int  # triangles that would have shrunk under ``min_area_frac`` of their rest area (flipped included)
    shrink: float  # the smallest factor left on a keypoint's displacement (1: none was shrunk)


class KeypointMesh:
    """Delaunay triangles over the ``rest`` keypoints, oriented at rest."""

    def __init__(self, rest: np.ndarray, min_area_frac: float = 0.05, shrink_step: float = 0.7,
                 max_rounds: int = 25) -> None:
        self.rest = np.asarray(rest, np.float64).reshape(-1, 2)
        tri = _delaunay(self.rest)
        areas = signed_areas(self.rest, tri)
        tri[areas < 0] = tri[areas < 0][:, [0, 2, 1]]
        keep = np.abs(areas) > 1e-6 * max(1.0, np.abs(areas).max())  # coincident keypoints give flat ones
        self.triangles, self.rest_areas = tri[keep], np.abs(areas[keep])
        self.min_area_frac, self.shrink_step, self.max_rounds = min_area_frac, shrink_step, max_rounds

    def _areas(self, points: np.ndarray) -> np.ndarray:
        return signed_areas(points, self.triangles)

    def bound(self, moved: np.ndarray) -> Bounded:
        """``moved`` keypoints with each displacement shrunk just enough that no triangle flips or gets
        thinner than ``min_area_frac`` of its rest area; keypoints of triangles that keep their shape
        move in full. Falls back to the rest pose, which is always valid, if shrinking does not settle."""
        moved = np.asarray(moved, np.float64).reshape(-1, 2)
        disp = moved - self.rest
        k = len(self.rest)
        floor = self.min_area_frac * self.rest_areas
        areas = self._areas(moved)
        flipped, thin = int((areas <= 0).sum()), int((areas < floor).sum())
        factor = np.ones(k)
        for _ in range(self.max_rounds):
            bad = areas < floor
            if not bad.any():
                break
            factor[np.unique(self.triangles[bad])] *= self.shrink_step
            areas = self._areas(self.rest + disp * factor[:, None])
        else:
            if (areas < floor).any():
                factor[:] = 0.0
        return Bounded(self.rest + disp * factor[:, None], flipped, thin, float(factor.min()) if k else 1.0)
