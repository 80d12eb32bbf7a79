"""What formations add to a snapshot (``sense/formations.py``): per group keeping one, its
members (ids, sorted), each member's slot, whether its centroid anchor has formed and
the anchor's position, heading and velocity. The slot offsets follow from the pattern
and the number of members, so they are computed again, not saved. Snapshots written
before formations existed have no ``formations`` part: nobody had formed then."""

from __future__ import annotations

from typing import Any

import numpy as np

from behaviortk.sim.snapshot_file import SavedState


def gather(sim: Any, arrays: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """The manifest's ``formations`` part; its arrays go into ``arrays``."""
    out = []
    for i, (group, form) in enumerate(sim.formations.groups.items()):
        arrays[f"formation{i}/members"] = form.members
        arrays[f"formation{i}/slot"] = form.slot
        arrays[f"formation{i}/pose"] = form.pose
        out.append({"group": group, "formed": bool(form.formed)})
    return out


def restore(f: SavedState, sim: Any) -> None:
    """Put ``sim``'s formations back from ``f`` (checked first)."""
    part = f.manifest.get("formations", [])
    if not isinstance(part, list):
        raise f.error(f"the manifest's 'formations' must be a list, got {part!r}")
    bound = int(sim._next_id)
    for i, entry in enumerate(part):
        group = f.key("group", str, entry)
        form = sim.formations.groups.get(group)
        if form is None:
            raise f.error(f"formation of group {group!r}: the definition gives it none")
        members = f.array(f"formation{i}/members")
        slot = f.array(f"formation{i}/slot")
        pose = f.array(f"formation{i}/pose")
        ok = (
            members.dtype == np.int64 and slot.dtype == np.int64 and members.ndim == 1
            and slot.shape == members.shape and pose.shape == (3, 2)
            and pose.dtype == np.float64 and bool(np.isfinite(pose).all())
            and (members.size == 0 or (int(members.min()) >= 0 and int(members.max()) < bound))
            and bool((np.diff(members) > 0).all())
        )  # fmt: skip
        if not ok:
            raise f.error(f"the formation of group {group!r} does not fit its agents")
        form.set_members(members)
        if slot.size and (int(slot.min()) < -1 or int(slot.max()) >= form.offsets.shape[0]):
            raise f.error(f"the formation of group {group!r} names slots it does not have")
        form.slot, form.pose, form.formed = slot, pose, f.key("formed", bool, entry)
