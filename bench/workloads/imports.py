"""Import-heavy: generates a package of 100 modules with 5,000 distinct
functions in a temporary directory, imports it and calls every function
(each call of a new function makes and registers a new trampoline)."""
import importlib
import os
import shutil
import sys
import tempfile

MODULES = 100
PER_MODULE = 50


def generate(root):
    pkg = os.path.join(root, "bench_generated")
    os.mkdir(pkg)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write("")
    for m in range(MODULES):
        lines = ["def f_%d_%d(x):\n    return x + %d\n" % (m, i, i) for i in range(PER_MODULE)]
        lines.append("FUNCS = [%s]\n" % ", ".join("f_%d_%d" % (m, i) for i in range(PER_MODULE)))
        with open(os.path.join(pkg, "mod_%d.py" % m), "w") as f:
            f.write("".join(lines))


def main(scale=1.0):
    root = tempfile.mkdtemp(prefix="perfpy-bench-imports-")
    try:
        generate(root)
        sys.path.insert(0, root)
        total = 0
        for m in range(MODULES):
            mod = importlib.import_module("bench_generated.mod_%d" % m)
            for fn in mod.FUNCS:
                for _ in range(int(200 * scale)):
                    total += fn(1)
        return total
    finally:
        sys.path.remove(root)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
