# SPDX-License-Identifier: Apache-2.0
"""The Python binding's argument checks and close() racing with firing
threads, for tests/usdt/check.py (run there with sonde attached).

Providers race_0 .. race_{CYCLES-1} each have a probe hit(int64, string);
race_ctl has kinds(int8, uint8, uint64, pointer, string). Before a tracer:
names the format cannot carry are refused (ValueError, TypeError). Once
sonde has enabled every probe: values out of an argument's range and of
the wrong type are refused, naming the argument. Then, provider by
provider, THREADS threads fire its probe (the enabled path: into the site,
through the uprobe) while the main thread closes it, and keep firing a
little after; close() must wait for or fence them. Without that the
process died of SIGSEGV in about one run in four.

Protocol on stdout:
  names ok           the name checks passed (else "names: PROBLEMS")
  ready PID          waiting (up to 60 s) for every probe to be enabled
  values ok          the value checks passed (else "values: PROBLEMS")
  closed N           N providers closed under fire; the process exits 0
A failure that stops it prints "error: ..." and exits 2. A failed check
does not stop it, so that the race still runs on a binding that lacks the
checks.

Usage: python3 usdt_race.py CYCLES THREADS
"""
import os
import sys
import threading
import time

from sonde_usdt import Provider

cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 30
thread_count = int(sys.argv[2]) if len(sys.argv) > 2 else 4


def die(what):
    print("error: " + what, flush=True)
    os._exit(2)


problems = []


def refused(error_type, words, call, *args):
    """call(*args) must raise error_type with every word in its message."""
    what = "%s%r" % (call.__name__, args)
    try:
        call(*args)
    except error_type as error:
        missing = [w for w in words if w not in str(error)]
        if missing:
            problems.append("%s raised %r, which does not say %s" % (what, error, missing))
        return
    except Exception as error:  # noqa: BLE001 - reported as the wrong kind
        problems.append("%s raised %r, not %s" % (what, error, error_type.__name__))
        return
    problems.append("%s was accepted; %s expected" % (what, error_type.__name__))


def report(what):
    print("%s%s" % (what, " ok" if not problems else ": " + "; ".join(problems)), flush=True)
    del problems[:]


refused(ValueError, ["NUL"], Provider, "a\x00b")
refused(TypeError, [], Provider, 5)
control = Provider("race_ctl")
refused(ValueError, ["NUL"], control.add_probe, "hit\x00x", int)
refused(TypeError, [], control.add_probe, None, int)
kinds = control.add_probe("kinds", "int8", "uint8", "uint64", "pointer", str)
providers = []
for n in range(cycles):
    provider = Provider("race_%d" % n)
    providers.append((provider, provider.add_probe("hit", int, str)))
    provider.load()
control.load()
report("names")
print("ready %d" % os.getpid(), flush=True)

deadline = time.monotonic() + 60
while not (kinds.enabled and all(probe.enabled for _, probe in providers)):
    if time.monotonic() > deadline:
        die("the probes were never all enabled")
    time.sleep(0.01)

hit = providers[0][1]
refused(OverflowError, ["argument 0", "int64"], hit.fire, 2**70, "x")
refused(OverflowError, ["argument 0", "int64"], hit.fire, -2**63 - 1, "x")
refused(TypeError, ["argument 0"], hit.fire, "12", "x")
refused(TypeError, ["argument 1"], hit.fire, 12, 13)
refused(OverflowError, ["argument 0", "int8"], kinds.fire, 128, 0, 0, 0, "x")
refused(OverflowError, ["argument 1", "uint8"], kinds.fire, 0, -1, 0, 0, "x")
refused(OverflowError, ["argument 2", "uint64"], kinds.fire, 0, 0, 2**64, 0, "x")
refused(OverflowError, ["argument 3", "pointer"], kinds.fire, 0, 0, 0, -1, "x")
refused(TypeError, ["argument 3"], kinds.fire, 0, 0, 0, 1.5, "x")
try:
    kinds.fire(-128, 255, 2**64 - 1, None, b"edges")
    hit.fire(-2**63, "edge")
except Exception as error:  # noqa: BLE001 - any error is the finding
    problems.append("the edges of the ranges were refused: %r" % error)
report("values")


def fire_until(probe, stop, counts):
    fired = 0
    while not stop.is_set():
        probe.fire(fired, "racing")
        fired += 1
    counts.append(fired)


for n, (provider, probe) in enumerate(providers):
    stop = threading.Event()
    counts = []
    threads = [threading.Thread(target=fire_until, args=(probe, stop, counts))
               for _ in range(thread_count)]
    for thread in threads:
        thread.start()
    # let them get into the site a few times, more with each cycle
    time.sleep(0.002 + 0.0005 * (n % 8))
    provider.close()
    time.sleep(0.002)
    stop.set()
    for thread in threads:
        thread.join()
    if probe.enabled:
        die("race_%d:hit is still enabled after close()" % n)
    probe.fire(1, "after close")
control.close()
print("closed %d" % len(providers), flush=True)
