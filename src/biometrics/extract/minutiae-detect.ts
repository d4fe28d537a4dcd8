/**
 * Minutiae from a ridge skeleton: crossing number (1 = ridge ending, 3 = bifurcation), direction
 * by tracing the ridge and snapping to the orientation field, and removal of the false minutiae
 * that noise and thinning leave (border, broken ridges, spurs, bridges, islands, clusters).
 *
 * Directions follow ISO/IEC 19794-2 as `finger/template.ts` does: an ending points into its
 * ridge, a bifurcation between its branches; the angle is counter-clockwise as seen (y down), so
 * an image direction (dx, dy) is the angle −atan2(dy, dx).
 *
 * Tested in test/unit/biometrics/extract/finger-pipeline.test.ts (the ground-truth minutiae of
 * synthetic images, with their ISO directions; none invented from noise).
 */
import type { Minutia, MinutiaType } from '../finger/template.js';
import { normalizeAngle } from '../finger/template.js';
import type { OrientationField } from './finger-fields.js';

export interface MinutiaeOptions {
  /** Minimum distance to the background / image border, px (default 10). */
  borderDistance?: number;
  /** Endings closer than this with opposing directions are a broken ridge (default 12). */
  breakDistance?: number;
  /** Trace length for direction and spur/island checks (default 10). */
  traceLength?: number;
}

const DX = [0, 1, 1, 1, 0, -1, -1, -1];
const DY = [-1, -1, 0, 1, 1, 1, 0, -1];

function crossing(sk: Uint8Array, W: number, i: number): number {
  let t = 0;
  for (let k = 0; k < 8; k++) {
    const a = sk[i + DY[k]! * W + DX[k]!]!,
      b = sk[i + DY[(k + 1) & 7]! * W + DX[(k + 1) & 7]!]!;
    if (!a && b) t++;
  }
  return t;
}

interface Trace {
  x: number;
  y: number;
  steps: number;
  end: 'length' | 'ending' | 'junction';
}

/** Follows the skeleton from `start` (coming from `from`) for at most `len` steps. */
function trace(sk: Uint8Array, W: number, H: number, from: number, start: number, len: number, cn: Int8Array): Trace {
  let prev = from,
    cur = start;
  const seen = new Set<number>([from, start]);
  for (let s = 1; s <= len; s++) {
    if (cn[cur] === 3 && s > 1) return { x: cur % W, y: Math.floor(cur / W), steps: s, end: 'junction' };
    let next = -1;
    // Prefer 4-neighbours, then diagonals, never back.
    for (const k of [0, 2, 4, 6, 1, 3, 5, 7]) {
      const j = cur + DY[k]! * W + DX[k]!;
      if (sk[j] && !seen.has(j) && j !== prev) {
        // Skip a diagonal that is adjacent to the previous pixel (a corner cut).
        next = j;
        break;
      }
    }
    if (next < 0) return { x: cur % W, y: Math.floor(cur / W), steps: s, end: 'ending' };
    for (let k = 0; k < 8; k++) seen.add(cur + DY[k]! * W + DX[k]!);
    prev = cur;
    cur = next;
    const x = cur % W,
      y = (cur - x) / W;
    if (x <= 0 || y <= 0 || x >= W - 1 || y >= H - 1) return { x, y, steps: s, end: 'length' };
  }
  return { x: cur % W, y: Math.floor(cur / W), steps: len, end: 'length' };
}

interface Candidate {
  x: number;
  y: number;
  type: MinutiaType;
  dir: number;
  ok: boolean;
  spur: boolean;
  partner: number;
}

/** Image direction snapped to the orientation field's axis, on the traced side. */
function snap(theta: number, dir: number): number {
  const a = theta,
    b = theta + Math.PI;
  const d = (u: number) => Math.abs(Math.atan2(Math.sin(u - dir), Math.cos(u - dir)));
  return d(a) < d(b) ? a : b;
}

