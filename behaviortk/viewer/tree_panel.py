"""The graphical tree panel: boxes and edges, coloured by this tick's statuses, pan and zoom.

``TreeView.build(frame, rect)`` turns a ``TreeFrame`` (a live agent's, or a
recorded tick's: ``tree_frame.py``) into pictures for the painter: a fixed
header (the agent, a status key) and the outline of the tree, clipped to the
panel. Each kind of node has its own shape (composite: rectangle with its
glyph, ``→`` sequence, ``?`` selector, ``⇉`` parallel, ``*`` with memory;
decorator: hexagon; condition: pill; steering leaf: arrow-ended box; action:
slanted box), each box is filled by its status, the nodes leading to the
running leaves and their edges are outlined in white, and every steering leaf
that asked for a force shows it beside its box (an arrow relative to the
agent's max force, and its size). Clicking a box selects it (outlined in blue) and, when
it has children, collapses or expands its subtree; dragging pans; the wheel zooms around
the pointer. A node with a breakpoint (``marks``, set by the window: ``b`` or a right-click
on a node) has a red dot on its top-left corner, with the status it waits for as a letter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from behaviortk.registry import ACTION, CONDITION, DECORATOR, STEERING
from behaviortk.tree.status import FAILURE, INVALID, RUNNING, SUCCESS
from behaviortk.vec import Array
from behaviortk.viewer import geometry as geo
from behaviortk.viewer import palette
from behaviortk.viewer.gpu import TriangleSoup
from behaviortk.viewer.labels import Label
from behaviortk.viewer.layout import Rect
from behaviortk.viewer.tree_frame import TreeFrame
from behaviortk.viewer.tree_layout import BOX_H, ROW, TEXT_PAD, TreeLayout, label_of, layout_tree

HEADER = 44.0  # title row and status key, above the tree
PAD = 8.0
FONT = 9.0
MIN_ZOOM, MAX_ZOOM = 0.3, 3.0
FORCE_R = 11.0  # radius of the force dial beside a steering leaf, at zoom 1 (= max force)
NEEDLE_MIN = 0.4  # the shortest needle, as a share of the radius: a weak force still points
FORCE_FONT = 8.5
MONO_ADVANCE = 0.82  # a mono glyph's advance in pixels per point (0.6 em at 96/72 px a point)

STATUS_FILL: dict[int, palette.Color] = {
    INVALID: palette.NODE_IDLE,
    RUNNING: palette.NODE_RUNNING,
    SUCCESS: palette.NODE_SUCCESS,
    FAILURE: palette.NODE_FAILURE,
}
MARK_R = 6.0  # radius of a breakpoint's red dot, at zoom 1
MARK_LETTERS = {RUNNING: "R", SUCCESS: "S", FAILURE: "F"}
STATUS_WORDS = (
    (RUNNING, "running"),
    (SUCCESS, "success"),
    (FAILURE, "failure"),
    (INVALID, "not ticked"),
)


@dataclass
class Picture:
    """Shapes and labels the painter draws inside ``clip`` (the pool ``name`` keeps the texts)."""

    name: str
    clip: Rect
    soup: TriangleSoup = field(default_factory=TriangleSoup)
    labels: list[Label] = field(default_factory=list)


def running_path(frame: TreeFrame, lay: TreeLayout) -> np.ndarray:
    """(nodes,) bool: the running leaves (a running node with no running child) and all their
    ancestors; a collapsed node stands for the running leaves it hides."""
    tree = frame.tree
    running = frame.status == RUNNING
    has_running_child = np.zeros(len(tree), dtype=bool)
    for node in tree.nodes:
        if node.parent >= 0 and running[node.index]:
            has_running_child[node.parent] = True
    leaves = running & ~has_running_child
    on = np.zeros(len(tree), dtype=bool)
    for i in np.flatnonzero(leaves).tolist():  # per running leaf: a few per tree
        while i >= 0 and not on[i]:
            on[i] = True
            i = tree.nodes[i].parent
    return on


def _fans(poly: Array) -> Array:
    """Convex polygons ``(M, P, 2)`` as triangle fans ``(M * (P - 2) * 3, 2)``."""
    m, p = poly.shape[:2]
    if m == 0:
        return geo.EMPTY
    a = np.broadcast_to(poly[:, :1], (m, p - 2, 2))
    return np.stack([a, poly[:, 1:-1], poly[:, 2:]], axis=2).reshape(-1, 2)


def _outlines(poly: Array, width: float) -> Array:
    if poly.shape[0] == 0:
        return geo.EMPTY
    return geo.segments(poly.reshape(-1, 2), np.roll(poly, -1, axis=1).reshape(-1, 2), width)


def shape_polygons(kind: str, left: Array, bottom: Array, right: Array, top: Array) -> Array:
    """``(M, P, 2)`` screen polygons of one node kind (P depends on the kind)."""
    mid = 0.5 * (top + bottom)
    c = 0.5 * (top - bottom)
    if kind == DECORATOR:  # hexagon
        pts = [
            (left, mid),
            (left + c, bottom),
            (right - c, bottom),
            (right, mid),
            (right - c, top),
            (left + c, top),
        ]
    elif kind == CONDITION:  # pill: two half circles joined
        ang = np.linspace(0.5 * np.pi, 1.5 * np.pi, 7)
        pts = [(left + c + c * np.cos(a), mid + c * np.sin(a)) for a in ang]
        pts += [(right - c + c * np.cos(a), mid + c * np.sin(a)) for a in ang - np.pi]
    elif kind == STEERING:  # box with an arrow end
        pts = [(left, bottom), (right - c, bottom), (right, mid), (right - c, top), (left, top)]
    elif kind == ACTION:  # slanted box
        pts = [(left, bottom), (right - c, bottom), (right, top), (left + c, top)]
    else:  # composite, and any other kind: a rectangle
        pts = [(left, bottom), (right, bottom), (right, top), (left, top)]
    return np.stack(
        [
            np.stack([np.broadcast_to(px, left.shape), np.broadcast_to(py, left.shape)], axis=-1)
            for px, py in pts
        ],
        axis=1,
    )


class TreeView:
    """Pan, zoom and collapsed subtrees of the tree panel; kept while the same tree is shown."""

    def __init__(self) -> None:
        self.collapsed: set[int] = set()
        self.pan = np.zeros(2)  # pixels added to the tree's position
        self.zoom = 1.0
        self._tree: object | None = None
        self._last: tuple[TreeFrame, TreeLayout, Rect] | None = None
        self.selected: int | None = None
        """The node a click selected (``b`` sets a breakpoint on it), None for none."""
        self.marks: dict[int, int] = {}
        """Nodes with a breakpoint in the shown tree -> the status it waits for (a dot each)."""

    # ------------------------------------------------------------ state
    def _follow(self, frame: TreeFrame) -> None:
        """A different tree (another group, a reload): start unfolded, at the top."""
        if frame.tree is not self._tree:
            same_shape = self._last is not None and [n.path for n in self._last[0].tree.nodes] == [
                n.path for n in frame.tree.nodes
            ]
            if not same_shape:
                self.collapsed = set()
                self.selected = None
                self.fit()
            self._tree = frame.tree

    def fit(self) -> None:
        self.pan = np.zeros(2)
        self.zoom = 1.0

    def _origin(self, rect: Rect) -> tuple[float, float]:
        return rect.x0 + PAD + float(self.pan[0]), rect.y1 - HEADER - PAD + float(self.pan[1])

    # ------------------------------------------------------------ input
    def node_at(self, x: float, y: float) -> int | None:
        """The node whose box (or collapse triangle) is under a screen point."""
        if self._last is None:
            return None
        _, lay, rect = self._last
        if not (rect.contains(x, y) and y < rect.y1 - HEADER):
            return None
        ox, oy = self._origin(rect)
        z = self.zoom
        u, v = (x - ox) / z, (oy - y) / z
        i = lay.order
        inside = (
            (u >= lay.x[i] - 14.0)
            & (u <= lay.x[i] + lay.w[i])
            & (v >= lay.y[i])
            & (v <= lay.y[i] + BOX_H)
        )
        hit = i[inside]
        return int(hit[0]) if hit.size else None

    def click(self, x: float, y: float) -> bool:
        """Select the node clicked and collapse or expand its subtree; False when no node was
        folded (none there, or a leaf: then only selected)."""
        i = self.node_at(x, y)
        if i is not None:
            self.selected = i
        if i is None or self._last is None or not self._last[0].tree.nodes[i].children:
            return False
        self.collapsed ^= {i}
        return True

    def drag(self, dx: float, dy: float) -> None:
        self.pan = self.pan + np.array([dx, dy], dtype=np.float64)

    def wheel(self, x: float, y: float, clicks: float) -> None:
        """Zoom by 1.15 per click, keeping the point under the mouse where it is."""
        if self._last is None:
            return
        rect = self._last[2]
        old = self.zoom
        new = float(np.clip(old * 1.15**clicks, MIN_ZOOM, MAX_ZOOM))
        ox, oy = self._origin(rect)
        # keep (x, y): ox' + (x - ox) * new / old = x  ->  pan shifts by (x - ox)(1 - new/old)
        self.pan = self.pan + np.array([(x - ox) * (1 - new / old), (y - oy) * (1 - new / old)])
        self.zoom = new

    # ------------------------------------------------------------ drawing
    def build(self, frame: TreeFrame, rect: Rect) -> list[Picture]:
        self._follow(frame)
        lay = layout_tree(frame.tree, self.collapsed)
        self._last = (frame, lay, rect)
        header = Rect(rect.x0, rect.y1 - HEADER, rect.x1, rect.y1)
        body = Rect(rect.x0, rect.y0, rect.x1, header.y0)
        return [self._header(frame, header), self._body(frame, lay, rect, body)]

    def _header(self, frame: TreeFrame, rect: Rect) -> Picture:
        pic = Picture("tree.header", rect)
        pic.labels.append(
            Label(frame.title, rect.x0 + PAD, rect.y1 - 11, palette.TEXT, 10, bold=True)
        )
        x = rect.x0 + PAD
        y = rect.y1 - 32
        for code, word in STATUS_WORDS:
            pic.soup.add(geo.quads(x, y - 6, x + 12, y + 6), STATUS_FILL[code])
            pic.labels.append(Label(word, x + 16, y, palette.DIM_TEXT, 8.5))
            x += 16 + 7.0 * len(word) + 14
        return pic

    def _body(self, frame: TreeFrame, lay: TreeLayout, rect: Rect, clip: Rect) -> Picture:
        pic = Picture("tree.body", clip)
        tree = frame.tree
        z = self.zoom
        ox, oy = self._origin(rect)
        i = lay.order
        left = ox + lay.x * z
        top = oy - lay.y * z
        right = left + lay.w * z
        bottom = top - BOX_H * z
        on = running_path(frame, lay)
        # Edges: an elbow from under the parent's left end down to the child's middle.
        if lay.edges.size:
            p, c = lay.edges[:, 0], lay.edges[:, 1]
            px = left[p] + 6.0 * z
            cy = 0.5 * (top[c] + bottom[c])
            a = np.concatenate([np.stack([px, bottom[p]], 1), np.stack([px, cy], 1)])
            b = np.concatenate([np.stack([px, cy], 1), np.stack([left[c], cy], 1)])
            hot = np.concatenate([on[c], on[c]])
            pic.soup.add(geo.segments(a[~hot], b[~hot], 1.2), palette.TREE_EDGE)
            pic.soup.add(geo.segments(a[hot], b[hot], 2.6), palette.TREE_PATH)
        kinds = np.array([node.kind for node in tree.nodes])
        fill = np.array(
            [STATUS_FILL.get(int(s), palette.NODE_IDLE) for s in frame.status], dtype=np.uint8
        )
        for kind in np.unique(kinds[i]).tolist():  # per node kind: five at most
            rows = i[kinds[i] == kind]
            poly = shape_polygons(kind, left[rows], bottom[rows], right[rows], top[rows])
            p_count = poly.shape[1]
            pic.soup.add(_fans(poly), np.repeat(fill[rows], (p_count - 2) * 3, axis=0))
            cold, hot_rows = ~on[rows], on[rows]
            pic.soup.add(_outlines(poly[cold], 1.0), palette.NODE_EDGE)
            pic.soup.add(_outlines(poly[hot_rows], 2.2), palette.TREE_PATH)
        self._toggles(tree, lay, left, top, bottom, pic)
        self._selected_and_marks(tree, lay, left, top, bottom, right, pic)
        after_force = self._forces(frame, lay, right, top, bottom, pic)
        size = FONT * z
        if size >= 4.0:
            for k in i.tolist():
                status = int(frame.status[k])
                ink = palette.NODE_TEXT_DARK if status in (RUNNING,) else palette.NODE_TEXT
                pic.labels.append(
                    Label(
                        label_of(tree, k),
                        float(left[k] + TEXT_PAD * z),
                        float(0.5 * (top[k] + bottom[k])),
                        ink,
                        size,
                    )
                )
                note = frame.notes[k] if k < len(frame.notes) else ""
                if note:
                    x = after_force.get(k, float(right[k] + 6.0 * z))  # past a dial and |F|
                    pic.labels.append(
                        Label(
                            note,
                            x + 18.0 * bool(lay.hidden[k]) * z,
                            float(0.5 * (top[k] + bottom[k])),
                            palette.DIM_TEXT,
                            size,
                        )
                    )
                if lay.hidden[k]:
                    pic.labels.append(
                        Label(
                            f"+{int(lay.hidden[k])}",
                            float(right[k] + 6 * z),
                            float(0.5 * (top[k] + bottom[k])),
                            palette.DIM_TEXT,
                            size,
                        )
                    )
        return pic

    def _toggles(
        self, tree: object, lay: TreeLayout, left: Array, top: Array, bottom: Array, pic: Picture
    ) -> None:
        """A triangle left of each box with children: down when open, right when collapsed."""
        i = lay.order
        has = np.array([bool(n.children) for n in tree.nodes])[i]  # type: ignore[attr-defined]
        rows = i[has]
        if rows.size == 0:
            return
        z = self.zoom
        cx = left[rows] - 7.0 * z
        cy = 0.5 * (top[rows] + bottom[rows])
        s = 4.0 * z
        shut = lay.hidden[rows] > 0
        down = np.stack(
            [
                np.stack([cx - s, cy + s * 0.6], 1),
                np.stack([cx + s, cy + s * 0.6], 1),
                np.stack([cx, cy - s * 0.7], 1),
            ],
            1,
        )
        side = np.stack(
            [
                np.stack([cx - s * 0.6, cy + s], 1),
                np.stack([cx - s * 0.6, cy - s], 1),
                np.stack([cx + s * 0.7, cy], 1),
            ],
            1,
        )
        tri = np.where(shut[:, None, None], side, down)
        pic.soup.add(tri.reshape(-1, 2), palette.DIM_TEXT)

    def _selected_and_marks(
        self,
        tree: object,
        lay: TreeLayout,
        left: Array,
        top: Array,
        bottom: Array,
        right: Array,
        pic: Picture,
    ) -> None:
        """The selected node's outline, and a red dot (with its status's letter) on the top-left
        corner of each visible node with a breakpoint."""
        z = self.zoom
        nodes = tree.nodes  # type: ignore[attr-defined]
        i = self.selected
        if i is not None and i < len(nodes) and lay.visible[i]:
            kind = nodes[i].kind
            poly = shape_polygons(kind, left[[i]], bottom[[i]], right[[i]], top[[i]])
            pic.soup.add(_outlines(poly, 2.6), palette.NODE_SELECTED)
        marked = [k for k in sorted(self.marks) if k < len(nodes) and lay.visible[k]]
        if not marked:
            return
        rows = np.array(marked, dtype=np.int64)
        center = np.stack([left[rows] + 1.0 * z, top[rows] - 1.0 * z], 1)
        r = MARK_R * z
        pic.soup.add(geo.discs(center, np.full(rows.size, r + 1.5), 16), palette.NODE_EDGE)
        pic.soup.add(geo.discs(center, np.full(rows.size, r), 16), palette.BREAKPOINT)
        if 7.0 * z >= 4.0:
            for k, (cx, cy) in zip(marked, center.tolist(), strict=True):
                letter = MARK_LETTERS.get(self.marks[k], "?")
                pic.labels.append(Label(letter, cx, cy, palette.NODE_TEXT, 7.0 * z, "center"))

    def _forces(
        self,
        frame: TreeFrame,
        lay: TreeLayout,
        right: Array,
        top: Array,
        bottom: Array,
        pic: Picture,
    ) -> dict[int, float]:
        """Beside each visible steering leaf that asked: a dial whose rim is the group's max
        force, a needle along the force (at least ``NEEDLE_MIN`` of the radius, so a weak
        force still shows its direction; full length at max force), and ``|F| 72 of 260``
        (a request of zero force says so). Returns, per node, where its text ends."""
        tree = frame.tree
        z = self.zoom
        leaves = np.array(tree.steering, dtype=np.int64)
        if leaves.size == 0:
            return {}
        asked = np.isfinite(frame.forces).all(axis=1) & lay.visible[leaves]
        if not asked.any():
            return {}
        nodes = leaves[asked]
        f = frame.forces[asked]
        mag = np.hypot(f[:, 0], f[:, 1])
        r = FORCE_R * z
        cx = right[nodes] + r + 6.0 * z
        cy = 0.5 * (top[nodes] + bottom[nodes])
        center = np.stack([cx, cy], 1)
        pic.soup.add(geo.discs(center, np.full(nodes.size, r), 20), palette.FORCE_DIAL)
        pic.soup.add(geo.rings(center, np.full(nodes.size, r), max(1.0, z), 24), palette.DIM_TEXT)
        moving = mag > 0.0
        share = np.minimum(mag / max(frame.max_force, 1e-9), 1.0)
        unit = f / np.where(moving, mag, 1.0)[:, None]
        tip = center + unit * (r * np.maximum(share, NEEDLE_MIN))[:, None]
        pic.soup.add(geo.segments(center[moving], tip[moving], max(2.0, 2.5 * z)), palette.FORCE)
        pic.soup.add(geo.discs(tip[moving], np.full(int(moving.sum()), 2.0 * z), 8), palette.FORCE)
        size = FORCE_FONT * z
        ends: dict[int, float] = {}
        top_force = f"{frame.max_force:.3g}"
        for k in range(nodes.size):
            text = f"|F| {mag[k]:.3g} of {top_force}" if moving[k] else "0 (zero force)"
            x = float(cx[k] + r + 5.0 * z)
            ends[int(nodes[k])] = x + (len(text) * MONO_ADVANCE * FORCE_FONT + 10.0) * z
            if size >= 4.0:
                ink = palette.TEXT if moving[k] else palette.DIM_TEXT
                pic.labels.append(Label(text, x, float(cy[k]), ink, size))
        return ends


def tree_height(frame: TreeFrame, collapsed: set[int]) -> float:
    """Pixels the outline takes at zoom 1 (tests, and fitting)."""
    return layout_tree(frame.tree, collapsed).order.size * ROW
