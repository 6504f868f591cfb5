// Small formatting and grouping helpers of the user pages (pure; tested).

/** Seconds left as a ticking clock: `2:05:09`, `1 d 03:00:00`, `0:00:00` once over. */
export function formatCountdown(totalSeconds: number): string {
  let s = Math.max(0, Math.floor(totalSeconds));
  const days = Math.floor(s / 86_400);
  s %= 86_400;
  const h = Math.floor(s / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  const sec = s % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  const clock = `${days > 0 ? pad(h) : h}:${pad(m)}:${pad(sec)}`;
  return days > 0 ? `${days} d ${clock}` : clock;
}

/** Seconds from `now` to `iso` (negative when past); null without a time. */
export function secondsUntil(iso: string | null | undefined, now: Date): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : (t - now.getTime()) / 1000;
}

/** Share of the window already used, 0–1. */
export function windowProgress(startIso: string | null | undefined, endIso: string | null | undefined, now: Date): number | null {
  if (!startIso || !endIso) return null;
  const a = Date.parse(startIso);
  const b = Date.parse(endIso);
  if (Number.isNaN(a) || Number.isNaN(b) || b <= a) return null;
  return Math.min(1, Math.max(0, (now.getTime() - a) / (b - a)));
}

/** The order phases are listed in. */
export const PHASE_ORDER = [
  'PENDING_APPROVAL',
  'QUEUED',
  'PROVISIONING',
  'PROVISIONED',
  'RELEASING',
  'COMPLETED',
  'CANCELLED',
  'FAILED',
  'REJECTED',
] as const;

/** Phases in which a GPR is not finished. */
export const ACTIVE_PHASES: readonly string[] = ['PENDING_APPROVAL', 'QUEUED', 'PROVISIONING', 'PROVISIONED', 'RELEASING'];
export const PENDING_PHASES: readonly string[] = ['PENDING_APPROVAL', 'QUEUED'];

/** Counts per phase in `PHASE_ORDER`, phases with none left out. */
export function countByPhase(gprs: readonly { phase: string }[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const g of gprs) counts.set(g.phase, (counts.get(g.phase) ?? 0) + 1);
  const order = [...PHASE_ORDER, ...[...counts.keys()].filter((p) => !(PHASE_ORDER as readonly string[]).includes(p))];
  return order.filter((p) => counts.has(p)).map((p) => [p, counts.get(p)!]);
}

interface HeldGpr {
  phase: string;
  gpusPerNode?: number | null;
  slice?: { id: string } | null;
  nodes: readonly { gpusPerNode: number }[];
}

/** GPUs a GPR holds now: its nodes' GPUs (or the GPUs per node it asked for). */
export function gpusHeld(g: HeldGpr): number {
  if (!['PROVISIONING', 'PROVISIONED', 'RELEASING'].includes(g.phase)) return 0;
  return g.nodes.reduce((sum, n) => sum + (g.gpusPerNode ?? n.gpusPerNode), 0);
}

/** GPUs held per slice id. */
export function gpusBySlice(gprs: readonly HeldGpr[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const g of gprs) {
    const id = g.slice?.id;
    if (!id) continue;
    out.set(id, (out.get(id) ?? 0) + gpusHeld(g));
  }
  return out;
}

/** Events merged by id, in sequence order: a replayed or repeated event is kept once. */
export function mergeEvents<T extends { id: string; sequence: number }>(current: readonly T[], incoming: readonly T[]): T[] {
  const byId = new Map<string, T>();
  for (const e of current) byId.set(e.id, e);
  let changed = false;
  for (const e of incoming) {
    if (!byId.has(e.id)) {
      byId.set(e.id, e);
      changed = true;
    }
  }
  if (!changed) return current as T[];
  return [...byId.values()].sort((a, b) => a.sequence - b.sequence);
}

/** Alerts after a live update: an open one added or replaced (newest first), a cleared one removed. */
export function applyAlert<T extends { id: string; open: boolean; raisedAt: string }>(current: readonly T[], alert: T): T[] {
  const rest = current.filter((a) => a.id !== alert.id);
  if (!alert.open) return rest;
  return [alert, ...rest].sort((a, b) => Date.parse(b.raisedAt) - Date.parse(a.raisedAt));
}

/** `NVIDIA-H100-80GB-HBM3` stays as is; null → "any shape". */
export function shapeText(shape: string | null | undefined): string {
  return shape || 'any shape';
}
