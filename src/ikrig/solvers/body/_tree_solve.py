"""The damped Gauss-Newton system of the whole-body solver, solved on the tree (private).

``H delta = g`` with ``H`` symmetric positive definite and non-zero 3 x 3 blocks only
between a node and its ancestors (a goal's residual depends on the nodes of its path up the
tree, so two nodes share a goal only if one is the other's ancestor). Eliminating the nodes
leaves first (the reverse of their parents-first order) only updates blocks between a
node's ancestors, which are ancestors of one another: no fill-in. The work is about
``B * D**2`` 3 x 3 products (``B`` nodes, ``D`` the deepest path) instead of ``(3 B)**3``.
"""

from __future__ import annotations

from ..._jit.setup import njit


@njit(cache=True, inline="always")
def _inv3(a, out):
    """``out = a^-1`` for a symmetric positive definite 3 x 3 ``a`` (cofactors)."""
    c00 = a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]
    c01 = a[1, 2] * a[2, 0] - a[1, 0] * a[2, 2]
    c02 = a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]
    det = a[0, 0] * c00 + a[0, 1] * c01 + a[0, 2] * c02
    inv = 1.0 / det if det > 0.0 else 0.0
    out[0, 0] = c00 * inv
    out[1, 0] = c01 * inv
    out[2, 0] = c02 * inv
    out[0, 1] = (a[0, 2] * a[2, 1] - a[0, 1] * a[2, 2]) * inv
    out[1, 1] = (a[0, 0] * a[2, 2] - a[0, 2] * a[2, 0]) * inv
    out[2, 1] = (a[0, 1] * a[2, 0] - a[0, 0] * a[2, 1]) * inv
    out[0, 2] = (a[0, 1] * a[1, 2] - a[0, 2] * a[1, 1]) * inv
    out[1, 2] = (a[0, 2] * a[1, 0] - a[0, 0] * a[1, 2]) * inv
    out[2, 2] = (a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]) * inv


@njit(cache=True)
def add_block_products(hanc, node, k, a, b):
    """``hanc[node, k] += a^T b`` (3 x 3 blocks)."""
    h = hanc[node, k]
    for r in range(3):
        for c in range(3):
            h[r, c] += a[0, r] * b[0, c] + a[1, r] * b[1, c] + a[2, r] * b[2, c]


@njit(cache=True)
def tree_solve(tree, sc):
    """Solve ``H delta = g`` in place: ``sc.hanc`` holds ``H`` (``hanc[b, k]`` the block of
    node ``b`` and its ``k``-th ancestor, ``k = 0`` the diagonal) and is overwritten by the
    factors; ``sc.grad`` holds ``g`` and is overwritten; ``delta`` goes to ``sc.step``."""
    anc, depth = tree.anc, tree.depth
    hanc, grad, hinv, step, gtmp = sc.hanc, sc.grad, sc.hinv, sc.step, sc.gtmp
    B = depth.shape[0]
    for b in range(B - 1, -1, -1):
        hb = hinv[b]
        _inv3(hanc[b, 0], hb)
        g0, g1, g2 = grad[b, 0], grad[b, 1], grad[b, 2]
        h0 = hb[0, 0] * g0 + hb[0, 1] * g1 + hb[0, 2] * g2
        h1 = hb[1, 0] * g0 + hb[1, 1] * g1 + hb[1, 2] * g2
        h2 = hb[2, 0] * g0 + hb[2, 1] * g1 + hb[2, 2] * g2
        step[b, 0], step[b, 1], step[b, 2] = h0, h1, h2
        d = depth[b]
        for i in range(1, d):  # G_i = H_bb^-1 H_{b, y_i}
            m = hanc[b, i]
            g = gtmp[i]
            for r in range(3):
                for c in range(3):
                    g[r, c] = hb[r, 0] * m[0, c] + hb[r, 1] * m[1, c] + hb[r, 2] * m[2, c]
        for i in range(1, d):
            y = anc[b, i]
            m = hanc[b, i]  # H_{b, y_i}
            for c in range(3):
                grad[y, c] -= m[0, c] * h0 + m[1, c] * h1 + m[2, c] * h2
            for j in range(i, d):  # H_{y_i, y_j} -= H_{b, y_i}^T H_bb^-1 H_{b, y_j}
                t = hanc[y, j - i]
                g = gtmp[j]
                for r in range(3):
                    for c in range(3):
                        t[r, c] -= m[0, r] * g[0, c] + m[1, r] * g[1, c] + m[2, r] * g[2, c]
        for i in range(1, d):
            hanc[b, i, :, :] = gtmp[i]
    for b in range(B):  # back substitution, ancestors first
        d = depth[b]
        s0, s1, s2 = step[b, 0], step[b, 1], step[b, 2]
        for i in range(1, d):
            y = anc[b, i]
            g = hanc[b, i]
            s0 -= g[0, 0] * step[y, 0] + g[0, 1] * step[y, 1] + g[0, 2] * step[y, 2]
            s1 -= g[1, 0] * step[y, 0] + g[1, 1] * step[y, 1] + g[1, 2] * step[y, 2]
            s2 -= g[2, 0] * step[y, 0] + g[2, 1] * step[y, 1] + g[2, 2] * step[y, 2]
        step[b, 0], step[b, 1], step[b, 2] = s0, s1, s2
