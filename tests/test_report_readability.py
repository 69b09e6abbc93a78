"""Reports read well: the PDF holds the machines and the spreads, chart labels wrap instead of being cut,
a machine without a GPU is named by its CPU."""

from __future__ import annotations


def test_pdf_report_holds_the_machines_and_the_spreads(tmp_path):
    """The PDF holds the HTML report's system table and every value's spread."""
    from test_reports import seed_like_docs

    from hwbench_gui.engine.reports import comparison_text, pdf
    from hwbench_gui.engine.reports.report import make_report, side_facts

    report = make_report(seed_like_docs(), with_charts=False)
    texts = []
    for figure in pdf._table_pages(report) + [pdf._systems_page(report)]:
        texts += [text.get_text() for text in figure.texts]  # the side-by-side table: one text per line
        for ax in figure.axes:
            for table in ax.tables:
                texts += [cell.get_text().get_text() for cell in table.get_celld().values()]
    joined = " ".join(" ".join(texts).split())
    for side in report.comparison.sides:
        for value in side_facts(side).values():
            assert value.split("\n")[0][:30] in joined.replace("\n", " ") or value[:30] in joined
    spreads = [comparison_text.spread_text(cell.metric) for row in report.comparison.rows for cell in row.cells]
    assert any(spreads) and all(s.split(",")[0] in joined for s in spreads if s)


def test_chart_labels_are_wrapped_not_cut():
    from hwbench_gui.engine.reports.chart_kit import short

    name = "ResNet-50 training · PyTorch · FP16-AMP · batch 256 · workstation-with-a-long-name"
    wrapped = short(name, 28)
    assert "\n" in wrapped and wrapped.replace("\n", " ").replace("  ", " ").startswith("ResNet-50 training")
    assert "workstation-with-a-long-name" in wrapped.replace("\n", "")


def test_machine_label_names_the_cpu_when_there_is_no_gpu():
    from hwbench_gui.engine.results import describe

    doc = {"hostname": "vm", "inventory": {"gpus": [], "cpu": {"model": "Intel Xeon 8480", "logical_cores": 2}}}
    assert describe.machine_name(doc) == "vm · Intel Xeon 8480 (2 threads)"
    doc["inventory"]["gpus"] = [{"name": "NVIDIA H200"}]
    assert describe.machine_name(doc) == "vm · NVIDIA H200"
