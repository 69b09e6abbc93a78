"""One figure of one document as a comparison reads it (:class:`Metric`): its value, unit, direction and bounded
samples, and one per precision for a run that measured several."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hwbench_gui.engine.reports.comparability import comparable_params
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.spec.precision import from_label
from hwbench_gui.engine.spec.precision import of_document as precision_of


@dataclass
class Metric:
    """One figure of one document, as a comparison sees it."""

    doc: dict[str, Any]
    name: str
    value: float | None
    unit: str
    higher_is_better: bool
    samples: list[float]
    stats: dict[str, Any] | None
    headline: bool
    #: For one precision of a run that measured several (``precision=all``): its label and the
    #: document's parameters with that precision, so that it pairs with a run of that precision only.
    precision: str | None = None
    params: dict[str, Any] | None = None

    @property
    def failed(self) -> bool:
        return self.value is None

    @property
    def published(self) -> bool:
        return describe.is_published(self.doc)

    def interval(self) -> tuple[float, float] | None:
        """(p5, p95), the value as a point when there is no spread, or None without a value."""
        if self.value is None:
            return None
        s = self.stats or {}
        if (s.get("n") or 0) >= 2 and s.get("p5") is not None and s.get("p95") is not None:
            return float(s["p5"]), float(s["p95"])
        return float(self.value), float(self.value)

    def has_spread(self) -> bool:
        low_high = self.interval()
        return low_high is not None and (self.stats or {}).get("n", 0) >= 2


#: Samples a comparison reads per figure: more are reduced to this many evenly spaced order
#: statistics (the same distribution for the test, a bounded cost per document).
MAX_SAMPLES = 2000


def _bounded(values: Sequence[Any]) -> list[float]:
    numbers = [float(v) for v in values if describe.is_number(v)]
    if len(numbers) <= MAX_SAMPLES:
        return numbers
    numbers.sort()
    last = len(numbers) - 1
    return [numbers[round(i * last / (MAX_SAMPLES - 1))] for i in range(MAX_SAMPLES)]


def metrics_of(doc: dict[str, Any], all_figures: bool = False) -> list[Metric]:
    """The headline figure (and with ``all_figures`` the further named figures) of a usable
    document; a failed one gives a single metric without a value. Samples are at most
    :data:`MAX_SAMPLES` per figure."""
    figure = doc.get("figure") or {}
    samples = _bounded(doc.get("samples") or [])
    if figure.get("value") is None:
        return [Metric(doc, "", None, "", True, [], None, True)]
    per_precision = precision_metrics(doc)  # they stand for the headline and the precision figures
    out = per_precision or [Metric(doc, str(figure.get("name") or "figure"), float(figure["value"]),
                                   str(figure.get("unit") or ""), bool(figure.get("higher_is_better", True)), samples,
                                   doc.get("stats"), True)]
    if all_figures:
        for name, fig in (doc.get("figures") or {}).items():
            if not isinstance(fig, dict) or not describe.is_number(fig.get("value")):
                continue
            if per_precision and from_label(str(name)) is not None:
                continue
            fig_samples = _bounded(fig.get("samples") or [])
            stats = fig.get("stats") if isinstance(fig.get("stats"), dict) else None
            out.append(Metric(doc, str(name), float(fig["value"]), str(fig.get("unit") or ""),
                              bool(fig.get("higher_is_better", True)), fig_samples, stats, False))
    return out


#: A ``precision`` parameter value that asks one run to measure several precisions.
SEVERAL_PRECISIONS = "all"


def precision_metrics(doc: dict[str, Any]) -> list[Metric]:
    """For a run that measured several precisions (``precision=all``, one figure per precision named by
    its label, as gpu.matmul's): one headline metric per precision, named as a run of that precision
    names its headline, with that precision's parameter value, so a BF16 reference pairs with this
    run's BF16 figure and not only headline with headline. Empty for any other document."""
    params = doc.get("params") or {}
    figure = doc.get("figure") or {}
    headline_label = precision_of(doc)
    if params.get("precision") != SEVERAL_PRECISIONS or not isinstance(figure.get("name"), str):
        return []
    base = comparable_params(doc)
    out = []
    for label, fig in (doc.get("figures") or {}).items():
        precision = from_label(str(label))
        if precision is None or not isinstance(fig, dict) or not describe.is_number(fig.get("value")):
            continue
        stats = fig.get("stats") if isinstance(fig.get("stats"), dict) else None
        out.append(Metric(doc, figure["name"].replace(headline_label, precision.label), float(fig["value"]),
                          str(fig.get("unit") or figure.get("unit") or ""), bool(fig.get("higher_is_better", True)),
                          _bounded(fig.get("samples") or []), stats, True, precision=precision.label,
                          params={**base, "precision": precision.key}))
    return out
