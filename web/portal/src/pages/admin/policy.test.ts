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
      },
    });
  });

  it('reports bad numbers per field', () => {
    const r = policyInput({ ...DEFAULT_POLICY, maxNodesPerGpr: '1.5', priorityMin: '250', priorityMax: '100', maxDuration: '-1' });
    expect('errors' in r && r.errors.map((e) => e.field[0])).toEqual(['maxNodesPerGpr', 'priorityMin', 'maxDuration']);
  });
});
