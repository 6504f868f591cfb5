import { describe, expect, it } from 'vitest';
import { shiftWords } from './WhatIf';

describe('shiftWords', () => {
  it('says how far and which way a promise moves, or that it appears or goes', () => {
    expect(shiftWords({ promiseShiftSeconds: -3 * 3600 - 600, promiseBefore: 'a', promiseAfter: 'b' })).toBe('3 h 10 m earlier');
    expect(shiftWords({ promiseShiftSeconds: 1200, promiseBefore: 'a', promiseAfter: 'b' })).toBe('20 m later');
    expect(shiftWords({ promiseShiftSeconds: null, promiseBefore: 'a', promiseAfter: null })).toBe('fits nowhere');
    expect(shiftWords({ promiseShiftSeconds: null, promiseBefore: null, promiseAfter: 'b' })).toBe('planned');
  });
});
