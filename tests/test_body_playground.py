"""The whole-body playground (``ikrig playground --body``, issue 38): a character's hands,
feet and look target dragged in the browser, the whole body solved to them.

Server-side tests drive it through its Python API (``move``, the panel's controls), as a
drag does; the browser test opens the page in headless Chromium (skipped without viser,
Playwright or Chromium). The goals of the shared characters are made by forward kinematics
of another pose of the same skeleton (another frame's rotations, the frame's own bone
offsets, the pelvis where the frame has it), so every one of them can be met.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("viser", reason="viser not installed (the [viewer] extra)")

from helpers import SHARED, serve_then_stop  # noqa: E402
from test_viewer import _canvas_rgb, _navy, _wait_for, browser  # noqa: E402, F401

from ikrig.character.up import detect_up, to_y_up  # noqa: E402
from ikrig.data import walk_clip  # noqa: E402
from ikrig.errors import InputError  # noqa: E402
from ikrig.io import read_clip  # noqa: E402
from ikrig.math.quat import quat_rotate  # noqa: E402
from ikrig.pose import Motion  # noqa: E402
from ikrig.skeleton import Skeleton  # noqa: E402
from ikrig.viz.body_playground import LOOK, BodyPlayground, Effector  # noqa: E402

DATA = SHARED / "data"
CHARACTERS = [p for f in ("bvh", "bvh_more", "gltf") for p in sorted((DATA / f).glob("*.*"))
              if p.suffix in (".bvh", ".glb")]  # fmt: skip


@pytest.fixture(scope="module")
def walk():
    return walk_clip(seconds=2.0, fps=30)


@pytest.fixture
def app(walk):
    a = BodyPlayground(walk, frame=10, port=0)
    yield a
    a.close()


def _point(e: Effector, motion: Motion) -> np.ndarray:
    rot, pos = motion.fk()
    at = pos[e.joint]
    if e.offset_local is not None:
        at = at + quat_rotate(rot[e.joint], np.asarray(e.offset_local))
    return at


def _other_pose(app: BodyPlayground, motion: Motion, k: int) -> Motion:
    """Frame ``k``'s rotations on the shown frame's bone offsets, its pelvis moved to where
    the shown frame has it: a pose of the same skeleton every goal can reach."""
    pose, sk = app.pose, motion.skeleton
    pl = pose.positions_local.copy()
    roots = sk.parents < 0
    shift = pose.positions_world()[app._pelvis] - motion[k].positions_world()[app._pelvis]
    pl[roots] = motion[k].positions_local[roots] + shift
    return pose.replace(rotations_local=motion[k].rotations_local, positions_local=pl)


def _targets_of(app: BodyPlayground, other: Motion) -> dict[str, np.ndarray]:
    rot, pos = other.fk()
    out = {}
    for e in app.effectors:
        if e.name == LOOK:
            out[e.name] = pos[e.joint] + quat_rotate(rot[e.joint], app._forward) * app.unit
        else:
            out[e.name] = _point(e, other)
    return out


# ------------------------------------------------------------------------------ the handles
def test_the_walk_has_both_hands_both_feet_and_a_look(app, walk):
    assert [e.name for e in app.effectors] == [
        "left hand", "right hand", "left foot", "right foot", "look",
    ]  # fmt: skip
    names = [walk.skeleton.names[e.joint] for e in app.effectors]
    assert names == ["LeftHand", "RightHand", "LeftFoot", "RightFoot", "Head"]


def test_the_handles_start_on_the_pose_and_change_nothing(app, walk):
    """At rest the handles sit where the frame has its joints: the solve is the frame,
    bit for bit."""
    r = app.result
    assert r.reached.all() and int(r.iterations) == 0
    np.testing.assert_array_equal(r.motion.rotations_local, walk[10].rotations_local)
    np.testing.assert_array_equal(r.motion.positions_local, walk[10].positions_local)
    for e in app.effectors:
        if e.name != LOOK:
            np.testing.assert_allclose(app.handles[e.name].position, _point(e, walk[10]),
                                       atol=1e-5)  # fmt: skip


def test_a_dragged_hand_is_reached_and_the_feet_stay(app, walk):
    hand = next(e for e in app.effectors if e.name == "left hand")
    at = _point(hand, walk[10]) + np.array([0.1, 0.25, 0.15]) * app.unit
    feet = {e.name: _point(e, walk[10]) for e in app.effectors if e.name.endswith("foot")}
    r = app.move("left hand", at)
    assert r.reached.all()
    solved = r.motion
    assert np.linalg.norm(_point(hand, solved) - at) <= 1e-3 * app.unit
    for e in app.effectors:
        if e.name in feet:
            assert np.linalg.norm(_point(e, solved) - feet[e.name]) <= 1e-3 * app.unit
    np.testing.assert_allclose(app.handles["left hand"].position, at, atol=1e-5)
    assert "left hand" in app.gui_info.content and "reached" in app.gui_info.content


def test_every_goal_of_another_pose_is_reached(app, walk):
    other = _other_pose(app, walk, 40)
    for name, at in _targets_of(app, other).items():
        r = app.move(name, at)
    assert r.reached.all(), (r.position_error / app.unit, r.rotation_error)
    for e, goal_at in zip(app.effectors, _targets_of(app, other).values()):
        if e.name != LOOK:
            assert np.linalg.norm(_point(e, r.motion) - goal_at) <= 1e-3 * app.unit


def test_the_look_target_turns_the_head_and_the_rest_holds(app, walk):
    """The head looks at the target; the hands and feet stay on their handles (the arms
    make up for the chest's share of the turn); with them off, only the chain turns."""
    head = next(e for e in app.effectors if e.name == LOOK)
    at = walk[10].positions_world()[head.joint] + np.array([1.0, 0.3, 0.6]) * app.unit
    r = app.move(LOOK, at)
    assert r.reached.all()
    rot, pos = r.motion.fk()
    eye = quat_rotate(rot[head.joint], app._forward)
    to = (at - pos[head.joint]) / np.linalg.norm(at - pos[head.joint])
    assert np.degrees(np.arccos(np.clip(eye @ to, -1, 1))) < 0.1
    for e in app.effectors:
        if e.name != LOOK:
            assert np.linalg.norm(_point(e, r.motion) - _point(e, walk[10])) <= 1e-3 * app.unit
    for name, box in app.gui_on.items():
        box.value = name == LOOK
    r = app.result
    assert r.reached.all()
    chain = set(app._look[: int(app.gui_chain.value)])
    turn = np.abs(r.motion.rotations_local - walk[10].rotations_local).max(-1)
    moved = np.flatnonzero(turn > 1e-12)  # the others by a rounding at most
    assert set(moved.tolist()) <= chain and head.joint in set(moved.tolist())
    app.gui_chain.value = 1  # the head alone
    turn = np.abs(app.result.motion.rotations_local - walk[10].rotations_local).max(-1)
    moved = np.flatnonzero(turn > 1e-12)
    assert moved.tolist() == [head.joint] and app.result.reached.all()


def test_goals_turned_off_leave_the_pose(app, walk):
    hand = next(e for e in app.effectors if e.name == "right hand")
    app.move("right hand", _point(hand, walk[10]) + [0.0, 0.3 * app.unit, 0.0])
    app.gui_on["right hand"].value = False
    assert "right hand" not in app.gui_info.content
    assert not app.handles["right hand"].visible
    for box in app.gui_on.values():
        box.value = False
    r = app.result
    assert len(app.goals) == 0 and int(r.iterations) == 0
    np.testing.assert_array_equal(r.motion.rotations_local, walk[10].rotations_local)
    assert "as recorded" in app.gui_info.content


def test_an_unreachable_hand_is_flagged_and_drawn(app, walk):
    hand = next(e for e in app.effectors if e.name == "left hand")
    far = _point(hand, walk[10]) + np.array([0.0, 5.0, 0.0]) * app.unit
    app.gui_root.value = "pinned"
    r = app.move("left hand", far)
    assert not r.reached[0] and np.isfinite(r.motion.rotations_local).all()
    assert "not reached" in app.gui_info.content
    assert app.misses.handle.visible


def test_the_root_modes(app, walk):
    pelvis = app._pelvis
    feet = [e for e in app.effectors if e.name.endswith("foot")]
    for mode in ("pinned", "translate", "free"):
        app.gui_root.value = mode
        at = _point(feet[0], walk[10]) + np.array([0.0, 0.4, 0.2]) * app.unit
        r = app.move(feet[0].name, at)
        root_moved = not np.allclose(r.motion.positions_local[0], walk[10].positions_local[0])
        root_turned = not np.allclose(r.motion.rotations_local[0], walk[10].rotations_local[0])
        if mode == "pinned":
            assert not root_moved
        if mode == "translate":
            assert not root_turned
        assert pelvis >= 0


def test_a_new_frame_moves_the_handles_to_its_pose(app, walk):
    app.move("left hand", app.targets["left hand"] + [0.0, 0.2 * app.unit, 0.0])
    app.gui_frame.value = 30
    assert app.pose.rotations_local is not None
    np.testing.assert_array_equal(app.result.motion.rotations_local, walk[30].rotations_local)
    hand = next(e for e in app.effectors if e.name == "left hand")
    np.testing.assert_allclose(app.targets["left hand"], _point(hand, walk[30]), atol=1e-9)


def test_reset_puts_the_handles_back(app, walk):
    app.move("right foot", app.targets["right foot"] + [0.0, 0.3 * app.unit, 0.0])
    r = app.reset()
    assert int(r.iterations) == 0
    np.testing.assert_array_equal(r.motion.rotations_local, walk[10].rotations_local)


def test_bad_input(walk):
    with pytest.raises(InputError, match="frame"):
        BodyPlayground(walk, frame=len(walk.rotations_local), port=0)
    with pytest.raises(InputError, match="Motion"):
        BodyPlayground("walk.bvh", port=0)  # type: ignore[arg-type]
    sk = Skeleton(("bone.L", "tip.L"), [-1, 0], [[0, 0, 0], [1, 0, 0]])
    with pytest.raises(InputError, match="no hands, feet or head"):
        BodyPlayground(Motion.rest(sk), port=0)


# ------------------------------------------------------------------------------ shared rigs
@pytest.mark.skipif(not CHARACTERS, reason="../shared/data is not present")
@pytest.mark.parametrize("path", CHARACTERS, ids=lambda p: p.name)
def test_every_shared_character_reaches_another_pose(path):
    motion = read_clip(path).motion
    motion = to_y_up(motion, detect_up(motion))
    app = BodyPlayground(motion, frame=0, port=0)
    try:
        assert sum(e.name.endswith("foot") for e in app.effectors) >= 2
        assert sum(e.name == LOOK for e in app.effectors) == 1
        if path.stem != "Fox":  # a quadruped's front legs are feet
            assert sum(e.name.endswith("hand") for e in app.effectors) == 2
        other = _other_pose(app, motion, motion.num_frames // 2)
        targets = _targets_of(app, other)
        app.gui_on[LOOK].value = False
        for name, at in targets.items():
            r = app.move(name, at)
        assert r.reached.all(), (path.name, r.position_error / app.unit)
        look_alone = {name: box for name, box in app.gui_on.items() if name != LOOK}
        for box in look_alone.values():
            box.value = False
        app.gui_on[LOOK].value = True
        assert app.result.reached.all(), (path.name, app.result.rotation_error)
        # all at once: the spine and root the hands and feet turn carry the head off its
        # target, which only the look's chain may bring back (a Bandai walk missed by a
        # leg before the look's target direction was frozen in its chain's base frame)
        for box in look_alone.values():
            box.value = True
        r = app.result
        assert r.reached.all(), (path.name, r.position_error / app.unit, r.rotation_error)
    finally:
        app.close()


# ------------------------------------------------------------------------------ browser, CLI
@pytest.mark.slow
def test_body_playground_in_the_browser(browser, app, walk, tmp_path):  # noqa: F811
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    try:
        page.goto(app.url)
        page.wait_for_selector("canvas", timeout=30000)
        before = _wait_for(page, lambda im: _navy(im).sum() > 200)
        page.screenshot(path=str(tmp_path / "body_playground.png"))
        hand = next(e for e in app.effectors if e.name == "left hand")
        app.move("left hand", _point(hand, walk[10]) + np.array([0.0, 0.6, 0.0]) * app.unit)
        _wait_for(page, lambda im: (_navy(im) != _navy(before)).sum() > 100, timeout=30.0)
    finally:
        page.close()


@pytest.mark.parametrize("args", [["--body"], [str(DATA / "bvh" / "cmu_131_02_walk.bvh")]],
                         ids=["walk", "clip"])  # fmt: skip
def test_cli_serves_the_body_playground(args):
    import signal

    if not args[0].startswith("--") and not (DATA / "bvh").is_dir():
        pytest.skip("../shared/data is not present")
    argv = args + ["--port", "0"]
    command = f"from ikrig.cli.playground import playground; playground.main({argv!r})"
    _, returncode, out = serve_then_stop([sys.executable, "-c", command], signal.SIGINT)
    assert returncode == 0, out
    assert "ikrig: stopping" in out


def test_cli_says_what_the_body_options_need():
    from click.testing import CliRunner

    from ikrig.cli.playground import playground

    r = CliRunner().invoke(playground, ["--frame", "3"])
    assert r.exit_code == 2 and "--frame need --body or a CLIP" in r.output
    r = CliRunner().invoke(playground, ["--body", "--frame", "100000", "--port", "0"])
    assert r.exit_code == 2 and "frames" in r.output
