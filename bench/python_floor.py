#!/usr/bin/env python3
# The floor of any Python hook: start the interpreter, parse the hook's stdin JSON, read one
# small file. Nothing else. Used by hooks.sh as the comparison point.
import json
import os
import sys

payload = json.load(sys.stdin)
try:
    with open(os.path.join(os.environ["HOME"], ".claude.json"), "rb") as handle:
        handle.read()
except OSError:
    pass
