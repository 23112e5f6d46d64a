"""Generator pipelines: every item crosses several generator frames."""
import sys


def numbers(n):
    for i in range(n):
        yield i


def evens(it):
    for x in it:
        if x % 2 == 0:
            yield x


def squares(it):
    for x in it:
        yield x * x


def chunks(it, size):
    buf = []
    for x in it:
        buf.append(x)
        if len(buf) == size:
            yield buf
            buf = []
    if buf:
        yield buf


def main(scale=1.0):
    total = 0
    for chunk in chunks(squares(evens(numbers(int(8_000_000 * scale)))), 64):
        total += sum(chunk)
    return total


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
