"""``commands/resident.py``: the peak resident memory since a mark (what ``bench`` reports)."""

from __future__ import annotations

import pytest

from behaviortk.commands.resident import lifetime_peak_mb, peak_mb, reset_peak, resident_mb

MB = 1024 * 1024


def test_peak_since_the_mark_sees_a_block_and_forgets_it() -> None:
    """80 MB written (so resident) then freed: the peak since the mark rose by about 80 MB;
    after a new mark it is back near what is resident (within 40 MB of slack)."""
    if not reset_peak():
        pytest.skip("this OS cannot reset the peak resident memory")
    before = resident_mb()
    block = bytearray(80 * MB)
    block[::4096] = b"x" * len(block[::4096])  # touch every page
    del block
    assert peak_mb() >= before + 70
    assert lifetime_peak_mb() >= before + 70
    assert reset_peak()
    assert peak_mb() < resident_mb() + 40
