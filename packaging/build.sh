#!/usr/bin/env bash
# Build the one-folder app with PyInstaller: dist/hwbench-gui/hwbench-gui (macOS: dist/hwbench.app).
#
# Usage: packaging/build.sh [--self-test]
#   --self-test   run the built app's self-test afterwards (exit status follows it)
# Environment: PYTHON (default .venv/bin/python, else python3), DIST_DIR (default dist),
#   WORK_DIR (default build/pyinstaller). PyInstaller must be installed: pip install pyinstaller.
# The bundle is large (torch with its CUDA libraries: several GB) and the build takes minutes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
DIST_DIR="${DIST_DIR:-dist}"
WORK_DIR="${WORK_DIR:-build/pyinstaller}"

if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
    echo "PyInstaller is not installed for $PYTHON: run $PYTHON -m pip install pyinstaller" >&2
    exit 2
fi
# The icon files are committed; regenerate them only when one is missing.
for icon in hwbench.ico hwbench.icns hwbench-256.png hwbench.svg; do
    if [[ ! -f "resources/icons/$icon" ]]; then "$PYTHON" packaging/make_icons.py; break; fi
done

start_s=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$DIST_DIR" --workpath "$WORK_DIR" packaging/hwbench-gui.spec
build_s=$(( $(date +%s) - start_s ))

if [[ "$(uname)" == "Darwin" ]]; then
    app="$DIST_DIR/hwbench.app"; exe="$app/Contents/MacOS/hwbench-gui"
else
    app="$DIST_DIR/hwbench-gui"; exe="$app/hwbench-gui"
fi
if [[ "$(uname)" == "Linux" ]]; then
    # The bundle carries its launcher entry: unpack it anywhere, run ./install-desktop-entry.sh.
    install -m 644 packaging/hwbench.desktop "$app/hwbench.desktop"
    install -m 755 packaging/install-desktop-entry.sh "$app/install-desktop-entry.sh"
fi
size=$(du -sh "$app" | cut -f1)
echo "built $exe in ${build_s} s; bundle $app is $size"

if [[ "${1:-}" == "--self-test" ]]; then
    "$exe" --self-test
fi
