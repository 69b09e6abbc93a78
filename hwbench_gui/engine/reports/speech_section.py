"""Speech recognition (speech.transcribe) read out of result documents: the evaluation report's rows (the real-time
factor with its encoder/decoder split, the encoder's MFU and share of the measured matmul rate, the decoding's
tokens/s and share of its bandwidth bound), the same as CSV rows, and the chart of the real-time factor split into
the encoder's and the decoder's time with the decoding's bound beside it.

Documents are foreign input: every field used is checked; a document or batch row missing one is passed over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hwbench_gui.engine.measure.stats import median, percentile
from hwbench_gui.engine.reports.family import Family, PdfTable, has_figures
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.spec.precision import of_document as precision_of

SPEECH_ID = "speech.transcribe"
CSV_COLUMNS = ("machine", "model", "precision", "tokens_per_window", "step", "batch", "real_time_factor",
               "real_time_factor_p5", "real_time_factor_p95", "encoder_s_per_window", "encoder_share_of_time",
               "encoder_tflops", "encoder_fraction_of_matmul", "encoder_mfu", "decoder_tokens_per_s",
               "decoder_bound_tokens_per_s", "decoder_fraction_of_bound", "device", "started_at")


def is_speech(doc: Any) -> bool:
    return isinstance(doc, dict) and (doc.get("benchmark") or {}).get("id") == SPEECH_ID


def _numbers(value: Any) -> list[float] | None:
    if not isinstance(value, list) or not value or not all(describe.is_number(v) and v > 0 for v in value):
        return None
    return [float(v) for v in value]


def _share(value: Any) -> float | None:
    """A fraction of a limit, or None where it is missing or above 1 (never a share above 100 %)."""
    return float(value) if describe.is_number(value) and 0 < value <= 1 else None


@dataclass
class BatchRow:
    """One batch of one run, as numbers (None where the document does not give one)."""

    batch: int
    rtf: list[float]
    encoder_s: float
    encoder_share_of_time: float
    encoder_tflops: float
    encoder_fraction_of_matmul: float | None
    encoder_mfu: float | None
    tokens_per_s: float
    bound_tokens_per_s: float
    decoder_fraction_of_bound: float | None


def batch_rows(doc: dict[str, Any]) -> list[BatchRow]:
    """The batch rows of ``doc``'s details that carry every figure this section reads."""
    details = doc.get("details") if isinstance(doc.get("details"), dict) else {}
    out = []
    for row in details.get("rows") if isinstance(details.get("rows"), list) else []:
        if not isinstance(row, dict):
            continue
        rtf, enc = _numbers(row.get("real_time_factor")), _numbers(row.get("encoder_seconds_per_window"))
        tflops, tokens = _numbers(row.get("encoder_tflops")), _numbers(row.get("decoder_tokens_per_s"))
        batch, bound, split = row.get("batch"), row.get("decoder_bound_tokens_per_s"), row.get("encoder_share_of_time")
        if None in (rtf, enc, tflops, tokens) or not isinstance(batch, int) or isinstance(batch, bool) or batch < 1 \
                or not describe.is_number(bound) or bound <= 0 or not describe.is_number(split) or not 0 <= split <= 1:
            continue
        out.append(BatchRow(batch, rtf, median(enc), float(split), median(tflops),
                            _share(row.get("encoder_fraction_of_matmul")), _share(row.get("encoder_mfu")),
                            median(tokens), float(bound), _share(row.get("decoder_fraction_of_bound"))))
    return out


def configuration(doc: dict[str, Any]) -> str:
    """``"large-v3 · BF16 · 128 tokens per 30 s window · step=graph"``: what decides comparability but the batch."""
    p = doc.get("params") or {}
    tokens = p.get("tokens")
    # a published figure states its decoding in words ("as the speech gives (beam search, 5 beams)") and no step
    window = f"{tokens} tokens per 30 s window" if isinstance(tokens, int) else f"tokens {tokens}"
    step = f" · step={p['step']}" if p.get("step") is not None else ""
    return f"{p.get('model')} · {precision_of(doc)} · {window}{step}"


