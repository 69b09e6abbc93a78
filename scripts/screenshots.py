"""Save a PNG of each tab as a user would see it (run under Xvfb, or with QT_QPA_PLATFORM=offscreen).

    xvfb-run -s "-screen 0 1400x900x24" python scripts/screenshots.py --out shots --tabs Inventory,Monitor

``--inventory FILE`` shows a recorded inventory (e.g. the H200 fixture) instead of this machine's;
``--monitor-csv FILE`` shows a recorded telemetry CSV in the Monitor tab; ``--run ID`` starts a
benchmark and shoots the Benchmarks tab during and after it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="shots")
    parser.add_argument("--tabs", default="Inventory,Benchmarks,Monitor")
    parser.add_argument("--wait-ms", type=int, default=2500)
    parser.add_argument("--theme", default="light")
    parser.add_argument("--inventory", help="recorded inventory JSON to show")
    parser.add_argument("--monitor-csv", help="recorded telemetry CSV to show")
    parser.add_argument("--run", help="benchmark id to run in the Benchmarks tab")
    parser.add_argument("--param", action="append", default=[], help="NAME=VALUE for --run")
    parser.add_argument("--size", default="1360x860")
    args = parser.parse_args()

    import os

    # results of runs started for a screenshot must not land among the user's own
    os.environ.setdefault("HWBENCH_DATA_DIR", tempfile.mkdtemp(prefix="hwbench-shots-"))
    from PySide6.QtCore import QEventLoop, QSettings, QTimer

    from hwbench_gui.ui.app import build_window, create_app

    app = create_app([sys.argv[0]])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.IniFormat)
    settings.setValue("theme", args.theme)
    window = build_window(settings)
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    window.show()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def pump(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def shoot(name: str) -> None:
        path = out / f"{name}.png"
        window.grab().save(str(path))
        print(path)

    pump(300)
    for title in [t for t in args.tabs.split(",") if t]:
        titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
        window.tabs.setCurrentIndex(titles.index(title))
        widget = window.tab_widget(title)
        if title == "Inventory" and args.inventory:
            widget.set_inventory(json.loads(Path(args.inventory).read_text()))
        if title == "Monitor" and args.monitor_csv:
            widget.load_csv(args.monitor_csv)
        if title == "Benchmarks" and args.run:
            widget.select(args.run)
            bench = widget._benchmarks[args.run]
            given = dict(p.split("=", 1) for p in args.param)
            widget.enqueue(args.run, bench.resolve_params(given))
            pump(args.wait_ms)
            shoot(f"{title.lower()}_running")
            while widget.is_running():
                pump(200)
            pump(500)
        pump(args.wait_ms)
        shoot(f"{title.lower()}_{args.theme}")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
