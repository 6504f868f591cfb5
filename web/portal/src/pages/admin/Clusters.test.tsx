import { render, screen } from '@testing-library/react';
import { MemoryRouter } from 'react-router-dom';
import { poolItems } from './Clusters';
import { ScheduleTimeline } from './ScheduleTimeline';

const H = 3_600_000;
const now = Date.UTC(2025, 0, 10, 12);
const iso = (h: number) => new Date(now + h * H).toISOString();
const pool = { __typename: 'Pool' as const, instanceType: 'p5', gpuShape: 'H100', gpusPerNode: 8, gpuMemoryMib: 81920, totalNodes: 4, freeNodes: 1, reservedNodes: 3, unavailableNodes: 0 };
const g = (id: string, extra: Record<string, unknown>) =>
  ({
    id,
    name: id,
    phase: 'QUEUED',
    nodeCount: 2,
    duration: 'PT6H',
    gpuShape: null,
    instanceType: null,
    assignedGpuShape: null,
    assignedInstanceType: null,
    assignedCluster: null,
    slice: { id: 's', name: 'vision' },
    estimatedStartAt: null,
    startNoLaterThan: null,
    provisionedAt: null,
    exitAt: null,
    ...extra,
  }) as never;

describe('poolItems', () => {
  it('takes running GPRs of this pool and planned starts of queued ones that fit it', () => {
    const running = [
      g('r1', { phase: 'PROVISIONED', assignedCluster: { id: 'c1' }, assignedGpuShape: 'H100', assignedInstanceType: 'p5', provisionedAt: iso(-1), exitAt: iso(5) }),
      g('r2', { phase: 'PROVISIONED', assignedCluster: { id: 'c2' }, assignedGpuShape: 'H100', assignedInstanceType: 'p5', provisionedAt: iso(-1), exitAt: iso(5) }),
    ];
    const queue = [
      g('q1', { assignedCluster: { id: 'c1' }, assignedGpuShape: 'H100', assignedInstanceType: 'p5', estimatedStartAt: iso(5), startNoLaterThan: iso(6) }),
      g('q2', { gpuShape: 'A100', estimatedStartAt: iso(1) }),
      g('q3', { startNoLaterThan: iso(8) }),
      g('q4', {}),
    ];
    const items = poolItems(pool, 'c1', running, queue, now);
    expect(items.map((i) => [i.id, i.kind, (i.start - now) / H, (i.end - now) / H])).toEqual([
      ['r1', 'running', -1, 5],
      ['q1', 'planned', 5, 11],
      ['q3', 'planned', 8, 14],
    ]);
    expect(items[1]).toMatchObject({ label: 'vision/q1', nodes: 2, promise: now + 6 * H, href: '/gprs/q1' });
  });
});

describe('ScheduleTimeline', () => {
  it('draws labelled bars as links and says what is planned', () => {
    render(
      <MemoryRouter>
        <ScheduleTimeline
          title="Pool p5 · H100"
          from={now}
          to={now + 48 * H}
          capacity={4}
          items={[
            { id: 'r1', label: 'vision/r1', kind: 'running', start: now - H, end: now + 5 * H, nodes: 2, href: '/gprs/r1' },
            { id: 'q1', label: 'vision/q1', kind: 'planned', start: now + 5 * H, end: now + 11 * H, nodes: 3, href: '/gprs/q1', promise: now + 6 * H },
          ]}
        />
      </MemoryRouter>,
    );
    expect(screen.getByRole('group', { name: /Pool p5 · H100: 1 running, 1 planned in the next 48 h on 4 nodes/ })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: /^vision\/r1 × 2 nodes, running until/ })).toHaveAttribute('href', '/gprs/r1');
    expect(screen.getByRole('link', { name: /^vision\/q1 × 3 nodes, planned .* starts no later than/ })).toBeInTheDocument();
  });
});
