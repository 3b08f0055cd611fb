#!/usr/bin/env python3
"""A campaign run with --ranks-per-cell K against the same campaign run with one rank per cell: every
cell done in both; each K-rank cell's run.toml records K ranks ([provenance] ranks, one [timing.ranks]
entry per rank) and the one-rank cell's 1; both run the same effective campaign with the same origin of
every key ([config.origin]; run.output aside); the field cubes agree within the MPI tolerance of
tests/test_mpi.cpp (tol::sharded = 1e-12, relative L2: the ranks sum their electrons in another order
before the reduce), the other datasets of field.h5 (axes, γ trace) bit for bit.
usage: compare_ranks.py ONE_RANK K_RANKS K   (exit 1 naming the first difference)"""
import os
import sys

import h5py
import numpy as np
import tomllib

SHARDED = 1e-12  # tests/support/test_support.hpp tol::sharded


def fail(msg):
    print(f"compare_ranks: {msg}", file=sys.stderr)
    sys.exit(1)


def rows(folder):
    with open(os.path.join(folder, "campaign.toml"), "rb") as f:
        return tomllib.load(f)["cell"]


def ranks_of(folder):
    with open(os.path.join(folder, "run.toml"), "rb") as f:
        m = tomllib.load(f)
    per_rank = m.get("timing", {}).get("ranks", {}).get("field")
    return m["provenance"].get("ranks"), (len(per_rank) if isinstance(per_rank, list) else None)


def campaign_of(folder):
    """run.toml's effective [campaign] and where each key came from, run.output aside."""
    with open(os.path.join(folder, "run.toml"), "rb") as f:
        m = tomllib.load(f)
    c = m["campaign"]
    c["run"].pop("output")
    origin = dict(m["config"]["origin"])
    origin.pop("run.output", None)
    return c, origin


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out


def main(one, many, k):
    ra, rb = rows(one), rows(many)
    if [r["label"] for r in ra] != [r["label"] for r in rb] or not ra:
        fail(f"cells differ: {[r['label'] for r in ra]} vs {[r['label'] for r in rb]}")
    for x, y in zip(ra, rb):
        if x["state"] != "done" or y["state"] != "done":
            fail(f"{x['label']}: {x['state']} / {y['state']} ({y.get('error', '')})")
        a, b = os.path.join(one, x["label"]), os.path.join(many, y["label"])
        if ranks_of(a)[0] != 1 or ranks_of(b) != (k, k):
            fail(f"{x['label']}: ranks {ranks_of(a)} with one rank, {ranks_of(b)} with {k} (want {k}, {k} timings)")
        ca, cb = campaign_of(a), campaign_of(b)
        if ca != cb:
            fail(f"{x['label']}/run.toml: the effective campaigns differ (the mpirun cell is not the sweep's cell)")
        da, db = datasets(os.path.join(a, "field.h5")), datasets(os.path.join(b, "field.h5"))
        if sorted(da) != sorted(db):
            fail(f"{x['label']}: field.h5 datasets differ")
        for name in da:
            cube = name.split("/")[0] in ("E", "B", "E_far", "B_far")
            if cube:
                rel = np.linalg.norm(db[name] - da[name]) / np.linalg.norm(da[name])
                print(f"compare_ranks: {x['label']}/{name}: relative L2 {rel:.3g} ({k} ranks vs 1)")
                if not rel < SHARDED:
                    fail(f"{x['label']}/{name}: relative L2 {rel:.3g} >= {SHARDED}")
            elif not np.array_equal(da[name], db[name]):
                fail(f"{x['label']}/{name} differs")
    print(f"compare_ranks: {len(ra)} cells of {k} ranks agree with one rank")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        fail("usage: compare_ranks.py ONE_RANK K_RANKS K")
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
