// Extend a provisioned GPR's window: first shows how much fits now (without delaying anyone's
// promised start) and how much of it applies without an admin, then asks for the extension.
import { useState } from 'react';
import { useClient, useMutation, type CombinedError } from 'urql';
import { graphql } from '../../gql';
import { ErrorBox, UserErrors } from '../../components/ui';
import { formatDuration, parseIsoDuration } from '../../lib/time';

const RoomDocument = graphql(`
  query UserExtendRoom($id: ID!) {
    gprExtensionRoom(id: $id) {
      maxNow
      withoutApproval
      limitedBy
    }
  }
`);

const ExtendDocument = graphql(`
  mutation UserExtendGpr($input: ExtendGprInput!) {
    extendGpr(input: $input) {
      gpr {
        id
        version
        exitAt
        extendedBy
        extensionRequested
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

type Room = { maxNow: string; withoutApproval: string; limitedBy?: string | null };
type Problem = { field?: readonly string[] | null; message: string };

const CHOICES = [15, 30, 60, 120, 240];

export function ExtendGpr({ gpr, onDone }: { gpr: { id: string; name: string; extensionRequested?: string | null }; onDone?: () => void }) {
  const client = useClient();
  const [, extend] = useMutation(ExtendDocument);
  const [room, setRoom] = useState<Room | null>(null);
  const [minutes, setMinutes] = useState(30);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CombinedError | null>(null);
  const [errors, setErrors] = useState<readonly Problem[]>([]);
  const [outcome, setOutcome] = useState<string | null>(null);

  if (gpr.extensionRequested) {
    const asked = parseIsoDuration(gpr.extensionRequested);
    return <p className="notice">An extension by {asked != null ? formatDuration(asked) : gpr.extensionRequested} waits for an admin's decision.</p>;
  }

  const look = async () => {
    setBusy(true);
    const r = await client.query(RoomDocument, { id: gpr.id }, { requestPolicy: 'network-only' }).toPromise();
    setBusy(false);
    setError(r.error ?? null);
    setOutcome(null);
    setErrors([]);
    if (r.data) setRoom(r.data.gprExtensionRoom);
  };

  if (!room) {
    return (
      <div className="extend">
        <button type="button" onClick={look} disabled={busy}>
          Extend…
        </button>
        <ErrorBox error={error} />
        {outcome && <p className="notice" role="status">{outcome}</p>}
      </div>
    );
  }

  const max = parseIsoDuration(room.maxNow) ?? 0;
  const free = parseIsoDuration(room.withoutApproval) ?? 0;
  // The usual steps that fit, or all the room there is when it is less than the smallest.
  const fitting = CHOICES.filter((m) => m * 60 <= max);
  const options = fitting.length ? fitting : [Math.floor(max / 60)];
  const chosen = options.includes(minutes) ? minutes : options[options.length - 1];
  const asked = chosen * 60;
  const confirm = async () => {
    setBusy(true);
    const r = await extend({ input: { id: gpr.id, by: `${chosen}m` } });
    setBusy(false);
    setError(r.error ?? null);
    const payload = r.data?.extendGpr;
    setErrors(payload?.userErrors ?? []);
    if (payload?.gpr && payload.userErrors.length === 0) {
      setRoom(null);
      setOutcome(payload.gpr.extensionRequested ? 'Asked: an admin decides on the extension.' : `Extended by ${formatDuration(asked)}.`);
      onDone?.();
    }
  };
  return (
    <div className="extend" role="group" aria-label={`Extend ${gpr.name}`}>
      {max === 0 ? (
        <p className="notice">It cannot be extended now. {room.limitedBy}</p>
      ) : (
        <>
          <p>
            Up to <b>{formatDuration(max)}</b> now, {free >= max ? 'all of it' : <b>{formatDuration(free)}</b>} without an admin's approval.
            {room.limitedBy && <span className="muted"> Not more: {room.limitedBy}.</span>}
          </p>
          <label>
            Extend by{' '}
            <select value={chosen} onChange={(e) => setMinutes(Number(e.target.value))}>
              {options.map((m) => (
                <option key={m} value={m}>
                  {formatDuration(m * 60)}
                </option>
              ))}
            </select>
          </label>{' '}
          <button type="button" className="primary" onClick={confirm} disabled={busy || asked <= 0}>
            {asked > free ? 'Ask for approval' : 'Extend'}
          </button>
        </>
      )}{' '}
      <button type="button" className="link" onClick={() => setRoom(null)}>
        Close
      </button>
      <ErrorBox error={error} />
      <UserErrors errors={errors} />
    </div>
  );
}
