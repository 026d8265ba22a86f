"""``python3 -m puzzles.graduate ...``: graduate mode without installing (the same as ``gpu-puzzles graduate``)."""

import argparse
import sys

from .cli import PROG, add_arguments, run_command

parser = argparse.ArgumentParser(prog=PROG, description="Run puzzle solutions on a real NVIDIA GPU.")
add_arguments(parser)
sys.exit(run_command(parser.parse_args()))
