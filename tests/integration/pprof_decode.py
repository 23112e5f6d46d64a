"""A second pprof consumer beside the npm `pprof-format` decoder: Google's
own protobuf runtime for Python (the `protobuf` package) parsing the file
with the messages of pprof's profile.proto (github.com/google/pprof,
proto/profile.proto), declared here field by field (names, numbers and
types as there: the few messages a CPU profile uses) and built into
classes at run time, so no .proto file and no protoc are needed.

    python pprof_decode.py FILE...     (with protobuf installed: see venv())

prints one JSON object per file: what a profile store reads of it (sample
types, period, time, duration, each sample's values, labels and function
names leaf first). The tests and bench/host_cost.py import venv() and
decode(); the venv (BUILD/pyproto) gets protobuf from PyPI once."""
import glob
import gzip
import json
import os
import subprocess
import sys

# (message, [(field, number, type, label, message type)]); types as
# descriptor_pb2.FieldDescriptorProto: 3 int64, 4 uint64, 9 string, 11 message;
# labels: 1 optional, 3 repeated
PROFILE_PROTO = [
    ("Profile", [("sample_type", 1, 11, 3, "ValueType"), ("sample", 2, 11, 3, "Sample"),
                 ("mapping", 3, 11, 3, "Mapping"), ("location", 4, 11, 3, "Location"),
                 ("function", 5, 11, 3, "Function"), ("string_table", 6, 9, 3, None),
                 ("drop_frames", 7, 3, 1, None), ("keep_frames", 8, 3, 1, None),
                 ("time_nanos", 9, 3, 1, None), ("duration_nanos", 10, 3, 1, None),
                 ("period_type", 11, 11, 1, "ValueType"), ("period", 12, 3, 1, None),
                 ("comment", 13, 3, 3, None), ("default_sample_type", 14, 3, 1, None)]),
    ("ValueType", [("type", 1, 3, 1, None), ("unit", 2, 3, 1, None)]),
    ("Sample", [("location_id", 1, 4, 3, None), ("value", 2, 3, 3, None),
                ("label", 3, 11, 3, "Label")]),
    ("Label", [("key", 1, 3, 1, None), ("str", 2, 3, 1, None), ("num", 3, 3, 1, None),
               ("num_unit", 4, 3, 1, None)]),
    ("Mapping", [("id", 1, 4, 1, None), ("memory_start", 2, 4, 1, None),
                 ("memory_limit", 3, 4, 1, None), ("file_offset", 4, 4, 1, None),
                 ("filename", 5, 3, 1, None), ("build_id", 6, 3, 1, None)]),
    ("Location", [("id", 1, 4, 1, None), ("mapping_id", 2, 4, 1, None),
                  ("address", 3, 4, 1, None), ("line", 4, 11, 3, "Line"),
                  ("is_folded", 5, 8, 1, None)]),
    ("Line", [("function_id", 1, 4, 1, None), ("line", 2, 3, 1, None)]),
    ("Function", [("id", 1, 4, 1, None), ("name", 2, 3, 1, None),
                  ("system_name", 3, 3, 1, None), ("filename", 4, 3, 1, None),
                  ("start_line", 5, 3, 1, None)]),
]


def profile_class():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    f = descriptor_pb2.FileDescriptorProto(name="perftools_profile.proto",
                                           package="perftools.profiles", syntax="proto3")
    for name, fields in PROFILE_PROTO:
        m = f.message_type.add(name=name)
        for fname, num, ftype, label, mtype in fields:
            fd = m.field.add(name=fname, number=num, type=ftype, label=label)
            if mtype:
                fd.type_name = ".perftools.profiles." + mtype
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    desc = pool.FindMessageTypeByName("perftools.profiles.Profile")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def read(path, cls):
    with open(path, "rb") as fh:
        raw = fh.read()
    p = cls()
    p.ParseFromString(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    s = p.string_table
    funcs = {f.id: s[f.name] for f in p.function}
    locs = {l.id: [funcs.get(x.function_id, "?") for x in l.line] for l in p.location}
    return {
        "sample_types": ["%s/%s" % (s[t.type], s[t.unit]) for t in p.sample_type],
        "period_type": "%s/%s" % (s[p.period_type.type], s[p.period_type.unit]),
        "period": p.period, "time_nanos": p.time_nanos, "duration_nanos": p.duration_nanos,
        "default_sample_type": s[p.default_sample_type],
        "samples": [{"values": list(x.value),
                     "labels": {s[l.key]: s[l.str] for l in x.label},
                     "stack": [n for i in x.location_id for n in locs.get(i, ["?"])]}
                    for x in p.sample],
    }


def venv(build):
    """(python, environment) that import protobuf: BUILD/pyproto's venv
    (protobuf installed from PyPI once), or, where pip reaches no index
    (the sid root), this python with the protobuf another build's venv
    holds (the host world's, run first), in its pure-Python form."""
    d = os.path.join(os.path.abspath(build), "pyproto")
    py = os.path.join(d, "bin", "python")
    ok = os.path.exists(py) and subprocess.run(
        [py, "-c", "import google.protobuf"], stderr=subprocess.DEVNULL).returncode == 0
    if not ok:
        subprocess.run([sys.executable, "-m", "venv", "--clear", d], check=True)
        ok = subprocess.run([py, "-m", "pip", "install", "-q", "protobuf"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if ok:
        return py, None
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    found = sorted(glob.glob(os.path.join(root, "build*", "pyproto", "lib", "python3*",
                                          "site-packages", "google", "protobuf")))
    if not found:
        raise ValueError("protobuf could not be installed (pip) nor found in a build's "
                         "pyproto venv: run the host world's tests first")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(found[0])),
               PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python")
    return sys.executable, env


def decode(build, paths):
    """{path: what read() gives} from Google's protobuf runtime."""
    py, env = venv(build)
    p = subprocess.run([py, os.path.abspath(__file__)] + list(paths), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise ValueError("protobuf could not decode: " + p.stderr[-2000:])
    return dict(zip(paths, (json.loads(l) for l in p.stdout.splitlines())))


if __name__ == "__main__":
    cls = profile_class()
    for path in sys.argv[1:]:
        print(json.dumps(read(path, cls)))
