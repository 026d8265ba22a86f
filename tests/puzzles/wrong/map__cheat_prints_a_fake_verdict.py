# WRONG: map expect=compile:ended the process
# A cheat: print the JSON verdict of a perfect check and leave with exit status 0 before the checker can say
# anything. The file's output is only the file's output, and leaving early is a failure.
import json
import os
import sys

print(json.dumps({"schema": 1, "puzzle": "map", "passed": True, "stars": 2, "max_stars": 2, "failures": []}))
sys.stdout.flush()
os._exit(0)
