"""Chapter 10: Many GPUs."""

NUMBER = 10
TITLE = "Many GPUs"

INTRODUCTION = """\
# Chapter 10 — Many GPUs

(introduction written with the chapter)
"""
