"""Method-heavy object code: attribute access, properties, dunder methods."""
import sys


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def scale(self, k):
        return Vec(self.x * k, self.y * k)

    @property
    def norm2(self):
        return self.x * self.x + self.y * self.y


class Body:
    def __init__(self, i):
        self.pos = Vec(i, -i)
        self.vel = Vec(1, 2)

    def step(self, dt):
        self.pos = self.pos + self.vel.scale(dt)
        return self.pos.norm2


def main(scale=1.0):
    bodies = [Body(i) for i in range(100)]
    total = 0
    for _ in range(int(12000 * scale)):
        for b in bodies:
            total += b.step(1)
    return total


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
