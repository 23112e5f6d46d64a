"""Prints co_qualname of every code object compiled from a file (needs 3.11+).

    python3.11 qualnames_of.py FILE
"""
import sys


def walk(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_qualname"):
            yield from walk(c)


with open(sys.argv[1]) as f:
    top = compile(f.read(), sys.argv[1], "exec")
for c in walk(top):
    print(c.co_qualname)
