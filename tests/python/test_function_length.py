# ctest-label: unit
"""No function in core/ is longer than about 80 lines (share/docs/developing.md, Conventions).

Runs scripts/funclen.py over core/ with the limit and the allow-list below; it fails on a function
over the limit that the list does not name, and on a listed one that is no longer over it (then the
entry is dropped). Usage: test_function_length.py [EDM_BINARY]  (the argument, passed by ctest, is
unused)
"""
import os
import subprocess
import sys

ROOT = os.environ.get("EDM_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 80  # lines, opening brace to closing brace: "about 80 lines" of the house rules
ALLOWED = []  # write_checkpoint was split in issue 13's branch


def check_the_checker():
    """funclen.py on a made-up file: braces in strings, comments and raw strings do not count, a
    constructor with a braced initialiser and a lambda inside a function are measured whole."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import funclen

    body = "\n".join(f"  x += {i};" for i in range(90))
    text = (
        "namespace a {\n"
        "struct S { int v; S(int x) : v{x} {\n  v += 1;\n} };\n"
        "// a comment { with a brace\n"
        "int big(int x) {\n"
        '  const char* s = "}}}"; char c = \'{\'; const char* r = R"d(})d"; /* } */\n'
        "  auto f = [&](int y) { return y + 1; };\n"
        f"{body}\n"
        "  return f(x);\n"
        "}\n"
        "}  // namespace a\n"
    )
    found = {name: length for name, _, length in funclen.functions(funclen.blank_code(text))}
    expect = {"S": 3, "big": 95}
    if found != expect:
        print(f"FAIL: funclen.py measured {found}, expected {expect}", file=sys.stderr)
        return False
    return True


def main():
    if not check_the_checker():
        return 1
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "funclen.py"), os.path.join(ROOT, "core"), str(LIMIT)]
    for entry in ALLOWED:
        cmd += ["--allow", entry]
    done = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        print(f"FAIL: functions in core/ over {LIMIT} lines; split them into named steps", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
