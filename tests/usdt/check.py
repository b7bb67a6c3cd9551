# SPDX-License-Identifier: Apache-2.0
"""End-to-end checks of libsonde-usdt and of sonde tracing it (root).

Run from the repository root after `make` (which builds build/lib/):

    SONDE=build/sonde python3 tests/usdt/check.py

For the C program (usdt_app.c, linked to build/lib/libsonde-usdt.so) and
its Python twin (usdt_app.py, through lib/usdt/python/sonde_usdt.py):
  - with no tracer every probe is disabled and lazy arguments are never
    computed (the program checks, and says "disabled ok");
  - `sonde -l 'usdt:*' -p PID` lists exactly the probes of both providers,
    found in objects mapped from a memfd;
  - sonde -p PID traces every probe; the program fires once every probe is
    enabled, and sonde's output must be exactly the firings with exactly
    the values (computed here the same way); the program then checks that
    every probe is disabled again once sonde has left, and that unloading
    leaves no mapping;
  - `readelf -n` of the object (SONDE_USDT_DUMP) shows each probe's note.
Then usdt_race.py, traced by sonde: the Python binding's checks of names
and values, and 30 providers each closed while 4 threads fire its probe
(it died of SIGSEGV before close() waited for them); and usdt_race.c,
built with AddressSanitizer, the same in C with unload. Then usdt_loop.c,
built with AddressSanitizer: the API's errors, NULL everywhere and 10,000
load/unload cycles leaving no mapping, descriptor or leak.

Prints PASS/FAIL lines and "N passed, N failed".
"""
import os
import re
import queue
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LIB_DIR = os.path.join(ROOT, "build", "lib")
INCLUDE = os.path.join(ROOT, "lib", "usdt", "include")
SONDE = os.environ.get("SONDE", os.path.join(ROOT, "build", "sonde"))
SANITIZER = re.compile(r"(Address|Leak|UndefinedBehavior)Sanitizer|runtime error:")
ROUNDS = 3
CFLAGS = ["-O1", "-g", "-Wall", "-Wextra", "-Werror", "-I" + INCLUDE]

# probe name, argument spec in its note, sonde printf format, values(i)
PROBES = [
    ("i8", "-1@%dil 1@%sil", "%d %d", lambda i: (-128 + i, 255 - i)),
    ("i16", "-2@%di 2@%si", "%d %d", lambda i: (-32768 + i, 65535 - i)),
    ("i32", "-4@%edi 4@%esi", "%d %u", lambda i: (-2**31 + i, 2**32 - 1 - i)),
    ("i64", "-8@%rdi 8@%rsi", "%ld %lu", lambda i: (-2**63 + i, 2**64 - 1 - i)),
    ("ptrstr", "8@%rdi 8@%rsi", "%lx %s", lambda i: ("%x" % (0xdeadbeef00 + i), "str-%d" % i)),
    ("six", "-1@%dil 2@%si -4@%edx 8@%rcx 8@%r8 8@%r9", "%d %d %d %lu %s %lx",
     lambda i: (-1 - i, 60000 + i, -100000 - i, 2**40 + i, "six-%d" % i, "%x" % (0x1000 + i))),
    ("lazy", "-8@%rdi 8@%rsi", "%ld %s", lambda i: (i * 1000, "lazy-%d" % i)),
    ("none", "", "", lambda i: ()),
]
STRING_ARGS = {"ptrstr": [1], "six": [4], "lazy": [1]}

passed = failed = 0


def report(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS " + name)
    else:
        failed += 1
        print("FAIL %s: %s" % (name, detail.rstrip()))
        sys.stdout.flush()
    return ok


def sonde_program(prefix):
    lines = []
    for name, _, fmt, values in PROBES:
        count = len(values(0))
        args = ", ".join("str(arg%d)" % k if k in STRING_ARGS.get(name, []) else "arg%d" % k
                         for k in range(count))
        text = ("%s %s" % (name, fmt)).rstrip()
        lines.append('usdt:*:%s:%s { printf("%s\\n"%s); }' % (
            prefix, name, text, ", " + args if args else ""))
    lines.append("usdt:*:%s_ctl:done { exit(); }" % prefix)
    return "\n".join(lines) + "\n"


def expected_output():
    lines = []
    for j, (name, _, _, values) in enumerate(PROBES):
        for i in range(ROUNDS + j):
            lines.append(" ".join([name] + [str(v) for v in values(i)]))
    return lines


def line_reader(proc):
    """A queue of the process's output lines (None at the end), filled by a
    thread, so that waiting for a line can time out."""
    lines = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)
    threading.Thread(target=read, daemon=True).start()
    return lines


