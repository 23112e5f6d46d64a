"""Four threads busy for SECONDS (default 600), each hashing a 1 MiB buffer
over and over: sha256 releases the GIL for a buffer that large, so the
threads run at once on as many CPUs as there are (the profile's memory
per sample is measured on it: bench/profile_memory)."""
import hashlib
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
DATA = b"x" * (1 << 20)


def hashing(until):
    n = 0
    while time.monotonic() < until:
        n += len(hashlib.sha256(DATA).digest())
    return n


until = time.monotonic() + SECONDS
threads = [threading.Thread(target=hashing, args=(until,), name="hasher-%d" % i) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
