#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The one test runner behind `make test`.

It runs these groups of tests and prints one line per case:

  unit     every binary in build/tests/ (each prints PASS/FAIL lines and a
           closing `N passed, N failed` line, which is parsed here);
  runtime  the declarative cases in tests/runtime/*.test (format described in
           tests/README.md), once against build/sonde and once against the
           sanitizer build build/asan/sonde;
  diff     tests/diff/*.bt run under bpftrace and under sonde, whose stdout
           must be identical; tests/diff/compat/*.bt run under sonde only and
           compared with the `// expect:` block in the file;
  special  tests that need more than a declarative case: SIGKILL leaves no
           BPF program or link behind; events lost to a tiny ring buffer are
           all accounted for;
  browser  a real profile's flame graph and a real run's heat map opened in
           headless chromium, driven by tests/browser/check_*.html;
  vm       the cases in tests/vm/*.test (same format as tests/runtime) run
           inside a QEMU guest with Debian's 6.1 kernel (tests/vm/run-in-vm),
           which has the kprobes and fentry this host lacks; normal build only.

`--sonde PATH` tests another binary: with `--sonde bpftrace` the runtime cases
not marked sonde-only check what bpftrace 0.17 itself prints, which is how the
expected outputs were verified.

The closing line is exactly `N passed, N failed, N skipped`; the exit status
is 1 when anything failed.
"""

import argparse
import difflib
import functools
import glob
import json
import os
import re
import resource
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
TOOLS_BUILD = os.path.join(ROOT, "build", "tests", "tools")

# The start signal: sonde prints "Attached N probes" on stderr; bpftrace
# prints "Attaching N probes..." (or its JSON form) on stdout.
BANNER_RE = re.compile(
    r'^(Attached \d+ probes?|Attaching \d+ probes?\.\.\.'
    r'|\{"type": ?"attached_probes".*)$')
# Lines removed from stdout before comparing: the banner forms that only one
# of the tracers prints there (the differential tests: both JSON records) ...
STDOUT_BANNER_RE = re.compile(
    r'^(Attaching \d+ probes?\.\.\.|\{"type": ?"attached_probes".*\})$')
# ... and for the runtime cases only bpftrace 0.17's: sonde's JSON record,
# which adds "count", stays for a case to check.
CASE_BANNER_RE = re.compile(
    r'^(Attaching \d+ probes?\.\.\.'
    r'|\{"type": ?"attached_probes", ?"data": ?\{"probes": ?\d+\}\})$')
# What sonde prints when the kernel skipped some of its probe runs.
SKIPPED_RUNS_RE = re.compile(r'^ +Lost \d+ probe runs: the kernel skipped', re.M)
SANITIZER_RE = re.compile(
    r'(ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:'
    r'|SUMMARY: UndefinedBehaviorSanitizer|SUMMARY: AddressSanitizer)')
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}


# --------------------------------------------------------------------------
# Reporting

class Report:
    def __init__(self, verbose):
        self.verbose = verbose
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.failures = []
        self.lock = threading.Lock()

    def result(self, status, name, details="", count=1):
        with self.lock:
            if status == "PASS":
                self.passed += count
            elif status == "FAIL":
                self.failed += count
                self.failures.append((name, details))
            else:
                self.skipped += count
            line = "%s %s" % (status, name)
            if status == "SKIP" and details:
                line += "  (%s)" % details
            print(line, flush=True)
            if status == "FAIL" or (self.verbose and details and status != "SKIP"):
                for detail_line in details.rstrip("\n").split("\n"):
                    print("    " + detail_line)
                sys.stdout.flush()

    def summary(self):
        if self.failures:
            print("\nFailed cases:")
            for name, _ in self.failures:
                print("  " + name)
        print("%d passed, %d failed, %d skipped"
              % (self.passed, self.failed, self.skipped), flush=True)


def indent(text, prefix="      "):
    if not text:
        return prefix + "(empty)"
    lines = text.rstrip("\n").split("\n")
    if len(lines) > 60:
        lines = lines[:60] + ["... (%d more lines)" % (len(lines) - 60)]
    return "\n".join(prefix + line for line in lines)


# --------------------------------------------------------------------------
# Running a tracer process

class Process:
    """A tracer run: collects stdout/stderr lines in threads and notices the
    start banner on either stream."""

    def __init__(self, argv, env=None, stdin_text=None, cwd=None, stdout_gate=None):
        """stdout_gate: a threading.Event; stdout is not read until it is
        set (a slow reader: the pipe fills and sonde's writes block)."""
        self.argv = argv
        self.stdout_gate = stdout_gate
        self.stdout_lines = []
        self.stderr_lines = []
        self.attached = threading.Event()
        self.proc = subprocess.Popen(
            argv, env=env, cwd=cwd,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self.stdout_lines)),
            threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr_lines)),
        ]
        for reader in self.readers:
            reader.daemon = True
            reader.start()
        if stdin_text is not None:
            try:
                self.proc.stdin.write(stdin_text.encode())
                self.proc.stdin.close()
            except BrokenPipeError:
                pass

    def _read(self, stream, lines):
        if self.stdout_gate is not None and lines is self.stdout_lines:
            self.stdout_gate.wait()
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if BANNER_RE.match(line.rstrip("\n")):
                self.attached.set()
        stream.close()

    def wait(self, timeout):
        """Waits for exit; kills the whole process group on timeout.
        Returns (exit code, timed out)."""
        timed_out = False
        try:
            self.proc.wait(timeout=max(timeout, 0.01))
        except subprocess.TimeoutExpired:
            timed_out = True
            self.kill()
            self.proc.wait()
        for reader in self.readers:
            reader.join(timeout=5)
        return self.proc.returncode, timed_out

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def interrupt(self):
        try:
            self.proc.send_signal(signal.SIGINT)
        except ProcessLookupError:
            pass

    def stdout(self):
        return "".join(self.stdout_lines)

    def stderr(self):
        return "".join(self.stderr_lines)


def is_bpftrace(path):
    return "bpftrace" in os.path.basename(path)


def strip_banner(text, pattern=STDOUT_BANNER_RE):
    """Removes the first banner line (of the pattern's forms) from stdout text."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if pattern.match(line):
            del lines[i]
            break
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Unit tests

SUMMARY_RE = re.compile(r'^\s*(\d+) passed, (\d+) failed')


def run_unit(report, args):
    binaries = sorted(
        path for path in glob.glob(os.path.join(ROOT, "build", "tests", "*"))
        if os.path.isfile(path) and os.access(path, os.X_OK))
    if not binaries:
        report.result("SKIP", "unit: no binaries in build/tests/", "run make first")
        return
    for path in binaries:
        name = "unit/" + os.path.basename(path)
        if args.filter and args.filter not in name:
            continue
        try:
            proc = subprocess.run([path], capture_output=True, timeout=120, cwd=ROOT)
            out = proc.stdout.decode("utf-8", "replace")
            err = proc.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            report.result("FAIL", name, "timed out after 120 s")
            continue
        passed = failed = None
        for line in out.split("\n"):
            match = SUMMARY_RE.match(line)
            if match:
                passed, failed = int(match.group(1)), int(match.group(2))
        if passed is None:
            report.result("FAIL", name, "no `N passed, N failed` line; exit %d\n%s\n%s"
                          % (proc.returncode, indent(out), indent(err)))
            continue
        # a check that could not run says SKIP NAME: REASON, counted apart
        for line in out.split("\n"):
            if line.startswith("SKIP "):
                report.result("SKIP", name + ": " + line[5:].split(":")[0],
                              line[5:].partition(":")[2].strip())
        failing = [line for line in out.split("\n") if line.startswith("FAIL")]
        if failed or proc.returncode != 0:
            report.result("FAIL", name + " (%d passed, %d failed, exit %d)"
                          % (passed, failed, proc.returncode),
                          "\n".join(failing) + "\n" + indent(err), count=max(failed, 1))
            if passed:
                with report.lock:
                    report.passed += passed
        else:
            report.result("PASS", name + " (%d passed)" % passed, count=passed)


# --------------------------------------------------------------------------
# Runtime cases: parsing

LIST_KEYS = ("env", "needs", "lines")
BLOCK_KEYS = ("prog", "script", "stdin", "stdout", "stderr")
SCALAR_KEYS = ("prog", "script", "args", "opts", "posargs", "setup", "run", "target", "start",
               "stop", "match", "exit", "timeout", "flags", "output", "stdin",
               # toolsdiff cases
               "tool", "oracle", "oracle-skip", "header", "marker", "vary")


class Case:
    def __init__(self, name, path, line):
        self.name = name
        self.path = path
        self.line = line
        self.fields = {}
        self.env = []
        self.needs = []
        self.lines = []    # "N REGEX" / "N-M REGEX": how many stdout lines match REGEX
        self.stdout = []   # list of (kind, text): kind in "|~!"
        self.stderr = []

    @property
    def flags(self):
        return self.fields.get("flags", "").split()

    def field(self, key, default=None):
        return self.fields.get(key, default)


class CaseFileError(Exception):
    pass


def parse_case_file(path):
    cases = []
    case = None
    block = None  # (key, list) while reading | ~ ! lines
    with open(path) as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        where = "%s:%d" % (os.path.relpath(path, ROOT), number)
        if block is not None and line[:1] in ("|", "~", "!"):
            kind, text = line[0], line[1:]
            if text.startswith(" "):
                text = text[1:]
            if block[0] not in ("stdout", "stderr") and kind != "|":
                raise CaseFileError(where + ": only `|` lines belong in a " + block[0] + " block")
            block[1].append((kind, text))
            continue
        if block is not None:
            finish_block(case, block)
            block = None
        if line.startswith("=== "):
            case = Case(line[4:].strip(), path, number)
            cases.append(case)
            continue
        if not line.strip() or line.startswith("#"):
            continue
        match = re.match(r'^([a-z-]+):\s?(.*)$', line)
        if not match or case is None:
            raise CaseFileError(where + ": cannot parse line: " + line)
        key, value = match.group(1), match.group(2)
        if key in LIST_KEYS:
            getattr(case, key).append(value.strip())
        elif key in BLOCK_KEYS and value.strip() == "":
            block = (key, [])
        elif key in ("stdout", "stderr"):
            raise CaseFileError(where + ": " + key + " takes a block of | ~ ! lines")
        elif key in SCALAR_KEYS:
            if key in case.fields:
                raise CaseFileError(where + ": " + key + " given twice")
            case.fields[key] = value
        else:
            raise CaseFileError(where + ": unknown key " + key)
    if block is not None:
        finish_block(case, block)
    for c in cases:
        if "prog" not in c.fields and "script" not in c.fields and "args" not in c.fields \
                and "tool" not in c.fields:
            raise CaseFileError("%s:%d: case %s has no prog, script or args"
                                % (os.path.relpath(path, ROOT), c.line, c.name))
    return cases


def finish_block(case, block):
    key, items = block
    if key in ("stdout", "stderr"):
        getattr(case, key).extend(items)
    else:
        case.fields[key] = "\n".join(text for _, text in items) + "\n"


def load_cases(report, group="runtime"):
    """The cases of tests/GROUP/*.test."""
    cases = []
    for path in sorted(glob.glob(os.path.join(TESTS, group, "*.test"))):
        try:
            cases.extend(parse_case_file(path))
        except CaseFileError as error:
            report.result("FAIL", "%s: parse %s" % (group, os.path.basename(path)), str(error))
    names = {}
    for case in cases:
        if case.name in names:
            report.result("FAIL", "%s: duplicate case name %s" % (group, case.name),
                          "in %s and %s" % (names[case.name], case.path))
        names[case.name] = case.path
    return cases


# --------------------------------------------------------------------------
# Runtime cases: running

_FEATURES = None


def available_features():
    """Probe types `sonde --info` reports as available on this kernel."""
    global _FEATURES
    if _FEATURES is None:
        _FEATURES = set()
        try:
            info = subprocess.run([os.path.join(ROOT, "build", "sonde"), "--info"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            info = ""
        for line in info.splitlines():
            match = re.match(r"^\s+([\w/() -]+): available$", line)
            if match:
                _FEATURES.add(match.group(1))
    return _FEATURES


def unmet_need(need, testing_bpftrace):
    """Returns a reason to skip, or None."""
    parts = need.split(None, 1)
    what = parts[0]
    arg = parts[1] if len(parts) > 1 else ""
    if what.startswith("tracepoint:"):
        _, category, event = what.split(":")
        if not os.path.isdir("/sys/kernel/tracing/events/%s/%s" % (category, event)):
            return "no tracepoint " + what
    elif what == "cmd":
        if shutil.which(arg) is None:
            return "no command " + arg
    elif what == "file":
        if not os.path.exists(arg):
            return "no file " + arg
    elif what == "bpftrace":
        if shutil.which("bpftrace") is None:
            return "bpftrace not installed"
    elif what == "not-feature":
        # for the error a kernel without the feature gives: skipped where
        # the kernel has it (tests/vm covers that side)
        if arg in available_features():
            return "this kernel has " + arg
    else:
        return "unknown need " + need
    return None


def substitute(text, values):
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def match_lines(expected, actual_text, exact, values):
    """Checks lines against (kind, text) expectations. Returns an error
    string or None."""
    lines = actual_text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    wanted = [(k, substitute(t, values) if k != "|" else t) for k, t in expected if k != "!"]
    for kind, text in expected:
        if kind == "!":
            pattern = re.compile(substitute(text, values))
            for line in lines:
                if pattern.search(line):
                    return "line matches forbidden /%s/: %r" % (text, line)
    if exact:
        if len(lines) != len(wanted):
            return "expected %d lines, got %d" % (len(wanted), len(lines))
        for i, ((kind, text), line) in enumerate(zip(wanted, lines), 1):
            if kind == "|" and line != text:
                return "line %d: expected %r, got %r" % (i, text, line)
            if kind == "~" and not re.fullmatch(text, line):
                return "line %d: expected /%s/, got %r" % (i, text, line)
        return None
    position = 0
    for kind, text in wanted:
        pattern = re.compile(text) if kind == "~" else None
        while position < len(lines):
            line = lines[position]
            position += 1
            if (kind == "|" and line == text) or (pattern and pattern.search(line)):
                break
        else:
            return "missing (in order) %s %s" % (kind, text)
    return None


def expectations_text(expected):
    return "\n".join("%s %s" % (kind, text) for kind, text in expected)


def case_command(case, values, tmp):
    """The tracer's argv for a case; writes {tmp}/script.bt for `script:` and
    sets values["script"]."""
    sonde_abs = values["sonde"]
    script_path = os.path.join(tmp, "script.bt")
    if case.field("script") is not None:
        with open(script_path, "w") as f:
            f.write(substitute(case.field("script"), {"sonde": sonde_abs}))
        os.chmod(script_path, 0o755)
    values["script"] = script_path

    def words(key):
        return [substitute(w, values) for w in shlex.split(case.field(key, ""))]

    if case.field("args") is not None:
        argv = []
        for word in words("args"):
            argv.append(case.field("prog", "").rstrip("\n") if word == "{prog}" else word)
    else:
        argv = words("opts")
        if case.field("prog") is not None:
            argv += ["-e", case.field("prog").rstrip("\n")]
        elif case.field("script") is not None:
            argv.append(script_path)
        argv += words("posargs")
    # The placeholders allowed inside program text: {target_pid}, and
    # {tools} for uprobes on the compiled generators.
    argv = [a.replace("{target_pid}", values.get("target_pid", "{target_pid}"))
             .replace("{tools}", values["tools"]) for a in argv]
    if "direct" in case.flags:
        return [script_path] + words("posargs")
    return [sonde_abs] + argv


def case_env(case, values, sanitized):
    env = dict(os.environ)
    if sanitized:
        env.update(SANITIZER_ENV)
    for assignment in case.env:
        key, _, value = assignment.partition("=")
        env[key.strip()] = substitute(value, values)
    return env


def case_problems(case, code, timed_out, stdout, stderr, values, sanitized):
    """Checks exit status, stdout and stderr against the case; returns the
    problems found (stdout without the bpftrace banner)."""
    problems = []
    expected_exit = case.field("exit", "0").strip()
    if timed_out or expected_exit == "any":
        pass
    elif expected_exit == "nonzero":
        if code == 0:
            problems.append("exit code 0, expected non-zero")
    elif code != int(expected_exit):
        problems.append("exit code %d, expected %s" % (code, expected_exit))
    if "merged" in case.flags:
        stdout = stdout + ("" if stdout.endswith("\n") or not stdout else "\n") + stderr
    error = match_lines(case.stdout, stdout, case_exact(case), values)
    if error:
        problems.append("stdout: " + error)
    error = match_lines(case.stderr, stderr, False, values)
    if error:
        problems.append("stderr: " + error)
    for count_and_pattern in case.lines:
        wanted, pattern = count_and_pattern.split(" ", 1)
        low, _, high = wanted.partition("-")
        found = sum(1 for line in stdout.split("\n") if re.search(pattern, line))
        if not int(low) <= found <= int(high or low):
            problems.append("stdout: %d lines match %r, expected %s" % (found, pattern, wanted))
    if sanitized and SANITIZER_RE.search(stderr):
        problems.append("sanitizer report in stderr")
    return problems


def case_exact(case):
    return case.field("match", "contains").strip() == "exact"


def failure_details(case, argv, values, problems, stdout, stderr, extra=()):
    """The text shown under a failing case."""
    exact = case_exact(case)
    if "merged" in case.flags:
        stdout = stdout + ("" if stdout.endswith("\n") or not stdout else "\n") + stderr
    details = ["file: %s:%d" % (os.path.relpath(case.path, ROOT), case.line),
               "command: " + " ".join(shlex.quote(a) for a in argv)]
    if case.field("run"):
        details.append("generator: " + substitute(case.field("run"), values))
    details += ["problem: " + p for p in problems]
    if case.stdout:
        details.append("expected stdout (%s):\n%s"
                       % ("exact" if exact else "contains, in order",
                          indent(expectations_text(case.stdout))))
    details.append("actual stdout:\n" + indent(stdout))
    if case.stderr:
        details.append("expected stderr:\n" + indent(expectations_text(case.stderr)))
    details.append("actual stderr:\n" + indent(stderr))
    details += list(extra)
    return "\n".join(details)


def run_case(case, sonde, label, sanitized, testing_bpftrace):
    """Runs one case; returns (status, details)."""
    for need in case.needs:
        reason = unmet_need(need, testing_bpftrace)
        if reason:
            return "SKIP", reason
    if testing_bpftrace and "sonde-only" in case.flags:
        return "SKIP", "sonde-only"
    if not testing_bpftrace and "bpftrace-only" in case.flags:
        return "SKIP", "bpftrace-only"
    if not os.path.exists(sonde) and shutil.which(sonde) is None:
        return "FAIL", "no binary " + sonde

    tmp = tempfile.mkdtemp(prefix="sonde-test-")
    target = None
    try:
        sonde_abs = os.path.abspath(sonde) if os.path.exists(sonde) else shutil.which(sonde)
        values = {"tmp": tmp, "root": ROOT, "tools": TOOLS_BUILD, "sonde": sonde_abs}
        if case.field("setup"):
            prepared = subprocess.run(["sh", "-c", substitute(case.field("setup"), values)],
                                      cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if prepared.returncode != 0:
                return "FAIL", "setup exited %d: %s" % (
                    prepared.returncode, prepared.stderr.decode("utf-8", "replace").strip())
        if case.field("target"):
            target = subprocess.Popen(["sh", "-c", substitute(case.field("target"), values)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True)
            values["target_pid"] = str(target.pid)
        argv = case_command(case, values, tmp)
        env = case_env(case, values, sanitized)

        timeout = float(case.field("timeout", "10"))
        deadline = time.monotonic() + timeout
        start = time.monotonic()
        proc = Process(argv, env=env, stdin_text=case.field("stdin"), cwd=tmp)
        values["sonde_pid"] = str(proc.proc.pid)
        generator_error = None
        run_cmd = case.field("run")
        stop = case.field("stop")
        if run_cmd is not None or stop is not None:
            start_mode = case.field("start", "banner")
            if start_mode == "banner":
                if proc.attached.wait(timeout=max(deadline - time.monotonic(), 0)):
                    # bpftrace prints its banner before it attaches.
                    if testing_bpftrace:
                        time.sleep(1.0)
            else:
                time.sleep(float(start_mode))
            if proc.proc.poll() is None and run_cmd is not None:
                try:
                    gen = subprocess.run(["sh", "-c", substitute(run_cmd, values)], cwd=tmp,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         timeout=max(deadline - time.monotonic(), 0.1))
                    if gen.returncode != 0:
                        generator_error = "generator exited %d: %s" % (
                            gen.returncode, gen.stderr.decode("utf-8", "replace").strip())
                except subprocess.TimeoutExpired:
                    generator_error = "generator timed out"
            if stop is not None and proc.proc.poll() is None:
                time.sleep(float(stop))
                proc.interrupt()
                if testing_bpftrace:
                    # bpftrace 0.17 now and then misses a SIGINT that comes
                    # soon after it attached; sonde gets exactly one.
                    while proc.proc.poll() is None and time.monotonic() < deadline - 2:
                        time.sleep(2)
                        proc.interrupt()
        code, timed_out = proc.wait(deadline - time.monotonic())
        elapsed = time.monotonic() - start
        stdout = proc.stdout()
        stderr = proc.stderr()
        if case.field("output") is not None:
            try:
                with open(substitute(case.field("output"), values)) as f:
                    stdout = f.read()
            except OSError as error:
                stdout = "(cannot read output file: %s)" % error
        stdout = strip_banner(stdout, CASE_BANNER_RE)

        problems = []
        if timed_out:
            problems.append("timed out after %.1f s (killed)" % timeout)
        if generator_error:
            problems.append(generator_error)
        problems += case_problems(case, code, timed_out, stdout, stderr, values, sanitized)
        if not problems:
            return "PASS", "%.2f s" % elapsed
        return "FAIL", failure_details(case, argv, values, problems, stdout, stderr)
    finally:
        if target is not None:
            try:
                os.killpg(target.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            target.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def run_parallel(jobs, items, work):
    """Runs work(item) for each item: items flagged serial one at a time after
    the rest, which share `jobs` workers."""
    parallel = [item for item in items if not item[1]]
    serial = [item for item in items if item[1]]
    if parallel:
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            list(pool.map(lambda item: work(item[0]), parallel))
    for item in serial:
        work(item[0])


def run_runtime(report, args, binaries, testing_bpftrace):
    cases = load_cases(report)
    for source in sorted(glob.glob(os.path.join(TESTS, "tools", "*.c")) +
                         glob.glob(os.path.join(TESTS, "tools", "*.cpp"))):
        try:
            build_tool(os.path.splitext(os.path.basename(source))[0])
        except (subprocess.CalledProcessError, OSError) as error:
            report.result("FAIL", "runtime: build " + source, str(error))
    if args.filter:
        cases = [c for c in cases if args.filter in c.name]
    for binary, label, sanitized in binaries:
        if not os.path.exists(binary) and shutil.which(binary) is None:
            report.result("FAIL", "runtime[%s]: no binary %s (run make)" % (label, binary))
            continue

        def work(case, binary=binary, label=label, sanitized=sanitized):
            note = ""
            try:
                status, details = run_case(case, binary, label, sanitized, testing_bpftrace)
                # The kernel skips a probe whose event fires while another
                # BPF program runs on that CPU (another case's, on a loaded
                # machine); sonde reports it. A case that failed with such a
                # report runs once more, and says so.
                if status == "FAIL" and SKIPPED_RUNS_RE.search(details):
                    status, details = run_case(case, binary, label, sanitized, testing_bpftrace)
                    note = " (second run: the first lost probe runs)"
            except Exception as error:  # a runner bug must not hide other cases
                status, details = "FAIL", "runner error: %r" % error
            report.result(status, "runtime[%s] %s%s" % (label, case.name, note), details)
        run_parallel(args.jobs, [(c, "serial" in c.flags) for c in cases], work)


# --------------------------------------------------------------------------
# Differential tests

def header_value(text, key):
    match = re.search(r'^// %s:(.*)$' % key, text, re.M)
    return match.group(1).strip() if match else None


def expect_block(text):
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == "// expect:":
            out = []
            for follow in lines[i + 1:]:
                if follow == "//":
                    out.append("")
                elif follow.startswith("// "):
                    out.append(follow[3:])
                else:
                    break
            return "\n".join(out) + "\n"
    return None


def run_tracer(binary, argv_tail, timeout, sanitized=False):
    env = dict(os.environ)
    if sanitized:
        env.update(SANITIZER_ENV)
    proc = Process([binary] + argv_tail, env=env, cwd=ROOT)
    code, timed_out = proc.wait(timeout)
    return code, timed_out, strip_banner(proc.stdout()), proc.stderr()


def run_diff(report, args, sonde, testing_bpftrace):
    programs = sorted(glob.glob(os.path.join(TESTS, "diff", "*.bt")))
    compat = sorted(glob.glob(os.path.join(TESTS, "diff", "compat", "*.bt")))
    bpftrace = shutil.which("bpftrace")
    if not os.path.exists(sonde) and shutil.which(sonde) is None:
        report.result("FAIL", "diff: no binary %s (run make)" % sonde)
        return
    items = []
    for path in programs + compat:
        name = "diff/" + os.path.relpath(path, os.path.join(TESTS, "diff"))
        if args.filter and args.filter not in name:
            continue
        items.append(((path, name, path in compat), False))

    def work(item):
        path, name, is_compat = item
        with open(path) as f:
            text = f.read()
        extra = shlex.split(header_value(text, "args") or "")
        timeout = float(header_value(text, "timeout") or "10")
        try:
            if is_compat:
                if testing_bpftrace:
                    report.result("SKIP", name, "compat: bpftrace 0.17 prints this wrongly")
                    return
                expected = expect_block(text)
                if expected is None:
                    report.result("FAIL", name, "no // expect: block")
                    return
                expected_code = 0
            else:
                if bpftrace is None:
                    report.result("SKIP", name, "bpftrace not installed")
                    return
                expected_code, expected_timeout, expected, expected_err = run_tracer(
                    bpftrace, extra + [path], timeout)
                if expected_timeout:
                    report.result("FAIL", name, "bpftrace itself timed out\n" + indent(expected_err))
                    return
            code, timed_out, actual, stderr = run_tracer(sonde, extra + [path], timeout)
        except Exception as error:
            report.result("FAIL", name, "runner error: %r" % error)
            return
        problems = []
        if timed_out:
            problems.append("timed out after %.1f s (killed)" % timeout)
        elif code != expected_code:
            problems.append("exit code %d, expected %d" % (code, expected_code))
        if actual != expected:
            problems.append("stdout differs")
        if not problems:
            report.result("PASS", name)
            return
        details = ["command: %s %s" % (sonde, " ".join(shlex.quote(a) for a in extra + [path]))]
        details += ["problem: " + p for p in problems]
        if actual != expected:
            diff = difflib.unified_diff(expected.split("\n"), actual.split("\n"),
                                        "expected" if is_compat else "bpftrace", "sonde",
                                        lineterm="")
            details.append("diff:\n" + indent("\n".join(diff)))
        details.append("stderr:\n" + indent(stderr))
        report.result("FAIL", name, "\n".join(details))

    run_parallel(args.jobs, items, work)


# --------------------------------------------------------------------------
# Special tests

def bpftool_json(kind):
    proc = subprocess.run(["bpftool", "-j", kind, "show"], capture_output=True, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError("bpftool %s show failed: %s"
                           % (kind, proc.stderr.decode("utf-8", "replace")))
    text = proc.stdout.decode("utf-8", "replace").strip()
    return json.loads(text) if text else []


def owned_bpf_objects(pid):
    """Program and link ids held open by process pid, from /proc/PID/fdinfo."""
    progs, links, _ = bpf_objects_of([pid])
    return progs, links


def special_kill(sonde, testing_bpftrace):
    """SIGKILL after attaching leaves no program or link behind."""
    if shutil.which("bpftool") is None:
        return "SKIP", "bpftool not installed"
    events = ["sys_enter_getpid", "sys_enter_getppid", "sys_enter_getuid", "sys_enter_geteuid",
              "sys_enter_getgid", "sys_enter_getegid", "sys_enter_gettid", "sys_enter_getpgrp",
              "sys_enter_sched_yield", "sys_enter_umask", "sys_enter_sync", "sys_enter_getcwd",
              "sys_enter_getrusage", "sys_enter_times", "sys_enter_uname", "sys_enter_sysinfo",
              "sys_enter_getpriority", "sys_enter_getsid", "sys_enter_getpgid", "sys_enter_alarm",
              "sys_enter_getresuid", "sys_enter_getresgid", "sys_enter_gettimeofday",
              "sys_enter_pause", "sys_enter_getgroups"]
    events = [e for e in events
              if os.path.isdir("/sys/kernel/tracing/events/syscalls/" + e)][:20]
    program = " ".join("tracepoint:syscalls:%s { @[%d] = count(); }" % (e, i)
                       for i, e in enumerate(events))
    before_progs = {p["id"] for p in bpftool_json("prog")}
    proc = Process([sonde, "-e", program])
    if not proc.attached.wait(timeout=20):
        proc.kill()
        proc.wait(5)
        return "FAIL", "no start banner within 20 s\nstderr:\n" + indent(proc.stderr())
    time.sleep(1.5 if testing_bpftrace else 0.2)
    # Other tracers may be running on the machine: the programs to watch are
    # the new ones named sonde_* (bpftrace: any new one) that this process
    # holds, plus the links it holds.
    owned_progs, owned_links = owned_bpf_objects(proc.proc.pid)
    listed = {p["id"]: p.get("name", "") for p in bpftool_json("prog")}
    created = {pid_: name for pid_, name in listed.items() if pid_ not in before_progs}
    if testing_bpftrace:
        prog_ids = set(created) & owned_progs
    else:
        prog_ids = {i for i, name in created.items() if name.startswith("sonde_")}
        unnamed = (set(created) & owned_progs) - prog_ids
        if unnamed:
            proc.kill()
            proc.wait(5)
            return "FAIL", ("programs without the sonde_ prefix: %s"
                            % sorted(created[i] for i in unnamed))
        prog_ids &= owned_progs | {l["prog_id"] for l in bpftool_json("link")
                                   if l["id"] in owned_links}
    link_ids = set(owned_links)
    if len(prog_ids) < len(events):
        proc.kill()
        proc.wait(5)
        return "FAIL", ("expected at least %d programs of this process, found %d: %s"
                        % (len(events), len(prog_ids), sorted(created.get(i, "?")
                                                             for i in prog_ids)))
    os.kill(proc.proc.pid, signal.SIGKILL)
    proc.wait(10)
    # The kernel frees programs after an RCU grace period: poll briefly.
    for _ in range(50):
        left_progs = prog_ids & {p["id"] for p in bpftool_json("prog")}
        left_links = link_ids & {l["id"] for l in bpftool_json("link")}
        if not left_progs and not left_links:
            return "PASS", "%d programs, %d links gone" % (len(prog_ids), len(link_ids))
        time.sleep(0.1)
    return "FAIL", ("after SIGKILL still loaded: programs %s, links %s"
                    % (sorted(left_progs), sorted(left_links)))


def bpf_objects_of(pids):
    """Program, link and map ids held open by the given processes."""
    progs, links, maps = set(), set(), set()
    for pid in pids:
        fd_dir = "/proc/%d/fdinfo" % pid
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                with open(os.path.join(fd_dir, fd)) as f:
                    info = dict(line.split(":", 1) for line in f.read().splitlines()
                                if ":" in line)
            except OSError:
                continue
            if "link_id" in info:
                links.add(int(info["link_id"]))
            elif "prog_id" in info:
                progs.add(int(info["prog_id"]))
            elif "map_id" in info:
                maps.add(int(info["map_id"]))
    return progs, links, maps


def release_children(pid):
    """The sonde-release processes sonde started (children of pid)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/comm" % entry) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if int(fields[1]) == pid and comm == "sonde-release":
            found.append(int(entry))
    return found


def pid_gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


# The attach paths of issue 11, each killed at random moments: (extra
# environment, program, sonde's options, what starts the teardown).
# Teardown starts on SIGINT, or by itself: exit() in the program, or the end
# of the command of -c.
KILL_SCALE_PATHS = {
    "raw-syscalls": ({}, "tracepoint:syscalls:sys_enter_* { @[probe] = count(); }", [],
                     "sigint"),
    # points whose programs differ (mkdir's mode is not where mkdirat's
    # is): raw_syscalls through the dispatcher and its program array
    "raw-syscalls-dispatch": ({"SONDE_SYSCALL_TRACEPOINTS": "raw"},
                              "tracepoint:syscalls:sys_enter_*mkdir* "
                              "{ @[probe, args->mode] = count(); }", [], "sigint"),
    "perf-tracepoints": ({"SONDE_SYSCALL_TRACEPOINTS": "perf"},
                         "tracepoint:syscalls:sys_enter_get* { @[probe] = count(); }", [],
                         "sigint"),
    "uprobe-multi": ({}, "uprobe:{tools}/many_functions:fn_* { @[func] = count(); }", [],
                     "sigint"),
    # the fallback without uprobe_multi: one perf event per function
    "uprobe-perf": ({"SONDE_DISABLE_FEATURES": "uprobe_multi"},
                    "uprobe:{tools}/many_functions:fn_00* { @[func] = count(); }", [], "sigint"),
    "exit-teardown": ({"SONDE_SYSCALL_TRACEPOINTS": "perf"},
                      "tracepoint:syscalls:sys_enter_get* { @[probe] = count(); } "
                      "interval:ms:300 { exit(); }", [], "exit"),
    "command-teardown": ({"SONDE_SYSCALL_TRACEPOINTS": "perf"},
                         "tracepoint:syscalls:sys_enter_get* { @[probe] = count(); }",
                         ["-c", "sleep 0.3"], "command"),
}


def holds_links(pid):
    """Whether pid holds a BPF link or a perf event (an attachment)."""
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) in ("anon_inode:bpf_link",
                                                                 "anon_inode:[perf_event]"):
                    return True
            except OSError:
                pass
    except OSError:
        pass
    return False


def sonde_releases(sonde):
    """The sonde-release processes running this sonde binary."""
    found = []
    binary = os.path.realpath(sonde)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/comm" % entry) as f:
                    if f.read().strip() != "sonde-release":
                        continue
                if os.path.realpath("/proc/%s/exe" % entry) == binary:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def kill_scale_calibrate(sonde, program, options, env, trigger):
    """One undisturbed run: when the first attachment exists, when the
    banner comes, and how long the teardown lasts from its start (SIGINT,
    or the banner for a run that ends itself) until sonde and its release
    processes are gone. Returns (first_link, attached, teardown) in seconds
    or an error string."""
    proc = Process([sonde, *options, "-e", program], env=env)
    started = time.monotonic()
    first_link = None
    while not proc.attached.is_set() and time.monotonic() - started < 30:
        if first_link is None and holds_links(proc.proc.pid):
            first_link = time.monotonic() - started
        time.sleep(0.002)
    if not proc.attached.is_set():
        proc.kill()
        proc.wait(5)
        return "no start banner within 30 s\nstderr:\n" + indent(proc.stderr())
    attached = time.monotonic() - started
    before = set(sonde_releases(sonde))
    if trigger == "sigint":
        proc.interrupt()
    begun = time.monotonic()
    while time.monotonic() - begun < 60:
        # a release process outlives sonde, no longer its child
        if proc.proc.poll() is not None and not set(sonde_releases(sonde)) - before:
            break
        time.sleep(0.01)
    proc.wait(30)
    return (first_link if first_link is not None else attached * 0.5, attached,
            time.monotonic() - begun)


def special_kill_scale(sonde, testing_bpftrace, path, kills=20):
    """SIGKILL at random moments while a path attaches (the first half of
    the kills: between the first attachment and just after the banner) and
    while it tears down (the second half: anywhere from the start of the
    teardown to the end of the release, as long as one undisturbed run's
    took; sonde if it is still there and the sonde-release processes, all
    of them late in the window, every other one early). Every program,
    link and map the processes held is gone once they are. A path whose
    teardown starts by itself (exit(), -c) is killed during teardown only.

    Each victim is stopped (SIGSTOP) before its open BPF objects are read,
    so that the list is complete when SIGKILL comes."""
    if testing_bpftrace:
        return "SKIP", "sonde's attach paths"
    if shutil.which("bpftool") is None:
        return "SKIP", "bpftool not installed"
    import random
    env_extra, program, options, trigger = KILL_SCALE_PATHS[path]
    program = program.replace("{tools}", os.path.dirname(build_tool("many_functions")))
    env = dict(os.environ, **env_extra)
    rng = random.Random(11)
    calibration = kill_scale_calibrate(sonde, program, options, env, trigger)
    if isinstance(calibration, str):
        return "FAIL", calibration
    first_link, attach_time, teardown_time = calibration
    held = {"progs": set(), "links": set(), "maps": set()}
    moments = []
    attach_kills = kills // 2 if trigger == "sigint" else 0
    for kill in range(kills):
        during_attach = kill < attach_kills
        proc = Process([sonde, *options, "-e", program], env=env)
        victims = [proc.proc.pid]
        releases = []
        if during_attach:
            # from the first link to a little after the banner
            delay = rng.uniform(first_link, attach_time * 1.1)
            time.sleep(delay)
        else:
            if not proc.attached.wait(timeout=30):
                proc.kill()
                proc.wait(5)
                return "FAIL", "no start banner within 30 s\nstderr:\n" + indent(proc.stderr())
            if trigger == "sigint":
                proc.interrupt()
            # early in the window every other time, else anywhere in it
            delay = rng.uniform(0, min(teardown_time, 0.1) if kill % 2 else teardown_time)
            begun = time.monotonic()
            while time.monotonic() - begun < delay:
                releases += [p for p in release_children(proc.proc.pid) if p not in releases]
                time.sleep(0.005)
            victims += [p for p in releases if not pid_gone(p)]
        moments.append("%s+%.3fs" % ("attach" if during_attach else "teardown", delay))
        for pid in victims:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        # the release children of a stopped sonde are its own until it dies
        victims += [p for p in release_children(proc.proc.pid) if p not in victims]
        victims = [p for p in victims if not pid_gone(p)]
        progs, links, maps = bpf_objects_of(victims)
        held["progs"] |= progs
        held["links"] |= links
        held["maps"] |= maps
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(30)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all(pid_gone(p) for p in victims):
            time.sleep(0.05)
        if not all(pid_gone(p) for p in victims):
            return "FAIL", "kill %d (%s): processes %s still there after 120 s" % (
                kill, moments[-1], [p for p in victims if not pid_gone(p)])
    # The kernel frees programs and maps after an RCU grace period: poll.
    for _ in range(100):
        left_progs = held["progs"] & {p["id"] for p in bpftool_json("prog")}
        left_links = held["links"] & {l["id"] for l in bpftool_json("link")}
        left_maps = held["maps"] & {m["id"] for m in bpftool_json("map")}
        if not left_progs and not left_links and not left_maps:
            return "PASS", ("first link at %.3fs, banner at %.3fs, teardown %.3fs; "
                            "%d kills (%s); %d programs, %d links, %d maps gone"
                            % (first_link, attach_time, teardown_time,
                               kills, ", ".join(moments), len(held["progs"]),
                               len(held["links"]), len(held["maps"])))
        time.sleep(0.2)
    return "FAIL", ("after the kills still loaded: programs %s, links %s, maps %s"
                    % (sorted(left_progs)[:20], sorted(left_links)[:20], sorted(left_maps)[:20]))


def build_tool(name, directory="tools", flags=()):
    """Compiles tests/DIRECTORY/NAME.c (or NAME.cpp, with the C++ compiler) to
    build/tests/tools/NAME if it is stale."""
    source = os.path.join(TESTS, directory, name + ".c")
    compiler = "cc"
    if not os.path.exists(source) and os.path.exists(source + "pp"):
        source, compiler = source + "pp", "c++"
    binary = os.path.join(TOOLS_BUILD, name)
    # the flags a binary was built with sit beside it, so that a generator
    # built first with the defaults is rebuilt for a caller with its own
    command = [compiler, "-O2", "-Wall"] + list(flags) + ["-o", binary, source]
    stamp = binary + ".flags"
    try:
        with open(stamp) as f:
            same_flags = f.read() == " ".join(command)
    except OSError:
        same_flags = False
    if same_flags and os.path.exists(binary) and os.path.getmtime(binary) >= os.path.getmtime(source):
        return binary
    os.makedirs(TOOLS_BUILD, exist_ok=True)
    subprocess.run(command, check=True)
    with open(stamp, "w") as f:
        f.write(" ".join(command))
    return binary


def special_lost(sonde, testing_bpftrace, sanitized):
    """Every getppid call is either printed or counted as lost."""
    if testing_bpftrace:
        return "SKIP", "SONDE_RINGBUF_SIZE is sonde's"
    calls = 20000
    generator = build_tool("getppid_loop")
    program = ('tracepoint:syscalls:sys_enter_getppid /comm == "getppid_loop"/ '
               '{ printf("%d %s\\n", pid, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"); }')
    env = dict(os.environ, SONDE_RINGBUF_SIZE="4096")
    if sanitized:
        env.update(SANITIZER_ENV)
    # One CPU for both: sonde reads only while the generator is off it, so
    # the ring overflows however fast the reader is (on two CPUs a quick
    # reader on a quiet machine kept up with all 20000).
    proc = Process(["taskset", "-c", "0", sonde, "-e", program], env=env)
    if not proc.attached.wait(timeout=20):
        proc.kill()
        proc.wait(5)
        return "FAIL", "no start banner within 20 s\nstderr:\n" + indent(proc.stderr())
    subprocess.run(["taskset", "-c", "0", generator, str(calls)], check=True, timeout=60)
    time.sleep(1.0)
    proc.interrupt()
    code, timed_out = proc.wait(15)
    printed = sum(1 for line in proc.stdout_lines
                  if re.fullmatch(r'\d+ x{40}\n', line))
    lost = [int(n) for n in re.findall(r'Lost (\d+) events', proc.stderr())]
    details = "calls %d, printed %d, lost reports %s, exit %d" % (calls, printed, lost, code)
    if timed_out:
        return "FAIL", "did not exit after SIGINT; " + details
    if sanitized and SANITIZER_RE.search(proc.stderr()):
        return "FAIL", "sanitizer report\n" + indent(proc.stderr())
    if not lost:
        return "FAIL", "no `Lost N events` reported with a 4096-byte ring buffer; " + details
    # Either each report is an increment (they add up), or the last is the total.
    if printed + sum(lost) == calls or printed + lost[-1] == calls:
        return "PASS", details
    return "FAIL", details


def special_exit_flood(sonde, testing_bpftrace, sanitized):
    """exit() behind a flood: the 20000th of 20000 getppid calls exits while a
    slow reader keeps the 4 KiB ring buffer full, so exit()'s ring record is
    dropped. The run must still end within 1 s of the reader catching up,
    and every call be printed or counted lost."""
    if testing_bpftrace:
        return "SKIP", "SONDE_RINGBUF_SIZE is sonde's (bpftrace 0.17 hangs here)"
    calls = 20000
    work = tempfile.mkdtemp(prefix="sonde-exitflood-")
    generator = os.path.join(work, "exitflood")
    shutil.copy(build_tool("getppid_loop"), generator)
    program = ('tracepoint:syscalls:sys_enter_getppid /comm == "exitflood"/ '
               '{ @n = count(); printf("%d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n", @n); '
               'if (@n == ' + str(calls) + ') { exit(3); } }')
    env = dict(os.environ, SONDE_RINGBUF_SIZE="4096")
    if sanitized:
        env.update(SANITIZER_ENV)
    # stdout is not read until the flood is over: sonde blocks writing, the
    # ring stays full
    proc = subprocess.Popen([sonde, "-e", program], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    stderr_lines, attached = [], threading.Event()
    reader = read_stderr_lines(proc, stderr_lines, attached)
    try:
        if not attached.wait(timeout=20):
            return "FAIL", "no start banner within 20 s\nstderr:\n" + indent("".join(stderr_lines))
        subprocess.run([generator, str(calls)], check=True, timeout=60)
        time.sleep(1.0)
        started = time.monotonic()
        chunks = []
        catch_up = threading.Thread(target=lambda: chunks.append(proc.stdout.read()), daemon=True)
        catch_up.start()
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "FAIL", "exit() behind a flood did not end the run within 5 s"
        elapsed = time.monotonic() - started
        catch_up.join(timeout=5)
        reader.join(timeout=5)
        stdout = b"".join(chunks).decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    stderr = "".join(stderr_lines)
    printed = sum(1 for line in stdout.splitlines() if re.fullmatch(r"\d+ x{40}", line))
    lost = [int(n) for n in re.findall(r"Lost (\d+) events", stderr)]
    accounted = printed + (lost[-1] if len(lost) > 1 else sum(lost))
    details = "calls %d, printed %d, lost reports %s, exit %d, %.2f s after the reader caught up" % (
        calls, printed, lost, code, elapsed)
    if sanitized and SANITIZER_RE.search(stderr):
        return "FAIL", "sanitizer report\n" + indent(stderr)
    if not lost:
        return "FAIL", "the ring buffer never filled, the case proves nothing; " + details
    if elapsed >= 1.0 or code != 3 or accounted != calls:
        return "FAIL", details
    return "PASS", details


LIMITS_UNROLL3 = "BEGIN { unroll(100) { unroll(100) { unroll(100) { @x++; } } } exit(); }"
LIMITS_UNROLL5 = ("BEGIN { unroll(100) { unroll(100) { unroll(100) { unroll(100) { unroll(100) "
                  "{ @x++; } } } } } exit(); }")


def limits_run(argv, env, stdin_kind, timeout=20, max_files=None):
    """Runs sonde to its end; returns (exit status, seconds, peak RSS in KiB,
    stderr). stdin_kind: None, "dev-zero" (stdin is /dev/zero) or "pipe"
    (an endless pipe of zero bytes). max_files: its RLIMIT_NOFILE, soft and
    hard. The peak comes from tools/peak_rss.c: measured from here, a
    child's ru_maxrss starts at this Python process's size."""
    stdin = subprocess.DEVNULL
    if stdin_kind == "dev-zero":
        stdin = open("/dev/zero", "rb")
    elif stdin_kind == "pipe":
        stdin = subprocess.PIPE
    rss_file = tempfile.NamedTemporaryFile(prefix="sonde-rss-", delete=False)
    rss_file.close()

    def prepare():
        os.setsid()
        if max_files:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max_files, max_files))
    start = time.monotonic()
    proc = subprocess.Popen([build_tool("peak_rss"), rss_file.name] + argv, env=env, stdin=stdin,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=prepare)
    if stdin_kind == "dev-zero":
        stdin.close()

    def feed():
        block = b"\0" * 65536
        try:
            while True:
                proc.stdin.write(block)
        except (BrokenPipeError, ValueError, OSError):
            pass
    if stdin_kind == "pipe":
        threading.Thread(target=feed, daemon=True).start()
    stderr_chunks = []
    reader = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read()),
                              daemon=True)
    reader.start()
    timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    code = proc.wait()
    timer.cancel()
    elapsed = time.monotonic() - start
    reader.join(5)
    try:
        with open(rss_file.name) as f:
            rss = int(f.read())
    except ValueError:
        rss = -1    # killed before it could say
    os.unlink(rss_file.name)
    return code, elapsed, rss, b"".join(stderr_chunks).decode(errors="replace")


def special_limits(sonde, testing_bpftrace, sanitized):
    """Programs that would cost without bound (nested unrolls, /dev/zero or
    an endless pipe as the source, a 1 GiB file, 500,000 probes, 2,000
    kaddr()) are refused with one clear error within a second and under
    100 MB of memory (the unrolls under 10 MB)."""
    if testing_bpftrace:
        return "SKIP", "bpftrace 0.17 has no such limits"
    env = dict(os.environ)
    if sanitized:
        env.update(SANITIZER_ENV)
    # The sanitizer build runs a few times slower; the bound is about the
    # order of magnitude (the unfixed sonde took minutes and gigabytes).
    time_limit = 3.0 if sanitized else 1.0
    tmp = tempfile.mkdtemp(prefix="sonde-limits-")
    huge = os.path.join(tmp, "huge.bt")
    with open(huge, "wb") as f:
        f.truncate(1 << 30)
    # each kaddr() used to read all of /proc/kallsyms again (the fuzzer's
    # 10 s timeout); now it is read once
    kaddrs = os.path.join(tmp, "kaddrs.bt")
    with open(kaddrs, "w") as f:
        f.write("BEGIN {\n%s exit(); }\n" % "".join(
            '  printf("%%d", kaddr("nosuch%d"));\n' % i for i in range(2000)))
    # 500,000 action blocks fill the 4 MiB source cap; each would be a
    # program of its own (unfixed: 16 s, 600 MB, then "Too many open files")
    blocks = os.path.join(tmp, "blocks.bt")
    with open(blocks, "w") as f:
        f.write("BEGIN{}\n" * 500000)
    few_blocks = os.path.join(tmp, "few_blocks.bt")
    with open(few_blocks, "w") as f:
        f.write("BEGIN {}\n" * 100)

    def case(label, argv, expect, stdin=None, slack=1, max_files=None, rss_mb=100):
        return dict(label=label, argv=argv, expect=expect, stdin=stdin, slack=slack,
                    max_files=max_files, rss_mb=rss_mb)
    # the unrolls are refused from one copy of the innermost body: nothing
    # beyond the sanitizer's own few tens of MB (generating a first copy of
    # the outer bodies, as before, took 21 MB in the normal build)
    unroll_mb = 40 if sanitized else 10
    cases = [
        case("unroll 3 levels", ["-e", LIMITS_UNROLL3], r"stdin:1:9: error: unroll\(100\)",
             rss_mb=unroll_mb),
        case("unroll 5 levels", ["-e", LIMITS_UNROLL5], r"stdin:1:37: error: unroll\(100\)",
             rss_mb=unroll_mb),
        case("/dev/zero", ["/dev/zero"], r"cannot read the program from /dev/zero: it is a device"),
        case("/dev/urandom", ["/dev/urandom"], r"from /dev/urandom: it is a device"),
        case("- < /dev/zero", ["-"], r"from stdin: it is a device", stdin="dev-zero"),
        case("endless pipe", ["-"], r"from stdin: it is larger than \d+ MiB", stdin="pipe"),
        case("1 GiB file", [huge], r"huge.bt: it is larger than \d+ MiB"),
        # one read of kallsyms is kernel time that grows with the machine's
        # load: a wider bound (unfixed: more than a minute)
        case("2,000 kaddr()", [kaddrs], r"kaddrs.bt:2:22: error: kernel symbol 'nosuch0' not found",
             slack=5),
        case("500,000 probes", [blocks],
             r"blocks.bt:4097:1: error: too many probes \(this is probe 4097; at most 4096"),
        # fewer descriptors than probes: said so, not blamed on the verifier
        case("100 probes, 40 files", [few_blocks],
             r"cannot load probe BEGIN: no file descriptor left \(Too many open files; this "
             r"process may open 40 files", max_files=40),
    ]
    problems, measured = [], []
    try:
        for c in cases:
            label, expected = c["label"], c["expect"]
            case_limit = time_limit * c["slack"]
            code, elapsed, rss, stderr = limits_run([sonde] + c["argv"], env, c["stdin"],
                                                    max_files=c["max_files"])
            measured.append("%s: %.2f s, %d KiB" % (label, elapsed, rss))
            if code == 0 or code < 0:
                problems.append("%s: exit status %d" % (label, code))
            if not re.search(expected, stderr):
                problems.append("%s: stderr lacks /%s/:\n%s" % (label, expected, indent(stderr)))
            if elapsed > case_limit:
                problems.append("%s: took %.2f s (limit %.0f s)" % (label, elapsed, case_limit))
            if rss < 0 or rss > c["rss_mb"] * 1024:
                problems.append("%s: peak RSS %d KiB (limit %d MiB)" % (label, rss, c["rss_mb"]))
            if sanitized and SANITIZER_RE.search(stderr):
                problems.append("%s: sanitizer report\n%s" % (label, indent(stderr)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    details = "; ".join(measured)
    if problems:
        return "FAIL", "\n".join(problems) + "\n" + details
    return "PASS", details


def lost_increments(stderr):
    """The `Lost N events` reports (increments; the final total left out)."""
    return [int(n) for n in re.findall(r'^Lost (\d+) events$', stderr, re.M)]


def sonde_env(sanitized):
    """The environment to run sonde in: the sanitizers' options for a
    sanitized build."""
    env = dict(os.environ)
    if sanitized:
        env.update(SANITIZER_ENV)
    return env


def read_stderr_lines(proc, lines, attached):
    """A started thread that appends proc's stderr lines to lines and sets
    the event attached at the start banner."""
    def read():
        for raw in iter(proc.stderr.readline, b""):
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if BANNER_RE.match(line.rstrip("\n")):
                attached.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def getppid_counter(tmp, name, sanitized):
    """getppid_loop copied to tmp/NAME, a program that prints `e N` for each
    of its calls and counts them in @n, and the environment to run sonde in."""
    generator = os.path.join(tmp, name)
    shutil.copy(build_tool("getppid_loop"), generator)
    program = ('tracepoint:syscalls:sys_enter_getppid /comm == "%s"/ '
               '{ @n = count(); printf("e %%d\\n", @n); }' % name)
    return generator, program, sonde_env(sanitized)


def special_slow_reader(sonde, testing_bpftrace, sanitized, sondes=1):
    """SIGINT while sonde's writes are blocked on a reader that does not
    read yet: once the reader catches up, every event is printed or reported
    lost, and @n (its own count) agrees. With sondes=8, eight run at once."""
    if testing_bpftrace:
        return "SKIP", "counts sonde's Lost reports"
    calls = 20000
    tmp = tempfile.mkdtemp(prefix="sonde-slow-")
    generator, program, env = getppid_counter(tmp, "slowread%d" % sondes, sanitized)
    gate = threading.Event()
    procs = [Process([sonde, "-e", program], env=env, stdout_gate=gate) for _ in range(sondes)]
    try:
        for proc in procs:
            if not proc.attached.wait(timeout=60):
                return "FAIL", "no start banner within 60 s\nstderr:\n" + indent(proc.stderr())
        subprocess.run([generator, str(calls)], check=True, timeout=60)
        time.sleep(0.5)
        for proc in procs:
            proc.interrupt()
        time.sleep(1.0)
    finally:
        gate.set()
    problems, summary = [], []
    for i, proc in enumerate(procs):
        code, timed_out = proc.wait(60)
        printed = sum(1 for line in proc.stdout_lines if re.fullmatch(r'e \d+\n', line))
        counted = [int(n) for line in proc.stdout_lines
                   for n in re.findall(r'^@n: (\d+)$', line)]
        lost = sum(lost_increments(proc.stderr()))
        details = "sonde %d: printed %d, lost %d, @n %s, exit %d" % (i, printed, lost, counted, code)
        summary.append(details)
        if timed_out or code != 0 or counted != [calls] or printed + lost != calls:
            problems.append(details)
        if sanitized and SANITIZER_RE.search(proc.stderr()):
            problems.append("sanitizer report\n" + indent(proc.stderr()))
    shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        return "FAIL", "generated %d each\n%s" % (calls, "\n".join(problems))
    return "PASS", "\n".join(summary)


def libc_path():
    """The C library the generators link, as a uprobe's path."""
    out = subprocess.run(["ldd", build_tool("malloc_loop")], capture_output=True, text=True).stdout
    found = re.search(r"libc\.so\.6 => (\S+)", out)
    return os.path.realpath(found.group(1)) if found else None


def special_stop_under_flood(sonde, testing_bpftrace, sanitized):
    """A uprobe on libc's malloc that prints every call, flooded by two
    processes: SIGINT stops sonde within a second (the drains have a budget
    and a stop goes first), what was not printed is reported (Lost N events,
    or N events not printed), and sonde's own mallocs are not traced (the
    feedback loop that made it unstoppable: none of its lines name it)."""
    if testing_bpftrace:
        return "SKIP", "bpftrace 0.17 traces its own mallocs"
    libc = libc_path()
    if not libc:
        return "SKIP", "no libc.so.6 in ldd's output"
    tmp = tempfile.mkdtemp(prefix="sonde-flood-")
    generator = os.path.join(tmp, "mflood")
    shutil.copy(build_tool("malloc_loop"), generator)
    out = os.path.join(tmp, "out")
    env = sonde_env(sanitized)
    program = 'uprobe:%s:malloc { printf("%%s %%d\\n", comm, pid); }' % libc
    proc = Process([sonde, "-o", out, "-e", program], env=env)
    floods = []
    try:
        if not proc.attached.wait(timeout=60):
            return "FAIL", "no start banner within 60 s\nstderr:\n" + indent(proc.stderr())
        floods = [subprocess.Popen([generator, "30"], stdout=subprocess.DEVNULL)
                  for _ in range(2)]
        time.sleep(2.0)
        start = time.monotonic()
        proc.interrupt()
        code, timed_out = proc.wait(20)
        took = time.monotonic() - start
    finally:
        for flood in floods:
            flood.kill()
            flood.wait()
    stderr = proc.stderr()
    # other sondes may run beside this one: its own lines are told by pid
    counts, own = {}, 0
    with open(out, errors="replace") as f:
        for line in f:
            words = line.split()
            counts[words[0] if words else ""] = counts.get(words[0] if words else "", 0) + 1
            own += len(words) == 2 and words[1] == str(proc.proc.pid)
    shutil.rmtree(tmp, ignore_errors=True)
    lost = sum(lost_increments(stderr))
    unprinted = sum(int(n) for n in re.findall(r"^sonde: (\d+) events were not printed", stderr, re.M))
    details = "stopped in %.2f s, exit %s, printed %d lines (mflood %d, sonde's own %d), " \
        "lost %d, not printed %d" % (took, code, sum(counts.values()), counts.get("mflood", 0),
                                     own, lost, unprinted)
    if timed_out or code != 0 or took > 1.0:
        return "FAIL", details + "\nstderr:\n" + indent(stderr[-2000:])
    if counts.get("mflood", 0) == 0 or lost + unprinted == 0:
        return "FAIL", "expected mflood's lines and a loss report: " + details
    if own:
        return "FAIL", "sonde traced its own mallocs: " + details
    if sanitized and SANITIZER_RE.search(stderr):
        return "FAIL", "sanitizer report\n" + indent(stderr)
    return "PASS", details


def special_stop_trickle_reader(sonde, testing_bpftrace, sanitized):
    """SIGINT with 20,000 lines waiting and a reader that takes 4 KiB every
    100 ms: sonde prints for a moment, then consumes the rest unprinted and
    says how many, and exits within about a second. Every event is printed,
    reported lost, or reported not printed; @n (its own count) agrees."""
    if testing_bpftrace:
        return "SKIP", "counts sonde's reports"
    calls = 20000
    tmp = tempfile.mkdtemp(prefix="sonde-trickle-")
    generator, program, env = getppid_counter(tmp, "trickle", sanitized)
    proc = subprocess.Popen([sonde, "-e", program], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    chunks, errors = [], []
    attached = threading.Event()

    def read_stdout():
        attached.wait()
        while True:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                return
            chunks.append(chunk)
            time.sleep(0.1)

    readers = [threading.Thread(target=read_stdout, daemon=True)]
    readers[0].start()
    readers.append(read_stderr_lines(proc, errors, attached))
    try:
        if not attached.wait(timeout=60):
            proc.kill()
            return "FAIL", "no start banner within 60 s\nstderr:\n" + indent("".join(errors))
        subprocess.run([generator, str(calls)], check=True, timeout=60)
        time.sleep(0.1)
        start = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=30)
        took = time.monotonic() - start
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return "FAIL", "sonde did not stop within 30 s of SIGINT"
    finally:
        for reader in readers:
            reader.join(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    stdout = b"".join(chunks).decode("utf-8", "replace")
    stderr = "".join(errors)
    printed = len(re.findall(r"^e \d+$", stdout, re.M))
    counted = [int(n) for n in re.findall(r"^@n: (\d+)$", stdout, re.M)]
    lost = sum(lost_increments(stderr))
    unprinted = sum(int(n) for n in re.findall(r"^sonde: (\d+) events were not printed", stderr, re.M))
    details = "stopped in %.2f s, exit %d, printed %d, lost %d, not printed %d, @n %s" % (
        took, code, printed, lost, unprinted, counted)
    # 150 KiB of lines at 40 KiB/s: more than a second's worth; the last of
    # what was printed waits in the pipe after sonde has gone
    if code != 0 or took > 1.5 or counted != [calls] or printed + lost + unprinted != calls \
            or unprinted == 0:
        return "FAIL", details + "\nstderr:\n" + indent(stderr[-2000:])
    if sanitized and SANITIZER_RE.search(stderr):
        return "FAIL", "sanitizer report\n" + indent(stderr)
    return "PASS", details


def special_output_files_hostile(sonde, testing_bpftrace, sanitized):
    """Every file sonde writes (--svg, --heatmap, -o) goes where the user
    meant and nowhere else, all inside a temporary directory: a FIFO with no
    reader is refused before tracing and one with a reader gets the whole
    picture; a symbolic link to a file is neither followed nor replaced;
    symbolic links planted at the temporary names sonde once used
    (FILE.tmpPID) are left alone and every file sonde creates there is
    created exclusively (strace); a private copy of /dev/full stays a device
    and the failed write exits non-zero; /dev/stdout writes into sonde's
    stdout; a directory is refused. Each refusal is one sentence naming the
    option, and nothing is attached for it. (A link to /proc/self/fd/1 made
    in the directory stands for /dev/stdout, which an old build replaced.)"""
    if testing_bpftrace:
        return "SKIP", "sonde's tools and their --svg"
    env = sonde_env(sanitized)
    tmp = tempfile.mkdtemp(prefix="sonde-outfiles-")
    problems, summary = [], []

    def path(name):
        return os.path.join(tmp, name)

    def run(label, argv, expect_code, expect_stderr, refused_early=False, stdout=None,
            prefix=()):
        run_env = dict(env)
        if prefix and sanitized:
            # LeakSanitizer cannot work under ptrace
            run_env["ASAN_OPTIONS"] = run_env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        proc = subprocess.run(list(prefix) + [sonde] + argv, env=run_env, stdin=subprocess.DEVNULL,
                              stdout=stdout or subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=60, cwd=tmp)
        stderr = proc.stderr.decode("utf-8", "replace")
        summary.append("%s: exit %d" % (label, proc.returncode))
        if (proc.returncode == 0) != (expect_code == 0) or not re.search(expect_stderr, stderr):
            problems.append("%s: exit %d, expected %s and stderr matching %r:\n%s" % (
                label, proc.returncode, "0" if expect_code == 0 else "non-zero", expect_stderr,
                indent(stderr)))
        if refused_early and "Attached" in stderr:
            problems.append("%s: refused only after attaching:\n%s" % (label, indent(stderr)))
        if sanitized and SANITIZER_RE.search(stderr):
            problems.append("%s: sanitizer report\n%s" % (label, indent(stderr)))
        return stderr

    svg = ["profile", "-F", "49", "--svg"]
    once = ["-e", 'BEGIN { printf("written\\n"); exit(); }']
    try:
        os.mkfifo(path("fifo"))
        run("fifo without reader", svg + ["fifo", "1"], 1,
            r"^sonde: --svg fifo: no process has the FIFO open for reading$", refused_early=True)
        reader = subprocess.Popen(["cat", path("fifo")], stdout=subprocess.PIPE)
        time.sleep(0.2)
        run("fifo with reader", svg + ["fifo", "1"], 0, r"Wrote a flame graph .* to fifo")
        got = reader.communicate(timeout=30)[0].decode("utf-8", "replace")
        if not got.rstrip().endswith("</svg>") or got.count("<svg") != 1:
            problems.append("fifo with reader: not one whole SVG (%d bytes)" % len(got))
        if not stat.S_ISFIFO(os.lstat(path("fifo")).st_mode):
            problems.append("the FIFO was replaced")

        with open(path("victim"), "w") as f:
            f.write("keep\n")
        os.symlink("victim", path("link"))
        run("svg through a link", svg + ["link", "1"], 1,
            r"^sonde: --svg link: is a symbolic link; .*name the file itself$", refused_early=True)
        run("-o through a link", ["-o", "link"] + once, 1,
            r"^sonde: -o link: is a symbolic link; .*name the file itself$", refused_early=True)
        run("heatmap through a link", ["runqlat", "--heatmap", "link", "1", "1"], 1,
            r"^sonde: --heatmap link: is a symbolic link", refused_early=True)
        if open(path("victim")).read() != "keep\n" or not os.path.islink(path("link")):
            problems.append("the link or its target changed")

        # the names the old code wrote first, for the next thousand pids
        first = int(open("/proc/sys/kernel/ns_last_pid").read())
        for pid in range(first, first + 1000):
            os.symlink("victim", path("out.svg.tmp%d" % pid))
        trace = path("strace.out")
        run("planted links", svg + [path("out.svg"), "1"], 0, r"Wrote a flame graph .* to /.*/out\.svg",
            prefix=["strace", "-f", "-qq", "-e", "trace=openat,open,creat", "-o", trace])
        if open(path("victim")).read() != "keep\n":
            problems.append("a planted link was followed")
        if not open(path("out.svg")).read().rstrip().endswith("</svg>"):
            problems.append("out.svg is not a whole SVG")
        creates = [line for line in open(trace) if "O_CREAT" in line and tmp in line]
        loose = [line for line in creates if "O_EXCL" not in line]
        summary.append("planted links: %d files created in the directory, %d not exclusively"
                       % (len(creates), len(loose)))
        if not creates or loose:
            problems.append("files created without O_EXCL:\n" + indent("".join(loose)))

        os.mknod(path("full"), 0o600 | stat.S_IFCHR, os.makedev(1, 7))
        run("a copy of /dev/full", svg + ["full", "1"], 1,
            r"writing the flame graph to full failed: No space left on device")
        run("-o a copy of /dev/full", ["-o", "full"] + once, 1,
            r"writing to full failed: No space left on device")
        if not stat.S_ISCHR(os.lstat(path("full")).st_mode):
            problems.append("the device was replaced")

        # /dev/stdout's own kind of link, made here: a build that replaces
        # links must not get the chance to replace the system's
        os.symlink("/proc/self/fd/1", path("my-stdout"))
        with open(path("stdout"), "wb") as out:
            run("a link to stdout", svg + ["my-stdout", "1"], 0,
                r"Wrote a flame graph .* to my-stdout", stdout=out)
        text = open(path("stdout")).read()
        if text.count("<svg") != 1 or not text.rstrip().endswith("</svg>"):
            problems.append("a link to stdout: not one whole SVG in stdout")
        if not os.path.islink(path("my-stdout")) or os.readlink(path("my-stdout")) != "/proc/self/fd/1":
            problems.append("the link to stdout was replaced")

        os.mkdir(path("dir"))
        run("a directory", svg + ["dir", "1"], 1, r"^sonde: --svg dir: is a directory$",
            refused_early=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        return "FAIL", "\n".join(problems)
    return "PASS", "\n".join(summary)


def special_write_errors(sonde, testing_bpftrace, sanitized):
    """A write that fails (a full file system as -o, /dev/full, a closed
    stdout) is said once, with what failed and why, and the exit status is
    not 0."""
    if testing_bpftrace:
        return "SKIP", "bpftrace 0.17 exits 0 after failed writes"
    env = dict(os.environ)
    if sanitized:
        env.update(SANITIZER_ENV)
    lines = ('BEGIN { $i = 0; while ($i < 3000) { printf("line %d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n", $i); '
             '$i++; } exit(); }')
    tmp = tempfile.mkdtemp(prefix="sonde-write-")
    small = os.path.join(tmp, "small")
    os.mkdir(small)
    problems, summary = [], []

    def check(label, argv, expect, **redirect):
        proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=30, **redirect)
        stderr = proc.stderr.decode("utf-8", "replace")
        said = [line for line in stderr.splitlines() if "failed" in line]
        summary.append("%s: exit %d, %s" % (label, proc.returncode, said))
        if proc.returncode == 0 or len(said) != 1 or not re.search(expect, said[0]):
            problems.append("%s: exit %d, expected one line matching %r; stderr:\n%s"
                            % (label, proc.returncode, expect, indent(stderr)))
        if sanitized and SANITIZER_RE.search(stderr):
            problems.append("%s: sanitizer report\n%s" % (label, indent(stderr)))

    try:
        with open("/dev/full", "w") as full:
            check("> /dev/full", [sonde, "-e", lines],
                  r"writing to stdout failed: No space left on device", stdout=full)
        check(">&-", [sonde, "-e", lines], r"writing to stdout failed: Bad file descriptor",
              preexec_fn=lambda: os.close(1))
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small]).returncode:
            problems.append("cannot mount a 64k tmpfs")
        else:
            try:
                out = os.path.join(small, "out.txt")
                check("-o on a full tmpfs", [sonde, "-o", out, "-e", lines],
                      r"writing to %s failed: No space left on device" % re.escape(out),
                      stdout=subprocess.DEVNULL)
            finally:
                subprocess.run(["umount", small])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        return "FAIL", "\n".join(problems)
    return "PASS", "\n".join(summary)


