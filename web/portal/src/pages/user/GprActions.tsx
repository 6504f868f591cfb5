// Cancel (pending), Early release and Extend (provisioned), each asking before it acts, with
// the gateway's answer shown beside the buttons.
import { useState } from 'react';
import { useMutation, type CombinedError } from 'urql';
import { graphql } from '../../gql';
import { ConfirmButton, ErrorBox, UserErrors } from '../../components/ui';
import { useSession } from '../../session';
import { PENDING_PHASES } from './format';
import { ExtendGpr } from './ExtendGpr';

const CancelDocument = graphql(`
  mutation UserGprActionsCancel($input: GprActionInput!) {
    cancelGpr(input: $input) {
      gpr {
        id
        phase
        version
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const EarlyReleaseDocument = graphql(`
  mutation UserGprActionsEarlyRelease($input: GprActionInput!) {
    earlyReleaseGpr(input: $input) {
      gpr {
        id
        phase
        version
        exitAt
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

const EvictDocument = graphql(`
  mutation AdminEvictGpr($input: EvictGprInput!) {
    evictGpr(input: $input) {
      gpr {
        id
        phase
        version
        reason
      }
      userErrors {
        field
        message
        code
      }
    }
  }
`);

type Problem = { field?: readonly string[] | null; message: string };

/** Admins: take the nodes back and requeue the GPR at its priority, saying why. */
function EvictGpr({ gpr, onDone }: { gpr: { id: string; name: string }; onDone?: () => void }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [result, evict] = useMutation(EvictDocument);
  if (!open) {
    return (
      <button type="button" className="danger" onClick={() => setOpen(true)}>
        Evict and requeue
      </button>
    );
  }
  return (
    <form
      className="actions inline"
      aria-label={`Evict ${gpr.name}`}
      onSubmit={async (e) => {
        e.preventDefault();
        const r = await evict({ input: { id: gpr.id, reason } });
        if (r.data?.evictGpr.userErrors.length === 0) {
          setOpen(false);
          onDone?.();
        }
      }}
    >
      <input aria-label="Why (the owner reads it)" required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
      <button type="submit" className="danger" disabled={result.fetching}>
        Evict {gpr.name}
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Keep
      </button>
      <ErrorBox error={result.error} />
      <UserErrors errors={result.data?.evictGpr.userErrors} />
    </form>
  );
}

export function GprActions({
  gpr,
  onDone,
  children,
}: {
  gpr: { id: string; name: string; phase: string; extensionRequested?: string | null };
  /** After an action went through (e.g. to refresh a list). */
  onDone?: () => void;
  /** More buttons (e.g. Edit), shown first. */
  children?: React.ReactNode;
}) {
  const { viewer } = useSession();
  const [, cancel] = useMutation(CancelDocument);
  const [, release] = useMutation(EarlyReleaseDocument);
  const [errors, setErrors] = useState<readonly Problem[]>([]);
  const [error, setError] = useState<CombinedError | null>(null);

  const finish = (result: { error?: CombinedError; data?: { payload: { userErrors: readonly Problem[] } } }) => {
    setError(result.error ?? null);
    const problems = result.data?.payload.userErrors ?? [];
    setErrors(problems);
    if (!result.error && problems.length === 0) onDone?.();
  };

  const pending = PENDING_PHASES.includes(gpr.phase);
  const provisioned = gpr.phase === 'PROVISIONED';
  return (
    <div className="gpr-actions">
      <div className="actions inline">
        {children}
        {pending && (
          <ConfirmButton
            danger
            question={`Cancel ${gpr.name}?`}
            onConfirm={async () => {
              const r = await cancel({ input: { id: gpr.id } });
              finish({ error: r.error, data: r.data && { payload: r.data.cancelGpr } });
            }}
          >
            Cancel
          </ConfirmButton>
        )}
        {provisioned && (
          <ConfirmButton
            danger
            question={`Release the nodes of ${gpr.name} now?`}
            onConfirm={async () => {
              const r = await release({ input: { id: gpr.id } });
              finish({ error: r.error, data: r.data && { payload: r.data.earlyReleaseGpr } });
            }}
          >
            Early release
          </ConfirmButton>
        )}
      </div>
      {provisioned && viewer?.role === 'ADMIN' && <EvictGpr gpr={gpr} onDone={onDone} />}
      {provisioned && <ExtendGpr gpr={gpr} onDone={onDone} />}
      <ErrorBox error={error} />
      <UserErrors errors={errors} />
    </div>
  );
}
