#!/usr/bin/env python3
"""edm_compare_plot.py RUN_A RUN_B OUT.png --file F --dataset D --measure M --rel-l2 X: the difference
plot of `edm compare RUN_A RUN_B --plot OUT.png` (apps/cmd_compare.cpp; share/docs/compare.md).

edm compare has already checked that the runs are of one screen and found the compared quantity of
largest relative L2 (file F, dataset D, measure M: value | amplitude | phase); this script draws that
quantity in run A, run B and A − B:
- a field.h5 component (/E/x …): the screen map at the time sample of largest |A − B| (the cube is
  read one screen row at a time to find it), and, when both runs hold spectrum.h5's harmonic maps,
  a second row with the amplitude and the phase difference of the harmonic map where |A − B| is largest
  (not with --mirror-z: B is then reflected, E_z, B_x and B_y negated, and spectrum.h5 is not compared);
- a spectrum.h5 dataset: the map (ny, nx) of the slice (harmonic, component or ω) where |A − B| is
  largest, or the curve of a 1-D dataset; a complex one drawn as the measure says (|A − B| for a
  value, |A| − |B| for an amplitude, the wrapped arg A − arg B for a phase, left blank where |B| is
  below 1e-3 of its largest, as edm compare's max column does).
The title and the PNG's text chunks ("edm:dataset", "edm:measure", "edm:file", "edm:rel_l2",
"edm:where", "edm:panels": the panels' titles) name what is drawn. The PNG is written under a temporary name beside OUT and renamed
over it once whole (plotsave.py), so a plot cut short leaves no half-written file.
Exit status 0 on success; 1 with one line "edm_compare_plot.py: error: ..." on stderr otherwise.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display on clusters or in tests
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import edm_plot  # noqa: E402  (beside this script: the Screen and the map extents of edm plot)
import edmio  # noqa: E402  (edm_plot put share/python on the path)
import plotsave  # noqa: E402

PHASE_FLOOR = 1e-3  # edm/compare.hpp kPhaseFloor: phases of smaller |B| are noise
HARMONIC_MAPS = ("harmonic_field/circular", "harmonic_field/cartesian")


class CompareError(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(prog="edm_compare_plot.py")
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument("out")
    p.add_argument("--file", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--measure", required=True, choices=("value", "amplitude", "phase"))
    p.add_argument("--rel-l2", required=True)
    p.add_argument("--mirror-z", action="store_true", help="B is A's mirror run in z → −z: E_z, B_x, B_y negated")
    return p.parse_args(argv[1:])


def short(run):
    return os.path.basename(os.path.normpath(run))


def wrapped(d):
    """A phase difference in (−π, π] (edm compare wraps it the same way)."""
    return np.pi - np.mod(np.pi - d, 2 * np.pi)


def mirror_sign(name, mirror_z):
    """The sign of B's component under z → −z (edm compare --mirror-z): E a vector, B an axial vector."""
    if not mirror_z:
        return 1.0
    record, comp = name.strip("/").split("/")
    return -1.0 if (comp == "z") == record.startswith("E") else 1.0


def largest_field_difference(ra, rb, name, sign):
    """(iy, ix, it, |A − B| there) of largest |A − B| in a field component, one screen row at a time."""
    best = (0, 0, 0, -1.0)
    for iy in range(len(ra.axes["y"])):
        d = np.abs(ra.field(name, iy=iy).data - sign * rb.field(name, iy=iy).data)
        d = np.where(np.isnan(d), np.inf, d)
        k = np.unravel_index(int(np.argmax(d)), d.shape)
        if d[k] > best[3]:
            best = (iy, int(k[0]), int(k[1]), float(d[k]))
    return best


