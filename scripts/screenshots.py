"""Save a PNG of each tab as a user would see it (run under Xvfb, or with QT_QPA_PLATFORM=offscreen).

    xvfb-run -s "-screen 0 1366x768x24" python scripts/screenshots.py --out /tmp/shots/1366 --size screen
    xvfb-run -s "-screen 0 1400x900x24" python scripts/screenshots.py --out shots --tabs Inventory,Monitor

``--size screen`` lets the window size itself to the screen as it does for a user and also saves
the whole screen (``screen_<tab>.png``), so what falls off it shows; ``--size WxH`` forces a size.
``--tabs`` takes tab titles and the demo pages ``Demos:Snake``, ``Demos:Motion``, ``Demos:Tracking``
(default: every tab and page). ``--inventory FILE`` shows a recorded inventory (e.g. the H200
fixture) instead of this machine's; ``--monitor-csv FILE`` shows a recorded telemetry CSV in the
Monitor tab; ``--results DIR`` copies result documents into the (temporary) results folder so the
Benchmarks and Reports tabs have rows, and ``--compare`` compares them in Reports; ``--run ID``
starts a benchmark and shoots the Benchmarks tab during and after it; ``--select ID`` shows a
benchmark's form there; ``--pipeline FILE`` shows a datapath.analyze document's Pipeline tab;
``--show-result ID`` selects the newest saved result of benchmark ID in the
Results table (its page, e.g. Health or Pipeline, comes forward); ``ID@START`` the newest of those whose
start time begins with START (``health.burnin@2026-12-05T15:42`` for the H100's checked burn-in).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ALL_TABS = "Inventory,Benchmarks,Monitor,Demos:Snake,Demos:Motion,Demos:Tracking,Reports"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="shots")
    parser.add_argument("--tabs", default=ALL_TABS)
    parser.add_argument("--wait-ms", type=int, default=2500)
    parser.add_argument("--theme", default="light")
    parser.add_argument("--inventory", help="recorded inventory JSON to show")
    parser.add_argument("--monitor-csv", help="recorded telemetry CSV to show")
    parser.add_argument("--results", help="folder of result documents to show in Benchmarks and Reports")
    parser.add_argument("--compare", action="store_true", help="compare the --results documents in Reports")
    parser.add_argument("--references", action="store_true",
                        help="Reports: show the shipped published reference figures (compared too with --compare)")
    parser.add_argument("--run", help="benchmark id to run in the Benchmarks tab")
    parser.add_argument("--select", help="benchmark id to show (its form) in the Benchmarks tab")
    parser.add_argument("--pipeline", help="a datapath.analyze document to show in Benchmarks → Pipeline")
    parser.add_argument("--show-result", help="benchmark id (ID or ID@START) whose newest saved result to select "
                                              "in Benchmarks")
    parser.add_argument("--param", action="append", default=[], help="NAME=VALUE for --run")
    parser.add_argument("--size", default="screen", help="WxH, or 'screen' to let the window fit the screen")
    args = parser.parse_args()

    import os

    # results of runs started for a screenshot must not land among the user's own
    data = Path(tempfile.mkdtemp(prefix="hwbench-shots-"))
    os.environ.setdefault("HWBENCH_DATA_DIR", str(data))
    os.environ.setdefault("HWBENCH_RESULTS_DIR", str(data / "results"))
    if args.results:
        target = Path(os.environ["HWBENCH_RESULTS_DIR"])
        target.mkdir(parents=True, exist_ok=True)
        for path in Path(args.results).glob("*.json"):
            shutil.copy(path, target / path.name)
    from PySide6.QtCore import QEventLoop, QSettings, QTimer
    from PySide6.QtGui import QGuiApplication

    from hwbench_gui.ui.app import build_window, create_app

    app = create_app([sys.argv[0]])  # noqa: F841 (held: the application must outlive the window)
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "s.ini"), QSettings.IniFormat)
    settings.setValue("theme", args.theme)
    window = build_window(settings)
    if args.size != "screen":
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
        print(path, f"window {window.width()}x{window.height()}")
        if args.size == "screen":
            screen = QGuiApplication.primaryScreen()
            whole = out / f"screen_{name}.png"
            screen.grabWindow(0).save(str(whole))
            print(whole, f"screen {screen.geometry().width()}x{screen.geometry().height()}")

    pump(300)
    for entry in [t for t in args.tabs.split(",") if t]:
        title, _, page = entry.partition(":")
        titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
        window.tabs.setCurrentIndex(titles.index(title))
        widget = window.tab_widget(title)
        if title == "Inventory" and args.inventory:
            widget.set_inventory(json.loads(Path(args.inventory).read_text()))
        if title == "Monitor" and args.monitor_csv:
            widget.load_csv(args.monitor_csv)
        if title == "Demos" and page:
            pages = [widget.tabs.tabText(i) for i in range(widget.tabs.count())]
            widget.tabs.setCurrentIndex(next(i for i, text in enumerate(pages) if text.startswith(page)))
        if title == "Reports" and args.references:
            widget.reference_check.setChecked(True)
        if title == "Reports" and args.compare:
            widget.wait_loaded()  # the library lists its folder on a worker thread
            widget.select_rows(range(len(widget.documents())))
            widget.compare_selected("machine")
        if title == "Benchmarks" and args.select:
            widget.select(args.select)
        if title == "Benchmarks" and args.pipeline:
            widget.show_pipeline(json.loads(Path(args.pipeline).read_text()))
        if title == "Benchmarks" and args.show_result:
            _show_result(widget, args.show_result, pump)
        if title == "Benchmarks" and args.run:
            widget.select(args.run)
            bench = widget.catalogue.benchmark(args.run)
            given = dict(p.split("=", 1) for p in args.param)
            widget.enqueue(args.run, bench.resolve_params(given))
            pump(args.wait_ms)
            shoot(f"{title.lower()}_running")
            while widget.is_running():
                pump(200)
            pump(500)
        pump(args.wait_ms)
        shoot(f"{(title + ('_' + page if page else '')).lower()}_{args.theme}")
    window.close()
    return 0


def _show_result(widget, bench_id: str, pump) -> None:
    """Select the newest saved result of ``bench_id`` (``ID@START``: started at a time beginning with START) and
    bring its page (the lower tab it opens) forward."""
    bench_id, _, start = bench_id.partition("@")
    for _ in range(50):  # saved results arrive a few rows per turn
        docs = widget.results_table.documents()
        rows = [i for i, doc in enumerate(docs) if (doc.get("benchmark") or {}).get("id") == bench_id
                and str(doc.get("started_at") or "").startswith(start)]
        if rows:
            break
        pump(100)
    else:
        raise SystemExit(f"no saved result of {bench_id}")
    newest = max(rows, key=lambda i: docs[i].get("started_at") or "")
    widget.results.selectRow(newest)
    pump(300)
    pages = [widget.bottom.widget(i) for i in range(widget.bottom.count())]
    page = widget.pipeline if bench_id == "datapath.analyze" else widget.page_of(docs[newest])
    if page in pages:
        widget.bottom.setCurrentWidget(page)


if __name__ == "__main__":
    sys.exit(main())
