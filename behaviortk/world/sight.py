"""What an agent can see: view distance, field of view and line of sight, one test for all.

``can_see`` (``conditions.py``) and the ``visible`` nearest target
(``world/visible_nearest.py``) both call :func:`sees`, so "the nearest agent it
can see" and "can it see that agent" never disagree. The field of view is a
full angle (half of it either side of the heading), as a group's ``fov``: the
convention of Buckland's Raven bots (*Programming Game AI by Example*, ch. 7,
``isSecondInFOVOfFirst`` tests ``facing . to_target >= cos(fov / 2)``, then
casts a ray against the walls) and of the "view width" of "[AI]高级人工智能(2)——
结合队伍" (2007), compared with the angle to the heading as half the width.
"""

from __future__ import annotations

import numpy as np

from behaviortk.vec import EPS, Array
from behaviortk.world.state import World

#: Cosine slack of the field-of-view test, so a target exactly on the
#: boundary angle (fov / 2) counts as seen despite rounding in cos().
FOV_COS_TOLERANCE = 1e-9

#: Bytes of (segment, obstacle or wall) work one pass of :func:`line_blocked`
#: holds at once: many segments are tested a block at a time.
LINE_BUDGET = 16 * 1024 * 1024
LINE_BYTES_PER_ITEM = 64  # the index arrays of the bounding-box test, per pair at most

#: Slack of the bounding-box test (relative and absolute): it only rules out pairs that
#: cannot touch, whatever the rounding; the exact test decides the rest.
BOX_SLACK = 1e-9


def in_view(heading: Array, d: Array, dist: Array, half: Array) -> np.ndarray:
    """Whether ``d`` (from the agent to the target, length ``dist``) lies within ``half``
    (radians) of the unit ``heading``: ``h . d >= |d| cos(half)``. All round when ``half``
    is at least pi; a target on the agent's own position is in view."""
    return in_view_columns(heading[:, 0], heading[:, 1], d[:, 0], d[:, 1], dist, half)


def in_view_columns(
    hx: Array, hy: Array, dx: Array, dy: Array, dist: Array, half: Array
) -> np.ndarray:
    """:func:`in_view` on x and y columns (the same arithmetic)."""
    along = hx * dx + hy * dy
    cos_half = np.cos(np.minimum(half, np.pi)) - FOV_COS_TOLERANCE
    return np.asarray((half >= np.pi) | (along >= dist * cos_half) | (dist <= EPS), dtype=bool)


def sees(
    pos: Array,
    heading: Array,
    target: Array,
    valid: np.ndarray,
    reach: Array,
    half: Array,
    world: World,
    line_of_sight: bool = True,
) -> np.ndarray:
    """Per row: the target (its nearest image) is within ``reach``, within ``half`` of the
    heading and, with ``line_of_sight``, no obstacle or wall crosses the line to it."""
    d = target - pos
    dist = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    seen = np.asarray(valid & (dist <= reach) & in_view(heading, d, dist, half), dtype=bool)
    if line_of_sight and seen.any():
        which = np.flatnonzero(seen)
        seen[which] = ~line_blocked(pos[which], target[which], world)
    return seen


