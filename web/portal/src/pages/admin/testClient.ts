// A urql client for page tests: answers queries by operation name, records mutations.
import type { Client } from 'urql';
import { fromValue, never } from 'wonka';
import { Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';

export const opName = (doc: DocumentNode) => (doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode).name?.value ?? '';

export function mockClient(queries: Record<string, unknown>, mutations: Record<string, unknown> = {}) {
  const calls: { name: string; variables: unknown }[] = [];
  const client = {
    executeQuery: (op: { query: DocumentNode }) => (opName(op.query) in queries ? fromValue({ operation: op, data: queries[opName(op.query)] }) : never),
    executeMutation: (op: { query: DocumentNode; variables: unknown }) => {
      calls.push({ name: opName(op.query), variables: op.variables });
      return fromValue({ operation: op, data: mutations[opName(op.query)] });
    },
    executeSubscription: () => never,
  } as unknown as Client;
  return { client, calls };
}
