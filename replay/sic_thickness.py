"""Replay of CUMCM 2025 B (SiC/Si epilayer thickness): the thickness from the
official spectra by the interference condition.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "cumcm-2025-b-sic-thickness"

SPECTRA = {("SiC", 10): 1, ("SiC", 15): 2, ("Si", 10): 3, ("Si", 15): 4}   # statement: 附件说明
SAMPLES = ("Si", "SiC")
MAX_FITS = 4
MAX_JOINT = 2
SMOOTH_HALF = 10            # moving average over 21 samples (the grid step is 0.482 cm^-1: about 10 cm^-1)
HYSTERESIS_PCT = 0.3        # an extremum is a swing of at least 0.3 percentage points of reflectance
MATCH_FRACTION = Fraction(3, 20)   # a named extremum within 0.15 of the median named spacing of the data's
MIN_EXTREMA = 4             # at least 3 fringe periods
MAX_EXTREMA = 200
INDEX_RANGE = (Decimal(1), Decimal(10))   # any index in the witness's Cauchy form must lie in (1, 10)
THICKNESS_PLACES = 6
PERIOD_PLACES = 4

DERIVED = tuple(
    [f"fit{i}.{what}" for i in range(MAX_FITS) for what in ("extrema_ok", "thickness_um", "period_cm_minus_1")]
    + [f"joint{j}.thickness_um" for j in range(MAX_JOINT)]
    + [f"{s.lower()}.joint_thickness_um" for s in SAMPLES]
)


# ------------------------------------------------------------------ official data

@dataclass(frozen=True)
class Spectrum:
    """One attachment: wavenumbers (cm^-1, ascending), reflectance (%), and the
    extrema the detector finds, as ``(kind, wavenumber)`` in ascending order."""

    nu: tuple[float, ...]
    reflectance: tuple[float, ...]
    extrema: tuple[tuple[str, float], ...]


def smooth(values: tuple[float, ...], half: int = SMOOTH_HALF) -> list[float]:
    """Centred moving average over ``2 * half + 1`` samples (fewer at the ends)."""
    cum = [0.0]
    for v in values:
        cum.append(cum[-1] + v)
    n = len(values)
    out = []
    for j in range(n):
        a, b = max(0, j - half), min(n, j + half + 1)
        out.append((cum[b] - cum[a]) / (b - a))
    return out


def data_extrema(nu: tuple[float, ...], reflectance: tuple[float, ...],
                 delta: float = HYSTERESIS_PCT) -> tuple[tuple[str, float], ...]:
    """Alternating maxima and minima of the smoothed spectrum, each a swing of at
    least ``delta`` from the previous extremum (hysteresis scan, left to right)."""
    s = smooth(reflectance)
    out: list[tuple[str, float]] = []
    hi = lo = 0
    mode = None                     # None: not yet decided; "up": after a minimum; "down": after a maximum
    for j in range(len(s)):
        if s[j] > s[hi]:
            hi = j
        if s[j] < s[lo]:
            lo = j
        if mode != "down" and s[j] < s[hi] - delta:
            if mode == "up" or s[hi] - s[0] >= delta:
                out.append(("max", nu[hi]))
            mode, lo = "down", j
        elif mode != "up" and s[j] > s[lo] + delta:
            if mode == "down" or s[0] - s[lo] >= delta:
                out.append(("min", nu[lo]))
            mode, hi = "up", j
    return tuple(out)


def read_spectrum(path: str) -> Spectrum:
    nu: list[float] = []
    refl: list[float] = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        if next(reader) != ["wavenumber_cm-1", "reflectance_pct"]:
            raise ValueError(f"{path}: unexpected header")
        for row in reader:
            nu.append(float(row[0]))
            refl.append(float(row[1]))
    if len(nu) < 100 or any(b <= a for a, b in zip(nu, nu[1:])):
        raise ValueError(f"{path}: expected an ascending wavenumber grid")
    t_nu, t_r = tuple(nu), tuple(refl)
    return Spectrum(t_nu, t_r, data_extrema(t_nu, t_r))


EXTREMA_FILE = "extrema.csv"


def extrema_rows(spectra: Mapping[int, Spectrum]) -> list[tuple[int, str, float]]:
    """The detected extrema of every attachment as rows (attachment, kind, wavenumber)."""
    return [(k, kind, nu) for k in sorted(spectra) for kind, nu in spectra[k].extrema]


def load_spectra(data_dir: str) -> dict[int, Spectrum]:
    """The four attachments' spectra (``attachment_<k>.csv``) with the extrema the
    detector finds in them (the slow path: the tests and ``extrema.csv``'s rebuild)."""
    return {k: read_spectrum(os.path.join(data_dir, f"attachment_{k}.csv")) for k in sorted(set(SPECTRA.values()))}


def load_official(data_dir: str) -> dict[int, tuple[tuple[str, float], ...]]:
    """The detected extrema of each attachment, read from ``extrema.csv`` (computed
    once from the attachments by :func:`data_extrema`; a test recomputes it), so a
    process does not smooth 30,000 samples to score one artifact."""
    out: dict[int, list[tuple[str, float]]] = {k: [] for k in sorted(set(SPECTRA.values()))}
    with open(os.path.join(data_dir, EXTREMA_FILE), newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        if next(reader) != ["attachment", "kind", "wavenumber_cm-1"]:
            raise ValueError(f"{EXTREMA_FILE}: unexpected header")
        for att, kind, nu in reader:
            if int(att) not in out or kind not in ("max", "min"):
                raise ValueError(f"{EXTREMA_FILE}: bad row {att!r}, {kind!r}")
            out[int(att)].append((kind, float(nu)))
    if any(not rows or rows != sorted(rows, key=lambda r: r[1]) for rows in out.values()):
        raise ValueError(f"{EXTREMA_FILE}: every attachment needs its extrema in ascending wavenumber")
    return {k: tuple(v) for k, v in out.items()}


# ------------------------------------------------------------------ witness parsing

def _number(v: Any) -> Decimal | None:
    """A finite JSON number (never a bool), else None."""
    if isinstance(v, bool) or not isinstance(v, (Decimal, int)):
        return None
    d = Decimal(v)
    return d if d.is_finite() else None


@dataclass(frozen=True)
class Index:
    """Cauchy index n(lambda) = a + b / lambda^2 + c / lambda^4, lambda in micrometres."""

    a: Decimal
    b: Decimal
    c: Decimal

    def at(self, nu: float) -> float:
        lam2 = (1e4 / nu) ** 2
        return float(self.a) + float(self.b) / lam2 + float(self.c) / (lam2 * lam2)


def _index(raw: Any) -> tuple[Index | None, str | None]:
    if not isinstance(raw, dict):
        return None, "refractive_index is not an object {A, B_um2, C_um4}"
    parts = []
    for key in ("A", "B_um2", "C_um4"):
        v = raw.get(key, 0 if key != "A" else None)
        num = _number(v)
        if num is None or abs(num) > 100:
            return None, f"refractive_index.{key} is not a number in [-100, 100]"
        parts.append(num)
    return Index(*parts), None


@dataclass(frozen=True)
class Fit:
    spectrum: int
    sample: str
    angle: int
    kind: str
    nus: tuple[float, ...]          # ascending
    index: Index


def _fit(item: Any) -> tuple[Fit | None, str | None]:
    """One single-angle item's witness, or the reason it cannot be replayed."""
    if not isinstance(item, dict):
        return None, "item is not an object"
    sample, angle = item.get("sample"), _number(item.get("angle_deg"))
    if sample not in SAMPLES or angle is None or angle not in (10, 15):
        return None, "sample/angle_deg do not name an attachment (Si or SiC, 10 or 15 deg)"
    key = (sample, int(angle))
    kind = item.get("extrema_kind")
    raw = item.get("extrema_cm_minus_1")
    if kind is None and raw is None and item.get("refractive_index") is None:
        return None, "witness absent: extrema_kind, extrema_cm_minus_1, refractive_index"
    if kind not in ("max", "min"):
        return None, "witness malformed: extrema_kind is not 'max' or 'min'"
    if not isinstance(raw, list) or not MIN_EXTREMA <= len(raw) <= MAX_EXTREMA:
        return None, f"witness malformed: extrema_cm_minus_1 is not a list of {MIN_EXTREMA}-{MAX_EXTREMA} wavenumbers"
    nums = [_number(v) for v in raw]
    if any(v is None or not 300 <= v <= 5000 for v in nums):
        return None, "witness malformed: a wavenumber is not a number in [300, 5000] cm^-1"
    nus = tuple(sorted(float(v) for v in nums))
    if any(b - a < 1.0 for a, b in zip(nus, nus[1:])):
        return None, "witness malformed: two named extrema less than 1 cm^-1 apart"
    index, why = _index(item.get("refractive_index"))
    if index is None:
        return None, f"witness malformed: {why}"
    ns = [index.at(v) for v in nus]
    if not (float(INDEX_RANGE[0]) < min(ns) and max(ns) < float(INDEX_RANGE[1])):
        return None, "witness malformed: the index leaves (1, 10) at a named extremum"
    return Fit(SPECTRA[key], sample, int(angle), kind, nus, index), None


# ------------------------------------------------------------------ checks and fits

def extrema_match(fit: Fit, extrema: tuple[tuple[str, float], ...]) -> bool:
    """The named extrema are the detected extrema of that kind over the named
    range, one to one, each within the match tolerance."""
    gaps = sorted(b - a for a, b in zip(fit.nus, fit.nus[1:]))
    tol = float(MATCH_FRACTION) * gaps[len(gaps) // 2]
    found = [v for k, v in extrema if k == fit.kind and fit.nus[0] - tol <= v <= fit.nus[-1] + tol]
    if len(found) != len(fit.nus):
        return False
    return all(abs(a - b) <= tol for a, b in zip(found, fit.nus))


def _sums(fit: Fit) -> tuple[float, float, float, float]:
    """Centred sums of the fit: (Sxk, Sxx, Snk, Snn) with x = sqrt(n^2 - sin^2) nu."""
    s2 = math.sin(math.radians(fit.angle)) ** 2
    xs = [math.sqrt(fit.index.at(v) ** 2 - s2) * v for v in fit.nus]
    ks = range(len(fit.nus))
    km = (len(fit.nus) - 1) / 2
    xm = math.fsum(xs) / len(xs)
    nm = math.fsum(fit.nus) / len(fit.nus)
    sxk = math.fsum((x - xm) * (k - km) for x, k in zip(xs, ks))
    sxx = math.fsum((x - xm) ** 2 for x in xs)
    snk = math.fsum((v - nm) * (k - km) for v, k in zip(fit.nus, ks))
    snn = math.fsum((v - nm) ** 2 for v in fit.nus)
    return sxk, sxx, snk, snn


def thickness_um(sxk: float, sxx: float) -> float:
    """d (um) from the centred sums: k = 2 d x - m_0 in cm, times 10^4."""
    return 1e4 * sxk / (2.0 * sxx)


def _rounded(x: float, places: int) -> Fraction:
    return Fraction(Decimal(f"{x:.{places}f}")) + 0


# ------------------------------------------------------------------ replay

def replay(data: Mapping[str, Any], official: Mapping[int, tuple[tuple[str, float], ...]]) -> Derived:
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    fits_raw = data.get("single_angle_fits")
    fits_raw = fits_raw if isinstance(fits_raw, list) else []
    parsed: dict[int, Fit] = {}                       # items whose witness matches the data
    sums: dict[int, tuple[float, float, float, float]] = {}
    for i in range(MAX_FITS):
        names = [f"fit{i}.{w}" for w in ("extrema_ok", "thickness_um", "period_cm_minus_1")]
        if i >= len(fits_raw):
            gaps.update({n: f"single_angle_fits[{i}] absent" for n in names})
            continue
        fit, why = _fit(fits_raw[i])
        if fit is None:
            gaps.update({n: f"single_angle_fits[{i}]: {why}" for n in names})
            continue
        ok = extrema_match(fit, official[fit.spectrum])
        values[names[0]] = Fraction(int(ok))
        if not ok:
            gaps[names[1]] = gaps[names[2]] = (f"single_angle_fits[{i}]: the named extrema are not the "
                                               f"{fit.kind}ima of attachment {fit.spectrum} over their range")
            continue
        s = sums[i] = _sums(fit)
        parsed[i] = fit
        values[names[1]] = _rounded(thickness_um(s[0], s[1]), THICKNESS_PLACES)
        values[names[2]] = _rounded(s[3] / s[2], PERIOD_PLACES)
    by_key: dict[tuple[str, int], list[int]] = {}
    for i, f in parsed.items():
        by_key.setdefault((f.sample, f.angle), []).append(i)
    joint: dict[str, Fraction] = {}
    joint_why: dict[str, str] = {}
    for sample in SAMPLES:
        idx = [by_key.get((sample, a), []) for a in (10, 15)]
        if len(fits_raw) > MAX_FITS:
            joint_why[sample] = f"more than {MAX_FITS} single_angle_fits items (the statement has four spectra)"
            continue
        if any(len(x) != 1 for x in idx):
            joint_why[sample] = (f"{sample}: needs exactly one replayed single_angle_fits item at each of 10 and "
                                 f"15 deg (named extrema matching the data)")
            continue
        if parsed[idx[0][0]].index != parsed[idx[1][0]].index:
            joint_why[sample] = f"{sample}: the two angles state different refractive indices for one layer"
            continue
        s10, s15 = sums[idx[0][0]], sums[idx[1][0]]
        joint[sample] = _rounded(thickness_um(s10[0] + s15[0], s10[1] + s15[1]), THICKNESS_PLACES)
    for sample in SAMPLES:
        name = f"{sample.lower()}.joint_thickness_um"
        if sample in joint:
            values[name] = joint[sample]
        else:
            gaps[name] = joint_why[sample]
    items = data.get("joint_thickness_summary")
    items = items if isinstance(items, list) else []
    labels = [it.get("sample") if isinstance(it, dict) else None for it in items]
    for j in range(MAX_JOINT):
        name = f"joint{j}.thickness_um"
        if j >= len(items):
            gaps[name] = f"joint_thickness_summary[{j}] absent"
        elif labels[j] not in SAMPLES or labels.count(labels[j]) != 1:
            gaps[name] = f"joint_thickness_summary[{j}]: sample is not Si or SiC, or is listed twice"
        elif labels[j] in joint:
            values[name] = joint[labels[j]]
        else:
            gaps[name] = joint_why[labels[j]]
    return Derived(values, gaps)
