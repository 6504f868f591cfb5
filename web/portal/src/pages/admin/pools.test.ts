import { allocation, average, grandTotal, queueDepthByPool, totalsBy } from './pools';

const pool = (cluster: string, shape: string, total: number, free: number, reserved: number, unavailable: number, gpus = 8) => ({
  cluster,
  gpuShape: shape,
  totalNodes: total,
  freeNodes: free,
  reservedNodes: reserved,
  unavailableNodes: unavailable,
  gpusPerNode: gpus,
});

describe('pool totals', () => {
  const pools = [pool('east', 'H100', 10, 4, 5, 1), pool('west', 'H100', 4, 0, 4, 0), pool('east', 'A100', 6, 6, 0, 0, 4)];

  it('adds up by cluster and by shape', () => {
    const byCluster = totalsBy(pools, (p) => [p.cluster, p.cluster]);
    expect(byCluster.map((t) => [t.label, t.total, t.free, t.reserved, t.unavailable])).toEqual([
      ['east', 16, 10, 5, 1],
      ['west', 4, 0, 4, 0],
    ]);
    const byShape = totalsBy(pools, (p) => [p.gpuShape, p.gpuShape]);
    expect(byShape.find((t) => t.key === 'H100')).toMatchObject({ total: 14, reserved: 9, gpus: 112, reservedGpus: 72, pools: 2 });
    expect(grandTotal(byShape)).toMatchObject({ total: 20, free: 10, reserved: 9, unavailable: 1 });
  });

  it('measures allocation against usable nodes', () => {
    expect(allocation({ total: 10, reserved: 6, unavailable: 2 })).toBe(0.75);
    expect(allocation({ total: 2, reserved: 0, unavailable: 2 })).toBeNull();
  });
});

describe('queue depth', () => {
  it('groups waiting GPRs by planned pool, biggest first', () => {
    const depth = queueDepthByPool([
      { nodeCount: 1, gpuShape: 'H100' },
      { nodeCount: 4, assignedCluster: { id: 'c1', name: 'east' }, assignedGpuShape: 'H100', assignedInstanceType: 'p5' },
      { nodeCount: 2, assignedCluster: { id: 'c1', name: 'east' }, assignedGpuShape: 'H100', assignedInstanceType: 'p5' },
    ]);
    expect(depth).toEqual([
      { key: 'c1|p5|H100', label: 'east · p5 · H100', gprs: 2, nodes: 6 },
      { key: '*|any type|H100', label: 'any cluster · any type · H100', gprs: 1, nodes: 1 },
    ]);
  });

  it('averages only what reported', () => {
    expect(average([10, null, 30])).toBe(20);
    expect(average([null])).toBeNull();
  });
});