def special_output_kept(sonde, testing_bpftrace, sanitized):
    """A run that fails in the verifier leaves its -o file as it was: the
    file is opened (and truncated) only once the programs are loaded."""
    if testing_bpftrace:
        return "SKIP", "bpftrace 0.17 truncates the file first"
    env = dict(os.environ)
    if sanitized:
        env.update(SANITIZER_ENV)
    tmp = tempfile.mkdtemp(prefix="sonde-keep-")
    keep = os.path.join(tmp, "keep.txt")
    try:
        with open(keep, "w") as f:
            f.write("important\n")
        proc = subprocess.run([sonde, "-o", keep, "-e",
                               "BEGIN { $i = 0; while (1) { $i++; } exit(); }"],
                              env=env, capture_output=True, timeout=60)
        with open(keep) as f:
            kept = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    details = "verifier failure with -o: exit %d, file now %r" % (proc.returncode, kept)
    if sanitized and SANITIZER_RE.search(proc.stderr.decode("utf-8", "replace")):
        return "FAIL", "sanitizer report\n" + indent(proc.stderr.decode("utf-8", "replace"))
    if proc.returncode == 0 or kept != "important\n":
        return "FAIL", details
    return "PASS", details


def special_non_root(sonde, testing_bpftrace, sanitized):
    """As an unprivileged user (nobody), listing probes, a program using
    kaddr(), a program with -o FILE and a tool each say the one root
    sentence and nothing else, exit 1, and create no file."""
    if testing_bpftrace:
        return "SKIP", "sonde's sentence"
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "SKIP", "needs root and setpriv to become nobody"
    sentence = "sonde must run as root (or with CAP_BPF and CAP_PERFMON)"
    env = dict(os.environ)
    if sanitized:
        env.update(SANITIZER_ENV)
    tmp = tempfile.mkdtemp(prefix="sonde-nobody-")
    os.chmod(tmp, 0o777)
    out = os.path.join(tmp, "out.txt")
    runs = [["-l", "tracepoint:sched:*"],
            ["-e", 'BEGIN { printf("%x\\n", kaddr("jiffies")); exit(); }'],
            ["-o", out, "-e", "BEGIN { exit(); }"],
            ["execsnoop"]]
    problems = []
    try:
        for words in runs:
            proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                   sonde] + words, env=env, cwd=tmp, capture_output=True,
                                  text=True, timeout=30)
            if proc.returncode != 1 or proc.stderr.strip() != sentence or proc.stdout:
                problems.append("%s: exit %d, stdout %r, stderr:\n%s"
                                % (shlex.join(words), proc.returncode, proc.stdout,
                                   indent(proc.stderr)))
        if os.path.exists(out):
            problems.append("-o created %s before the root check" % out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        return "FAIL", "\n".join(problems)
    return "PASS", "%d command lines, one sentence each" % len(runs)


def special_uprobes(sonde, testing_bpftrace, sanitized):
    """tests/uprobe/check.sh: uprobes, uretprobes and USDT on programs it
    builds (PIE and not, a shared library, semaphores), each check a
    real attach with real events; all of them must pass."""
    if testing_bpftrace:
        return "SKIP", "sonde's own spellings and errors"
    env = dict(os.environ, SONDE=sonde)
    result = subprocess.run(["sh", os.path.join(TESTS, "uprobe", "check.sh")], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=600)
    summary = re.search(r"^(\d+) passed, (\d+) failed$", result.stdout, re.M)
    if sanitized and SANITIZER_RE.search(result.stdout):
        return "FAIL", "sanitizer report:\n" + result.stdout
    if result.returncode == 0 and summary and int(summary.group(2)) == 0 and int(summary.group(1)) > 0:
        return "PASS", result.stdout
    return "FAIL", result.stdout


def special_usdt_library(sonde, testing_bpftrace, sanitized):
    """tests/usdt/check.py: libsonde-usdt's run-time probes, from C and from
    Python, listed and traced by sonde -p with every value checked, their
    notes read by readelf, and 10,000 load/unload cycles under ASan."""
    if testing_bpftrace:
        return "SKIP", "bpftrace 0.17 cannot attach to memfd objects (lib/usdt/README.md)"
    env = dict(os.environ, SONDE=sonde)
    result = subprocess.run([sys.executable, os.path.join(TESTS, "usdt", "check.py")], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=900)
    summary = re.search(r"^(\d+) passed, (\d+) failed$", result.stdout, re.M)
    if result.returncode == 0 and summary and int(summary.group(2)) == 0 and \
            int(summary.group(1)) > 0:
        return "PASS", result.stdout
    return "FAIL", result.stdout


def tool_names():
    return [line.split()[0] for line in subprocess.run(
        [os.path.join(ROOT, "build", "sonde"), "tools"], capture_output=True, text=True,
        check=True).stdout.splitlines() if line.strip()]


def tree_leftovers(dest, prefix):
    """What is under dest besides the directories leading to dest+prefix."""
    kept = {dest}
    path = dest
    for part in prefix.strip("/").split("/"):
        path = os.path.join(path, part)
        kept.add(path)
    found = []
    for top, dirs, files in os.walk(dest):
        found += [os.path.join(top, d) for d in dirs if os.path.join(top, d) not in kept]
        found += [os.path.join(top, f) for f in files]
    return sorted(found)


def special_install():
    """`make install` into a scratch DESTDIR: the binary, sonde(8), a man page
    and a working link for every tool, the bash completion with a completion
    link per tool, libsonde-usdt's libraries, header and Python module;
    TOOL_LINKS=no installs no link. `make uninstall` with the
    same settings then leaves nothing but the directories down to PREFIX."""
    tools = tool_names()
    problems = []
    for links in ("yes", "no"):
        dest = tempfile.mkdtemp(prefix="sonde-install-")
        settings = ["DESTDIR=" + dest, "PREFIX=/usr", "TOOL_LINKS=" + links]
        try:
            make = subprocess.run(["make", "-s", "install"] + settings, cwd=ROOT,
                                  capture_output=True, text=True)
            if make.returncode != 0:
                return "FAIL", "make install failed:\n" + indent(make.stderr)
            bindir = os.path.join(dest, "usr", "bin")
            for installed in ("lib/libsonde-usdt.so", "lib/libsonde-usdt.a",
                              "include/sonde/usdt.h", "lib/python3/dist-packages/sonde_usdt.py"):
                if not os.path.exists(os.path.join(dest, "usr", installed)):
                    problems.append("libsonde-usdt: no /usr/" + installed)
            mandir = os.path.join(dest, "usr", "share", "man", "man8")
            compdir = os.path.join(dest, "usr", "share", "bash-completion", "completions")
            for page in ["sonde.8"] + ["sonde-%s.8" % t for t in tools]:
                if not os.path.exists(os.path.join(mandir, page)):
                    problems.append("no man page " + page)
            with open(os.path.join(ROOT, "completion", "sonde.bash")) as want, \
                    open(os.path.join(compdir, "sonde")) as got:
                if want.read() != got.read():
                    problems.append("completions/sonde is not completion/sonde.bash")
            if not os.access(os.path.join(bindir, "sonde"), os.X_OK):
                problems.append("bin/sonde is not executable")
            for tool in tools:
                link = os.path.join(bindir, tool)
                completion = os.path.join(compdir, tool)
                if links == "no":
                    for path in (link, completion):
                        if os.path.lexists(path):
                            problems.append("TOOL_LINKS=no installed " + path[len(dest):])
                    continue
                if os.readlink(link) != "sonde":
                    problems.append("%s does not link to sonde" % tool)
                    continue
                if not os.path.islink(completion) or os.readlink(completion) != "sonde":
                    problems.append("no completion link for %s" % tool)
                helped = subprocess.run([link, "--help"], capture_output=True, text=True)
                if not helped.stdout.startswith("Usage: sonde %s " % tool) or \
                        "EXAMPLES:" not in helped.stdout:
                    problems.append("%s --help through the link printed %r" % (
                        tool, helped.stdout[:200]))
            make = subprocess.run(["make", "-s", "uninstall"] + settings, cwd=ROOT,
                                  capture_output=True, text=True)
            if make.returncode != 0:
                return "FAIL", "make uninstall failed:\n" + indent(make.stderr)
            left = tree_leftovers(dest, "/usr")
            if left:
                problems.append("TOOL_LINKS=%s: make uninstall left %s" % (
                    links, ", ".join(p[len(dest):] for p in left[:10])))
        finally:
            shutil.rmtree(dest, ignore_errors=True)
    if problems:
        return "FAIL", "\n".join("    " + p for p in problems)
    return "PASS", "%d tools" % len(tools)


# Sources the completion, then per case (three arguments: the words as
# bash splits them, the line, the function) fills COMP_* as bash would,
# calls the function and prints `=== N` and COMPREPLY, one word a line.
# One shell for all cases, so the answers the completion keeps are reused.
COMPLETION_SCRIPT = r'''
source "$1"
shift
n=0
while (($# >= 3)); do
	IFS=' ' read -r -a COMP_WORDS <<< "$1"
	COMP_LINE=$2
	COMP_POINT=${#COMP_LINE}
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	[[ $COMP_LINE == *' ' ]] && COMP_WORDS+=("") && COMP_CWORD=$((COMP_CWORD + 1))
	COMPREPLY=()
	"$3"
	echo "=== $n"
	printf '%s\n' "${COMPREPLY[@]}"
	n=$((n + 1))
	shift 3
done
'''


def special_completion():
    """completion/sonde.bash sourced in bash, its functions called with the
    COMP_WORDS bash would pass (split at ':'), COMPREPLY checked; and the
    completion registered for a tool link on PATH, not for a same-named
    program of another package."""
    sonde = os.path.join(ROOT, "build", "sonde")
    script = os.path.join(ROOT, "completion", "sonde.bash")
    tmp = tempfile.mkdtemp(prefix="sonde-completion-")
    problems = []
    try:
        bindir = os.path.join(tmp, "bin")
        os.mkdir(bindir)
        os.symlink(sonde, os.path.join(bindir, "sonde"))
        os.symlink("sonde", os.path.join(bindir, "execsnoop"))
        # a program named like a tool that is not sonde
        other = os.path.join(bindir, "opensnoop")
        with open(other, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(other, 0o755)
        env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", ""))

        cases = [
            # (words as bash splits them, the line, words that must be offered, not offered)
            ("sonde exec", "sonde exec", ["execsnoop"], ["opensnoop"]),
            ("sonde pro", "sonde pro", ["profile", "providers"], []),
            ("sonde -l tr", "sonde -l tr", ["tracepoint:"], ["BEGIN"]),
            ("sonde -l", "sonde -l ", ["BEGIN", "END", "uprobe:", "usdt:", "kprobe:"], []),
            ("sonde --ver", "sonde --ver", ["--version"], ["--help"]),
            ("sonde -f", "sonde -f ", ["json", "text"], []),
            ("sonde execsnoop --ti", "sonde execsnoop --ti", ["--time", "--timestamp"], []),
            ("sonde flamegraph --co", "sonde flamegraph --co", ["--colors", "--countname"], []),
        ]
        if os.geteuid() == 0:
            # -l needs root: names after the type, cut after the last colon
            # when the word is unquoted, whole inside quotes
            cases += [
                ("sonde -l t : sched : sched_swi", "sonde -l t:sched:sched_swi",
                 ["sched_switch"], ["t:sched:sched_switch"]),
                ("sonde -e 'tracepoint:sched:sched_swi", "sonde -e 'tracepoint:sched:sched_swi",
                 ["tracepoint:sched:sched_switch"], []),
                ("sonde -l tracepoint : syscalls : sys_enter_getpp",
                 "sonde -l tracepoint:syscalls:sys_enter_getpp", ["sys_enter_getppid"], []),
            ]
        argv = ["bash", "--norc", "--noprofile", "-c", COMPLETION_SCRIPT, "completion", script]
        for words, line, _, _ in cases:
            argv += [words, line, "_sonde"]
        argv += ["execsnoop --pi", "execsnoop --pi", "_sonde_tool_link"]
        result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp,
                                timeout=60)
        if result.returncode != 0 or result.stderr:
            problems.append("bash: exit %d, stderr %r" % (result.returncode, result.stderr[:300]))
        replies = [block.split("\n")[1:] for block in
                   re.split(r"^=== ", result.stdout, flags=re.M)[1:]]
        replies = [[w for w in reply if w] for reply in replies]
        if len(replies) != len(cases) + 1:
            return "FAIL", "%d answers for %d cases:\n%s" % (len(replies), len(cases) + 1,
                                                            indent(result.stdout[-2000:]))
        for (words, line, wanted, unwanted), offered in zip(cases, replies):
            for word in wanted:
                if word not in offered:
                    problems.append("%r: %r not offered (got %s)" % (line, word, offered[:12]))
            for word in unwanted:
                if word in offered:
                    problems.append("%r: %r offered" % (line, word))
        if replies[-1] != ["--pid"]:
            problems.append("execsnoop --pi through the link: %s" % replies[-1])
        registered = subprocess.run(
            ["bash", "--norc", "--noprofile", "-c",
             'source "$1"; complete -p sonde execsnoop opensnoop', "registered", script],
            capture_output=True, text=True, env=env, timeout=30)
        if "-F _sonde sonde" not in registered.stdout or \
                "-F _sonde_tool_link execsnoop" not in registered.stdout:
            problems.append("registered: %r" % registered.stdout)
        if "opensnoop" in registered.stdout:
            problems.append("opensnoop (not sonde) got sonde's completion")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        return "FAIL", "\n".join("    " + p for p in problems)
    return "PASS", ""


def package_state(name):
    return subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Status}", name],
                          capture_output=True, text=True).stdout.strip()


