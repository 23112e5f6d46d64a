"""asyncio's worst case for --wall --async: 200 tasks, each ROUNDS rounds
(default 400) of a 1 ms sleep and a little CPU, so that every sample of
the loop finds 199 tasks waiting to count and 4 to read. Prints its own
CPU time (user and system: the BPF programs run in its context)."""
import asyncio
import resource
import sys


async def one(rounds):
    for _ in range(rounds):
        await asyncio.sleep(0.001)
        sum(range(2000))


async def main(rounds):
    async with asyncio.TaskGroup() as tg:
        for i in range(200):
            tg.create_task(one(rounds), name="t-%d" % i)


asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 400))
ru = resource.getrusage(resource.RUSAGE_SELF)
print("cpu %.3f" % (ru.ru_utime + ru.ru_stime))
