"""Observers: what the engine reports while a kernel runs (races, metrics, counts, trace), read-only."""
