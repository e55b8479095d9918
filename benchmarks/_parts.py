"""Time the parts of a call by wrapping the functions that do them, where the code under
test looks them up (``bench_batch.py``'s batch job, ``bench_bvh.py``'s reads and writes)."""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Parts = tuple[tuple[str, str, str], ...]
"""``(module, function name, part)``: the function ``module.name`` does ``part``."""


@contextmanager
def timed_parts(parts: Parts, spent: dict[str, float]) -> Iterator[None]:
    """Inside the block, every function of ``parts`` adds its seconds to ``spent[part]``;
    the functions are put back afterwards."""
    saved: list[tuple[Any, str, Callable]] = []

    def wrap(fn: Callable, part: str) -> Callable:
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[part] = spent.get(part, 0.0) + time.perf_counter() - t0

        return timed

    try:
        for module, name, part in parts:
            mod = importlib.import_module(module)
            saved.append((mod, name, getattr(mod, name)))
            setattr(mod, name, wrap(getattr(mod, name), part))
        yield
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


def median_parts(call: Callable[[], None], parts: Parts, repeats: int, warm: int = 0) -> dict:
    """Median seconds of each part of ``parts`` and of the whole call (``"total"``) over
    ``repeats`` calls of ``call``, after ``warm`` calls that are not counted."""
    samples = []
    for k in range(warm + repeats):
        spent: dict[str, float] = {}
        with timed_parts(parts, spent):
            t0 = time.perf_counter()
            call()
            total = time.perf_counter() - t0
        if k >= warm:
            samples.append(dict(spent, total=total))
    names = {k for s in samples for k in s}
    return {k: statistics.median(s.get(k, 0.0) for s in samples) for k in names}
