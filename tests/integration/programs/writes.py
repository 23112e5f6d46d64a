"""System calls in two functions: chatter() makes 60,000 one-byte writes,
quiet() 600, each an os.write of its own (no buffering) to /dev/null.
With "wait": as faults.py (a line on standard input starts it, another
ends it)."""
import os
import sys


def chatter(fd):
    for _ in range(60000):
        os.write(fd, b"x")


def quiet(fd):
    for _ in range(600):
        os.write(fd, b"x")


def main():
    wait = sys.argv[1:] == ["wait"]
    fd = os.open(os.devnull, os.O_WRONLY)
    if wait:
        print("ready", flush=True)
        sys.stdin.readline()
    chatter(fd)
    quiet(fd)
    os.close(fd)
    if wait:
        print("done", flush=True)
        sys.stdin.readline()


main()
