"""A server that waits: one thread blocked in accept() on a listening
socket, the main thread in time.sleep. Prints its pid and port once both
wait, then runs until killed (or for SECONDS, default 600).

    python sleepy_server.py [SECONDS]
"""
import os
import socket
import sys
import threading
import time


def serve(sock):
    while True:
        conn, _ = sock.accept()
        conn.close()


def nap(seconds):
    time.sleep(seconds)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 600.0
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    threading.Thread(target=serve, args=(sock,), daemon=True, name="acceptor").start()
    print(os.getpid(), sock.getsockname()[1], flush=True)
    nap(seconds)


if __name__ == "__main__":
    main()
