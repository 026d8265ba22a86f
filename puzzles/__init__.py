"""The puzzle game: puzzle data, the headless checker, the player's workspace and progress, the CLI.

``puzzles`` uses ``gpusim`` to run a player's kernels and never imports the TUI (``textual``).
"""
