"""Chapter 7: ML kernels."""

NUMBER = 7
TITLE = 'ML kernels'
