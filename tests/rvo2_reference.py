"""A test-only transcription of the RVO2 library (github.com/snape/RVO2, src/Agent.cc:
``computeNewVelocity``, ``linearProgram1/2/3``, ``insertAgentNeighbor``,
``insertObstacleNeighbor``; src/RVOSimulator.cc ``addObstacle``), written straight from its
C++ source in plain Python, one agent at a time, on doubles, separate from the product
code (``behaviortk/steering/orca*.py``) so that each checks the other. Neighbours are
found by brute force instead of RVO2's k-d trees (the same sets: within range, nearest
first, capped, edges seen from their right side only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

EPSILON = 0.00001


def det(a, b):
    return a[0] * b[1] - a[1] * b[0]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1]


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1])


def add(a, b):
    return (a[0] + b[0], a[1] + b[1])


def mul(s, a):
    return (s * a[0], s * a[1])


def div(a, s):
    inv = 1.0 / s
    return (a[0] * inv, a[1] * inv)


def abs_sq(a):
    return dot(a, a)


def normalize(a):
    return div(a, math.sqrt(abs_sq(a)))


def left_of(a, b, c):
    return det(sub(a, c), sub(b, a))


@dataclass
class Vertex:
    point: tuple
    direction: tuple = (0.0, 0.0)
    convex: bool = True
    next: Vertex | None = None
    previous: Vertex | None = None


@dataclass
class Agent:
    position: tuple
    velocity: tuple
    pref: tuple
    radius: float
    max_speed: float
    neighbor_dist: float
    max_neighbors: int
    time_horizon: float
    time_horizon_obst: float
    new_velocity: tuple = (0.0, 0.0)
    lines: list = field(default_factory=list)


def add_obstacle(obstacles: list[Vertex], vertices: list[tuple]) -> None:
    """RVOSimulator::addObstacle: vertices counterclockwise (two: a segment)."""
    made = [Vertex(tuple(map(float, v))) for v in vertices]
    n = len(made)
    for i, o in enumerate(made):
        o.previous = made[i - 1]
        o.next = made[(i + 1) % n]
        o.direction = normalize(sub(vertices[(i + 1) % n], vertices[i]))
        if n == 2:
            o.convex = True
        else:
            o.convex = left_of(vertices[i - 1], vertices[i], vertices[(i + 1) % n]) >= 0.0
    obstacles.extend(made)


def linear_program1(lines, line_no, radius, opt, direction_opt):
    point, direction = lines[line_no]
    dot_product = dot(point, direction)
    discriminant = dot_product * dot_product + radius * radius - abs_sq(point)
    if discriminant < 0.0:
        return None
    sqrt_d = math.sqrt(discriminant)
    t_left = -dot_product - sqrt_d
    t_right = -dot_product + sqrt_d
    for i in range(line_no):
        denominator = det(direction, lines[i][1])
        numerator = det(lines[i][1], sub(point, lines[i][0]))
        if math.fabs(denominator) <= EPSILON:
            if numerator < 0.0:
                return None
            continue
        t = numerator / denominator
        if denominator >= 0.0:
            t_right = min(t_right, t)
        else:
            t_left = max(t_left, t)
        if t_left > t_right:
            return None
    if direction_opt:
        if dot(opt, direction) > 0.0:
            return add(point, mul(t_right, direction))
        return add(point, mul(t_left, direction))
    t = dot(direction, sub(opt, point))
    if t < t_left:
        return add(point, mul(t_left, direction))
    if t > t_right:
        return add(point, mul(t_right, direction))
    return add(point, mul(t, direction))


def linear_program2(lines, radius, opt, direction_opt):
    if direction_opt:
        result = mul(radius, opt)
    elif abs_sq(opt) > radius * radius:
        result = mul(radius, normalize(opt))
    else:
        result = opt
    for i in range(len(lines)):
        if det(lines[i][1], sub(lines[i][0], result)) > 0.0:
            found = linear_program1(lines, i, radius, opt, direction_opt)
            if found is None:
                return i, result
            result = found
    return len(lines), result


def linear_program3(lines, num_obst, begin, radius, result):
    distance = 0.0
    for i in range(begin, len(lines)):
        pi, di = lines[i]
        if det(di, sub(pi, result)) > distance:
            proj = list(lines[:num_obst])
            for j in range(num_obst, i):
                pj, dj = lines[j]
                determinant = det(di, dj)
                if math.fabs(determinant) <= EPSILON:
                    if dot(di, dj) > 0.0:
                        continue
                    point = mul(0.5, add(pi, pj))
                else:
                    point = add(pi, mul(det(dj, sub(pi, pj)) / determinant, di))
                proj.append((point, normalize(sub(dj, di))))
            fail, found = linear_program2(proj, radius, (-di[1], di[0]), True)
            if fail >= len(proj):
                result = found
            distance = det(di, sub(pi, result))
    return result


def agent_neighbors(agent, agents):
    range_sq = agent.neighbor_dist * agent.neighbor_dist
    found = []
    for other in agents:
        if other is agent:
            continue
        dist_sq = abs_sq(sub(agent.position, other.position))
        if dist_sq < range_sq:
            if len(found) < agent.max_neighbors:
                found.append((dist_sq, other))
            i = len(found) - 1
            while i != 0 and dist_sq < found[i - 1][0]:
                found[i] = found[i - 1]
                i -= 1
            found[i] = (dist_sq, other)
            if len(found) == agent.max_neighbors:
                range_sq = found[-1][0]
    return [o for _, o in found]


def obstacle_neighbors(agent, obstacles):
    reach = agent.time_horizon_obst * agent.max_speed + agent.radius
    range_sq = reach * reach
    found = []
    for o in obstacles:
        if left_of(o.point, o.next.point, agent.position) >= 0.0:
            continue  # the k-d tree inserts an edge only when the agent is on its right
        nxt = o.next
        r = dot(sub(agent.position, o.point), sub(nxt.point, o.point)) / abs_sq(
            sub(nxt.point, o.point)
        )
        if r < 0.0:
            dist_sq = abs_sq(sub(agent.position, o.point))
        elif r > 1.0:
            dist_sq = abs_sq(sub(agent.position, nxt.point))
        else:
            dist_sq = abs_sq(sub(agent.position, add(o.point, mul(r, sub(nxt.point, o.point)))))
        if dist_sq < range_sq:
            found.append((dist_sq, o))
            i = len(found) - 1
            while i != 0 and dist_sq < found[i - 1][0]:
                found[i] = found[i - 1]
                i -= 1
            found[i] = (dist_sq, o)
    return [o for _, o in found]


def compute_new_velocity(agent, agents, obstacles, time_step):
    """Agent::computeNewVelocity, line for line."""
    lines = []
    inv_obst = 1.0 / agent.time_horizon_obst
    position, velocity, radius = agent.position, agent.velocity, agent.radius
    for obstacle1 in obstacle_neighbors(agent, obstacles):
        obstacle2 = obstacle1.next
        rp1 = sub(obstacle1.point, position)
        rp2 = sub(obstacle2.point, position)
        if any(
            det(sub(mul(inv_obst, rp1), p), d) - inv_obst * radius >= -EPSILON
            and det(sub(mul(inv_obst, rp2), p), d) - inv_obst * radius >= -EPSILON
            for p, d in lines
        ):
            continue
        dist_sq1, dist_sq2 = abs_sq(rp1), abs_sq(rp2)
        radius_sq = radius * radius
        ov = sub(obstacle2.point, obstacle1.point)
        s = dot((-rp1[0], -rp1[1]), ov) / abs_sq(ov)
        dist_sq_line = abs_sq(sub((-rp1[0], -rp1[1]), mul(s, ov)))
        if s < 0.0 and dist_sq1 <= radius_sq:
            if obstacle1.convex:
                lines.append(((0.0, 0.0), normalize((-rp1[1], rp1[0]))))
            continue
        if s > 1.0 and dist_sq2 <= radius_sq:
            if obstacle2.convex and det(rp2, obstacle2.direction) >= 0.0:
                lines.append(((0.0, 0.0), normalize((-rp2[1], rp2[0]))))
            continue
        if 0.0 <= s <= 1.0 and dist_sq_line <= radius_sq:
            d = obstacle1.direction
            lines.append(((0.0, 0.0), (-d[0], -d[1])))
            continue
        if s < 0.0 and dist_sq_line <= radius_sq:
            if not obstacle1.convex:
                continue
            obstacle2 = obstacle1
            leg1 = math.sqrt(dist_sq1 - radius_sq)
            left_leg = div(
                (rp1[0] * leg1 - rp1[1] * radius, rp1[0] * radius + rp1[1] * leg1), dist_sq1
            )
            right_leg = div(
                (rp1[0] * leg1 + rp1[1] * radius, -rp1[0] * radius + rp1[1] * leg1), dist_sq1
            )
        elif s > 1.0 and dist_sq_line <= radius_sq:
            if not obstacle2.convex:
                continue
            obstacle1 = obstacle2
            leg2 = math.sqrt(dist_sq2 - radius_sq)
            left_leg = div(
                (rp2[0] * leg2 - rp2[1] * radius, rp2[0] * radius + rp2[1] * leg2), dist_sq2
            )
            right_leg = div(
                (rp2[0] * leg2 + rp2[1] * radius, -rp2[0] * radius + rp2[1] * leg2), dist_sq2
            )
        else:
            if obstacle1.convex:
                leg1 = math.sqrt(dist_sq1 - radius_sq)
                left_leg = div(
                    (rp1[0] * leg1 - rp1[1] * radius, rp1[0] * radius + rp1[1] * leg1), dist_sq1
                )
            else:
                left_leg = (-obstacle1.direction[0], -obstacle1.direction[1])
            if obstacle2.convex:
                leg2 = math.sqrt(dist_sq2 - radius_sq)
                right_leg = div(
                    (rp2[0] * leg2 + rp2[1] * radius, -rp2[0] * radius + rp2[1] * leg2), dist_sq2
                )
            else:
                right_leg = obstacle1.direction
        left_neighbor = obstacle1.previous
        left_foreign = right_foreign = False
        back = (-left_neighbor.direction[0], -left_neighbor.direction[1])
        if obstacle1.convex and det(left_leg, back) >= 0.0:
            left_leg, left_foreign = back, True
        if obstacle2.convex and det(right_leg, obstacle2.direction) <= 0.0:
            right_leg, right_foreign = obstacle2.direction, True
        left_cutoff = mul(inv_obst, sub(obstacle1.point, position))
        right_cutoff = mul(inv_obst, sub(obstacle2.point, position))
        cutoff_vec = sub(right_cutoff, left_cutoff)
        same = obstacle1 is obstacle2
        t = 0.5 if same else dot(sub(velocity, left_cutoff), cutoff_vec) / abs_sq(cutoff_vec)
        t_left = dot(sub(velocity, left_cutoff), left_leg)
        t_right = dot(sub(velocity, right_cutoff), right_leg)
        k = radius * inv_obst
        if (t < 0.0 and t_left < 0.0) or (same and t_left < 0.0 and t_right < 0.0):
            w = normalize(sub(velocity, left_cutoff))
            lines.append((add(left_cutoff, mul(k, w)), (w[1], -w[0])))
            continue
        if t > 1.0 and t_right < 0.0:
            w = normalize(sub(velocity, right_cutoff))
            lines.append((add(right_cutoff, mul(k, w)), (w[1], -w[0])))
            continue
        inf = math.inf
        d_cut = (
            inf
            if (t < 0.0 or t > 1.0 or same)
            else abs_sq(sub(velocity, add(left_cutoff, mul(t, cutoff_vec))))
        )
        d_left = (
            inf if t_left < 0.0 else abs_sq(sub(velocity, add(left_cutoff, mul(t_left, left_leg))))
        )
        d_right = (
            inf
            if t_right < 0.0
            else abs_sq(sub(velocity, add(right_cutoff, mul(t_right, right_leg))))
        )
        if d_cut <= d_left and d_cut <= d_right:
            d = (-obstacle1.direction[0], -obstacle1.direction[1])
            lines.append((add(left_cutoff, mul(k, (-d[1], d[0]))), d))
            continue
        if d_left <= d_right:
            if left_foreign:
                continue
            d = left_leg
            lines.append((add(left_cutoff, mul(k, (-d[1], d[0]))), d))
            continue
        if right_foreign:
            continue
        d = (-right_leg[0], -right_leg[1])
        lines.append((add(right_cutoff, mul(k, (-d[1], d[0]))), d))
    num_obst = len(lines)
    inv_h = 1.0 / agent.time_horizon
    for other in agent_neighbors(agent, agents):
        rel_pos = sub(other.position, position)
        rel_vel = sub(velocity, other.velocity)
        dist_sq = abs_sq(rel_pos)
        combined = radius + other.radius
        combined_sq = combined * combined
        if dist_sq > combined_sq:
            w = sub(rel_vel, mul(inv_h, rel_pos))
            w_len_sq = abs_sq(w)
            dp = dot(w, rel_pos)
            if dp < 0.0 and dp * dp > combined_sq * w_len_sq:
                w_len = math.sqrt(w_len_sq)
                unit_w = div(w, w_len)
                direction = (unit_w[1], -unit_w[0])
                u = mul(combined * inv_h - w_len, unit_w)
            else:
                leg = math.sqrt(dist_sq - combined_sq)
                if det(rel_pos, w) > 0.0:
                    direction = div(
                        (
                            rel_pos[0] * leg - rel_pos[1] * combined,
                            rel_pos[0] * combined + rel_pos[1] * leg,
                        ),
                        dist_sq,
                    )
                else:
                    d = div(
                        (
                            rel_pos[0] * leg + rel_pos[1] * combined,
                            -rel_pos[0] * combined + rel_pos[1] * leg,
                        ),
                        dist_sq,
                    )
                    direction = (-d[0], -d[1])
                u = sub(mul(dot(rel_vel, direction), direction), rel_vel)
        else:
            inv_step = 1.0 / time_step
            w = sub(rel_vel, mul(inv_step, rel_pos))
            w_len = math.sqrt(abs_sq(w))
            unit_w = div(w, w_len)
            direction = (unit_w[1], -unit_w[0])
            u = mul(combined * inv_step - w_len, unit_w)
        lines.append((add(velocity, mul(0.5, u)), direction))
    fail, result = linear_program2(lines, agent.max_speed, agent.pref, False)
    if fail < len(lines):
        result = linear_program3(lines, num_obst, fail, agent.max_speed, result)
    agent.lines = lines
    agent.new_velocity = result
    return result


def step(agents, obstacles, time_step):
    """RVOSimulator::doStep: every new velocity from the same state, then move."""
    for a in agents:
        compute_new_velocity(a, agents, obstacles, time_step)
    for a in agents:
        a.velocity = a.new_velocity
        a.position = add(a.position, mul(time_step, a.velocity))
