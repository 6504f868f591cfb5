import { errorVerdict } from './live';

it('ends the session on UNAUTHENTICATED, retries what may pass, and stops on the rest', () => {
  expect(errorVerdict([{ extensions: { code: 'UNAUTHENTICATED' } }])).toBe('refused');
  expect(errorVerdict([{ extensions: { code: 'INTERNAL' } }])).toBe('retry');
  expect(errorVerdict([{ extensions: { code: 'SERVICE_UNAVAILABLE' } }])).toBe('retry');
  expect(errorVerdict([{ extensions: { code: 'NOT_FOUND' } }])).toBe('final');
  expect(errorVerdict([{ extensions: null }, {}])).toBe('final');
});
