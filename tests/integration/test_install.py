"""`make install` and `make uninstall` staged under DESTDIR (a package's
build, and a safe place to look at every file written): the CLI, its man
page, its module directory and the module + startup hook of every
interpreter; the staged CLI works where it lies; uninstall removes every
file install wrote; a prefix the user cannot write is refused with a fix.

Nothing is installed into a real interpreter here: every path is under a
temporary DESTDIR (tests/integration/test_perfmap.py InstallTest covers a
real venv)."""
import os
import shutil
import subprocess

from support import (BUILD, EXAMPLES, PERFPY, ROOT, TempDirTest, interpreters, needs_perf,
                     run, tree_for_others)

PREFIX = "/opt/perfpy-test"


def make(*args, **kw):
    """make -s -C ROOT ARGS with the build under test kept as it is."""
    return run(["make", "-s", "-C", ROOT, "BUILD=" + BUILD,
                "PYTHONS=" + " ".join(i.path for i in interpreters())] + list(args),
               timeout=600, **kw)


def site_of(py):
    """(EXT_SUFFIX, platlib) of an interpreter."""
    out = run([py, "-c", "import sysconfig; print(sysconfig.get_config_var("
               "'EXT_SUFFIX'), sysconfig.get_paths()['platlib'])"], check=True).stdout
    suffix, site = out.split()
    return suffix, site


def files_under(top):
    found = []
    for d, _, names in os.walk(top):
        found += [os.path.relpath(os.path.join(d, n), top) for n in names]
    return sorted(found)


