"""Agent bodies: one point per agent, drawn by the GPU as a disc of its radius with a heading mark.

A disc of triangles costs dozens of vertices per agent to build on the CPU each
frame; a point sprite costs one. The vertex shader sizes the point to the
body's diameter, the fragment shader keeps the pixels within the radius and
darkens the heading mark, a wedge from the centre to the rim: nose at
``r * heading``, base corners at ``+-0.4 r`` across it (``geometry.heading_marks``
draws the same wedge with triangles). Bodies larger than the GPU's biggest
point (zoomed far in) are built as triangles instead (``fallback``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from behaviortk.vec import Array
from behaviortk.viewer import geometry as geo
from behaviortk.viewer.gpu import TriangleSoup

MARK_SHADE = 0.35  # the heading mark: the body's colour, darkened
GL_PROGRAM_POINT_SIZE = 0x8642

VERTEX = """
#version 330
uniform WindowBlock { mat4 projection; mat4 view; } window;
in vec2 in_pos;
in float in_radius;
in vec2 in_heading;
in vec4 in_color;
out float v_radius;
out vec2 v_heading;
out vec4 v_color;
void main() {
    gl_Position = window.projection * window.view * vec4(in_pos, 0.0, 1.0);
    gl_PointSize = 2.0 * in_radius + 2.0;
    v_radius = in_radius;
    v_heading = in_heading;
    v_color = in_color;
}
"""

FRAGMENT = """
#version 330
uniform float shade;
in float v_radius;
in vec2 v_heading;
in vec4 v_color;
out vec4 f_color;
void main() {
    vec2 p = (gl_PointCoord - 0.5) * (2.0 * v_radius + 2.0);
    p.y = -p.y;  // gl_PointCoord runs from the top
    if (dot(p, p) > v_radius * v_radius) discard;
    float along = dot(p, v_heading);
    float across = abs(dot(p, vec2(-v_heading.y, v_heading.x)));
    bool mark = along >= 0.0 && across <= 0.4 * (v_radius - along);
    f_color = mark ? vec4(v_color.rgb * shade, v_color.a) : v_color;
}
"""


@dataclass
class Bodies:
    """CPU side: screen centres, radii in pixels, unit headings and RGBA colours."""

    center: Array  # (N, 2)
    radius: Array  # (N,)
    heading: Array  # (N, 2) unit
    colors: np.ndarray  # (N, 4) uint8

    @staticmethod
    def empty() -> Bodies:
        return Bodies(np.zeros((0, 2)), np.zeros(0), np.zeros((0, 2)), np.zeros((0, 4), np.uint8))

    def __len__(self) -> int:
        return int(self.radius.shape[0])

    def packed(self) -> tuple[np.ndarray, np.ndarray]:
        """``(N, 5) float32`` x, y, radius, hx, hy and ``(N, 4) uint8`` colours."""
        data = np.empty((len(self), 5), dtype=np.float32)
        data[:, 0:2] = self.center
        data[:, 2] = self.radius
        data[:, 3:5] = self.heading
        return data, np.ascontiguousarray(self.colors, dtype=np.uint8)

    def split(self, max_radius: float) -> tuple[Bodies, Bodies]:
        """``(points, too big for a point)``."""
        big = self.radius > max_radius
        if not big.any():
            return self, Bodies.empty()

        def pick(m: np.ndarray) -> Bodies:
            return Bodies(self.center[m], self.radius[m], self.heading[m], self.colors[m])

        return pick(~big), pick(big)

    def fallback(self, soup: TriangleSoup) -> None:
        """These bodies as triangles (discs, then marks), for sizes no point can take."""
        if not len(self):
            return
        sides = 40
        soup.add(geo.discs(self.center, self.radius, sides), np.repeat(self.colors, 3 * sides, 0))
        marks = self.colors.copy()
        marks[:, :3] = (marks[:, :3] * MARK_SHADE).astype(np.uint8)
        soup.add(geo.heading_marks(self.center, self.heading, self.radius), np.repeat(marks, 3, 0))


class BodyBatch:
    """GPU side: growable buffers, one ``POINTS`` draw for every body."""

    def __init__(self, ctx: Any) -> None:
        from arcade.gl import BufferDescription

        self._ctx = ctx
        self._program = ctx.program(vertex_shader=VERTEX, fragment_shader=FRAGMENT)
        self._program["shade"] = MARK_SHADE
        self._describe = BufferDescription
        self._capacity = 0
        self._geometry: Any = None
        self._vbo: Any = None
        self._cbo: Any = None
        self.max_radius = 0.5 * float(ctx.info.POINT_SIZE_RANGE[1]) - 1.0
        self.draw_calls = 0

    def _ensure(self, n: int) -> None:
        if n <= self._capacity and self._geometry is not None:
            return
        cap = max(1024, 1 << (max(n, 1) - 1).bit_length())
        self._vbo = self._ctx.buffer(reserve=cap * 20)
        self._cbo = self._ctx.buffer(reserve=cap * 4)
        self._geometry = self._ctx.geometry(
            [
                self._describe(self._vbo, "2f 1f 2f", ["in_pos", "in_radius", "in_heading"]),
                self._describe(self._cbo, "4f1", ["in_color"]),
            ],
            mode=self._ctx.POINTS,
        )
        self._capacity = cap

    def draw(self, bodies: Bodies) -> None:
        n = len(bodies)
        if n == 0:
            return
        self._ensure(n)
        data, colors = bodies.packed()
        self._vbo.write(data.tobytes())
        self._cbo.write(colors.tobytes())
        self._ctx.enable(self._ctx.BLEND, GL_PROGRAM_POINT_SIZE)
        self._geometry.render(self._program, vertices=n)
        self._ctx.disable(GL_PROGRAM_POINT_SIZE)
        self.draw_calls += 1
