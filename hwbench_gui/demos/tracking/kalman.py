"""Deep SORT's constant-velocity Kalman filter on (x, y, aspect, height) and its chi-square gate."""

from __future__ import annotations

import numpy as np

#: 95 % quantiles of the chi-square distribution by degrees of freedom (for Mahalanobis gating).
CHI2INV95 = {1: 3.8415, 2: 5.9915, 3: 7.8147, 4: 9.4877, 5: 11.070, 6: 12.592, 7: 14.067, 8: 15.507, 9: 16.919}


class KalmanFilter:
    """Constant-velocity Kalman filter on (x, y, a, h) with velocities: Deep SORT's own.

    Noise scales with the box height, so the filter behaves the same for near and far objects.
    """

    ndim = 4

    def __init__(self, std_position: float = 1.0 / 20, std_velocity: float = 1.0 / 160) -> None:
        self.motion = np.eye(8)
        self.motion[:4, 4:] = np.eye(4)  # dt = 1 frame
        self.observe = np.eye(4, 8)
        self.std_position, self.std_velocity = std_position, std_velocity

    def initiate(self, measurement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A new track's (mean, covariance) from one xyah measurement; velocities start at 0."""
        h = measurement[3]
        mean = np.r_[measurement, np.zeros(4)]
        std = [2 * self.std_position * h, 2 * self.std_position * h, 1e-2, 2 * self.std_position * h,
               10 * self.std_velocity * h, 10 * self.std_velocity * h, 1e-5, 10 * self.std_velocity * h]
        return mean, np.diag(np.square(std))

    def predict(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One frame ahead for (N, 8) means and (N, 8, 8) covariances (or a single track)."""
        single = mean.ndim == 1
        mean, covariance = np.atleast_2d(mean), covariance.reshape(-1, 8, 8)
        h = mean[:, 3]
        std = np.stack([self.std_position * h, self.std_position * h, np.full_like(h, 1e-2),
                        self.std_position * h, self.std_velocity * h, self.std_velocity * h,
                        np.full_like(h, 1e-5), self.std_velocity * h], 1)
        noise = np.einsum("ni,ij->nij", np.square(std), np.eye(8))
        mean = mean @ self.motion.T
        covariance = self.motion @ covariance @ self.motion.T + noise
        return (mean[0], covariance[0]) if single else (mean, covariance)

    def project(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Into measurement space, with measurement noise added."""
        h = mean[3]
        std = [self.std_position * h, self.std_position * h, 1e-1, self.std_position * h]
        return self.observe @ mean, self.observe @ covariance @ self.observe.T + np.diag(np.square(std))

    def update(self, mean: np.ndarray, covariance: np.ndarray, measurement: np.ndarray):
        """Correct with xyah measurements: one track ((8,), (8, 8), (4,)) or T at once ((T, 8), (T, 8, 8), (T, 4))."""
        single = mean.ndim == 1
        mean, covariance = np.atleast_2d(mean), covariance.reshape(-1, 8, 8)
        measurement = np.atleast_2d(measurement)
        h = mean[:, 3]
        std = np.stack([self.std_position * h, self.std_position * h, np.full_like(h, 1e-1),
                        self.std_position * h], 1)
        projected_cov = covariance[:, :4, :4] + np.einsum("ni,ij->nij", np.square(std), np.eye(4))
        # K = P Hᵀ S⁻¹ with S symmetric: solve S Kᵀ = H P (H picks the first four state entries).
        gain = np.linalg.solve(projected_cov, covariance[:, :4, :]).transpose(0, 2, 1)  # (T, 8, 4)
        innovation = measurement - mean[:, :4]
        new_mean = mean + np.einsum("tij,tj->ti", gain, innovation)
        new_cov = covariance - gain @ projected_cov @ gain.transpose(0, 2, 1)
        return (new_mean[0], new_cov[0]) if single else (new_mean, new_cov)

    def gating_distance(self, mean: np.ndarray, covariance: np.ndarray, measurements: np.ndarray) -> np.ndarray:
        """Squared Mahalanobis distance of each xyah measurement from the track's predicted state."""
        return self.gating_distances(mean[None], covariance[None], measurements)[0]

    def gating_distances(self, means: np.ndarray, covariances: np.ndarray, measurements: np.ndarray) -> np.ndarray:
        """(T, D) squared Mahalanobis distances for T tracks ((T, 8), (T, 8, 8)) and D measurements."""
        h = means[:, 3]
        std = np.stack([self.std_position * h, self.std_position * h, np.full_like(h, 1e-1),
                        self.std_position * h], 1)
        projected_mean = means[:, :4]
        projected_cov = covariances[:, :4, :4] + np.einsum("ni,ij->nij", np.square(std), np.eye(4))
        d = np.atleast_2d(measurements)[None, :, :] - projected_mean[:, None, :]  # (T, D, 4)
        # Batched 4×4 solves: numpy's solve costs microseconds; scipy's triangular solver far more per call.
        z = np.linalg.solve(projected_cov, d.transpose(0, 2, 1))  # (T, 4, D)
        return np.einsum("tdk,tkd->td", d, z)

