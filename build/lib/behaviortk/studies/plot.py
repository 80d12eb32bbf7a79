"""``--plot``: each result column against a swept parameter, mean and 95% band over seeds.

One panel per (value column, parameter) pair. Along the panel's parameter the
rows of each combination of the other parameters form one line (all rows
together when there are more than six combinations); the band is mean +- 1.96
standard errors over the seeds at that point (none with a single seed).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

MAX_LINES = 6


def _band(values: np.ndarray) -> tuple[float, float]:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), 0.0
    sem = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else 0.0
    return float(values.mean()), float(1.96 * sem)


def _order(combo: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    """Numbers by value, then anything else by its text."""
    return tuple((0, v) if isinstance(v, int | float) else (1, str(v)) for v in combo)


def plot(
    rows: Sequence[dict[str, Any]], params: Sequence[str], columns: Sequence[str], out: Any
) -> None:
    """Write a PNG of every column against every parameter to the binary file ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numeric = [p for p in params if all(isinstance(r[p], int | float) for r in rows)]
    if not numeric or not columns:
        raise ValueError("nothing to plot: no numeric swept parameter or no value columns")
    fig, axes = plt.subplots(
        len(columns), len(numeric), figsize=(4.5 * len(numeric), 3.2 * len(columns)), squeeze=False
    )
    for (i, column), (j, param) in itertools.product(enumerate(columns), enumerate(numeric)):
        ax = axes[i][j]
        others = [p for p in params if p != param]
        combos = sorted({tuple(r[p] for p in others) for r in rows}, key=_order)
        if len(combos) > MAX_LINES:
            combos, others = [()], []
        for combo in combos:
            mine = [r for r in rows if tuple(r[p] for p in others) == combo]
            xs = sorted({r[param] for r in mine})
            stats = [
                _band(np.array([float(r[column]) for r in mine if r[param] == x], dtype=float))
                for x in xs
            ]
            mean = np.array([s[0] for s in stats])
            half = np.array([s[1] for s in stats])
            label = ", ".join(f"{p}={v}" for p, v in zip(others, combo, strict=True)) or None
            (line,) = ax.plot(xs, mean, marker="o", label=label)
            ax.fill_between(xs, mean - half, mean + half, color=line.get_color(), alpha=0.2)
        ax.set_xlabel(param)
        ax.set_ylabel(column)
        if others:
            ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=100)
    plt.close(fig)
