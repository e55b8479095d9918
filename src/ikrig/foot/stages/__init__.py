"""The numbered steps of foot placement, one per module, shared by the offline pipeline
(:mod:`ikrig.foot.offline`, all frames at once) and the live placer (:mod:`ikrig.foot.live`,
one frame with carried state). Recipes (:mod:`ikrig.foot.recipes`) choose which run.

=======  ==================  ===================================================
step     module              what it does
=======  ==================  ===================================================
2        ``contacts``        contact flags and pinning curves (offline, live)
3a, 3e   ``goals``           sole points, the animation's clearance, planted offsets
3b       ``align``           soles turned to the ground normal
3c       ``lock``            planted feet held in place
3d       ``footprints``      offline: each footprint slid onto one surface
4        ``swing``           vertical foot offsets: planned swings, or live estimates
5a, 5b   ``targets``         the root following the ground, and the ankle targets
5c       ``pitch``           a long body (a quadruped) turned with the ground
5d       ``carry``           offline: a foot that never plants carried by its hip
6a, 6b   ``pelvis``          the pelvis coming down where a leg needs it
7        ``knees``           offline: knee corrections smoothed in time
8a, 8b   ``legs_ik``         two-bone leg IK and the ankle turn
=======  ==================  ===================================================

The numbers are :mod:`ikrig.foot.offline`'s (step 1, legs and soles, is the context's;
step 9, the baseline, the offline driver's).

Every step takes the :class:`~ikrig.foot.context.FootContext` first, at most five
arguments, works on ``F`` frames (``F = 1`` live) and updates the state it is given in
place. World space, Y up, lengths in the clip's units, times in seconds.
"""
