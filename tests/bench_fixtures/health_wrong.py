"""A burn-in fixture whose host product comes out wrong once: the real loop, load check and rules judge it."""

from __future__ import annotations

from hwbench_gui.engine.health.burnin import BurninPlan, run_burnin
from hwbench_gui.engine.health.host_load import CpuCheckedMatmul
from hwbench_gui.engine.health.watch import HealthWatch
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome


class _OneWrongProduct(CpuCheckedMatmul):
    def product(self):
        c = super().product()
        if self.checked == 2:
            c[0, 0] += 1.0
        return c


def _run(params, reporter):
    plan = BurninPlan(duration_s=1.5, host_loads=[_OneWrongProduct(0.0, n=64)])
    health = run_burnin(plan, HealthWatch(), progress=reporter.progress, phase=reporter.phase)
    samples = [r for _, r in plan.host_loads[0].rate]
    return Outcome(figure_name="host checked matmul", unit="GFLOP/s", samples=samples, details={"health": health})


BENCHMARK = Benchmark(id="test.health_wrong", title="burn-in with a wrong product", category="test",
                      description="burn-in with a wrong product", params=(), run=_run)
