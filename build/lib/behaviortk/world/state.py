"""World geometry and agent state as NumPy arrays, one array per field.

Agents are row indices. Agents of one group occupy one contiguous slice, in
the order the groups appear in the definition, so a group's rows are a view.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from behaviortk.vec import Array
from behaviortk.world.smoothing import HeadingSmoother


@dataclass
class Path:
    name: str
    points: Array  # (P, 2)
    looped: bool


@dataclass(frozen=True)
class Zone:
    """A named region: a circle (``center``, ``radius``) or a rectangle (``low``, ``high``)."""

    name: str
    kind: str  # "circle" | "rect"
    center: Array  # (2,) the circle's centre, or the rectangle's middle
    radius: float = 0.0
    low: Array = field(default_factory=lambda: np.zeros(2))
    high: Array = field(default_factory=lambda: np.zeros(2))


@dataclass
class World:
    """Static geometry (obstacles may be dragged in the viewer, nothing else moves)."""

    width: float
    height: float
    edges: str  # "wrap" | "bounce" | "contain"
    obstacle_pos: Array = field(default_factory=lambda: np.zeros((0, 2)))  # (M, 2)
    obstacle_radius: Array = field(default_factory=lambda: np.zeros(0))  # (M,)
    wall_a: Array = field(default_factory=lambda: np.zeros((0, 2)))  # (K, 2) segment start
    wall_b: Array = field(default_factory=lambda: np.zeros((0, 2)))  # (K, 2) segment end
    wall_normal: Array = field(default_factory=lambda: np.zeros((0, 2)))  # (K, 2) unit, facing in
    paths: dict[str, Path] = field(default_factory=dict)
    zones: dict[str, Zone] = field(default_factory=dict)

    @property
    def size(self) -> Array:
        return np.array([self.width, self.height], dtype=np.float64)


@dataclass
class Agents:
    """Per-agent state (changes every tick) and per-agent constants (from the group)."""

    names: list[str]  # the definition's agent names (`names`, else `<group>-<i>`)
    group_names: list[str]  # index -> group name
    group: np.ndarray  # (N,) int index into group_names
    slices: dict[str, slice]  # group name -> contiguous rows
    ids: np.ndarray  # (N,) int64 stable ids, never reused within a run
    # state
    pos: Array  # (N, 2)
    vel: Array  # (N, 2)
    heading: Array  # (N, 2) unit; kept when speed is zero
    smoothed_heading: Array  # (N, 2) unit; average of the last k headings
    orientation: Array  # (N,) radians, independent of velocity (face / align)
    rotation: Array  # (N,) radians per second
    force: Array  # (N, 2) steering force applied last tick (for overlays)
    # constants
    mass: Array
    max_speed: Array
    max_force: Array
    max_turn_rate: Array  # radians per second; inf = unlimited
    max_angular_accel: Array  # radians per second^2
    max_rotation: Array  # radians per second
    radius: Array
    view_distance: Array
    fov: Array  # full field-of-view angle in radians (2*pi = all round)
    max_neighbours: np.ndarray  # (N,) int64: nearest neighbours kept per neighbour query
    # integration helper state (created by integrate when heading smoothing k > 1)
    smoother: HeadingSmoother | None = None

    @property
    def n(self) -> int:
        return int(self.pos.shape[0])

    @property
    def speed(self) -> Array:
        return np.sqrt(np.einsum("ij,ij->i", self.vel, self.vel))

    def index_of(self, name: str) -> int:
        """The row of the agent named ``name``."""
        return self.names.index(name)
