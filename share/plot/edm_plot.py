#!/usr/bin/env python3
"""edm_plot.py RUN: the PNGs of an edm run folder, into RUN/plots/ (called by `edm plot RUN`).

Reads RUN/field.h5 (centre-pixel trace, /gamma) and RUN/spectrum.h5 (written by `edm spectrum`:
fluence, spectra, harmonic maps) through edmio (share/python/edmio.py, found beside this folder).
Uses matplotlib's Agg backend, so it never needs a display.
Exit status 0 on success; 1 with one line "edm_plot.py: error: ..." on stderr otherwise.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display on clusters or in tests
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# edmio lives in share/python (source tree) or <prefix>/share/edm/python (installed): beside plot/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), os.pardir, "python"))
import edmio  # noqa: E402


class PlotError(Exception):
    pass


def need(f, path, what):
    if path not in f:
        raise PlotError(f"{f.filename} has no {path} ({what})")
    return f[path]


def save(fig, out, name, written):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    written.append(path)


def harmonic_marks(s, omega_l, nyq):
    """Harmonic positions in units of the laser ω: the requested ones, else multiples of the peak."""
    h = s["/harmonics/omega"][...] if "/harmonics/omega" in s else np.array([])
    order = s["/harmonics/order"][...] if "/harmonics/order" in s else np.array([])
    if h.size:
        return [(int(n), w / omega_l) for n, w in zip(order, h)]
    peak = float(s.attrs.get("peak_omega_on_axis", 0.0))
    if peak <= 0:
        return []
    return [(n, n * peak / omega_l) for n in range(1, 11) if n * peak < nyq]


def screen_axes(ax, z):
    """Primary axes in mm; secondary axes in mrad (θ = atan(x/|z|))."""
    ax.set_xlabel("x (mm)")
    ax.set_ylabel("y (mm)")
    zmm = abs(z) * 1e3
    fwd = lambda x: np.arctan2(x, zmm) * 1e3  # noqa: E731
    inv = lambda t: zmm * np.tan(t * 1e-3)  # noqa: E731
    ax.secondary_xaxis("top", functions=(fwd, inv)).set_xlabel("θx (mrad)")
    ax.secondary_yaxis("right", functions=(fwd, inv)).set_ylabel("θy (mrad)")


def map_plot(data, x, y, z, title, unit, out, name, written):
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    ext = [x[0] * 1e3, x[-1] * 1e3, y[0] * 1e3, y[-1] * 1e3]
    im = ax.imshow(data, origin="lower", extent=ext, aspect="equal", cmap="inferno")
    screen_axes(ax, z)
    ax.set_title(title, pad=28)
    fig.colorbar(im, ax=ax, pad=0.14).set_label(unit)
    save(fig, out, name, written)


def main(argv):
    if len(argv) != 2:
        raise PlotError("usage: edm_plot.py RUN")
    run = argv[1]
    field_path = os.path.join(run, "field.h5")
    spec_path = os.path.join(run, "spectrum.h5")
    if not os.path.isdir(run):
        raise PlotError(f"{run}: no such run folder")
    if not os.path.exists(field_path):
        raise PlotError(f"{field_path}: no such file")
    if not os.path.exists(spec_path):
        raise PlotError(f"{spec_path}: no such file (run `edm spectrum {run}` first)")
    out = os.path.join(run, "plots")
    os.makedirs(out, exist_ok=True)
    written = []

    with edmio.load_spectrum(spec_path) as s, edmio.load_run(run) as f:
        omega = need(s, "/axes/omega", "frequency axis")[...]
        x = need(s, "/axes/x", "pixel x")[...]
        y = need(s, "/axes/y", "pixel y")[...]
        z = float(s.attrs["screen_z"])
        omega_l = float(s.attrs["laser_omega"])
        nyq = float(s.attrs["nyquist_omega"])
        w = omega / omega_l
        marks = harmonic_marks(s, omega_l, nyq)
        window = s.attrs.get("window", b"?")
        window = window.decode() if isinstance(window, bytes) else str(window)
        field = s.attrs.get("field", b"E")
        field = field.decode() if isinstance(field, bytes) else str(field)

        # Fluence map.
        fl = need(s, "/pixel/fluence", "fluence")[...]
        total = float(s.attrs.get("total_energy", np.nan))
        map_plot(fl, x, y, z, f"fluence ∫S·n̂ dt  (total {total:.4g} J through the screen)", "J/m²", out,
                 "fluence.png", written)

        # Spectra, log scale, harmonics marked.
        on_axis = need(s, "/on_axis/d2I_domega_dOmega", "on-axis spectrum")[...]
        integ = need(s, "/integrated/dI_domega", "screen-integrated spectrum")[...]
        for data, name, ylabel, title in (
            (on_axis, "spectrum_on_axis.png", "d²I/dωdΩ (J·s/rad/sr)", "on-axis spectrum (centre pixel)"),
            (integ, "spectrum_integrated.png", "dI/dω (J·s/rad)", "screen-integrated spectrum"),
        ):
            fig, ax = plt.subplots(figsize=(7, 4.2))
            pos = data[1:] > 0
            if np.any(pos):
                ax.semilogy(w[1:][pos], data[1:][pos], lw=1)
                # 14 decades below the peak is below any physics in FP64 fields; deeper is round-off.
                top = data[1:][pos].max()
                ax.set_ylim(max(data[1:][pos].min(), top * 1e-14) * 0.5, top * 3)
            else:
                ax.plot(w, data, lw=1)
            for n, wn in marks:
                ax.axvline(wn, color="tab:red", ls="--", lw=0.8, alpha=0.7)
                ax.text(wn, 1.0, f" n={n}", color="tab:red", transform=ax.get_xaxis_transform(), va="top",
                        fontsize=8)
            ax.set_xlabel("ω / ω_laser")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{title} — window {window}, field {field}")
            ax.grid(True, which="both", alpha=0.3)
            save(fig, out, name, written)

        # Angle-resolved spectrum along the centre row.
        if "/cut_x/d2I_domega_dOmega" in s:
            cut = s["/cut_x/d2I_domega_dOmega"][...]
            theta = s["/axes/theta_x"][...] * 1e3
            fig, ax = plt.subplots(figsize=(7, 4.2))
            floor = cut[cut > 0].max() * 1e-8 if np.any(cut > 0) else 1.0
            im = ax.pcolormesh(w, theta, np.log10(np.maximum(cut, floor)), shading="auto", cmap="viridis")
            ax.set_xlabel("ω / ω_laser")
            ax.set_ylabel("θx (mrad)")
            ax.set_title("log10 d²I/dωdΩ along the centre row")
            fig.colorbar(im, ax=ax).set_label("log10 (J·s/rad/sr)")
            save(fig, out, "spectrum_vs_angle.png", written)

        # Field trace at the centre pixel (a hyperslab: the cube is never read whole).
        ix = int(s.attrs_of("/on_axis").get("ix", len(x) // 2))
        iy = int(s.attrs_of("/on_axis").get("iy", len(y) // 2))
        t = need(f, "/axes/t", "time axis")[...]
        bucket = "E_far" if "/E_far/x" in f else "E"
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for c in "xyz":
            ax.plot((t - t[0]) * 1e15, f[f"/{bucket}/{c}"][iy, ix, :], lw=0.8, label=f"{bucket}{c}")
        ax.set_xlabel(f"t − {t[0]:.9g} s  (fs)")
        ax.set_ylabel("V/m")
        ax.set_title(f"field at the centre pixel (x = {x[ix]*1e3:.3g} mm, y = {y[iy]*1e3:.3g} mm)")
        ax.legend()
        ax.grid(True, alpha=0.3)
        save(fig, out, "field_trace.png", written)

        # γ(τ) of the ensemble.
        if "/gamma/tau" in f and f["/gamma/tau"].size:
            tau = f["/gamma/tau"][...] * 1e15
            fig, ax = plt.subplots(figsize=(7, 4.2))
            ax.plot(tau, f["/gamma/mean"][...], label="mean")
            ax.fill_between(tau, f["/gamma/min"][...], f["/gamma/max"][...], alpha=0.3, label="min–max")
            ax.set_xlabel("τ (fs)")
            ax.set_ylabel("γ")
            ax.set_title("γ(τ) of the ensemble")
            ax.legend()
            ax.grid(True, alpha=0.3)
            save(fig, out, "gamma.png", written)

        # Harmonic maps.
        if "/harmonics/maps" in s and s["/harmonics/maps"].shape[0]:
            maps = s["/harmonics/maps"][...]
            order = s["/harmonics/order"][...]
            hw = s["/harmonics/omega"][...]
            of = s.attrs_of("/harmonics").get("of", b"laser")
            of = of.decode() if isinstance(of, bytes) else str(of)
            for k in range(maps.shape[0]):
                n = int(order[k])
                map_plot(maps[k], x, y, z, f"harmonic {n} of the {of} (ω = {hw[k] / omega_l:.4g} ω_laser)", "J/sr",
                         out, f"harmonic_{n}.png", written)

    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (PlotError, edmio.EdmReadError, OSError, KeyError) as e:
        print(f"edm_plot.py: error: {e}", file=sys.stderr)
        sys.exit(1)
