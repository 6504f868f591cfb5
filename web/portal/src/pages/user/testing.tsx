// Test helpers of the user pages: an urql client whose answers come from a function of the
// operation name and variables, and a router around the page.
import type { ReactNode } from 'react';
import { render } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { Client, makeResult, type Exchange, type Operation } from '@urql/core';
import { Provider } from 'urql';
import { filter, fromPromise, mergeMap, pipe } from 'wonka';
import { getOperationAST } from 'graphql';

export type Answer = (name: string, variables: Record<string, unknown>) => unknown;

export function mockClient(answer: Answer) {
  const calls: { name: string; variables: Record<string, unknown> }[] = [];
  const exchange: Exchange = () => (ops$) =>
    pipe(
      ops$,
      filter((op: Operation) => op.kind !== 'teardown'),
      mergeMap((op: Operation) => {
        const name = getOperationAST(op.query)?.name?.value ?? '';
        const variables = (op.variables ?? {}) as Record<string, unknown>;
        calls.push({ name, variables });
        return fromPromise(Promise.resolve().then(() => makeResult(op, { data: answer(name, variables) as Record<string, unknown> })));
      }),
    );
  const client = new Client({ url: 'http://test/graphql', exchanges: [exchange], requestPolicy: 'network-only' });
  return { client, calls };
}

export function renderPage(client: Client, path: string, routes: { path: string; element: ReactNode }[]) {
  return render(
    <Provider value={client}>
      <MemoryRouter initialEntries={[path]}>
        <Routes>
          {routes.map((r) => (
            <Route key={r.path} path={r.path} element={r.element} />
          ))}
        </Routes>
      </MemoryRouter>
    </Provider>,
  );
}