def read_line(lines, timeout=15):
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return None


def check_notes(label, path, prefix):
    """readelf -n of a dumped object: one stapsdt note per probe."""
    result = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    text = result.stdout
    problems = []
    for name, spec, _, _ in PROBES:
        pattern = (r"stapsdt\s+0x[0-9a-f]+\s+NT_STAPSDT \(SystemTap probe descriptors\)\s+"
                   r"Provider: %s\s+Name: %s\s+Location: 0x[0-9a-f]+, Base: 0x[0-9a-f]+, "
                   r"Semaphore: 0x0*[1-9a-f][0-9a-f]*\s+Arguments: ?%s\n" % (
                       re.escape(prefix), re.escape(name), re.escape(spec)))
        if not re.search(pattern, text):
            problems.append("no note for %s:%s with arguments '%s'" % (prefix, name, spec))
    report(result.returncode == 0 and not problems,
           "%s: readelf -n shows a SystemTap note per probe" % label,
           "\n".join(problems) + "\n" + text)


def run_app(label, command, env, prefix, dump_dir):
    app = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=env, cwd=ROOT)
    output = line_reader(app)
    try:
        first, second = read_line(output), read_line(output)
        if not report(first == "disabled ok" and second and second.startswith("ready "),
                      "%s: no tracer, every probe disabled, lazy arguments never computed" % label,
                      "%r %r" % (first, second)):
            return
        pid = second.split()[1]

        listing = subprocess.run([SONDE, "-l", "usdt:*", "-p", pid], capture_output=True,
                                 text=True, timeout=30)
        found = sorted(m.group(1) for m in re.finditer(
            r"^usdt:/proc/%s/map_files/[0-9a-f]+-[0-9a-f]+:(\S+)$" % pid, listing.stdout, re.M))
        wanted = sorted(["%s:%s" % (prefix, p[0]) for p in PROBES] + [prefix + "_ctl:done"])
        report(found == wanted and listing.returncode == 0,
               "%s: sonde -l 'usdt:*' -p PID lists the memfd objects' probes" % label,
               "found %s\nstderr: %s" % (found, listing.stderr))

        env_sonde = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
                         UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
        traced = subprocess.run([SONDE, "-p", pid, "-e", sonde_program(prefix)],
                                capture_output=True, text=True, timeout=60, env=env_sonde)
        lines = [line for line in traced.stdout.splitlines() if line]
        expected = expected_output()
        ok = lines == expected and traced.returncode == 0 and \
            not SANITIZER.search(traced.stderr)
        report(ok, "%s: sonde -p counts every firing with its values (%d lines)" % (
            label, len(expected)),
            "exit %d\nstderr:\n%s\nmissing: %s\nunexpected: %s" % (
                traced.returncode, traced.stderr,
                [e for e in expected if e not in lines][:10],
                [line for line in lines if line not in expected][:10]))

        rest = [read_line(output, 30) for _ in range(3)]
        lazy_rounds = ROUNDS + 6
        report(rest == ["fired %d" % lazy_rounds, "detached ok", "unloaded ok"],
               "%s: lazy arguments computed %d times while traced; disabled after detach; "
               "no mapping after unload" % (label, lazy_rounds), repr(rest))
        app.wait(timeout=10)
        report(app.returncode == 0, "%s: the program exits 0" % label,
               "exit %s" % app.returncode)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    check_notes(label, os.path.join(dump_dir, "sonde-usdt-%s.so" % prefix), prefix)


RACE_CYCLES, RACE_THREADS = 30, 4


