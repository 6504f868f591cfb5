// One urql client (queries and mutations over HTTP) and one graphql-ws client (subscriptions)
// per login, both carrying the token.
import { Client, cacheExchange, fetchExchange } from '@urql/core';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';

export interface Api {
  http: Client;
  ws: WsClient;
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
    exchanges: [cacheExchange, fetchExchange],
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
  return { http, ws };
}
