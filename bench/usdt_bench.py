# SPDX-License-Identifier: Apache-2.0
"""The cost of firing a libsonde-usdt probe from Python (bench/run.py's usdt
group), against calling an empty Python function.

    python3 usdt_bench.py disabled|lazy|noop N   no tracer attached
    python3 usdt_bench.py enabled N              prints "ready PID", waits
        until a tracer has enabled bench_py:hit and bench_py:done, times N
        firings of hit(i, "request"), then fires done

Prints "ns N.NNN" per firing (or per empty call for noop; lazy is
fire(callable) while disabled).
"""
import os
import sys
import time

from sonde_usdt import Provider

mode, n = sys.argv[1], int(sys.argv[2])
provider = Provider("bench_py")
hit = provider.add_probe("hit", int, str)
done = provider.add_probe("done")
provider.load()


def noop(*args):
    pass


if mode == "enabled":
    print("ready %d" % os.getpid(), flush=True)
    for _ in range(6000):
        if hit.enabled and done.enabled:
            break
        time.sleep(0.01)
    else:
        sys.exit("usdt_bench.py: never enabled")
fire = noop if mode == "noop" else hit.fire
start = time.perf_counter_ns()
if mode == "lazy":
    for i in range(n):
        fire(lambda: (i, "request"))
else:
    for i in range(n):
        fire(i, "request")
elapsed = time.perf_counter_ns() - start
done.fire()
print("ns %.3f" % (elapsed / n), flush=True)
provider.close()
