// Sums of pool counts by cluster or by GPU shape, and the queue grouped by pool, for the
// dashboard and the clusters page.

export interface PoolCounts {
  totalNodes: number;
  freeNodes: number;
  reservedNodes: number;
  unavailableNodes: number;
  gpusPerNode: number;
}

export interface Totals {
  key: string;
  label: string;
  pools: number;
  total: number;
  free: number;
  reserved: number;
  unavailable: number;
  /** GPUs in the pools (nodes × GPUs per node). */
  gpus: number;
  reservedGpus: number;
}

export function emptyTotals(key: string, label = key): Totals {
  return { key, label, pools: 0, total: 0, free: 0, reserved: 0, unavailable: 0, gpus: 0, reservedGpus: 0 };
}

/** Adds pools up per key (cluster, shape, …), in the order keys first appear, then by label. */
export function totalsBy<P extends PoolCounts>(pools: readonly P[], keyOf: (p: P) => [key: string, label: string]): Totals[] {
  const out = new Map<string, Totals>();
  for (const p of pools) {
    const [key, label] = keyOf(p);
    const t = out.get(key) ?? emptyTotals(key, label);
    t.pools++;
    t.total += p.totalNodes;
    t.free += p.freeNodes;
    t.reserved += p.reservedNodes;
    t.unavailable += p.unavailableNodes;
    t.gpus += p.totalNodes * p.gpusPerNode;
    t.reservedGpus += p.reservedNodes * p.gpusPerNode;
    out.set(key, t);
  }
  return [...out.values()].sort((a, b) => a.label.localeCompare(b.label));
}

export function grandTotal(rows: readonly Totals[]): Totals {
  const t = emptyTotals('all', 'All');
  for (const r of rows) {
    t.pools += r.pools;
    t.total += r.total;
    t.free += r.free;
    t.reserved += r.reserved;
    t.unavailable += r.unavailable;
    t.gpus += r.gpus;
    t.reservedGpus += r.reservedGpus;
  }
  return t;
}

/** Reserved share of the nodes that can be used (total less unavailable), 0–1; null when none. */
export function allocation(t: Pick<Totals, 'total' | 'reserved' | 'unavailable'>): number | null {
  const usable = t.total - t.unavailable;
  return usable > 0 ? Math.min(1, t.reserved / usable) : null;
}

export interface QueuedLike {
  nodeCount: number;
  gpuShape?: string | null;
  instanceType?: string | null;
  assignedGpuShape?: string | null;
  assignedInstanceType?: string | null;
  assignedCluster?: { id: string; name: string } | null;
}

/** Where a waiting GPR is planned: its assigned pool, else what it asked for ("any"). */
export function plannedPool(g: QueuedLike): { key: string; label: string } {
  const cluster = g.assignedCluster?.name ?? 'any cluster';
  const shape = g.assignedGpuShape ?? g.gpuShape ?? 'any shape';
  const type = g.assignedInstanceType ?? g.instanceType ?? 'any type';
  return { key: `${g.assignedCluster?.id ?? '*'}|${type}|${shape}`, label: `${cluster} · ${type} · ${shape}` };
}

export interface QueueDepth {
  key: string;
  label: string;
  gprs: number;
  nodes: number;
}

export function queueDepthByPool(queue: readonly QueuedLike[]): QueueDepth[] {
  const out = new Map<string, QueueDepth>();
  for (const g of queue) {
    const { key, label } = plannedPool(g);
    const d = out.get(key) ?? { key, label, gprs: 0, nodes: 0 };
    d.gprs++;
    d.nodes += g.nodeCount;
    out.set(key, d);
  }
  return [...out.values()].sort((a, b) => b.nodes - a.nodes || a.label.localeCompare(b.label));
}

/** Average of the values that are not null; null when none. */
export function average(values: readonly (number | null | undefined)[]): number | null {
  const present = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return present.length ? present.reduce((a, b) => a + b, 0) / present.length : null;
}
