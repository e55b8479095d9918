"""The numbered steps of foot placement, one per module, shared by the offline pipeline
(:mod:`ikrig.foot.offline`, all frames at once) and the live placer (:mod:`ikrig.foot.live`,
one frame with carried state). Recipes (:mod:`ikrig.foot.recipes`) choose which run.

====  ==================  ===================================================
step  module              what it does
====  ==================  ===================================================
2     ``contacts``        contact flags and pinning curves (offline, live)
4a    ``goals``           sole points, the animation's clearance, planted offsets
7a    ``align``           soles turned to the ground normal
9     ``lock``            planted feet held in place
4b    ``swing``           vertical foot offsets: planned swings, or live estimates
3,4c  ``targets``         the root following the ground, and the ankle targets
5     ``pelvis``          the pelvis coming down where a leg needs it
6a    ``knees``           offline: knee corrections smoothed in time
6,7b  ``legs_ik``         two-bone leg IK and the ankle turn
====  ==================  ===================================================

Every step takes the :class:`~ikrig.foot.context.FootContext` first, at most five
arguments, works on ``F`` frames (``F = 1`` live) and updates the state it is given in
place. World space, Y up, lengths in the clip's units, times in seconds.
"""