def line_blocked(p: Array, q: Array, world: World) -> np.ndarray:
    """Per row, whether the segment ``p -> q`` crosses an obstacle circle or a wall.

    A wall blocks where it properly crosses the segment (touching an end does not);
    an obstacle where the segment passes closer to its centre than its radius. Each
    (segment, obstacle or wall) pair is first tested by bounding boxes (an obstacle's
    box grown by its radius; :func:`_meeting`), and only the pairs whose boxes meet are
    measured exactly; segments are taken a block at a time so memory stays within
    ``LINE_BUDGET`` even when every pair meets.
    """
    n = p.shape[0]
    items = world.obstacle_radius.shape[0] + world.wall_a.shape[0]
    blocked = np.zeros(n, dtype=bool)
    if items == 0 or n == 0:
        return blocked
    step = max(1, LINE_BUDGET // (LINE_BYTES_PER_ITEM * items))
    for lo in range(0, n, step):
        part = slice(lo, lo + step)
        blocked[part] = _by_obstacles(p[part], q[part], world) | _by_walls(p[part], q[part], world)
    return blocked


def _meeting(low: Array, high: Array, box_low: Array, box_high: Array) -> tuple[Array, Array]:
    """Pairs ``(segment, box)`` whose boxes meet (with slack): segments' ``[low, high]``
    against M boxes. The boxes are sorted by the middle of their x extent, so each
    segment only looks at the run of boxes whose middle lies within its own x extent
    widened by the widest half box (two ``searchsorted``, runs expanded with
    ``np.repeat``); the full test is applied to those."""
    slack = BOX_SLACK * (1.0 + np.abs(box_low) + np.abs(box_high))
    grown_low, grown_high = box_low - slack, box_high + slack
    middle = 0.5 * (grown_low[:, 0] + grown_high[:, 0])
    widest = float(np.max(grown_high[:, 0] - middle)) + float(np.max(slack))
    order = np.argsort(middle, kind="stable")
    first = np.searchsorted(middle[order], low[:, 0] - widest, side="left")
    count = np.searchsorted(middle[order], high[:, 0] + widest, side="right") - first
    total = int(count.sum())
    seg = np.repeat(np.arange(low.shape[0]), count)
    box = np.take(order, np.repeat(first - (np.cumsum(count) - count), count) + np.arange(total))
    meet = np.take(grown_low[:, 0], box) <= np.take(high[:, 0], seg)
    meet &= np.take(grown_high[:, 0], box) >= np.take(low[:, 0], seg)
    meet &= np.take(grown_low[:, 1], box) <= np.take(high[:, 1], seg)
    meet &= np.take(grown_high[:, 1], box) >= np.take(low[:, 1], seg)
    keep = np.flatnonzero(meet)
    return np.take(seg, keep), np.take(box, keep)


def _by_obstacles(p: Array, q: Array, world: World) -> np.ndarray:
    blocked = np.zeros(p.shape[0], dtype=bool)
    if world.obstacle_radius.size == 0:
        return blocked
    centre, radius = world.obstacle_pos, world.obstacle_radius
    reach = radius[:, None]
    seg, obs = _meeting(np.minimum(p, q), np.maximum(p, q), centre - reach, centre + reach)
    if seg.size == 0:
        return blocked
    start = p[seg]
    d = q[seg] - start
    c = centre[obs] - start
    dd = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]
    t = np.clip((c[:, 0] * d[:, 0] + c[:, 1] * d[:, 1]) / np.where(dd > 0, dd, 1.0), 0.0, 1.0)
    gap = c - t[:, None] * d
    near = gap[:, 0] * gap[:, 0] + gap[:, 1] * gap[:, 1] < radius[obs] ** 2
    blocked[seg[near]] = True
    return blocked


def _by_walls(p: Array, q: Array, world: World) -> np.ndarray:
    blocked = np.zeros(p.shape[0], dtype=bool)
    if world.wall_a.size == 0:
        return blocked
    wa, wb = world.wall_a, world.wall_b
    seg, wall = _meeting(np.minimum(p, q), np.maximum(p, q), np.minimum(wa, wb), np.maximum(wa, wb))
    if seg.size == 0:
        return blocked
    pp, qq, a, b = p[seg], q[seg], wa[wall], wb[wall]

    def cross(u: Array, v: Array) -> Array:
        return u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]

    ab, pq = b - a, qq - pp
    d1, d2 = cross(ab, pp - a), cross(ab, qq - a)
    d3, d4 = cross(pq, a - pp), cross(pq, b - pp)
    crossing = (d1 * d2 < 0) & (d3 * d4 < 0)
    blocked[seg[crossing]] = True
    return blocked
