"""One vertex buffer, one draw call: the viewer's only path to the GPU for shapes.

Layers append NumPy triangle soups with their colours; ``build`` concatenates
them in order (later layers draw on top) into float32 vertices and uint8
colours (pure CPU work, the part the benchmark times); ``draw`` uploads and
renders them with a single ``geometry.render``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.vec import Array

VERTEX_SHADER = """
#version 330
uniform WindowBlock { mat4 projection; mat4 view; } window;
in vec2 in_vert;
in vec4 in_color;
out vec4 v_color;
void main() {
    gl_Position = window.projection * window.view * vec4(in_vert, 0.0, 1.0);
    v_color = in_color;
}
"""

FRAGMENT_SHADER = """
#version 330
in vec4 v_color;
out vec4 f_color;
void main() { f_color = v_color; }
"""

Color = tuple[int, int, int, int]


class TriangleSoup:
    """CPU side: ordered chunks of triangles with per-vertex colours."""

    def __init__(self) -> None:
        self._verts: list[Array] = []
        self._colors: list[np.ndarray] = []

    def add(self, verts: Array, color: Color | np.ndarray) -> None:
        """Append triangles; ``color`` is one RGBA for all, or ``(V, 4)`` per vertex."""
        if verts.shape[0] == 0:
            return
        c = np.asarray(color, dtype=np.uint8)
        if c.ndim == 1:
            c = np.broadcast_to(c, (verts.shape[0], 4))
        self._verts.append(verts)
        self._colors.append(c)

    def build(self) -> tuple[np.ndarray, np.ndarray]:
        """All vertices ``(V, 2) float32`` and colours ``(V, 4) uint8``, in add order."""
        if not self._verts:
            return np.zeros((0, 2), np.float32), np.zeros((0, 4), np.uint8)
        verts = np.concatenate(self._verts).astype(np.float32, copy=False)
        colors = np.ascontiguousarray(np.concatenate(self._colors), dtype=np.uint8)
        return verts, colors

    def __len__(self) -> int:
        return sum(v.shape[0] for v in self._verts)


class GpuBatch:
    """GPU side: growable buffers and one geometry, reused every frame."""

    def __init__(self, ctx: Any) -> None:
        from arcade.gl import BufferDescription

        self._ctx = ctx
        self._program = ctx.program(vertex_shader=VERTEX_SHADER, fragment_shader=FRAGMENT_SHADER)
        self._capacity = 0
        self._describe = BufferDescription
        self._geometry: Any = None
        self._vbo: Any = None
        self._cbo: Any = None
        self.draw_calls = 0  # counted so tests can prove agents are one call

    def _ensure(self, n: int) -> None:
        if n <= self._capacity and self._geometry is not None:
            return
        cap = max(1024, 1 << (max(n, 1) - 1).bit_length())
        self._vbo = self._ctx.buffer(reserve=cap * 8)
        self._cbo = self._ctx.buffer(reserve=cap * 4)
        self._geometry = self._ctx.geometry(
            [
                self._describe(self._vbo, "2f", ["in_vert"]),
                self._describe(self._cbo, "4f1", ["in_color"]),
            ],
            mode=self._ctx.TRIANGLES,
        )
        self._capacity = cap

    def draw(self, verts: np.ndarray, colors: np.ndarray) -> None:
        n = int(verts.shape[0])
        if n == 0:
            return
        self._ensure(n)
        self._vbo.write(np.ascontiguousarray(verts, dtype=np.float32).tobytes())
        self._cbo.write(np.ascontiguousarray(colors, dtype=np.uint8).tobytes())
        self._ctx.enable(self._ctx.BLEND)
        self._geometry.render(self._program, vertices=n)
        self.draw_calls += 1
