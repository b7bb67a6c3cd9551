#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Kernel probes by the thousand, measured inside the QEMU guest.

Run by bench/run.py's `vm` group through tests/vm/run-in-vm (the host kernel
has neither kprobes nor fentry):

    tests/vm/run-in-vm --timeout 900 -- python3 bench/vm_scale.py build/sonde OUT.json

For each of kprobe and fentry it picks the same 1,000 kernel functions
(sorted names from a few quiet subsystems that both providers can attach to),
writes one program with 1,000 probe specs and `@[probe] = count()`, and runs
sonde on it: the time from launch to `Attached 1000 probes`, a half-second of
tracing, then SIGINT and the time until sonde has exited; then how long the
`sonde-release` process takes to finish the kernel's detaching in the
background, and sonde's peak RSS (GNU time). The guest is emulated (TCG), so
the times are many times the host's: there is no target, only the record.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from run import kill_group   # bench/run.py, beside this file

PREFIXES = ("tcp_", "udp_", "security_", "blk_", "ip_", "inet_", "sock_", "skb_")
COUNT = 1000


def listed(sonde, provider):
    out = subprocess.run([sonde, "-l", provider + ":*"], capture_output=True, text=True).stdout
    return {line.split(":", 1)[1] for line in out.splitlines() if line.startswith(provider + ":")}


# The x86-64 BPF trampoline of the guest's 6.1 kernel takes at most six
# arguments, each a scalar or a pointer (a struct passed by value is refused
# too): fentry on any other function fails to attach with ENOTSUPP (524).
TRAMPOLINE_MAX_ARGS = 6


def trampoline_refuses(arguments):
    if len(arguments) > TRAMPOLINE_MAX_ARGS:
        return True
    return any(re.match(r"(const )?(volatile )?(struct|union) ", argument) and "*" not in argument
               for argument in arguments)


def fentry_attachable(sonde, wanted):
    """COUNT functions of `wanted` under PREFIXES, the first by name, whose
    prototypes (sonde -lv, from BTF) the trampoline takes: refusals are known
    before attaching, not found by attaching a thousand functions again after
    each one. -lv is slow under emulation, so the prefixes are listed in
    order and no further than needed."""
    names = set()
    for prefix in sorted(PREFIXES):
        if len(names) >= COUNT:
            break
        out = subprocess.run([sonde, "-lv", "fentry:%s*" % prefix], capture_output=True,
                             text=True).stdout
        name, arguments = None, []
        for line in out.splitlines() + ["fentry:"]:
            if line.startswith("fentry:"):
                if name in wanted and not trampoline_refuses(arguments):
                    names.add(name)
                name, arguments = line.split(":", 1)[1], []
            elif line.startswith("    "):
                arguments.append(line.strip())
    return sorted(names)[:COUNT]


def releases_running():
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/comm" % entry) as f:
                    if f.read().strip() == "sonde-release":
                        return True
            except OSError:
                pass
    return False


def measure(sonde, provider, functions, workdir):
    program = os.path.join(workdir, provider + ".bt")
    with open(program, "w") as f:
        f.write(",\n".join("%s:%s" % (provider, name) for name in functions))
        f.write(" { @[probe] = count(); }\n")
    rss_path = os.path.join(workdir, provider + ".rss")
    err_path = os.path.join(workdir, provider + ".err")
    start = time.monotonic()
    with open(err_path, "w") as err:
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_path, sonde, program],
                                stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    attached = None
    while proc.poll() is None and time.monotonic() - start < 600:
        with open(err_path, errors="replace") as f:
            match = re.search(r"Attached (\d+) probe", f.read())
        if match:
            attached = time.monotonic() - start
            probes = int(match.group(1))
            break
        time.sleep(0.05)
    if attached is None:
        kill_group(proc)
        with open(err_path, errors="replace") as f:
            return {"error": f.read()[-1000:]}
    time.sleep(0.5)
    interrupted = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait()
    exit_s = time.monotonic() - interrupted
    released = None
    while time.monotonic() - interrupted < 600:
        if not releases_running():
            released = time.monotonic() - interrupted
            break
        time.sleep(0.2)
    with open(rss_path) as f:
        rss = int(f.read().split()[-1])
    return {"probes": probes, "attach_s": attached, "exit_s": exit_s,
            "release_s": released, "maxrss_kb": rss}


def main():
    sonde, out_path = os.path.abspath(sys.argv[1]), sys.argv[2]
    providers = sys.argv[3].split(",") if len(sys.argv) > 3 else ["kprobe", "fentry"]
    started = time.monotonic()
    functions = fentry_attachable(sonde, listed(sonde, "kprobe") & listed(sonde, "fentry"))
    results = {"kernel": os.uname().release, "functions": len(functions)}
    print("vm_scale: %d functions chosen in %.0f s" % (len(functions), time.monotonic() - started),
          file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for provider in providers:
            chosen = list(functions)
            # a function the kernel still refuses is dropped and the run
            # redone (each retry attaches everything again: a few at most)
            for _ in range(3):
                results[provider] = measure(sonde, provider, chosen, workdir)
                refused = re.search(r"cannot attach %s:(\S+):" % provider,
                                    results[provider].get("error", ""))
                if not refused or refused.group(1) not in chosen:
                    break
                chosen.remove(refused.group(1))
            results[provider]["refused"] = len(functions) - len(chosen)
            print("vm_scale:", provider, json.dumps(results[provider]), file=sys.stderr,
                  flush=True)
            # written after each provider: a run cut short keeps what it has
            with open(out_path, "w") as f:
                json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
