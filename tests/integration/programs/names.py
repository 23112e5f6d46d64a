"""Runs every code object in this file once, so the perf map names them all.

The expected names are what CPython 3.11 stores in co_qualname for this
source (tests compute them with qualnames_of.py); perfpy must write the same
on every version, including 3.8-3.10 where code objects have no qualname.
"""
import asyncio
import functools


def top():
    return 1


class Shape:
    def area(self):
        def inner():
            return 2
        return inner()

    @staticmethod
    def static():
        return 3

    @classmethod
    def klass(cls):
        return 4

    def __private(self):
        return 5

    def call_private(self):
        return self.__private()

    class Nested:
        def method(self):
            return [x for x in range(2)]


def outer():
    class Local:
        def m(self):
            return (lambda: 6)()

    def gen():
        yield from (i for i in range(2))

    global declared_global

    def declared_global():
        return 7

    return Local().m() + sum(gen()) + declared_global()


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        return fn(*a, **kw)
    return wrapper


@deco
def decorated():
    return {k: v for k, v in [(1, 2)]}, {s for s in "ab"}


async def coro():
    async def nested_coro():
        return 8
    return await nested_coro()


lam = lambda: 9  # noqa: E731


def main():
    top()
    s = Shape()
    s.area()
    Shape.static()
    Shape.klass()
    s.call_private()
    Shape.Nested().method()
    outer()
    decorated()
    asyncio.run(coro())
    lam()
    print("names done")


if __name__ == "__main__":
    main()
