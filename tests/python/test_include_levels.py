# ctest-label: unit
"""The include graph of core/ against the levels share/docs/developing.md states.

developing.md's "Levels" section is the contract: the chain of core/src folders, lowest first, and
a table giving each public header (core/include/edm) its level. This test reads both from the
document itself and fails when
  - a core/src folder or a public header is not in the document (the map and the tree disagree),
  - the document names a folder or header that does not exist,
  - a file includes a header of a higher level, or of another folder on its own level.
Usage: test_include_levels.py [EDM_BINARY]  (the argument, passed by ctest, is unused)
"""
import os
import re
import sys

ROOT = os.environ.get("EDM_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "share", "docs", "developing.md")


def read_levels(text):
    sec = text.split("## Levels", 1)[1].split("\n## ", 1)[0]
    chain = re.search(r"```\n([^`]*<[^`]*)\n```", sec).group(1).strip()
    rank = {}
    for i, group in enumerate(chain.split("<")):
        for name in group.split(","):
            rank[name.strip()] = i
    headers = {}
    for m in re.finditer(r"^\| *([a-z]+) *\| *(.+?) *\|$", sec, re.M):
        level, names = m.group(1), m.group(2)
        if level == "level":
            continue
        for h in re.findall(r"[\w.]+\.(?:hpp|h)\b", names):
            headers[h] = level
    return rank, headers


def main():
    problems = []
    rank, public = read_levels(open(DOC, encoding="utf-8").read())
    src = os.path.join(ROOT, "core", "src")
    inc = os.path.join(ROOT, "core", "include", "edm")
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    loose = sorted(f for f in os.listdir(src) if os.path.isfile(os.path.join(src, f)))
    for f in loose:
        problems.append(f"core/src/{f}: a file outside the pipeline's folders")
    for d in folders:
        if d not in rank:
            problems.append(f"core/src/{d}/ is not in developing.md's levels")
    for d in rank:
        if d not in folders:
            problems.append(f"developing.md names a level '{d}' that is no folder of core/src")
    headers = sorted(os.listdir(inc))
    for h in headers:
        if h not in public:
            problems.append(f"core/include/edm/{h} has no level in developing.md's table")
    for h, lvl in public.items():
        if h not in headers:
            problems.append(f"developing.md's table names edm/{h}, which does not exist")
        if lvl not in rank:
            problems.append(f"developing.md gives edm/{h} the unknown level '{lvl}'")

    def level_of_include(name):
        if name.startswith("edm/"):
            lvl = public.get(name[4:])
            return lvl, lvl
        first = name.split("/", 1)[0]
        if first in rank and "/" in name:
            return first, first
        return None, None

    files = []
    for d in folders:
        for base, _, names in os.walk(os.path.join(src, d)):
            files += [(os.path.join(base, n), d) for n in names if n.endswith((".cpp", ".hpp", ".h", ".def"))]
    files += [(os.path.join(inc, h), public.get(h)) for h in headers]
    checked = 0
    for path, lvl in files:
        if lvl not in rank:
            continue
        rel = os.path.relpath(path, ROOT)
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            target, tlvl = level_of_include(m.group(1))
            if tlvl is None or tlvl not in rank:
                continue  # cl/ sources, lw_slot_host.h, a file beside it: not a level
            checked += 1
            if rank[tlvl] > rank[lvl]:
                problems.append(f"{rel}:{n}: {lvl} includes {m.group(1)} of the higher level {tlvl}")
            elif rank[tlvl] == rank[lvl] and tlvl != lvl:
                problems.append(f"{rel}:{n}: {lvl} includes {m.group(1)} of {tlvl}, on the same level")
    if checked < 50:
        problems.append(f"only {checked} includes were checked: the scan is broken")
    for p in problems:
        print("FAIL:", p)
    print(f"{checked} includes checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
