#!/usr/bin/env python3
"""Two campaign folders of one campaign are equal apart from timings, ids and hosts: the same table
rows (label, state, overrides, results, error), the same files in every cell, every dataset of
field.h5 and spectrum.h5 bit for bit, and the same effective campaign in run.toml (run.output aside).
usage: compare_campaigns.py A B   (exit 1 naming the first difference)"""
import os
import sys

import h5py
import numpy as np
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, os.pardir, "share", "python"))
import edmio  # noqa: E402

IGNORED_FILES = {"checkpoint.h5"}


def fail(msg):
    print(f"compare_campaigns: {msg}", file=sys.stderr)
    sys.exit(1)


def datasets(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def files(d):
    return sorted(os.path.relpath(os.path.join(r, n), d) for r, _, ns in os.walk(d) for n in ns
                  if n not in IGNORED_FILES)


def main(a, b):
    ca, cb = edmio.load_campaign(a), edmio.load_campaign(b)
    if len(ca) == 0:
        fail(f"{a} has no cells")
    if [c.label for c in ca] != [c.label for c in cb]:
        fail(f"labels differ: {[c.label for c in ca]} vs {[c.label for c in cb]}")
    for x, y in zip(ca, cb):
        for col in ("state", "overrides", "results", "error"):
            if getattr(x, col) != getattr(y, col):
                fail(f"{x.label}: {col} {getattr(x, col)!r} vs {getattr(y, col)!r}")
        if x.state != "done":
            fail(f"{x.label} is {x.state}, not done")
        if not x.results:
            fail(f"{x.label} has no results")
        da, db = os.path.join(a, x.label), os.path.join(b, y.label)
        if files(da) != files(db):
            fail(f"{x.label}: files {files(da)} vs {files(db)}")
        for h5 in ("field.h5", "spectrum.h5"):
            with h5py.File(os.path.join(da, h5), "r") as fa, h5py.File(os.path.join(db, h5), "r") as fb:
                sa, sb = datasets(fa), datasets(fb)
                if sorted(sa) != sorted(sb):
                    fail(f"{x.label}/{h5}: datasets differ")
                for k in sa:
                    if not np.array_equal(sa[k], sb[k], equal_nan=sa[k].dtype.kind == "f"):
                        fail(f"{x.label}/{h5}:{k} differs")
        with open(os.path.join(da, "run.toml"), "rb") as fa, open(os.path.join(db, "run.toml"), "rb") as fb:
            ma, mb = tomllib.load(fa)["campaign"], tomllib.load(fb)["campaign"]
        ma["run"].pop("output"), mb["run"].pop("output")
        if ma != mb:
            fail(f"{x.label}/run.toml: the effective campaigns differ")
    print(f"compare_campaigns: {len(ca)} cells equal")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: compare_campaigns.py A B")
    main(sys.argv[1], sys.argv[2])
