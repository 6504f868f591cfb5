// One urql client (queries and mutations over HTTP) and one graphql-ws client (subscriptions)
// per login, both carrying the token.
import { Client, cacheExchange, fetchExchange, mapExchange } from '@urql/core';
import { retryExchange } from '@urql/exchange-retry';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';

export interface Api {
  http: Client;
  ws: WsClient;
  /** Ends the session when the gateway refuses the token. */
  onRejected: (reason: string) => void;
}

/** Connection states a subscription walks through; shown in the header. */
export type LinkState = 'connecting' | 'live' | 'reconnecting';

export function wsUrl(location: Location = window.location): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/graphql/ws`;
}

export function createApi(token: string, onRejected: (reason: string) => void, onLink: (state: LinkState) => void): Api {
  const http = new Client({
    url: '/graphql',
    exchanges: [
      cacheExchange,
      // A token revoked or expired mid-session ends it, with the gateway's reason.
      mapExchange({
        onError(error) {
          const refused = error.graphQLErrors.find((e) => e.extensions?.code === 'UNAUTHENTICATED') ?? (error.response?.status === 401 ? error : null);
          if (refused) onRejected(refused.message);
        },
      }),
      // The gateway restarting or briefly unreachable: ask again, backing off, until it answers.
      retryExchange({ initialDelayMs: 500, maxDelayMs: 10_000, randomDelay: true, maxNumberAttempts: Infinity, retryIf: (error) => !!error.networkError }),
      fetchExchange,
    ],
    // Pages show live data: always ask the gateway, and keep the last answer while asking.
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ headers: { authorization: `Bearer ${token}` } }),
  });
  const ws = createWsClient({
    url: wsUrl(),
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
    // Subscriptions resume themselves (see useLive), each from what it last received, so the
    // client itself does not replay the original operations on a new socket.
    retryAttempts: 0,
    keepAlive: 10_000,
    on: {
      connecting: () => onLink('connecting'),
      connected: () => onLink('live'),
      closed: (event) => {
        const code = (event as CloseEvent | undefined)?.code;
        // 4401/4403: the gateway refused the token (revoked or expired); anything else is
        // a network hiccup or a restart, and subscriptions retry.
        if (code === 4401 || code === 4403) onRejected((event as CloseEvent).reason || 'token refused');
        else onLink('reconnecting');
      },
    },
  });
  return { http, ws, onRejected };
}
