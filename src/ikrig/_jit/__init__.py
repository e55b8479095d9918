"""Numba set-up and its cache: :mod:`~ikrig._jit.setup` (a writable compile cache, the
thread count, the one-time "compiling" notice; import it, not ``numba``, in every module
that defines kernels) and :mod:`~ikrig._jit.cache` (a cached kernel is compiled again when
any ikrig module it compiles in changes)."""
