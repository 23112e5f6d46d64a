"""Where does my memory grow? A program that loads rows, indexes them and
keeps a cache: perfpy record -e page-faults -- python3 examples/memory.py
shows each line that first touches memory (where RSS grows), with the C
functions under it."""


def load_rows(n):
    return [{"id": i, "name": "row-%d" % i, "score": i * 0.5} for i in range(n)]


def build_index(rows):
    return {row["name"]: row for row in rows}


def render_cache(rows):
    return [("%(id)d,%(name)s,%(score)f" % row).encode() for row in rows[::10]]


if __name__ == "__main__":
    rows = load_rows(400_000)
    index = build_index(rows)
    cache = render_cache(rows)
    print(len(rows), len(index), len(cache))
