import {
  classify,
  classifyPower,
  classifyTemperature,
  filtersFromParams,
  filtersToParams,
  hotSpotsFirst,
  matchesFilters,
  modelPowerLimit,
  shortUuid,
  thresholdsFor,
  EMPTY_FILTERS,
} from './hotspots';

const node = (over: object = {}) => ({
  name: 'node-a1',
  gpuShape: 'NVIDIA-H100-80GB-HBM3',
  health: 'HEALTHY',
  temperatureThresholdCelsius: null,
  powerThresholdWatts: null,
  cluster: { id: 'c1', name: 'east' },
  ...over,
});
const row = (uuid: string, temperature: number | null, power = 100, over: object = {}) => ({
  uuid,
  model: 'NVIDIA H100 80GB HBM3',
  latestSample: temperature === null ? null : { temperature, power, util: 50 },
  node: node(over),
});

describe('thresholds', () => {
  it('uses the node thresholds when set', () => {
    expect(thresholdsFor({ temperatureThresholdCelsius: 80, powerThresholdWatts: 500 })).toEqual({ temperatureC: 80, powerW: 500, source: 'node' });
  });
  it('falls back to 87 °C and the model power limit', () => {
    expect(thresholdsFor(node(), 'NVIDIA H100 80GB HBM3')).toEqual({ temperatureC: 87, powerW: 700, source: 'default' });
    expect(modelPowerLimit('NVIDIA-A100-SXM4-40GB')).toBe(400);
    expect(modelPowerLimit('NVIDIA A100 PCIe')).toBe(300);
    expect(modelPowerLimit('Tesla-T4')).toBe(70);
    expect(modelPowerLimit('Mystery')).toBeNull();
  });
});

describe('classification', () => {
  it('classifies temperature against the threshold with a 5 °C warm band', () => {
    expect(classifyTemperature(88, 87)).toBe('hot');
    expect(classifyTemperature(87, 87)).toBe('warm');
    expect(classifyTemperature(82, 87)).toBe('warm');
    expect(classifyTemperature(81.9, 87)).toBe('ok');
    expect(classifyTemperature(null, 87)).toBe('unknown');
  });
  it('classifies power against the limit (warm from 90 %), ok without a limit', () => {
    expect(classifyPower(701, 700)).toBe('hot');
    expect(classifyPower(630, 700)).toBe('warm');
    expect(classifyPower(629, 700)).toBe('ok');
    expect(classifyPower(5000, null)).toBe('ok');
  });
  it('takes the worse of the two and explains it in words', () => {
    const c = classify({ temperature: 70, power: 710 }, { temperatureC: 87, powerW: 700, source: 'default' });
    expect(c.level).toBe('hot');
    expect(c.temperature).toBe('ok');
    expect(c.reasons).toEqual(['over power']);
    expect(classify(null, { temperatureC: 87, powerW: null, source: 'default' }).level).toBe('unknown');
  });
});

describe('ordering and filters', () => {
  it('orders hot, then warm, then by closeness, samples-less last', () => {
    const rows = [row('a', 40), row('b', null), row('c', 90), row('d', 84), row('e', 60)];
    expect(hotSpotsFirst(rows).map((r) => r.uuid)).toEqual(['c', 'd', 'e', 'a', 'b']);
  });
  it('filters by cluster, shape, health, hot and search words', () => {
    const r = row('GPU-1234abcd', 90, 100, { name: 'gpu-node-7' });
    expect(matchesFilters(r, EMPTY_FILTERS)).toBe(true);
    expect(matchesFilters(r, { ...EMPTY_FILTERS, cluster: 'c2' })).toBe(false);
    expect(matchesFilters(r, { ...EMPTY_FILTERS, shape: 'NVIDIA-H100-80GB-HBM3' })).toBe(true);
    expect(matchesFilters(r, { ...EMPTY_FILTERS, health: 'STALE' })).toBe(false);
    expect(matchesFilters(r, { ...EMPTY_FILTERS, hot: true })).toBe(true);
    expect(matchesFilters(row('x', 40), { ...EMPTY_FILTERS, hot: true })).toBe(false);
    expect(matchesFilters(r, { ...EMPTY_FILTERS, q: 'node-7 h100' })).toBe(true);
    expect(matchesFilters(r, { ...EMPTY_FILTERS, q: '1234ABCD' })).toBe(true);
    expect(matchesFilters(r, { ...EMPTY_FILTERS, q: 'a100' })).toBe(false);
  });
  it('round-trips filters through the query string, leaving defaults out', () => {
    const f = { cluster: 'c1', shape: 'L4', health: 'HEALTHY', hot: true, q: 'node 3' };
    const p = filtersToParams(f);
    expect(filtersFromParams(new URLSearchParams(p.toString()))).toEqual(f);
    expect(filtersToParams(EMPTY_FILTERS).toString()).toBe('');
  });
  it('shortens uuids', () => {
    expect(shortUuid('GPU-3f2a9b1c-0000-1111-2222-abcdef12c91d')).toBe('3f2a9b1c…c91d');
    expect(shortUuid('GPU-12')).toBe('GPU-12');
  });
});
