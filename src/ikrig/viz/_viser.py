"""Small helpers around viser (the ``[viewer]`` extra): server start-up, address printing,
serving until Ctrl-C, and scene nodes that tolerate empty data."""

from __future__ import annotations

import signal
import socket
import threading
import time

import numpy as np

from ._mpl import require


def viser():
    """The viser module, or MissingDependencyError naming the ``[viewer]`` extra."""
    return require("viser", "viewer", "the browser viewer")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def start_server(host: str = "127.0.0.1", port: int = 8080, verbose: bool = False):
    """A viser server on ``host:port``, Y up, ``port=0`` picks a free port."""
    v = viser()
    if port == 0:
        port = free_port(host)
    server = v.ViserServer(host=host, port=port, verbose=verbose)
    server.scene.set_up_direction("+y")
    return server


def url(server) -> str:
    host = server.get_host()
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://{host}:{server.get_port()}"


def serve_forever(app, echo=print) -> None:
    """Print the address, then wait until Ctrl-C and stop the server cleanly."""
    stop = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():

        def on_term(signum, frame):  # SIGTERM stops as cleanly as Ctrl-C
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, on_term)
    try:
        echo(f"ikrig: serving on {url(app.server)} (Ctrl-C to stop)")
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        echo("ikrig: stopping")
    finally:
        app.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return tuple(int(h[i : i + 2], 16) for i in (0, 2, 4))


class Lines:
    """Line segments whose count may change or drop to zero (then hidden)."""

    def __init__(self, scene, name, color, thickness, visible=True):
        self.scene, self.name, self.color, self.thickness = scene, name, color, thickness
        self.handle = scene.add_line_segments(
            name, np.zeros((1, 2, 3), np.float32), color, thickness=thickness, visible=False
        )
        self.enabled = visible

    def set(self, segments, colors=None) -> None:
        seg = np.asarray(segments, dtype=np.float32).reshape(-1, 2, 3)
        show = self.enabled and len(seg) > 0
        if len(seg):
            self.handle.points = seg
            if colors is not None:
                self.handle.colors = np.asarray(colors, dtype=np.uint8)
        if self.handle.visible != show:
            self.handle.visible = show


class Points:
    """A point cloud whose count may change or drop to zero (then hidden)."""

    def __init__(self, scene, name, color, size, shape="circle", visible=True):
        self.handle = scene.add_point_cloud(
            name,
            np.zeros((1, 3), np.float32),
            color,
            point_size=size,
            point_shape=shape,
            precision="float32",
            visible=False,
        )
        self.enabled = visible

    def set(self, points) -> None:
        p = np.asarray(points, dtype=np.float32).reshape(-1, 3)
        show = self.enabled and len(p) > 0
        if len(p):
            self.handle.points = p
        if self.handle.visible != show:
            self.handle.visible = show


class Ticker:
    """A background thread calling ``fn()`` every ``period()`` seconds while ``running()``."""

    def __init__(self, fn, period, running):
        self.fn, self.period, self.running = fn, period, running
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="ikrig-ticker")
        self.thread.start()

    def _run(self):
        next_t = time.perf_counter()
        while not self._stop.is_set():
            if self.running():
                self.fn()
                next_t += self.period()
                delay = next_t - time.perf_counter()
                if delay < -0.25:  # fell behind: do not try to catch up
                    next_t = time.perf_counter()
                    delay = 0.0
                self._stop.wait(max(delay, 0.0))
            else:
                next_t = time.perf_counter()
                self._stop.wait(0.05)

    def stop(self):
        self._stop.set()
        self.thread.join(timeout=2.0)
