"""Motion transfer: a driver's motion (webcam or video) animates a still target image.

Frames come from :mod:`hwbench_gui.demos.video` (shared with tracking); ``keypoints`` tracks points on the
driver (Haar face + Lucas–Kanade, or a user ROI; ``mediapipe_source`` where MediaPipe is installed),
``mapping`` carries their motion to the target's keypoints, ``warp`` bends the target image with a thin-plate
spline, ``pipeline`` chains them per frame with timings. No Qt here; the Motion page and ``hwbench demo
motion`` both drive a :class:`~hwbench_gui.demos.motion.pipeline.MotionPipeline`.
"""

#: Output sizes (longer side, pixels), here where the command line reads them without OpenCV: past
#: 4096 the warp's maps and frames take gigabytes (100 000 px asked for 30 GB); no screen shows more.
MIN_OUT_SIZE_PX, MAX_OUT_SIZE_PX = 16, 4096
