"""Chapter 1: Threads and blocks."""

NUMBER = 1
TITLE = 'Threads and blocks'
