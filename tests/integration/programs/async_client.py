"""The load for async_server.py: CONNS requests in flight on PORT for
SECONDS, each a connection of its own (a line out, the answer in, closed);
prints how many were answered. SECONDS 0: CONNS connections, a line sent
on each, kept open until killed (the server holds them: "held CONNS" once
they are all sent)."""
import socket
import sys
import threading
import time


def one(port):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"x\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(256)
            if not chunk:
                break
            data += chunk
    return data.endswith(b"\n")


def main():
    port, conns, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    if seconds == 0:
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(conns)]
        for s in held:
            s.sendall(b"x\n")
        print("held %d" % len(held), flush=True)
        time.sleep(3600)
        return
    end = time.monotonic() + seconds
    done = [0]
    lock = threading.Lock()

    def loop():
        while time.monotonic() < end:
            if one(port):
                with lock:
                    done[0] += 1

    threads = [threading.Thread(target=loop) for _ in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("answered %d" % done[0], flush=True)


main()