def wait_attached(proc, timeout=15):
    if not proc.attached.wait(timeout):
        proc.kill()
        proc.wait(5)
        raise RuntimeError("%s did not attach:\n%s" % (proc.argv, indent(proc.stderr())))


def special_deb():
    """`make deb`, then the package installed with dpkg -i and used: the
    version, a BEGIN one-liner, a tracepoint one-liner that sees a file this
    test opens, execsnoop run by its link name catching a program this test
    starts, man -w; then dpkg -r, and nothing dpkg -L listed may remain (a
    directory only if another package owns it too). The package is removed
    in any case; the test is skipped if it would replace anything present."""
    if not shutil.which("dpkg-deb") or not shutil.which("man"):
        return "SKIP", "needs dpkg-deb and man (man-db)"
    if os.geteuid() != 0:
        return "SKIP", "dpkg -i needs root"
    if package_state("sonde") not in ("", "not-installed"):
        return "SKIP", "a sonde package is already installed; not touching it"
    make = subprocess.run(["make", "-s", "deb"], cwd=ROOT, capture_output=True, text=True)
    if make.returncode != 0:
        return "FAIL", "make deb failed:\n" + indent(make.stdout + make.stderr)
    version = subprocess.run([os.path.join(ROOT, "build", "sonde"), "--version"],
                             capture_output=True, text=True).stdout.split()[-1]
    debs = glob.glob(os.path.join(ROOT, "build", "sonde_%s_*.deb" % version))
    if len(debs) != 1:
        return "FAIL", "make deb made %s, not one build/sonde_%s_ARCH.deb" % (debs, version)
    deb = debs[0]
    fields = subprocess.run(["dpkg-deb", "-f", deb, "Version", "Depends"],
                            capture_output=True, text=True).stdout
    problems = []
    if "Version: %s\n" % version not in fields:
        problems.append("control Version is not %s: %r" % (version, fields))
    for name in ("libbpf1", "libelf1", "libc6"):
        if not re.search(r"\b%s\b" % name, fields):
            problems.append("Depends lacks %s: %r" % (name, fields))
    for name in ("llvm", "clang", "python"):
        if name in fields.lower():
            problems.append("Depends names %s: %r" % (name, fields))
    # dpkg would silently take over files no package owns; refuse instead
    contents = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], capture_output=True)
    names = subprocess.run(["tar", "-t"], input=contents.stdout, capture_output=True)
    present = [p[1:] for p in names.stdout.decode().split("\n")
               if p and not p.endswith("/") and os.path.lexists(p[1:])]
    if present:
        return "SKIP", "would overwrite files already present: %s" % ", ".join(present[:5])

    tmp = tempfile.mkdtemp(prefix="sonde-deb-", dir="/tmp")   # short: the path is a string in BPF
    try:
        dpkg = subprocess.run(["dpkg", "-i", deb], capture_output=True, text=True, timeout=120)
        if dpkg.returncode != 0:
            return "FAIL", "dpkg -i failed:\n" + indent(dpkg.stdout + dpkg.stderr)
        listed = subprocess.run(["dpkg", "-L", "sonde"], capture_output=True, text=True,
                                check=True).stdout.split("\n")
        listed = [p for p in listed if p.startswith("/") and p != "/."]

        got = subprocess.run(["sonde", "--version"], capture_output=True, text=True,
                             env=dict(os.environ, PATH="/usr/bin:/bin"))
        if got.stdout != "sonde %s\n" % version:
            problems.append("sonde --version printed %r" % got.stdout)
        got = subprocess.run(["/usr/bin/sonde", "-q", "-e",
                              'BEGIN { printf("packaged %d\\n", 6 * 7); exit(); }'],
                             capture_output=True, text=True, timeout=30)
        # (bpftrace's blank lines at exit follow the printed line)
        if got.stdout.split() != ["packaged", "42"] or got.returncode != 0:
            problems.append("BEGIN one-liner: exit %d, %r %r" % (got.returncode, got.stdout,
                                                                  got.stderr))
        # a tracepoint one-liner that sees the open of a file only this test opens
        marker = os.path.join(tmp, "marker")
        with open(marker, "w") as f:
            f.write("x\n")
        tracer = Process(["/usr/bin/sonde", "-e",
                          'tracepoint:syscalls:sys_enter_openat /str(args->filename) == "%s"/ '
                          '{ printf("open %%s by %%s\\n", str(args->filename), comm); exit(); }'
                          % marker])
        wait_attached(tracer)
        subprocess.run(["cat", marker], capture_output=True)
        code, timed_out = tracer.wait(15)
        if timed_out or tracer.stdout().strip() != "open %s by cat" % marker:
            problems.append("tracepoint one-liner: exit %s, timed out %s, stdout %r, stderr %r"
                            % (code, timed_out, tracer.stdout(), tracer.stderr()))
        # execsnoop by its link name, catching a program with a name of its own
        link_path = "/usr/lib/sonde/bin:" + os.environ.get("PATH", "/usr/bin:/bin")
        found = shutil.which("execsnoop", path=link_path)
        if found != "/usr/lib/sonde/bin/execsnoop":
            problems.append("execsnoop on PATH %s is %s" % (link_path, found))
        program = os.path.join(tmp, "debprobe%d" % os.getpid())
        shutil.copy("/bin/true", program)
        snoop = Process(["execsnoop"], env=dict(os.environ, PATH=link_path))
        wait_attached(snoop)
        subprocess.run([program, "--marker"])
        time.sleep(0.5)
        snoop.interrupt()
        code, timed_out = snoop.wait(15)
        caught = [l for l in snoop.stdout_lines if program in l]
        if not snoop.stdout_lines or not snoop.stdout_lines[0].startswith("PCOMM"):
            problems.append("execsnoop printed no header: %r" % snoop.stdout()[:200])
        if len(caught) != 1 or not re.match(r"debprobe\d*\s+\d+\s+\d+\s+0 %s --marker"
                                            % re.escape(program), caught[0]):
            problems.append("execsnoop by link: %d lines for %s: %r (stderr %r)" % (
                len(caught), program, caught, snoop.stderr()[-300:]))
        for page in ("sonde", "sonde-execsnoop"):
            got = subprocess.run(["man", "-w", page], capture_output=True, text=True)
            if got.stdout.strip() != "/usr/share/man/man8/%s.8.gz" % page:
                problems.append("man -w %s: %r %r" % (page, got.stdout, got.stderr))
        if "/usr/share/bash-completion/completions/sonde" not in listed:
            problems.append("no bash completion in the package")

        dpkg = subprocess.run(["dpkg", "-r", "sonde"], capture_output=True, text=True,
                              timeout=120)
        if dpkg.returncode != 0:
            problems.append("dpkg -r failed:\n" + indent(dpkg.stdout + dpkg.stderr))
        state = package_state("sonde")
        if state not in ("", "not-installed", "config-files"):
            problems.append("after dpkg -r the package is %r" % state)
        files = [p for p in listed if os.path.lexists(p) and not os.path.isdir(p)]
        if files:
            problems.append("left after dpkg -r: %s" % ", ".join(files[:10]))
        # a directory may stay only because another package has it too
        dirs = [p for p in listed if os.path.isdir(p) and not os.path.islink(p)]
        if dirs:
            owners = subprocess.run(["dpkg-query", "-S"] + dirs, capture_output=True, text=True)
            owned = {line.split(": ", 1)[1] for line in owners.stdout.split("\n") if ": " in line}
            unowned = [d for d in dirs if d not in owned]
            if unowned:
                problems.append("directories left after dpkg -r: %s" % ", ".join(unowned))
    finally:
        if package_state("sonde") not in ("", "not-installed"):
            subprocess.run(["dpkg", "--purge", "sonde"], capture_output=True, timeout=120)
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        return "FAIL", "\n".join("    " + p for p in problems)
    return "PASS", "%s, %d paths" % (os.path.basename(deb), len(listed))