def run_race(label, command, env, pattern, before, after):
    """A program closing providers under firing threads (usdt_race.py or
    usdt_race.c), with sonde attached to `pattern` from its "ready PID"
    line on. `before` and `after` are the (line, check) pairs expected
    before and after that line; the last one must be followed by exit 0
    and no sanitizer report."""
    app = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=env, cwd=ROOT)
    output = line_reader(app)
    sonde = None
    try:
        for wanted, check in before:
            line = read_line(output, 30)
            report(line == wanted, "%s: %s" % (label, check), repr(line))
        ready = read_line(output, 30)
        if not report(ready and ready.startswith("ready "), "%s: ready" % label, repr(ready)):
            return
        sonde = subprocess.Popen([SONDE, "-p", ready.split()[1], "-e",
                                  "%s { @fired = count(); }" % pattern],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = [(read_line(output, 120), wanted, check) for wanted, check in after]
        rest = []
        while True:
            line = read_line(output, 30)
            if line is None:
                break
            rest.append(line)
        try:
            app.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        for n, (line, wanted, check) in enumerate(lines):
            if n < len(lines) - 1:
                report(line == wanted, "%s: %s" % (label, check), repr(line))
            else:
                report(line == wanted and app.returncode == 0 and
                       not SANITIZER.search("\n".join(rest)),
                       "%s: %s" % (label, check),
                       "%r, exit %s\n%s" % (line, app.returncode, "\n".join(rest)[-3000:]))
        if sonde.poll() is None:
            sonde.send_signal(2)
        out, err = sonde.communicate(timeout=30)
        fired = re.search(r"@fired: (\d+)", out)
        report(fired and int(fired.group(1)) > RACE_CYCLES and not SANITIZER.search(err),
               "%s: sonde saw the racing firings" % label, "stdout %r\nstderr %s" % (out, err))
    finally:
        for proc in (app, sonde):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()


def main():
    work = tempfile.mkdtemp(prefix="usdt-check-")
    try:
        c_app = os.path.join(work, "usdt_app")
        loop = os.path.join(work, "usdt_loop")
        build = subprocess.run(
            ["cc"] + CFLAGS + ["-o", c_app, os.path.join(HERE, "usdt_app.c"),
                               "-L" + LIB_DIR, "-lsonde-usdt", "-Wl,-rpath," + LIB_DIR],
            capture_output=True, text=True)
        if not report(build.returncode == 0, "build usdt_app against libsonde-usdt.so",
                      build.stderr):
            return
        build = subprocess.run(
            ["cc"] + CFLAGS + ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                               "-o", loop, os.path.join(HERE, "usdt_loop.c"),
                               os.path.join(ROOT, "lib", "usdt", "usdt.c")],
            capture_output=True, text=True)
        report(build.returncode == 0, "build usdt_loop with AddressSanitizer", build.stderr)
        race = os.path.join(work, "usdt_race")
        build = subprocess.run(
            ["cc"] + CFLAGS + ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                               "-pthread", "-o", race, os.path.join(HERE, "usdt_race.c"),
                               os.path.join(ROOT, "lib", "usdt", "usdt.c")],
            capture_output=True, text=True)
        report(build.returncode == 0, "build usdt_race with AddressSanitizer", build.stderr)

        for label, command, prefix in [
                ("C", [c_app, str(ROUNDS), "sonde_c"], "sonde_c"),
                ("Python", [sys.executable, os.path.join(HERE, "usdt_app.py"), str(ROUNDS),
                            "sonde_py"], "sonde_py")]:
            dump_dir = os.path.join(work, label)
            os.mkdir(dump_dir)
            env = dict(os.environ, SONDE_USDT_DUMP=dump_dir + "/",
                       SONDE_USDT_LIB=os.path.join(LIB_DIR, "libsonde-usdt.so"),
                       PYTHONPATH=os.path.join(ROOT, "lib", "usdt", "python"))
            run_app(label, command, env, prefix, dump_dir)
        race_what = "%d providers closed while %d threads fire each, traced" % (
            RACE_CYCLES, RACE_THREADS)
        run_race("Python close() under fire",
                 [sys.executable, os.path.join(HERE, "usdt_race.py"), str(RACE_CYCLES),
                  str(RACE_THREADS)],
                 dict(os.environ, SONDE_USDT_LIB=os.path.join(LIB_DIR, "libsonde-usdt.so"),
                      PYTHONPATH=os.path.join(ROOT, "lib", "usdt", "python")),
                 "usdt:*:race_*:*",
                 [("names ok", "names with NUL or of the wrong type are refused")],
                 [("values ok", "values out of range or of the wrong type are refused, "
                   "naming the argument"),
                  ("closed %d" % RACE_CYCLES, race_what)])
        if os.path.exists(race):
            run_race("C unload under fire (AddressSanitizer)",
                     [race, str(RACE_CYCLES), str(RACE_THREADS)],
                     dict(os.environ, ASAN_OPTIONS="detect_leaks=1"), "usdt:*:crace_*:*", [],
                     [("unloaded %d" % RACE_CYCLES, race_what)])

        if os.path.exists(loop):
            env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1")
            result = subprocess.run([loop, "10000"], capture_output=True, text=True,
                                    timeout=300, env=env)
            print("\n".join("    " + line for line in result.stdout.splitlines()))
            summary = re.search(r"^(\d+) passed, (\d+) failed$", result.stdout, re.M)
            report(result.returncode == 0 and summary and summary.group(2) == "0" and
                   not SANITIZER.search(result.stderr),
                   "usdt_loop under AddressSanitizer: errors, 10,000 cycles, no leak",
                   "exit %d\n%s" % (result.returncode, result.stderr[-3000:]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
