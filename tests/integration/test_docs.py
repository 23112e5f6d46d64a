"""The documents say what the program does, so they cannot drift apart:

- the man page (docs/perfpy.1) is what scripts/gen-man writes now from
  `perfpy --help`, `perfpy <command> --help` and docs/perfpy.1.in (the key
  check: the page is generated, so what follows holds by construction as
  long as this does); the generator keeps holding it when the help's layout
  changes (a help laid out otherwise, through a stand-in perfpy);
- every option `perfpy --help` and `perfpy <command> --help` print is in the
  man page under that command, with the same unit (metavar) and the same
  default, and the man page documents no option the command lacks; every
  option states its default; each command states its exit status; the man
  page renders without a groff warning;
- the README: the two commands of a fresh machine (`make demo`, `make test`,
  the latter exactly what CI runs), every `perfpy ...` command line it shows
  uses real commands and options, its links and pictures exist, and every
  number it quotes about overhead is in the docs/PERFORMANCE.md section it
  cites."""
import os
import re
import shutil
import stat
import sys
import tempfile
import unittest

from support import PERFPY, ROOT, run

MAN = os.path.join(ROOT, "docs", "perfpy.1")
GEN_MAN = os.path.join(ROOT, "scripts", "gen-man")
README = os.path.join(ROOT, "README.md")
COMMANDS = ["record", "run", "report", "diff", "jitdump", "dump", "top", "doctor"]
HELP_ONLY = {"-h", "--help", "-V", "--version"}   # need no default

# "  -o, --output FILE   text", "      --keep   text", "  -- PYTHON   text"
ENTRY = re.compile(r"^ +(?:(-\w), )?(--[\w-]*|-\w)"
                   r"(?: ([A-Z][A-Z|]*|[a-z]+(?:\|[a-z]+)+)(?= |$))?(?: +(.*))?$")


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def entries(lines, head_indent, body_indent, blank_ends):
    """{option: (metavar, text)} from an options list: heads indented
    head_indent (a range), bodies at body_indent or deeper; blank_ends: an
    entry ends at a blank line (the man page)."""
    found, key = {}, None
    for line in lines:
        indent = indent_of(line)
        m = ENTRY.match(line) if indent in head_indent else None
        if m:
            short, opt, meta, text = m.groups()
            key = opt if opt != "--" or not meta else "-- " + meta
            found[key] = [meta or "", (text or ""), short]
        elif key and line.strip() and indent >= body_indent:
            found[key][1] += " " + line.strip()
        elif not line.strip() and blank_ends:
            key = None
    return {k: (v[0], " ".join(v[1].split()), v[2]) for k, v in found.items()}


def help_text(cmd, perfpy=PERFPY):
    p = run([perfpy] + ([cmd] if cmd else []) + ["--help"])
    assert p.returncode == 0, p.stderr
    return p.stdout