FUZZ_SECONDS = 20


def special_layers():
    """The include check (tests/layers/check.py): no #include in src/ points
    up the layers docs/architecture.md describes, beyond the known ones
    tests/layers/known.txt lists, which may only shrink."""
    proc = subprocess.run([sys.executable, os.path.join(TESTS, "layers", "check.py")], cwd=ROOT,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return "FAIL", proc.stdout + proc.stderr
    return "PASS", proc.stdout.strip().splitlines()[-1]


def fuzz_target_names():
    """The fuzzers, tests/fuzz/fuzz_NAME.c: NAME for each."""
    return sorted(os.path.basename(f)[len("fuzz_"):-len(".c")]
                  for f in glob.glob(os.path.join(TESTS, "fuzz", "fuzz_*.c")))


def fuzz_seeds(name):
    """The seeds tests/fuzz/run.sh gives fuzzer NAME, and its dictionary."""
    if name == "compile":
        return (glob.glob(os.path.join(TESTS, "fuzz", "seeds", "*")) +
                glob.glob(os.path.join(TESTS, "golden", "*.bt")),
                os.path.join(TESTS, "fuzz", "bpftrace.dict"))
    return (glob.glob(os.path.join(TESTS, "fuzz", "seeds-" + name, "*")),
            os.path.join(TESTS, "fuzz", name + ".dict"))


def special_fuzz_smoke(name):
    """Fuzzer NAME (tests/fuzz/fuzz_NAME.c) still builds with sonde's
    libraries and runs FUZZ_SECONDS over its seeds without a crash, a hang, a
    leak or a sanitizer report; tests/fuzz/run.sh does the long runs."""
    if not shutil.which("clang"):
        return "SKIP", "no clang (tests/setup.sh installs it)"
    make = subprocess.run(["make", "-s", "build/fuzz/fuzz_" + name], cwd=ROOT,
                          capture_output=True, text=True)
    if make.returncode != 0:
        return "FAIL", "make fuzz failed:\n" + indent(make.stdout + make.stderr)
    tmp = tempfile.mkdtemp(prefix="sonde-fuzz-")
    try:
        corpus = os.path.join(tmp, "corpus")
        os.mkdir(corpus)
        seeds, dictionary = fuzz_seeds(name)
        for seed in seeds:
            shutil.copy(seed, corpus)
        # a program near the kernel's million instructions compiles in about
        # 3 s under the sanitizers, many times that on a loaded machine: the
        # timeout is for hangs; limits-cost bounds the costs
        argv = ["nice", "-n", "10", os.path.join(ROOT, "build", "fuzz", "fuzz_" + name),
                "-max_total_time=%d" % FUZZ_SECONDS,
                "-max_len=%d" % (2048 if name == "compile" else 4096), "-timeout=60",
                "-rss_limit_mb=1024", "-artifact_prefix=" + tmp + "/"]
        if os.path.exists(dictionary):
            argv.append("-dict=" + dictionary)
        argv.append(corpus)
        try:
            result = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                                    timeout=FUZZ_SECONDS + 120)
        except subprocess.TimeoutExpired:
            return "FAIL", "the fuzzer did not stop after %d s" % FUZZ_SECONDS
        done = re.search(r"^Done (\d+) runs in (\d+) second", result.stderr, re.M)
        findings = [f for f in os.listdir(tmp) if f != "corpus"]
        if result.returncode != 0 or not done or findings:
            tail = "\n".join(result.stderr.splitlines()[-40:])
            return "FAIL", "exit status %d, findings %s:\n%s" % (
                result.returncode, findings or "none", indent(tail))
        return "PASS", "%s runs in %s s" % (done.group(1), done.group(2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def folded_lines(text):
    """(stack, count) pairs of folded output."""
    pairs = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            pairs.append((stack, int(count)))
    return pairs


def cpu_idle_seconds():
    """Seconds all CPUs have spent idle since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[4]) / os.sysconf("SC_CLK_TCK")


def special_profile_idle(sonde, testing_bpftrace, sanitized):
    """profile -I counts the idle task's samples (pid 0, swapper/N, in the
    idle loop). Whether a CPU idles is the machine's to say: the CPUs' idle
    time over the run (/proc/stat) decides. With a tenth of a second or more
    of it, swapper samples must be there; with none, the case is skipped
    rather than failed or passed (a machine kept fully busy has no idle
    task to sample)."""
    if testing_bpftrace:
        return "SKIP", "a sonde tool"
    before = cpu_idle_seconds()
    proc = subprocess.run([sonde, "profile", "-I", "-K", "-f", "-F", "999", "2"],
                          env=sonde_env(sanitized), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, errors="replace", timeout=60)
    idle = cpu_idle_seconds() - before
    swapper = [line for line in proc.stdout.splitlines()
               if re.fullmatch(r"swapper/\d+;(.*;)?do_idle(;.*)? [1-9]\d*", line)]
    details = "%.2f s of idle CPU time, %d swapper stacks, exit %d" % (
        idle, len(swapper), proc.returncode)
    if proc.returncode != 0 or (sanitized and SANITIZER_RE.search(proc.stderr)):
        return "FAIL", details + "\nstderr:\n" + indent(proc.stderr)
    if idle >= 0.1 and not swapper:
        return "FAIL", details + "\nstdout:\n" + indent(proc.stdout[-2000:])
    if idle < 0.1:
        return "SKIP", "no CPU was idle during the run: " + details
    return "PASS", details


def special_known_chain(sonde, testing_bpftrace, sanitized, tool):
    """profile, offcputime or stackcount of stack_chain, whose call chains
    are known: the heaviest folded stack holds exactly the hot (blocking,
    calling) chain, user frames outermost first and then the kernel's, and
    the hot function's share of the samples (of the blocked time, of the
    calls) is in range."""
    if testing_bpftrace:
        return "SKIP", "a sonde tool"
    generator = build_tool("stack_chain")
    mode, chain, kernel, low, high, minimum = {
        # 9 ms of every 10 reading /dev/zero in chain_hot, 1 ms spinning in chain_cold;
        # about 300 samples on an idle machine, 88 seen on a loaded one: the
        # minimum asks for a fifth, enough for the shape and the share to mean something
        "profile": ("cpu", "chain_main;chain_outer;chain_middle;chain_hot",
                    "entry_SYSCALL_64[^;]*;do_syscall_64;", 0.70, 0.98, 60),
        # 10 ms sleeps: about 3 s of the 3 s traced are blocked time, in microseconds
        "offcputime": ("sleep", "chain_main;chain_waiter;chain_block",
                       "entry_SYSCALL_64[^;]*;do_syscall_64;__x64_sys_nanosleep;"
                       "hrtimer_nanosleep;do_nanosleep;schedule;", 0.90, 1.0, 2000000),
        # every nanosleep enters through chain_block: one stack, some 300 calls in 3 s
        "stackcount": ("sleep", "chain_main;chain_waiter;chain_block",
                       "entry_SYSCALL_64[^;]*;do_syscall_64;", 1.0, 1.0, 100),
    }[tool]
    target = subprocess.Popen([generator, mode, "6"])
    try:
        time.sleep(0.3)
        arguments = {"profile": ["-F", "99", "3"], "offcputime": ["3"],
                     "stackcount": ["-D", "3", "t:syscalls:sys_enter_nanosleep"]}[tool]
        env = dict(os.environ, **(SANITIZER_ENV if sanitized else {}))
        proc = subprocess.run([sonde, tool, "-f", "-p", str(target.pid)] + arguments,
                              capture_output=True, timeout=30, env=env)
    finally:
        target.kill()
        target.wait()
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0 or (sanitized and SANITIZER_RE.search(err)):
        return "FAIL", "exit %d\nstderr:\n%s" % (proc.returncode, indent(err))
    pairs = folded_lines(out)
    total = sum(count for stack, count in pairs if ";chain_main;" in stack)
    hot_leaf = chain.split(";")[-1]
    hot = sum(count for stack, count in pairs if (";%s;" % hot_leaf) in stack + ";")
    if not pairs or total < minimum:
        return "FAIL", "only %d samples of the target (at least %d expected)\n%s" % (
            total, minimum, indent(out[-3000:]))
    heaviest = max(pairs, key=lambda pair: pair[1])[0]
    details = "total %d, %s share %.2f, heaviest: %s" % (total, hot_leaf, hot / total, heaviest)
    pattern = r"stack_chain;(.*;)?%s;%s.*" % (re.escape(chain), kernel)
    if not re.fullmatch(pattern, heaviest):
        return "FAIL", "the heaviest stack is not the known chain\n" + details
    if not low <= hot / total <= high:
        return "FAIL", "share out of [%.2f, %.2f]: %s" % (low, high, details)
    return "PASS", details


def special_render_costs(sonde, testing_bpftrace, sanitized):
    """The renderers' costs stay bounded by their input (issue 19): each
    input that once cost without bound must finish (drawn, or refused with
    its sentence) within its time and peak RSS, on a busy 2-core machine,
    the sanitizer build with three times the time and its own memory.
    Measured here (normal / ASan): gap 0.02 s 3 MB / 0.07 s 18 MB;
    distinct 0.9 s 133 MB / 3.9 s 407 MB; maps 0.13 s 34 MB / 0.5 s 73 MB;
    wide 0.3 s 138 MB / 1.7 s 234 MB; /dev/zero 0.3 s 264 MB / 0.9 s 830 MB.
    The old build: 20 s and 1.4 GB, 29 s, over 60 s (killed), 1.55 GB, and
    /dev/zero read until memory ran out (24 GB here: do not run this case
    against it on a shared machine)."""
    if testing_bpftrace:
        return "SKIP", "sonde's renderers"
    tmp = tempfile.mkdtemp(prefix="sonde-render-costs-")
    env = dict(os.environ, **SANITIZER_ENV) if sanitized else None
    slack = 3 if sanitized else 1

    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path
    gap = write("gap.json", json.dumps({"buckets": [{"low": 2, "high": 2, "count": 5},
                                                    {"low": 4097, "high": 4097, "count": 3}]})
                + "\n" + "".join(json.dumps({"type": "time", "data": "t%d" % i}) + "\n"
                                 for i in range(2000)))
    distinct = write("distinct.json", json.dumps({"buckets": [
        {"low": 2 * i, "high": 2 * i, "count": 1} for i in range(200000)]}) + "\n")
    maps = write("maps.txt", "".join("@%s[\n    f%d+1\n    main+2\n, comm]: 1\n" % ("ab"[i % 2], i)
                                     for i in range(40000)))
    wide = write("wide.json", '{"buckets": [' + ",".join(["0"] * 15000000) + "]}\n")
    # (label, argv, stdin, exit status, seconds, MiB normal, MiB sanitized)
    cases = [("buckets 2 and 4097, 2,000 empty intervals", ["heatmap", gap], None, 0, 1, 50, 100),
             ("200,000 distinct buckets in one record", ["heatmap", distinct], None, 0, 5, 300, 800),
             ("40,000 entries alternating between two maps", ["flamegraph", maps], None, 0, 2,
              100, 200),
             ("a 30 MB line of 15 million values", ["heatmap", wide], None, 1, 3, 300, 500),
             ("flamegraph of /dev/zero", ["flamegraph"], "dev-zero", 1, 3, 300, 1100),
             ("heatmap of /dev/zero", ["heatmap", "/dev/zero"], None, 1, 3, 300, 1100)]
    problems, measured = [], []
    try:
        for label, argv, stdin, status, seconds, mb, asan_mb in cases:
            limit_mb = asan_mb if sanitized else mb
            code, elapsed, rss, stderr = limits_run([sonde] + argv, env, stdin, timeout=60)
            measured.append("%s: %.2f s, %d KiB" % (label, elapsed, rss))
            if code != status or SANITIZER_RE.search(stderr):
                problems.append("%s: exit %d, expected %d\n%s" % (label, code, status,
                                                                   indent(stderr[-2000:])))
            if elapsed > seconds * slack:
                problems.append("%s: took %.2f s (limit %d s)" % (label, elapsed, seconds * slack))
            if rss < 0 or rss > limit_mb * 1024:
                problems.append("%s: peak RSS %d KiB (limit %d MiB)" % (label, rss, limit_mb))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        return "FAIL", "\n".join(problems + measured)
    return "PASS", "; ".join(measured)


RENDER_HOSTILE = [
    # (what, argv after the binary, stdin, (element, attribute or None, text) to find)
    ("a frame name that is not UTF-8", ["flamegraph"], b"bash;a\xffb;main 5\n",
     ("g", "data-name", "a\\xffb")),
    ("an encoded surrogate, U+FFFE, U+FFFF, a C0 and a C1 control",
     ["flamegraph"], b"s;\xed\xa0\x80;\xef\xbf\xbe;\xef\xbf\xbf;t\x01;\xc2\x85 1\n",
     ("g", "data-name", "\\xed\\xa0\\x80")),
    ("a title that is not UTF-8", ["flamegraph", "--title", b"\xff", "--subtitle", b"\xef\xbf\xbf"],
     b"a;b 1\n", ("text", None, "\\xff")),
    ("script in --countname", ["flamegraph", "--countname",
                               "</title><script>document.title='injected'</script><title>"],
     b"a;b 1\n", ("title", None, "b (1 </title><script>document.title='injected'</script>"
                   "<title>, 100.00%)")),
    ("& in --countname", ["flamegraph", "--countname", "a&b"], b"a;b 1\n",
     ("title", None, "b (1 a&b, 100.00%)")),
    ("a map's frames and comm not UTF-8", ["flamegraph"],
     b"@[\n    f\xfe+1\n    main+2\n, co\xffmm]: 3\n", ("g", "data-name", "co\\xffmm")),
    ("perf script not UTF-8", ["flamegraph"],
     b"pr\xc3 1234 [001] 1.0: cycles:\n\t55d0c2a1513d h\xffot+0x14 (/tmp/prog)\n\n",
     ("g", "data-name", "h\\xffot")),
    ("heat map labels, unit and title not UTF-8", ["heatmap", "--title", b"\xff<"],
     b'{"type": "time", "data": "\xff\\ud800\\ufffe"}\n'
     b'{"unit": "\\udfff<b>&", "buckets": [{"low": 0, "high": 1, "count": 1}]}\n',
     # a lone surrogate in JSON is U+FFFD, a character like any other
     ("title", None, "\\xff\ufffd\\xef\\xbf\\xbe, 0-1 \ufffd<b>&, 1")),
]


def special_render_wellformed(binary, testing_bpftrace, sanitized):
    """Every text entering a picture is escaped: each hostile input gives an
    SVG that python's XML parser reads, with the one script sonde wrote and
    the hostile text shown as text (bytes that are not UTF-8 as \\xNN)."""
    import xml.dom.minidom
    if testing_bpftrace:
        return "SKIP", "sonde's renderers"
    problems = []
    env = dict(os.environ, **SANITIZER_ENV) if sanitized else None
    for what, argv, stdin, (element, attribute, text) in RENDER_HOSTILE:
        proc = subprocess.run([binary] + argv, input=stdin, capture_output=True, timeout=60, env=env)
        err = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0 or SANITIZER_RE.search(err):
            problems.append("%s: exit %d\n%s" % (what, proc.returncode, indent(err)))
            continue
        try:
            document = xml.dom.minidom.parseString(proc.stdout)
        except Exception as error:
            problems.append("%s: not well-formed XML: %s" % (what, error))
            continue
        scripts = document.getElementsByTagName("script")
        if len(scripts) != 1:
            problems.append("%s: %d script elements, expected sonde's one" % (what, len(scripts)))
        found = []
        for node in document.getElementsByTagName(element):
            found.append(node.getAttribute(attribute) if attribute else
                         "".join(child.data for child in node.childNodes
                                 if child.nodeType == child.TEXT_NODE))
        if not any(text in value for value in found):
            problems.append("%s: no <%s> %s holds %r; found %r" % (
                what, element, attribute or "text", text, found[:8]))
    if problems:
        return "FAIL", "\n".join(problems)
    return "PASS", "%d hostile inputs, each a well-formed SVG" % len(RENDER_HOSTILE)


def run_special(report, args, binaries, testing_bpftrace):
    # tests of the tree rather than of one binary (the normal build): run once
    once = [("special/install", special_install), ("special/completion", special_completion),
            ("special/deb", special_deb), ("special/layers", special_layers)] + \
            [("special/fuzz-smoke" + ("" if name == "compile" else "-" + name),
              functools.partial(special_fuzz_smoke, name)) for name in fuzz_target_names()]
    for name, test in once:
        if testing_bpftrace or (args.filter and args.filter not in name):
            continue
        try:
            status, details = test()
        except Exception as error:
            status, details = "FAIL", "runner error: %r" % error
        report.result(status, name, details)
    binaries = [b for b in binaries if os.path.exists(b[0]) or shutil.which(b[0])]
    tests = [("special/kill-leaves-nothing", lambda b, s: special_kill(b, testing_bpftrace)),
             ("special/kill-scale-raw-syscalls",
              lambda b, s: special_kill_scale(b, testing_bpftrace, "raw-syscalls")),
             ("special/kill-scale-raw-syscalls-dispatch",
              lambda b, s: special_kill_scale(b, testing_bpftrace, "raw-syscalls-dispatch")),
             ("special/kill-scale-perf-tracepoints",
              lambda b, s: special_kill_scale(b, testing_bpftrace, "perf-tracepoints")),
             ("special/kill-scale-uprobe-multi",
              lambda b, s: special_kill_scale(b, testing_bpftrace, "uprobe-multi")),
             ("special/kill-scale-uprobe-perf",
              lambda b, s: special_kill_scale(b, testing_bpftrace, "uprobe-perf")),
             ("special/kill-scale-exit-teardown",
              lambda b, s: special_kill_scale(b, testing_bpftrace, "exit-teardown", kills=10)),
             ("special/kill-scale-command-teardown",
              lambda b, s: special_kill_scale(b, testing_bpftrace, "command-teardown",
                                              kills=10)),
             ("special/lost-events-accounted", lambda b, s: special_lost(b, testing_bpftrace, s)),
             ("special/exit-behind-flood", lambda b, s: special_exit_flood(b, testing_bpftrace, s)),
             ("special/sigint-slow-reader",
              lambda b, s: special_slow_reader(b, testing_bpftrace, s)),
             ("special/sigint-slow-reader-8-sondes",
              lambda b, s: special_slow_reader(b, testing_bpftrace, s, sondes=8)),
             ("special/stop-under-flood",
              lambda b, s: special_stop_under_flood(b, testing_bpftrace, s)),
             ("special/stop-trickle-reader",
              lambda b, s: special_stop_trickle_reader(b, testing_bpftrace, s)),
             ("special/output-files-hostile",
              lambda b, s: special_output_files_hostile(b, testing_bpftrace, s)),
             ("special/write-errors-reported", lambda b, s: special_write_errors(b, testing_bpftrace, s)),
             ("special/output-file-kept-on-failure",
              lambda b, s: special_output_kept(b, testing_bpftrace, s)),
             ("special/non-root-one-sentence", lambda b, s: special_non_root(b, testing_bpftrace, s)),
             ("special/uprobe-usdt-checks", lambda b, s: special_uprobes(b, testing_bpftrace, s)),
             ("special/usdt-library", lambda b, s: special_usdt_library(b, testing_bpftrace, s)),
             ("special/limits-cost", lambda b, s: special_limits(b, testing_bpftrace, s)),
             ("special/render-costs-bounded",
              lambda b, s: special_render_costs(b, testing_bpftrace, s)),
             ("special/render-svg-well-formed",
              lambda b, s: special_render_wellformed(b, testing_bpftrace, s)),
             ("special/profile-idle-included",
              lambda b, s: special_profile_idle(b, testing_bpftrace, s)),
             ("special/profile-known-chain",
              lambda b, s: special_known_chain(b, testing_bpftrace, s, "profile")),
             ("special/offcputime-known-chain",
              lambda b, s: special_known_chain(b, testing_bpftrace, s, "offcputime")),
             ("special/stackcount-known-chain",
              lambda b, s: special_known_chain(b, testing_bpftrace, s, "stackcount"))]
    for binary, label, sanitized in binaries:
        for name, test in tests:
            full = "%s[%s]" % (name, label)
            if args.filter and args.filter not in full:
                continue
            try:
                status, details = test(binary, sanitized)
            except Exception as error:
                status, details = "FAIL", "runner error: %r" % error
            report.result(status, full, details)


# --------------------------------------------------------------------------
# Browser cases: the flame graph and the heat map opened in headless chromium

BROWSER_PAGES = os.path.join(TESTS, "browser")
SCREENSHOTS = os.path.join(ROOT, "build", "tests", "screenshots")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                  "--allow-file-access-from-files"]
FLAME_CHAIN = ["main", "flame_outer", "flame_middle", "flame_hot", "spin"]
HOT_SHARE = (0.75, 0.97)   # flame_prog spends nine parts in ten in flame_hot


def chromium_binary():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def browser_page(page, svg_path, **params):
    """Opens tests/browser/PAGE beside the SVG (one folder, so the page may
    read it) and returns the JSON the page wrote into <pre id="result">."""
    from urllib.parse import urlencode
    import html
    folder = os.path.dirname(svg_path)
    for name in (page, "check.js"):
        shutil.copy(os.path.join(BROWSER_PAGES, name), folder)
    url = "file://%s/%s?%s" % (folder, page,
                               urlencode(dict(params, svg=os.path.basename(svg_path))))
    proc = subprocess.run([chromium_binary()] + CHROMIUM_FLAGS +
                          ["--virtual-time-budget=10000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=90)
    found = re.search(r'<pre id="result">(.*?)</pre>', proc.stdout, re.S)
    if not found or found.group(1) == "pending":
        raise RuntimeError("the check page wrote no result; chromium said:\n"
                           + indent(proc.stderr[-2000:]))
    return json.loads(html.unescape(found.group(1)))


def browser_screenshot(svg_path, png_path, width, height):
    os.makedirs(os.path.dirname(png_path), exist_ok=True)
    subprocess.run([chromium_binary()] + CHROMIUM_FLAGS +
                   ["--screenshot=" + png_path, "--window-size=%d,%d" % (width, height),
                    "file://" + svg_path], capture_output=True, timeout=90)
    if not os.path.exists(png_path) or os.path.getsize(png_path) < 5000:
        raise RuntimeError("no screenshot (or a blank one) at " + png_path)


def svg_size(text):
    found = re.search(r'<svg [^>]*width="(\d+)" height="(\d+)"', text)
    return int(found.group(1)), int(found.group(2))


def svg_problems(text):
    """A self-contained, well-formed SVG: nothing to fetch."""
    import xml.etree.ElementTree as ElementTree
    problems = []
    try:
        ElementTree.fromstring(text.encode("utf-8", "surrogateescape"))
    except ElementTree.ParseError as error:
        problems.append("not well-formed XML: %s" % error)
    urls = set(re.findall(r'\b(?:https?|ftp|file|data):[^"\s<]*|\bhref=[^\s>]*|url\([^)]*\)|@import', text))
    urls.discard("http://www.w3.org/2000/svg")   # the namespace's name, never fetched
    if urls:
        problems.append("refers to URLs: %s" % sorted(urls))
    return problems


def render(binaries, argv, input_text):
    """Runs `sonde ARGV` with every build; they must agree, and the sanitizer
    build must stay quiet. Returns the normal build's stdout. input_text is
    str or bytes."""
    if isinstance(input_text, str):
        input_text = input_text.encode()
    outputs = []
    for binary, label, sanitized in binaries:
        env = dict(os.environ, **SANITIZER_ENV) if sanitized else None
        # bytes in, bytes out (argv may hold bytes too)
        proc = subprocess.run([binary] + argv, input=input_text, capture_output=True,
                              timeout=60, env=env)
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0 or SANITIZER_RE.search(stderr):
            raise RuntimeError("%s %r failed (%d):\n%s" % (label, argv, proc.returncode,
                                                           indent(stderr)))
        # undecodable bytes kept (surrogateescape) for the XML parser to reject
        outputs.append(proc.stdout.decode("utf-8", "surrogateescape"))
    if any(output != outputs[0] for output in outputs):
        raise RuntimeError("the builds drew different pictures for %s" % " ".join(argv))
    return outputs[0]


def traced_run(sonde, argv, workload, timeout=20):
    """Starts sonde, waits for its banner, runs the workload, returns stdout."""
    proc = subprocess.Popen([sonde] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # with -f json the banner is the attached_probes record on stdout
    json_output = "-f" in argv and argv[argv.index("-f") + 1] == "json"
    banner = (proc.stdout if json_output else proc.stderr).readline()
    attached = ('"attached_probes"' in banner) if json_output else BANNER_RE.match(banner.strip())
    if not attached:
        proc.kill()
        raise RuntimeError("sonde did not attach: %s%s" % (banner, proc.stderr.read()))
    workload()
    stdout, stderr = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError("sonde exited %d:\n%s" % (proc.returncode, indent(stderr)))
    return stdout


def browser_flamegraph(binaries, tmp):
    """A real profile of flame_prog, drawn and driven in the browser."""
    problems = []
    program = build_tool("flame_prog", flags=("-O1", "-fno-omit-frame-pointer"))
    target = subprocess.Popen([program, "5"])
    try:
        text = traced_run(binaries[0][0], [
            "-e", "profile:hz:999 /pid == %d/ { @[kstack, ustack, comm] = count(); } "
                  "interval:s:2 { exit(); }" % target.pid], lambda: None)
    finally:
        target.kill()
        target.wait()
    folded = render(binaries, ["flamegraph", "--folded"], text)
    stacks = [(line.rsplit(" ", 1)[0].split(";"), int(line.rsplit(" ", 1)[1]))
              for line in folded.splitlines()]
    total = sum(count for _, count in stacks)
    heaviest = max(stacks, key=lambda stack: stack[1])[0] if stacks else []
    if heaviest[:1] != ["flame_prog"] or heaviest[-len(FLAME_CHAIN):] != FLAME_CHAIN:
        problems.append("heaviest stack %s does not end in %s" % (heaviest, FLAME_CHAIN))
    hot = sum(count for frames, count in stacks if "flame_hot" in frames)
    share = hot / total if total else 0
    # a sample taken in flame_hot's first instructions, before it pushed its
    # frame pointer, shows it under flame_outer: one more flame_hot frame,
    # so the page's widest one holds the samples of its own path only
    hot_paths = {}
    for frames, count in stacks:
        if "flame_hot" in frames:
            path = tuple(frames[:frames.index("flame_hot") + 1])
            hot_paths[path] = hot_paths.get(path, 0) + count
    hot_widest = max(hot_paths.values()) if hot_paths else 0
    widest_share = hot_widest / total if total else 0
    if not HOT_SHARE[0] <= share <= HOT_SHARE[1]:
        problems.append("flame_hot has %.3f of %d samples, not within %s" % (share, total, HOT_SHARE))

    svg_text = render(binaries, ["flamegraph", "--title", "flame_prog <test> & profile"], text)
    problems += svg_problems(svg_text)
    svg_path = os.path.join(tmp, "flame.svg")
    with open(svg_path, "w") as handle:
        handle.write(svg_text)
    page = browser_page("check_flamegraph.html", svg_path, frame="flame_hot")
    expect = [
        ("an error", page.get("error"), None),
        ("external references", page.get("externalRefs"), 0),
        ("flame_hot frames", page.get("found"), len(hot_paths)),
        ("samples of flame_hot", page.get("samples"), hot_widest),
        ("details line on hover",
         (page.get("details") or "").startswith("flame_hot (%d samples" % hot_widest), True),
        ("highlighted frames", page.get("highlighted"), ["flame_hot"] * len(hot_paths)),
        ("matched text", page.get("matchedText"), "Matched: %.1f%%" % (100.0 * hot / total if total else 0)),
        ("highlighted after clearing", page.get("afterClear"), 0),
        ("root greyed when zoomed", page.get("rootParent"), True),
        ("Reset Zoom shown when zoomed", page.get("resetVisible"), "1"),
        ("frames hidden after reset", page.get("hiddenAfterReset"), 0),
    ]
    for what, got, want in expect:
        if got != want:
            problems.append("%s: %r, expected %r" % (what, got, want))
    for what, got, want in [("width share", page.get("share"), widest_share),
                            ("search share", (page.get("searchPercent") or 0) / 100, share),
                            ("zoomed width", page.get("zoomedWidth"), 1.0),
                            ("width after reset", page.get("resetShare"), widest_share)]:
        if got is None or abs(got - want) > 0.005:
            problems.append("%s: %r, expected %.4f" % (what, got, want))
    if "flame_cold" not in page.get("hiddenAfterZoom", []):
        problems.append("zooming into flame_hot left flame_cold shown; hidden: %r"
                        % page.get("hiddenAfterZoom"))
    browser_screenshot(svg_path, os.path.join(SCREENSHOTS, "flamegraph.png"), *svg_size(svg_text))
    if problems:
        return "FAIL", "\n".join(problems) + "\nfolded:\n" + indent(folded)
    return "PASS", "flame_hot %.1f%% of %d samples" % (100 * share, total)


def browser_flamegraph_hostile(binaries, tmp):
    """Frame names and options that once broke the picture or ran script:
    the page must parse, draw every frame with its name as text, and no
    script but sonde's may run."""
    problems = []
    injection = ("</title><script>document.documentElement.setAttribute('data-injected', '1');"
                 "window.injected = 1;</script><title>")
    folded = (b"prog;main;a\xffb 30\nprog;main;<script>window.injected = 2</script> 20\n"
              b"prog;main;\xef\xbf\xbe&amp 5\nprog;main;hot 45\n")
    svg_text = render(binaries, ["flamegraph", "--title", b"\xff <T>", "--countname", injection],
                      folded)
    problems += svg_problems(svg_text)
    svg_path = os.path.join(tmp, "hostile.svg")
    with open(svg_path, "w", errors="surrogateescape") as handle:
        handle.write(svg_text)
    page = browser_page("check_flamegraph.html", svg_path, frame="hot")
    names = sorted(page.get("names") or [])
    expect = [("an error", page.get("error"), None),
              ("a parser error", page.get("parserError"), 0),
              ("script that ran", page.get("injected"), None),
              ("frames drawn", names, sorted(["all", "prog", "main", "a\\xffb", "hot",
                                              "<script>window.injected = 2</script>",
                                              "\\xef\\xbf\\xbe&amp"])),
              ("hot's title", page.get("title"), "hot (45 %s, 45.00%%)" % injection),
              ("details line on hover", page.get("details"), "hot (45 %s, 45.00%%)" % injection)]
    for what, got, want in expect:
        if got != want:
            problems.append("%s: %r, expected %r" % (what, got, want))
    if problems:
        return "FAIL", "\n".join(problems)
    return "PASS", "%d frames, names and --countname shown as text" % len(names)


