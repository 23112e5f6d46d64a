"""perfpy's build backend (PEP 517), kept in the tree: what pip, pipx,
`python -m build` and `make wheel` call to turn the source into a wheel or
an sdist. docs/packaging.md says why it is in-tree and what the wheel holds.

The Makefile stays the one recipe for compiling: this file runs `make`
with a build directory of its own, then lays the results out as
`make install PREFIX=<the environment>` would, in the places a wheel can
name (PEP 427):

  perfpy-V.data/scripts/perfpy              the command    -> <env>/bin/perfpy
  perfpy-V.data/data/lib/perfpy/            its module directory (one module
      sitecustomize.py, perfpy.cpython-3X*.so  per CPython found at build time,
      __pycache__ (an empty file, see below)   the startup hook of record/run)
  perfpy-V.data/data/share/man/man1/perfpy.1
  perfpy/__init__.py, perfpy/__main__.py    `import perfpy`, `python -m perfpy`
  perfpy/perfpy-sample                      sample mode's recorder, where the
                                            build tools are (clang, bpftool,
                                            libbpf-dev, libdw-dev); else
  perfpy-V.data/data/lib/perfpy/sample-missing  what they lacked
  perfpy-startup.pth                        the startup switches (-X perf, ...)

so the command finds its module directory as `make install` lays it out
(<bin>/../lib/perfpy) and pip uninstall removes every file: RECORD names
them all. The __pycache__ *file* keeps other interpreters (`perfpy record
-- python3.8 ...` from a 3.12 environment) from leaving a
sitecustomize.cpython-38.pyc behind that RECORD cannot name: Python
skips caching, silently, where __pycache__ is not a directory.

Which interpreters get a module: every CPython 3.8+ that scripts/find-pythons
finds (pyenv's, /usr/bin/python3.*; $PYTHONS narrows the set, as for make),
plus the interpreter running this build, whose module must be there.

The version is PERFPY_VERSION in include/perfpy/engine.h: the one place.

Also a command, for make wheel and make sdist:
  python3 scripts/perfpy_build.py wheel|sdist OUTDIR [--build-dir DIR]
"""
import base64
import csv
import hashlib
import io
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "perfpy"
SUMMARY = ("Python functions, C extensions and the kernel in one perf profile, "
           "on every CPython from 3.8")
# What an sdist holds: enough to run the Makefile (no tests, no benchmarks).
SDIST_PATHS = ["pyproject.toml", "Makefile", "README.md", "include", "mk", "src", "scripts",
               "docs/perfpy.1", "examples/example.py"]


def version():
    """PERFPY_VERSION from include/perfpy/engine.h."""
    with open(os.path.join(ROOT, "include", "perfpy", "engine.h")) as f:
        m = re.search(r'^#define PERFPY_VERSION "([^"]+)"', f.read(), re.M)
    if not m:
        raise SystemExit("perfpy: no PERFPY_VERSION in include/perfpy/engine.h")
    return m.group(1)


def metadata():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\n"
            "Name: %s\n"
            "Version: %s\n"
            "Summary: %s\n"
            "Requires-Python: >=3.8\n"
            "Classifier: Operating System :: POSIX :: Linux\n"
            "Classifier: Programming Language :: C\n"
            "Classifier: Programming Language :: Python :: Implementation :: CPython\n"
            "Classifier: Topic :: Software Development :: Debuggers\n"
            "Description-Content-Type: text/markdown\n"
            "\n%s" % (NAME, version(), SUMMARY, readme))


# ---- building ---------------------------------------------------------------

def interpreters():
    """Paths of the interpreters to build the module for: what
    scripts/find-pythons finds, and this one."""
    p = subprocess.run([os.path.join(ROOT, "scripts", "find-pythons")],
                       stdout=subprocess.PIPE, universal_newlines=True, check=True)
    found = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    return found + [sys.executable]


