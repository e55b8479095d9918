"""Small helpers around viser (the ``[viewer]`` extra): server start-up, address printing,
serving until Ctrl-C, and scene nodes that tolerate empty data.

The server only accepts WebSocket connections from its own pages: a handshake whose
``Origin`` is not the address it serves (``http(s)://host:port``, the address the connection
reached, with ``localhost``, ``127.0.0.1`` and ``[::1]`` as aliases of a loopback address,
and the machine's host name) gets HTTP 403, so no other web page open in the user's browser
can drive the viewer. Handshakes without an ``Origin`` (not from a browser) are accepted.
Viser has no hook for this: :func:`start_server` adds the check to the ``process_request``
argument of the one ``websockets.asyncio.server.serve`` call viser makes while it starts
(viser >= 1.1), and refuses to serve if that call did not happen.
"""

from __future__ import annotations

import http
import ipaddress
import signal
import socket
import sys
import threading
import time
from urllib.parse import urlsplit

import numpy as np

from ..errors import IkrigError
from ._mpl import require

WILDCARD_HOSTS = ("", "0.0.0.0", "::")
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def viser():
    """The viser module, or MissingDependencyError naming the ``[viewer]`` extra."""
    return require("viser", "viewer", "the browser viewer")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def start_server(host: str = "127.0.0.1", port: int = 8080, verbose: bool = False, echo=None):
    """A viser server on ``host:port``, Y up, ``port=0`` picks a free port.

    WebSocket handshakes from other origins are refused (see the module's doc). One line
    goes to ``echo`` (default: stderr) when ``host`` is not a loopback address, and one when
    ``port`` was taken and viser moved to another.
    """
    if echo is None:
        echo = _stderr
    v = viser()
    if not is_loopback_host(host):
        echo(
            f"ikrig: warning: serving on {host}, not a loopback address: anyone who can reach"
            " this machine can open the viewer"
        )
    if port == 0:
        port = free_port(host if host not in WILDCARD_HOSTS else "127.0.0.1")
    server = _start_guarded(v, host, port, verbose)
    server.scene.set_up_direction("+y")
    if server.get_port() != port:
        echo(f"ikrig: port {port} is taken; serving on {url(server)} instead")
    return server


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


_start_lock = threading.Lock()


def _start_guarded(v, host, port, verbose):
    """``viser.ViserServer(host, port)`` whose WebSocket handshakes pass :func:`origin_allowed`.

    For the time viser takes to start (its server thread calls ``serve`` before the
    constructor returns), ``websockets.asyncio.server.serve`` is replaced by a wrapper that
    adds the check to the ``process_request`` viser passes, for viser's own handler only.
    """
    import websockets.asyncio.server as ws_server

    original = ws_server.serve
    guarded = []
    names = frozenset({_norm_host(host), _norm_host(socket.gethostname())} - set(WILDCARD_HOSTS))

    def serve(handler, *args, **kwargs):
        if str(getattr(handler, "__module__", "")).startswith("viser"):
            kwargs["process_request"] = _origin_guard(names, kwargs.get("process_request"))
            guarded.append(True)
        return original(handler, *args, **kwargs)

    with _start_lock:
        # patched while the server starts
        ws_server.serve = serve  # type: ignore[misc,assignment]
        try:
            server = v.ViserServer(host=host, port=port, verbose=verbose)
        finally:
            ws_server.serve = original  # type: ignore[misc]
    if not guarded:
        server.stop()
        raise IkrigError(
            f"viewer: cannot add the WebSocket origin check to viser {v.__version__} (it no"
            " longer starts its server through websockets.asyncio.server.serve); refusing to"
            " serve without it"
        )
    return server


def _origin_guard(names, inner):
    """A websockets ``process_request`` refusing handshakes from foreign origins (403),
    then handing the request to ``inner`` (viser's own, serving the page's files)."""

    def process_request(connection, request):
        if "websocket" in ",".join(request.headers.get_all("Upgrade")).lower():
            origins = request.headers.get_all("Origin")
            local = connection.local_address
            ok = len(origins) == 0 or (
                len(origins) == 1 and origin_allowed(origins[0], local[0], local[1], names)
            )
            if not ok:
                return connection.respond(
                    http.HTTPStatus.FORBIDDEN,
                    "ikrig viewer: WebSocket connections from other origins are refused\n",
                )
        return None if inner is None else inner(connection, request)

    return process_request


def _norm_host(host: str) -> str:
    """A host name or address compared case-free, without brackets, IPv4-mapped IPv6 as IPv4."""
    h = str(host).strip().lower().strip("[]").split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        return h.rstrip(".")
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)


def _is_loopback_ip(host: str) -> bool:
    try:
        return ipaddress.ip_address(_norm_host(host)).is_loopback
    except ValueError:
        return False


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a name or an address) only ever means this machine's loopback."""
    h = _norm_host(host)
    if h == "localhost" or _is_loopback_ip(h):
        return True
    if h in WILDCARD_HOSTS or _is_ip(h):
        return False
    try:
        infos = socket.getaddrinfo(h, None)
    except OSError:
        return False
    return bool(infos) and all(_is_loopback_ip(str(info[4][0])) for info in infos)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def origin_allowed(origin: str, local_host: str, local_port: int, names=()) -> bool:
    """Whether a WebSocket handshake's ``Origin`` is the server's own address.

    ``local_host, local_port`` is the address the connection reached (the socket's local
    address). Allowed: ``http`` or ``https`` on that port, with that host, one of ``names``
    (the host the server was asked to bind, the machine's name), or, when the connection
    reached a loopback address, ``localhost``, ``127.0.0.1`` or ``[::1]``.
    """
    try:
        parts = urlsplit(str(origin).strip())
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            return False
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return False
    if port != int(local_port):
        return False
    host = _norm_host(parts.hostname)
    local = _norm_host(local_host)
    if host == local or host in names:
        return True
    return host in LOOPBACK_NAMES and _is_loopback_ip(local)


def url(server) -> str:
    host = server.get_host()
    if host in WILDCARD_HOSTS:
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
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
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return r, g, b


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
