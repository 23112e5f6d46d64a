"""Two threads handing a token back and forth through queue.Queue, 15,000
round trips per unit of scale: almost nothing but switches (each get()
blocks on a lock, each put() wakes the other thread), the worst case for a
profiler that follows the scheduler."""
import queue
import threading


def main(scale):
    n = int(15000 * scale)
    a, b = queue.Queue(), queue.Queue()

    def echo():
        for _ in range(n):
            b.put(a.get())

    t = threading.Thread(target=echo)
    t.start()
    for i in range(n):
        a.put(i)
        b.get()
    t.join()
