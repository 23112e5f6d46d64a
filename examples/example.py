def foo(n):
    result = 0
    for _ in range(n):
        result += 1
    return result

def bar(n):
    foo(n)

def baz(n):
    bar(n)

if __name__ == "__main__":
    import sys
    baz(int(sys.argv[1]) if len(sys.argv) > 1 else 15_000_000)