class StagedInstallTest(TempDirTest):

    def setUp(self):
        super().setUp()
        self.stage = os.path.join(self.tmp, "stage")
        self.root = self.stage + PREFIX
        self.real_sites = {py.path: site_of(py.path) for py in interpreters()}
        self.before = {site: os.path.exists(os.path.join(site, "perfpy-startup.pth"))
                       for _, site in self.real_sites.values()}

    def tearDown(self):
        # the real site-packages are exactly as they were
        for site, had in self.before.items():
            self.assertEqual(os.path.exists(os.path.join(site, "perfpy-startup.pth")), had,
                             "%s changed: install escaped DESTDIR" % site)
        super().tearDown()

    def install(self):
        p = make("install", "DESTDIR=" + self.stage, "PREFIX=" + PREFIX)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p

    def test_install_stages_cli_man_page_modules_and_hooks(self):
        p = self.install()
        self.assertIn("installed %s/bin/perfpy" % self.root, p.stdout)
        self.assertTrue(os.access(os.path.join(self.root, "bin", "perfpy"), os.X_OK))
        man = os.path.join(self.root, "share", "man", "man1", "perfpy.1")
        with open(man) as f, open(os.path.join(ROOT, "docs", "perfpy.1")) as g:
            self.assertEqual(f.read(), g.read())
        libdir = os.path.join(self.root, "lib", "perfpy")
        built = sorted(n for n in os.listdir(os.path.join(BUILD, "lib")) if n.endswith(".so"))
        self.assertTrue(built)
        self.assertEqual(sorted(os.listdir(libdir)), built + ["sitecustomize.py"])
        for py in interpreters():
            with self.subTest(py=py.label):
                suffix, site = self.real_sites[py.path]
                staged = self.stage + site
                self.assertTrue(os.path.exists(os.path.join(staged, "perfpy" + suffix)))
                with open(os.path.join(staged, "perfpy-startup.pth")) as f:
                    self.assertIn("__import__('perfpy')._startup()", f.read())
                self.assertIn("installed perfpy for Python %d.%d into %s"
                              % (py.version_info + (staged,)), p.stdout)

    def test_staged_cli_finds_its_modules_and_uninstall_removes_every_file(self):
        self.install()
        cli = os.path.join(self.root, "bin", "perfpy")
        libdir = os.path.join(self.root, "lib", "perfpy")
        py = interpreters()[-1]
        q = run([cli, "run", "--", py.path, "-c",
                 "import os, perfpy; print('pid', os.getpid()); print(perfpy.__file__); "
                 "print(perfpy.is_stack_trampoline_active())"],
                env={"PERFPY_LIBDIR": None})
        self.own(*[int(l.split()[1]) for l in q.stdout.splitlines() if l.startswith("pid ")])
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertIn(libdir, q.stdout)
        self.assertIn("True", q.stdout)
        q = run([cli, "doctor", "--", py.path], env={"PERFPY_LIBDIR": None})
        self.assertRegex(q.stdout, r"ok\s+perfpy module\s+%s/perfpy\." % libdir)
        # man finds the page by name in the staged tree
        if shutil.which("man"):
            q = run(["man", "-P", "cat", "-M", os.path.join(self.root, "share", "man"),
                     "perfpy"], env={"MANWIDTH": "80"})
            self.assertEqual(q.returncode, 0, q.stderr)
            self.assertIn("perfpy record", q.stdout)
        p = make("uninstall", "DESTDIR=" + self.stage, "PREFIX=" + PREFIX)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(files_under(self.stage), [], "uninstall leaves no file behind")

    @needs_perf
    def test_staged_cli_records(self):
        self.install()
        out = os.path.join(self.tmp, "example.txt")
        q = run([os.path.join(self.root, "bin", "perfpy"), "record", "-f", "collapsed", "-o",
                 out, "--", interpreters()[-1].path, os.path.join(EXAMPLES, "example.py"),
                 "3000000"], env={"PERFPY_LIBDIR": None})
        self.assertEqual(q.returncode, 0, q.stderr)
        with open(out) as f:
            self.assertIn("foo (", f.read())

    def test_one_interpreter_with_destdir(self):
        py = interpreters()[0]
        suffix, site = self.real_sites[py.path]
        p = make("install", "DESTDIR=" + self.stage, "PYTHON=" + py.path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(files_under(self.stage),
                         sorted(os.path.relpath(os.path.join(site, n), "/")
                                for n in ("perfpy" + suffix, "perfpy-startup.pth")),
                         "PYTHON=: that interpreter's module and hook, nothing else")
        p = make("uninstall", "DESTDIR=" + self.stage, "PYTHON=" + py.path)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(files_under(self.stage), [])

    def test_a_venv_with_destdir_goes_to_the_venv(self):
        py = interpreters()[-1]
        venv = os.path.join(self.tmp, "venv")
        run([py.path, "-m", "venv", "--without-pip", venv], check=True)
        vpy = os.path.join(venv, "bin", "python")
        suffix, site = site_of(vpy)
        self.assertTrue(site.startswith(venv), site)
        p = make("install", "DESTDIR=" + self.stage, "PYTHON=" + vpy)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(files_under(self.stage),
                         sorted(os.path.relpath(os.path.join(site, n), "/")
                                for n in ("perfpy" + suffix, "perfpy-startup.pth")))

    def as_nobody(self):
        """setpriv's prefix to run as user nobody, scripts/install and the
        build as they can reach them (copies, in this test's directory, when
        the clone is out of their reach), or skip."""
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to run as another user")
        os.chmod(self.tmp, 0o755)
        build = os.path.relpath(BUILD, ROOT)
        root = tree_for_others(self.tmp, "scripts/install", "src/python/perfpy-startup.pth",
                               "docs/perfpy.1", build + "/perfpy", build + "/lib",
                               build + "/pythons.txt")
        return (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
                os.path.join(root, "scripts", "install"), os.path.join(root, build))

    def test_a_user_installs_into_their_home(self):
        nobody, script, build = self.as_nobody()
        home = os.path.join(self.tmp, "home")
        os.mkdir(home)
        os.chown(home, 65534, 65534)
        prefix = os.path.join(home, ".local")
        p = run(nobody + [script, "", prefix, "", build], env={"HOME": home})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(os.access(os.path.join(prefix, "bin", "perfpy"), os.X_OK))
        # (an interpreter under /root, as in a build of pyenv's only, "does
        # not run" for nobody: skipped with a note all the same)
        self.assertRegex(p.stdout, r"not writable by nobody|does not run \(as nobody\)",
                         "a system interpreter is skipped with a note, not a failure")
        p = run(nobody + [script, "--uninstall", "", prefix, "", build], env={"HOME": home})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(files_under(home), [])

    def test_unwritable_prefix_is_refused_with_a_fix(self):
        nobody, script, build = self.as_nobody()
        os.makedirs(self.stage, mode=0o555)
        p = run(nobody + [script, self.stage, PREFIX, "", build])
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("cannot install %s/bin/perfpy: Permission denied" % self.root, p.stderr)
        self.assertIn("PREFIX=$HOME/.local", p.stderr)
        self.assertNotIn("installed", p.stdout)

    def test_bad_interpreter_is_named(self):
        p = make("install", "DESTDIR=" + self.stage, "PYTHON=/nonexistent/python3")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("cannot run /nonexistent/python3", p.stderr)
        self.assertEqual(files_under(self.tmp), [])
