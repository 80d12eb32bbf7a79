"""Per-agent random streams: a pure function of (seed, id, tick, slot)."""

from __future__ import annotations

import numpy as np

from behaviortk.world.streams import mix, uniforms


def test_splitmix64_finaliser_matches_the_reference_values() -> None:
    """SplitMix64 seeded with 0 gives 0xE220A8397B1DCDAF first (the published sequence)."""
    first = mix(np.array([0], dtype=np.uint64))[0]
    assert int(first) == 0xE220A8397B1DCDAF


def test_numbers_depend_only_on_seed_id_tick_and_slot() -> None:
    a = uniforms(7, np.array([3, 5, 9]), tick=12, slots=4)
    b = uniforms(7, np.array([9, 3]), tick=12, slots=4)
    assert np.array_equal(a[2], b[0]) and np.array_equal(a[0], b[1])
    assert not np.array_equal(uniforms(8, np.array([3]), 12, 4), a[:1])
    assert not np.array_equal(uniforms(7, np.array([3]), 13, 4), a[:1])
    assert a.shape == (3, 4) and ((a >= 0) & (a < 1)).all()


def test_numbers_look_uniform_and_independent() -> None:
    u = uniforms(1, np.arange(20_000), tick=0, slots=2)
    assert abs(u.mean() - 0.5) < 0.01
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 0.03
    hist, _ = np.histogram(u[:, 0], bins=10, range=(0, 1))
    assert hist.min() > 1800 and hist.max() < 2200
