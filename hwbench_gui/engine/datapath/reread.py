"""A stored ``datapath.analyze`` document's verdict derived again from its stored figures with this
version's rules (:func:`~hwbench_gui.engine.datapath.verdict.analyze`), for the Pipeline page and
the reports alike: what they show follows from the numbers shown beside it, also for documents
whose run wrote its text with older rules (the H200 run of 2026-12-04 named four causes from a mean
its headline no longer is). A document is foreign input: a field missing or of the wrong type
leaves the stored verdict as it is, with the reason."""

from __future__ import annotations

import math
from typing import Any

from hwbench_gui.engine.datapath.tryouts import LoaderConfig, Tried
from hwbench_gui.engine.datapath.findings import Context
from hwbench_gui.engine.datapath.verdict import analyze

#: The fields of ``details`` the re-derived verdict replaces.
VERDICT_FIELDS = ("verdict", "bottleneck", "bottleneck_name", "limiting_stage", "advice", "causes", "consistency",
                  "loss")
_CONFIG_FIELDS = {"workers": int, "prefetch": int, "pin_memory": bool, "channels_last": bool, "gpu_decode": bool,
                  "normalize_on_device": bool}


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _headline(document: dict[str, Any]) -> float | None:
    figure = document.get("figure")
    return _number(figure.get("value")) if isinstance(figure, dict) else None


def _config(data: Any) -> LoaderConfig | None:
    if not isinstance(data, dict):
        return None
    values = {}
    for name, kind in _CONFIG_FIELDS.items():
        value = data.get(name, False if name in ("gpu_decode", "normalize_on_device") else None)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return None
        values[name] = value
    return LoaderConfig(**values)


def _context(document: dict[str, Any], details: dict[str, Any]) -> Context | None:
    c, dataset = details.get("context"), details.get("dataset")
    params = document.get("params") if isinstance(document.get("params"), dict) else {}
    if not isinstance(c, dict) or not isinstance(dataset, dict) or c.get("device") not in ("cuda", "cpu"):
        return None
    ints = {name: _int(c.get(name)) for name in ("workers", "cpus", "batch", "image_size")}
    images, size = _int(dataset.get("images")), _int(dataset.get("bytes"))
    if None in ints.values() or images is None or size is None or not isinstance(c.get("model"), str) \
            or not isinstance(document.get("precision"), str):
        return None
    return Context(device=c["device"], workers=ints["workers"], cpus=ints["cpus"], batch=ints["batch"], images=images,
                   dataset_bytes=size, available_ram_bytes=_int(c.get("available_ram_bytes")),
                   precision=document["precision"], channels_last=params.get("channels_last") is True,
                   model=c["model"], image_size=ints["image_size"],
                   stored_width_px=_int(dataset.get("mean_width_px")),
                   stored_height_px=_int(dataset.get("mean_height_px")),
                   read_delay_ms=_number(c.get("read_delay_ms")) or 0.0)


def rederived(document: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(the verdict fields of :data:`VERDICT_FIELDS` derived again, None) or (None, why not)."""
    details = document.get("details")
    if not isinstance(details, dict) or not isinstance(details.get("stages"), list):
        return None, "the document has no stage rates"
    rates: dict[str, float | None] = {}
    for stage in details["stages"]:
        if isinstance(stage, dict) and isinstance(stage.get("key"), str):
            rates[stage["key"]] = _number(stage.get("rate_images_per_s"))
    headline = _headline(document)
    if headline is not None:
        rates["end_to_end"] = headline  # the figure shown beside the verdict
    ctx = _context(document, details)
    if ctx is None:
        return None, "the document's context (device, workers, batch, dataset) is incomplete"
    base = _config(details.get("base_config"))
    tried = []
    for t in details.get("tried") or []:
        config = _config(t.get("config")) if isinstance(t, dict) else None
        if config is None or not isinstance(t.get("key"), str):
            continue
        samples = [float(s) for s in t.get("samples") or [] if _number(s) is not None]
        tried.append(Tried(t["key"], config, _number(t.get("rate_images_per_s")), samples,
                           _number(t.get("seconds")) or 0.0, t.get("reason") if isinstance(t.get("reason"), str)
                           else None, _number(t.get("data_wait_fraction"))))
    epoch_start = details.get("epoch_start")
    if not (isinstance(epoch_start, dict) and _number(epoch_start.get("cost_s")) is not None
            and _number(epoch_start.get("fraction")) is not None and _int(epoch_start.get("epoch_batches"))):
        epoch_start = None
    loss = details.get("loss") if isinstance(details.get("loss"), dict) else {}
    step_slowdown = _number(details.get("step_slowdown", loss.get("step_slowdown")))
    util = _number(details.get("gpu_util_percent"))
    verdict = analyze(rates, ctx, data_wait_fraction=_number(details.get("data_wait_fraction")),
                      gpu_util_percent=util if ctx.device == "cuda" else None,
                      gpu_util_reason=details.get("gpu_util_reason") if isinstance(details.get("gpu_util_reason"),
                                                                                   str) else None,
                      step_slowdown=step_slowdown, epoch_refill_fraction=_number(details.get("epoch_refill_fraction")),
                      tried=tried if base is not None else [], base=base, epoch_start=epoch_start)
    data = verdict.to_json()
    best = details.get("best_found")
    if isinstance(best, dict) and isinstance(best.get("text"), str):
        data["text"] += " " + best["text"]
    out = {name: data[name] for name in VERDICT_FIELDS if name in data}
    out["verdict"] = data["text"]
    out["limiting_stage"] = data["limiting_stage"]
    return out, None


def verdict_details(document: dict[str, Any]) -> dict[str, Any]:
    """The document's details with the verdict derived again (``verdict_rederived``: True when its
    text differs from the stored one); the stored details, with ``verdict_rederived_reason``, when
    it cannot be."""
    details = dict(document.get("details") or {}) if isinstance(document.get("details"), dict) else {}
    fields, reason = rederived(document)
    if fields is None:
        details["verdict_rederived"] = False
        details["verdict_rederived_reason"] = reason
        return details
    stored = details.get("verdict")
    details.update(fields)
    details["verdict_rederived"] = fields["verdict"] != stored
    headline = _headline(document)
    # An older run stored the mean of its windows as the end-to-end stage; its headline (and the
    # verdict derived here) is the median: every view shows the one figure.
    details["stages"] = [dict(s, rate_images_per_s=headline) if isinstance(s, dict) and s.get("key") == "end_to_end"
                         and headline is not None else s for s in details["stages"]]
    return details
