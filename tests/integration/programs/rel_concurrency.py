"""Concurrency scenarios with perfpy's engine on (PERFPY=perf|jit).

    python rel_concurrency.py SCENARIO

threads_new_functions  8 threads create and call 1,000 new functions each,
                       all at once (t<k>_<i> in /rel/threads/t<k>.py)
toggle_while_running   4 threads run Python code (and make new functions)
                       while two others activate/deactivate 3,000 times
fork_from_thread       a thread forks 4 children while 4 others create
                       functions; each child makes child<j>_<i> and exits
daemon_at_exit         daemon threads still creating functions and toggling
                       when the main thread ends the program
asyncio_tasks          3,000 tasks of 300 new coroutine functions: awaits,
                       exceptions, cancellations, async generators
generators             yield-from chains 100 deep, send/throw/close,
                       exceptions through 100 frames, toggling between
                       resumptions, generators finished after deactivation
trace_profile          sys.settrace / sys.setprofile / threading.settrace
                       see exactly the calls they see without perfpy

Prints "pid N", child pids as "child N", and "ok SCENARIO ..." at the end.
REL_SCALE multiplies the sizes.
"""
import asyncio
import gc
import os
import sys
import threading
import time
import warnings

import perfpy
from rel_util import backend, expect, functions, in_child, say, scale, still_active

