import {
  EMPTY_FORM,
  applyEstimate,
  createInput,
  errorField,
  estimateKey,
  isChosen,
  shapeOptions,
  sortEstimates,
  splitErrors,
  waitTimeInput,
  type WaitEstimate,
} from './waitTimes';

const row = (over: Partial<WaitEstimate>): WaitEstimate => ({
  cluster: { id: 'c1', name: 'east' },
  instanceType: 'p5.48xlarge',
  gpuShape: 'H100',
  freeNodes: 0,
  healthyNodes: 4,
  estimatedStartAt: '2030-01-01T10:00:00Z',
  startNoLaterThan: '2030-01-01T12:00:00Z',
  ...over,
});

describe('sortEstimates', () => {
  it('puts the soonest expected start first', () => {
    const rows = [
      row({ instanceType: 'late', estimatedStartAt: '2030-01-01T15:00:00Z' }),
      row({ instanceType: 'soon', estimatedStartAt: '2030-01-01T09:00:00Z' }),
      row({ instanceType: 'mid', estimatedStartAt: '2030-01-01T11:00:00Z' }),
    ];
    expect(sortEstimates(rows).map((r) => r.instanceType)).toEqual(['soon', 'mid', 'late']);
  });

  it('breaks ties by the sooner promise, then free nodes, then cluster name', () => {
    const rows = [
      row({ cluster: { id: 'b', name: 'b' }, instanceType: 'x', freeNodes: 1 }),
      row({ cluster: { id: 'a', name: 'a' }, instanceType: 'y', freeNodes: 1 }),
      row({ instanceType: 'more-free', freeNodes: 3 }),
      row({ instanceType: 'promise', startNoLaterThan: '2030-01-01T11:00:00Z' }),
    ];
    expect(sortEstimates(rows).map((r) => r.instanceType)).toEqual(['promise', 'more-free', 'y', 'x']);
  });

  it('does not change its argument', () => {
    const rows = [row({ estimatedStartAt: '2030-01-02T00:00:00Z' }), row({})];
    const copy = [...rows];
    sortEstimates(rows);
    expect(rows).toEqual(copy);
  });
});

describe('choosing a pool', () => {
  it('fills shape, instance type and preferred cluster, and marks only that row', () => {
    const a = row({ cluster: { id: 'c2', name: 'west' }, instanceType: 'a3', gpuShape: 'A100' });
    const b = row({});
    const form = applyEstimate({ ...EMPTY_FORM, name: 'keep-me' }, a);
    expect(form).toMatchObject({ name: 'keep-me', gpuShape: 'A100', instanceType: 'a3', clusterId: 'c2' });
    expect(isChosen(form, a)).toBe(true);
    expect(isChosen(form, b)).toBe(false);
    expect(estimateKey(a)).not.toEqual(estimateKey(b));
  });
});

describe('shapeOptions', () => {
  it('uses the policy when it names shapes, else the pools, deduplicated and sorted', () => {
    expect(shapeOptions(['B', 'A'], [{ gpuShape: 'Z' }])).toEqual(['A', 'B']);
    expect(shapeOptions([], [{ gpuShape: 'Z' }, { gpuShape: 'A' }, { gpuShape: 'Z' }])).toEqual(['A', 'Z']);
    expect(shapeOptions(undefined, undefined)).toEqual([]);
  });
});

describe('inputs', () => {
  const form = { ...EMPTY_FORM, sliceId: 's1', name: ' train-1 ', nodes: '2', hours: '2', minutes: '30', priority: '150' };

  it('builds createGpr input with durations in the gateway syntax', () => {
    const { input, errors } = createInput({ ...form, idleHours: '0.5', gpuShape: 'H100', instanceType: 'p5', clusterId: 'c1', gpusPerNode: '4' });
    expect(errors).toEqual([]);
    expect(input).toEqual({
      sliceId: 's1',
      name: 'train-1',
      nodeCount: 2,
      gpusPerNode: 4,
      priority: 150,
      duration: '2h30m',
      idleTimeout: '30m',
      gpuShape: 'H100',
      instanceType: 'p5',
      preferredClusterIds: ['c1'],
      preemptible: true,
    });
  });

  it('leaves optional fields out', () => {
    const { input } = createInput(form);
    expect(input).not.toHaveProperty('gpusPerNode');
    expect(input).not.toHaveProperty('gpuShape');
    expect(input).not.toHaveProperty('idleTimeout');
    expect(input?.preferredClusterIds).toEqual([]);
  });

  it('reports what keeps the form from being sent', () => {
    const { input, errors } = createInput({ ...EMPTY_FORM, name: '', hours: '0', minutes: '0', nodes: 'two' });
    expect(input).toBeNull();
    expect(errors.map((e) => e.field[1]).sort()).toEqual(['duration', 'name', 'nodeCount', 'sliceId']);
  });

  it('asks for wait times of every pool, whatever pool the form names', () => {
    const { input } = waitTimeInput({ ...form, gpuShape: 'H100', clusterId: 'c1' });
    expect(input).toEqual({ sliceId: 's1', nodeCount: 2, priority: 150, duration: '2h30m', preferredClusterIds: [] });
  });
});

describe('userErrors', () => {
  it('maps field paths to form fields', () => {
    expect(errorField(['input', 'priority'])).toBe('priority');
    expect(errorField([])).toBeNull();
    const { byField, general } = splitErrors(
      [
        { field: ['input', 'priority'], message: 'too high' },
        { field: [], message: 'quota' },
        { field: ['input', 'labels', '0'], message: 'bad label' },
      ],
      ['priority', 'name'],
    );
    expect(byField).toEqual({ priority: ['too high'] });
    expect(general.map((e) => e.message)).toEqual(['quota', 'bad label']);
  });
});

describe('workload hints', () => {
  const base = { ...EMPTY_FORM, sliceId: 's1', name: 'run-1' };
  it('are sent only when the form gives some, RDMA included', () => {
    expect(createInput(base).input).not.toHaveProperty('workload');
    expect(createInput({ ...base, rdma: true }).input?.workload).toEqual({ rdma: true });
    expect(createInput({ ...base, model: ' llama-3-70b ', kind: 'TRAINING' }).input?.workload).toEqual({ model: 'llama-3-70b', kind: 'TRAINING', rdma: false });
    // Wait times plan on the same need.
    expect(waitTimeInput({ ...base, rdma: true }).input?.workload).toEqual({ rdma: true });
  });
});
