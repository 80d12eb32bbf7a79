"""The one numba decorator every kernel uses: compiled on first call, cached on disk.

``error_model="numpy"``: a division by zero gives inf or nan as in NumPy
instead of raising; kernels guard their divisions as the NumPy code does, so
results match. No ``fastmath``: floating-point operations stay in the order
written (no reassociation, no fused multiply-add), which is what lets the
kernels reproduce the NumPy reference to the last bit where they follow its
order of operations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from numba import njit

F = TypeVar("F", bound=Callable[..., Any])


def kernel(fn: F) -> F:
    """A compiled, disk-cached kernel."""
    return cast(F, njit(cache=True, nogil=True, error_model="numpy")(fn))


def inline(fn: F) -> F:
    """A small helper called by kernels (compiled once per signature; LLVM inlines it)."""
    return cast(F, njit(cache=True, inline="always", error_model="numpy")(fn))
