// Subscriptions that survive the gateway going away: on a closed socket they subscribe again
// after a backoff, with variables the caller may advance (`after: <last event id>`), so a
// restart loses nothing and repeats nothing.
import { useContext, useEffect, useRef, useState } from 'react';
import { print, type GraphQLError } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { ApiContext } from './context';
import { retryDelayMs } from '../lib/backoff';

export interface LiveOptions<TVars> {
  /** Variables for the next subscription after a reconnect (e.g. resume after the last id). */
  resume?: (previous: TVars) => TVars;
}

/** GraphQL errors (the operation itself was refused) are final; closed sockets are not. */
function isGraphqlErrors(error: unknown): error is readonly GraphQLError[] {
  return Array.isArray(error) && error.every((e) => typeof e === 'object' && e !== null && 'message' in e);
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
    const start = () => {
      dispose = api.ws.subscribe<TData>(
        { query, variables: current },
        {
          next: (result) => {
            if (result.errors?.length && !result.data) {
              setError(result.errors.map((e) => e.message).join('; '));
              return;
            }
            attempt = 0;
            setError(null);
            if (result.data) onDataRef.current(result.data as TData);
          },
          error: (e) => {
            if (isGraphqlErrors(e)) {
              setError(e.map((x) => x.message).join('; '));
              return;
            }
            retry();
          },
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
