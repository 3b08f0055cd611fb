#!/usr/bin/env python3
"""A result of a campaign against one of its sweep axes (`edm plot OUTPUT`, share/docs/sweeps.md).

usage: edm_campaign_plot.py OUTPUT [--against KEY] [--result NAME]...

Reads OUTPUT/campaign.toml through edmio (share/python/edmio.py) and draws each result of the done
cells against the axis KEY (default: the first axis of the sweep), one line per value of the other
axes, into OUTPUT/plots/<result>_vs_<key>.png, each PNG whole or not at all (plotsave.py): no lock
is needed, since the table is read as the one snapshot its writers rename into place. Exit 2 names a
missing axis or result.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "python"))
import edmio  # noqa: E402
import plotsave  # noqa: E402  (beside this script)

UNITS = {"energy": "J", "peak_omega_on_axis": "rad/s", "wall_s": "s"}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output")
    p.add_argument("--against", default=None)
    p.add_argument("--result", action="append", default=None)
    a = p.parse_args(argv)
    camp = edmio.load_campaign(a.output)
    axes = [k for k in camp.meta.get("axes", "").split(",") if k]
    against = a.against or (axes[0] if axes else None)
    done = [c for c in camp.cells if c.state == "done"]
    if against is None or all(against not in c.overrides for c in camp.cells):
        print(f"edm_campaign_plot: no axis {against!r} in the campaign (axes: {', '.join(axes)})", file=sys.stderr)
        return 2
    results = a.result or sorted({k for c in done for k in c.results})
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plots = os.path.join(a.output, "plots")
    os.makedirs(plots, exist_ok=True)
    others = [k for k in axes if k != against]
    for name in results:
        if all(name not in c.results for c in done):
            print(f"edm_campaign_plot: no result {name!r} in the done cells", file=sys.stderr)
            return 2
        groups = {}
        for c in done:
            key = tuple((k, c.overrides.get(k)) for k in others)
            groups.setdefault(key, []).append((c.overrides[against], c.results.get(name, float("nan"))))
        fig, ax = plt.subplots(figsize=(6, 4))
        for key, pts in sorted(groups.items(), key=lambda kv: str(kv[0])):
            pts.sort(key=lambda xy: xy[0])
            lab = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in key) or None
            ax.plot([x for x, _ in pts], [y for _, y in pts], "o-", label=lab)
        ax.set_xlabel(against)
        ax.set_ylabel(f"{name} ({UNITS.get(name, '')})")
        if others:
            ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        try:
            out = plotsave.save_png(fig, plots, f"{name}_vs_{against}.png", 120)
        finally:
            plt.close(fig)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    plotsave.unwind_on_signals()
    try:
        sys.exit(main(sys.argv[1:]))
    except edmio.EdmReadError as e:
        print(f"edm_campaign_plot: {e}", file=sys.stderr)
        sys.exit(1)
