"""Where sweep and tune tasks run: dask.distributed, local by default or a given scheduler.

``connect`` yields a Client: on ``tcp://host:port`` when given, else on a
LocalCluster of one single-threaded worker process per core (a tick is NumPy
and Python, so processes, not threads, use the cores). ``completed`` submits
tasks with retries and yields (task, result) as each finishes: a worker that
dies mid-task has its tasks rescheduled by the scheduler, and a task that
raises is retried, so one lost worker does not lose the sweep.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

RETRIES = 2


class ClusterError(RuntimeError):
    """The scheduler could not be reached, or a task failed after its retries."""


@contextmanager
def connect(scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """A dask Client on ``scheduler``, or on a local cluster sized to the machine."""
    import logging

    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"cannot reach the scheduler at {scheduler}: {exc}") from None
        with client:
            yield client
        return
    n = workers or max(1, os.cpu_count() or 1)
    with (
        LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def completed(
    client: Any, fn: Callable[[Any], Any], tasks: Iterable[Any]
) -> Iterator[tuple[Any, Any]]:
    """Run ``fn(task)`` for each task on the cluster; yield (task, result) as each completes."""
    from distributed import as_completed

    futures = {}
    for task in tasks:
        future = client.submit(fn, task, pure=False, retries=RETRIES)
        futures[future] = task
    try:
        for future in as_completed(futures):
            task = futures.pop(future)
            try:
                result = future.result()
            except Exception as exc:
                raise ClusterError(f"a task failed after {RETRIES} retries: {exc}") from exc
            yield task, result
    finally:
        for future in futures:
            future.cancel()
