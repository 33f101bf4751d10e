"""Optics of a heliostat field by the formulas of CUMCM 2023 A (appendix).

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

LATITUDE_DEG = 39.4
ALTITUDE_KM = 3.0
G0_KW_M2 = 1.366
TOWER_HEIGHT_M = 80.0          # receiver centre above ground
RECEIVER_RADIUS_M = 3.5        # diameter 7 m
RECEIVER_HALF_HEIGHT_M = 4.0   # height 8 m
TOWER_TOP_M = TOWER_HEIGHT_M + RECEIVER_HALF_HEIGHT_M
REFLECTIVITY = 0.92
SUN_HALF_ANGLE = 4.65e-3       # rad
MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
HOURS = (9.0, 10.5, 12.0, 13.5, 15.0)

SB_GRID = 8                    # points per side of a mirror (64 per mirror)
CONE_SAMPLES = 16              # directions per point over the sun's disc


def days_from_equinox(month: int) -> int:
    """D of appendix 1 for the 21st of ``month`` (1-12): days after 21 March
    in a common year (January and February count backwards)."""
    doy = sum(MONTH_DAYS[:month - 1]) + 21
    return doy - (sum(MONTH_DAYS[:2]) + 21)


def dni_kw_m2(sin_alt: np.ndarray) -> np.ndarray:
    h = ALTITUDE_KM
    a = 0.4237 - 0.00821 * (6 - h) ** 2
    b = 0.5055 + 0.00595 * (6.5 - h) ** 2
    c = 0.2711 + 0.01858 * (2.5 - h) ** 2
    return G0_KW_M2 * (a + b * np.exp(-c / sin_alt))


@dataclass(frozen=True)
class Sun:
    """The 60 instants: unit vectors toward the sun (60, 3) and DNI (60,), row
    ``5 * (month - 1) + k`` for the k-th hour of ``HOURS``."""

    direction: Any
    dni: Any


def sun_instants() -> Sun:
    phi = math.radians(LATITUDE_DEG)
    dirs, sins = [], []
    for month in range(1, 13):
        d = days_from_equinox(month)
        sin_dec = math.sin(2 * math.pi * d / 365) * math.sin(2 * math.pi * 23.45 / 360)
        dec = math.asin(sin_dec)
        for st in HOURS:
            omega = math.pi / 12 * (st - 12)
            sin_alt = math.cos(dec) * math.cos(phi) * math.cos(omega) + sin_dec * math.sin(phi)
            alt = math.asin(sin_alt)
            cos_az = (sin_dec - sin_alt * math.sin(phi)) / (math.cos(alt) * math.cos(phi))
            az = math.acos(max(-1.0, min(1.0, cos_az)))   # from north, toward east in the morning
            if omega > 0:
                az = 2 * math.pi - az
            dirs.append((math.cos(alt) * math.sin(az), math.cos(alt) * math.cos(az), sin_alt))
            sins.append(sin_alt)
    direction = np.array(dirs)
    dni = dni_kw_m2(np.array(sins))
    direction.setflags(write=False)
    dni.setflags(write=False)
    return Sun(direction, dni)


@dataclass(frozen=True)
class Field:
    """Mirror centres' ground positions ``xy`` (n, 2), widths, heights and
    installation heights (n,), and the tower's foot (2,), metres."""

    xy: Any
    width: Any
    height: Any
    mount: Any
    tower: Any

    def canonical(self) -> "Field":
        """The same field with its rows in a fixed order (by x, y, width,
        height, mount), so the sums do not depend on how the rows were listed."""
        keys = (self.mount, self.height, self.width, self.xy[:, 1], self.xy[:, 0])
        order = np.lexsort(keys)
        return Field(self.xy[order], self.width[order], self.height[order], self.mount[order], self.tower)


@dataclass(frozen=True)
class Annual:
    """Annual means (field, weighted by mirror area) and the output."""

    optical: float
    cosine: float
    atmospheric: float
    shadow_blocking: float
    truncation: float
    power_mw: float
    unit_power_kw_m2: float
    area_m2: float


