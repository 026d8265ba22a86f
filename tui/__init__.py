"""The terminal app: browse, edit, run and see the puzzles (``python -m tui`` or ``gpu-puzzles``).

Layers look down only: ``tui`` calls ``puzzles`` (check a file, workspace, progress) and reads gpusim's
``LaunchReport``; neither of those imports Textual.
"""
