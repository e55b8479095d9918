"""Compiled helpers are not shared across ``fastmath`` options or error models (see
test_compile_order.py).

Numba compiles a jitted helper called from a kernel being compiled with the helper's own
``fastmath`` options plus the kernel's, and caches it so: a helper declared without them
that kernels with and without ``fastmath`` both call computes with the options of
whichever compiled it first, in every later kernel too. For the shared quaternion product
that moved results by an ulp with the compile order. This check follows every ikrig
kernel's calls (through functions Numba inlines, which compile within their caller), works
out each helper's options as compiled from each kernel (its own and every caller's on the
way), and requires one set per helper. The error model works alike, but a helper's own
``error_model``, when it declares one, wins over its caller's.
"""

from __future__ import annotations

import dis
import importlib
import pkgutil

from numba.core.registry import CPUDispatcher

import ikrig


def _kernels() -> list[CPUDispatcher]:
    found = []
    for info in pkgutil.walk_packages(ikrig.__path__, "ikrig."):
        if any(part in info.name for part in (".blender", ".viz", "__main__")):
            continue  # (optional extras; no kernels there)
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == info.name:
                found.append(value)
    return found


def _fastmath(fn: CPUDispatcher) -> frozenset:
    return frozenset(fn.targetoptions.get("fastmath") or ())


def _error_model(fn: CPUDispatcher, caller: str) -> str:
    return fn.targetoptions.get("error_model") or caller


def _compiled_options(kernel: CPUDispatcher) -> dict[CPUDispatcher, set[tuple]]:
    """Each jitted helper ``kernel`` calls, directly or not, that Numba does not inline,
    with the options it may compile with from ``kernel``, one ``(fastmath, error_model)``
    per way there: its own ``fastmath`` and that of every function on the way; its own
    ``error_model``, else its caller's."""
    found: dict[CPUDispatcher, set[tuple]] = {}
    done: set[tuple] = set()
    todo = [(kernel, (_fastmath(kernel), _error_model(kernel, "python")))]
    while todo:
        fn, options = todo.pop()
        if (fn, options) in done:
            continue
        done.add((fn, options))
        names = fn.py_func.__globals__
        for ins in dis.get_instructions(fn.py_func):
            value = names.get(ins.argval) if ins.opname == "LOAD_GLOBAL" else None
            if not isinstance(value, CPUDispatcher):
                continue
            mine = (options[0] | _fastmath(value), _error_model(value, options[1]))
            if value.targetoptions.get("inline", "never") != "always":
                found.setdefault(value, set()).add(mine)
            todo.append((value, mine))
    return found


def _name(fn: CPUDispatcher) -> str:
    return f"{fn.py_func.__module__}.{fn.py_func.__name__}"


def _compiled() -> dict[CPUDispatcher, set[tuple]]:
    compiled: dict[CPUDispatcher, set[tuple]] = {}
    kernels = _kernels()
    assert len(kernels) > 100  # the walk finds the package's kernels
    for kernel in kernels:
        for helper, options in _compiled_options(kernel).items():
            compiled.setdefault(helper, set()).update(options)
    return compiled


def test_each_helper_compiles_with_one_set_of_fastmath_options():
    mixed = [_name(h) for h, got in _compiled().items() if len({f for f, _ in got}) > 1]
    assert not mixed, sorted(mixed)


def test_each_helper_compiles_with_one_error_model():
    """A helper that kernels of both error models call declares its own: with NumPy's, a
    division by zero gives inf or NaN; with Python's it raises, which a kernel of NumPy's
    model promises not to (and whichever compiled the helper first decided for all)."""
    mixed = [_name(h) for h, got in _compiled().items() if len({m for _, m in got}) > 1]
    assert not mixed, sorted(mixed)