def help_section(text, title):
    """Lines of the help section that starts with `title:`."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith(title + ":"):
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break
        if inside:
            out.append(line)
    return out


def help_options(cmd, perfpy=PERFPY):
    return entries(help_section(help_text(cmd, perfpy), "options"), range(2, 7), 7, False)


def help_environment(cmd):
    found, key = {}, None
    for line in help_section(help_text(cmd), "environment"):
        m = re.match(r"^  ([A-Z_]+) {2,}(.*)$", line)
        if m:
            key = m.group(1)
            found[key] = m.group(2)
        elif key and line.strip():
            found[key] += " " + line.strip()
    return found


_man = {}


def man_text(man=MAN):
    """The man page as man shows it, one paragraph a line (no hyphenation).
    Where the text starts is the formatter's choice (groff 1.22: sections'
    text at 7 columns, tagged paragraphs' bodies at 14; groff 1.24: 5 and
    12; a tag too long for its column puts its body on the next line):
    the parsers below measure it (man_indent), they do not assume it."""
    if man not in _man:
        p = run(["groff", "-man", "-Tascii", "-rLL=400n", "-rHY=0", "-P-c", "-P-b", "-P-o",
                 "-P-u", man])
        assert p.returncode == 0, p.stderr
        _man[man] = p.stdout
    return _man[man]


def man_indent(man=MAN):
    """Where a section's text starts: the indentation of NAME's line."""
    lines = man_text(man).splitlines()
    return indent_of(next(l for l in lines[lines.index("NAME") + 1:] if l.strip()))


def subsection(line, man=MAN):
    """The command of a subsection heading ("perfpy report ..." indented
    less than the text), else None."""
    m = re.match(r"^( +)perfpy (\w+)\b", line)
    return m.group(2) if m and len(m.group(1)) < man_indent(man) else None


def man_block(cmd, man=MAN):
    """Lines of the man page for a command (its .SS), or OPTIONS for ''."""
    lines, out, inside = man_text(man).splitlines(), [], False
    for line in lines:
        if cmd and subsection(line, man) == cmd:
            inside = True
            continue
        if not cmd and line == "OPTIONS":
            inside = True
            continue
        if inside and (subsection(line, man) not in (None, cmd) or re.match(r"^[A-Z]", line)):
            break
        if inside:
            out.append(line)
    return out


def man_options(cmd, man=MAN):
    """Options are tagged paragraphs: the tag at the text's indentation,
    the body deeper."""
    at = man_indent(man)
    return entries(man_block(cmd, man), range(at, at + 1), at + 1, True)


def man_environment(man=MAN):
    found, lines = {}, man_text(man).splitlines()
    start = lines.index("ENVIRONMENT")
    for i in range(start + 1, len(lines)):
        if re.match(r"^[A-Z]", lines[i]):
            break
        m = re.match(r"^ {%d}([A-Z_]+)(?:=\S+)?(?: +(.*))?$" % man_indent(man), lines[i])
        if m:   # a short name has its text on the same line
            found[m.group(1)] = m.group(2) or (lines[i + 1].strip() if i + 1 < len(lines) else "")
    return found


def norm(text):
    """Text to compare: quotes as ' (groff 1.24 renders \\(oq as `), no
    $, <> or case, spaces collapsed."""
    text = re.sub("[\u2018\u2019`]", "'", text).replace("$", "")
    return " ".join(re.sub(r"[<>]", "", text).lower().split())


def default_of(text):
    """What a help text gives as the default: 'X' of 'default: X[;,)]', the
    word before '(default', or '' when it only says '(default)'."""
    m = re.search(r"default: ([^;,)]+)", text)
    if m:
        return m.group(1).strip()
    m = re.search(r"(\S+) \(default\b", text)
    return m.group(1) if m else ""


# A stand-in perfpy whose help is laid out otherwise than today's: the
# generator must place every part of it (issue 37: the help texts change).
FAKE_HELP = {
    "": """usage: perfpy COMMAND [options]

A stand-in.

commands:
  record      profile a program
  odd         another command

options:
  -h, --help        this help
  -V, --version     the version

exit status:
  0 ok, 1 failed, 2 usage error

examples:
  perfpy record -- python3 app.py
""",
    "record": """usage: perfpy record [options] [--] PROGRAM
       perfpy record [options] -p PID

Records a program. A paragraph
that goes on.

keys: a does this, b that.

options:
  -o, --output FILE       where to write (default: <program>.svg)
      --keep [N|SIZE]     keep them (default: none kept)
      --label KEY=VALUE with -a, a label (default: none)
      --processes WHEN a root per process: auto (default) when two
      --mode auto|perf    the mode (default: auto)
  -r HZ                   samples a second (default: 99)
      --stack-size BYTES  stack copied (default: 32768,
                          about 60 frames) - not a new option
  -q                      quiet (default: off)
  -h, --help              this help

Notes after the options, at column 0:
  an item,
      continued
  -not an option: an item of the notes

environment:
  PERF            the perf executable (default: perf on PATH)
  SOME_VAR        a variable
                  of two lines (default: 3)

exit status: 0 written,
1 failed, 2 usage error

Prose after the exit status.

example:
  perfpy record -o x.svg -- python3 app.py
""",
    "odd": """options:
  -x, --ex NAME   an option before the usage (default: none)
  -h, --help      this help

usage: perfpy odd [-x NAME]