def _newest(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    chosen: dict[str, dict[str, Any]] = {}
    for doc in sorted((d for d in docs if is_speech(d) and d.get("status") in ("ok", "published") and batch_rows(d)),
                      key=lambda d: str(d.get("started_at") or ""), reverse=True):
        chosen.setdefault(configuration(doc), doc)
    return list(chosen.values())


def _pct(value: float | None, missing: str = "—") -> str:
    return f"{value:.0%}" if value is not None else missing


@dataclass
class SpeechRow:
    """One batch of the section, as text."""

    configuration: str
    batch: str
    rtf: str
    split: str
    encoder: str
    decoding: str
    device: str
    date: str


def _text_row(doc: dict[str, Any], row: BatchRow) -> SpeechRow:
    rtf = f"{median(row.rtf):,.1f}× real time"
    if len(row.rtf) > 1:
        rtf += f" (p5 {percentile(row.rtf, 5.0):,.1f}, p95 {percentile(row.rtf, 95.0):,.1f})"
    encoder = (f"{row.encoder_s * 1e3:,.1f} ms per window, {row.encoder_tflops:,.3g} TFLOP/s = "
               f"{_pct(row.encoder_fraction_of_matmul, 'no share (above the measured rate)')} of the measured "
               f"matmul rate, MFU {_pct(row.encoder_mfu, 'not known (no datasheet peak)')}")
    decoding = (f"{row.tokens_per_s:,.0f} tokens/s = "
                f"{_pct(row.decoder_fraction_of_bound, 'no share (above the bound)')} of its "
                f"{row.bound_tokens_per_s:,.0f} tokens/s bandwidth bound")
    return SpeechRow(configuration(doc), str(row.batch), rtf,
                     f"encoder {row.encoder_share_of_time:.0%} · decoder {1 - row.encoder_share_of_time:.0%}",
                     encoder, decoding, str(doc.get("device") or ""), describe.date_text(doc))


def _published_row(doc: dict[str, Any]) -> SpeechRow:
    """A published figure that states only its real-time factor: that headline, and who published it where a run
    would give its date (its split, encoder and decoding are not published: a dash, never a made-up number)."""
    date = describe.date_text(doc)
    publisher = str((doc.get("reference") or {}).get("publisher") or "its source")
    return SpeechRow(configuration(doc), "—", f"{float(doc['figure']['value']):,.1f}× real time", "—", "—", "—",
                     str(doc.get("device") or ""), f"published by {publisher}" + (f", {date}" if date else ""))


def build(docs: Sequence[dict[str, Any]]) -> list[SpeechRow]:
    """The section's rows: every batch of the newest good run of each configuration, then each published figure
    that gives no batch rows (its headline alone); [] without any."""
    published = [d for d in docs if is_speech(d) and describe.is_published(d) and has_figures(d) and not batch_rows(d)]
    return [_text_row(doc, row) for doc in _newest(docs) for row in batch_rows(doc)] + \
        [_published_row(doc) for doc in published]


def lines(rows: Sequence[SpeechRow]) -> list[str]:
    """The section as plain text (the terminal's evaluation)."""
    out = ["", "Speech recognition (Whisper real-time factor; encoder against the matmul rate, decoding against "
               "the bandwidth):"]
    for row in rows:
        out += [f"  {row.configuration}, batch {row.batch} on {row.device} ({row.date})",
                f"    {row.rtf}; time: {row.split}",
                f"    encoder: {row.encoder}", f"    decoding: {row.decoding}"]
    return out


def pdf_tables(rows: Sequence[SpeechRow], usable_in: float) -> list[PdfTable]:
    """The section's one table for the PDF evaluation."""
    widths = [2.4, 0.5, 1.4, 1.2, 2.2]
    widths.append(usable_in - sum(widths))
    names = ("Configuration", "Batch", "Real-time factor", "Time split", "Encoder", "Decoding · device")
    return [("Speech recognition: real-time factor, encoder MFU, decoding against its bandwidth bound",
             list(zip(names, widths)),
             [([r.configuration, r.batch, r.rtf, r.split, r.encoder, f"{r.decoding}; {r.device} ({r.date})"],
               ["white"] * 6) for r in rows])]


def csv_rows(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per batch of each configuration's newest run, with :data:`CSV_COLUMNS`; a missing value is None."""
    out = []
    for doc in _newest(docs):
        p = doc.get("params") or {}
        for row in batch_rows(doc):
            out.append({"machine": describe.machine_name(doc), "model": p.get("model"), "precision": precision_of(doc),
                        "tokens_per_window": p.get("tokens"), "step": p.get("step"), "batch": row.batch,
                        "real_time_factor": median(row.rtf), "real_time_factor_p5": percentile(row.rtf, 5.0),
                        "real_time_factor_p95": percentile(row.rtf, 95.0), "encoder_s_per_window": row.encoder_s,
                        "encoder_share_of_time": row.encoder_share_of_time, "encoder_tflops": row.encoder_tflops,
                        "encoder_fraction_of_matmul": row.encoder_fraction_of_matmul, "encoder_mfu": row.encoder_mfu,
                        "decoder_tokens_per_s": row.tokens_per_s,
                        "decoder_bound_tokens_per_s": row.bound_tokens_per_s,
                        "decoder_fraction_of_bound": row.decoder_fraction_of_bound,
                        "device": doc.get("device"), "started_at": doc.get("started_at")})
    return out


def chart(docs: Sequence[dict[str, Any]]) -> Any | None:
    """Per configuration and batch: the real-time factor as a bar split into the encoder's and the decoder's share
    of the time (left), and the decoding's tokens/s against its bandwidth bound (right), as a
    :class:`~hwbench_gui.engine.reports.chart_kit.Chart`; None without a good run."""
    from hwbench_gui.engine.reports.chart_kit import Chart, new_figure

    drawn = [(f"{(doc.get('params') or {}).get('model')} · {precision_of(doc)}\nbatch {row.batch}", row)
             for doc in reversed(_newest(docs)) for row in batch_rows(doc)]
    if not drawn:
        return None
    figure, _ = new_figure(9.0, 2.0 + 0.45 * len(drawn))
    figure.clear()
    rtf, decoding = figure.subplots(1, 2, sharey=True)
    ys = list(range(len(drawn)))
    totals = [median(row.rtf) for _, row in drawn]
    encoder = [t * row.encoder_share_of_time for t, (_, row) in zip(totals, drawn)]
    rtf.barh(ys, encoder, color="#4c72b0", label="encoder's share of the time")
    rtf.barh(ys, [t - e for t, e in zip(totals, encoder)], left=encoder, color="#dd8452",
             label="decoder's share of the time")
    for y, t in zip(ys, totals):
        rtf.annotate(f"{t:,.1f}×", (t, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    rtf.set_yticks(ys, [label for label, _ in drawn], fontsize=7)
    rtf.invert_yaxis()
    rtf.set_xlim(0, max(totals) * 1.18)
    rtf.set_xlabel("real-time factor (s of audio per s)")
    rtf.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    rtf.grid(axis="x", alpha=0.3)
    decoding.barh(ys, [row.tokens_per_s for _, row in drawn], color="#55a868", label="decoding tokens/s")
    bounds = [row.bound_tokens_per_s for _, row in drawn]
    decoding.scatter(bounds, ys, marker="|", s=300, color="crimson", label="bandwidth bound", zorder=3)
    for y, (_, row) in zip(ys, drawn):
        decoding.annotate(_pct(row.decoder_fraction_of_bound, "no share"), (row.tokens_per_s, y), xytext=(3, 0),
                          textcoords="offset points", va="center", fontsize=7)
    decoding.set_xlabel("decoding tokens/s (all windows)")
    decoding.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    decoding.grid(axis="x", alpha=0.3)
    figure.suptitle("Speech recognition: real-time factor and decoding against its bound", fontsize=10)
    return Chart("speech", "Speech recognition: real-time factor and decoding", figure,
                 "Newest run of each configuration. Real-time factor = batch × 30 s of audio / (encoder window + "
                 "decoder window); the bar is split by each part's share of that time. Decoding tokens/s against the "
                 "least time its bytes (decoder weights once per step, both caches per window) take at the bandwidth "
                 "measured in the same run (the red mark); the share is written beside the bar, never above 100 %.")


def charts(sides: Sequence[Any]) -> list[Any]:
    """The chart of the last side's runs (a report's newest side; an evaluation's one machine)."""
    drawn = chart([doc for side in sides[-1:] for doc in side.docs])
    return [drawn] if drawn is not None else []


FAMILY = Family(
    name=SPEECH_ID, benchmark_ids=frozenset({SPEECH_ID}), build=build, text_lines=lines,
    html_template="speech_section.html.j2", pdf_tables=pdf_tables, charts=charts,
    gui_page="hwbench_gui.ui.benchmarks.speech_view:PAGE", draws_its_series=True, csv_columns=CSV_COLUMNS,
    csv_rows=csv_rows)
