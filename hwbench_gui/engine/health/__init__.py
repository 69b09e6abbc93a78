"""The health burn-in's judgement, in plain Python: what NVML shows during a load (:mod:`.watch`), the rules
that turn readings and checked results into PASS / WARN / FAIL (:mod:`.rules`), and whether a micro-benchmark
figure is normal for its hardware (:mod:`.normal`). A stand-in NVML drives all of it in the tests; the
benchmark module only runs the loads, and the Health page only draws what is here."""
