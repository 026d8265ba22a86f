"""Chapter 4: Warps."""

NUMBER = 4
TITLE = 'Warps'
