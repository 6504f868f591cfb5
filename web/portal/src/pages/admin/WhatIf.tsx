// What-if on the cluster page: an admin weighs adding or removing nodes in one of the cluster's
// pools, or cordoning one of its nodes, and reads which waiting GPRs' promises would move and by
// how much. Answered on a copy of the scheduler: nothing changes.
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { useClient, type CombinedError } from 'urql';
import { graphql } from '../../gql';
import type { WhatIfChangeInput, AdminWhatIfQuery } from '../../gql/graphql';
import { Card, Empty, ErrorBox, Time, useNow } from '../../components/ui';
import { formatDuration } from '../../lib/time';

const WhatIfQuery = graphql(`
  query AdminWhatIf($input: WhatIfInput!) {
    whatIf(input: $input) {
      gpr {
        id
        name
        slice {
          name
        }
      }
      promiseBefore
      promiseAfter
      expectedAfter
      promiseShiftSeconds
    }
  }
`);

type Move = AdminWhatIfQuery['whatIf'][number];
type Pool = { instanceType: string; gpuShape: string };
type Node = { id: string; name: string };

/** A promise's shift in words: "3 h 10 m earlier", "20 m later", "no place" when it goes. */
export function shiftWords(m: Pick<Move, 'promiseShiftSeconds' | 'promiseAfter' | 'promiseBefore'>): string {
  if (m.promiseAfter == null) return 'fits nowhere';
  if (m.promiseBefore == null) return 'planned';
  const s = m.promiseShiftSeconds ?? 0;
  if (s === 0) return 'unchanged';
  return `${formatDuration(Math.abs(s))} ${s < 0 ? 'earlier' : 'later'}`;
}

export function WhatIf({ clusterId, pools, nodes }: { clusterId: string; pools: readonly Pool[]; nodes: readonly Node[] }) {
  const client = useClient();
  const now = useNow(30_000);
  const [kind, setKind] = useState<'add' | 'remove' | 'cordon'>('add');
  const [pool, setPool] = useState(0);
  const [count, setCount] = useState(1);
  const [node, setNode] = useState(nodes[0]?.id ?? '');
  const [moves, setMoves] = useState<readonly Move[] | null>(null);
  const [error, setError] = useState<CombinedError | null>(null);
  const [asking, setAsking] = useState(false);

  if (pools.length === 0) return null;
  const change = (): WhatIfChangeInput => {
    if (kind === 'cordon') return { cordonNode: node };
    const p = pools[pool] ?? pools[0];
    const nodesInput = { clusterId, instanceType: p.instanceType, gpuShape: p.gpuShape, count };
    return kind === 'add' ? { addNodes: nodesInput } : { removeNodes: nodesInput };
  };
  const ask = async () => {
    setAsking(true);
    setError(null);
    const result = await client.query(WhatIfQuery, { input: { changes: [change()] } }, { requestPolicy: 'network-only' }).toPromise();
    setAsking(false);
    if (result.error) {
      setError(result.error);
      setMoves(null);
    } else {
      setMoves(result.data?.whatIf ?? []);
    }
  };

  return (
    <Card title="What if">
      <p className="muted">Weigh a change before making it: which waiting GPRs would start sooner or later. Nothing changes.</p>
      <div className="row" style={{ alignItems: 'end', gap: '0.5rem', flexWrap: 'wrap' }}>
        <div>
          <label htmlFor="wi-kind">Change</label>
          <select id="wi-kind" value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
            <option value="add">Add nodes</option>
            <option value="remove">Remove nodes</option>
            <option value="cordon">Cordon a node</option>
          </select>
        </div>
        {kind === 'cordon' ? (
          <div>
            <label htmlFor="wi-node">Node</label>
            <select id="wi-node" value={node} onChange={(e) => setNode(e.target.value)}>
              {nodes.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.name}
                </option>
              ))}
            </select>
          </div>
        ) : (
          <>
            <div>
              <label htmlFor="wi-pool">Pool</label>
              <select id="wi-pool" value={pool} onChange={(e) => setPool(Number(e.target.value))}>
                {pools.map((p, i) => (
                  <option key={`${p.instanceType}|${p.gpuShape}`} value={i}>
                    {p.instanceType} · {p.gpuShape}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label htmlFor="wi-count">Nodes</label>
              <input id="wi-count" type="number" min={1} max={1000} value={count} onChange={(e) => setCount(Math.max(1, Number(e.target.value) || 1))} />
            </div>
          </>
        )}
        <button type="button" onClick={ask} disabled={asking || (kind === 'cordon' && !node)}>
          {asking ? 'Weighing…' : 'Weigh it'}
        </button>
      </div>
      <ErrorBox error={error} />
      {moves &&
        (moves.length === 0 ? (
          <Empty>No waiting GPR would move.</Empty>
        ) : (
          <div className="table-wrap">
            <table aria-label="What would move">
              <thead>
                <tr>
                  <th scope="col">GPR</th>
                  <th scope="col">Slice</th>
                  <th scope="col">Promise now</th>
                  <th scope="col">Promise after</th>
                  <th scope="col">Moves</th>
                  <th scope="col">Expected after</th>
                </tr>
              </thead>
              <tbody>
                {moves.map((m, i) => (
                  <tr key={m.gpr?.id ?? `new-${i}`}>
                    <td>{m.gpr ? <Link to={`/gprs/${m.gpr.id}`}>{m.gpr.name}</Link> : <span className="muted">the new GPR</span>}</td>
                    <td>{m.gpr?.slice?.name ?? '—'}</td>
                    <td>
                      <Time at={m.promiseBefore} now={now} />
                    </td>
                    <td>
                      <Time at={m.promiseAfter} now={now} />
                    </td>
                    <td className={(m.promiseShiftSeconds ?? 0) > 0 || m.promiseAfter == null ? 'warn' : undefined}>{shiftWords(m)}</td>
                    <td>
                      <Time at={m.expectedAfter} now={now} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
    </Card>
  );
}
