"""Chapter 5: Atomics and irregular work."""

NUMBER = 5
TITLE = 'Atomics and irregular work'
