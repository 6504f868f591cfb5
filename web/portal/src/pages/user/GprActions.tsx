// Cancel (pending), Early release and Extend (provisioned), each asking before it acts, with
// the gateway's answer shown beside the buttons.
import { useState } from 'react';
import { useMutation, type CombinedError } from 'urql';
import { graphql } from '../../gql';
import { ConfirmButton, ErrorBox, UserErrors } from '../../components/ui';
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

type Problem = { field?: readonly string[] | null; message: string };

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
      {provisioned && <ExtendGpr gpr={gpr} onDone={onDone} />}
      <ErrorBox error={error} />
      <UserErrors errors={errors} />
    </div>
  );
}
