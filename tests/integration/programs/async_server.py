"""An asyncio server as its authors write it: serve() accepts connections
(asyncio.start_server) and runs each request as a task of its TaskGroup,
named handler-N; handler awaits helper, which awaits a sleep, then does
CPU work in C (hashlib's sha256 of half a MiB: native frames, ~1 ms).

  async_server.py PORTFILE [SLEEP [HOLD]]

PORTFILE: where the port goes once it listens (written whole, then
renamed). SLEEP: the helper's sleep in seconds on average (default 0.005;
each one from 0.5 to 1.5 times it, at random, so that requests begun
together do not stay in step). HOLD 1: the
helper waits forever instead, so the task graph stands still (what dump
--async and `python -m asyncio pstree` are compared on). It prints
"cpu SECONDS" (its own CPU time) and the requests answered on SIGTERM.
"""
import asyncio
import hashlib
import os
import random
import resource
import signal
import sys
import time

BLOB = bytes(range(256)) * 2048
answered = 0
# requests in the sleep's await now, since when, the integral so far; the hash's seconds
split = {"in": 0, "since": time.perf_counter(), "area": 0.0, "hashing": 0.0}


def sleepers(step):
    now = time.perf_counter()
    split["area"] += split["in"] * (now - split["since"])
    split["since"] = now
    split["in"] += step


async def helper(data, sleep, hold):
    if hold:
        await asyncio.Event().wait()
    sleepers(1)
    try:
        await asyncio.sleep(sleep * random.uniform(0.5, 1.5))
    finally:
        sleepers(-1)
    t = time.perf_counter()
    digest = hashlib.sha256(BLOB + data).hexdigest()
    split["hashing"] += time.perf_counter() - t
    return digest


async def handler(reader, writer, sleep, hold):
    global answered
    line = await reader.readline()
    digest = await helper(line, sleep, hold)
    writer.write(digest.encode() + b"\n")
    await writer.drain()
    writer.close()
    answered += 1


async def serve(portfile, sleep, hold):
    queue = asyncio.Queue()
    server = await asyncio.start_server(lambda r, w: queue.put_nowait((r, w)),
                                        "127.0.0.1", 0, backlog=1024)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % server.sockets[0].getsockname()[1])
    os.replace(portfile + ".tmp", portfile)
    n = 0
    async with asyncio.TaskGroup() as tg:
        while True:
            reader, writer = await queue.get()
            n += 1
            tg.create_task(handler(reader, writer, sleep, hold), name="handler-%d" % n)


def on_term(signum, frame):
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print("cpu %.3f answered %d" % (ru.ru_utime + ru.ru_stime, answered), flush=True)
    os._exit(0)


def on_usr1(signum, frame):
    sleepers(0)
    print("split %.6f %.6f %.6f" % (split["since"], split["area"], split["hashing"]), flush=True)


def main():
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGUSR1, on_usr1)
    sleep = float(sys.argv[2]) if len(sys.argv) > 2 else 0.005
    hold = len(sys.argv) > 3 and sys.argv[3] == "1"
    print("pid", os.getpid(), flush=True)
    asyncio.run(serve(sys.argv[1], sleep, hold))


if __name__ == "__main__":
    main()
