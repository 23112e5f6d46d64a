"""Page faults in two functions: grow() touches 160 MB, nibble() 16 MB:
bytearray(n) is memory fresh from the kernel (an mmap, pages mapped on
first touch) that CPython zero-fills at once, so each 4 KiB page is one
fault at the executing line that makes it. With "wait": prints "ready" and starts when its
standard input has a line (an attached recorder is in place), then exits
when it has a second (after the recorder has seen the program's end)."""
import sys

MB = 1 << 20


def grow():
    b = bytearray(160 * MB)
    return b


def nibble():
    b = bytearray(16 * MB)
    return b


def main():
    wait = sys.argv[1:] == ["wait"]
    if wait:
        print("ready", flush=True)
        sys.stdin.readline()
    kept = [grow(), nibble()]
    if wait:
        print("done", flush=True)
        sys.stdin.readline()
    return len(kept)


main()
