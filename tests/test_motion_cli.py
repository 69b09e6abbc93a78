"""``hwbench demo motion`` as a real subprocess on generated video."""

from __future__ import annotations

import json

import cv2
from support import run_cli

from hwbench_gui.demos.motion import synthetic as syn
from hwbench_gui.demos.motion.targets import shipped_targets


def _cat() -> str:
    return str(next(p for p in shipped_targets() if p.stem == "cat"))


def test_cli_writes_mp4_and_trace(cli_env, tmp_path):
    video = syn.write_video(tmp_path / "drive.mp4", syn.talking_motion(40))
    out, trace = tmp_path / "out.mp4", tmp_path / "trace.json"
    roi = ",".join(map(str, syn.patch_roi()))
    proc = run_cli(["demo", "motion", "--source", video, "--target", _cat(), "--roi", roi, "--out", str(out),
                    "--trace", str(trace)], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "40 frames from drive.mp4 (40 with keypoints)" in proc.stdout and "frames/s end to end" in proc.stdout
    assert "mouth opening, share of the face size" in proc.stdout  # the generated head talks
    cap = cv2.VideoCapture(str(out))
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == 40
    cap.release()
    doc = json.loads(trace.read_text())
    assert doc["roi"] == list(syn.patch_roi()) and len(doc["frames"]) == 40
    assert all(f["driver"] and len(f["target"]) == len(doc["target"]["labels"]) for f in doc["frames"])
    assert doc["mouth"]["frames"] == 40 and doc["mouth"]["correlation"] > 0.8, doc["mouth"]


def test_cli_bad_input(cli_env, tmp_path):
    out = str(tmp_path / "out.mp4")
    proc = run_cli(["demo", "motion", "--source", "99", "--target", _cat(), "--out", out], cli_env)
    assert proc.returncode == 2 and "tried indices 99, 0, 1, 2, 3" in proc.stderr
    junk = tmp_path / "junk.mp4"
    junk.write_text("no video here")
    proc = run_cli(["demo", "motion", "--source", str(junk), "--target", _cat(), "--out", out], cli_env)
    assert proc.returncode == 2 and "cannot read video" in proc.stderr
    plain = tmp_path / "plain.png"
    cv2.imwrite(str(plain), cv2.imread(_cat())[:100, :100])
    proc = run_cli(["demo", "motion", "--source", str(junk), "--target", str(plain), "--out", out], cli_env)
    assert proc.returncode == 2 and "has no keypoints" in proc.stderr and "Click" in proc.stderr
    proc = run_cli(["demo", "motion", "--source", "0", "--target", _cat(), "--out", out, "--roi", "1,2,3"], cli_env)
    assert proc.returncode == 2 and "X,Y,W,H" in proc.stderr


def test_cli_without_opencv_face_detector_says_why_in_one_line(monkeypatch, capsys, tmp_path):
    """OpenCV 5 has no CascadeClassifier: face mode must end with the reason, typed, not an AttributeError."""
    from hwbench_gui.cli import main

    video = syn.write_video(tmp_path / "drive.mp4", syn.talking_motion(5))
    monkeypatch.delattr(cv2, "CascadeClassifier")
    rc = main(["demo", "motion", "--source", video, "--target", _cat(), "--out", str(tmp_path / "out.mp4")])
    err = capsys.readouterr().err
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the Haar face detector needs OpenCV 4.x"), err
    assert "--roi" in lines[0] and "Traceback" not in err
