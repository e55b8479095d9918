"""The extension zip (issue 39): ``python -m ikrig.blender build`` writes a Blender 4.2+
extension that installs into a fresh Blender (``bpy``, its user folder in a temporary
directory), registers, and places a clip's feet with the ikrig it bundles, not this one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import pytest
from blender_scene import SHARED_BVH_ALL

from ikrig.blender.build import build_extension, manifest

INSTALL = r"""
import json, sys
from pathlib import Path
# this checkout's ikrig out of the way: the extension's own must be the one imported
sys.path[:] = [p for p in sys.path if not (Path(p or ".") / "ikrig").is_dir()]
import bpy
zip_path, clip = sys.argv[1], sys.argv[2]
done = bpy.ops.extensions.package_install_files(
    filepath=zip_path, repo="user_default", enable_on_install=True)
import ikrig
bpy.ops.import_anim.bvh(filepath=clip, update_scene_fps=True, update_scene_duration=True)
arm = bpy.context.view_layer.objects.active
mesh = bpy.data.meshes.new("Floor")
s = 1e4
mesh.from_pydata([(-s, -s, 0), (s, -s, 0), (s, s, 0), (-s, s, 0)], [], [(0, 1, 2, 3)])
bpy.context.scene.collection.objects.link(bpy.data.objects.new("Floor", mesh))
placed = bpy.ops.ikrig.foot_placement(ground="Floor")
print(json.dumps({"install": sorted(done), "ikrig": ikrig.__file__, "placed": sorted(placed),
                  "action": arm.animation_data.action.name,
                  "report": bpy.context.scene.ikrig.report}))
"""


def test_the_manifest_lists_the_wheels():
    text = manifest(["./wheels/a.whl", "./wheels/b.whl"])
    assert 'blender_version_min = "4.2.0"' in text and 'platforms = ["linux-x64"]' in text
    assert '"./wheels/a.whl",\n  "./wheels/b.whl"' in text


@pytest.mark.compile
def test_the_zip_installs_registers_and_places_feet(tmp_path):
    pytest.importorskip("bpy")
    if not SHARED_BVH_ALL:
        pytest.skip("no shared clips")
    zip_path = build_extension(tmp_path / "dist")
    with zipfile.ZipFile(zip_path) as z:
        names = z.namelist()
    assert {"blender_manifest.toml", "__init__.py"} <= set(names)
    wheels = [n for n in names if n.startswith("wheels/")]
    for dep in ("ikrig-", "numba-", "llvmlite-", "click-", "tqdm-"):
        assert any(n.startswith(f"wheels/{dep}") for n in wheels), dep
    assert not any(n.startswith("wheels/numpy-") for n in wheels)  # Blender's own
    clip = next(p for p in SHARED_BVH_ALL if "mocapbank" in p.name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["BLENDER_USER_RESOURCES"] = str(tmp_path / "blender")
    run = subprocess.run(
        [sys.executable, "-c", INSTALL, str(zip_path), str(clip)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["install"] == ["FINISHED"] and out["placed"] == ["FINISHED"]
    assert out["ikrig"].startswith(str(tmp_path / "blender" / "extensions"))
    assert out["action"].endswith("_ikrig") and "full:" in out["report"]


def test_the_render_command_writes_before_and_after(tmp_path):
    bpy = pytest.importorskip("bpy")
    if not SHARED_BVH_ALL:
        pytest.skip("no shared clips")
    import numpy as np

    from ikrig.blender.__main__ import main

    clip = next(p for p in SHARED_BVH_ALL if "xia_neutral_walk" in p.name)
    out = tmp_path / "before_after.png"
    assert main(["render", str(clip), "-o", str(out)]) == 0
    image = bpy.data.images.load(str(out))
    assert tuple(image.size) == (960, 480)
    px = np.empty(len(image.pixels), dtype=np.float32)
    image.pixels.foreach_get(px)
    px = px.reshape(480, 960, 4)[..., :3]
    before, after = px[:, :480], px[:, 480:]
    assert before.std() > 0.05 and after.std() > 0.05  # something drawn on each side
    assert np.abs(before - after).mean() > 1e-3  # the feet moved
