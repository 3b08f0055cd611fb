#!/usr/bin/env python3
"""edm_plot.py RUN: the PNGs of an edm run folder, into RUN/plots/ (called by `edm plot RUN`).

Reads RUN/field.h5 (centre-pixel trace, /gamma) and RUN/spectrum.h5 (written by `edm spectrum`:
fluence, spectra, harmonic maps) through edmio (share/python/edmio.py, found beside this folder).
Uses matplotlib's Agg backend, so it never needs a display. Each PNG is written under a temporary
name in RUN/plots/ and renamed over its own name once complete, so a plot cut short (an error, a
full disk, SIGINT, SIGTERM, SIGHUP or SIGQUIT) leaves the previous PNG of that name as it was and no half-written file.
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
import plotsave  # noqa: E402  (beside this script)


class PlotError(Exception):
    pass


def need(f, path, what):
    if path not in f:
        raise PlotError(f"{f.filename} has no {path} ({what})")
    return f[path]


def save(fig, out, name, written):
    """fig into out/name, whole or not at all (plotsave.save_png)."""
    try:
        written.append(plotsave.save_png(fig, out, name, 110, bbox_inches="tight"))
    finally:
        plt.close(fig)


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


def map_plot(data, x, y, z, title, unit, out, name, written, angles=None):
    """angles: None for a flat screen (x, y in m); for an angular screen the names of its two
    angles (x, y in rad), drawn in mrad with no screen-plane axes."""
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    ext = [x[0] * 1e3, x[-1] * 1e3, y[0] * 1e3, y[-1] * 1e3]
    im = ax.imshow(data, origin="lower", extent=ext, aspect="equal" if angles is None else "auto", cmap="inferno")
    if angles is None:
        screen_axes(ax, z)
    else:
        ax.set_xlabel(f"{angles[0]} (mrad)")
        ax.set_ylabel(f"{angles[1]} (mrad)")
    ax.set_title(title, pad=28)
    fig.colorbar(im, ax=ax, pad=0.14).set_label(unit)
    save(fig, out, name, written)


# --- Twisted light: the /harmonic_field, /oam, /observables and /envelope groups of spectrum.h5 -----
# (share/docs/twisted_light.md). Phases are of the e^{−iωt} convention, azimuths about the screen
# normal; the fitted ℓ of each circular component goes into the titles.

SIGMA_NAMES = {0: ("+1", "plus"), 1: ("−1", "minus")}


class SpectrumGroup:
    """A group of spectrum.h5 read through edmio: g["ell"] is s["/oam/ell"], g.attrs its attributes."""

    def __init__(self, s, path):
        self.s, self.path = s, path
        self.attrs = s.attrs_of(path)

    def __getitem__(self, name):
        return self.s[f"{self.path}/{name}"]


def text_attr(obj, name, default=""):
    v = obj.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else str(v)


def ell_label(s, h, k):
    """'ℓ = +2.000 (winding +2, 4/4 rings)' from /oam for harmonic index h, component k."""
    if "/oam/ell" not in s or s["/oam/ell"].shape[0] <= h:
        return "no ring fit"
    acc = int(s["/oam/accepted"][h, k])
    total = s["/oam/radius"].shape[0]
    if acc == 0:
        return f"no fit: refused on all {total} rings" if total else "no rings on this screen"
    ell = float(s["/oam/ell"][h, k])
    if not np.isfinite(ell):  # no ring passed the quality cuts, or they share no winding (/oam/cut)
        return f"no ℓ: no ring passes the quality cuts, or they share no winding ({acc}/{total} fitted)"
    wind = int(s["/oam/ell_winding"][h, k])
    agree = "" if s["/oam/consistent"][h, k] else ", rings disagree"
    if "/oam/passed" in s:
        acc = int(s["/oam/passed"][h, k])
    return f"ℓ = {ell:+.3f} (winding {wind:+d}, {acc}/{total} rings{agree})"


def bilinear(img, x, y, xs, ys):
    """img (ny, nx) on axes x, y sampled at points (xs, ys); NaN outside."""
    fx = (xs - x[0]) / (x[1] - x[0]) if len(x) > 1 else np.zeros_like(xs)
    fy = (ys - y[0]) / (y[1] - y[0]) if len(y) > 1 else np.zeros_like(ys)
    inside = (fx >= 0) & (fx <= len(x) - 1) & (fy >= 0) & (fy <= len(y) - 1)
    i = np.clip(np.floor(fx).astype(int), 0, max(len(x) - 2, 0))
    j = np.clip(np.floor(fy).astype(int), 0, max(len(y) - 2, 0))
    tx, ty = fx - i, fy - j
    i1, j1 = np.minimum(i + 1, len(x) - 1), np.minimum(j + 1, len(y) - 1)
    v = (img[j, i] * (1 - tx) + img[j, i1] * tx) * (1 - ty) + (img[j1, i] * (1 - tx) + img[j1, i1] * tx) * ty
    return np.where(inside, v, np.nan)


def plot_phase_maps(s, x, y, z, omega_l, out, written):
    """Phase of A_σ per harmonic and circular component, shaded by amplitude, rings drawn."""
    hf = SpectrumGroup(s, "/harmonic_field")
    amp, phase = hf["circular_amplitude"][...], hf["circular_phase"][...]
    order, wbin = hf["order"][...], hf["omega_bin"][...]
    nu = int(hf.attrs.get("normal", 1))
    radii = s["/oam/radius"][...] if "/oam/radius" in s else np.array([])
    oam = SpectrumGroup(s, "/oam")
    cx, cy = float(oam.attrs.get("centre_x", 0.0)), float(oam.attrs.get("centre_y", 0.0))
    ext = [x[0] * 1e3, x[-1] * 1e3, y[0] * 1e3, y[-1] * 1e3]
    for h in range(amp.shape[0]):
        for k in range(2):
            a = amp[h, k]
            top = a.max() if a.size and a.max() > 0 else 1.0
            fig, ax = plt.subplots(figsize=(6.4, 5.2))
            im = ax.imshow(phase[h, k], origin="lower", extent=ext, aspect="equal", cmap="twilight",
                           vmin=-np.pi, vmax=np.pi, interpolation="nearest")
            # Dark where the amplitude is low: the phase there is undefined or noise.
            shade = np.clip(1 - a / top, 0, 1) ** 2
            ax.imshow(np.zeros_like(a), origin="lower", extent=ext, aspect="equal", cmap="gray", vmin=0, vmax=1,
                      alpha=shade, interpolation="nearest")
            t = np.linspace(0, 2 * np.pi, 200)
            for r in radii:
                ax.plot((cx + r * np.cos(t)) * 1e3, (cy + nu * r * np.sin(t)) * 1e3, color="white", lw=0.6,
                        alpha=0.8)
            screen_axes(ax, z)
            sig, name = SIGMA_NAMES[k]
            ax.set_title(f"harmonic {int(order[h])} (ω = {wbin[h] / omega_l:.4g} ω_laser), σ = {sig}: arg A_σ\n"
                         f"{ell_label(s, h, k)}", pad=28, fontsize=10)
            fig.colorbar(im, ax=ax, pad=0.14).set_label("phase (rad), e^(−iωt), azimuth about the normal")
            save(fig, out, f"phase_{int(order[h])}_sigma_{name}.png", written)


def plot_ring_phases(s, out, written):
    """Unwrapped phase against the azimuth on every ring, with the fitted slope ℓ."""
    o = SpectrumGroup(s, "/oam")
    if o["radius"].shape[0] == 0:
        return
    phi = o["azimuth"][...]
    radii = o["radius"][...]
    z = abs(float(s.attrs["screen_z"]))
    order = s["/harmonic_field/order"][...]
    for h in range(o["ell_fit"].shape[0]):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=False)
        for k, ax in enumerate(axes):
            for r_i, r in enumerate(radii):
                psi = o["phase_unwrapped"][h, k, r_i]
                if int(o["status"][h, k, r_i]) != 0 or not np.any(np.isfinite(psi)):
                    continue
                good = np.isfinite(psi)
                slope = float(o["ell_fit"][h, k, r_i])
                c = np.mean(psi[good] - slope * phi[good])
                label = f"θ = {np.arctan2(r, z) * 1e3:.3g} mrad: ℓ = {slope:+.3f}"
                line = ax.plot(np.degrees(phi[good]), psi[good] - c, lw=1.2, label=label)[0]
                ax.plot(np.degrees(phi), slope * phi, ls="--", lw=0.8, color=line.get_color())
            ax.set_xlabel("azimuth φ about the normal (deg)")
            ax.set_ylabel("unwrapped phase − offset (rad)")
            ax.set_title(f"σ = {SIGMA_NAMES[k][0]}: {ell_label(s, h, k)}", fontsize=9)
            ax.grid(True, alpha=0.3)
            if ax.lines:
                ax.legend(fontsize=7)
        fig.suptitle(f"harmonic {int(order[h])}: phase on rings (dashed: fitted ℓ φ)")
        save(fig, out, f"ring_phase_{int(order[h])}.png", written)


def plot_polar_intensity(s, x, y, out, written):
    """Band energy map in polar coordinates (θ, φ about the normal) and its envelope profiles."""
    if "/harmonics/maps" not in s or "/envelope/radius" not in s:
        return
    maps = s["/harmonics/maps"][...]
    order = s["/harmonics/order"][...]
    z = abs(float(s.attrs["screen_z"]))
    nu = int(s.attrs_of("/harmonic_field").get("normal", 1))
    env = SpectrumGroup(s, "/envelope")
    cx, cy = float(env.attrs.get("centre_x", 0.0)), float(env.attrs.get("centre_y", 0.0))
    radius = env["radius"][...]
    if radius.size == 0:
        return
    rmax = radius[-1] + 0.5 * (radius[1] - radius[0] if radius.size > 1 else radius[0])
    rr = np.linspace(0, rmax, 60)
    pp = np.linspace(0, 2 * np.pi, 181)
    P, Rr = np.meshgrid(pp, rr)
    for h in range(maps.shape[0]):
        img = bilinear(maps[h], x, y, cx + Rr * np.cos(P), cy + nu * Rr * np.sin(P))
        fig = plt.figure(figsize=(11, 4.6))
        ax = fig.add_subplot(1, 2, 1, projection="polar")
        ax.grid(False)
        im = ax.pcolormesh(P, np.arctan2(Rr, z) * 1e3, img, shading="auto", cmap="inferno")
        ax.set_rlabel_position(157.5)
        ax.tick_params(axis="y", labelsize=7, colors="tab:cyan")
        fits = "; ".join(f"σ={SIGMA_NAMES[k][0]}: {ell_label(s, h, k)}" for k in range(2)) if "/oam/ell" in s else ""
        ax.set_title(f"harmonic {int(order[h])}: dW/dΩ against θ (mrad, radial) and φ about the normal\n{fits}",
                     fontsize=8, pad=18)
        fig.colorbar(im, ax=ax, pad=0.12, shrink=0.85).set_label("J/sr")
        ax2 = fig.add_subplot(1, 2, 2, projection="polar")
        az = env["azimuth"][...]
        prof = env["azimuthal_mean"][h]
        ax2.plot(np.append(az, az[0]), np.append(prof, prof[0]), lw=1.2)
        ax2.set_title("speckle envelope: ring-averaged azimuthal profile (J/sr)", fontsize=9, pad=18)
        save(fig, out, f"polar_{int(order[h])}.png", written)


def plot_envelope(s, x, y, z, out, written):
    """The band map, its envelope (the radial profile on the pixels) and the radial profile with contrast."""
    if "/envelope/map" not in s or s["/envelope/map"].shape[0] == 0:
        return
    env = SpectrumGroup(s, "/envelope")
    maps, order = s["/harmonics/maps"][...], s["/harmonics/order"][...]
    theta = np.arctan2(env["radius"][...], abs(z)) * 1e3
    ext = [x[0] * 1e3, x[-1] * 1e3, y[0] * 1e3, y[-1] * 1e3]
    for h in range(maps.shape[0]):
        fig, axes = plt.subplots(1, 3, figsize=(15.5, 4.4))
        fig.subplots_adjust(wspace=0.45)
        for ax, data, title in ((axes[0], maps[h], "band map dW/dΩ"), (axes[1], env["map"][h], "envelope (ring average)")):
            im = ax.imshow(data, origin="lower", extent=ext, aspect="equal", cmap="inferno")
            ax.set_xlabel("x (mm)")
            ax.set_ylabel("y (mm)")
            ax.set_title(f"harmonic {int(order[h])}: {title}", fontsize=9)
            fig.colorbar(im, ax=ax).set_label("J/sr")
        ax = axes[2]
        ax.plot(theta, env["radial_mean"][h], label="ring mean (J/sr)")
        ax.set_xlabel("θ (mrad)")
        ax.set_ylabel("J/sr")
        ax2 = ax.twinx()
        ax2.plot(theta, env["radial_contrast"][h], color="tab:red", ls="--", label="speckle contrast std/mean")
        ax2.set_ylabel("contrast")
        ax.set_title("radial profile", fontsize=9)
        ax.grid(True, alpha=0.3)
        save(fig, out, f"envelope_{int(order[h])}.png", written)


def plot_lz_spectrum(s, omega_l, marks, out, written):
    """dW/dω, dL_z/dω through the screen and ω (dL_z/dω)/(dW/dω), the angular momentum per photon."""
    ob = SpectrumGroup(s, "/observables")
    w = s["/axes/omega"][...]
    dW, dL = ob["dW_domega"][...], ob["dLz_domega"][...]
    x = w / omega_l
    fig, axes = plt.subplots(3, 1, figsize=(7.5, 8.4), sharex=True)
    axes[0].plot(x, dW, lw=1)
    axes[0].set_ylabel("dW/dω (J·s/rad)")
    axes[0].set_title(f"through the screen (no window; L_z about the axis, fields {text_attr(ob, 'lz_field', 'E,B')}):"
                      f" W = {ob.attrs['energy_time']:.4g} J, L_z = {ob.attrs['lz_time']:.4g} J·s", fontsize=9)
    axes[1].plot(x, dL, lw=1, color="tab:green")
    axes[1].axhline(0, color="k", lw=0.5)
    axes[1].set_ylabel("dL_z/dω (J·s²/rad)")
    ratio = np.full_like(dW, np.nan)
    strong = np.abs(dW) > 1e-6 * np.abs(dW).max() if np.abs(dW).max() > 0 else np.zeros(dW.shape, bool)
    ratio[strong] = w[strong] * dL[strong] / dW[strong]
    axes[2].plot(x, ratio, lw=1, color="tab:purple")
    axes[2].set_ylabel("ω (dL_z/dω)/(dW/dω) (ħ per photon)")
    axes[2].set_xlabel("ω / ω_laser")
    if "/observables/harmonic/j_per_photon" in s:
        jn = s["/observables/harmonic/j_per_photon"][...]
        for (n, wn), j in zip(marks, jn):
            axes[2].plot([wn], [j], "o", color="tab:red")
            axes[2].annotate(f" n={n}: J = {j:+.3g} ħ", (wn, j), fontsize=8, color="tab:red")
    for ax in axes:
        for n, wn in marks:
            ax.axvline(wn, color="tab:red", ls="--", lw=0.6, alpha=0.5)
        ax.grid(True, alpha=0.3)
    hi = max([wn for _, wn in marks], default=x[-1]) + 1
    axes[2].set_xlim(0, min(x[-1], hi))
    save(fig, out, "lz_spectrum.png", written)


def plot_twisted_light(s, x, y, z, omega_l, marks, out, written):
    if "/harmonic_field/circular_phase" in s:
        plot_phase_maps(s, x, y, z, omega_l, out, written)
    if "/oam/ell" in s:
        plot_ring_phases(s, out, written)
    plot_polar_intensity(s, x, y, out, written)
    plot_envelope(s, x, y, z, out, written)
    if "/observables/dLz_domega" in s:
        plot_lz_spectrum(s, omega_l, marks, out, written)


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

        # An angular run (screen.type = "angular"): x, y are its two angles in rad, the fluence is per
        # steradian at infinity and per m² on a sphere (share/docs/outputs.md).
        st = s.attrs.get("screen_type", b"flat")
        angular = (st.decode() if isinstance(st, bytes) else str(st)) == "angular"
        far = angular and bool(s.attrs.get("far_field", False))
        sa = s.attrs.get("screen_angles", b"xy")
        sa = sa.decode() if isinstance(sa, bytes) else str(sa)
        angles = None if not angular else (("θx", "θy") if sa == "xy" else ("θ", "φ"))

        # Fluence map.
        fl = need(s, "/pixel/fluence", "fluence")[...]
        total = float(s.attrs.get("total_energy", np.nan))
        where = "into the grid's directions" if angular else "through the screen"
        map_plot(fl, x, y, z, f"fluence ∫S·n̂ dt  (total {total:.4g} J {where})", "J/sr" if far else "J/m²", out,
                 "fluence.png", written, angles)

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
            theta = (s["/axes/theta_x"] if "/axes/theta_x" in s else s["/axes/x"])[...] * 1e3
            fig, ax = plt.subplots(figsize=(7, 4.2))
            floor = cut[cut > 0].max() * 1e-8 if np.any(cut > 0) else 1.0
            im = ax.pcolormesh(w, theta, np.log10(np.maximum(cut, floor)), shading="auto", cmap="viridis")
            ax.set_xlabel("ω / ω_laser")
            ax.set_ylabel(f"{angles[0] if angles else 'θx'} (mrad)")
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
        ax.set_ylabel("V (R·E, the far field)" if bucket == "E_far" else "V/m")
        if angles:
            ax.set_title(f"field in the centre direction ({angles[0]} = {x[ix]*1e3:.3g} mrad, "
                         f"{angles[1]} = {y[iy]*1e3:.3g} mrad)")
        else:
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

        plot_twisted_light(s, x, y, z, omega_l, marks, out, written)

    for name in plotsave.forget_stale_plots(out, written):
        print(f"edm_plot.py: removed {os.path.join(out, name)} (the previous plot's, not drawn for this spectrum)", file=sys.stderr)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    plotsave.unwind_on_signals()
    try:
        sys.exit(main(sys.argv))
    except (PlotError, edmio.EdmReadError, OSError, KeyError) as e:
        print(f"edm_plot.py: error: {e}", file=sys.stderr)
        sys.exit(1)
