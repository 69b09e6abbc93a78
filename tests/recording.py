"""A Reporter that keeps what a benchmark reports, for tests that call ``run`` in-process."""


class Recorder:
    def __init__(self):
        self.progress_calls, self.logs, self.metrics, self.phases = [], [], [], []

    def progress(self, fraction, message=""):
        self.progress_calls.append((fraction, message))

    def log(self, message):
        self.logs.append(message)

    def metric(self, name, value, unit, **extra):
        self.metrics.append((name, value, unit, extra))

    def phase(self, phase, state, repeat=None):
        self.phases.append((phase, state, repeat))
