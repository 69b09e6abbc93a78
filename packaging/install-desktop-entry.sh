#!/usr/bin/env bash
# Put hwbench in the Linux application launcher: installs hwbench.desktop (with Exec= set to the
# app's absolute path) into $XDG_DATA_HOME/applications and the icon into
# $XDG_DATA_HOME/icons/hicolor (XDG_DATA_HOME defaults to ~/.local/share). Works from a checkout
# (packaging/) and from a built bundle, where build.sh puts this script next to the executable.
#
# Usage: install-desktop-entry.sh [--desktop] [EXECUTABLE]
#        install-desktop-entry.sh --uninstall
#   EXECUTABLE  the app to start; default: hwbench-gui next to this script (a bundle), else
#               dist/hwbench-gui/hwbench-gui of this checkout, else hwbench-gui on PATH (a pip install)
#   --desktop   also put a trusted copy on the desktop, to start it by double-click there
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
APPS="$DATA_HOME/applications"
ICONS="$DATA_HOME/icons/hicolor"
ENTRY="hwbench.desktop"
ICON_SIZES=(16 24 32 48 64 128 256 512)

refresh_caches() {
    if command -v update-desktop-database >/dev/null; then update-desktop-database -q "$APPS" || true; fi
    if command -v gtk-update-icon-cache >/dev/null; then gtk-update-icon-cache -q -t -f "$ICONS" || true; fi
}

desktop_dir() {
    if command -v xdg-user-dir >/dev/null; then xdg-user-dir DESKTOP; else echo "$HOME/Desktop"; fi
}

on_desktop=0
exe=""
for arg in "$@"; do
    case "$arg" in
        --uninstall)
            rm -f "$APPS/$ENTRY" "$ICONS/scalable/apps/hwbench.svg" "$(desktop_dir)/$ENTRY"
            for size in "${ICON_SIZES[@]}"; do rm -f "$ICONS/${size}x${size}/apps/hwbench.png"; done
            refresh_caches
            echo "removed hwbench from $APPS and $ICONS"
            exit 0 ;;
        --desktop) on_desktop=1 ;;
        -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) exe="$arg" ;;
    esac
done

if [[ -z "$exe" ]]; then
    if [[ -x "$HERE/hwbench-gui" && ! -d "$HERE/hwbench-gui" ]]; then
        exe="$HERE/hwbench-gui"
    elif [[ -x "$ROOT/dist/hwbench-gui/hwbench-gui" ]]; then
        exe="$ROOT/dist/hwbench-gui/hwbench-gui"
    elif command -v hwbench-gui >/dev/null; then
        exe="$(command -v hwbench-gui)"
    else
        echo "no hwbench-gui found: build it (packaging/build.sh), pip install it, or name the executable" >&2
        exit 2
    fi
fi
if [[ ! -x "$exe" ]]; then
    echo "$exe is not an executable file" >&2
    exit 2
fi
exe="$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")"

# Icons: from this checkout, else from the frozen bundle the executable is in.
icon_src="$ROOT/resources/icons"
[[ -f "$icon_src/hwbench.svg" ]] || icon_src="$(dirname "$exe")/_internal/resources/icons"
if [[ ! -f "$icon_src/hwbench.svg" ]]; then
    echo "hwbench icons not found in $ROOT/resources/icons or next to $exe" >&2
    exit 2
fi
for size in "${ICON_SIZES[@]}"; do
    install -D -m 644 "$icon_src/hwbench-$size.png" "$ICONS/${size}x${size}/apps/hwbench.png"
done
install -D -m 644 "$icon_src/hwbench.svg" "$ICONS/scalable/apps/hwbench.svg"

# Desktop Entry spec: an argument with spaces or reserved characters goes in double quotes with
# \ " ` $ backslash-escaped; then the file's string escaping doubles every backslash; % is %%.
string_escape() { printf '%s' "$1" | sed -e 's/\\/\\\\/g'; }
quoted="$exe"
if [[ "$exe" =~ [[:space:]\"\'\\\`\$\;\&\|\<\>\~\#\(\)\*\?] ]]; then
    quoted="\"$(printf '%s' "$exe" | sed -e 's/[\\"`$]/\\&/g')\""
fi
quoted="$(string_escape "$quoted" | sed -e 's/%/%%/g')"
mkdir -p "$APPS"
tmp="$(mktemp "$APPS/.hwbench.XXXXXX")"
while IFS= read -r line; do
    case "$line" in
        Exec=*) printf 'Exec=%s\n' "$quoted" ;;
        TryExec=*) printf 'TryExec=%s\n' "$(string_escape "$exe")" ;;
        *) printf '%s\n' "$line" ;;
    esac
done < "$HERE/$ENTRY" > "$tmp"
chmod 644 "$tmp"
mv "$tmp" "$APPS/$ENTRY"
if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$APPS/$ENTRY"; fi
refresh_caches
echo "installed $APPS/$ENTRY (Exec=$quoted) and icons in $ICONS"

if [[ "$on_desktop" == 1 ]]; then
    target="$(desktop_dir)"
    mkdir -p "$target"
    install -m 755 "$APPS/$ENTRY" "$target/$ENTRY"
    # GNOME only starts desktop launchers marked trusted; elsewhere this fails harmlessly.
    if command -v gio >/dev/null; then gio set "$target/$ENTRY" metadata::trusted true 2>/dev/null || true; fi
    echo "put a launcher on $target"
fi