def draw_maps(axes, maps, titles, x, y, screen, units, cmaps):
    """One map per axes: A and B on one colour scale, the difference on its own, symmetric about 0."""
    finite = [m[np.isfinite(m)] for m in maps[:2]]
    lo = min((float(f.min()) for f in finite if f.size), default=0.0)
    hi = max((float(f.max()) for f in finite if f.size), default=1.0)
    dmax = float(np.nanmax(np.abs(maps[2]))) if np.isfinite(maps[2]).any() else 1.0
    if lo < 0 < hi:  # a signed field: white at 0
        lo, hi = -max(-lo, hi), max(-lo, hi)
    limits = [(lo, hi), (lo, hi), (-dmax or -1.0, dmax or 1.0)]
    for ax, m, title, unit, cmap, (vmin, vmax) in zip(axes, maps, titles, units, cmaps, limits):
        im = ax.imshow(m, origin="lower", extent=edm_plot.extent_mm(x, y, screen.sy), aspect="auto", cmap=cmap,
                       vmin=vmin, vmax=vmax)
        screen.label_map(ax)
        ax.set_title(title, fontsize=9)
        plt.colorbar(im, ax=ax, pad=0.04 if screen.angles else 0.16).set_label(unit)


def field_row(ra, rb, name, screen, axes, mirror_z):
    """The component's screen maps at the time sample of largest |A − B|; returns where that is."""
    sign = mirror_sign(name, mirror_z)
    iy, ix, it, _ = largest_field_difference(ra, rb, name, sign)
    a, b = ra.field(name, it=it), rb.field(name, it=it)
    t_fs = a.coords["t"] * 1e15
    x, y = ra.axes["x"], ra.axes["y"]
    mirrored = " mirrored" if mirror_z else ""
    draw_maps(axes, [a.data, sign * b.data, a.data - sign * b.data],
              [f"A: {name} at t = {t_fs:.6g} fs", f"B (reference){mirrored}: {name}", f"A − B: {name}"],
              x, y, screen, [a.unit] * 3, ["RdBu_r", "RdBu_r", "PuOr_r"])
    return f"t = {t_fs:.6g} fs (sample {it}), largest |A − B| at {screen.where(x, y, ix, iy)}"


def map_axes(shape, ny, nx):
    """The two axes of a dataset that are the screen's (ny, nx), consecutive; None when it has none."""
    for k in range(len(shape) - 1):
        if shape[k] == ny and shape[k + 1] == nx:
            return k
    return None


def slice_of_largest(a, b, k):
    """The index of the (ny, nx) plane at axes k, k+1 that holds the largest |A − B|."""
    d = np.abs(a - b)
    d = np.where(np.isnan(d), np.inf, d)
    at = list(np.unravel_index(int(np.argmax(d)), d.shape))
    at[k] = at[k + 1] = slice(None)
    return tuple(at)


def measured(a, b, measure):
    """A, B and the difference as edm compare measures them (real datasets: the values)."""
    if not np.iscomplexobj(a):
        return a, b, a - b, ""
    if measure == "value":
        return np.abs(a), np.abs(b), np.abs(a - b), "|·| "
    if measure == "amplitude":
        return np.abs(a), np.abs(b), np.abs(a) - np.abs(b), "|·| "
    floor = PHASE_FLOOR * np.nanmax(np.abs(b)) if b.size else 0
    d = np.where(np.abs(b) >= floor, wrapped(np.angle(a) - np.angle(b)), np.nan)
    return np.angle(a), np.angle(b), d, "arg "


def spectrum_row(sa, sb, name, measure, screen, ny, nx, x, y, axes):
    """A spectrum.h5 dataset: the (ny, nx) plane of largest |A − B|, or a curve; returns where."""
    a, b = sa["/" + name], sb["/" + name]
    k = map_axes(a.shape, ny, nx)
    unit = "rad" if measure == "phase" else sa.units.get("/" + name, "")
    if k is None:  # a curve (or a table): drawn flat against its index
        ma, mb, md, how = measured(a.ravel(), b.ravel(), measure)
        for ax, m, title in zip(axes, (ma, mb, md), ("A", "B (reference)", "A − B")):
            ax.plot(m, lw=1)
            ax.set_title(f"{title}: {how}{name}", fontsize=9)
            ax.set_xlabel("index")
            ax.set_ylabel(unit)
        return f"{a.size} values"
    at = slice_of_largest(a, b, k)
    ma, mb, md, how = measured(a[at], b[at], measure)
    draw_maps(axes, [ma, mb, md], [f"A: {how}{name}", f"B (reference): {how}{name}", f"A − B: {how}{name} {measure}"],
              x, y, screen, [unit] * 3, ["inferno", "inferno", "PuOr_r"])
    fixed = [f"index {i}" for i in at if not isinstance(i, slice)]
    return "slice " + (", ".join(fixed) if fixed else "whole") + f" of {a.shape}"


