"""Appearance galleries per track (nearest-neighbour cosine distance) and the Hungarian assignment with a
cost ceiling."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

INFTY_COST = 1e5


class NearestNeighborDistance:
    """For each track, the last ``budget`` features; distance = smallest cosine distance to any of them."""

    def __init__(self, budget: int | None = 100) -> None:
        self.budget = budget
        self.samples: dict[int, np.ndarray] = {}  # track id → (n, dim) float32, newest last

    def partial_fit(self, features: list[np.ndarray], targets: list[int], active_targets: list[int]) -> None:
        new: dict[int, list[np.ndarray]] = {}
        for feature, target in zip(features, targets):
            new.setdefault(target, []).append(feature)
        for target, rows in new.items():
            gallery = np.asarray(rows, np.float32)
            if target in self.samples:
                gallery = np.concatenate([self.samples[target], gallery])
            self.samples[target] = gallery if self.budget is None else gallery[-self.budget:]
        self.samples = {k: self.samples[k] for k in active_targets if k in self.samples}

    def distance(self, features: np.ndarray, targets: list[int]) -> np.ndarray:
        """(len(targets), len(features)) cosine distances; features must be L2-normalised rows."""
        cost = np.ones((len(targets), len(features)))
        if len(features) == 0:
            return cost
        have = [i for i, t in enumerate(targets) if t in self.samples and len(self.samples[t])]
        if not have:
            return cost
        galleries = [self.samples[targets[i]] for i in have]
        starts = np.cumsum([0] + [len(g) for g in galleries[:-1]])
        # One matrix product over every gallery row, then the best row per track: many small
        # products cost far more (BLAS start-up per call) than one large one.
        sims = np.concatenate(galleries) @ np.asarray(features, np.float32).T
        cost[have] = 1.0 - np.maximum.reduceat(sims, starts, axis=0)
        return cost


# -- assignment -----------------------------------------------------------------------------------------

def min_cost_matching(cost: np.ndarray, max_distance: float, track_indices: list[int],
                      detection_indices: list[int]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Hungarian assignment on ``cost`` (rows = track_indices, cols = detection_indices).

    Pairs costing more than ``max_distance`` are refused. Returns (matches, unmatched tracks,
    unmatched detections) in the callers' indices.
    """
    if not track_indices or not detection_indices:
        return [], list(track_indices), list(detection_indices)
    cost = np.where(cost > max_distance, max_distance + 1e-5, cost)
    rows, cols = linear_sum_assignment(cost)
    matches, matched_t, matched_d = [], set(), set()
    for r, c in zip(rows, cols):
        if cost[r, c] <= max_distance:
            matches.append((track_indices[r], detection_indices[c]))
            matched_t.add(track_indices[r])
            matched_d.add(detection_indices[c])
    return (matches, [t for t in track_indices if t not in matched_t],
            [d for d in detection_indices if d not in matched_d])

