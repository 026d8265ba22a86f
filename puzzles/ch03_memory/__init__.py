"""Chapter 3: Memory efficiency."""

NUMBER = 3
TITLE = 'Memory efficiency'
