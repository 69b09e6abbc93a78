"""A PNG of the Tracking page in the middle of a crossing: the held (coasting) boxes in view.

Writes a generated occlusion sequence (``--setting``, ``--seed``; see ``synthetic.OCCLUSION_SETTINGS``)
cut a few frames after the motion detector + occlusion-aware tracker first hold ``--held`` tracks in
one merged blob, runs the Tracking page on it (offscreen, results in a temporary folder) and saves
the window when the run has ended, so its last frame is the merge.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/tracking_screenshot.py --out shots/tracking_crossing.png
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def merge_frame(spec, held: int, after: int) -> int:
    """The first frame with at least ``held`` held tracks, plus ``after`` (the sequence's end if none)."""
    from hwbench_gui.demos.tracking import synthetic
    from hwbench_gui.demos.tracking.detectors import make_detector
    from hwbench_gui.demos.tracking.pipeline import TrackingPipeline

    pipeline = TrackingPipeline(make_detector("motion"))
    for n, frame, _ in synthetic.render(spec):
        if sum(t.held for t in pipeline.step(frame).tracks) >= held:
            return min(spec.n_frames, n + after)
    return spec.n_frames


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="shots/tracking_crossing.png")
    p.add_argument("--setting", default="converge5")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--held", type=int, default=3, help="held tracks to wait for (default 3)")
    p.add_argument("--after", type=int, default=4, help="frames after that to stop (default 4)")
    p.add_argument("--size", default="1400x900")
    args = p.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    data = Path(tempfile.mkdtemp(prefix="hwbench-shots-"))
    os.environ.setdefault("HWBENCH_DATA_DIR", str(data))
    os.environ.setdefault("HWBENCH_RESULTS_DIR", str(data / "results"))

    from hwbench_gui.demos.tracking import synthetic

    spec = synthetic.occlusion_spec(args.setting, args.seed)
    spec.n_frames = merge_frame(spec, args.held, args.after)
    video = synthetic.write_sequence(spec, data / f"{args.setting}_{args.seed}.mp4")

    from PySide6.QtCore import QEventLoop, QSettings, QTimer

    from hwbench_gui.ui.app import build_window, create_app

    app = create_app([sys.argv[0]])  # noqa: F841 (kept alive for the window)
    settings = QSettings(str(data / "s.ini"), QSettings.IniFormat)
    window = build_window(settings)
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    window.show()

    def pump(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    window.tabs.setCurrentIndex(titles.index("Demos"))
    demos = window.tab_widget("Demos")
    pages = [demos.tabs.tabText(i) for i in range(demos.tabs.count())]
    demos.tabs.setCurrentIndex(pages.index("Tracking"))
    page = demos.page("Tracking")
    page.source_edit.setText(str(video))
    page.realtime_check.setChecked(False)
    pump(300)
    page.start()
    while page.worker is not None:
        pump(100)
    pump(500)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(out))
    print(f"{out}: {args.setting} seed {args.seed}, {spec.n_frames} frames; status: {page.status_label.text()}")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
