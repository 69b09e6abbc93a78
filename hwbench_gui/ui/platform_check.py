"""Before Qt starts on Linux/X11: are the system libraries its xcb platform plugin links there?

Qt >= 6.5 needs libxcb-cursor0, and PySide6's ``libqxcb.so`` links a dozen more X11 libraries
that a minimal Debian does not have. Without one, Qt prints a paragraph and aborts the process
(SIGABRT). :func:`startup_problem` finds the missing ones with ``ctypes`` first, so
``hwbench-gui`` can say in one line which package to install. No Qt import here.

The list is what ``readelf -d`` shows as NEEDED for ``plugins/platforms/libqxcb.so``,
``lib/libQt6XcbQpa.so.6``, ``lib/libQt6Gui.so.6`` and ``lib/libQt6DBus.so.6`` of PySide6 6.8-6.11.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from typing import Callable, Mapping


@dataclass(frozen=True)
class SystemLib:
    soname: str
    apt: str  # Debian / Ubuntu package
    dnf: str  # Fedora package


XCB_LIBS: tuple[SystemLib, ...] = (
    SystemLib("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor"),
    SystemLib("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
    SystemLib("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
    SystemLib("libxcb-image.so.0", "libxcb-image0", "xcb-util-image"),
    SystemLib("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil"),
    SystemLib("libxcb-util.so.1", "libxcb-util1", "xcb-util"),
    SystemLib("libxcb-randr.so.0", "libxcb-randr0", "libxcb"),
    SystemLib("libxcb-shape.so.0", "libxcb-shape0", "libxcb"),
    SystemLib("libxcb-shm.so.0", "libxcb-shm0", "libxcb"),
    SystemLib("libxcb-sync.so.1", "libxcb-sync1", "libxcb"),
    SystemLib("libxcb-xfixes.so.0", "libxcb-xfixes0", "libxcb"),
    SystemLib("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb"),
    SystemLib("libxcb-render.so.0", "libxcb-render0", "libxcb"),
    SystemLib("libxcb.so.1", "libxcb1", "libxcb"),
    SystemLib("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb"),
    SystemLib("libX11.so.6", "libx11-6", "libX11"),
    SystemLib("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    SystemLib("libxkbcommon.so.0", "libxkbcommon0", "libxkbcommon"),
    SystemLib("libGL.so.1", "libgl1", "libglvnd-glx"),
    SystemLib("libEGL.so.1", "libegl1", "libglvnd-egl"),
    SystemLib("libfontconfig.so.1", "libfontconfig1", "fontconfig"),
    SystemLib("libfreetype.so.6", "libfreetype6", "freetype"),
    SystemLib("libglib-2.0.so.0", "libglib2.0-0", "glib2"),
    SystemLib("libdbus-1.so.3", "libdbus-1-3", "dbus-libs"),
)


def will_use_xcb(env: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt will pick its X11 (xcb) plugin: Linux with ``DISPLAY``, not Wayland, no other
    ``QT_QPA_PLATFORM`` chosen."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return False
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return chosen.split(":", 1)[0].split(";", 1)[0] == "xcb"
    if env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE", "") == "wayland":
        return False
    return bool(env.get("DISPLAY"))


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_libs(libs: tuple[SystemLib, ...] = XCB_LIBS,
                 loads: Callable[[str], bool] = _loads) -> list[SystemLib]:
    """The libraries of ``libs`` the dynamic loader cannot load."""
    return [lib for lib in libs if not loads(lib.soname)]


def missing_message(missing: list[SystemLib]) -> str:
    """One line naming the missing libraries and the packages that hold them."""
    apt = " ".join(dict.fromkeys(lib.apt for lib in missing))
    dnf = " ".join(dict.fromkeys(lib.dnf for lib in missing))
    names = ", ".join(lib.soname for lib in missing)
    return (f"hwbench-gui: Qt's X11 platform needs {names}, which cannot be loaded (not installed?): "
            f"sudo apt-get install {apt}  (Fedora: sudo dnf install {dnf})")


def startup_problem(env: Mapping[str, str] | None = None, platform: str | None = None,
                    libs: tuple[SystemLib, ...] = XCB_LIBS,
                    loads: Callable[[str], bool] = _loads) -> str | None:
    """A one-line reason the window cannot open here, or None when Qt may try."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if platform.startswith("linux") and not env.get("QT_QPA_PLATFORM") \
            and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return ("hwbench-gui: no display (neither DISPLAY nor WAYLAND_DISPLAY is set); run it in a desktop "
                "session, over `ssh -X`, or under `xvfb-run`; `hwbench` is the command line without a window")
    if not will_use_xcb(env, platform):
        return None
    missing = missing_libs(libs, loads)
    return missing_message(missing) if missing else None
