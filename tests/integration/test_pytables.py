"""The structure offsets compiled into perfpy (src/cpython/pytables.c,
made by scripts/gen-pytables) against the headers of every interpreter of
the build: for each, both flavours from 3.13 (with the GIL, and built with
Py_GIL_DISABLED), every field's value and where _Py_DebugOffsets publishes
it must be what perfpy-sample holds for that version. Mutation: one value
of pytables.c changed (tstate_next of 3.10: 8 -> 16) -> red naming the
field; reverted, green."""

import json
import os
import subprocess
import unittest

import support
from support import BUILD, ROOT, interpreters, note

SAMPLER = os.path.join(BUILD, "perfpy-sample")
GEN = os.path.join(ROOT, "scripts", "gen-pytables")


def compiled():
    out = subprocess.run([SAMPLER, "--tables"], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def entry_for(tables, version_hex, free_threaded):
    """pp_py_table_find's rule: of the same minor and flavour, the latest
    layout first seen at or before the version, else the first."""
    same = [t for t in tables if t["table"]["version_hex"] >> 16 == version_hex >> 16 and
            t["table"]["free_threaded"] == free_threaded]
    before = [t for t in same if t["table"]["version_hex"] <= version_hex]
    if before:
        return max(before, key=lambda t: t["table"]["version_hex"])
    return min(same, key=lambda t: t["table"]["version_hex"]) if same else None


class CompiledTables(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(SAMPLER):
            self.skipTest("sample mode is not built here (libbpf-dev, libdw-dev)")

    def test_tables_agree_with_every_interpreters_headers(self):
        tables = compiled()
        pys = interpreters()
        self.assertTrue(pys, "no interpreter in the build")
        for py in pys:
            with self.subTest(py=py.label):
                out = subprocess.run([GEN, "--print", py.real], stdout=subprocess.PIPE,
                                     universal_newlines=True, check=True).stdout
                recs = [json.loads(line) for line in out.splitlines()]
                self.assertEqual(len(recs), 2 if py.version_info >= (3, 13) else 1)
                for rec in recs:
                    t = entry_for(tables, rec["version_hex"], rec["free_threaded"])
                    self.assertIsNotNone(t, "no compiled table for %s" % py.version)
                    self.assertEqual(t["table"]["debug_size"], rec["debug_size"])
                    for f in rec["fields"]:
                        self.assertEqual(t[f], [rec["values"][f], rec["debug_at"][f],
                                                rec["debug_zero"][f]],
                                         "%s%s: field %s" % (py.version, " (free-threaded)" if
                                                             rec["free_threaded"] else "", f))
                note("%s: %d fields x %d flavour(s), as its headers say"
                     % (py.label, len(recs[0]["fields"]), len(recs)))


if __name__ == "__main__":
    unittest.main()
