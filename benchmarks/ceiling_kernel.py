"""The ceiling: one tick of evade_or_flock written by hand as a single fused numba kernel.

This is what the machine allows for the work of that tick, the yardstick the
batch engine's compiled path is measured against (``bench_crowd.py``): the
same grid, the same view distance and field-of-view tests on a wrapped world,
the same nearest predator, the same forces and the same integration, with
none of the engine's generality (no trees, no registries, constants as
scalars, one pass per agent).

Per tick:

1. prey are binned in a grid of cells at least the view distance wide
   (counting sort) and every prey array is put in cell order, so a cell's
   agents are contiguous in memory (``sort=False`` skips that, for comparison);
2. each prey draws its two wander numbers (the engine's counter hash,
   ``world/streams.py``);
3. each predator finds its nearest prey (brute force: there are three);
4. each prey finds its nearest predator; within ``threat`` it evades it
   (Buckland's linear look-ahead), else if it sees a neighbour (view
   distance, field of view, at most ``cap`` nearest) it blends separation,
   alignment and cohesion, else it wanders;
5. predators pursue their nearest prey (Buckland's facing test);
6. everyone is integrated (truncate force, ``a = F / m``, truncate speed,
   move, wrap, heading from velocity).

Not part of the package: ``benchmarks/`` only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

EPS = 1e-12
MIN_SEP2 = 1e-6
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _mix(z: np.uint64) -> np.uint64:
    z = z + GOLDEN
    z = (z ^ (z >> np.uint64(30))) * M1
    z = (z ^ (z >> np.uint64(27))) * M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _neighbour_cell(c: int, n: int, size: float) -> tuple[int, float]:
    """Cell ``c`` (at most one past either edge) wrapped into ``0..n-1``, and the shift
    that puts its agents beside the observer (wrapped world)."""
    if c < 0:
        return c + n, -size
    if c >= n:
        return c - n, size
    return c, 0.0


@njit(cache=True, inline="always")
def _uniform(seed: np.uint64, agent: np.int64, tick: np.int64, slot: np.int64) -> float:
    h = _mix(seed)
    h = _mix(h ^ np.uint64(agent))
    h = _mix(h ^ np.uint64(tick))
    h = _mix(h ^ np.uint64(slot))
    return float(h >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def _wrap_d(d: float, size: float) -> float:
    if d > 0.5 * size:
        return d - size
    if d < -0.5 * size:
        return d + size
    return d


@njit(cache=True, inline="always")
def _wrap_p(p: float, size: float) -> float:
    if p < 0.0:
        p += size
    elif p >= size:
        p -= size
    if p < 0.0 or p >= size:
        p = p - size * math.floor(p / size)
    return p


@njit(cache=True, inline="always")
def _integrate(
    i: int,
    fx: float,
    fy: float,
    pos: np.ndarray,
    vel: np.ndarray,
    heading: np.ndarray,
    max_force: float,
    mass: float,
    max_speed: float,
    dt: float,
    width: float,
    height: float,
) -> None:
    f = math.sqrt(fx * fx + fy * fy)
    if f > max_force:
        s = max_force / f
        fx *= s
        fy *= s
    vx = vel[i, 0] + fx / mass * dt
    vy = vel[i, 1] + fy / mass * dt
    sp = math.sqrt(vx * vx + vy * vy)
    if sp > max_speed:
        s = max_speed / sp
        vx *= s
        vy *= s
        sp = max_speed
    pos[i, 0] = _wrap_p(pos[i, 0] + vx * dt, width)
    pos[i, 1] = _wrap_p(pos[i, 1] + vy * dt, height)
    vel[i, 0] = vx
    vel[i, 1] = vy
    if sp > 1e-8:
        heading[i, 0] = vx / sp
        heading[i, 1] = vy / sp


@njit(cache=True)
def tick(
    tick_no: int,
    seed: int,
    # prey state (rows permuted into cell order when sort is on)
    pos: np.ndarray,
    vel: np.ndarray,
    heading: np.ndarray,
    wander: np.ndarray,
    ids: np.ndarray,
    # predators
    ppos: np.ndarray,
    pvel: np.ndarray,
    pheading: np.ndarray,
    # scratch (n prey)
    cell: np.ndarray,
    order: np.ndarray,
    scratch2: np.ndarray,
    scratch1: np.ndarray,
    force: np.ndarray,
    # world, prey and predator constants
    width: float,
    height: float,
    dt: float,
    view: float,
    cos_half: float,
    cap: int,
    threat: float,
    prey_max_speed: float,
    prey_max_force: float,
    prey_radius: float,
    pred_max_speed: float,
    pred_max_force: float,
    sort: bool,
) -> None:
    n = pos.shape[0]
    m = ppos.shape[0]
    nx = max(3, int(width // view))
    ny = max(3, int(height // view))
    fx_cell = nx / width
    fy_cell = ny / height
    n_cells = nx * ny
    start = np.zeros(n_cells + 1, dtype=np.int64)
    for i in range(n):
        cx = min(int(pos[i, 0] * fx_cell), nx - 1)
        cy = min(int(pos[i, 1] * fy_cell), ny - 1)
        c = cy * nx + cx
        cell[i] = c
        start[c + 1] += 1
    for c in range(n_cells):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    for i in range(n):
        c = cell[i]
        order[fill[c]] = i
        fill[c] += 1
    if sort:  # put every prey array in cell order (nearly in order already: cheap)
        for arr in (pos, vel, heading, wander):
            for k in range(n):
                scratch2[k, 0] = arr[order[k], 0]
                scratch2[k, 1] = arr[order[k], 1]
            arr[:, :] = scratch2
        for k in range(n):
            scratch1[k] = ids[order[k]]
        for k in range(n):
            ids[k] = np.int64(scratch1[k])
        for k in range(n):
            order[k] = k  # rows are now in cell order
        for c in range(n_cells):
            for k in range(start[c], start[c + 1]):
                cell[k] = c
    # predators: nearest prey, pursuit (uses prey state before anyone moves)
    pforce = np.zeros((m, 2))
    for p in range(m):
        best = np.inf
        pick = -1
        for i in range(n):
            dx = _wrap_d(pos[i, 0] - ppos[p, 0], width)
            dy = _wrap_d(pos[i, 1] - ppos[p, 1], height)
            d2 = dx * dx + dy * dy
            if d2 < best:
                best = d2
                pick = i
        if pick < 0:
            continue
        tx = ppos[p, 0] + _wrap_d(pos[pick, 0] - ppos[p, 0], width)
        ty = ppos[p, 1] + _wrap_d(pos[pick, 1] - ppos[p, 1], height)
        tox, toy = tx - ppos[p, 0], ty - ppos[p, 1]
        ahead = tox * pheading[p, 0] + toy * pheading[p, 1] > 0.0
        facing = pheading[p, 0] * heading[pick, 0] + pheading[p, 1] * heading[pick, 1] < -0.95
        if not (ahead and facing):
            tvx, tvy = vel[pick, 0], vel[pick, 1]
            den = pred_max_speed + math.sqrt(tvx * tvx + tvy * tvy)
            t = math.sqrt(tox * tox + toy * toy) / den if den > EPS else 0.0
            tx += tvx * t
            ty += tvy * t
        ax, ay = tx - ppos[p, 0], ty - ppos[p, 1]
        al = math.sqrt(ax * ax + ay * ay)
        if al > EPS:
            ax, ay = ax / al, ay / al
        else:
            ax, ay = 0.0, 0.0
        pforce[p, 0] = ax * pred_max_speed - pvel[p, 0]
        pforce[p, 1] = ay * pred_max_speed - pvel[p, 1]
    # prey: decide and steer
    useed = np.uint64(seed)
    dist_buf = np.empty(4096)
    for i in range(n):
        xi, yi = pos[i, 0], pos[i, 1]
        # nearest predator
        best = np.inf
        pick = -1
        bdx = 0.0
        bdy = 0.0
        for p in range(m):
            dx = _wrap_d(ppos[p, 0] - xi, width)
            dy = _wrap_d(ppos[p, 1] - yi, height)
            d2 = dx * dx + dy * dy
            if d2 < best:
                best, pick, bdx, bdy = d2, p, dx, dy
        fx = 0.0
        fy = 0.0
        if pick >= 0 and math.sqrt(best) <= threat:
            tvx, tvy = pvel[pick, 0], pvel[pick, 1]
            den = prey_max_speed + math.sqrt(tvx * tvx + tvy * tvy)
            t = math.sqrt(best) / den if den > EPS else 0.0
            awx = -(bdx + tvx * t)
            awy = -(bdy + tvy * t)
            al = math.sqrt(awx * awx + awy * awy)
            if al > EPS:
                awx, awy = awx / al, awy / al
            else:
                awx, awy = heading[i, 0], heading[i, 1]
            fx = awx * prey_max_speed - vel[i, 0]
            fy = awy * prey_max_speed - vel[i, 1]
        else:
            c = cell[i]
            cx = c % nx
            cy = c // nx
            hx, hy = heading[i, 0], heading[i, 1]
            count = 0
            sx = sy = ax = ay = cxs = cys = 0.0
            r2 = view * view
            for oy in range(-1, 2):
                gy, shy = _neighbour_cell(cy + oy, ny, height)
                for ox in range(-1, 2):
                    gx, shx = _neighbour_cell(cx + ox, nx, width)
                    g = gy * nx + gx
                    for k in range(start[g], start[g + 1]):
                        j = order[k]
                        if j == i:
                            continue
                        dx = pos[j, 0] + shx - xi
                        dy = pos[j, 1] + shy - yi
                        d2 = dx * dx + dy * dy
                        if d2 > r2:
                            continue
                        dd = math.sqrt(d2)
                        if hx * dx + hy * dy < dd * cos_half:
                            continue
                        if count < dist_buf.shape[0]:
                            dist_buf[count] = dd
                        count += 1
                        inv = -1.0 / max(d2, MIN_SEP2)
                        sx += dx * inv
                        sy += dy * inv
                        ax += vel[j, 0]
                        ay += vel[j, 1]
                        cxs += dx
                        cys += dy
            if count > cap:
                # keep the nearest cap: a second pass above the cap-th distance (rare)
                kth = np.sort(dist_buf[: min(count, dist_buf.shape[0])])[cap - 1]
                count = 0
                sx = sy = ax = ay = cxs = cys = 0.0
                for oy in range(-1, 2):
                    gy, shy = _neighbour_cell(cy + oy, ny, height)
                    for ox in range(-1, 2):
                        gx, shx = _neighbour_cell(cx + ox, nx, width)
                        g = gy * nx + gx
                        for k in range(start[g], start[g + 1]):
                            j = order[k]
                            if j == i:
                                continue
                            dx = pos[j, 0] + shx - xi
                            dy = pos[j, 1] + shy - yi
                            d2 = dx * dx + dy * dy
                            dd = math.sqrt(d2)
                            if dd > kth or hx * dx + hy * dy < dd * cos_half or count >= cap:
                                continue
                            count += 1
                            inv = -1.0 / max(d2, MIN_SEP2)
                            sx += dx * inv
                            sy += dy * inv
                            ax += vel[j, 0]
                            ay += vel[j, 1]
                            cxs += dx
                            cys += dy
            if count > 0:
                # blend: 1.5 separation + 1.0 alignment + 0.8 cohesion, truncated
                inv_n = 1.0 / count
                ax = ax * inv_n - vel[i, 0]
                ay = ay * inv_n - vel[i, 1]
                tx, ty = cxs * inv_n, cys * inv_n
                tl = math.sqrt(tx * tx + ty * ty)
                if tl > EPS:
                    tx, ty = tx / tl, ty / tl
                else:
                    tx, ty = 0.0, 0.0
                kx = tx * prey_max_speed - vel[i, 0]
                ky = ty * prey_max_speed - vel[i, 1]
                fx = 1.5 * sx + ax + 0.8 * kx
                fy = 1.5 * sy + ay + 0.8 * ky
            else:
                # wander (Buckland): jitter the circle target, seek it
                r = 1.2 * prey_radius
                wx, wy = wander[i, 0], wander[i, 1]
                if not (math.isfinite(wx) and math.isfinite(wy)):
                    wx, wy = r, 0.0
                step = 80.0 * prey_radius * dt
                u0 = _uniform(useed, ids[i], tick_no, 0)
                u1 = _uniform(useed, ids[i], tick_no, 1)
                wx += (2.0 * u0 - 1.0) * step
                wy += (2.0 * u1 - 1.0) * step
                wl = math.sqrt(wx * wx + wy * wy)
                if wl > EPS:
                    wx, wy = wx / wl * r, wy / wl * r
                else:
                    wx, wy = r, 0.0
                wander[i, 0], wander[i, 1] = wx, wy
                lx = wx + 2.0 * prey_radius
                gx = xi + hx * lx - hy * wy
                gy = yi + hy * lx + hx * wy
                dx, dy = gx - xi, gy - yi
                dl = math.sqrt(dx * dx + dy * dy)
                if dl > EPS:
                    dx, dy = dx / dl, dy / dl
                else:
                    dx, dy = 0.0, 0.0
                fx = dx * prey_max_speed - vel[i, 0]
                fy = dy * prey_max_speed - vel[i, 1]
        force[i, 0] = fx
        force[i, 1] = fy
    for i in range(n):
        _integrate(
            i,
            force[i, 0],
            force[i, 1],
            pos,
            vel,
            heading,
            prey_max_force,
            1.0,
            prey_max_speed,
            dt,
            width,
            height,
        )
    for p in range(m):
        _integrate(
            p,
            pforce[p, 0],
            pforce[p, 1],
            ppos,
            pvel,
            pheading,
            pred_max_force,
            1.0,
            pred_max_speed,
            dt,
            width,
            height,
        )


@dataclass
class Ceiling:
    """evade_or_flock's state for the hand-written tick, taken from a built Simulation."""

    pos: np.ndarray
    vel: np.ndarray
    heading: np.ndarray
    wander: np.ndarray
    ids: np.ndarray
    ppos: np.ndarray
    pvel: np.ndarray
    pheading: np.ndarray
    width: float
    height: float
    dt: float
    seed: int
    sort: bool = True
    tick_no: int = 0

    @classmethod
    def from_sim(cls, sim: object, sort: bool = True) -> Ceiling:
        ag = sim.agents  # type: ignore[attr-defined]
        prey, pred = ag.slices["prey"], ag.slices["predator"]
        w = sim.world  # type: ignore[attr-defined]
        n = prey.stop - prey.start
        return cls(
            pos=ag.pos[prey].copy(),
            vel=ag.vel[prey].copy(),
            heading=ag.heading[prey].copy(),
            wander=np.full((n, 2), np.nan),
            ids=ag.ids[prey].copy(),
            ppos=ag.pos[pred].copy(),
            pvel=ag.vel[pred].copy(),
            pheading=ag.heading[pred].copy(),
            width=float(w.width),
            height=float(w.height),
            dt=float(sim.dt),  # type: ignore[attr-defined]
            seed=int(sim.seed),  # type: ignore[attr-defined]
            sort=sort,
        )

    def __post_init__(self) -> None:
        n = self.pos.shape[0]
        self._cell = np.empty(n, dtype=np.int64)
        self._order = np.empty(n, dtype=np.int64)
        self._s2 = np.empty((n, 2))
        self._s1 = np.empty(n, dtype=np.int64)
        self._force = np.empty((n, 2))

    def step(self) -> None:
        tick(
            self.tick_no,
            self.seed,
            self.pos,
            self.vel,
            self.heading,
            self.wander,
            self.ids,
            self.ppos,
            self.pvel,
            self.pheading,
            self._cell,
            self._order,
            self._s2,
            self._s1,
            self._force,
            self.width,
            self.height,
            self.dt,
            60.0,
            math.cos(math.radians(135.0)) - 1e-9,
            64,
            100.0,
            110.0,
            260.0,
            5.0,
            95.0,
            200.0,
            self.sort,
        )
        self.tick_no += 1
