# WRONG: map expect=compile:imported from the reference solution
# A cheat: use the shipped reference kernel. It is refused (a kernel must be written in the file), and the
# check records that the player has seen the solution.
from solutions.map import map_kernel  # noqa: F401
