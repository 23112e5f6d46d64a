"""A threaded web server under load, the shape of a user's Flask + sqlite
service: http.server's ThreadingHTTPServer (one short-lived thread per
request, "Thread-N (process_request_thread)"), each request a sqlite query
over a table of 2,000 rows, a little computing and a rendered page, and 8
client threads of a ThreadPoolExecutor sending the requests (900 at scale
1) over keep-alive-less connections. What `--idle --threads` profiles of
such a server hold: hundreds of thread roots, most of their time waiting."""
import concurrent.futures
import http.client
import http.server
import os
import sqlite3
import tempfile
import threading

ROWS = 2000
DB = None


def setup(path):
    db = sqlite3.connect(path)
    db.execute("create table item (id integer primary key, name text, price real)")
    db.executemany("insert into item values (?, ?, ?)",
                   ((i, "item-%d" % i, (i * 37) % 1000 / 10.0) for i in range(ROWS)))
    db.commit()
    db.close()


def query(lo):
    db = sqlite3.connect(DB)
    try:
        return db.execute("select id, name, price from item where id >= ? order by price "
                          "limit 50", (lo,)).fetchall()
    finally:
        db.close()


def render(rows):
    total = sum(r[2] for r in rows)
    body = "".join("<tr><td>%d</td><td>%s</td><td>%.2f</td></tr>" % r for r in rows)
    return ("<html><body><table>%s</table><p>%.2f</p></body></html>" % (body, total)).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        lo = int(self.path.rsplit("/", 1)[-1]) % ROWS
        page = render(query(lo))
        self.send_response(200)
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args):
        pass


def client(port, first, n):
    for i in range(first, first + n):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("GET", "/item/%d" % (i * 7))
        c.getresponse().read()
        c.close()


def main(scale):
    global DB
    requests = max(8, int(900 * scale))
    with tempfile.TemporaryDirectory(prefix="perfpy-server-") as d:
        DB = os.path.join(d, "shop.db")
        setup(DB)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        t = threading.Thread(target=server.serve_forever, name="server")
        t.start()
        try:
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                per = requests // 8
                for f in [pool.submit(client, server.server_address[1], k * per, per)
                          for k in range(8)]:
                    f.result()
        finally:
            server.shutdown()
            t.join()
            server.server_close()


if __name__ == "__main__":
    import sys
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
