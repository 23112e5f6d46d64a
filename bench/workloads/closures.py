"""Closures and decorators: wrapped calls, nested functions, functools."""
import functools
import sys


def counted(fn):
    calls = [0]

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        calls[0] += 1
        return fn(*args, **kwargs)
    wrapper.calls = calls
    return wrapper


def memo_free(fn):
    def inner(x):
        return fn(x)
    return inner


@counted
@memo_free
def work(x):
    return x * 2 + 1


def make_adders(n):
    return [(lambda k: (lambda v: v + k))(i) for i in range(n)]


def main(scale=1.0):
    adders = make_adders(50)
    total = 0
    for i in range(int(500_000 * scale)):
        total += work(i)
        for add in adders[:10]:
            total = add(total) & 0xFFFF
    return total


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
