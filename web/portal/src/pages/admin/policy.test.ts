import { DEFAULT_POLICY, policyForm, policyInput } from './policy';

describe('slice policy form', () => {
  it('reads ISO durations as hours and minutes', () => {
    const f = policyForm({
      allowedShapes: ['H100'],
      maxNodesPerGpr: 4,
      priorityMin: 10,
      priorityMax: 250,
      maxDuration: 'PT36H',
      defaultIdleTimeout: 'PT30M',
      autoEviction: false,
      requeueOnEviction: true,
    });
    expect(f).toMatchObject({ maxNodesPerGpr: '4', maxDuration: '36', defaultIdleTimeout: '30', priorityMin: '10', priorityMax: '250' });
  });

  it('writes the gateway duration syntax and removes empty limits with null', () => {
    const r = policyInput({ ...DEFAULT_POLICY, maxDuration: '2.5', defaultIdleTimeout: '45', allowedShapes: ['A100'] });
    expect(r).toEqual({
      input: {
        allowedShapes: ['A100'],
        maxNodesPerGpr: null,
        priorityMin: 1,
        priorityMax: 200,
        maxDuration: '2h30m',
        defaultIdleTimeout: '45m',
        autoEviction: true,
        requeueOnEviction: true,
        underuseBelowPercent: null,
        underusePeriod: '1h',
      },
    });
  });

  it('sets the under-use warning in percent over minutes', () => {
    const f = policyForm({ allowedShapes: [], priorityMin: 1, priorityMax: 200, autoEviction: true, requeueOnEviction: true, underuseBelowPercent: 15, underusePeriod: 'PT2H' });
    expect(f).toMatchObject({ underuseBelowPercent: '15', underusePeriod: '120' });
    expect(policyInput(f)).toMatchObject({ input: { underuseBelowPercent: 15, underusePeriod: '2h' } });
    const bad = policyInput({ ...f, underuseBelowPercent: '0', underusePeriod: '2' });
    expect('errors' in bad && bad.errors.map((e) => e.field[0])).toEqual(['underuseBelowPercent', 'underusePeriod']);
  });

  it('reports bad numbers per field', () => {
    const r = policyInput({ ...DEFAULT_POLICY, maxNodesPerGpr: '1.5', priorityMin: '250', priorityMax: '100', maxDuration: '-1' });
    expect('errors' in r && r.errors.map((e) => e.field[0])).toEqual(['maxNodesPerGpr', 'priorityMin', 'maxDuration']);
  });
});
