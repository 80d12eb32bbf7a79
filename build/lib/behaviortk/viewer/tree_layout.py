"""Placing a flat tree's nodes as an outline: one row per visible node, indented by depth.

An outline reads at 60 nodes in a side panel, where a top-down tree would be
far wider than it is tall. Coordinates are layout units (pixels at zoom 1),
``x`` to the right and ``y`` downwards from the top-left corner; the panel maps
them to the screen with its pan and zoom. A collapsed node hides its subtree
(flat trees are in pre-order, so a subtree is the index range ``i .. i + size``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from behaviortk.tree.flat import FlatTree, trace_name

ROW = 22.0  # vertical distance between rows
BOX_H = 17.0
INDENT = 20.0
TOGGLE = 14.0  # room left of a box for its collapse triangle
CHAR_W = 7.0  # width of one character of the 9 pt mono font at zoom 1 (measured)
MIN_BOX_W = 60.0
TEXT_PAD = 8.0


@dataclass(frozen=True)
class TreeLayout:
    visible: np.ndarray  # (nodes,) bool
    order: np.ndarray  # visible node indices, top to bottom
    x: np.ndarray  # (nodes,) left edge of each box
    y: np.ndarray  # (nodes,) top edge of each box (valid where visible)
    w: np.ndarray  # (nodes,) box width
    size: np.ndarray  # (nodes,) nodes in each subtree, itself included
    hidden: np.ndarray  # (nodes,) descendants hidden by collapsing this node
    edges: np.ndarray  # (E, 2) visible (parent, child) pairs
    width: float
    height: float


def subtree_sizes(tree: FlatTree) -> np.ndarray:
    size = np.ones(len(tree), dtype=np.int64)
    for node in reversed(tree.nodes):  # per node, not per agent
        if node.parent >= 0:
            size[node.parent] += size[node.index]
    return size


def label_of(tree: FlatTree, index: int) -> str:
    """The text in a node's box: a glyph for composites and decorators, then its name (and a
    guard's condition in brackets)."""
    node = tree.nodes[index]
    tag = str(getattr(node.model, "type", ""))
    glyph = ""
    if node.kind == "composite":
        glyph = "⇉" if "parallel" in tag else "?" if "selector" in tag else "→"
        if getattr(node.model, "memory", False):
            glyph += "*"
    elif node.kind == "decorator":
        glyph = "◇"
    guard = getattr(node.model, "condition", None)  # eternal_guard: its condition is no node
    name = f"{node.name} [{trace_name(guard)}]" if guard is not None else node.name
    return f"{glyph} {name}" if glyph else name


def layout_tree(tree: FlatTree, collapsed: set[int] | frozenset[int] = frozenset()) -> TreeLayout:
    n = len(tree)
    size = subtree_sizes(tree)
    visible = np.ones(n, dtype=bool)
    for i in sorted(collapsed):
        if 0 <= i < n:
            visible[i + 1 : i + size[i]] = False
    hidden = np.zeros(n, dtype=np.int64)
    for i in collapsed:
        if 0 <= i < n and visible[i]:
            hidden[i] = size[i] - 1
    depth = np.array([node.depth for node in tree.nodes], dtype=np.float64)
    chars = np.array([len(label_of(tree, i)) for i in range(n)], dtype=np.float64)
    x = TOGGLE + depth * INDENT
    w = np.maximum(MIN_BOX_W, chars * CHAR_W + 2 * TEXT_PAD)
    order = np.flatnonzero(visible)
    y = np.zeros(n)
    y[order] = np.arange(order.size) * ROW + 0.5 * (ROW - BOX_H)
    edges = np.array(
        [
            (node.parent, node.index)
            for node in tree.nodes
            if node.parent >= 0 and visible[node.index]
        ],
        dtype=np.int64,
    ).reshape(-1, 2)
    width = float(np.max(x[order] + w[order])) if order.size else 0.0
    return TreeLayout(visible, order, x, y, w, size, hidden, edges, width, order.size * ROW)
