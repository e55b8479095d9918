"""Compiled (Numba) kernels that several packages share, taking and returning named records.

* :mod:`ikrig.kernels.two_bone` -- the per-element analytic two-bone solve
  (:func:`~ikrig.kernels.two_bone.solve_two_bone_kernel`), used by the two-bone solver's
  array loops (:mod:`ikrig.solvers.two_bone`) and by the foot-placement leg IK.

These are building blocks for other kernels (call them from ``@njit`` code); the public,
validated entry points live in :mod:`ikrig.solvers`.
"""
