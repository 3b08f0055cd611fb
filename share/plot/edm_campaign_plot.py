#!/usr/bin/env python3
"""A result of a campaign against one of its sweep axes (`edm plot OUTPUT`, share/docs/sweeps.md).

usage: edm_campaign_plot.py OUTPUT [--against KEY] [--result NAME]...

Reads OUTPUT/campaign.toml through edmio (share/python/edmio.py) and draws each result of the done
cells against the axis KEY (default: the first axis of the sweep), one line per value of the other
axes, suspect cells ("done (suspect)") as hollow red markers, ω results in ω/ω_L (and ħω in eV when
the cells share one laser) under each run's own expected line (run.toml [kinematics]), into OUTPUT/plots/<result>_vs_<key>.png, each PNG whole or not at all (plotsave.py): no lock
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
# What each result column is (share/docs/outputs.md, the campaign table), for the axis label.
MEANING = {
    "energy": "energy through the screen [J]",
    "peak_omega_on_axis": "on-axis spectral peak ω",
    "line_omega": "expected line ω₁ (run.toml [kinematics])",
    "line_photons": "on-axis photon yield at the line [photons/sr/0.1% BW]",
    "laser_omega": "laser ω_L [rad/s]",
    "wall_s": "wall time [s]",
}
OMEGAS = ("peak_omega_on_axis", "line_omega")  # drawn in ω/ω_L, with ħω in eV where ω_L is one
HBAR_OVER_E = 6.582119569e-16  # ħ/e, eV·s (CODATA 2018, exact)


def _points(cells, against, name, per_laser):
    """(x, y, suspect) of each cell, y in ω/ω_L for an ω column (NaN where a cell has none)."""
    pts = []
    for c in cells:
        y = c.results.get(name, float("nan"))
        if per_laser:
            wl = c.results.get("laser_omega")
            y = y / wl if wl else float("nan")
        pts.append((c.overrides[against], y, c.state == "done (suspect)"))
    pts.sort(key=lambda p: p[0])
    return pts


def _draw(ax, groups, against, name, per_laser):
    """One line per value of the other axes; suspect cells hollow red; the runs' own expected line
    under an ω result."""
    for i, (key, cells) in enumerate(sorted(groups.items(), key=lambda kv: str(kv[0]))):
        pts = _points(cells, against, name, per_laser)
        lab = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in key)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=f"C{i}", label=lab or "cells")
        bad = [p for p in pts if p[2]]
        if bad:
            ax.plot([p[0] for p in bad], [p[1] for p in bad], "o", markersize=11, markerfacecolor="none",
                    markeredgecolor="red", markeredgewidth=1.5, linestyle="none",
                    label="done (suspect): its run.toml says the field is wrong" if i == 0 else None)
        if name == "peak_omega_on_axis" and any("line_omega" in c.results for c in cells):
            line = _points(cells, against, "line_omega", per_laser)
            ax.plot([p[0] for p in line], [p[1] for p in line], "k--", linewidth=1,
                    label="expected line ω₁, each cell's run.toml [kinematics]" if i == 0 else None)


def _omega_axes(ax, cells):
    """ω/ω_L on the left; ħω in eV on the right when every cell has one ω_L."""
    ax.set_ylabel("ω / ω_L (laser angular frequency)")
    lasers = {c.results.get("laser_omega") for c in cells} - {None}
    if len(lasers) == 1:
        ev = HBAR_OVER_E * lasers.pop()
        sec = ax.secondary_yaxis("right", functions=(lambda r: r * ev, lambda e: e / ev))
        sec.set_ylabel("ħω [eV]")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output")
    p.add_argument("--against", default=None)
    p.add_argument("--result", action="append", default=None)
    p.add_argument("--label", action="append", default=[], help="KEY=TEXT: an axis's label (edm passes the key table's)")
    a = p.parse_args(argv)
    labels = dict(x.split("=", 1) for x in a.label if "=" in x)
    camp = edmio.load_campaign(a.output)
    axes = [k for k in camp.meta.get("axes", "").split(",") if k]
    against = a.against or (axes[0] if axes else None)
    # Suspect cells completed: they are drawn, marked, never left out.
    done = [c for c in camp.cells if c.state in ("done", "done (suspect)")]
    if against is None or all(against not in c.overrides for c in camp.cells):
        print(f"edm_campaign_plot: no axis {against!r} in the campaign (axes: {', '.join(axes)})", file=sys.stderr)
        return 2
    # laser_omega only converts ω; line_omega is drawn under the peak: neither is a plot by default.
    results = a.result or sorted({k for c in done for k in c.results} - {"laser_omega", "line_omega"})
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
            groups.setdefault(tuple((k, c.overrides.get(k)) for k in others), []).append(c)
        per_laser = name in OMEGAS and all("laser_omega" in c.results for c in done)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        _draw(ax, groups, against, name, per_laser)
        ax.set_xlabel(labels.get(against, against))
        if per_laser:
            _omega_axes(ax, done)
            ax.set_title(MEANING[name], fontsize="medium")
        elif name in OMEGAS:  # a table without laser_omega (an older edm): ω as recorded
            ax.set_ylabel(f"{MEANING[name]} [rad/s]")
        else:
            ax.set_ylabel(MEANING.get(name, f"{name} ({UNITS.get(name, '')})"))
        if ax.get_legend_handles_labels()[0]:
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
