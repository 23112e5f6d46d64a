"""A newcomer's first hour, repeated: a fresh clone in an empty directory,
the README's demo command run word for word, the README's quick start on a
small program of one's own (zlib in a thread, the kind of program whose
stacks perf 6.1 used to cut short), the profiles opened in headless Chromium,
and nothing left behind.

The clone runs in a private mount namespace whose /tmp is an empty directory
of this test (and /dev/shm an empty tmpfs), with HOME an empty directory too:
whatever the demo, perf and the engine leave there is this test's to see,
and no other process's files are looked at or touched. `make test` is not
run from here (it would run this suite again); test_docs checks that the
README's test command is what CI runs."""
import os
import re
import shutil
import subprocess

from support import ROOT, TempDirTest, needs_perf, run

APP = '''import json, threading, zlib

class Parser:
    def roundtrip(self, doc):
        return json.loads(json.dumps(doc))

def squeeze(blob, rounds):
    for _ in range(rounds):
        zlib.compress(blob, 9)

def main():
    doc = {"items": [{"id": i, "tags": list(range(10))} for i in range(2000)]}
    t = threading.Thread(target=squeeze, args=(json.dumps(doc).encode() * 4, 12))
    t.start()
    for _ in range(8):
        Parser().roundtrip(doc)
    t.join()

main()
'''


def readme_commands():
    """The two commands of the README's "The two commands" block."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    block = re.search(r"## The two commands\n.*?```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def readme_quick_start():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    block = re.search(r"## Quick start[^\n]*\n.*?```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


class NewUserTest(TempDirTest):

    @needs_perf
    def test_fresh_clone_demo_and_own_program_leave_nothing_behind(self):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("needs root and unshare for a private /tmp")
        demo, test = readme_commands()
        self.assertEqual((demo, test), ("make demo", "make test"))
        quick = readme_quick_start()
        record = quick[0]
        self.assertTrue(record.startswith("build/perfpy record -- python3 app.py"), record)
        html = next(q for q in quick if " -f html " in q)

        private_tmp = os.path.join(self.tmp, "tmp")
        home = os.path.join(self.tmp, "home")
        os.mkdir(private_tmp)
        os.chmod(private_tmp, 0o1777)   # as /tmp is
        os.mkdir(home)
        pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
        script = r'''
set -e
# clone first: the source tree may itself live in /tmp
mkdir "$1/newuser" && git clone -q "$2" "$1/newuser/perfpy"
mount --bind "$1" /tmp
mount -t tmpfs -o size=2g,mode=1777 none /dev/shm
cd /tmp/newuser/perfpy
echo "== $3"
$3
mkdir /tmp/newuser/mine && printf '%s' "$APP_SOURCE" > /tmp/newuser/mine/app.py
cd /tmp/newuser/mine
echo "== $4"
../perfpy/$4
echo "== $5"
../perfpy/$5
echo "== left in /tmp:"; ls -A /tmp | grep -vx newuser || true
echo "== left in /dev/shm:"; ls -A /dev/shm || true
echo "== end"
'''
        p = run(["unshare", "--mount", "--propagation", "private", "bash", "-c", script, "sh",
                 private_tmp, ROOT, demo, record, html],
                env={"HOME": home, "PYENV_ROOT": pyenv if os.path.isdir(pyenv) else None,
                     "MAKEFLAGS": None, "MAKELEVEL": None, "PERFPY_LIBDIR": None,
                     "PERFPY": None, "TMPDIR": None, "APP_SOURCE": APP,
                     # the user's own perf set-up: run.py's private build-id
                     # cache would hide a write into ~/.debug
                     "PERF_CONFIG": None},
                stdin=subprocess.DEVNULL, timeout=900)
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 0, out[-6000:])

        # the demo: its profile exists and says so, and opens in a browser
        clone = os.path.join(private_tmp, "newuser", "perfpy")
        profile = os.path.join(clone, "build", "demo", "example.html")
        self.assertIn("the profile: build/demo/example.html", p.stdout)
        self.assertTrue(os.path.getsize(profile) > 0)
        self.open_in_chromium(profile, "foo")

        # one's own program, as the quick start says
        mine = os.path.join(private_tmp, "newuser", "mine")
        svgs = [n for n in os.listdir(mine) if re.match(r"app-\d{8}-\d{6}\.svg$", n)]
        self.assertEqual(len(svgs), 1, os.listdir(mine))
        with open(os.path.join(mine, svgs[0])) as f:
            svg = f.read()
        # the flame graph's frame table (each box's label is made from it)
        self.assertIn('["Parser.roundtrip",', svg)
        self.assertIn('["squeeze",', svg)
        self.open_in_chromium(os.path.join(mine, "app.html"), "squeeze")
        for m in re.finditer(r"([\d.]+)% of stacks truncated", p.stderr):
            self.assertLess(float(m.group(1)), 10.0, "stacks cut short:\n" + p.stderr[-3000:])

        # nothing left behind: /tmp, /dev/shm, ~/.debug
        left = p.stdout.split("== left in /tmp:\n", 1)[1]
        tmp_left, shm_left = left.split("== left in /dev/shm:\n")
        shm_left = shm_left.split("== end")[0]
        self.assertEqual(tmp_left.split(), [], "left in /tmp")
        self.assertEqual(shm_left.split(), [], "left in /dev/shm")
        self.assertFalse(os.path.exists(os.path.join(home, ".debug")),
                         "perf wrote into ~/.debug: %s" % os.listdir(home))

    def open_in_chromium(self, path, expect):
        """Opens an HTML profile in headless Chromium: no error, `expect`
        visible, zoom and search work (tests/js/check-html.js)."""
        js = os.path.join(ROOT, "tests", "js")
        if not os.path.isdir(os.path.join(js, "node_modules", "playwright-core")):
            if os.environ.get("CI"):
                self.fail("tests/js/node_modules is missing (scripts/deps.sh runs npm ci)")
            self.skipTest("tests/js/node_modules is missing")
        p = run(["node", os.path.join(js, "check-html.js"), path, "--expect", expect],
                timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
