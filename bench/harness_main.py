"""Runs one workload: python harness_main.py WORKLOAD.py SCALE

Prints "pid N" on stderr first (so the harness can remove the files that
perf support wrote for this process), then runs WORKLOAD's main(SCALE).
"""
import importlib.util
import os
import sys

sys.stderr.write("pid %d\n" % os.getpid())
sys.stderr.flush()
spec = importlib.util.spec_from_file_location("workload", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
mod.main(float(sys.argv[2]))
