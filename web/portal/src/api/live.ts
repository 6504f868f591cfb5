// Subscriptions that survive the gateway going away: on a closed socket they subscribe again
// after a backoff, with variables the caller may advance (`after: <last event id>`), so a
// restart loses nothing and repeats nothing.
import { useContext, useEffect, useRef, useState } from 'react';
import { print, type GraphQLFormattedError } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { ApiContext } from './context';
import { retryDelayMs } from '../lib/backoff';

export interface LiveOptions<TVars> {
  /** Variables for the next subscription after a reconnect (e.g. resume after the last id). */
  resume?: (previous: TVars) => TVars;
}

/** GraphQL errors: the gateway answered the operation (rather than the socket closing). */
function isGraphqlErrors(error: unknown): error is readonly GraphQLFormattedError[] {
  return Array.isArray(error) && error.every((e) => typeof e === 'object' && e !== null && 'message' in e);
}

/** What to do about the errors the gateway answered an operation with. */
export function errorVerdict(errors: readonly { extensions?: { code?: unknown } | null }[]): 'refused' | 'retry' | 'final' {
  const codes = errors.map((e) => e.extensions?.code);
  // The token was revoked or expired while the socket stayed open: the session is over.
  if (codes.includes('UNAUTHENTICATED')) return 'refused';
  // The gateway could not answer just now (database down, shutting down): ask again.
  if (codes.some((c) => c === 'INTERNAL' || c === 'SERVICE_UNAVAILABLE')) return 'retry';
  // NOT_FOUND, FORBIDDEN, invalid input: asking again changes nothing.
  return 'final';
}

/**
 * Subscribes while `variables` is not null; `onData` gets every payload. Returns the refusal
 * message when the gateway refused the operation, else `null`.
 */
export function useLive<TData, TVars extends Record<string, unknown>>(
  document: TypedDocumentNode<TData, TVars>,
  variables: TVars | null,
  onData: (data: TData) => void,
  options: LiveOptions<TVars> = {},
): string | null {
  const api = useContext(ApiContext);
  const [error, setError] = useState<string | null>(null);
  const onDataRef = useRef(onData);
  onDataRef.current = onData;
  const resumeRef = useRef(options.resume);
  resumeRef.current = options.resume;
  const key = variables === null ? null : JSON.stringify(variables);

  useEffect(() => {
    if (!api || key === null) return;
    const query = print(document);
    let current = JSON.parse(key) as TVars;
    let stopped = false;
    let attempt = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let dispose: (() => void) | undefined;

    const retry = () => {
      if (stopped) return;
      dispose = undefined;
      current = resumeRef.current ? resumeRef.current(current) : current;
      timer = setTimeout(start, retryDelayMs(attempt++));
    };
    const fail = (errors: readonly GraphQLFormattedError[]) => {
      const message = errors.map((e) => e.message).join('; ');
      const verdict = errorVerdict(errors);
      if (verdict === 'refused') api.onRejected(message);
      setError(message);
      if (verdict === 'retry') {
        dispose?.();
        retry();
      }
    };
    const start = () => {
      dispose = api.ws.subscribe<TData>(
        { query, variables: current },
        {
          next: (result) => {
            if (result.errors?.length && !result.data) {
              fail(result.errors);
              return;
            }
            attempt = 0;
            setError(null);
            if (result.data) onDataRef.current(result.data as TData);
          },
          error: (e) => (isGraphqlErrors(e) ? fail(e) : retry()),
          // A subscription the gateway ends (shutdown) is picked up again.
          complete: retry,
        },
      );
    };
    start();
    return () => {
      stopped = true;
      clearTimeout(timer);
      dispose?.();
    };
  }, [api, document, key]);

  return error;
}