exit status: 0, 1 or 2
""",
}


class ManPageMatchesHelp(unittest.TestCase):

    def check_options(self, commands, perfpy=PERFPY, man=MAN):
        for cmd in commands:
            helped, manned = help_options(cmd, perfpy), man_options(cmd, man)
            with self.subTest(command=cmd or "perfpy"):
                self.assertTrue(helped, "no options parsed from the help")
                self.assertEqual(sorted(helped), sorted(manned),
                                 "options of `perfpy %s --help` vs %s" % (cmd, man))
                for opt, (meta, text, short) in helped.items():
                    mmeta, mtext, mshort = manned[opt]
                    self.assertEqual(meta, mmeta, "%s: unit in help vs man" % opt)
                    self.assertEqual(short, mshort, "%s: short form in help vs man" % opt)
                    if opt in HELP_ONLY:
                        continue
                    self.assertIn("default", text.lower(),
                                  "%s %s: the help gives no default" % (cmd, opt))
                    self.assertIn("default", mtext.lower(),
                                  "%s %s: the man page gives no default" % (cmd, opt))
                    self.assertIn(norm(default_of(text)), norm(mtext),
                                  "%s %s: the man page's default differs from the help's"
                                  " (%r)" % (cmd, opt, default_of(text)))

    def test_every_option_is_in_the_man_page_with_unit_and_default(self):
        self.check_options([""] + COMMANDS)

    def test_man_page_is_what_gen_man_writes(self):
        """docs/perfpy.1 is generated: after a --help text or
        docs/perfpy.1.in changes, scripts/gen-man must be run again."""
        p = run([sys.executable, GEN_MAN, "--perfpy", PERFPY, "-o", "-"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        with open(MAN) as f:
            self.assertEqual(f.read(), p.stdout,
                             "docs/perfpy.1 is not what scripts/gen-man writes now: "
                             "run scripts/gen-man and commit docs/perfpy.1")

    def test_gen_man_places_a_help_laid_out_otherwise(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "perfpy")
            with open(fake, "w") as f:
                f.write("#!%s\nimport sys\nHELP = %r\n"
                        "args = [a for a in sys.argv[1:] if a != '--help']\n"
                        "print('perfpy 9.9') if args == ['--version'] else "
                        "sys.stdout.write(HELP[args[0] if args else ''])\n"
                        % (sys.executable, FAKE_HELP))
            os.chmod(fake, stat.S_IRWXU)
            man = os.path.join(tmp, "perfpy.1")
            p = run([sys.executable, GEN_MAN, "--perfpy", fake, "-o", man])
            self.assertEqual(p.returncode, 0, p.stderr)
            p = run(["groff", "-man", "-Tutf8", "-ww", "-z", man])
            self.assertEqual((p.returncode, p.stderr), (0, ""))
            self.check_options(["", "record", "odd"], fake, man)
            record = norm(" ".join(man_block("record", man)))
            for said in ["records a program. a paragraph that goes on.", "keys: a does this",
                         "notes after the options", "an item, continued",
                         "-not an option: an item", "exit status: 0 written, 1 failed, 2 usage",
                         "prose after the exit status.", "perfpy record -o x.svg -- python3",
                         "environment: perf, some_var"]:
                self.assertIn(said, record)
            self.assertIn("exit status: 0, 1 or 2", norm(" ".join(man_block("odd", man))))
            text = norm(man_text(man))
            for said in ["perfpy record [options] -p pid", "perfpy odd [-x name]",
                         "odd another command", "perfpy 9.9"]:
                self.assertIn(said, text)
            env = man_environment(man)
            self.assertIn("(default: 3)", env["SOME_VAR"])
            self.assertIn("perf on PATH", env["PERF"])

    def test_every_environment_variable_is_in_the_man_page(self):
        documented = man_environment()
        for cmd in [""] + COMMANDS:
            for name, text in help_environment(cmd).items():
                with self.subTest(command=cmd or "perfpy", variable=name):
                    self.assertIn(name, documented)
                    self.assertIn(norm(default_of(text)), norm(documented[name]))

    def test_every_command_states_its_exit_status(self):
        for cmd in [""] + COMMANDS:
            with self.subTest(command=cmd or "perfpy"):
                self.assertIn("exit status", help_text(cmd))
        for cmd in COMMANDS:
            with self.subTest(command=cmd):
                self.assertTrue(any(l.strip().startswith("Exit status") for l in man_block(cmd)),
                                "no exit status for %s in the man page" % cmd)

    def test_every_command_is_in_the_man_page(self):
        listed = re.findall(r"^  (\w+) {2,}", "\n".join(help_section(help_text(""), "commands")),
                            re.M)
        self.assertEqual(sorted(listed), sorted(COMMANDS))
        for cmd in COMMANDS:
            self.assertTrue(man_block(cmd), "no section for %s" % cmd)

    def test_man_page_renders_without_warnings(self):
        p = run(["groff", "-man", "-Tutf8", "-ww", "-z", MAN])
        self.assertEqual(p.returncode, 0)
        self.assertEqual(p.stderr, "")
        if shutil.which("man"):
            p = run(["man", "-l", MAN], env={"MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"})
            self.assertEqual(p.returncode, 0, p.stderr)


class ReadmeTest(unittest.TestCase):

    def setUp(self):
        with open(README) as f:
            self.readme = f.read()
        blocks, lang, lines = [], None, []
        for line in self.readme.splitlines():
            if line.startswith("```"):
                if lang is None:
                    lang, lines = line[3:].strip(), []
                else:
                    if lang in ("", "sh", "bash", "console"):
                        blocks.append("\n".join(lines))
                    lang = None
            elif lang is not None:
                lines.append(line)
        self.code = "\n".join(blocks)
        # and `perfpy ...` in the text
        self.commands = self.code + "\n" + "\n".join(
            c for c in re.findall(r"`([^`\n]+)`", self.readme)
            if re.match(r"(build/)?perfpy [a-z]", c))

    def test_the_two_commands_and_ci(self):
        self.assertRegex(self.code, r"(?m)^make demo\b")
        self.assertRegex(self.code, r"(?m)^make test\b")
        with open(os.path.join(ROOT, ".ci", "run")) as f:
            commands = [l for l in f.read().splitlines()
                        if l.strip() and not l.startswith("#") and not l.startswith("set ")
                        and not l.startswith("cd ")]
        self.assertEqual(commands, ["make test"], "CI runs what the README tells users to run")

    def test_perfpy_command_lines_use_real_commands_and_options(self):
        lines = re.findall(r"(?m)(?:^|-- )(?:build/)?perfpy ([a-z]+)((?: +-[^ \n]+(?: [^-\s][^ \n]*)?)*)",
                           self.commands)
        self.assertTrue(lines)
        for cmd, rest in lines:
            with self.subTest(line="perfpy %s%s" % (cmd, rest)):
                self.assertIn(cmd, COMMANDS)
                known = set()
                for opt, (_, _, short) in help_options(cmd).items():
                    known.update({opt, short})
                for word in rest.split():
                    if word == "--":
                        break
                    if word.startswith("-"):
                        self.assertIn(word.split("=")[0], known)

    def test_links_and_pictures_exist(self):
        for target in re.findall(r"\]\(([^)#\s]+)\)", self.readme):
            if re.match(r"[a-z]+:", target):
                continue
            with self.subTest(link=target):
                self.assertTrue(os.path.exists(os.path.join(ROOT, target)), target)
        self.assertRegex(self.readme, r"!\[[^\]]*\]\(docs/flamegraph\.png\)")

    def test_overhead_numbers_are_those_of_docs_performance(self):
        """Each number in a README paragraph that cites a section of
        docs/PERFORMANCE.md appears in that section."""
        with open(os.path.join(ROOT, "docs", "PERFORMANCE.md")) as f:
            perf = f.read()
        sections = dict(re.findall(r"(?ms)^## ([^\n]+)\n(.*?)(?=^## |\Z)", perf))
        cited = re.findall(r"(?s)((?:[^\n]+\n)*?[^\n]*docs/PERFORMANCE\.md[^\n]*?"
                           r"\"([^\"]+)\"[^\n]*(?:\n[^\n]+)*)", self.readme)
        self.assertTrue(cited, "the README cites no section of docs/PERFORMANCE.md")
        for paragraph, title in cited:
            with self.subTest(section=title):
                self.assertIn(title, sections, "no such section in docs/PERFORMANCE.md")
                # 1.23, +0.29, and a ratio's 1.699 of 1.699x
                for number in re.findall(r"(?<![\w.])[+]?\d+\.\d+(?=x?(?![\w.]))", paragraph):
                    self.assertIn(number, sections[title], "README quotes %s" % number)
