"""``hwbench demo snake``: eval of the shipped checkpoint as a real subprocess; the rest in-process."""

from __future__ import annotations

import json

import pytest
from support import run_cli

from hwbench_gui import cli
from hwbench_gui.demos.snake.checkpoint import shipped_checkpoint


def test_shipped_checkpoint_is_small():
    path = shipped_checkpoint()
    assert path.is_file(), f"{path} missing"
    assert path.stat().st_size < 2_000_000


def test_eval_subprocess_prints_the_figures(cli_env):
    proc = run_cli(["demo", "snake", "eval", str(shipped_checkpoint()), "--episodes", "10"], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "10 games on 12x12" in proc.stdout
    for word in ("mean", "median", "max"):
        assert word in proc.stdout


def test_eval_json_and_errors(capsys, tmp_path):
    pytest.importorskip("torch")
    assert cli.main(["demo", "snake", "eval", "--episodes", "5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["episodes"] == 5 and len(doc["scores"]) == 5 and doc["board"] == [12, 12]
    assert doc["max"] == max(doc["scores"]) and doc["mean"] == sum(doc["scores"]) / 5

    bad = tmp_path / "bad.pt"
    bad.write_bytes(shipped_checkpoint().read_bytes()[:500])
    assert cli.main(["demo", "snake", "eval", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "not a readable" in err


def test_train_command_writes_a_loadable_checkpoint(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    out = tmp_path / "tiny.pt"
    assert cli.main(["demo", "snake", "train", "--minutes", "0.03", "--board", "6", "--boards", "8",
                     "--eval-episodes", "5", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert out.is_file() and "saved" in stdout and "5 games on 6x6" in stdout
    assert cli.main(["demo", "snake", "eval", str(out), "--episodes", "3"]) == 0
    assert "3 games on 6x6" in capsys.readouterr().out
    if not torch.cuda.is_available():  # without CUDA the command says why instead of falling back
        assert cli.main(["demo", "snake", "train", "--device", "cuda", "--out", str(tmp_path / "x.pt")]) == 2
        assert "is_available() is False" in capsys.readouterr().err


def test_eval_and_train_leave_a_demo_snake_document(capsys, tmp_path):
    pytest.importorskip("torch")
    from hwbench_gui.engine.results import list_results

    results = tmp_path / "results"
    assert cli.main(["demo", "snake", "eval", "--episodes", "6", "--json", "--results-dir", str(results)]) == 0
    figures = json.loads(capsys.readouterr().out)
    docs, errors = list_results(results)
    assert not errors and len(docs) == 1
    doc = docs[0]
    assert doc["benchmark"]["id"] == "demo.snake" and doc["status"] == "ok"
    assert doc["samples"] == figures["scores"], "one sample per game: its score"
    assert doc["figures"]["mean score"]["value"] == pytest.approx(figures["mean"])
    assert doc["figures"]["moves/s"]["value"] > 0 and doc["params"]["board"] == "12x12"

    out = tmp_path / "tiny.pt"
    assert cli.main(["demo", "snake", "train", "--minutes", "0.02", "--board", "6", "--boards", "8",
                     "--eval-episodes", "4", "--out", str(out), "--results-dir", str(results)]) == 0
    assert "result →" in capsys.readouterr().out
    assert len(list_results(results)[0]) == 2
    assert cli.main(["demo", "snake", "eval", "--episodes", "3", "--no-result", "--results-dir", str(results)]) == 0
    assert len(list_results(results)[0]) == 2
