"""CSV cells a spreadsheet would run as formulas are neutralised; numbers stay numbers."""

from __future__ import annotations

import math
import os
import stat

import pytest
from reports_data import make_doc


posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and file-size limits")
needs_dev_full = pytest.mark.skipif(not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
                                    reason="no /dev/full character device here")


def test_report_csv_neutralises_formulas_but_keeps_numbers():
    import csv
    import io

    from hwbench_gui.engine.reports.csv_export import csv_text

    doc = make_doc("t.rate", [-1.5, -1.5, -1.5])
    doc.update(status="failed", reason="=HYPERLINK(\"http://x\",\"y\")", hostname="+cmd|' /C calc'!A0",
               warnings=["@SUM(1+1)", "-2+3"])
    doc["figure"]["value"] = -1.5
    (row,) = csv.DictReader(io.StringIO(csv_text([doc])))
    assert row["reason"] == "'=HYPERLINK(\"http://x\",\"y\")"
    assert row["hostname"] == "'+cmd|' /C calc'!A0"
    assert row["warnings"].startswith("'@SUM(1+1)")
    assert row["value"] == "-1.5" and float(row["median"]) == -1.5


def test_telemetry_csv_neutralises_formulas_but_keeps_numbers():
    import io

    from hwbench_gui.engine.telemetry.csv_export import CsvRowWriter

    buffer = io.StringIO()
    writer = CsvRowWriter(buffer, ["=cmd()", "temp_c"])
    writer.write_sample({"timestamp": 1.0, "=cmd()": "-a text", "temp_c": -1.5})
    header, row = buffer.getvalue().splitlines()
    assert header == "timestamp,'=cmd()" + ",temp_c"
    assert row == "1.000,'-a text,-1.5"
    assert not math.isnan(float(row.split(",")[-1]))
