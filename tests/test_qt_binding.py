"""Guards against a Qt binding release that corrupts the interpreter.

PySide6 6.12.0 drops a reference to ``True`` on every ``Signal.emit`` under Python 3.11; the
process then aborts with "Fatal Python error: bool_dealloc" after enough emits (the Monitor tab
emits hundreds per frame). pyproject pins it out; this test fails if a resolver lets it back in.
"""

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    carried = Signal(object)


def test_signal_emit_keeps_reference_counts(qapp):
    emitter = _Emitter()
    emitter.carried.connect(lambda value: None)
    before = sys.getrefcount(True)
    for _ in range(2000):
        emitter.carried.emit([True, False])
    # the bug loses one reference per emit (-2000 here); a few stray references elsewhere are noise
    assert abs(sys.getrefcount(True) - before) < 50
