"""Chapter 2: Shared memory."""

NUMBER = 2
TITLE = 'Shared memory'
