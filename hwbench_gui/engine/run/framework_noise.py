"""Which of a child's unframed output lines are its frameworks' chatter rather than the benchmark's words.

A benchmark child prints protocol lines; anything else it writes reaches the run's log as a line with
its stream. Most of it is TensorFlow's, XLA's and CUDA's start-up logging (glog/absl lines naming a C++
source file, oneDNN and CPU-instruction notices, "Unable to register cuDNN factory") and Python warnings
raised inside installed libraries. The benchmark's own stray prints are none of these and stay in view.
"""

from __future__ import annotations

import re

#: glog / absl lines: "I0000 00:00:1733400000.123456   1234 port.cc:153] ..." or
#: "2026-12-05 10:00:00.123456: I tensorflow/core/util/port.cc:113] ...".
_GLOG = re.compile(r"^(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: )?"
                   r"[IWEF]\d{0,4}[\s\d:.]*\s*[\w/.+-]+\.(?:cc|cpp|h|c):\d+\]")
_PHRASES = (
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "To enable the following instructions:",
    "This TensorFlow binary is optimized",
    "oneDNN custom operations are on",
    "rebuild TensorFlow with the appropriate compiler flags",
    "Unable to register cuDNN factory", "Unable to register cuFFT factory", "Unable to register cuBLAS factory",
    "TF-TRT Warning",
)
#: A warning raised inside an installed package: "…/site-packages/torch/…py:123: UserWarning: …", and the
#: source line Python prints under it.
_LIBRARY_WARNING = re.compile(r"[/\\](?:site|dist)-packages[/\\].*:\d+: \w*Warning:")


def is_framework_noise(line: str) -> bool:
    """Whether ``line`` (one line a child printed outside the protocol) is a framework's or a library's."""
    text = line.strip()
    if not text:
        return False
    return (bool(_GLOG.match(text)) or any(phrase in text for phrase in _PHRASES)
            or bool(_LIBRARY_WARNING.search(text)) or text == "warnings.warn(")
