# SPDX-License-Identifier: Apache-2.0
"""The Python twin of usdt_app.c (same probes, values, protocol and
output), through the sonde_usdt binding; see usdt_app.c.

Usage: python3 usdt_app.py [ROUNDS [PREFIX]]   (PREFIX defaults to sonde_py)
"""
import os
import sys
import time

from sonde_usdt import Provider

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
prefix = sys.argv[2] if len(sys.argv) > 2 else "sonde_py"
lazy_calls = 0


def die(what):
    print("error: " + what, flush=True)
    sys.exit(2)


def lazy_values(i):
    global lazy_calls
    lazy_calls += 1
    return (i * 1000, "lazy-%d" % i)


provider = Provider(prefix)
control = Provider(prefix + "_ctl")
probes = [
    (provider.add_probe("i8", "int8", "uint8"), lambda i: (-128 + i, 255 - i)),
    (provider.add_probe("i16", "int16", "uint16"), lambda i: (-32768 + i, 65535 - i)),
    (provider.add_probe("i32", "int32", "uint32"), lambda i: (-2**31 + i, 2**32 - 1 - i)),
    (provider.add_probe("i64", int, "uint64"), lambda i: (-2**63 + i, 2**64 - 1 - i)),
    (provider.add_probe("ptrstr", "pointer", str), lambda i: (0xdeadbeef00 + i, "str-%d" % i)),
    (provider.add_probe("six", "int8", "uint16", "int32", "uint64", bytes, "pointer"),
     lambda i: (-1 - i, 60000 + i, -100000 - i, 2**40 + i, b"six-%d" % i, 0x1000 + i)),
    (provider.add_probe("lazy", int, str), None),
    (provider.add_probe("none"), lambda i: ()),
]
done = control.add_probe("done")
provider.load()
control.load()


def fire_round(j, i):
    probe, values = probes[j]
    if values is None:
        probe.fire(lambda: lazy_values(i))
    else:
        probe.fire(*values(i))


def wait_all(enabled):
    for _ in range(3000):
        if done.enabled == enabled and all(p.enabled == enabled for p, _ in probes):
            return True
        time.sleep(0.01)
    return False


for j, (probe, _) in enumerate(probes):
    if probe.enabled:
        die("enabled without a tracer")
    fire_round(j, 0)
if lazy_calls:
    die("the callable was called without a tracer")
print("disabled ok\nready %d" % os.getpid(), flush=True)

if not wait_all(True):
    die("the probes were never all enabled")
for j in range(len(probes)):
    for i in range(rounds + j):
        fire_round(j, i)
done.fire()
print("fired %d" % lazy_calls, flush=True)

if not wait_all(False):
    die("the probes stayed enabled after the tracer left")
before = lazy_calls
fire_round(6, 0)
if lazy_calls != before:
    die("the callable was called after the tracer left")
print("detached ok", flush=True)

try:
    provider.add_probe("late", int)
    die("a probe was added after load")
except OSError:
    pass
with control:
    pass
provider.unload()
with open("/proc/self/maps") as maps:
    if "/memfd:sonde-usdt" in maps.read():
        die("a mapping is left after unload")
print("unloaded ok", flush=True)