warnings.filterwarnings("ignore", category=DeprecationWarning)   # fork + threads
N = scale()


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def threads_new_functions():
    per = 1000 * N
    barrier = threading.Barrier(8)
    sums, errors = [0] * 8, []

    def work(k):
        try:
            barrier.wait()
            fns = functions("t%d" % k, per, "/rel/threads/t%d.py" % k)
            for _ in range(3):
                sums[k] += sum(f() for f in fns)
        except BaseException as e:   # reported below
            errors.append(repr(e))

    before = perfpy._stats()["trampolines"]
    ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    expect(not errors, errors)
    expect(sums == [3 * per * (per - 1) // 2] * 8, sums)
    made = perfpy._stats()["trampolines"] - before
    expect(made >= 8 * per, "only %d trampolines for %d functions" % (made, 8 * per))
    still_active()
    return "functions=%d trampolines=%d" % (8 * per, made)


def toggle_while_running():
    stop = threading.Event()
    errors, rounds = [], [0] * 4
    toggles = 3000 * N

    def worker(k):
        try:
            i = 0
            while not stop.is_set():
                expect(fib(12) == 144, "fib")
                if i % 10 == 0:
                    f = functions("w%d_%d" % (k, i), 1, "/rel/toggle/w%d.py" % k)[0]
                    expect(f() == 0, "new function")
                i += 1
            rounds[k] = i
        except BaseException as e:
            errors.append(repr(e))

    def toggler(count):
        try:
            for _ in range(count):
                perfpy.deactivate_stack_trampoline()
                perfpy.activate_stack_trampoline(backend())
        except BaseException as e:
            errors.append(repr(e))

    s0 = perfpy._stats()
    ws = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for w in ws:
        w.start()
    other = threading.Thread(target=toggler, args=(toggles // 2,))
    other.start()
    for _ in range(toggles // 2):
        perfpy.deactivate_stack_trampoline()
        expect(fib(8) == 21, "fib while inactive")
        perfpy.activate_stack_trampoline(backend())
        expect(fib(8) == 21, "fib while active")
    other.join()
    stop.set()
    for w in ws:
        w.join()
    expect(not errors, errors)
    perfpy.activate_stack_trampoline(backend())
    s1 = perfpy._stats()
    expect(s1["extra_index"] == s0["extra_index"], (s0, s1))
    # at most one trampoline per code object, whatever the toggling: each
    # new function is two (its own and the <module> that defines it)
    new_code = 2 * sum(r // 10 + 1 for r in rounds)
    expect(s1["trampolines"] - s0["trampolines"] <= new_code + 50, (s0, s1, rounds))
    still_active()
    return "toggles=%d worker_rounds=%d" % (toggles, sum(rounds))


def fork_from_thread():
    stop = threading.Event()
    errors, children = [], []

    def maker(k):
        try:
            i = 0
            while not stop.is_set():
                fns = functions("m%d_%d" % (k, i), 20, "/rel/fork/m%d.py" % k)
                expect(sum(f() for f in fns) == 190, "sum")
                i += 1
        except BaseException as e:
            errors.append(repr(e))

    def child_work(j):
        fns = functions("child%d" % j, 50, "/rel/fork/child.py")
        expect(sum(f() for f in fns) == 1225, "child sum")
        still_active()

    def forker():
        try:
            for j in range(4):
                time.sleep(0.02)
                children.append(in_child(lambda: child_work(j)))
        except BaseException as e:
            errors.append(repr(e))

    ms = [threading.Thread(target=maker, args=(k,)) for k in range(4)]
    for m in ms:
        m.start()
    f = threading.Thread(target=forker)
    f.start()
    f.join()
    for pid in children:
        _, status = os.waitpid(pid, 0)
        expect(status == 0, "child %d: status %d" % (pid, status))
    stop.set()
    for m in ms:
        m.join()
    expect(not errors, errors)
    expect(len(children) == 4, children)
    fns = functions("parent", 10, "/rel/fork/parent.py")
    expect(sum(g() for g in fns) == 45, "parent sum")
    still_active()
    return "children=%d" % len(children)


def daemon_at_exit():
    def busy(k):
        i = 0
        while True:
            for f in functions("d%d_%d" % (k, i), 20, "/rel/daemon/d%d.py" % k):
                f()
            fib(10)
            i += 1

    def toggling():
        while True:
            perfpy.deactivate_stack_trampoline()
            fib(6)
            perfpy.activate_stack_trampoline(backend())

    for k in range(4):
        threading.Thread(target=busy, args=(k,), daemon=True).start()
    threading.Thread(target=toggling, daemon=True).start()
    time.sleep(0.3)
    return "5 daemon threads still making functions and toggling when the program ends: exit 0"


def asyncio_tasks():
    count = 3000 * N
    kinds = 300
    ns = {"asyncio": asyncio}
    src = "".join(
        "async def co_%d(i):\n"
        "    for _ in range(3):\n"
        "        await asyncio.sleep(0)\n"
        "    if i %% 7 == 0:\n"
        "        raise ValueError(i)\n"
        "    return i\n" % k for k in range(kinds))
    exec(compile(src, "/rel/asyncio/coros.py", "exec"), ns)
    agen_src = ("async def ticks(n):\n"
                "    try:\n"
                "        for i in range(n):\n"
                "            yield i\n"
                "            await asyncio.sleep(0)\n"
                "    except KeyError:\n"
                "        yield -1\n")
    exec(compile(agen_src, "/rel/asyncio/agen.py", "exec"), ns)

    async def main():
        tasks = [asyncio.ensure_future(ns["co_%d" % (i % kinds)](i)) for i in range(count)]
        for i, t in enumerate(tasks):
            if i % 11 == 5:
                t.cancel()
        done = await asyncio.gather(*tasks, return_exceptions=True)
        errors = sum(isinstance(d, ValueError) for d in done)
        cancelled = sum(isinstance(d, asyncio.CancelledError) for d in done)
        ok = sum(isinstance(d, int) for d in done)
        got = []
        agen = ns["ticks"](100)
        async for v in agen:
            got.append(v)
            if v == 50:
                got.append(await agen.athrow(KeyError()))
                break
        await agen.aclose()
        return ok, errors, cancelled, got

    ok, errors, cancelled, got = asyncio.run(main())
    want_cancel = sum(1 for i in range(count) if i % 11 == 5)
    want_err = sum(1 for i in range(count) if i % 7 == 0 and i % 11 != 5)
    expect(cancelled == want_cancel, (cancelled, want_cancel))
    expect(errors == want_err, (errors, want_err))
    expect(ok == count - want_cancel - want_err, ok)
    expect(got == list(range(51)) + [-1], got[-5:])
    still_active()
    return ("%d tasks of 300 new coroutine functions: %d returned, %d raised, %d cancelled, "
            "as without perfpy; async generator athrow/aclose right" % (count, ok, errors,
                                                                        cancelled))


def generators():
    closed = []

    def leaf():
        try:
            x = yield "leaf"
            while True:
                x = yield x * 2
        except KeyError:
            yield "caught at leaf"
        finally:
            closed.append("leaf")

    def chain(n):
        if n == 0:
            r = yield from leaf()
        else:
            r = yield from chain(n - 1)
        return r

    g = chain(100)
    expect(next(g) == "leaf", "first")
    expect(g.send(21) == 42, "send")
    expect(g.throw(KeyError("k")) == "caught at leaf", "throw")
    g.close()
    expect(closed == ["leaf"], closed)

    # toggle between resumptions: started active, resumed inactive and back
    def counter(n):
        for i in range(n):
            yield i

    gens = [counter(10) for _ in range(50)]
    firsts = [next(x) for x in gens]
    perfpy.deactivate_stack_trampoline()
    seconds = [next(x) for x in gens]
    perfpy.activate_stack_trampoline(backend())
    rests = [list(x) for x in gens]
    expect(firsts == [0] * 50 and seconds == [1] * 50, "resume")
    expect(all(r == list(range(2, 10)) for r in rests), "rest")

    # exceptions through 100 frames, with the traceback intact
    def down(n):
        if n == 0:
            raise ValueError("bottom")
        return down(n - 1)

    for _ in range(20 * N):
        try:
            down(100)
        except ValueError as e:
            tb, depth = e.__traceback__, 0
            while tb:
                depth += tb.tb_frame.f_code.co_name == "down"
                tb = tb.tb_next
            expect(depth == 101, depth)
        else:
            raise AssertionError("exception lost")

    def reraise(n):
        try:
            return down(n)
        except ValueError as e:
            raise KeyError("again") from e
        finally:
            closed.append(n)

    try:
        reraise(50)
    except KeyError as e:
        expect(isinstance(e.__cause__, ValueError), "cause")
    expect(closed[-1] == 50, closed)

    # a generator abandoned mid-way is finalized by the GC, perfpy active
    def held():
        try:
            yield 1
            yield 2
        finally:
            closed.append("held")

    h = held()
    next(h)
    del h
    gc.collect()
    expect(closed[-1] == "held", closed)
    expect(sum(x * x for x in range(100)) == 328350, "genexpr")
    still_active()
    return ("yield-from chain 100 deep: send, throw, close right; exceptions through 100 "
            "frames with whole tracebacks; generators resumed across toggles and finalized")


def trace_profile():
    calls = {}

    def tracer(frame, event, arg):
        if event == "call":
            name = frame.f_code.co_name
            calls[name] = calls.get(name, 0) + 1
        return None

    prof = {}

    def profiler(frame, event, arg):
        if event in ("call", "return"):
            key = (frame.f_code.co_name, event)
            prof[key] = prof.get(key, 0) + 1

    fns = functions("traced", 50, "/rel/trace/traced.py")
    sys.settrace(tracer)
    for f in fns:
        f()
        f()
    perfpy.deactivate_stack_trampoline()
    fns[0]()
    perfpy.activate_stack_trampoline(backend())
    fns[0]()
    sys.settrace(None)
    expect(all(calls.get("traced_%d" % i) == (4 if i == 0 else 2) for i in range(50)),
           calls)

    sys.setprofile(profiler)
    fib(10)
    sys.setprofile(None)
    expect(prof.get(("fib", "call")) == 177 and prof.get(("fib", "return")) == 177, prof)

    seen = []

    def thread_tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "in_thread":
            seen.append(threading.current_thread().name)
        return None

    def in_thread():
        return fib(5)

    threading.settrace(thread_tracer)
    ts = [threading.Thread(target=in_thread, name="T%d" % i) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    threading.settrace(None)
    expect(sorted(seen) == ["T0", "T1", "T2", "T3"], seen)
    still_active()
    return ("settrace, setprofile, threading.settrace saw exactly the calls made "
            "(%d traced, %d profiled)" % (sum(calls.values()), prof[("fib", "call")]))


if __name__ == "__main__":
    name = sys.argv[1]
    result = globals()[name]()
    say("ok %s %s" % (name, result))
