"""The ceiling: one tick of evade_or_flock written by hand as a single fused numba kernel.

This is what the machine allows for the work of that tick, the yardstick the
batch engine's compiled path is measured against (``bench_crowd.py``,
``bench_ceiling.py``). It does the engine's work and no more: the same grid
(``query_loops.grid_shape`` of the padded view distance), the same exact view
tests (distance, not oneself, 270-degree field of view on a wrapped world), at
most ``max_neighbours`` nearest kept, the same nearest predator and nearest
prey, and the package's own per-row formulas (``steering/formulas.py``,
``vec.py``, ``world/integrate.py``, ``world/streams.py``), so that one tick of
it leaves the state one engine tick leaves (``check`` compares them), with
none of the engine's generality: no trees, no registries, no phases, constants
as scalars, every prey visited once.

Per tick, in one call:

1. every ``sort_every`` ticks the prey's rows are put in grid-cell order (the
   engine re-sorts every 32 ticks, ``sim/cell_order.py``); every tick they are
   binned by cell (counting sort) with their coordinates copied in cell order,
   so a cell's candidates are contiguous;
2. each predator finds its nearest prey (brute force: there are three) and
   pursues it (Buckland's Pursuit with his linear look-ahead), integrated
   into the next state;
3. each prey finds its nearest predator; within ``threat`` it evades it, else
   if it sees a neighbour it blends separation, alignment and cohesion, else
   it wanders (jitter, seek); AccumulateForce, then integration (truncate
   force, ``a = F / m``, truncate speed, move, wrap, heading from velocity)
   into the next state (two buffers, swapped: nobody reads a moved agent).

Not part of the package: ``benchmarks/`` only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from behaviortk.jit.compile import inline, kernel
from behaviortk.sense.query_loops import grid_shape, separation_pair
from behaviortk.steering.formulas import (
    accumulate,
    alignment,
    cohesion,
    evade,
    linear_time,
    pursuit,
    seek,
    usable_time,
    wander_step,
    wander_target,
)
from behaviortk.vec import finite_or_zero, length_xy, normalize_xy, truncate_xy
from behaviortk.world.integrate import accelerate, advance, heading_of
from behaviortk.world.sight import FOV_COS_TOLERANCE
from behaviortk.world.spatial import padded, shortest, shortest_near, wrap_axis
from behaviortk.world.streams import agent_key, mix, uniform

SORT_EVERY = 32
"""Ticks between re-sorts into cell order, as the engine (``sim/cell_order.SORT_EVERY``)."""


@inline
def _cell(x: float, y: float, fx: float, fy: float, nx: int, ny: int) -> int:
    """The grid cell of a point inside the wrapped world (the engine's ``_cell_of``)."""
    cx = min(int(x * fx), nx - 1)
    cy = min(int(y * fy), ny - 1)
    return cy * nx + cx


@inline
def _step(
    i: int, fx: float, fy: float, pos: np.ndarray, vel: np.ndarray, heading: np.ndarray,
    max_force: float, max_speed: float, dt: float, width: float, height: float,
    top_x: float, top_y: float, out_pos: np.ndarray, out_vel: np.ndarray,
    out_heading: np.ndarray,
) -> None:  # fmt: skip
    """AccumulateForce from zero, then the engine's integration step of row ``i`` (mass 1)."""
    fx, fy = accumulate(0.0, 0.0, fx, fy, max_force)
    _, _, vx, vy = accelerate(vel[i, 0], vel[i, 1], fx, fy, 1.0, max_force, dt)
    px, py, vx, vy = advance(pos[i, 0], pos[i, 1], vx, vy, max_speed, dt)
    out_pos[i, 0] = wrap_axis(px, width, top_x)
    out_pos[i, 1] = wrap_axis(py, height, top_y)
    out_vel[i, 0], out_vel[i, 1] = vx, vy
    out_heading[i, 0], out_heading[i, 1] = heading_of(vx, vy, heading[i, 0], heading[i, 1])


@kernel
def tick(
    tick_no: int,
    seed: int,
    # prey state (rows re-sorted into cell order every sort_every ticks), the next state
    pos: np.ndarray,
    vel: np.ndarray,
    heading: np.ndarray,
    wander: np.ndarray,
    ids: np.ndarray,
    out_pos: np.ndarray,
    out_vel: np.ndarray,
    out_heading: np.ndarray,
    # predators and their next state
    ppos: np.ndarray,
    pvel: np.ndarray,
    pheading: np.ndarray,
    out_ppos: np.ndarray,
    out_pvel: np.ndarray,
    out_pheading: np.ndarray,
    # scratch: n prey (cell, rows, xs, ys), cells + 1 (start), a re-sort's
    cell: np.ndarray,
    rows: np.ndarray,
    xs: np.ndarray,
    ys: np.ndarray,
    vxs: np.ndarray,
    vys: np.ndarray,
    start: np.ndarray,
    scratch2: np.ndarray,
    scratch1: np.ndarray,
    dist_buf: np.ndarray,
    # world, grid, prey and predator constants
    width: float,
    height: float,
    dt: float,
    nx: int,
    ny: int,
    view: float,
    cos_limit: float,
    cap: int,
    threat: float,
    w_separation: float,
    w_alignment: float,
    w_cohesion: float,
    prey_max_speed: float,
    prey_max_force: float,
    prey_radius: float,
    wander_slot: int,
    pred_max_speed: float,
    pred_max_force: float,
    sort: bool,
) -> None:
    n = pos.shape[0]
    m = ppos.shape[0]
    fx_cell = nx / width
    fy_cell = ny / height
    top_x = np.nextafter(width, 0.0)
    top_y = np.nextafter(height, 0.0)
    # 1. bin the prey by cell (stable counting sort); re-sort their rows first when due
    start[:] = 0
    for i in range(n):
        c = _cell(pos[i, 0], pos[i, 1], fx_cell, fy_cell, nx, ny)
        cell[i] = c
        start[c + 1] += 1
    for c in range(nx * ny):
        start[c + 1] += start[c]
    for i in range(n):  # rows[slot]: prey i in cell order (start[c] is the fill pointer)
        c = cell[i]
        rows[start[c]] = i
        start[c] += 1
    for c in range(nx * ny, 0, -1):  # fill pointers back to the cells' first slots
        start[c] = start[c - 1]
    start[0] = 0
    if sort:  # rows into cell order: rows[slot] = slot from now on
        for arr in (pos, vel, heading, wander):
            for k in range(n):
                scratch2[k, 0] = arr[rows[k], 0]
                scratch2[k, 1] = arr[rows[k], 1]
            arr[:, :] = scratch2
        for k in range(n):
            scratch1[k] = ids[rows[k]]
        ids[:] = scratch1
        for c in range(nx * ny):
            for k in range(start[c], start[c + 1]):
                rows[k] = k
                cell[k] = c
    for s in range(n):
        xs[s] = pos[rows[s], 0]
        ys[s] = pos[rows[s], 1]
        vxs[s] = vel[rows[s], 0]
        vys[s] = vel[rows[s], 1]
    last = dist_buf.shape[0] - 1
    # 2. predators: nearest prey (the first of the smallest), pursuit, integration
    d2s = np.empty(n)
    for p in range(m):
        xp, yp = ppos[p, 0], ppos[p, 1]
        best = np.inf
        for j in range(n):
            dx = shortest_near(pos[j, 0] - xp, width, True)
            dy = shortest_near(pos[j, 1] - yp, height, True)
            d2 = dx * dx + dy * dy
            d2s[j] = d2
            best = min(best, d2)
        fx = fy = 0.0
        if n > 0:
            a = 0
            while d2s[a] != best:
                a += 1
            tx = xp + shortest(pos[a, 0] - xp, width, True)
            ty = yp + shortest(pos[a, 1] - yp, height, True)
            tvx, tvy = vel[a, 0], vel[a, 1]
            ahead = usable_time(linear_time(tx - xp, ty - yp, pred_max_speed, tvx, tvy))
            found = pursuit(
                xp, yp, pvel[p, 0], pvel[p, 1], pheading[p, 0], pheading[p, 1], pred_max_speed,
                tx, ty, tvx, tvy, heading[a, 0], heading[a, 1], ahead, True, False, -0.95,
            )  # fmt: skip
            fx, fy = finite_or_zero(found[0]), finite_or_zero(found[1])
        _step(
            p, fx, fy, ppos, pvel, pheading, pred_max_force, pred_max_speed, dt, width, height,
            top_x, top_y, out_ppos, out_pvel, out_pheading,
        )  # fmt: skip
    # 3. prey: decide, steer, integrate
    seeded = mix(np.uint64(seed))
    utick = np.uint64(tick_no)
    r2 = view * view
    for i in range(n):
        xi, yi = pos[i, 0], pos[i, 1]
        vxi, vyi = vel[i, 0], vel[i, 1]
        hx, hy = heading[i, 0], heading[i, 1]
        # nearest predator (strict <: the lowest row of the smallest), within threat?
        best = np.inf
        pick = -1
        for p in range(m):
            dx = shortest_near(ppos[p, 0] - xi, width, True)
            dy = shortest_near(ppos[p, 1] - yi, height, True)
            d2 = dx * dx + dy * dy
            if d2 < best:
                best, pick = d2, p
        threatened = False
        tx = ty = 0.0
        if pick >= 0:
            tx = xi + shortest(ppos[pick, 0] - xi, width, True)
            ty = yi + shortest(ppos[pick, 1] - yi, height, True)
            threatened = length_xy(tx - xi, ty - yi) <= threat
        if threatened:
            tvx, tvy = pvel[pick, 0], pvel[pick, 1]
            ahead = usable_time(linear_time(tx - xi, ty - yi, prey_max_speed, tvx, tvy))
            found = evade(xi, yi, vxi, vyi, hx, hy, prey_max_speed, tx, ty, tvx, tvy, ahead, np.inf)
            fx, fy = finite_or_zero(found[0]), finite_or_zero(found[1])
        else:
            # neighbours in the 3 x 3 cells: one run of slots per stencil row (two where it
            # wraps), the exact tests, sums on the fly; over the cap, a second pass keeps
            # the nearest cap (never at this density: the cap is 64)
            c = cell[i]
            cx = c % nx
            cy = c // nx
            if cx == 0:
                a0, a1, b0, b1 = nx - 1, nx, 0, 2
            elif cx == nx - 1:
                a0, a1, b0, b1 = nx - 2, nx, 0, 1
            else:
                a0, a1, b0, b1 = cx - 1, cx + 2, 0, 0
            count = 0
            sx = sy = ax = ay = ox = oy = 0.0
            kth = np.inf
            for rounds in range(2):
                for gy in range(cy - 1, cy + 2):
                    row = (gy + ny if gy < 0 else gy - ny if gy >= ny else gy) * nx
                    for part in range(2):
                        lo = start[row + a0] if part == 0 else start[row + b0]
                        hi = start[row + a1] if part == 0 else start[row + b1]
                        for s in range(lo, hi):
                            j = rows[s]
                            dx = shortest_near(xs[s] - xi, width, True)
                            dy = shortest_near(ys[s] - yi, height, True)
                            d2 = dx * dx + dy * dy
                            dist = math.sqrt(d2)
                            if d2 > r2 or j == i or hx * dx + hy * dy < dist * cos_limit:
                                continue
                            if rounds == 1 and (dist > kth or count >= cap):
                                continue
                            if rounds == 0 and count <= last:
                                dist_buf[count] = dist
                            count += 1
                            tx, ty = separation_pair(i, j, dx, dy)
                            sx += tx
                            sy += ty
                            ax += vxs[s]
                            ay += vys[s]
                            ox += dx
                            oy += dy
                if count <= cap:
                    break
                kth = np.sort(dist_buf[: min(count, last + 1)])[cap - 1]
                count = 0
                sx = sy = ax = ay = ox = oy = 0.0
            if count > 0:  # flock: the weighted sum of separation, alignment, cohesion, truncated
                fax, fay = alignment(count, ax, ay, vxi, vyi)
                fcx, fcy = cohesion(count, ox, oy, xi, yi, vxi, vyi, prey_max_speed)
                fx = finite_or_zero(sx) * w_separation + finite_or_zero(fax) * w_alignment
                fy = finite_or_zero(sy) * w_separation + finite_or_zero(fay) * w_alignment
                fx += finite_or_zero(fcx) * w_cohesion
                fy += finite_or_zero(fcy) * w_cohesion
                fx, fy = truncate_xy(fx, fy, prey_max_force)
            else:  # wander (Buckland): jitter the remembered circle target, seek it
                key = agent_key(seeded, np.uint64(ids[i]), utick)
                u0 = uniform(key, np.uint64(wander_slot))
                u1 = uniform(key, np.uint64(wander_slot + 1))
                step = 80.0 * prey_radius * dt
                lx, ly = wander_step(wander[i, 0], wander[i, 1], u0, u1, step, 1.2 * prey_radius)
                wander[i, 0], wander[i, 1] = lx, ly
                ux, uy = normalize_xy(hx, hy)
                gx, gy = wander_target(lx, ly, 2.0 * prey_radius, xi, yi, ux, uy)
                fx, fy = seek(xi, yi, vxi, vyi, gx, gy, prey_max_speed)
            fx, fy = finite_or_zero(fx), finite_or_zero(fy)
        _step(
            i, fx, fy, pos, vel, heading, prey_max_force, prey_max_speed, dt, width, height,
            top_x, top_y, out_pos, out_vel, out_heading,
        )  # fmt: skip


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
    tick_no: int
    wander_slot: int
    sort_every: int = SORT_EVERY
    """Ticks between re-sorts into cell order (1: every tick; 0: never)."""
    view: float = 100.0
    fov_deg: float = 270.0
    cap: int = 64
    threat: float = 100.0
    flock: tuple[float, float, float] = (10000.0, 250.0, 0.5)
    """The weights of separation, alignment and cohesion (the shipped file's)."""
    prey: tuple[float, float, float] = (110.0, 260.0, 5.0)  # max speed, max force, radius
    predator: tuple[float, float] = (95.0, 200.0)  # max speed, max force
    _scratch: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_sim(cls, sim: Any, sort_every: int = SORT_EVERY) -> Ceiling:
        """The prey and predators of ``sim`` (evade_or_flock) as they are now, at its tick;
        the wander targets the engine remembers, if it has ticked."""
        ag = sim.agents
        prey, pred = ag.slices["prey"], ag.slices["predator"]
        tree = sim.trees["prey"]
        leaf = next(k for k, s in enumerate(tree.steering) if tree.nodes[s].rand_slot >= 0)
        memory = sim.memory.get(("prey", leaf), {}).get("wander_target")
        n = prey.stop - prey.start
        wander = np.full((n, 2), np.nan) if memory is None else memory[prey].copy()
        w = sim.world
        return cls(
            pos=ag.pos[prey].copy(),
            vel=ag.vel[prey].copy(),
            heading=ag.heading[prey].copy(),
            wander=wander,
            ids=ag.ids[prey].copy(),
            ppos=ag.pos[pred].copy(),
            pvel=ag.vel[pred].copy(),
            pheading=ag.heading[pred].copy(),
            width=float(w.width),
            height=float(w.height),
            dt=float(sim.dt),
            seed=int(sim.seed),
            tick_no=int(sim.tick),
            wander_slot=int(tree.nodes[tree.steering[leaf]].rand_slot),
            sort_every=sort_every,
            view=float(ag.view_distance[prey.start]),
            flock=flock_weights(tree),
        )

    def __post_init__(self) -> None:
        n = self.pos.shape[0]
        nx, ny, rx, ry = grid_shape(self.width, self.height, padded(self.view), n, self.cap)
        if rx != 1 or ry != 1 or nx < 3 or ny < 3:
            raise ValueError("the ceiling covers crowds whose grid cells are a view wide")
        self._grid = (nx, ny)
        s = self._scratch
        s["cell"] = np.empty(n, dtype=np.int64)
        s["rows"] = np.empty(n, dtype=np.int64)
        s["xs"], s["ys"] = np.empty(n), np.empty(n)
        s["vxs"], s["vys"] = np.empty(n), np.empty(n)
        s["start"] = np.zeros(nx * ny + 1, dtype=np.int64)
        s["s2"], s["s1"] = np.empty((n, 2)), np.empty(n, dtype=np.int64)
        s["dist"] = np.empty(4096)
        s["next"] = [np.empty_like(a) for a in (self.pos, self.vel, self.heading)]
        s["pnext"] = [np.empty_like(a) for a in (self.ppos, self.pvel, self.pheading)]

    def step(self) -> None:
        s = self._scratch
        nx, ny = self._grid
        every = self.sort_every
        sort = every > 0 and self.tick_no % every == 0
        half = math.radians(self.fov_deg) / 2.0
        nxt, pnxt = s["next"], s["pnext"]
        tick(
            self.tick_no, self.seed,
            self.pos, self.vel, self.heading, self.wander, self.ids, *nxt,
            self.ppos, self.pvel, self.pheading, *pnxt,
            s["cell"], s["rows"], s["xs"], s["ys"], s["vxs"], s["vys"], s["start"], s["s2"], s["s1"], s["dist"],
            self.width, self.height, self.dt, nx, ny, self.view,
            math.cos(half) - FOV_COS_TOLERANCE, self.cap, self.threat, *self.flock, *self.prey,
            self.wander_slot, *self.predator, sort,
        )  # fmt: skip
        s["next"] = [self.pos, self.vel, self.heading]
        s["pnext"] = [self.ppos, self.pvel, self.pheading]
        self.pos, self.vel, self.heading = nxt
        self.ppos, self.pvel, self.pheading = pnxt
        self.tick_no += 1


def flock_weights(tree: Any) -> tuple[float, float, float]:
    """The weights of the prey tree's separation, alignment and cohesion (the ``flock`` blend)."""
    blend = next(n.model for n in tree.nodes if n.model.type == "blend")
    weights = {child.type: float(child.weight) for child in blend.children}
    return weights["separation"], weights["alignment"], weights["cohesion"]


def check(sim: Any, ticks: int = 1) -> float:
    """Step ``sim`` (evade_or_flock, batch engine) and a ceiling taken from it ``ticks`` times;
    the largest difference of any prey's or predator's position, velocity or heading
    (agents matched by id): the two do the same work when this is round-off."""
    ceiling = Ceiling.from_sim(sim)
    for _ in range(ticks):
        sim.step()
        ceiling.step()
    ag = sim.agents
    prey, pred = ag.slices["prey"], ag.slices["predator"]
    order = np.argsort(ag.ids[prey])
    mine = np.argsort(ceiling.ids)
    worst = 0.0
    for theirs, ours in (
        (ag.pos[prey][order], ceiling.pos[mine]),
        (ag.vel[prey][order], ceiling.vel[mine]),
        (ag.heading[prey][order], ceiling.heading[mine]),
        (ag.pos[pred], ceiling.ppos),
        (ag.vel[pred], ceiling.pvel),
        (ag.heading[pred], ceiling.pheading),
    ):
        worst = max(worst, float(np.abs(theirs - ours).max()))
    return worst
