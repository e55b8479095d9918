"""Numba kernels of forward kinematics (:func:`ikrig.pose.fk`) and of bone-length change
(:func:`ikrig.pose.bone_length_change`)."""

from __future__ import annotations

import numpy as np

from .._jit.setup import njit


@njit(cache=True)
def fk_kernel(parents, rl, pl, rw, pw):
    """FK over flat poses: ``rl (N, J, 4)``, ``pl (N, J, 3)`` -> ``rw``, ``pw`` (filled)."""
    N, J = rl.shape[0], rl.shape[1]
    two = rl.dtype.type(2.0)
    for n in range(N):
        for j in range(J):
            p = parents[j]
            if p < 0:
                for c in range(4):
                    rw[n, j, c] = rl[n, j, c]
                for c in range(3):
                    pw[n, j, c] = pl[n, j, c]
                continue
            ax, ay, az, aw = rw[n, p, 0], rw[n, p, 1], rw[n, p, 2], rw[n, p, 3]
            bx, by, bz, bw = rl[n, j, 0], rl[n, j, 1], rl[n, j, 2], rl[n, j, 3]
            rw[n, j, 0] = aw * bx + ax * bw + ay * bz - az * by
            rw[n, j, 1] = aw * by - ax * bz + ay * bw + az * bx
            rw[n, j, 2] = aw * bz + ax * by - ay * bx + az * bw
            rw[n, j, 3] = aw * bw - ax * bx - ay * by - az * bz
            vx, vy, vz = pl[n, j, 0], pl[n, j, 1], pl[n, j, 2]
            tx = two * (ay * vz - az * vy)
            ty = two * (az * vx - ax * vz)
            tz = two * (ax * vy - ay * vx)
            pw[n, j, 0] = pw[n, p, 0] + vx + aw * tx + (ay * tz - az * ty)
            pw[n, j, 1] = pw[n, p, 1] + vy + aw * ty + (az * tx - ax * tz)
            pw[n, j, 2] = pw[n, p, 2] + vz + aw * tz + (ax * ty - ay * tx)


@njit(cache=True)
def bone_change_kernel(a, b, child, parent, out):
    """``out[k]`` (filled): the largest ``| |a[n, c] - a[n, p]| - |b[n, c] - b[n, p]| |`` over
    the poses ``n`` of ``a``, ``b (N, J, 3)`` float64, for the bones ``c = child[k]``,
    ``p = parent[k]``. Returns False as soon as a length is NaN or infinite."""
    N, B = a.shape[0], child.shape[0]
    for k in range(B):
        out[k] = 0.0
    for n in range(N):
        for k in range(B):
            c, p = child[k], parent[k]
            ax = a[n, c, 0] - a[n, p, 0]
            ay = a[n, c, 1] - a[n, p, 1]
            az = a[n, c, 2] - a[n, p, 2]
            bx = b[n, c, 0] - b[n, p, 0]
            by = b[n, c, 1] - b[n, p, 1]
            bz = b[n, c, 2] - b[n, p, 2]
            d = abs(np.sqrt(ax * ax + ay * ay + az * az) - np.sqrt(bx * bx + by * by + bz * bz))
            if not d < np.inf:  # NaN or infinite
                return False
            if d > out[k]:
                out[k] = d
    return True