def _pairs(centres: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Ordered pairs (i, j), i != j, of centres within ``reach`` (horizontal),
    by a square cell index of side ``reach``."""
    n = len(centres)
    cell = np.floor(centres[:, :2] / reach).astype(np.int64)
    cell -= cell.min(axis=0)
    ncol = int(cell[:, 0].max()) + 3
    key = (cell[:, 1] + 1) * ncol + (cell[:, 0] + 1)
    order = np.argsort(key, kind="stable")
    skey = key[order]
    out_i, out_j = [], []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            target = key + dy * ncol + dx
            lo = np.searchsorted(skey, target, "left")
            hi = np.searchsorted(skey, target, "right")
            cnt = hi - lo
            if not cnt.any():
                continue
            ii = np.repeat(np.arange(n), cnt)
            start = np.repeat(lo - np.concatenate(([0], np.cumsum(cnt)[:-1])), cnt)
            jj = order[np.arange(cnt.sum()) + start]
            out_i.append(ii)
            out_j.append(jj)
    i = np.concatenate(out_i)
    j = np.concatenate(out_j)
    d2 = ((centres[i, :2] - centres[j, :2]) ** 2).sum(axis=1)
    keep = (i != j) & (d2 <= reach * reach)
    return i[keep], j[keep]


def _frames(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors along a mirror's width (horizontal) and height."""
    ew = np.stack([-normal[:, 1], normal[:, 0], np.zeros(len(normal))], axis=1)
    ew /= np.linalg.norm(ew, axis=1)[:, None]
    eh = np.cross(normal, ew)
    return ew, eh


def _hits(ga: np.ndarray, gb: np.ndarray, ci: np.ndarray, cj: np.ndarray, d: np.ndarray, centre: np.ndarray,
          ew: np.ndarray, eh: np.ndarray, normal: np.ndarray, half_w: np.ndarray, half_h: np.ndarray) -> np.ndarray:
    """(k, s) booleans: the ray along d (k, 3) from each point (ga, gb) of
    mirror ci meets mirror cj ahead of it. Every coordinate of a point of ci
    in the frame of cj is linear in the point's local (a, b)."""
    q0 = centre[ci] - centre[cj]
    pa = half_w[ci, None] * ew[ci]                      # (k, 3): a point is q0 + a pa + b pb
    pb = half_h[ci, None] * eh[ci]

    def coord(axis: np.ndarray) -> np.ndarray:
        return ((q0 * axis).sum(1)[:, None] + ga[None, :] * (pa * axis).sum(1)[:, None]
                + gb[None, :] * (pb * axis).sum(1)[:, None])

    nz, ex, ey = normal[cj], ew[cj], eh[cj]
    dz = (d * nz).sum(1)
    ok = np.abs(dz) > 1e-12
    t = -coord(nz) / np.where(ok, dz, 1.0)[:, None]
    qx = coord(ex) + t * (d * ex).sum(1)[:, None]
    qy = coord(ey) + t * (d * ey).sum(1)[:, None]
    return ok[:, None] & (t > 1e-9) & (np.abs(qx) <= half_w[cj, None]) & (np.abs(qy) <= half_h[cj, None])


def _cone() -> tuple[np.ndarray, np.ndarray]:
    """Offsets (radians) of ``CONE_SAMPLES`` directions over the sun's disc."""
    k = np.arange(CONE_SAMPLES)
    r = SUN_HALF_ANGLE * np.sqrt((k + 0.5) / CONE_SAMPLES)
    ang = k * math.pi * (3 - math.sqrt(5))
    return r * np.cos(ang), r * np.sin(ang)


def annual(field: Field, sun: Sun, sb_grid: int = SB_GRID, cone_samples: int = CONE_SAMPLES) -> Annual:
    """The field's annual means (see the module doc)."""
    f = field.canonical()
    area = f.width * f.height
    total_area = float(area.sum())
    sums = np.zeros(5)         # cosine, atmospheric, sb, truncation, optical (area-weighted, summed over instants)
    power_kw = 0.0
    for dni, eta_cos, eta_at, eta_sb, eta_tr, eta in _instants(f, sun, sb_grid, cone_samples):
        for idx, arr in enumerate((eta_cos, eta_at, eta_sb, eta_tr, eta)):
            sums[idx] += float(arr @ area)
        power_kw += dni * float(eta @ area)
    m = len(sun.dni)
    means = sums / (m * total_area)
    power = power_kw / m
    return Annual(optical=means[4], cosine=means[0], atmospheric=means[1], shadow_blocking=means[2],
                  truncation=means[3], power_mw=power / 1000, unit_power_kw_m2=power / total_area,
                  area_m2=total_area)


def per_mirror(field: Field, sun: Sun, sb_grid: int = SB_GRID, cone_samples: int = CONE_SAMPLES) -> tuple[Any, Any]:
    """Each mirror's annual mean optical efficiency and annual mean output
    (kW), in the rows' own order (for designing a layout; a mirror's values
    depend on its neighbours, so they hold for this field only)."""
    keys = (field.mount, field.height, field.width, field.xy[:, 1], field.xy[:, 0])
    order = np.lexsort(keys)
    f = field.canonical()
    area = f.width * f.height
    eta_sum = np.zeros(len(f.xy))
    power_kw = np.zeros(len(f.xy))
    for dni, *_, eta in _instants(f, sun, sb_grid, cone_samples):
        eta_sum += eta
        power_kw += dni * eta * area
    m = len(sun.dni)
    out_eta, out_power = np.empty_like(eta_sum), np.empty_like(power_kw)
    out_eta[order], out_power[order] = eta_sum / m, power_kw / m
    return out_eta, out_power


def _instants(f: Field, sun: Sun, sb_grid: int, cone_samples: int) -> Any:
    """Per instant: its DNI and each mirror's cosine, atmospheric, shadow and
    blocking, truncation and optical efficiency (arrays in the rows' order)."""
    n = len(f.xy)
    tower = np.array([f.tower[0], f.tower[1], TOWER_HEIGHT_M])
    centre = np.column_stack([f.xy, f.mount])
    to_rx = tower - centre
    dist = np.linalg.norm(to_rx, axis=1)
    r = to_rx / dist[:, None]                          # central reflected ray, fixed in time
    eta_at = 0.99321 - 0.0001176 * dist + 1.97e-8 * dist ** 2
    half_w, half_h = f.width / 2, f.height / 2
    rho = np.hypot(half_w, half_h)

    # candidate pairs: within the horizontal reach a ray from one mirror can
    # travel while still below the top of every mirror
    top = float((f.mount + half_h).max())
    bottom = float((f.mount - half_h).min())
    min_rise = min(float(sun.direction[:, 2].min()), float(r[:, 2].min()))
    reach = (top - bottom) / math.tan(math.asin(min_rise)) + 2 * float(rho.max()) + 1.0
    pi, pj = _pairs(centre, reach)

    # points on a mirror, local (a, b) in units of its half sizes
    g = (np.arange(sb_grid) + 0.5) / sb_grid * 2 - 1
    ga, gb = np.meshgrid(g, g, indexing="ij")
    ga, gb = ga.ravel(), gb.ravel()
    s = sb_grid * sb_grid
    k = np.arange(cone_samples)
    cr = SUN_HALF_ANGLE * np.sqrt((k + 0.5) / cone_samples)
    cang = k * math.pi * (3 - math.sqrt(5))
    cu, cv = cr * np.cos(cang), cr * np.sin(cang)

    # receiver image plane axes per mirror (fixed in time): a horizontal, b up
    horiz = np.hypot(r[:, 0], r[:, 1])
    cos_e, sin_e = horiz, r[:, 2]
    rh = r[:, :2] / horiz[:, None]
    ax = np.column_stack([-rh[:, 1], rh[:, 0], np.zeros(n)])
    bx = np.column_stack([-sin_e[:, None] * rh, cos_e])
    half_rx = RECEIVER_HALF_HEIGHT_M * cos_e

    for t in range(len(sun.dni)):
        sv = np.asarray(sun.direction[t])
        nrm = sv[None, :] + r
        nrm /= np.linalg.norm(nrm, axis=1)[:, None]
        eta_cos = nrm @ sv
        ew, eh = _frames(nrm)
        lost = np.zeros(n * s, dtype=bool)
        for d_all in (np.broadcast_to(sv, (n, 3)), r):
            v = centre[pj] - centre[pi]
            d = d_all[pi]
            tau = (v * d).sum(1)
            perp = np.linalg.norm(v - tau[:, None] * d, axis=1)
            near = (tau > -(rho[pi] + rho[pj])) & (perp <= rho[pi] + rho[pj])
            ci, cj = pi[near], pj[near]
            if len(ci):
                h = _hits(ga, gb, ci, cj, d_all[ci], centre, ew, eh, nrm, half_w, half_h)
                lost[(ci[:, None] * s + np.arange(s)[None, :])[h]] = True
        lost = lost.reshape(n, s)
        # tower shadow: the ray toward the sun meets the cylinder below its top
        sh = sv[:2]
        sh2 = float(sh @ sh)
        if sh2 > 0:
            rel = f.xy - np.asarray(f.tower)[None, :]
            tstar = -(rel @ sh) / sh2
            miss = np.abs(rel[:, 0] * sh[1] - rel[:, 1] * sh[0]) / math.sqrt(sh2)
            cand = np.nonzero((tstar > 0) & (miss <= RECEIVER_RADIUS_M + rho))[0]
            if len(cand):
                p = (centre[cand, None, :] + (ga[None, :, None] * half_w[cand, None, None]) * ew[cand, None, :]
                     + (gb[None, :, None] * half_h[cand, None, None]) * eh[cand, None, :])
                prel = p[:, :, :2] - np.asarray(f.tower)[None, None, :]
                ts = -(prel @ sh) / sh2
                m2 = ((prel + ts[..., None] * sh[None, None, :]) ** 2).sum(axis=2)
                inside = m2 <= RECEIVER_RADIUS_M ** 2
                te = ts - np.sqrt(np.maximum(RECEIVER_RADIUS_M ** 2 - m2, 0.0) / sh2)
                z = p[:, :, 2] + te * sv[2]
                lost[cand] |= inside & (te > 0) & (z <= TOWER_TOP_M)
        kept = ~lost
        eta_sb = kept.mean(axis=1)
        # truncation: points kept, cone rays to the receiver through the image plane
        # image-plane coordinates of the points, linear in their local (a, b)
        wc = centre - tower[None, :]
        u0 = ((wc * ax).sum(1)[:, None] + ga[None, :] * (half_w * (ew * ax).sum(1))[:, None]
              + gb[None, :] * (half_h * (eh * ax).sum(1))[:, None])
        v0 = ((wc * bx).sum(1)[:, None] + ga[None, :] * (half_w * (ew * bx).sum(1))[:, None]
              + gb[None, :] * (half_h * (eh * bx).sum(1))[:, None])
        ln = -((wc * r).sum(1)[:, None] + ga[None, :] * (half_w * (ew * r).sum(1))[:, None]
               + gb[None, :] * (half_h * (eh * r).sum(1))[:, None])
        # a point whose whole cone (a disc of radius ln * 4.65 mrad about (u0, v0))
        # lies inside the receiver's outline hits with every sample, one whose
        # disc lies outside with none; only the others are sampled
        rad = ln * SUN_HALF_ANGLE
        au = np.abs(u0)
        ulo = np.clip(au - rad, 0.0, RECEIVER_RADIUS_M)
        uhi = np.minimum(au + rad, RECEIVER_RADIUS_M)
        se, hc = sin_e[:, None], half_rx[:, None]
        fmax = se * np.sqrt(RECEIVER_RADIUS_M ** 2 - ulo * ulo)
        fmin = se * np.sqrt(RECEIVER_RADIUS_M ** 2 - uhi * uhi)
        inside = (au + rad <= RECEIVER_RADIUS_M) & (v0 - rad >= fmax - hc) & (v0 + rad <= fmin + hc)
        outside = (au - rad > RECEIVER_RADIUS_M) | (v0 + rad < fmin - hc) | (v0 - rad > fmax + hc)
        got = cone_samples * (inside & kept).sum(axis=1).astype(np.float64)
        mi, si = np.nonzero(kept & ~inside & ~outside)
        if len(mi):
            u = u0[mi, si][:, None] + ln[mi, si][:, None] * cu[None, :]
            vv = v0[mi, si][:, None] + ln[mi, si][:, None] * cv[None, :]
            root = np.sqrt(np.maximum(RECEIVER_RADIUS_M ** 2 - u * u, 0.0))
            on = (np.abs(u) <= RECEIVER_RADIUS_M) & (np.abs(vv - sin_e[mi, None] * root) <= half_rx[mi, None])
            got += np.bincount(mi, weights=on.sum(axis=1), minlength=n)
        nk = kept.sum(axis=1)
        eta_tr = np.where(nk > 0, got / np.maximum(nk, 1) / cone_samples, 1.0)
        eta = eta_cos * eta_at * eta_sb * eta_tr * REFLECTIVITY
        yield float(sun.dni[t]), eta_cos, eta_at, eta_sb, eta_tr, eta