/** Ridge runs crossed by a segment across the ridges, `dist` px from (x, y) in direction `dir`. */
function ridgeCount(ridges: Uint8Array, W: number, H: number, x: number, y: number, dir: number, dist: number): number {
  const ux = Math.cos(dir),
    uy = Math.sin(dir),
    nx = -uy,
    ny = ux;
  const cx = x + dist * ux,
    cy = y + dist * uy;
  let runs = 0,
    prev = 0;
  for (let t = -11; t <= 11; t += 0.5) {
    const px = Math.round(cx + t * nx),
      py = Math.round(cy + t * ny);
    const v = px >= 0 && py >= 0 && px < W && py < H ? ridges[py * W + px]! : 0;
    if (v && !prev) runs++;
    prev = v;
  }
  return runs;
}

/**
 * `ridges` is the binarized image before thinning (used to orient bifurcations); without it the
 * skeleton trace alone decides.
 */
export function detectMinutiae(
  skeleton: Uint8Array,
  width: number,
  height: number,
  mask: Uint8Array,
  field: OrientationField,
  opts: MinutiaeOptions = {},
  ridges?: Uint8Array,
): Minutia[] {
  const W = width,
    H = height;
  const border = opts.borderDistance ?? 10;
  const brk = opts.breakDistance ?? 12;
  const tl = opts.traceLength ?? 10;
  // Distance-to-background test by a box: every pixel in the (2b+1)² window is foreground.
  const integral = new Int32Array((W + 1) * (H + 1));
  for (let y = 0; y < H; y++) {
    let row = 0;
    for (let x = 0; x < W; x++) {
      row += mask[y * W + x]!;
      integral[(y + 1) * (W + 1) + x + 1] = integral[y * (W + 1) + x + 1]! + row;
    }
  }
  /** Fraction of the (2r+1)² window around (x, y) that is fingerprint (outside the image counts as not). */
  const maskFraction = (x: number, y: number, r: number): number => {
    const x0 = Math.max(0, x - r),
      y0 = Math.max(0, y - r),
      x1 = Math.min(W, x + r + 1),
      y1 = Math.min(H, y + r + 1);
    const s = integral[y1 * (W + 1) + x1]! - integral[y0 * (W + 1) + x1]! - integral[y1 * (W + 1) + x0]! + integral[y0 * (W + 1) + x0]!;
    return s / (2 * r + 1) ** 2;
  };
  const inside = (x: number, y: number): boolean =>
    x >= border && y >= border && x < W - border && y < H - border && maskFraction(x, y, border) === 1;
  const cn = new Int8Array(W * H);
  for (let y = 1; y < H - 1; y++)
    for (let x = 1; x < W - 1; x++) {
      const i = y * W + x;
      if (skeleton[i]) cn[i] = crossing(skeleton, W, i);
    }

  const cands: Candidate[] = [];
  for (let y = 1; y < H - 1; y++) {
    for (let x = 1; x < W - 1; x++) {
      const i = y * W + x;
      const c = cn[i]!;
      if (!skeleton[i] || (c !== 1 && c !== 3)) continue;
      if (!inside(x, y)) continue;
      const th = field.theta[i]!;
      if (c === 1) {
        let nb = -1;
        for (let k = 0; k < 8; k++) {
          const j = i + DY[k]! * W + DX[k]!;
          if (skeleton[j]) {
            nb = j;
            break;
          }
        }
        if (nb < 0) continue; // isolated pixel
        const t = trace(skeleton, W, H, i, nb, tl, cn);
        const dir = Math.atan2(t.y - y, t.x - x);
        // A short piece ending in another ending is an island; one ending at a junction a spur.
        const spur = t.steps < tl && (t.end === 'ending' || t.end === 'junction');
        cands.push({ x, y, type: 'ending', dir: snap(th, dir), ok: true, spur, partner: -1 });
      } else {
        // The three branches: one start pixel per run of set neighbours.
        const starts: number[] = [];
        for (let k = 0; k < 8; k++) {
          const a = skeleton[i + DY[k]! * W + DX[k]!]!,
            b = skeleton[i + DY[(k + 1) & 7]! * W + DX[(k + 1) & 7]!]!;
          if (!a && b) starts.push(i + DY[(k + 1) & 7]! * W + DX[(k + 1) & 7]!);
        }
        const dirs = starts.map((s) => {
          const t = trace(skeleton, W, H, i, s, tl, cn);
          return { d: Math.atan2(t.y - y, t.x - x), t };
        });
        if (dirs.length !== 3) continue;
        const spur = dirs.some((d) => d.t.steps < tl / 2 && d.t.end === 'ending');
        // The two branches closest in direction are the fork; the direction is their bisector.
        let best = 0,
          bestGap = Infinity;
        for (let a = 0; a < 3; a++) {
          const u = dirs[a]!.d,
            v = dirs[(a + 1) % 3]!.d;
          const gap = Math.abs(Math.atan2(Math.sin(u - v), Math.cos(u - v)));
          if (gap < bestGap) {
            bestGap = gap;
            best = a;
          }
        }
        const u = dirs[best]!.d,
          v = dirs[(best + 1) % 3]!.d;
        // The stem (the third branch) points away from the fork; together with the bisector it
        // fixes the side even when the fork's branches open wide.
        const stem = dirs[(best + 2) % 3]!.d;
        const bis = Math.atan2(Math.sin(u) + Math.sin(v) - 2 * Math.sin(stem), Math.cos(u) + Math.cos(v) - 2 * Math.cos(stem));
        // The branches' side has one ridge more than the stem's side: count ridges across the
        // orientation a few pixels ahead and behind; the trace decides only a tie.
        let dir = snap(th, bis);
        if (ridges) {
          const ahead = ridgeCount(ridges, W, H, x, y, th, 7),
            behind = ridgeCount(ridges, W, H, x, y, th + Math.PI, 7);
          if (ahead !== behind) dir = ahead > behind ? th : th + Math.PI;
        }
        cands.push({ x, y, type: 'bifurcation', dir, ok: true, spur, partner: -1 });
      }
    }
  }
  // False minutiae: spurs and islands, then close pairs.
  for (const c of cands) if (c.spur) c.ok = false;
  for (let a = 0; a < cands.length; a++) {
    const A = cands[a]!;
    for (let b = a + 1; b < cands.length; b++) {
      const B = cands[b]!;
      const d = Math.hypot(A.x - B.x, A.y - B.y);
      if (d > brk) continue;
      if (A.type === 'ending' && B.type === 'ending') {
        // Broken ridge: facing each other.
        const diff = Math.abs(Math.atan2(Math.sin(A.dir - B.dir), Math.cos(A.dir - B.dir)));
        if (diff > (2 * Math.PI) / 3 || d < 6) {
          A.ok = false;
          B.ok = false;
        }
      } else if (d < 8) {
        // Bridge (two bifurcations) or an ending next to a bifurcation: noise.
        A.ok = false;
        B.ok = false;
      }
    }
  }
  const kept = cands.filter((c) => c.ok);
  // Clusters: a minutia with 3 or more others within 14 px sits in a noisy patch.
  const out: Minutia[] = [];
  for (const c of kept) {
    let near = 0;
    for (const o of kept) if (o !== c && Math.hypot(o.x - c.x, o.y - c.y) < 14) near++;
    if (near >= 3) continue;
    const i = c.y * W + c.x;
    // Quality: ridge-flow coherence around the point, lowered near the edge of the print.
    const coh = Math.min(1, Math.max(0, (field.coherence[i]! - 0.2) / 0.7));
    const q = Math.round(Math.max(1, Math.min(100, 100 * coh * (0.5 + 0.5 * maskFraction(c.x, c.y, 24)))));
    out.push({ x: c.x, y: c.y, angle: normalizeAngle(-c.dir), type: c.type, quality: q });
  }
  return out;
}