def browser_heatmap(binaries, tmp):
    """Reads of two known sizes in two intervals, drawn and read back."""
    problems = []
    program = os.path.join(tmp, "heat_bursts")
    shutil.copy(build_tool("read_bursts"), program)
    text = traced_run(binaries[0][0], [
        "-f", "json", "-e",
        'tracepoint:syscalls:sys_exit_read /comm == "heat_bursts"/ { @ = hist(args->ret); } '
        'interval:s:1 { time("%H:%M:%S\\n"); print(@); clear(@); } interval:s:6 { exit(); }'],
        lambda: subprocess.run([program, "64", "100", "4096", "300"], check=True))
    # what each interval printed: a time record, then a hist record if it had events
    columns, labels = [], []
    for line in text.splitlines():
        record = json.loads(line) if line.strip() else {}
        if record.get("type") == "time":
            columns.append({})
            labels.append(record["data"].strip())
        elif record.get("type") == "hist" and columns:
            for bucket in record["data"]["@"]:
                if bucket["count"]:
                    columns[-1][(bucket["min"], bucket["max"])] = bucket["count"]
    svg_text = render(binaries, ["heatmap", "--title", "read sizes"], text)
    problems += svg_problems(svg_text)
    svg_path = os.path.join(tmp, "heat.svg")
    with open(svg_path, "w") as handle:
        handle.write(svg_text)
    page = browser_page("check_heatmap.html", svg_path)
    drawn = {}
    for cell in page.get("cells", []):
        low_high = re.search(r", (\d+)-(\d+), (\d+)$", cell["title"])
        if cell["count"]:
            if cell["fill"] == "rgb(255,255,255)" or cell["width"] <= 0 or cell["height"] <= 0:
                problems.append("cell %r has a count but is not drawn" % cell)
            if not low_high or int(low_high.group(3)) != cell["count"]:
                problems.append("cell title %r does not give its count" % cell["title"])
            else:
                drawn.setdefault(cell["column"], {})[
                    (int(low_high.group(1)), int(low_high.group(2)))] = cell["count"]
        elif cell["fill"] != "rgb(255,255,255)":
            problems.append("empty cell %r is coloured" % cell)
    expected = {i: column for i, column in enumerate(columns) if column}
    if drawn != expected:
        problems.append("cells with counts %r, expected %r" % (drawn, expected))
    sizes = {}
    for column in columns:
        for key, count in column.items():
            sizes[key] = sizes.get(key, 0) + count
    if sizes.get((64, 127)) != 100 or sizes.get((4096, 8191)) != 300:
        problems.append("the stream itself lacks the 100 reads of 64 and 300 of 4096 bytes: %r" % sizes)
    busy = [i for i, column in enumerate(columns) if column]
    if len(busy) < 2 or all(columns[i] for i in range(busy[0], busy[-1] + 1)):
        problems.append("expected an empty interval between the bursts, intervals: %r" % columns)
    if page.get("columnLabels", [])[:len(labels)] != labels:
        problems.append("interval labels %r, expected the times %r" % (page.get("columnLabels"), labels))
    if page.get("details") != page.get("fullestTitle") or "300" not in (page.get("details") or ""):
        problems.append("hover over the fullest cell shows %r" % page.get("details"))
    if page.get("externalRefs") or page.get("error") or not page.get("scriptApi"):
        problems.append("page: %r" % {k: page.get(k) for k in ("externalRefs", "error", "scriptApi")})
    browser_screenshot(svg_path, os.path.join(SCREENSHOTS, "heatmap.png"), *svg_size(svg_text))
    if problems:
        return "FAIL", "\n".join(problems) + "\nstream:\n" + indent(text)
    return "PASS", "%d intervals, %d with events" % (len(columns), len(busy))