def harmonic_row(sa, sb, screen, ny, nx, x, y, axes):
    """The harmonic map of both runs (when both hold one): amplitude and phase difference."""
    for name in HARMONIC_MAPS:
        if "/" + name in sa and "/" + name in sb and sa["/" + name].shape == sb["/" + name].shape:
            a, b = sa["/" + name], sb["/" + name]
            k = map_axes(a.shape, ny, nx)
            if k is None:
                continue
            at = slice_of_largest(a, b, k)
            _, _, amp, _ = measured(a[at], b[at], "amplitude")
            _, _, phase, _ = measured(a[at], b[at], "phase")
            unit = sa.units.get("/" + name, "")
            for ax, m, title, u in ((axes[0], amp, f"|A| − |B|: {name}", unit),
                                    (axes[1], phase, f"arg A − arg B: {name}", "rad")):
                dmax = float(np.nanmax(np.abs(m))) if np.isfinite(m).any() else 0.0
                im = ax.imshow(m, origin="lower", extent=edm_plot.extent_mm(x, y, screen.sy), aspect="auto",
                               cmap="PuOr_r", vmin=-dmax or -1.0, vmax=dmax or 1.0)
                ax.set_title(title, fontsize=9)
                screen.label_map(ax)
                plt.colorbar(im, ax=ax, pad=0.04 if screen.angles else 0.16).set_label(u)
            axes[2].axis("off")
            return True
    return False


def spectra_of(run):
    path = os.path.join(run, "spectrum.h5")
    return edmio.load_spectrum(path) if os.path.exists(path) else None


def main(argv):
    args = parse_args(argv)
    out_dir, out_name = os.path.split(os.path.abspath(args.out))
    ra, rb = edmio.load_run(args.run_a), edmio.load_run(args.run_b)
    sa, sb = spectra_of(args.run_a), spectra_of(args.run_b)
    screen = edm_plot.Screen((ra.attrs,), {**ra.manifest.get("campaign", {}).get("screen", {}),
                                           **ra.manifest.get("screen", {})})
    x, y = ra.axes["x"], ra.axes["y"]
    field = args.file == "field.h5"
    rows = 2 if field and not args.mirror_z and sa is not None and sb is not None and any(
        "/" + n in sa and "/" + n in sb for n in HARMONIC_MAPS) else 1
    fig, axes = plt.subplots(rows, 3, figsize=(15, 4.4 * rows), squeeze=False)
    if field:
        where = field_row(ra, rb, args.dataset.strip("/"), screen, axes[0], args.mirror_z)
    else:
        if sa is None or sb is None:
            raise CompareError(f"{args.dataset}: both runs need spectrum.h5")
        where = spectrum_row(sa, sb, args.dataset.strip("/"), args.measure, screen, len(y), len(x), x, y, axes[0])
    if rows == 2 and not harmonic_row(sa, sb, screen, len(y), len(x), x, y, axes[1]):
        for ax in axes[1]:
            ax.axis("off")
    title = (f"edm compare: {args.dataset} {args.measure} ({args.file}), relative L2 {float(args.rel_l2):.3g}\n"
             f"A = {short(args.run_a)}, B = {short(args.run_b)} (reference); {where}")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    meta = {"Title": title, "edm:file": args.file, "edm:dataset": args.dataset, "edm:measure": args.measure,
            "edm:rel_l2": args.rel_l2, "edm:where": where,
            "edm:panels": " | ".join(ax.get_title() for ax in axes.flat if ax.get_title())}
    try:
        plotsave.save_png(fig, out_dir, out_name, 110, metadata=meta)
    finally:
        plt.close(fig)
    return 0


if __name__ == "__main__":
    plotsave.unwind_on_signals()
    try:
        sys.exit(main(sys.argv))
    except (CompareError, edmio.EdmioError, OSError, KeyError, ValueError) as e:
        print(f"edm_compare_plot.py: error: {e}", file=sys.stderr)
        sys.exit(1)
