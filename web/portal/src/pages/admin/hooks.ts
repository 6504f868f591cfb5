import { useCallback, useEffect, useRef } from 'react';

/**
 * Runs `fn` at most once per `ms` however often it is asked (live events come in bursts),
 * and once more after a burst so the last change is never missed.
 */
export function useThrottled(fn: () => void, ms = 1500): () => void {
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    const wait = last.current + ms - Date.now();
    if (wait <= 0) {
      last.current = Date.now();
      fnRef.current();
    } else if (!timer.current) {
      timer.current = setTimeout(() => {
        timer.current = undefined;
        last.current = Date.now();
        fnRef.current();
      }, wait);
    }
  }, [ms]);
}

/** Problems as `UserErrors` takes them, from a mutation's result. */
export function problems(
  result: { error?: { message: string } | null; userErrors?: readonly { field: readonly string[]; message: string }[] | null },
): { field?: readonly string[]; message: string }[] {
  if (result.error) return [{ message: result.error.message.replace(/^\[(GraphQL|Network)\] /, '') }];
  return [...(result.userErrors ?? [])];
}

/**
 * `fn` for every call but the first: a subscription that starts with the current state (the
 * queue now) need not refetch what the page has just loaded; after a reconnect it should.
 */
export function useAfterFirst(fn: () => void): () => void {
  const seen = useRef(false);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  return useCallback(() => {
    if (seen.current) fnRef.current();
    seen.current = true;
  }, []);
}
