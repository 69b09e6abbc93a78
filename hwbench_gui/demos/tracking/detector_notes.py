"""What each tracking detector is and what it is good for: plain text, importable without OpenCV
(the CLI's help and the tracking page show it before anything heavy is loaded)."""

#: What each detector is and what it is good for, in a sentence (the CLI and the tracking page show it).
DETECTOR_SUMMARIES = {
    "motion": "moving blobs from background subtraction (OpenCV MOG2), no weights, for a fixed camera on a room "
              "or a street. Shadows and light changes are left out; people side by side or one in front of another "
              "are mostly cut apart; someone who stops keeps their track; anything left standing untracked fades "
              "after 5 s. Not seen: someone standing still from the first frame. Two people who overlap at about "
              "the same distance from the camera are one blob: one of them is often missed or shares a track.",
    "hog": "OpenCV's HOG people detector (Daimler 48×96 model), no weights: upright people about 60 px tall "
           "or more (shorter ones are mostly missed), also with a moving camera; about 90 ms of CPU a frame at "
           "768×576 (11–22 frames/s on 2 idle cores), and it misses people seen from above or in part. For a fixed "
           "camera: what it finds on still scenery (a pillar, a door, a tripod) is dropped, and so is a person "
           "who stands still for more than a second",
    "yolov3": "YOLOv3 (Darknet weights you supply): 80 object classes, people in any pose; fast on a GPU, "
              "slow on a CPU",
}
