"""The built-in humanoid: a 31-joint skeleton with the CMU MotionBuilder joint names.

Space and units: metres; Y up, facing +Z (its left is +X), the floor is the plane ``y = 0``.
The skeleton has the 31 joints of the CMU MotionBuilder conversions (the shared ``xia_*.bvh``
clips), in the same order and hierarchy, with its own human proportions: hips at 0.95 m, leg
length (thigh plus shin) 0.85 m, ankle 0.08 m and toe joint 0.02 m above the floor at rest,
about 1.73 m tall. The rest pose is a T-pose with straight legs.
"""

from __future__ import annotations

import numpy as np

from ..skeleton import Skeleton

__all__ = ["ANKLE_HEIGHT", "TOE_HEIGHT", "humanoid_skeleton"]

X_AXIS = np.array([1.0, 0.0, 0.0])
Y_AXIS = np.array([0.0, 1.0, 0.0])
Z_AXIS = np.array([0.0, 0.0, 1.0])

# (name, parent, offset in metres); the left side is +X.
_JOINTS = (
    ("Hips", None, (0.0, 0.95, 0.0)),
    ("LHipJoint", "Hips", (0.0, 0.0, 0.0)),
    ("LeftUpLeg", "LHipJoint", (0.09, -0.02, 0.0)),
    ("LeftLeg", "LeftUpLeg", (0.0, -0.43, 0.0)),
    ("LeftFoot", "LeftLeg", (0.0, -0.42, 0.0)),
    ("LeftToeBase", "LeftFoot", (0.0, -0.06, 0.13)),
    ("RHipJoint", "Hips", (0.0, 0.0, 0.0)),
    ("RightUpLeg", "RHipJoint", (-0.09, -0.02, 0.0)),
    ("RightLeg", "RightUpLeg", (0.0, -0.43, 0.0)),
    ("RightFoot", "RightLeg", (0.0, -0.42, 0.0)),
    ("RightToeBase", "RightFoot", (0.0, -0.06, 0.13)),
    ("LowerBack", "Hips", (0.0, 0.0, 0.0)),
    ("Spine", "LowerBack", (0.0, 0.12, -0.01)),
    ("Spine1", "Spine", (0.0, 0.14, 0.0)),
    ("Neck", "Spine1", (0.0, 0.20, -0.01)),
    ("Neck1", "Neck", (0.0, 0.06, 0.01)),
    ("Head", "Neck1", (0.0, 0.08, 0.02)),
    ("LeftShoulder", "Spine1", (0.03, 0.15, 0.0)),
    ("LeftArm", "LeftShoulder", (0.16, 0.04, 0.0)),
    ("LeftForeArm", "LeftArm", (0.28, 0.0, 0.0)),
    ("LeftHand", "LeftForeArm", (0.25, 0.0, 0.0)),
    ("LeftFingerBase", "LeftHand", (0.05, 0.0, 0.0)),
    ("LeftHandIndex1", "LeftFingerBase", (0.04, 0.0, 0.0)),
    ("LThumb", "LeftHand", (0.02, 0.0, 0.03)),
    ("RightShoulder", "Spine1", (-0.03, 0.15, 0.0)),
    ("RightArm", "RightShoulder", (-0.16, 0.04, 0.0)),
    ("RightForeArm", "RightArm", (-0.28, 0.0, 0.0)),
    ("RightHand", "RightForeArm", (-0.25, 0.0, 0.0)),
    ("RightFingerBase", "RightHand", (-0.05, 0.0, 0.0)),
    ("RightHandIndex1", "RightFingerBase", (-0.04, 0.0, 0.0)),
    ("RThumb", "RightHand", (-0.02, 0.0, 0.03)),
)
_END_SITES = (
    ("LeftToeBase", (0.0, 0.0, 0.06)),
    ("RightToeBase", (0.0, 0.0, 0.06)),
    ("Head", (0.0, 0.18, 0.0)),
    ("LeftHandIndex1", (0.03, 0.0, 0.0)),
    ("LThumb", (0.02, 0.0, 0.02)),
    ("RightHandIndex1", (-0.03, 0.0, 0.0)),
    ("RThumb", (-0.02, 0.0, 0.02)),
)

NAMES = tuple(name for name, _, _ in _JOINTS)
JOINT_INDEX = {name: j for j, name in enumerate(NAMES)}
LEGS = (  # (hip, knee, ankle, toe, side sign: +1 left, -1 right)
    ("LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase", 1.0),
    ("RightUpLeg", "RightLeg", "RightFoot", "RightToeBase", -1.0),
)

ANKLE_HEIGHT = 0.08
"""Height (m) of the ankle joint above the floor when the foot is flat."""
TOE_HEIGHT = 0.02
"""Height (m) of the toe joint above the floor when the foot is flat."""
TOE_OFFSET = np.array(_JOINTS[JOINT_INDEX["LeftToeBase"]][2])  # ankle -> toe joint, foot frame
THIGH, SHIN = 0.43, 0.42


def humanoid_skeleton() -> Skeleton:
    """The built-in 31-joint humanoid (CMU MotionBuilder names and hierarchy), in metres.

    Joints, parents first: Hips; LHipJoint, LeftUpLeg, LeftLeg, LeftFoot, LeftToeBase; the
    same on the right (RHipJoint, RightUpLeg, ...); LowerBack, Spine, Spine1, Neck, Neck1,
    Head; LeftShoulder, LeftArm, LeftForeArm, LeftHand, LeftFingerBase, LeftHandIndex1,
    LThumb; the same on the right (RThumb). End sites hang from the seven leaves (toe tips,
    head top, finger and thumb tips). Y up, facing +Z, T-pose at rest with the feet flat on
    ``y = 0``; leg length 0.85 m.
    """
    parents = [-1 if p is None else JOINT_INDEX[p] for _, p, _ in _JOINTS]
    offsets = [o for _, _, o in _JOINTS]
    return Skeleton(
        NAMES,
        np.array(parents),
        np.array(offsets, dtype=np.float64),
        np.array([JOINT_INDEX[n] for n, _ in _END_SITES]),
        np.array([o for _, o in _END_SITES], dtype=np.float64),
    )
