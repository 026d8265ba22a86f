"""Run time of the lanes back end: memory objects, access checks, barriers and warp operations."""
