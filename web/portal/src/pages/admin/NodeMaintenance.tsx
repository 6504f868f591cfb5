// A node's maintenance actions for admins: cordon (no new GPR gets it), drain (also empty it:
// evict its GPR now, requeued, or let its window run out), and uncordon. Each asks for the reason
// the inventory shows and an evicted GPR's owner reads.
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../../gql';
import { ErrorBox, UserErrors } from '../../components/ui';

const CordonDocument = graphql(`
  mutation AdminCordonNode($input: CordonNodeInput!) {
    cordonNode(input: $input) {
      node {
        id
        state
        cordonReason
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const DrainDocument = graphql(`
  mutation AdminDrainNode($input: DrainNodeInput!) {
    drainNode(input: $input) {
      node {
        id
        state
        cordonReason
      }
      userErrors {
        field
        message
      }
    }
  }
`);

const UncordonDocument = graphql(`
  mutation AdminUncordonNode($input: UncordonNodeInput!) {
    uncordonNode(input: $input) {
      node {
        id
        state
      }
      userErrors {
        field
        message
      }
    }
  }
`);

type Node = { id: string; name: string; cordonedAt?: string | null; cordonReason?: string | null; cordonedBy?: string | null; allocatedGpr?: { name: string } | null };

export function NodeMaintenance({ node, onDone }: { node: Node; onDone: () => void }) {
  const [mode, setMode] = useState<'cordon' | 'drain' | null>(null);
  const [reason, setReason] = useState('');
  const [evict, setEvict] = useState(false);
  const [cordoned, cordon] = useMutation(CordonDocument);
  const [drained, drain] = useMutation(DrainDocument);
  const [uncordoned, uncordon] = useMutation(UncordonDocument);
  const errors = cordoned.data?.cordonNode.userErrors ?? drained.data?.drainNode.userErrors ?? uncordoned.data?.uncordonNode.userErrors;

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const input = { id: node.id, reason };
    const result = mode === 'drain' ? await drain({ input: { ...input, evict } }) : await cordon({ input });
    const payload = 'data' in result && result.data && ('drainNode' in result.data ? result.data.drainNode : result.data.cordonNode);
    if (payload && payload.userErrors.length === 0) {
      setMode(null);
      setReason('');
      onDone();
    }
  };

  if (node.cordonedAt) {
    return (
      <div className="maintenance">
        <span className="muted">
          {node.cordonReason} ({node.cordonedBy})
        </span>{' '}
        <button type="button" disabled={uncordoned.fetching} onClick={async () => (await uncordon({ input: { id: node.id } }), onDone())}>
          Uncordon
        </button>
        <ErrorBox error={uncordoned.error} />
        <UserErrors errors={errors} />
      </div>
    );
  }
  if (!mode) {
    return (
      <div className="actions inline">
        <button type="button" onClick={() => setMode('cordon')}>
          Cordon
        </button>
        <button type="button" onClick={() => setMode('drain')}>
          Drain
        </button>
      </div>
    );
  }
  return (
    <form className="maintenance" aria-label={`${mode === 'drain' ? 'Drain' : 'Cordon'} ${node.name}`} onSubmit={onSubmit}>
      <input aria-label="Reason" required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} placeholder="why (users see it)" />
      {mode === 'drain' && node.allocatedGpr && (
        <label className="check">
          <input type="checkbox" checked={evict} onChange={(e) => setEvict(e.target.checked)} /> evict {node.allocatedGpr.name} now (it is requeued)
        </label>
      )}
      <button type="submit" className="primary" disabled={cordoned.fetching || drained.fetching}>
        {mode === 'drain' ? 'Drain' : 'Cordon'} {node.name}
      </button>
      <button type="button" onClick={() => setMode(null)}>
        Keep
      </button>
      <ErrorBox error={cordoned.error ?? drained.error} />
      <UserErrors errors={errors} />
    </form>
  );
}
