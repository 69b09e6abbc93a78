"""How a DDP launch reads its ranks' endings: a rank that aborts after every rank wrote its timings (gloo's
teardown) keeps the measurement with a warning; a rank that fails before writing fails the run."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("torch")

from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure  # noqa: E402

from hwbench_gui.engine.models import multigpu  # noqa: E402
from recording import Recorder  # noqa: E402


def _launcher(ranks_that_write):
    """Stands in for torch's elastic launcher (not the thing under test): the ranks in ``ranks_that_write``
    write their records, then rank 1 ends with SIGABRT."""

    def elastic_launch(config, entrypoint):
        def run(*args):
            out = os.environ[multigpu.OUT_ENV]
            for rank in ranks_that_write:
                multigpu._write(multigpu.Path(out), rank, {"rank": rank, "runs": [], "details": {}, "where": "cpu"})
            failure = ProcessFailure(local_rank=1, pid=4242, exitcode=-6, error_file="/nonexistent")
            raise ChildFailedError("hwbench-worker", {1: failure})

        return run

    return elastic_launch


def test_a_rank_aborting_after_every_rank_reported_keeps_the_measurement(monkeypatch):
    monkeypatch.setattr("torch.distributed.launcher.api.elastic_launch", _launcher([0, 1]))
    rec = Recorder()
    records = multigpu.launch("model.resnet50", {}, 2, 1, "", rec)
    assert [r["rank"] for r in records] == [0, 1]
    warning = records[0]["teardown_warning"]
    assert warning.startswith("a DDP rank ended abnormally after every rank had written its timings:")
    assert "hwbench-worker FAILED" in warning and "\n" not in warning
    assert any(line == warning for line in rec.logs)
    json.dumps(records)  # still plain records


def test_a_rank_that_never_reported_fails_the_run(monkeypatch):
    monkeypatch.setattr("torch.distributed.launcher.api.elastic_launch", _launcher([0]))
    with pytest.raises(RuntimeError, match="a DDP rank failed without a report"):
        multigpu.launch("model.resnet50", {}, 2, 1, "", Recorder())
