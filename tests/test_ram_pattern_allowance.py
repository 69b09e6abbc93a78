"""The burn-in's RAM pattern test is sized from what this process may allocate: under ``ulimit -v`` a test sized
from the host's free RAM could not allocate its array, and a healthy machine read FAIL."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from hwbench_gui.engine.health.allowance import cgroup_left
from hwbench_gui.engine.health.host_load import CHUNK_WORDS, ram_pattern_words

CHILD = textwrap.dedent("""
    import resource, psutil, numpy as np
    headroom = 768 << 20
    limit = psutil.Process().memory_info().vms + headroom
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from hwbench_gui.engine.health.allowance import allowance
    from hwbench_gui.engine.health.host_load import RamPattern, ram_pattern_words
    try:  # what the host's free RAM alone would have asked for
        np.empty(int(psutil.virtual_memory().available * 0.25) // 8, dtype=np.uint64)
        print("free-RAM sizing allocated")
    except MemoryError:
        print("free-RAM sizing: MemoryError")
    allowed = allowance()
    load = RamPattern(0.0, words=ram_pattern_words(allowed.bytes, 0.25), check=True)
    load.prepare()
    while load.passes < 1:
        load.step()
    print(allowed.source, allowed.bytes <= headroom, load.words * 8 <= headroom // 4, load.check_errors)
""")


def test_under_ulimit_v_the_pattern_test_fits_what_the_process_may_allocate(cli_env):
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, env=cli_env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["free-RAM sizing: MemoryError", "RLIMIT_AS (ulimit -v) True True []"]


def test_the_array_and_what_it_holds_beside_it_fit_the_share():
    chunk = CHUNK_WORDS * 8
    assert ram_pattern_words(64 << 30, 0.25) * 8 == (16 << 30) - 4 * chunk
    small = ram_pattern_words(100 << 20, 0.25)  # 25 MiB: the array and four chunks as small as it
    assert small * 8 * 5 <= 25 << 20 and small > 0
    assert ram_pattern_words(0, 0.25) == 0


def test_a_cgroup_limit_binds_v2_and_v1(tmp_path):
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text("0::/box\n", encoding="utf-8")
    group = tmp_path / "cg" / "box"
    group.mkdir(parents=True)
    (group / "memory.max").write_text("1073741824\n", encoding="utf-8")
    (group / "memory.current").write_text("268435456\n", encoding="utf-8")
    assert cgroup_left(tmp_path / "cg", proc) == 768 << 20
    (group / "memory.max").write_text("max\n", encoding="utf-8")
    assert cgroup_left(tmp_path / "cg", proc) is None
    (proc / "cgroup").write_text("4:memory:/box\n0::/\n", encoding="utf-8")
    v1 = tmp_path / "cg" / "memory" / "box"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text("2147483648\n", encoding="utf-8")
    (v1 / "memory.usage_in_bytes").write_text("1073741824\n", encoding="utf-8")
    assert cgroup_left(tmp_path / "cg", proc) == 1 << 30
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n", encoding="utf-8")
    assert cgroup_left(tmp_path / "cg", proc) is None
