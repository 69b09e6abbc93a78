"""Demos → Tracking: the page, its controls, its figures and the job that runs the tracker."""
