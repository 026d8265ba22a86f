"""The typed kernel IR that every back end reads: ``nodes`` (the dataclasses), ``types``, ``dump``, the passes
(``fma``, ``uniformity``), ``walk`` (traversal) and ``values`` (scalar conversions shared with the run time)."""
