"""Lennard-Jones potential around obstacles, evaluated on a grid into a texture.

Bourg & Seemann (AI for Game Developers, ch. 5): ``U = -A / d**n + B / d**m``
with ``d = |r| / R`` (distance to the obstacle centre over its radius);
obstacles farther than ``cutoff`` add nothing. Potentials of all obstacles add
up. The grid is NumPy over (cells x obstacles); the RGBA image is uploaded once
and only rebuilt when the obstacles or parameters change.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.steering import kernels
from behaviortk.steering.kernels import LJConstants
from behaviortk.steering.primitives import LJAvoidance
from behaviortk.vec import EPS, Array


def lj_potential(points: Array, centers: Array, radii: Array, p: LJConstants) -> Array:
    """Summed potential at each point ``(P, 2)`` from obstacles ``(M, 2)``, ``(M,)``.

    Uses the steering kernel's potential and the same cut-off (centre distance),
    so the picture shows exactly the field ``lj_avoidance`` steers by.
    """
    if centers.shape[0] == 0:
        return np.zeros(points.shape[0])
    r = points[:, None, :] - centers[None, :, :]  # (P, M, 2)
    dist = np.sqrt(np.einsum("pmk,pmk->pm", r, r))
    d = dist / np.maximum(radii, EPS)[None, :]
    u = kernels.lj_potential(d, p.a, p.n, p.b, p.m)
    return np.where(dist <= p.cutoff, u, 0.0).sum(axis=1)


def potential_grid(
    width: float, height: float, cols: int, rows: int, centers: Array, radii: Array, p: LJConstants
) -> Array:
    """``(rows, cols)`` potential at cell centres; row 0 is the bottom of the world."""
    xs = (np.arange(cols) + 0.5) * (width / cols)
    ys = (np.arange(rows) + 0.5) * (height / rows)
    gx, gy = np.meshgrid(xs, ys)
    pts = np.stack([gx.ravel(), gy.ravel()], axis=1)
    return lj_potential(pts, centers, radii, p).reshape(rows, cols)


def colorize(u: Array, p: LJConstants) -> np.ndarray:
    """Repulsion red, attraction blue, alpha by strength relative to the surface value.

    The scale is ``|U(d=1)| = |B - A|`` (the potential on an obstacle's rim),
    so the picture reads the same whatever the constants.
    """
    scale = abs(p.b - p.a) or float(np.max(np.abs(u))) or 1.0
    t = np.clip(np.abs(u) / scale, 0.0, 1.0) ** 0.5
    img = np.zeros((*u.shape, 4), dtype=np.uint8)
    rep = u > 0.0
    img[..., 0] = np.where(rep, 255, 40)
    img[..., 1] = np.where(rep, 60, 120)
    img[..., 2] = np.where(rep, 40, 255)
    img[..., 3] = (t * 190.0).astype(np.uint8)
    return img


def params_from_trees(trees: dict[str, Any]) -> LJConstants:
    """The first ``lj_avoidance`` leaf's constants in any group's tree, else the defaults."""
    for tree in trees.values():
        for node in getattr(tree, "nodes", ()):
            if isinstance(node.model, LJAvoidance):
                m = node.model
                return LJConstants(float(m.a), float(m.b), float(m.n), float(m.m), float(m.cutoff))
    return LJConstants()


TEX_VERTEX = """
#version 330
uniform WindowBlock { mat4 projection; mat4 view; } window;
in vec2 in_vert;
in vec2 in_uv;
out vec2 v_uv;
void main() {
    gl_Position = window.projection * window.view * vec4(in_vert, 0.0, 1.0);
    v_uv = in_uv;
}
"""

TEX_FRAGMENT = """
#version 330
uniform sampler2D tex;
in vec2 v_uv;
out vec4 f_color;
void main() { f_color = texture(tex, v_uv); }
"""


class HeatmapLayer:
    """The potential texture drawn over the world rectangle; rebuilt only on change."""

    def __init__(self, ctx: Any, cols: int = 160) -> None:
        self._ctx = ctx
        self._cols = cols
        self._program = ctx.program(vertex_shader=TEX_VERTEX, fragment_shader=TEX_FRAGMENT)
        self._key: tuple[Any, ...] | None = None
        self._texture: Any = None
        self._geometry: Any = None
        self._vbo = ctx.buffer(reserve=4 * 4 * 4)
        from arcade.gl import BufferDescription

        self._geometry = ctx.geometry(
            [BufferDescription(self._vbo, "2f 2f", ["in_vert", "in_uv"])],
            mode=ctx.TRIANGLE_STRIP,
        )

    def update(self, world: Any, params: LJConstants) -> None:
        key = (
            world.width,
            world.height,
            world.obstacle_pos.tobytes(),
            world.obstacle_radius.tobytes(),
            params,
        )
        if key == self._key:
            return
        cols = self._cols
        rows = max(1, round(cols * world.height / world.width))
        u = potential_grid(
            world.width, world.height, cols, rows, world.obstacle_pos, world.obstacle_radius, params
        )
        img = colorize(u, params)
        if self._texture is None or self._texture.size != (cols, rows):
            self._texture = self._ctx.texture((cols, rows), components=4)
        self._texture.write(np.ascontiguousarray(img).tobytes())
        self._key = key

    def draw(
        self,
        rect: tuple[float, float, float, float],
        uv: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0),
    ) -> None:
        """The texture's ``uv`` part (fractions of the world) over the screen ``rect``."""
        if self._texture is None:
            return
        x0, y0, x1, y1 = rect
        u0, v0, u1, v1 = uv
        quad = np.array(
            [[x0, y0, u0, v0], [x1, y0, u1, v0], [x0, y1, u0, v1], [x1, y1, u1, v1]],
            dtype=np.float32,
        )
        self._vbo.write(quad.tobytes())
        self._texture.use(0)
        self._program["tex"] = 0
        self._ctx.enable(self._ctx.BLEND)
        self._geometry.render(self._program)
