import { describe, expect, it } from 'vitest';
import { parseSignInFragment } from './sso';

describe('the single sign-on fragment', () => {
  it('gives the session token, or why signing in failed', () => {
    expect(parseSignInFragment('#sso-token=abc.def.ghi')).toEqual({ token: 'abc.def.ghi' });
    expect(parseSignInFragment('#sso-error=the+identity+provider+refused%3A+access_denied')).toEqual({
      error: 'Single sign-on failed: the identity provider refused: access_denied',
    });
  });

  it('ignores other fragments and empty values', () => {
    expect(parseSignInFragment('')).toEqual({});
    expect(parseSignInFragment('#approval')).toEqual({});
    expect(parseSignInFragment('#sso-token=')).toEqual({});
  });
});