def probe(names):
    """What of NAMES this machine lacks, said for a person (scripts/probe
    --explain: the one place each build question is answered); "" when
    nothing is."""
    p = subprocess.run([os.path.join(ROOT, "scripts", "probe"), "--explain"] + names,
                       stdout=subprocess.PIPE, universal_newlines=True)
    return p.stdout.strip() if p.returncode != 0 else ""


def sample_mode_wanted():
    """Sample mode is built on x86_64 Linux unless PERFPY_NO_SAMPLE=1."""
    return (sys.platform.startswith("linux") and platform.machine() == "x86_64"
            and os.environ.get("PERFPY_NO_SAMPLE", "0") in ("", "0"))


def check_machine():
    """Stops before anything is built, with one message naming what to
    install, when the build would fail or would lack sample mode."""
    if not shutil.which("make") or not shutil.which("bash"):
        raise SystemExit("perfpy: building perfpy needs make and bash\n"
                         "  Debian/Ubuntu: apt-get install -y make\n"
                         "  Fedora:        dnf install -y make")
    lacks = probe(["cc", "zlib", "python:" + sys.executable])
    if lacks:
        raise SystemExit("perfpy: cannot be built here (nothing was installed)\n" + lacks)
    if not sample_mode_wanted():
        if platform.machine() != "x86_64":
            sys.stderr.write("perfpy: sample mode is for x86_64 (this machine is %s): "
                             "building without it\n" % platform.machine())
        return
    lacks = probe(["libelf", "libdw", "libbpf"])
    if lacks:
        raise SystemExit(
            "perfpy: sample mode (the default as root: Python, C and kernel frames in one "
            "stack, no hook in the program) needs libraries this machine lacks; nothing "
            "was installed.\n%s\nInstall them and run pip install again; or install "
            "without sample mode: PERFPY_NO_SAMPLE=1 pip install ." % lacks)


