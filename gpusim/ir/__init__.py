"""The kernel IR that every back end reads."""
