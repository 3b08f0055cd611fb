#!/usr/bin/env python3
"""List the C++ functions whose body is longer than a limit (share/docs/developing.md: about 80 lines).

Usage: funclen.py DIR LIMIT [--allow FILE:FUNCTION ...]

Reads every .cpp and .hpp file below DIR, blanks out comments, string and character literals
(raw strings too) and preprocessor lines, then matches braces. A brace opens a function body when,
at namespace or class scope, it follows a parameter list: `)`, a trailing qualifier (const,
noexcept, override, final, mutable), a trailing return type (`-> T`), a constructor's initialiser
list, or a lambda's `]`. Lambdas inside a function count towards that function. The length is the
number of lines from the opening brace to the closing one, blank and comment lines included: what
a reader has to scroll through.

Prints one line per function over the limit, `path:line: name: N lines`, longest first, and exits
1 when there is any that the allow-list does not name (FILE relative to DIR's parent, the way the
lines print). An allowed entry that is no longer over the limit is stale and also fails, so that
the list only shrinks.
"""
import os
import re
import sys

RAW = re.compile(r'(?:u8|u|U|L)?R"([^(\s\\)]{0,16})\(')
QUALIFIERS = {"const", "noexcept", "override", "final", "mutable", "try", "volatile", "&", "&&"}


def blank_code(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if c not in " \t":
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif RAW.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = RAW.match(text, i)
            end = text.find(")" + m.group(1) + '"', m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            # A string or a character literal (a digit separator 1'000 is not one).
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_template(header):
    """`template <...> void f()` -> `void f()` (repeated, for nested template heads)."""
    while True:
        m = re.match(r"\s*template\s*<", header)
        if not m:
            return header
        depth, j = 1, m.end()
        while j < len(header) and depth:
            depth += {"<": 1, ">": -1}.get(header[j], 0)
            j += 1
        header = header[j:]


def function_name(header):
    """The (qualified) name before the parameter list of a function header, or "lambda"."""
    h = strip_template(header)
    h = re.sub(r"\[\[.*?\]\]", " ", h)
    m = re.search(r"((?:[A-Za-z_]\w*\s*(?:<[^;{}()]*?>)?\s*::\s*)*(?:operator\s*(?:\(\s*\)|[^\s(]+)|~?[A-Za-z_]\w*))\s*\(", h)
    if not m or re.search(r"\[[^\]]*\]\s*(\([^)]*\))?\s*[^()]*$", h.strip()) and h.strip().startswith(("[", "=")):
        return "lambda"
    return re.sub(r"\s+", "", m.group(1))


def opens_function(header):
    h = header.strip()
    if not h:
        return False
    last = re.findall(r"[A-Za-z_]\w*|&&|->|\S", h)[-1]
    if last in (")", "]") or last in QUALIFIERS:
        return True
    if "(" in h and re.search(r"\)\s*(?:const|noexcept|&|&&|\s)*->", h):
        return True  # trailing return type
    if last == "}" and re.search(r"\)\s*(?:noexcept\s*)?:(?!:)", h):
        return True  # after a constructor's initialiser list whose last member is braced
    return False


def scope_kind(header):
    h = strip_template(header).strip()
    h = re.sub(r"^(?:\[\[.*?\]\]\s*)+", "", h)
    if re.search(r"\bnamespace\b", h) or h.startswith("extern"):
        return "namespace"
    if re.match(r"(?:typedef\s+)?(?:class|struct|union)\b", h) and not opens_function(h):
        return "class"
    if re.match(r"enum\b", h):
        return "data"
    if opens_function(h):
        return "function"
    return "data"


def match_brace(code, i):
    """Index of the brace that closes the one at i."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def functions(code):
    """(name, first line, body lines) of every function body at namespace or class scope."""
    found = []
    header_start = 0
    i = 0
    while i < len(code):
        c = code[i]
        if c == ";":
            header_start = i + 1
        elif c == "}":
            header_start = i + 1  # the end of a namespace or class
        elif c == "{":
            header = code[header_start:i]
            kind = scope_kind(header)
            if kind in ("namespace", "class"):
                header_start = i + 1
            else:
                end = match_brace(code, i)
                if kind == "function":
                    first, last = code.count("\n", 0, i) + 1, code.count("\n", 0, end) + 1
                    found.append((function_name(header), first, last - first + 1))
                    header_start = end + 1
                # A data brace (an initialiser, an enum, a member's braced initialiser in a
                # constructor's list) stays part of the header that goes on after it.
                i = end
        i += 1
    return found


def scan(root, limit):
    """[(path, line, name, length)] over the limit below root, paths relative to root's parent."""
    base = os.path.dirname(os.path.abspath(root))
    long = []
    for d, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith((".cpp", ".hpp")):
                continue
            path = os.path.join(d, name)
            with open(path, encoding="utf-8") as fh:
                code = blank_code(fh.read())
            rel = os.path.relpath(path, base)
            for fn, line, length in functions(code):
                if length > limit:
                    long.append((rel, line, fn, length))
    long.sort(key=lambda e: (-e[3], e[0], e[1]))
    return long


def main(argv):
    args = [a for a in argv[1:]]
    allow = set()
    while "--allow" in args:
        k = args.index("--allow")
        allow.add(args[k + 1])
        del args[k:k + 2]
    if len(args) != 2 or not args[1].isdigit():
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root, limit = args[0], int(args[1])
    long = scan(root, limit)
    bad = 0
    seen = set()
    for rel, line, fn, length in long:
        key = rel + ":" + fn
        seen.add(key)
        note = " (allowed)" if key in allow else ""
        bad += not note
        print(f"{rel}:{line}: {fn}: {length} lines{note}")
    for key in sorted(allow - seen):
        print(f"{key}: allowed but no longer over {limit} lines: drop it from the allow-list")
        bad += 1
    if bad:
        print(f"{bad} function(s) over {limit} lines (or stale allow-list entries)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
