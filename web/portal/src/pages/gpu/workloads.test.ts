import { groupByNamespace, groupPods, latestByGpu, newer, podMatches } from './workloads';

const pod = (name: string | null, namespace: string | null, over: object = {}) => ({
  uid: `uid-${name}`,
  name,
  namespace,
  containers: ['trainer'],
  node: { name: 'node-1' },
  gpus: [{ uuid: 'GPU-abc', model: 'H100' }],
  ...over,
});

describe('workloads', () => {
  it('groups pods by namespace, sorted, unknown namespace last', () => {
    const groups = groupByNamespace([pod('b', 'ml'), pod('x', null), pod('a', 'ml'), pod('c', 'infer')]);
    expect(groups.map(([ns, list]) => [ns, list.map((p) => p.name)])).toEqual([
      ['infer', ['c']],
      ['ml', ['a', 'b']],
      ['', ['x']],
    ]);
  });
  it('groups pods by the workload hints of the GPR holding their node, those without last', () => {
    const held = (model: string | null, kind: string | null, gpr = 'train') => ({ node: { name: 'n', allocatedGpr: { name: gpr, workload: model || kind ? { model, kind } : null } } });
    const pods = [pod('a', 'ml', held('llama-3-70b', 'FINE_TUNING')), pod('b', 'ml', held(null, null, 'other')), pod('c', 'infer', held('llama-3-70b', 'INFERENCE', 'serve'))];
    expect(groupPods(pods, 'model').map(([k, list]) => [k, list.map((p) => p.name)])).toEqual([
      ['llama-3-70b', ['a', 'c']],
      ['', ['b']],
    ]);
    expect(groupPods(pods, 'kind').map(([k]) => k)).toEqual(['fine tuning', 'inference', '']);
    expect(groupPods(pods, 'gpr').map(([k]) => k)).toEqual(['other', 'serve', 'train']);
  });
  it('searches pod, namespace, node, container and GPU', () => {
    const p = pod('llama-train-0', 'ml');
    expect(podMatches(p, '')).toBe(true);
    expect(podMatches(p, 'llama ml')).toBe(true);
    expect(podMatches(p, 'TRAINER')).toBe(true);
    expect(podMatches(p, 'gpu-abc')).toBe(true);
    expect(podMatches(p, 'bert')).toBe(false);
  });
  it('keeps the newest live sample per GPU', () => {
    const a = { gpuId: 'g1', time: '2025-01-01T00:00:02Z' };
    const m1 = latestByGpu(new Map(), [a]);
    expect(m1.get('g1')).toBe(a);
    expect(latestByGpu(m1, [{ gpuId: 'g1', time: '2025-01-01T00:00:01Z' }])).toBe(m1);
    const b = { gpuId: 'g1', time: '2025-01-01T00:00:03Z' };
    expect(latestByGpu(m1, [b]).get('g1')).toBe(b);
  });
  it('prefers the newer of query and live samples', () => {
    const q = { time: '2025-01-01T00:00:02Z' };
    const l = { time: '2025-01-01T00:00:03Z' };
    expect(newer(q, l)).toBe(l);
    expect(newer(l, q)).toBe(l);
    expect(newer(null, q)).toBe(q);
    expect(newer(q, undefined)).toBe(q);
  });
});