def run_browser(report, args, binaries):
    tests = [("browser/flamegraph-profile", browser_flamegraph),
             ("browser/flamegraph-hostile-names", browser_flamegraph_hostile),
             ("browser/heatmap-read-sizes", browser_heatmap)]
    binaries = [b for b in binaries if os.path.exists(b[0])]
    for name, test in tests:
        if args.filter and args.filter not in name:
            continue
        if not chromium_binary():
            report.result("SKIP", name, "chromium is not installed (tests/setup.sh installs it)")
            continue
        tmp = tempfile.mkdtemp(prefix="sonde-browser-")
        try:
            status, details = test(binaries, tmp)
        except Exception as error:
            status, details = "FAIL", "runner error: %s" % error
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        report.result(status, name, details)


# --------------------------------------------------------------------------
# VM cases: tests/vm/*.test inside a QEMU guest

RUN_IN_VM = os.path.join(TESTS, "vm", "run-in-vm")
VM_CASE_SCRIPT = os.path.join(TESTS, "vm", "case.sh")
VM_DEFAULT_TIMEOUT = 90    # seconds of guest life per case, boot included
VM_PREPARE_TIMEOUT = 1200  # apt-get install qemu plus the kernel download
VM_MAX_JOBS = 2            # guests at once: each keeps two emulated CPUs busy
# Generators compiled from tests/vm/*.c: static, so that the dynamic loader
# makes no system calls of its own in the traced process.
VM_TOOL_FLAGS = ("-static",)


