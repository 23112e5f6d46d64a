"""A realistic mix: JSON, regular expressions, sorting, dataclasses."""
import dataclasses
import json
import re
import sys

WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")


@dataclasses.dataclass(order=True)
class Record:
    score: float
    name: str
    tags: tuple = ()

    def describe(self):
        return "%s:%.2f:%s" % (self.name, self.score, ",".join(self.tags))


def make_docs(n):
    return [json.dumps({"name": "item-%d" % i, "score": (i * 7919) % 1000 / 10.0,
                        "text": "alpha beta-gamma delta %d epsilon-zeta" % i,
                        "tags": ["t%d" % (i % 5), "x"]}) for i in range(n)]


def process(docs):
    records = []
    for d in docs:
        obj = json.loads(d)
        words = WORD.findall(obj["text"])
        records.append(Record(obj["score"], obj["name"], tuple(obj["tags"]) + tuple(words[:2])))
    records.sort()
    out = [r.describe() for r in records[:100]]
    return json.dumps(out)


def main(scale=1.0):
    docs = make_docs(2000)
    total = 0
    for _ in range(int(80 * scale)):
        total += len(process(docs))
    return total


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
