"""An asyncio server as its authors write it: serve() accepts connections
(asyncio.start_server) and runs each request as a task of its TaskGroup,
named handler-N; handler awaits helper, which awaits a sleep, then does
CPU work in C (hashlib's sha256 of half a MiB: native frames, ~1 ms).

  async_server.py PORTFILE [SLEEP [HOLD]]

PORTFILE: where the port goes once it listens (written whole, then
renamed). SLEEP: the helper's sleep in seconds (default 0.005). HOLD 1: the
helper waits forever instead, so the task graph stands still (what dump
--async and `python -m asyncio pstree` are compared on). It prints
"cpu SECONDS" (its own CPU time) and the requests answered on SIGTERM.
"""
import asyncio
import hashlib
import os
import resource
import signal
import sys

BLOB = bytes(range(256)) * 2048
answered = 0


async def helper(data, sleep, hold):
    if hold:
        await asyncio.Event().wait()
    await asyncio.sleep(sleep)
    return hashlib.sha256(BLOB + data).hexdigest()


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


def main():
    signal.signal(signal.SIGTERM, on_term)
    sleep = float(sys.argv[2]) if len(sys.argv) > 2 else 0.005
    hold = len(sys.argv) > 3 and sys.argv[3] == "1"
    print("pid", os.getpid(), flush=True)
    asyncio.run(serve(sys.argv[1], sleep, hold))


if __name__ == "__main__":
    main()
