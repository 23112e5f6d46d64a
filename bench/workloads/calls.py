"""Call-heavy recursion: almost nothing but Python-to-Python calls."""
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main(scale=1.0):
    return sum(fib(22) for _ in range(int(100 * scale)))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
