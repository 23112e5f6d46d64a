"""A busy server that checks its own answers, in 52 threads: 24 client
threads send requests on a local socket (n -> n * n and a digest of n) and
check every answer, 24 server threads (one per connection) answer them, an
acceptor, 2 threads crunch numbers and check their sums, and the main one. Every 0.2 s the main thread writes to the file argv[1]:
requests answered, answers wrong, crunches done, crunches wrong, threads
alive. It runs until killed."""
import hashlib
import os
import socket
import socketserver
import sys
import threading
import time

answered = wrong = crunched = bad_sums = 0
lock = threading.Lock()


def answer(n):
    return "%d %s" % (n * n, hashlib.sha256(str(n).encode()).hexdigest()[:16])


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            self.wfile.write((answer(int(line)) + "\n").encode())


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def client(port, seed):
    global answered, wrong
    with socket.create_connection(("127.0.0.1", port)) as s:
        f = s.makefile("rw")
        n = seed
        while True:
            f.write("%d\n" % n)
            f.flush()
            got = f.readline().strip()
            with lock:
                answered += 1
                wrong += got != answer(n)
            n += 7


def crunch():
    global crunched, bad_sums
    while True:
        total = sum(i * i for i in range(20000))
        with lock:
            crunched += 1
            bad_sums += total != 2666466670000


def main(status):
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, name="acceptor", daemon=True).start()
    port = server.server_address[1]
    threads = [threading.Thread(target=client, args=(port, i), name="client-%d" % i, daemon=True)
               for i in range(24)]
    threads += [threading.Thread(target=crunch, name="crunch-%d" % i, daemon=True)
                for i in range(2)]
    for t in threads:
        t.start()
    while True:
        time.sleep(0.2)
        with lock:
            line = "%d %d %d %d %d\n" % (answered, wrong, crunched, bad_sums,
                                         threading.active_count())
        with open(status + ".new", "w") as f:
            f.write(line)
        os.rename(status + ".new", status)


main(sys.argv[1])
