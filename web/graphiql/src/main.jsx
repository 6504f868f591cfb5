// EGS GraphQL playground: GraphiQL 3 bundled for offline use (no CDN).
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import 'graphiql/graphiql.css';

const wsOrigin = location.origin.replace(/^http/, 'ws'); // http->ws, https->wss

const fetcher = createGraphiQLFetcher({
  url: location.origin + '/graphql',
  subscriptionUrl: wsOrigin + '/graphql/ws',
  // Lower-case key so it replaces the toolkit's own default `accept` header.
  headers: { accept: 'application/graphql-response+json, application/json' },
  enableIncrementalDelivery: false,
});

const defaultQuery = `# EGS GraphQL playground
#
# Requests need the admin token that the server
# writes to <data-dir>/admin.token. Put it in the
# Headers tab below as:
#
#   {"Authorization": "Bearer <token>"}
#
query Viewer {
  viewer {
    id
    name
    role
  }
}
`;

createRoot(document.getElementById('graphiql')).render(
  <GraphiQL
    fetcher={fetcher}
    defaultQuery={defaultQuery}
    isHeadersEditorEnabled={true}
    defaultEditorToolsVisibility="headers"
    shouldPersistHeaders={true}
  />,
);
