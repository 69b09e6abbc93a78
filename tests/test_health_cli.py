"""``hwbench run health.burnin`` end to end on this GPU-less box: the host part runs, the GPU part says why
it did not, and a FAIL verdict is the exit status 3 (a wrong product in a fixture burn-in)."""

from __future__ import annotations

import json
import os

import pytest

from support import run_cli

pytestmark = pytest.mark.skipif(os.name != "posix", reason="fixtures use POSIX signals")


def test_a_cpu_only_burnin_runs_the_host_and_says_why_no_gpu(env, tmp_path):
    proc = run_cli(["run", "health.burnin", "-p", "minutes=0.03", "-p", "ram_share=0.002", "--json",
                    "--out", str(tmp_path)], env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    health = doc["details"]["health"]
    assert health["verdict"] in ("PASS", "WARN") and health["gpus"] == []
    assert health["no_gpu_reason"] and health["reasons"][0]["rule"] == "no_gpu"
    loads = {load["name"]: load for load in health["host"]["loads"]}
    assert loads["cpu-matmul"]["results_compared"] >= 1 and loads["cpu-matmul"]["check_errors"] == []
    assert loads["ram-pattern"]["rate"] and loads["ram-pattern"]["load_error"] is None
    assert doc["figure"]["unit"] == "GFLOP/s" and doc["figure"]["value"] > 0
    assert f"health verdict: {health['verdict']}" in proc.stderr


def test_a_fail_verdict_exits_3(env, tmp_path):
    env = dict(env, HWBENCH_EXTRA_BENCHMARKS=env["HWBENCH_EXTRA_BENCHMARKS"] + ",bench_fixtures.health_wrong")
    proc = run_cli(["run", "test.health_wrong", "--json", "--out", str(tmp_path)], env)
    assert proc.returncode == 3, proc.stderr
    health = json.loads(proc.stdout)["details"]["health"]
    assert health["verdict"] == "FAIL"
    assert "1 of 4096 elements" in health["host"]["reasons"][0]["text"]
    assert "health verdict FAIL (exit status 3)" in proc.stderr
