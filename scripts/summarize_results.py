"""Print one line per result document (figure, status, further figures, warnings).

    python scripts/summarize_results.py RESULT.json [...]
"""

import json
import sys


def main(paths: list[str]) -> int:
    for path in paths:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as exc:
            print(f"{path}: unreadable ({exc})")
            continue
        fig = doc.get("figure") or {}
        value = fig.get("value")
        shown = f"{value:.4g} {fig.get('unit', '')}" if isinstance(value, (int, float)) else "-"
        print(f"{doc['benchmark']['id']:<16} {doc.get('status'):<9} {doc.get('precision') or '':<9} "
              f"{fig.get('name') or '':<40} {shown}  {doc.get('reason') or ''}")
        for name, extra in (doc.get("figures") or {}).items():
            if isinstance(extra.get("value"), (int, float)):
                print(f"    {name:<44} {extra['value']:.4g} {extra.get('unit', '')}")
        for warning in doc.get("warnings") or []:
            print(f"    warning: {warning}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
