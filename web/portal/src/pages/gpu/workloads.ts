// Workloads page logic: pods grouped by namespace, filtered by a search, with live samples
// laid over the ones the query returned.

export interface PodLike {
  uid: string;
  name?: string | null;
  namespace?: string | null;
  containers: readonly string[];
  node?: { name: string; allocatedGpr?: { name: string; workload?: { model?: string | null; kind?: string | null } | null } | null } | null;
  gpus: readonly { uuid: string; model: string }[];
}

/** What the workloads view groups pods by: their namespace, or the hints of the GPR holding their node. */
export type Grouping = 'namespace' | 'model' | 'kind' | 'gpr';

/** A pod's group under `by`; '' when it has none (shown last, as "not said"). */
export function groupKey(pod: PodLike, by: Grouping): string {
  const gpr = pod.node?.allocatedGpr;
  switch (by) {
    case 'namespace':
      return pod.namespace ?? '';
    case 'model':
      return gpr?.workload?.model ?? '';
    case 'kind':
      return gpr?.workload?.kind ? gpr.workload.kind.replace(/_/g, ' ').toLowerCase() : '';
    case 'gpr':
      return gpr?.name ?? '';
  }
}

/** Pods in groups by `by`, groups by name (those without a value last), pods by name. */
export function groupPods<T extends PodLike>(pods: readonly T[], by: Grouping): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const p of pods) {
    const key = groupKey(p, by);
    const list = groups.get(key);
    if (list) list.push(p);
    else groups.set(key, [p]);
  }
  for (const list of groups.values()) list.sort((a, b) => (a.name ?? a.uid).localeCompare(b.name ?? b.uid));
  return [...groups.entries()].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b)));
}

export function podMatches(pod: PodLike, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const hay = [pod.name ?? '', pod.namespace ?? '', pod.node?.name ?? '', ...pod.containers, ...pod.gpus.flatMap((g) => [g.uuid, g.model])]
    .join(' ')
    .toLowerCase();
  return q.split(/\s+/).every((w) => hay.includes(w));
}

/** Namespaces by name (pods without one last, as "(unknown namespace)"), pods by name. */
export function groupByNamespace<T extends PodLike>(pods: readonly T[]): [string, T[]][] {
  return groupPods(pods, 'namespace');
}

export interface LiveSample {
  gpuId: string;
  time: string;
}

/** Keeps the newest sample per GPU. Returns `prev` when nothing is newer. */
export function latestByGpu<S extends LiveSample>(prev: ReadonlyMap<string, S>, samples: readonly S[]): Map<string, S> {
  let next: Map<string, S> | null = null;
  for (const s of samples) {
    const old = (next ?? prev).get(s.gpuId);
    if (old && new Date(old.time).getTime() >= new Date(s.time).getTime()) continue;
    next ??= new Map(prev);
    next.set(s.gpuId, s);
  }
  return next ?? (prev as Map<string, S>);
}

/** The newer of the query's sample and the live one. */
export function newer<S extends { time: string }>(a: S | null | undefined, b: S | null | undefined): S | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return new Date(b.time).getTime() > new Date(a.time).getTime() ? b : a;
}
