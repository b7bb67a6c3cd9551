#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The include check: every #include in src/ must point down the layers.

Each folder of src/ is a layer, and LAYERS below says which layers each one
may include (its own always). An include that points another way fails the
check with one sentence naming the file, the header and the direction.

The includes that crossed the wrong way when the check was written are
listed in tests/layers/known.txt, one `FILE -> HEADER` a line: issue 20
removes them. A listed include that is gone must leave the list too, so the
list only shrinks. Run from the repository root; exits 1 on a finding.
"""
import os
import re
import sys

# layer: the layers it may include, besides itself (docs/architecture.md)
LAYERS = {
    "common": set(),
    "kernel": {"common"},
    "probes": {"common", "kernel"},
    "render": {"common"},
    "aggregations": {"common", "kernel"},
    "compiler": {"common", "kernel", "probes", "aggregations"},
    "runtime": {"common", "kernel", "probes", "aggregations", "render"},
    "serve": {"common", "kernel", "probes", "aggregations", "render", "runtime"},
    "toolkit": {"common", "kernel", "probes", "compiler"},
}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    """The layer of src/LAYER/...; None for src/main.c and the like."""
    parts = path.split(os.sep)
    return parts[1] if len(parts) > 2 and parts[0] == "src" else None


def resolve(source, header):
    """The file an #include "header" in source names, as the compiler finds
    it (beside source, then under src/), relative to the root; None if it
    is not in the tree (build/gen/)."""
    for base in (os.path.dirname(source), "src"):
        candidate = os.path.normpath(os.path.join(base, header))
        if os.path.exists(candidate):
            return candidate
    return None


def crossings(root):
    """(file, header, from layer, to layer) for each include that points a
    way LAYERS does not allow."""
    found = []
    for directory, _, names in os.walk(os.path.join(root, "src")):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.relpath(os.path.join(directory, name), root)
            source_layer = layer_of(path)
            if source_layer is None:
                continue
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
            for header in INCLUDE_RE.findall(text):
                target = resolve(path, header)
                target_layer = layer_of(target) if target else None
                if target_layer is None or target_layer == source_layer:
                    continue
                if target_layer not in LAYERS.get(source_layer, set()):
                    found.append((path, target, source_layer, target_layer))
    return found


def main():
    root = os.getcwd()
    known_path = os.path.join(root, "tests", "layers", "known.txt")
    known = set()
    with open(known_path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                known.add(tuple(part.strip() for part in line.split("->")))
    problems = []
    seen = set()
    for path, target, source_layer, target_layer in crossings(root):
        seen.add((path, target))
        if (path, target) not in known:
            problems.append("%s includes %s: %s/ may not include %s/ (it may use %s)"
                            % (path, target, source_layer, target_layer,
                               ", ".join(sorted(LAYERS[source_layer])) + "/"
                               if LAYERS[source_layer] else "only itself"))
    for path, target in sorted(known - seen):
        problems.append("tests/layers/known.txt lists %s -> %s, which no longer crosses a "
                        "layer: remove the line" % (path, target))
    for problem in problems:
        print(problem)
    print("%d includes crossing the layers the wrong way, %d of them known"
          % (len(seen), len(seen & known)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
