"""The chain solvers' shared machinery (private to :mod:`ikrig.solvers`): problem set-up and
validation (``problem``), constraint packing (``packing``), running a solve and building its
result (``run``), the one-problem fast path (``single``, ``single_kernels``), rescaling
extreme chains (``rescale``) and the kernels' shared chain steps (``chain_common``,
``frame_chain``)."""
