"""Normal for its kind: a micro-benchmark figure against what its hardware should give.

For gpu.d2d (memory copy), gpu.pcie (pinned H2D/D2H), gpu.matmul (each precision) and host.membw: the
limit (the datasheet's, or the PCIe link's spec rate, or the DIMMs' speed × channels), the fraction of
it measured, and, where :data:`~hwbench_gui.engine.inventory.datasheets.HEALTHY` holds one, the fraction
healthy machines of that GPU model reach with its source. A figure more than :data:`TOLERANCE` below the
healthy fraction's low end is a finding ("low"). Pure: reads a result document, never the machine.
"""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.limits import BENCHMARKS, gpu_name, limit_of
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, FP32, TF32

#: A figure is low when its fraction is below (1 - TOLERANCE) × the healthy fraction's low end.
TOLERANCE = 0.10
NORMAL, LOW, NO_REFERENCE, NO_LIMIT = "normal", "low", "no reference", "no limit"
_PRECISIONS = tuple(p.label for p in (FP32, TF32, FP16, BF16, FP8))
_KIND = {"memory_copy": "GPU memory copy", "pcie_pinned": "PCIe", "matmul_burst": "matmul"}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _finding(label: str, value: float, unit: str, limit: float | None, limit_text: str,
             healthy: datasheets.Healthy | None, model: str | None, no_healthy: str,
             limit_source: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"figure": label, "value": value, "unit": unit, "limit": limit, "limit_text": limit_text,
                           "limit_source": limit_source, "fraction": None, "healthy": None, "status": NO_LIMIT}
    if limit is None:
        out["text"] = f"{label}: {value:.4g} {unit}; no limit to hold it against ({limit_text})"
        return out
    fraction = value / limit
    out["fraction"] = fraction
    text = f"{label} {fraction * 100:.0f} % of {limit_text} ({limit:.4g} {unit})"
    if healthy is None:
        out["status"] = NO_REFERENCE
        out["text"] = f"{text}; {no_healthy}"
        return out
    out["healthy"] = {"low": healthy.low, "high": healthy.high, "source": healthy.source}
    span = (f"{healthy.low * 100:.0f} %" if round(healthy.low * 100) == round(healthy.high * 100)
            else f"{healthy.low * 100:.0f}-{healthy.high * 100:.0f} %")
    low = fraction < (1 - TOLERANCE) * healthy.low
    out["status"] = LOW if low else NORMAL
    out["text"] = f"{text}; healthy {model}s give {span}" + (" (low: a finding)" if low else "")
    return out


def judge(doc: Any) -> list[dict[str, Any]]:
    """Findings for the figures of an ok gpu.d2d / gpu.pcie / gpu.matmul / host.membw document; [] otherwise.

    Each: ``{figure, value, unit, limit, limit_text, limit_source, fraction, healthy: {low, high, source} | None,
    status: normal | low | no reference | no limit, text}``; the limit is :func:`~hwbench_gui.engine.limits.limit_of`'s
    (the one the ceiling reads too), and :func:`sources` says where both came from.
    """
    if not isinstance(doc, dict) or doc.get("status") != "ok":
        return []
    bench = doc.get("benchmark") if isinstance(doc.get("benchmark"), dict) else {}
    bench_id = bench.get("id")
    if bench_id not in BENCHMARKS:
        return []
    if bench_id == "host.membw":
        return _host_membw(doc)
    name = gpu_name(doc)
    if name is None:
        return []  # measured on the CPU (gpu.matmul device=cpu): no GPU datasheet applies
    sheet = datasheets.lookup(name)
    model = sheet.model if sheet else None
    none_held = (f"hwbench holds no healthy fraction for the {model}" if sheet
                 else datasheets.unknown_reason(name))
    figures = doc.get("figures") if isinstance(doc.get("figures"), dict) else {}
    if bench_id == "gpu.d2d":
        figure = doc.get("figure") if isinstance(doc.get("figure"), dict) else {}
        value = _number(figure.get("value"))
        if value is None:
            return []
        limit = limit_of(doc, str(figure.get("name") or ""))
        return [_finding(_KIND["memory_copy"], value, "GB/s", limit.value, limit.what,
                         datasheets.healthy(sheet, "memory_copy"), model, none_held, limit.source)]
    if bench_id == "gpu.pcie":
        return _pcie(doc, figures, sheet, model, none_held)
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    out = []
    for label, fig in figures.items():
        value = _number(fig.get("value")) if isinstance(fig, dict) else None
        if value is None or label not in _PRECISIONS:
            continue
        limit = limit_of(doc, label)
        healthy = datasheets.healthy(sheet, "matmul_burst", label) if params.get("mode") == "burst" else None
        no_healthy = none_held if params.get("mode") == "burst" else \
            "healthy fractions are held for burst mode (this run is sustained: power-limited clocks)"
        out.append(_finding(f"{label} {_KIND['matmul_burst']}", value, "TFLOP/s", limit.value, limit.what, healthy,
                            model, no_healthy, limit.source))
    return out


def _pcie(doc: dict[str, Any], figures: dict[str, Any], sheet: datasheets.Datasheet | None, model: str | None,
          none_held: str) -> list[dict[str, Any]]:
    healthy = datasheets.healthy(sheet, "pcie_pinned")
    headline = doc.get("figure") if isinstance(doc.get("figure"), dict) else {}
    out = []
    for direction in ("H2D", "D2H"):
        prefix = f"pinned {direction}"
        if str(headline.get("name") or "").startswith(prefix) and _number(headline.get("value")):
            label, value = headline["name"], _number(headline["value"])  # the headline is the largest transfer
        else:
            found = [(_number(fig.get("bytes")) or 0, label, _number(fig.get("value")))
                     for label, fig in figures.items()
                     if isinstance(fig, dict) and label.startswith(prefix) and _number(fig.get("value"))]
            if not found:
                continue
            _, label, value = max(found)
        limit = limit_of(doc, label)
        out.append(_finding(f"PCIe {label}", value, "GB/s", limit.value, limit.what, healthy, model, none_held,
                            limit.source))
    return out


def _host_membw(doc: dict[str, Any]) -> list[dict[str, Any]]:
    figure = doc.get("figure") if isinstance(doc.get("figure"), dict) else {}
    value = _number(figure.get("value"))
    if value is None:
        return []
    limit = limit_of(doc, str(figure.get("name") or ""))
    return [_finding(f"host memory {figure.get('name') or 'bandwidth'}", value, "GB/s", limit.value, limit.what,
                     None, None, "hwbench holds no healthy fraction for host memory", limit.source)]


def sources(finding: dict[str, Any]) -> str:
    """Where a finding's limit and healthy fraction come from, in one line ("" when neither is known)."""
    parts = []
    if finding.get("limit_source"):
        parts.append(f"limit: {finding['limit_source']}")
    healthy = finding.get("healthy")
    if isinstance(healthy, dict) and healthy.get("source"):
        parts.append(f"healthy: {healthy['source']}")
    return "; ".join(parts)


def annotate(doc: dict[str, Any]) -> None:
    """Store :func:`judge`'s findings in ``doc["normal_for_kind"]`` and add each low one to its warnings."""
    findings = judge(doc)
    if not findings:
        return
    doc["normal_for_kind"] = findings
    warnings = doc.setdefault("warnings", [])
    warnings.extend(f"not normal for its kind: {f['text']}" for f in findings if f["status"] == LOW)