def vm_prepare():
    """Fills run-in-vm's cache (installing QEMU if need be). Returns None when
    guests can boot, otherwise the reason in one line."""
    try:
        proc = subprocess.run([RUN_IN_VM, "--prepare"], cwd=ROOT, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=VM_PREPARE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "run-in-vm --prepare did not finish in %d s" % VM_PREPARE_TIMEOUT
    except OSError as error:
        return "cannot run %s: %s" % (RUN_IN_VM, error)
    if proc.returncode == 0:
        return None
    lines = [line.strip() for line in proc.stderr.decode("utf-8", "replace").split("\n")
             if line.strip()]
    # The last "run-in-vm: " line is the error (earlier ones report progress);
    # the line after it, if any, is the failing command's last words.
    marked = [i for i, line in enumerate(lines) if line.startswith("run-in-vm: ")]
    if not marked:
        return "run-in-vm --prepare exited %d" % proc.returncode
    reason = lines[marked[-1]][len("run-in-vm: "):]
    if marked[-1] + 1 < len(lines):
        reason += " ... " + lines[-1]
    return reason


def vm_unmet_need(need, sonde):
    """Like unmet_need, for the guest. Returns (status, reason) or None."""
    what, _, arg = need.partition(" ")
    arg = arg.strip()
    if what in ("cmd", "file"):
        # The guest sees the host's files and runs the host's binaries.
        reason = unmet_need(need, False)
        return ("SKIP", reason) if reason else None
    if what == "sonde-env":
        # A hook not implemented yet: skip until the binary mentions it.
        try:
            with open(sonde, "rb") as f:
                if arg.encode() in f.read():
                    return None
        except OSError:
            pass
        return "SKIP", "%s does not know %s yet" % (os.path.basename(sonde), arg)
    return "FAIL", "unknown need in a vm case: %s (vm cases know cmd, file, sonde-env)" % need


def read_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def run_vm_case(case, sonde, testing_bpftrace):
    """Runs one case in a guest; returns (status, details, seconds).

    The guest runs tests/vm/case.sh, which starts the tracer, runs the
    generator once it has attached and leaves stdout, stderr and exit statuses
    in a host directory shared writable with the guest.
    """
    for need in case.needs:
        unmet = vm_unmet_need(need, sonde)
        if unmet:
            return unmet[0], unmet[1], 0.0
    if testing_bpftrace and "sonde-only" in case.flags:
        return "SKIP", "sonde-only", 0.0
    if not testing_bpftrace and "bpftrace-only" in case.flags:
        return "SKIP", "bpftrace-only", 0.0
    if case.field("target") is not None:
        return "FAIL", "target: is not supported in vm cases (use -c or run:)", 0.0
    if not os.path.exists(sonde) and shutil.which(sonde) is None:
        return "FAIL", "no binary " + sonde, 0.0

    base = tempfile.mkdtemp(prefix="sonde-vm-test-")
    tmp = os.path.join(base, "tmp")   # {tmp}: the case's cwd
    io = os.path.join(base, "io")     # case.sh's files
    os.mkdir(tmp)
    os.mkdir(io)
    try:
        sonde_abs = os.path.abspath(sonde) if os.path.exists(sonde) else shutil.which(sonde)
        values = {"tmp": tmp, "root": ROOT, "tools": TOOLS_BUILD, "sonde": sonde_abs}
        argv = case_command(case, values, tmp)
        env = case_env(case, values, False)
        if case.field("stdin") is not None:
            with open(os.path.join(io, "stdin"), "w") as f:
                f.write(case.field("stdin"))
        run_cmd = case.field("run")
        if run_cmd is not None:
            # case.sh exports the tracer's pid as $sonde_pid.
            with open(os.path.join(io, "run"), "w") as f:
                f.write(substitute(run_cmd, dict(values, sonde_pid="$sonde_pid")) + "\n")
        values["sonde_pid"] = "(pid in the guest)"
        start_mode = case.field("start", "banner").strip()
        stop = (case.field("stop") or "none").strip()
        timeout = float(case.field("timeout", str(VM_DEFAULT_TIMEOUT)))
        command = ([RUN_IN_VM, "--timeout", "%g" % timeout, "--writable", base, "--",
                    "sh", VM_CASE_SCRIPT, io, start_mode, stop] + argv)

        start = time.monotonic()
        proc = subprocess.Popen(command, cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        host_timed_out = False
        try:
            harness_out, _ = proc.communicate(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            # SIGTERM: run-in-vm kills its QEMU (in a session of its own) first.
            host_timed_out = True
            proc.terminate()
            try:
                harness_out, _ = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                harness_out, _ = proc.communicate()
        elapsed = time.monotonic() - start
        harness_out = harness_out.decode("utf-8", "replace")

        stdout = strip_banner(read_text(os.path.join(io, "stdout")) or "")
        stderr = read_text(os.path.join(io, "stderr")) or ""
        if case.field("output") is not None:
            text = read_text(substitute(case.field("output"), values))
            stdout = text if text is not None else "(cannot read the output file)"
        rc_text = read_text(os.path.join(io, "rc"))
        problems = []
        timed_out = rc_text is None
        code = int(rc_text) if rc_text and rc_text.strip().lstrip("-").isdigit() else -1
        if host_timed_out:
            problems.append("run-in-vm still running %d s after its timeout (killed)" % 60)
        elif rc_text is None and proc.returncode == 124:
            problems.append("timed out after %g s (guest killed)" % timeout)
        elif rc_text is None:
            problems.append("the guest returned no exit status (run-in-vm exited %d)"
                            % proc.returncode)
        run_rc = read_text(os.path.join(io, "run.rc"))
        if run_rc is not None and run_rc.strip() != "0":
            problems.append("generator exited %s: %s" % (
                run_rc.strip(), (read_text(os.path.join(io, "run.err")) or "").strip()))
        problems += case_problems(case, code, timed_out, stdout, stderr, values, False)
        if not problems:
            return "PASS", "", elapsed
        extra = ["run-in-vm output:\n" + indent(harness_out)] if harness_out.strip() else []
        return "FAIL", failure_details(case, argv, values, problems, stdout, stderr,
                                       extra), elapsed
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run_vm(report, args, sonde, testing_bpftrace):
    cases = load_cases(report, "vm")
    if args.filter:
        cases = [c for c in cases if args.filter in c.name]
    if not cases:
        return
    if not os.path.exists(sonde) and shutil.which(sonde) is None:
        report.result("FAIL", "vm: no binary %s (run make)" % sonde)
        return
    reason = vm_prepare()
    if reason:
        report.result("SKIP", "vm: all %d cases" % len(cases),
                      "cannot boot the guest: " + reason, count=len(cases))
        return
    for source in sorted(glob.glob(os.path.join(TESTS, "vm", "*.c"))):
        try:
            build_tool(os.path.basename(source)[:-2], "vm", VM_TOOL_FLAGS)
        except (subprocess.CalledProcessError, OSError) as error:
            report.result("FAIL", "vm: build " + source, str(error))
    label = "sonde" if not testing_bpftrace else os.path.basename(sonde)
    started = time.monotonic()

    def work(case):
        try:
            status, details, seconds = run_vm_case(case, sonde, testing_bpftrace)
        except Exception as error:  # a runner bug must not hide other cases
            status, details, seconds = "FAIL", "runner error: %r" % error, 0.0
        name = "vm[%s] %s" % (label, case.name)
        if status != "SKIP":
            name += " (%.1f s)" % seconds
        report.result(status, name, details)
    run_parallel(min(args.jobs, VM_MAX_JOBS), [(c, "serial" in c.flags) for c in cases], work)
    print("note: vm group: %d cases in %.0f s" % (len(cases), time.monotonic() - started),
          flush=True)


# --------------------------------------------------------------------------

# --------------------------------------------------------------------------
# Tools against libbpf-tools
def tokens_with_starts(line):
    return [(m.start(), m.group()) for m in re.finditer(r"\S+", line)]


def compare_tool_lines(ours, theirs, vary):
    """Problems between two output lines of the same event: every column
    equal but those in `vary`, and the columns starting at the same place
    (a varying one may end at the same place instead: right-aligned) as long
    as nothing before them varied in width."""
    a, b = tokens_with_starts(ours), tokens_with_starts(theirs)
    if len(a) != len(b):
        return ["%d columns, libbpf-tools %d" % (len(a), len(b))]
    problems = []
    aligned = True
    for index, ((start_a, text_a), (start_b, text_b)) in enumerate(zip(a, b)):
        if index not in vary and text_a != text_b:
            problems.append("column %d is %r, libbpf-tools %r" % (index, text_a, text_b))
        # a right-aligned number whose width varies ends where the other does
        right_aligned = index in vary and start_a + len(text_a) == start_b + len(text_b)
        if aligned and start_a != start_b and not right_aligned:
            problems.append("column %d starts at %d, libbpf-tools at %d" % (index, start_a, start_b))
        if len(text_a) != len(text_b):
            aligned = False
    return problems


def run_toolsdiff_case(case, sonde):
    """Runs `sonde TOOL ARGS` and the libbpf-tools binary side by side under
    one workload; compares header lines and the lines of the marked events."""
    for need in case.needs:
        reason = unmet_need(need, False)
        if reason:
            return "SKIP", reason
    tmp = tempfile.mkdtemp(prefix="sonde-toolsdiff-")
    try:
        values = {"tmp": tmp, "root": ROOT, "tools": TOOLS_BUILD, "sonde": os.path.abspath(sonde)}
        tool_words = shlex.split(substitute(case.field("tool"), values))
        oracle = shlex.split(substitute(case.field("oracle", "/usr/sbin/" + " ".join(tool_words)),
                                        values))
        if not os.path.exists(oracle[0]):
            return "SKIP", "no " + oracle[0]
        ours = Process([values["sonde"]] + tool_words, cwd=tmp)
        theirs = Process(oracle, cwd=tmp)
        timeout = float(case.field("timeout", "20"))
        ours.attached.wait(timeout=timeout / 2)
        time.sleep(float(case.field("start", "2")))
        problems = []
        run_cmd = case.field("run")
        if run_cmd:
            gen = subprocess.run(["sh", "-c", substitute(run_cmd, values)], cwd=tmp,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 timeout=timeout / 2)
            if gen.returncode != 0:
                problems.append("generator exited %d: %s" % (
                    gen.returncode, gen.stderr.decode("utf-8", "replace").strip()))
        time.sleep(float(case.field("stop", "1")))
        for proc in (ours, theirs):
            proc.interrupt()
        for proc in (ours, theirs):
            proc.wait(timeout / 2)
        our_lines = [l.rstrip() for l in ours.stdout().split("\n")]
        their_lines = [l.rstrip() for l in theirs.stdout().split("\n")]
        headers = int(case.field("header", "1"))
        header_skip = int(case.field("oracle-skip", "0"))
        for i in range(headers):
            a = our_lines[i] if i < len(our_lines) else "(none)"
            b = their_lines[header_skip + i] if header_skip + i < len(their_lines) else "(none)"
            if a != b:
                problems.append("header line %d: %r, libbpf-tools %r" % (i + 1, a, b))
        marker = re.compile(substitute(case.field("marker"), values))
        vary = {int(x) for x in case.field("vary", "").replace(",", " ").split()}
        our_marked = [l for l in our_lines if marker.search(l)]
        their_marked = [l for l in their_lines if marker.search(l)]
        if not our_marked:
            problems.append("sonde printed no line matching %r" % marker.pattern)
        if not their_marked:
            problems.append("libbpf-tools printed no line matching %r" % marker.pattern)
        if len(our_marked) != len(their_marked):
            problems.append("%d marked lines, libbpf-tools %d" % (len(our_marked), len(their_marked)))
        for a, b in zip(our_marked, their_marked):
            problems += ["%s\n        sonde:        %s\n        libbpf-tools: %s" % (p, a, b)
                         for p in compare_tool_lines(a, b, vary)]
        if not problems:
            return "PASS", ""
        return "FAIL", "\n".join(["    command: %s" % " ".join(tool_words),
                                   "    oracle:  %s" % " ".join(oracle)] +
                                  ["    " + p for p in problems] +
                                  ["    sonde stdout:", indent(ours.stdout()[-3000:]),
                                   "    sonde stderr:", indent(ours.stderr()[-2000:]),
                                   "    libbpf-tools stdout:", indent(theirs.stdout()[-3000:]),
                                   "    libbpf-tools stderr:", indent(theirs.stderr()[-2000:])])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_toolsdiff(report, args, sonde):
    cases = load_cases(report, group="toolsdiff")
    if args.filter:
        cases = [c for c in cases if args.filter in c.name]

    def work(case):
        try:
            status, details = run_toolsdiff_case(case, sonde)
        except Exception as error:  # a runner bug must not hide other cases
            status, details = "FAIL", "runner error: %r" % error
        report.result(status, "toolsdiff %s" % case.name, details)
    # serial: the two tracers see every event of the machine, and the
    # marked events of another case would count twice
    run_parallel(1, [(c, True) for c in cases], work)


# --------------------------------------------------------------------------
# Serve cases: sonde serve scraped by Prometheus, checked by promtool, abused

sys.path.insert(0, os.path.join(TESTS, "serve"))
import load as serve_load  # noqa: E402
import hostile as serve_hostile  # noqa: E402

SERVING_RE = re.compile(r'^Serving metrics on https?://([0-9.]+):(\d+)/metrics$')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(sonde, argv_tail, sanitized, env_extra=None, timeout=20, prefix=()):
    """sonde serve --listen 127.0.0.1:0 ARGS (after prefix, such as taskset);
    returns (process, host, port) once it says where it listens, or
    (process, None, None)."""
    env = dict(os.environ, **(env_extra or {}))
    if sanitized:
        env.update(SANITIZER_ENV)
    proc = Process(list(prefix) + [sonde, "serve", "--listen", "127.0.0.1:0"] + argv_tail,
                   env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.proc.poll() is None:
        for line in list(proc.stderr_lines):
            found = SERVING_RE.match(line.rstrip("\n"))
            if found:
                return proc, found.group(1), int(found.group(2))
        time.sleep(0.05)
    return proc, None, None


def stop_serve(proc, sanitized):
    """SIGINT, then the problems with how it ended (empty: none)."""
    proc.interrupt()
    code, timed_out = proc.wait(15)
    problems = []
    if timed_out:
        problems.append("did not exit within 15 s of SIGINT")
    elif code != 0:
        problems.append("exit status %d" % code)
    if sanitized and SANITIZER_RE.search(proc.stderr()):
        problems.append("sanitizer report")
    return problems


def metric_lines(text, name):
    """{labels text: value} of the samples of one series name."""
    found = {}
    for line in text.splitlines():
        match = re.match(r'^%s(\{.*\})? (\S+)$' % re.escape(name), line)
        if match:
            found[match.group(1) or ""] = match.group(2)
    return found


def prometheus_query(port, query):
    from urllib.parse import urlencode
    from urllib.request import urlopen
    with urlopen("http://127.0.0.1:%d/api/v1/query?%s" % (port, urlencode({"query": query})),
                 timeout=5) as reply:
        data = json.load(reply)
    if data.get("status") != "success":
        raise RuntimeError("query %s: %s" % (query, data))
    return data["data"]["result"]


SERVE_READS = (3000, 40, 100, 25)   # read_bursts: 40 reads of 3000 bytes, 25 of 100
SERVE_READ_PROGRAM = (
    'tracepoint:syscalls:sys_exit_read /comm == "promread" && (args->ret == 3000 || '
    'args->ret == 100)/ { @reads[comm] = count(); @read_bytes[comm] = hist(args->ret); '
    '@sizes[comm, args->ret] = sum(args->ret); }')


def serve_prometheus(sonde, sanitized, tls=False):
    """Debian's Prometheus scrapes sonde serve every second; the counter,
    histogram buckets, _sum, _count and labels it stores are those of the
    reads made. tls: over HTTPS with basic authentication (a web config)."""
    prometheus = shutil.which("prometheus")
    if not prometheus:
        return "SKIP", "no prometheus (tests/setup.sh installs it)"
    tmp = tempfile.mkdtemp(prefix="sonde-prom-")
    generator = os.path.join(tmp, "promread")
    shutil.copy(build_tool("read_bursts"), generator)
    web = serve_tls_files(tmp) if tls else None
    proc, host, port = start_serve(
        sonde, (["--web.config.file", web["config"]] if web else []) + ["-e", SERVE_READ_PROGRAM],
        sanitized)
    prom = None
    try:
        if not port:
            return "FAIL", "sonde serve did not start\n" + indent(proc.stderr())
        web_port = free_port()
        with open(os.path.join(tmp, "prometheus.yml"), "w") as config:
            config.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                         "scrape_configs:\n  - job_name: sonde\n    static_configs:\n"
                         "      - targets: ['%s:%d']\n" % (host, port))
            if web:
                config.write("    scheme: https\n    tls_config:\n      ca_file: %s\n"
                             "    basic_auth:\n      username: %s\n      password: %s\n"
                             % (web["cert"], SERVE_USER, SERVE_PASSWORD))
        prom = subprocess.Popen(
            [prometheus, "--config.file=" + os.path.join(tmp, "prometheus.yml"),
             "--storage.tsdb.path=" + os.path.join(tmp, "data"),
             "--web.listen-address=127.0.0.1:%d" % web_port, "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 30
        up = []
        while time.monotonic() < deadline:
            try:
                up = prometheus_query(web_port, 'up{job="sonde"} == 1')
                if up:
                    break
            except Exception:
                pass
            time.sleep(0.3)
        if not up:
            return "FAIL", "Prometheus never saw the target up"
        big, big_count, small, small_count = SERVE_READS
        subprocess.run([generator, str(big), str(big_count), str(small), str(small_count)],
                       check=True, timeout=30)
        total = big_count + small_count
        deadline = time.monotonic() + 15
        counter = []
        while time.monotonic() < deadline:
            counter = prometheus_query(web_port, 'sonde_reads_total{comm="promread"}')
            if counter and int(float(counter[0]["value"][1])) == total:
                break
            time.sleep(0.5)
        problems = []
        if not counter or int(float(counter[0]["value"][1])) != total:
            problems.append("sonde_reads_total{comm=\"promread\"} is %s, not %d"
                            % (counter and counter[0]["value"][1], total))
        buckets = {r["metric"]["le"]: int(float(r["value"][1])) for r in prometheus_query(
            web_port, 'sonde_read_bytes_bucket{comm="promread"}')}
        # 100 is in [64, 128): le="127"; 3000 in [2048, 4096): le="4095"; cumulative
        expected = {"63": 0, "127": small_count, "2047": small_count, "4095": total,
                    "+Inf": total}
        for le, count in expected.items():
            if buckets.get(le) != count:
                problems.append("bucket le=%s holds %s, not %d" % (le, buckets.get(le), count))
        for series, want in (("sonde_read_bytes_sum", big * big_count + small * small_count),
                             ("sonde_read_bytes_count", total)):
            got = prometheus_query(web_port, '%s{comm="promread"}' % series)
            if not got or int(float(got[0]["value"][1])) != want:
                problems.append("%s is %s, not %d" % (series, got and got[0]["value"][1], want))
        sizes = prometheus_query(web_port, 'sonde_sizes_total')
        by_key = {r["metric"].get("key1"): (r["metric"].get("comm"), int(float(r["value"][1])))
                  for r in sizes}
        if by_key != {"3000": ("promread", big * big_count),
                      "100": ("promread", small * small_count)}:
            problems.append("sonde_sizes_total by (comm, key1): %s" % by_key)
        if counter and counter[0]["metric"].get("job") != "sonde":
            problems.append("labels: %s" % counter[0]["metric"])
        details = ("%d reads scraped through Prometheus%s: buckets %s"
                   % (total, " over TLS with basic auth" if web else "",
                      {k: buckets.get(k) for k in expected}))
        problems += stop_serve(proc, sanitized)
        if problems:
            return "FAIL", "; ".join(problems) + "\n" + details + "\nstderr:\n" + indent(
                proc.stderr())
        return "PASS", details
    finally:
        if prom:
            os.killpg(prom.pid, signal.SIGTERM)
            try:
                prom.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(prom.pid, signal.SIGKILL)
        proc.kill()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


# Every kind of map sonde serve exports, keys that need escaping, an empty map.
SERVE_ALL_KINDS = r"""
tracepoint:syscalls:sys_exit_read /comm == "promkinds" && (args->ret == 3000 || args->ret == 700)/ {
	@calls = count();
	@reads[comm, pid] = count();
	@bytes[comm] = sum(args->ret);
	@smallest[comm] = min(args->ret);
	@largest = max(args->ret);
	@mean[comm] = avg(args->ret);
	@size_stats[comm] = stats(args->ret);
	@log_sizes[comm] = hist(args->ret);
	@fine_sizes = hist(args->ret, 2);
	@linear_sizes[comm] = lhist(args->ret, 0, 4000, 500);
	@last[cpu] = args->ret;
	@names[pid] = comm;
	@escaped["quote\" backslash\\ newline\n tab\t bad\xff\xfe end", comm] = count();
}
tracepoint:syscalls:sys_enter_getppid /comm == "no-such-command-here"/ {
	@never[pid] = count();
	@never_hist[pid] = hist(1);
}
"""


def serve_promtool(sonde, sanitized):
    """`promtool check metrics` accepts what sonde serve writes for every
    aggregation, tuple keys, escaped strings and empty maps; the values are
    those of the reads made; OpenMetrics ends in # EOF."""
    promtool = shutil.which("promtool")
    if not promtool:
        return "SKIP", "no promtool (tests/setup.sh installs prometheus)"
    tmp = tempfile.mkdtemp(prefix="sonde-promtool-")
    generator = os.path.join(tmp, "promkinds")
    shutil.copy(build_tool("read_bursts"), generator)
    proc, host, port = start_serve(sonde, ["-e", SERVE_ALL_KINDS], sanitized)
    try:
        if not port:
            return "FAIL", "sonde serve did not start\n" + indent(proc.stderr())
        problems = []
        expositions = {}
        _, _, expositions["before any event"] = serve_load.fetch(host, port)
        subprocess.run([generator, "3000", "10", "700", "5"], check=True, timeout=30)
        time.sleep(0.3)
        _, headers, text = serve_load.fetch(host, port)
        expositions["after the reads"] = text
        if not headers.get("content-type", "").startswith("text/plain; version=0.0.4"):
            problems.append("content type %s" % headers.get("content-type"))
        for label, exposition in expositions.items():
            check = subprocess.run([promtool, "check", "metrics"], input=exposition,
                                   capture_output=True, text=True, timeout=30)
            if check.returncode != 0:
                problems.append("promtool rejects the exposition %s: %s"
                                % (label, (check.stdout + check.stderr).strip()))
        checks = [
            ("sonde_calls_total", "", "15"),
            ("sonde_reads_total", '{comm="promkinds",pid="%s"}', "15"),
            ("sonde_bytes_total", '{comm="promkinds"}', "33500"),
            ("sonde_smallest", '{comm="promkinds"}', "700"),
            ("sonde_largest", "", "3000"),
            ("sonde_mean", '{comm="promkinds"}', "2233"),
            ("sonde_size_stats_count", '{comm="promkinds"}', "15"),
            ("sonde_size_stats_sum", '{comm="promkinds"}', "33500"),
            ("sonde_size_stats_avg", '{comm="promkinds"}', "2233"),
            ("sonde_log_sizes_bucket", '{comm="promkinds",le="511"}', "0"),
            ("sonde_log_sizes_bucket", '{comm="promkinds",le="1023"}', "5"),
            ("sonde_log_sizes_bucket", '{comm="promkinds",le="2047"}', "5"),
            ("sonde_log_sizes_bucket", '{comm="promkinds",le="4095"}', "15"),
            ("sonde_log_sizes_bucket", '{comm="promkinds",le="+Inf"}', "15"),
            ("sonde_log_sizes_sum", '{comm="promkinds"}', "33500"),
            ("sonde_log_sizes_count", '{comm="promkinds"}', "15"),
            # hist(x, 2): [640, 768) holds 700, [2560, 3072) holds 3000
            ("sonde_fine_sizes_bucket", '{le="767"}', "5"),
            ("sonde_fine_sizes_bucket", '{le="3071"}', "15"),
            ("sonde_linear_sizes_bucket", '{comm="promkinds",le="499"}', "0"),
            ("sonde_linear_sizes_bucket", '{comm="promkinds",le="999"}', "5"),
            ("sonde_linear_sizes_bucket", '{comm="promkinds",le="3499"}', "15"),
            ("sonde_linear_sizes_bucket", '{comm="promkinds",le="+Inf"}', "15"),
            ("sonde_escaped_total",
             r'{key0="quote\" backslash\\ newline\n tab\\x09 bad\\xff\\xfe end",'
             r'comm="promkinds"}', "15"),
        ]
        pids = re.findall(r'sonde_reads_total\{comm="promkinds",pid="(\d+)"\}', text)
        for name, labels, want in checks:
            if "%s" in labels:
                labels = labels % (pids[0] if pids else "?")
            got = metric_lines(text, name).get(labels)
            if got != want:
                problems.append("%s%s is %s, not %s" % (name, labels, got, want))
        for needed in ("# TYPE sonde_never_total counter", "# TYPE sonde_never_hist histogram",
                       "# TYPE sonde_size_stats summary", "# TYPE sonde_size_stats_avg gauge",
                       "# TYPE sonde_last gauge"):
            if needed not in text:
                problems.append("no line %r" % needed)
        if "sonde_never_total{" in text or "sonde_names" in text:
            problems.append("an empty or string map wrote samples")
        if "@names is not exported: its values are string" not in proc.stderr():
            problems.append("the map of strings left out was not named on stderr")
        _, headers, om = serve_load.fetch(
            host, port, headers={"Accept": "application/openmetrics-text; version=1.0.0"})
        if not headers.get("content-type", "").startswith("application/openmetrics-text"):
            problems.append("OpenMetrics content type %s" % headers.get("content-type"))
        if not om.endswith("# EOF\n") or "# TYPE sonde_calls counter" not in om \
                or "sonde_calls_total 15" not in om:
            problems.append("OpenMetrics exposition:\n" + indent(om[:600]))
        problems += stop_serve(proc, sanitized)
        if problems:
            return "FAIL", "\n".join(problems) + "\nexposition:\n" + indent(text[:4000]) + \
                "\nstderr:\n" + indent(proc.stderr())
        return "PASS", "%d lines accepted by promtool" % len(text.splitlines())
    finally:
        proc.kill()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


SERVE_COUNT_PROGRAM = ('tracepoint:syscalls:sys_enter_getppid /comm == "promload"/ '
                       '{ @calls = count(); printf("call %d\\n", pid); }')


def serve_verdict(problems, details, proc):
    """A serve case's result: PASS with its details, or FAIL with the first
    problems, the details and the end of sonde's stderr."""
    if problems:
        return "FAIL", "\n".join(problems[:20]) + "\n" + details + "\nstderr:\n" + indent(
            proc.stderr()[-3000:])
    return "PASS", details


def serve_abuse(sonde, sanitized, seconds=10, calls=50000):
    """While 20 clients scrape 100 times a second, 80 slowloris clients
    trickle requests and malformed ones arrive, a generator makes `calls`
    getppid calls: every scrape succeeds, every bad request gets its status,
    and every call is both counted in @calls and printed."""
    tmp = tempfile.mkdtemp(prefix="sonde-abuse-")
    generator = os.path.join(tmp, "promload")
    shutil.copy(build_tool("getppid_loop"), generator)
    proc, host, port = start_serve(sonde, ["-e", SERVE_COUNT_PROGRAM], sanitized)
    try:
        if not port:
            return "FAIL", "sonde serve did not start\n" + indent(proc.stderr())
        problems = []
        pid = proc.proc.pid
        slow = serve_load.Slowloris(host, port, 80)
        rss = []
        bad_results = []
        worker_errors = []

        def bad_requests():
            # while the scrapers run: each bad request, twice, spread out
            try:
                for _ in range(2):
                    for name, data, want in serve_load.BAD_REQUESTS:
                        got = serve_load.status_of(serve_load.raw_exchange(host, port, data))
                        bad_results.append((name, want, got))
                        time.sleep(seconds / 60.0)
            except Exception as error:
                worker_errors.append("bad requests: %r" % error)

        def generate():
            try:
                time.sleep(seconds / 5.0)
                subprocess.run([generator, str(calls)], check=True, timeout=60)
            except Exception as error:
                worker_errors.append("generator: %r" % error)

        ticks = [0]

        def tick():
            ticks[0] += 1
            if ticks[0] % 2 == 0:
                slow.tick()
            rss.append(serve_load.rss_kb(pid))

        workers = [threading.Thread(target=bad_requests, daemon=True),
                   threading.Thread(target=generate, daemon=True)]
        for worker in workers:
            worker.start()
        load = serve_load.ScrapeLoad(host, port, clients=20, rate=100, seconds=seconds,
                                     on_tick=tick).run()
        for worker in workers:
            worker.join(60)
        slow.close()
        time.sleep(0.5)
        _, _, final = serve_load.fetch(host, port)
        counted = metric_lines(final, "sonde_calls_total").get("")
        problems += worker_errors
        if load.errors:
            problems.append("%d scrapes failed: %s" % (len(load.errors), load.errors[:5]))
        expected_scrapes = int(seconds * 100 * 0.9)
        if len(load.latencies) < expected_scrapes:
            problems.append("only %d scrapes in %d s" % (len(load.latencies), seconds))
        for name, want, got in bad_results:
            if want != got:
                problems.append("%s: status %d, not %d" % (name, got, want))
        if counted != str(calls):
            problems.append("@calls is %s after %d calls" % (counted, calls))
        steady = [r for r in rss[len(rss) // 4:] if r]
        growth = (steady[-1] - steady[0]) if len(steady) > 1 else 0
        if growth > 8192:
            problems.append("RSS grew by %d KiB under load (%s)" % (growth, steady))
        problems += stop_serve(proc, sanitized)
        printed = sum(1 for line in proc.stdout_lines if line.startswith("call "))
        if printed != calls:
            problems.append("printed %d lines for %d calls" % (printed, calls))
        if "Lost" in proc.stderr():
            problems.append("events lost")
        details = ("%s; %d bad requests answered; slowloris connections closed by the server: "
                   "%d of 80; RSS %s..%s KiB; %d calls counted and printed"
                   % (load.summary(), len(bad_results), slow.closed, steady[:1], steady[-1:],
                      calls))
        return serve_verdict(problems, details, proc)
    finally:
        proc.kill()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


def serve_pages(sonde, sanitized):
    """/ links to /metrics; HEAD has the headers and no body; clients that
    never read a 10,000-key scrape do not stop the next scrape, and that
    scrape costs sonde under 50 ms of CPU time."""
    tmp = tempfile.mkdtemp(prefix="sonde-pages-")
    generator = os.path.join(tmp, "promkeys")
    shutil.copy(build_tool("lseek_keys"), generator)
    program = ('tracepoint:syscalls:sys_enter_lseek /comm == "promkeys"/ '
               '{ @offsets[args->offset] = count(); }')
    proc, host, port = start_serve(sonde, ["-e", program], sanitized,
                                   env_extra={"SONDE_MAX_MAP_ENTRIES": "16384"})
    stalled = []
    try:
        if not port:
            return "FAIL", "sonde serve did not start\n" + indent(proc.stderr())
        problems = []
        status, headers, body = serve_load.fetch(host, port, "/")
        if status != 200 or 'href="/metrics"' not in body or \
                not headers.get("content-type", "").startswith("text/html"):
            problems.append("/: %d %s %r" % (status, headers.get("content-type"), body[:200]))
        reply = serve_load.raw_exchange(host, port, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n"
                                        b"Connection: close\r\n\r\n")
        head, _, rest = reply.partition(b"\r\n\r\n")
        if serve_load.status_of(reply) != 200 or rest or b"Content-Length:" not in head:
            problems.append("HEAD /metrics: %r" % reply[:300])
        subprocess.run([generator, "10000"], check=True, timeout=30)
        time.sleep(0.3)
        # clients that ask for the big map and never read it
        for _ in range(5):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect((host, port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            stalled.append(s)
        time.sleep(0.5)
        timings = []
        text = ""
        cpu_before = serve_load.cpu_seconds(proc.proc.pid)
        scrapes = 20
        for _ in range(scrapes):
            elapsed, status, body = serve_load.timed_scrape(host, port)
            timings.append(elapsed)
            text = body.decode("utf-8", "replace")
        # the CPU time sonde spent per scrape: what the scrape costs, whatever
        # else the machine is doing (wall time is in the details)
        cpu_ms = (serve_load.cpu_seconds(proc.proc.pid) - cpu_before) * 1000 / scrapes
        keys = len(metric_lines(text, "sonde_offsets_total"))
        if keys != 10000:
            problems.append("%d keys scraped, not 10000" % keys)
        if metric_lines(text, "sonde_offsets_total").get('{key="9999"}') != "1":
            problems.append("offset 9999 not counted once")
        median = serve_load.percentile(timings, 0.5) * 1000
        # the sanitizer build is several times slower: the limit is the normal build's
        if not sanitized and cpu_ms > 50:
            problems.append("a 10,000-key scrape took %.1f ms of CPU time" % cpu_ms)
        problems += stop_serve(proc, sanitized)
        details = ("10,000-key scrape over loopback: %.1f ms of CPU, wall median %.1f ms, max "
                   "%.1f ms, beside 5 stalled clients" % (cpu_ms, median, max(timings) * 1000))
        return serve_verdict(problems, details, proc)
    finally:
        for s in stalled:
            s.close()
        proc.kill()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


def serve_tool(sonde, sanitized, calls=5000):
    """A tool unchanged: `sonde serve syscount` exports its counts as
    sonde_syscount_c_total, keyed by syscall name (--label names it)."""
    tmp = tempfile.mkdtemp(prefix="sonde-tool-")
    generator = os.path.join(tmp, "promtool_calls")
    shutil.copy(build_tool("getppid_loop"), generator)
    proc, host, port = start_serve(sonde, ["--label", "@c=syscall", "syscount"], sanitized)
    try:
        if not port:
            return "FAIL", "sonde serve did not start\n" + indent(proc.stderr())
        subprocess.run([generator, str(calls)], check=True, timeout=30)
        time.sleep(0.3)
        _, _, text = serve_load.fetch(host, port)
        problems = []
        got = metric_lines(text, "sonde_syscount_c_total").get('{syscall="getppid"}')
        if got is None or int(got) < calls:
            problems.append("sonde_syscount_c_total{syscall=\"getppid\"} is %s after %d calls"
                            % (got, calls))
        if "# TYPE sonde_syscount_c_total counter" not in text:
            problems.append("no counter family sonde_syscount_c_total")
        problems += stop_serve(proc, sanitized)
        if problems:
            return "FAIL", "\n".join(problems) + "\nexposition:\n" + indent(text[:2000]) + \
                "\nstderr:\n" + indent(proc.stderr()[-2000:])
        return "PASS", "getppid counted %s times for %d calls" % (got, calls)
    finally:
        proc.kill()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


SERVE_LOSS_PROGRAM = (
    'let @small = hash(4); '
    'tracepoint:syscalls:sys_enter_getppid /comm == "promloss"/ { @calls = count(); '
    '@small[nsecs] = 1; signal("SIGURG"); '
    'printf("%d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n", pid); } '
    'tracepoint:signal:signal_generate /args->sig == 23 && comm == "promloss"/ '
    '{ @seen = count(); }')


def serve_losses(sonde, sanitized, calls=20000):
    """sonde's own loss counters, scraped: N getppid calls each store a new
    key in a map of 4 (N - 4 updates refused), send a signal whose
    signal_generate probe the kernel must skip (N runs skipped) and print a
    line into a 4 KiB ring buffer that sonde, pinned to the generator's CPU,
    cannot keep up with (printed + lost events = N, and the counter is what
    stderr reported)."""
    tmp = tempfile.mkdtemp(prefix="sonde-loss-")
    generator = os.path.join(tmp, "promloss")
    shutil.copy(build_tool("getppid_loop"), generator)
    proc, host, port = start_serve(sonde, ["--unsafe", "-e", SERVE_LOSS_PROGRAM], sanitized,
                                   env_extra={"SONDE_RINGBUF_SIZE": "4096"},
                                   prefix=("taskset", "-c", "0"))
    try:
        if not port:
            return "FAIL", "sonde serve did not start\n" + indent(proc.stderr())
        _, _, before = serve_load.fetch(host, port)
        subprocess.run(["taskset", "-c", "0", generator, str(calls)], check=True, timeout=60)
        time.sleep(1.5)
        _, _, text = serve_load.fetch(host, port)
        problems = []
        for name in ("sonde_lost_events_total", "sonde_lost_map_updates_total",
                     "sonde_lost_stacks_total", "sonde_lost_probe_runs_total"):
            if metric_lines(before, name) != {"": "0"}:
                problems.append("before any call %s is %s, not 0"
                                % (name, metric_lines(before, name)))
            if "# TYPE %s counter" % name not in text:
                problems.append("no counter family %s" % name)

        def value(name):
            got = metric_lines(text, name).get("")
            return int(got) if got is not None else None
        lost = value("sonde_lost_events_total")
        checks = [("sonde_calls_total", calls), ("sonde_lost_map_updates_total", calls - 4),
                  ("sonde_lost_probe_runs_total", calls), ("sonde_lost_stacks_total", 0)]
        for name, want in checks:
            if value(name) != want:
                problems.append("%s is %s, not %d" % (name, value(name), want))
        if metric_lines(text, "sonde_seen_total").get("", "0") != "0":
            problems.append("signal_generate runs the kernel skipped were counted: %s"
                            % metric_lines(text, "sonde_seen_total"))
        problems += stop_serve(proc, sanitized)
        printed = sum(1 for line in proc.stdout_lines if re.fullmatch(r'\d+ x{40}\n', line))
        reported = [int(n) for n in re.findall(r'Lost (\d+) events', proc.stderr())]
        if not lost:
            problems.append("no events lost with a 4 KiB ring buffer (printed %d)" % printed)
        elif printed + lost != calls:
            problems.append("printed %d + lost %d is not %d calls" % (printed, lost, calls))
        if lost and lost not in (sum(reported), reported[-1] if reported else None):
            problems.append("stderr reported %s lost events, the counter says %d"
                            % (reported, lost))
        return serve_verdict(problems, "calls %d: printed %s, lost %s, refused %s, skipped %s"
                             % (calls, printed, lost, value("sonde_lost_map_updates_total"),
                                value("sonde_lost_probe_runs_total")), proc)
    finally:
        proc.kill()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# sonde serve with a web config: TLS and basic authentication

SERVE_USER, SERVE_PASSWORD = "prom", "s3cret-pw"


def bcrypt_hash(password, cost=10):
    """A $2b$ bcrypt hash from Python's crypt module (libcrypt, as sonde
    uses); crypt is deprecated from Python 3.11 on but present in Debian 12's."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt
    return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << cost))


def openssl(*argv):
    subprocess.run(["openssl"] + list(argv), check=True, capture_output=True, timeout=30)


def serve_tls_files(tmp, cost=10, extra_tls=""):
    """A self-signed P-256 certificate for 127.0.0.1 and a web config with
    one user: {"cert", "key", "config"} paths. Relative file names in the
    config, as exporter-toolkit reads them (next to the config)."""
    cert, key = os.path.join(tmp, "server.crt"), os.path.join(tmp, "server.key")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=sonde-test",
            "-addext", "subjectAltName=IP:127.0.0.1")
    config = os.path.join(tmp, "web.yml")
    with open(config, "w") as f:
        f.write("# sonde serve test\ntls_server_config:\n  cert_file: server.crt\n"
                "  key_file: 'server.key'\n%sbasic_auth_users:\n  %s: %s\n"
                % (extra_tls, SERVE_USER, bcrypt_hash(SERVE_PASSWORD, cost)))
    return {"cert": cert, "key": key, "config": config}


def curl(url, cert, *extra):
    """curl -i over HTTPS trusting cert: (status, head text, body text)."""
    done = subprocess.run(["curl", "-s", "-i", "--max-time", "10", "--cacert", cert] + list(extra)
                          + [url], capture_output=True, timeout=20)
    text = done.stdout.decode("utf-8", "replace").replace("\r\n", "\n")
    head, _, body = text.partition("\n\n")
    match = re.match(r"HTTP/\S+ (\d+)", head)
    return (int(match.group(1)) if match else 0), head, body


def https_request(host, port, context, path="/metrics", auth=None, conn=None):
    """One GET over HTTPS (a new connection unless conn is given):
    (seconds, status, body bytes)."""
    import base64
    import http.client
    headers = {}
    if auth:
        headers["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    own = conn is None
    t0 = time.monotonic()
    if own:
        conn = http.client.HTTPSConnection(host, port, context=context, timeout=10)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        body = response.read()
        return time.monotonic() - t0, response.status, body
    finally:
        if own:
            conn.close()


def serve_tls(sonde, sanitized):
    """HTTPS with basic auth from a web config: the right credentials get
    the counts of a known workload; a wrong password, no credentials and an
    unknown user get 401; plain HTTP and TLS garbage on the port are turned
    away without harm; bcrypt checks (cost 12 here, ~0.3 s each) run beside
    the loop, so authenticated scrapes are not held up by them."""
    import ssl
    if not shutil.which("curl"):
        return "SKIP", "no curl (tests/setup.sh installs it)"
    tmp = tempfile.mkdtemp(prefix="sonde-tls-")
    generator = os.path.join(tmp, "promread")
    shutil.copy(build_tool("read_bursts"), generator)
    web = serve_tls_files(tmp, cost=12)
    proc, host, port = start_serve(sonde, ["--web.config.file", web["config"],
                                           "-e", SERVE_READ_PROGRAM], sanitized)
    try:
        if not port:
            return "FAIL", "sonde serve did not start\n" + indent(proc.stderr())
        problems = []
        if not any(line.startswith("Serving metrics on https://") for line in proc.stderr_lines):
            problems.append("the banner does not say https")
        big, big_count, small, small_count = SERVE_READS
        subprocess.run([generator, str(big), str(big_count), str(small), str(small_count)],
                       check=True, timeout=30)
        url = "https://%s:%d/metrics" % (host, port)
        user = "%s:%s" % (SERVE_USER, SERVE_PASSWORD)
        t0 = time.monotonic()
        status, _, body = curl(url, web["cert"], "-u", user)
        first_ms = (time.monotonic() - t0) * 1000
        reads = metric_lines(body, "sonde_reads_total")
        if status != 200 or reads != {'{comm="promread"}': str(big_count + small_count)}:
            problems.append("right credentials: status %d, sonde_reads_total %s (want %d)"
                            % (status, reads, big_count + small_count))
        for name, extra in (("wrong password", ["-u", SERVE_USER + ":nope"]),
                            ("no credentials", []),
                            ("unknown user", ["-u", "mallory:" + SERVE_PASSWORD]),
                            ("not basic", ["-H", "Authorization: Bearer abc"])):
            status, head, body = curl(url, web["cert"], *extra)
            if status != 401 or 'WWW-Authenticate: Basic realm="sonde"' not in head \
                    or "sonde_reads" in body:
                problems.append("%s: status %d, head %r" % (name, status, head[:200]))
        # plain HTTP to the TLS port: told so in plain HTTP, then closed
        reply = serve_load.raw_exchange(host, port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        if serve_load.status_of(reply) != 400 or b"HTTPS" not in reply:
            problems.append("plain HTTP to the TLS port: %r" % reply[:200])
        # a TLS record of garbage: the connection is dropped
        garbage = serve_load.raw_exchange(host, port, b"\x16\x03\x01\x00\x20" + b"\xff" * 32,
                                          read_timeout=3)
        if b"HTTP/" in garbage:
            problems.append("TLS garbage got an HTTP answer: %r" % garbage[:100])

        context = ssl.create_default_context(cafile=web["cert"])
        # handshake cost: fresh connections for / (tiny), CPU time of sonde per connection
        cpu_before = serve_load.cpu_seconds(proc.proc.pid)
        fresh = [https_request(host, port, context, "/", user)[0] for _ in range(40)]
        handshake_cpu_ms = (serve_load.cpu_seconds(proc.proc.pid) - cpu_before) * 1000 / 40
        # scrape latency: on a kept-alive connection, and with a handshake each
        import http.client
        conn = http.client.HTTPSConnection(host, port, context=context, timeout=10)
        kept = []
        for _ in range(40):
            elapsed, status, body = https_request(host, port, context, auth=user, conn=conn)
            if status != 200 or b"sonde_reads_total" not in body:
                problems.append("kept-alive scrape: status %d" % status)
                break
            kept.append(elapsed)
        # new wrong passwords keep the checker busy (each a bcrypt); the
        # authenticated scrapes meanwhile must not wait for them
        checks = []

        def wrong_passwords():
            for i in range(3):
                checks.append(https_request(host, port, context, auth="%s:wrong%d"
                                            % (SERVE_USER, i)))
        checker = threading.Thread(target=wrong_passwords, daemon=True)
        checker.start()
        during = []
        time.sleep(0.05)
        while checker.is_alive() and len(during) < 400:
            elapsed, status, _ = https_request(host, port, context, auth=user, conn=conn)
            if status != 200:
                problems.append("scrape during checks: status %d" % status)
                break
            during.append(elapsed)
            time.sleep(0.01)
        checker.join(30)
        conn.close()
        if len(checks) != 3 or any(status != 401 for _, status, _ in checks):
            problems.append("wrong passwords: %s" % [(round(t, 3), s) for t, s, _ in checks])
        check_ms = serve_load.percentile([t for t, _, _ in checks], 0.5) * 1000
        worst_ms = max(during or [0]) * 1000
        if check_ms < 100:
            problems.append("a wrong password answered in %.0f ms: was bcrypt run?" % check_ms)
        if len(during) < 10 or worst_ms > check_ms / 2:
            problems.append("%d scrapes during the checks, the slowest %.0f ms (a check: %.0f ms)"
                            % (len(during), worst_ms, check_ms))
        # the server still serves after all that
        status, _, body = curl(url, web["cert"], "-u", user)
        if status != 200:
            problems.append("final scrape: status %d" % status)
        problems += stop_serve(proc, sanitized)
        details = ("first authenticated scrape %.0f ms (one bcrypt at cost 12); "
                   "fresh TLS connection + GET / median %.2f ms, sonde CPU %.2f ms each; "
                   "kept-alive TLS scrape median %.2f ms; wrong password (bcrypt) median %.0f ms; "
                   "%d scrapes during 3 checks, slowest %.1f ms"
                   % (first_ms, serve_load.percentile(fresh, 0.5) * 1000, handshake_cpu_ms,
                      serve_load.percentile(kept, 0.5) * 1000, check_ms, len(during), worst_ms))
        return serve_verdict(problems, details, proc)
    finally:
        proc.kill()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


def serve_tls_client_certificates(sonde, sanitized):
    """client_auth_type RequireAndVerifyClientCert with client_ca_file: a
    client with a certificate from that CA is served, one without is
    refused at the handshake; min_version TLS13 refuses a TLS 1.2 client."""
    if not shutil.which("curl"):
        return "SKIP", "no curl (tests/setup.sh installs it)"
    tmp = tempfile.mkdtemp(prefix="sonde-mtls-")
    client_cert, client_key = os.path.join(tmp, "client.crt"), os.path.join(tmp, "client.key")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", client_key, "-out", client_cert, "-days", "2", "-subj", "/CN=scraper")
    web = serve_tls_files(tmp, extra_tls="  client_ca_file: client.crt\n"
                          "  client_auth_type: RequireAndVerifyClientCert\n  min_version: TLS13\n")
    proc, host, port = start_serve(sonde, ["--web.config.file", web["config"], "-e",
                                           SERVE_COUNT_PROGRAM], sanitized)
    try:
        if not port:
            return "FAIL", "sonde serve did not start\n" + indent(proc.stderr())
        url = "https://%s:%d/metrics" % (host, port)
        user = "%s:%s" % (SERVE_USER, SERVE_PASSWORD)
        got = {name: curl(url, web["cert"], "-u", user, *extra)[0] for name, extra in (
            ("with a certificate", ["--cert", client_cert, "--key", client_key]),
            ("without", []),
            ("TLS 1.2", ["--tls-max", "1.2", "--cert", client_cert, "--key", client_key]))}
        problems = [] if got == {"with a certificate": 200, "without": 0, "TLS 1.2": 0} else [
            "statuses (0: refused at the handshake): %s" % got]
        problems += stop_serve(proc, sanitized)
        if problems:
            return "FAIL", "\n".join(problems) + "\nstderr:\n" + indent(proc.stderr()[-2000:])
        return "PASS", "statuses (0: refused at the handshake): %s" % got
    finally:
        proc.kill()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


def serve_prometheus_tls(sonde, sanitized):
    return serve_prometheus(sonde, sanitized, tls=True)


def serve_web_config_errors(sonde, sanitized):
    """What a web config names is checked at start-up: each bad one stops
    sonde serve with one located sentence and exit status 1, before the
    program is compiled."""
    tmp = tempfile.mkdtemp(prefix="sonde-webcfg-")
    try:
        web = serve_tls_files(tmp)
        other_key = os.path.join(tmp, "other.key")
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-out", other_key)
        locked_key = os.path.join(tmp, "locked.key")
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-aes256", "-pass", "pass:secret", "-out", locked_key)
        not_pem = os.path.join(tmp, "notes.txt")
        with open(not_pem, "w") as f:
            f.write("not a certificate\n")
        cert = "tls_server_config:\n  cert_file: server.crt\n"
        cases = [
            ("key does not match", cert + "  key_file: other.key\n",
             r"web\.yml:3: error: key_file %s does not match the certificate in cert_file %s$"
             % (re.escape(other_key), re.escape(web["cert"]))),
            ("key with a passphrase", cert + "  key_file: locked.key\n",
             r"web\.yml:3: error: key_file \S+ holds no PEM private key sonde can use \(.*"
             r"a key protected by a passphrase is not supported\)$"),
            ("certificate missing", "tls_server_config:\n  cert_file: gone.crt\n"
             "  key_file: server.key\n",
             r"web\.yml:2: error: cert_file \S+/gone\.crt cannot be read: "
             r"No such file or directory$"),
            ("certificate not PEM", "tls_server_config:\n  cert_file: notes.txt\n"
             "  key_file: server.key\n",
             r"web\.yml:2: error: cert_file \S+ holds no PEM certificate sonde can use"),
            ("no key", cert,
             r"web\.yml:1: error: tls_server_config needs both cert_file and key_file$"),
            ("CA without a policy", cert + "  key_file: server.key\n  client_ca_file: server.crt\n",
             r"web\.yml:4: error: client_ca_file is set but no client_auth_type asks"),
            ("verifying without a CA", cert + "  key_file: server.key\n"
             "  client_auth_type: RequireAndVerifyClientCert\n",
             r"web\.yml:4: error: client_auth_type RequireAndVerifyClientCert verifies client "
             r"certificates: it needs client_ca_file$"),
            ("unknown policy", cert + "  key_file: server.key\n  client_auth_type: Maybe\n",
             r"web\.yml:4: error: client_auth_type 'Maybe' is none of"),
            ("unknown version", cert + "  key_file: server.key\n  min_version: TLS14\n",
             r"web\.yml:4: error: min_version is TLS10, TLS11, TLS12 or TLS13, not 'TLS14'$"),
            ("versions crossed", cert + "  key_file: server.key\n  min_version: TLS13\n"
             "  max_version: TLS12\n",
             r"web\.yml:4: error: min_version TLS13 is above max_version TLS12$"),
        ]
        problems = []
        for name, text, pattern in cases:
            config = os.path.join(tmp, "web.yml")
            with open(config, "w") as f:
                f.write(text)
            env = dict(os.environ, **(SANITIZER_ENV if sanitized else {}))
            done = subprocess.run([sonde, "serve", "--listen", "127.0.0.1:0", "--web.config.file",
                                   config, "-e", "BEGIN { exit(); }"],
                                  capture_output=True, timeout=30, env=env)
            lines = done.stderr.decode("utf-8", "replace").splitlines()
            if done.returncode != 1 or len(lines) != 1 or not re.search(pattern, lines[0]):
                problems.append("%s: exit %d, stderr %r" % (name, done.returncode, lines[:5]))
        if problems:
            return "FAIL", "\n".join(problems)
        return "PASS", "%d bad web configs refused, each in one located sentence" % len(cases)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_serve(report, args, binaries, testing_bpftrace):
    if testing_bpftrace:
        return
    binaries = [b for b in binaries if os.path.exists(b[0])]
    # (name, test, also under the sanitizer build)
    tests = [("serve/prometheus-scrapes-known-reads", serve_prometheus, False),
             ("serve/promtool-accepts-every-kind", serve_promtool, True),
             ("serve/pages-and-10000-keys", serve_pages, True),
             ("serve/tool-by-name", serve_tool, True),
             ("serve/losses-counted", serve_losses, True),
             ("serve/abuse-while-tracing", serve_abuse, True),
             ("serve/tls-basic-auth", serve_tls, True),
             ("serve/tls-client-certificates", serve_tls_client_certificates, False),
             ("serve/prometheus-over-tls", serve_prometheus_tls, False),
             ("serve/web-config-errors", serve_web_config_errors, True)] + \
        serve_hostile.tests(sys.modules[__name__])
    for binary, label, sanitized in binaries:
        for name, test, both_builds in tests:
            full = "%s[%s]" % (name, label)
            if (sanitized and not both_builds) or (args.filter and args.filter not in full):
                continue
            try:
                status, details = test(binary, sanitized)
            except Exception as error:
                status, details = "FAIL", "runner error: %r" % error
            report.result(status, full, details)


def main():
    parser = argparse.ArgumentParser(description="Run sonde's tests.")
    parser.add_argument("--only", choices=["unit", "runtime", "diff", "toolsdiff", "special",
                                           "serve", "browser", "vm"])
    parser.add_argument("--filter", help="run only cases whose name contains SUBSTR")
    parser.add_argument("--sonde", help="binary to test (default: build/sonde, then "
                        "build/asan/sonde for runtime and special tests)")
    parser.add_argument("--jobs", type=int, default=2, help="cases run in parallel")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()

    report = Report(args.verbose)
    if args.sonde:
        sonde = args.sonde
        testing_bpftrace = is_bpftrace(sonde)
        binaries = [(sonde, os.path.basename(sonde), False)]
    else:
        sonde = os.path.join(ROOT, "build", "sonde")
        testing_bpftrace = False
        binaries = [(sonde, "sonde", False),
                    (os.path.join(ROOT, "build", "asan", "sonde"), "asan", True)]
    if os.geteuid() != 0 and args.only != "unit":
        print("note: not root; runtime, diff and special tests need root", flush=True)

    groups = [args.only] if args.only else ["unit", "runtime", "diff", "toolsdiff", "special",
                                             "serve", "browser", "vm"]
    if "unit" in groups and not args.sonde:
        run_unit(report, args)
    if "runtime" in groups:
        run_runtime(report, args, binaries, testing_bpftrace)
    if "diff" in groups:
        run_diff(report, args, sonde, testing_bpftrace)
    if "toolsdiff" in groups:
        run_toolsdiff(report, args, sonde)
    if "special" in groups:
        run_special(report, args, binaries, testing_bpftrace)
    if "serve" in groups:
        run_serve(report, args, binaries, testing_bpftrace)
    if "browser" in groups and not testing_bpftrace:
        run_browser(report, args, binaries)
    if "vm" in groups:
        # Normal build only: the sanitizer build is too slow under emulation.
        run_vm(report, args, binaries[0][0], testing_bpftrace)
    report.summary()
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