def make(build):
    """Runs make into BUILD; returns the module file of this interpreter."""
    check_machine()
    jobs = str(min(os.cpu_count() or 1, 4))
    cmd = ["make", "-C", ROOT, "-j" + jobs, "BUILD=" + build,
           "PYTHONS=" + " ".join(interpreters()), "all"]
    # progress on stderr (pip shows it with -v, and on failure)
    subprocess.run(cmd, stdout=sys.stderr, check=True)
    own = os.path.join(build, "lib", "perfpy" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not os.path.isfile(own):
        raise SystemExit("perfpy: no module was built for this Python %d.%d (%s)"
                         % (sys.version_info[:2] + (sys.executable,)))
    return own


def wheel_files(build):
    """(path in the wheel, file on disk or bytes, executable) of every file."""
    data = "%s-%s.data" % (NAME, version())
    lib = os.path.join(build, "lib")
    files = [
        ("perfpy/__init__.py", os.path.join(ROOT, "src", "python", "perfpy", "__init__.py"), False),
        ("perfpy/__main__.py", os.path.join(ROOT, "src", "python", "perfpy", "__main__.py"), False),
        ("perfpy-startup.pth", os.path.join(ROOT, "src", "python", "perfpy-startup.pth"), False),
        (data + "/scripts/perfpy", os.path.join(build, "perfpy"), True),
        (data + "/data/share/man/man1/perfpy.1", os.path.join(ROOT, "docs", "perfpy.1"), False),
        (data + "/data/lib/perfpy/sitecustomize.py", os.path.join(lib, "sitecustomize.py"), False),
        (data + "/data/lib/perfpy/__pycache__", b"", False),
    ]
    # sample mode's recorder, where the build made it: inside the package
    # (site-packages/perfpy/), the one place auditwheel can vendor an
    # executable's libraries for (perfpy.libs/ beside the package, RPATH
    # $ORIGIN/../perfpy.libs); perfpy finds it there (src/cli/sampler.c).
    # Else what its build lacked, for perfpy to say when asked for it.
    if os.path.isfile(os.path.join(build, "perfpy-sample")):
        files.append(("perfpy/perfpy-sample", os.path.join(build, "perfpy-sample"), True))
    missing = os.path.join(lib, "sample-missing")
    if os.path.isfile(missing) and os.path.getsize(missing):
        files.append((data + "/data/lib/perfpy/sample-missing", missing, False))
    # the modules of this build's interpreters (BUILD/pythons.txt), not
    # whatever an earlier build with another set left in BUILD/lib
    with open(os.path.join(build, "pythons.txt")) as f:
        suffixes = sorted({line.split()[2] for line in f if len(line.split()) >= 3})
    for suffix in suffixes:
        files.append((data + "/data/lib/perfpy/perfpy" + suffix,
                      os.path.join(lib, "perfpy" + suffix), True))
    return files


def platform_tag():
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def add(z, arc, body, executable):
    """One file into the zip, with its mode (pip keeps the executable bit)."""
    zi = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
    zi.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
    zi.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(zi, body)


def write_wheel(outdir, build):
    """Writes the wheel of BUILD into OUTDIR; returns its file name."""
    tag = "py3-none-" + platform_tag()
    info = "%s-%s.dist-info" % (NAME, version())
    name = "%s-%s-%s.whl" % (NAME, version(), tag)
    wheel = ("Wheel-Version: 1.0\nGenerator: perfpy_build %s\nRoot-Is-Purelib: false\n"
             "Tag: %s\n" % (version(), tag))
    entries = [(arc, src, x) for arc, src, x in wheel_files(build)]
    entries += [(info + "/METADATA", metadata().encode("utf-8"), False),
                (info + "/WHEEL", wheel.encode(), False)]
    record = io.StringIO()
    w = csv.writer(record, lineterminator="\n")
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name)
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as z:
        for arc, src, executable in entries:
            if isinstance(src, bytes):
                body = src
            else:
                with open(src, "rb") as f:
                    body = f.read()
            add(z, arc, body, executable)
            digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=")
            w.writerow([arc, "sha256=" + digest.decode(), len(body)])
        w.writerow([info + "/RECORD", "", ""])
        add(z, info + "/RECORD", record.getvalue().encode(), False)
    os.replace(path + ".part", path)
    return name


def write_sdist(outdir):
    base = "%s-%s" % (NAME, version())
    name = base + ".tar.gz"
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name)

    def clean(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        base_name = os.path.basename(ti.name)
        if base_name == "__pycache__" or base_name.endswith((".pyc", ".o")):
            return None
        return ti

    with tarfile.open(path + ".part", "w:gz", format=tarfile.PAX_FORMAT) as t:
        body = metadata().encode("utf-8")
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size, ti.mode = len(body), 0o644
        t.addfile(ti, io.BytesIO(body))
        for rel in SDIST_PATHS:
            t.add(os.path.join(ROOT, rel), base + "/" + rel, filter=clean)
    os.replace(path + ".part", path)
    return name


# ---- PEP 517 hooks ------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build = tempfile.mkdtemp(prefix="perfpy-wheel-build-")
    try:
        make(build)
        return write_wheel(wheel_directory, build)
    finally:
        shutil.rmtree(build, ignore_errors=True)


def build_sdist(sdist_directory, config_settings=None):
    return write_sdist(sdist_directory)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="scripts/perfpy_build.py")
    ap.add_argument("what", choices=["wheel", "sdist", "version"])
    ap.add_argument("outdir", nargs="?", default="dist")
    ap.add_argument("--build-dir", help="make's build directory (kept; default: a temporary one)")
    a = ap.parse_args(argv)
    if a.what == "version":
        print(version())
    elif a.what == "sdist":
        print(os.path.join(a.outdir, write_sdist(a.outdir)))
    elif a.build_dir:
        make(os.path.abspath(a.build_dir))
        print(os.path.join(a.outdir, write_wheel(a.outdir, os.path.abspath(a.build_dir))))
    else:
        print(os.path.join(a.outdir, build_wheel(a.outdir)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
