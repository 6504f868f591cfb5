// Events: search every GPR event the viewer may see by text, kind, slice, GPR and time, newest
// first, paging back through older ones. The filters live in the URL, so a search can be shared
// (the bell's search box and a GPR's "All events" link open it).
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { useQuery } from 'urql';
import { graphql } from '../gql';
import type { GprEventKind } from '../gql/graphql';
import { Card, Empty, ErrorBox, Loading, Time } from '../components/ui';
import './user/user.css';

const EventsSearchDocument = graphql(`
  query EventsSearch($text: String, $kinds: [GprEventKind!], $sliceId: ID, $gprId: ID, $since: DateTime, $until: DateTime, $before: String) {
    gprEvents(text: $text, kinds: $kinds, sliceId: $sliceId, gprId: $gprId, since: $since, until: $until, last: 50, before: $before) {
      totalCount
      pageInfo {
        hasPreviousPage
        startCursor
      }
      nodes {
        id
        kind
        message
        actor
        createdAt
        gpr {
          id
          name
        }
        slice {
          id
          name
        }
      }
    }
  }
`);

const EventsSlicesDocument = graphql(`
  query EventsSlices {
    slices(first: 100) {
      nodes {
        id
        name
      }
    }
  }
`);

/** Every kind, in lifecycle order. */
export const KINDS = [
  'CREATED',
  'APPROVAL_REQUIRED',
  'APPROVED',
  'REJECTED',
  'QUEUED',
  'ESTIMATE_CHANGED',
  'PRIORITY_CHANGED',
  'EDITED',
  'PROVISIONING_STARTED',
  'PRECHECK_PASSED',
  'PRECHECK_FAILED',
  'PROVISIONED',
  'PROGRESS_25',
  'PROGRESS_50',
  'PROGRESS_75',
  'EXTENDED',
  'EXTENSION_REQUESTED',
  'EXTENSION_REJECTED',
  'EXIT_WARNING',
  'NODE_REPLACED',
  'DEGRADED',
  'PREEMPTED',
  'EVICTED',
  'REQUEUED',
  'RELEASING',
  'EARLY_RELEASED',
  'IDLE_RELEASED',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
] as const satisfies readonly GprEventKind[];

const words = (kind: string) => kind.replace(/_/g, ' ').toLowerCase();

/** A `datetime-local` value (the viewer's zone) as an RFC 3339 instant; null when empty. */
function instant(local: string | null): string | null {
  if (!local) return null;
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? null : t.toISOString();
}

export function Events() {
  const [params, setParams] = useSearchParams();
  const text = params.get('text') ?? '';
  const kind = params.get('kind') ?? '';
  const sliceId = params.get('slice') ?? '';
  const gprId = params.get('gpr') ?? '';
  const since = params.get('since') ?? '';
  const until = params.get('until') ?? '';
  // Older pages: the cursors of the pages shown before, newest first.
  const [before, setBefore] = useState<string[]>([]);
  const [draft, setDraft] = useState(text);

  const variables = {
    text: text || null,
    kinds: kind ? [kind as GprEventKind] : null,
    sliceId: sliceId || null,
    gprId: gprId || null,
    since: instant(since),
    until: instant(until),
    before: before.length ? before[before.length - 1] : null,
  };
  const [{ data, fetching, error }, refetch] = useQuery({ query: EventsSearchDocument, variables, requestPolicy: 'cache-and-network' });
  const [slices] = useQuery({ query: EventsSlicesDocument });

  const change = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next, { replace: true });
    setBefore([]);
  };
  const onSearch = (e: FormEvent) => {
    e.preventDefault();
    change('text', draft.trim());
  };

  const page = data?.gprEvents;
  const rows = page ? [...page.nodes].reverse() : [];
  const gprName = rows.find((r) => r.gpr?.id === gprId)?.gpr?.name;
  return (
    <div className="user-page">
      <h1>Events</h1>
      <Card title="Search">
        <form role="search" aria-label="Search events" className="form-grid events-filters" onSubmit={onSearch}>
          <div className="span-2">
            <label htmlFor="events-text">Text</label>
            <input id="events-text" type="search" value={draft} maxLength={200} onChange={(e) => setDraft(e.target.value)} placeholder="in the message or who did it" />
          </div>
          <div>
            <label htmlFor="events-kind">Kind</label>
            <select id="events-kind" value={kind} onChange={(e) => change('kind', e.target.value)}>
              <option value="">any kind</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {words(k)}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="events-slice">Slice</label>
            <select id="events-slice" value={sliceId} onChange={(e) => change('slice', e.target.value)}>
              <option value="">every slice</option>
              {(slices.data?.slices.nodes ?? []).map((s) => (
                <option key={s.id} value={s.id}>
                  {s.name}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="events-since">From</label>
            <input id="events-since" type="datetime-local" value={since} onChange={(e) => change('since', e.target.value)} />
          </div>
          <div>
            <label htmlFor="events-until">Until</label>
            <input id="events-until" type="datetime-local" value={until} onChange={(e) => change('until', e.target.value)} />
          </div>
          <div className="actions inline">
            <button type="submit" className="primary">
              Search
            </button>
            {gprId && (
              <button type="button" className="link" onClick={() => change('gpr', '')}>
                Only GPR {gprName ?? gprId} ✕
              </button>
            )}
          </div>
        </form>
      </Card>
      <Card title={page ? `${page.totalCount} event${page.totalCount === 1 ? '' : 's'}` : 'Events'}>
        <ErrorBox error={error} retry={() => refetch({ requestPolicy: 'network-only' })} />
        {!data && fetching && <Loading what="Searching" />}
        {page && rows.length === 0 && <Empty>No event matches.</Empty>}
        {rows.length > 0 && (
          <div className="table-wrap">
            <table aria-label="Events">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Kind</th>
                  <th scope="col">GPR</th>
                  <th scope="col">Slice</th>
                  <th scope="col">By</th>
                  <th scope="col">What happened</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <Time at={e.createdAt} />
                    </td>
                    <td>{words(e.kind)}</td>
                    <td>{e.gpr ? <Link to={`/gprs/${e.gpr.id}`}>{e.gpr.name}</Link> : '—'}</td>
                    <td>{e.slice?.name ?? '—'}</td>
                    <td>{e.actor}</td>
                    <td style={{ whiteSpace: 'normal' }}>{e.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <div className="actions inline">
          {before.length > 0 && (
            <button type="button" onClick={() => setBefore([])}>
              Newest
            </button>
          )}
          {page?.pageInfo.hasPreviousPage && page.pageInfo.startCursor && (
            <button type="button" onClick={() => setBefore((b) => [...b, page.pageInfo.startCursor as string])}>
              Older events
            </button>
          )}
        </div>
      </Card>
    </div>
  );
}
