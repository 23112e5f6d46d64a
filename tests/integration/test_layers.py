"""The layers depend one way (STYLE.md habits 11 and 13, docs/architecture.md):

    cli  ->  report  ->  output  ->  profile
     (perfpy's    (perf.data   (writers)   (the model: frames, stacks,
      commands)    -> profile)              threads, samples; a sample as
      |                                     its producers hand it over)
      | (the request only)
      v
    sampler  ->  collect  ->  cpython  ->  native  ->  profile
    (perfpy-     (BPF and     (a running  (/proc, symbols,
     sample)      its loader)  CPython's   unwinding, the
                               memory)     splice)

Every include across folders names its folder ("profile/profile.h"), so the
direction is read from the includes: the profile model includes no other
layer, the writers only the model, the pipeline the writers and the model;
the readers of a running program each only those below it and the model,
never the pipeline (a sample goes to the folder as the model's raw sample,
profile/raw.h); perfpy-sample folds and writes with the pipeline; nothing
but the commands includes the commands, and they include of perfpy-sample
only what perfpy asks of it (sampler/request.h). A checker that never fails checks nothing:
it is also run on a copy of the tree with one include pointing back up."""
import os
import re
import shutil
import tempfile
import unittest

from support import ROOT

# what each folder of src/ may include of the others ("perfpy" is
# include/perfpy, the public headers)
ALLOWED = {
    "profile": set(),
    "output": {"profile", "perfpy"},
    "report": {"output", "profile", "perfpy"},
    "collect": {"cpython", "native", "profile", "perfpy"},
    "cpython": {"native", "profile", "perfpy"},
    "native": {"profile", "perfpy"},
    "sampler": {"collect", "cpython", "native", "report", "output", "profile", "perfpy"},
    "engine": {"perfpy"},
}
# what perfpy's commands may include of perfpy-sample's folder: what
# perfpy asks of it, the request
CLI_OF_SAMPLER = {"sampler/request.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def back_includes(src):
    """[(file, include)] of every include that breaks ALLOWED, or that
    reaches another layer of ALLOWED without naming its folder ("../x.h"),
    or reaches the commands from anywhere but the commands."""
    bad = []
    for layer in sorted(os.listdir(src)):
        folder = os.path.join(src, layer)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            with open(os.path.join(folder, name), errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                top = inc.split("/")[0] if "/" in inc else layer
                if inc.startswith("../") and layer in ALLOWED:
                    bad.append((layer + "/" + name, inc))
                elif top == "cli" and layer != "cli":
                    bad.append((layer + "/" + name, inc))
                elif layer == "cli" and top == "sampler" and inc not in CLI_OF_SAMPLER:
                    bad.append((layer + "/" + name, inc))
                elif layer in ALLOWED and top != layer and top not in ALLOWED[layer]:
                    bad.append((layer + "/" + name, inc))
    return bad


class Layers(unittest.TestCase):

    def test_includes_point_one_way(self):
        self.assertEqual(back_includes(os.path.join(ROOT, "src")), [])

    def test_an_include_back_up_is_found(self):
        """The twin: a writer that includes the pipeline, the model that
        includes a writer, and the pipeline including a command, each in a
        copy of the tree, are each reported."""
        for layer, name, inc in (("output", "out_collapsed.c", "report/report.h"),
                                 ("profile", "views.c", "output/output.h"),
                                 ("report", "fold.c", "cli/cli.h"),
                                 ("profile", "samples.c", "../report/fold.h"),
                                 ("sampler", "record.c", "cli/cli.h"),
                                 ("cli", "cmd_top.c", "sampler/top_view.h"),
                                 ("native", "splice.c", "report/fold.h"),
                                 ("cpython", "pyread.c", "collect/collect_bpf.h"),
                                 ("collect", "wall.c", "report/fold.h")):
            with self.subTest(layer=layer, include=inc):
                tmp = tempfile.mkdtemp(prefix="perfpy-layers-")
                try:
                    src = os.path.join(tmp, "src")
                    shutil.copytree(os.path.join(ROOT, "src"), src)
                    path = os.path.join(src, layer, name)
                    with open(path) as f:
                        text = f.read()
                    with open(path, "w") as f:
                        f.write('#include "%s"\n' % inc + text)
                    self.assertEqual(back_includes(src), [(layer + "/" + name, inc)])
                finally:
                    shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
