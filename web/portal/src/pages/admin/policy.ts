// The slice policy form's fields as text, and back to `SlicePolicyInput`.
import { durationInput, parseIsoDuration } from '../../lib/time';

export interface PolicyForm {
  allowedShapes: string[];
  maxNodesPerGpr: string;
  priorityMin: string;
  priorityMax: string;
  /** Hours. */
  maxDuration: string;
  /** Minutes. */
  defaultIdleTimeout: string;
  autoEviction: boolean;
  requeueOnEviction: boolean;
  /** Percent; empty: no under-use warning. */
  underuseBelowPercent: string;
  /** Minutes. */
  underusePeriod: string;
}

export const DEFAULT_POLICY: PolicyForm = {
  allowedShapes: [],
  maxNodesPerGpr: '',
  priorityMin: '1',
  priorityMax: '200',
  maxDuration: '',
  defaultIdleTimeout: '',
  autoEviction: true,
  requeueOnEviction: true,
  underuseBelowPercent: '',
  underusePeriod: '60',
};

const num = (n: number) => String(Math.round(n * 100) / 100);

export function policyForm(p: {
  allowedShapes: readonly string[];
  maxNodesPerGpr?: number | null;
  priorityMin: number;
  priorityMax: number;
  maxDuration?: string | null;
  defaultIdleTimeout?: string | null;
  autoEviction: boolean;
  requeueOnEviction: boolean;
  underuseBelowPercent?: number | null;
  underusePeriod?: string | null;
}): PolicyForm {
  const hours = parseIsoDuration(p.maxDuration);
  const idle = parseIsoDuration(p.defaultIdleTimeout);
  const underuse = parseIsoDuration(p.underusePeriod);
  return {
    allowedShapes: [...p.allowedShapes],
    maxNodesPerGpr: p.maxNodesPerGpr == null ? '' : String(p.maxNodesPerGpr),
    priorityMin: String(p.priorityMin),
    priorityMax: String(p.priorityMax),
    maxDuration: hours == null ? '' : num(hours / 3600),
    defaultIdleTimeout: idle == null ? '' : num(idle / 60),
    autoEviction: p.autoEviction,
    requeueOnEviction: p.requeueOnEviction,
    underuseBelowPercent: p.underuseBelowPercent == null ? '' : String(p.underuseBelowPercent),
    underusePeriod: underuse == null ? '60' : num(underuse / 60),
  };
}

export interface PolicyInputOut {
  allowedShapes: string[];
  maxNodesPerGpr: number | null;
  priorityMin?: number;
  priorityMax?: number;
  maxDuration: string | null;
  defaultIdleTimeout: string | null;
  autoEviction: boolean;
  requeueOnEviction: boolean;
  underuseBelowPercent: number | null;
  underusePeriod?: string;
}

/** The form as input (empty limits removed with `null`), or the problems with it. */
export function policyInput(f: PolicyForm): { input: PolicyInputOut } | { errors: { field: string[]; message: string }[] } {
  const errors: { field: string[]; message: string }[] = [];
  const int = (field: string, text: string, min: number, max: number): number | null => {
    if (text.trim() === '') return null;
    const v = Number(text);
    if (!Number.isInteger(v) || v < min || v > max) {
      errors.push({ field: [field], message: `must be a whole number from ${min} to ${max}` });
      return null;
    }
    return v;
  };
  const positive = (field: string, text: string, toInput: (v: number) => string | null): string | null => {
    if (text.trim() === '') return null;
    const v = Number(text);
    const out = Number.isFinite(v) && v > 0 ? toInput(v) : null;
    if (!out) errors.push({ field: [field], message: 'must be a positive number' });
    return out;
  };
  const maxNodesPerGpr = int('maxNodesPerGpr', f.maxNodesPerGpr, 1, 100_000);
  const priorityMin = int('priorityMin', f.priorityMin, 1, 300);
  const priorityMax = int('priorityMax', f.priorityMax, 1, 300);
  if (priorityMin != null && priorityMax != null && priorityMin > priorityMax) errors.push({ field: ['priorityMin'], message: 'must not be above the maximum' });
  const maxDuration = positive('maxDuration', f.maxDuration, (h) => durationInput(h));
  const defaultIdleTimeout = positive('defaultIdleTimeout', f.defaultIdleTimeout, (m) => durationInput(0, m));
  const underuseBelowPercent = int('underuseBelowPercent', f.underuseBelowPercent, 1, 100);
  const periodMinutes = int('underusePeriod', f.underusePeriod, 5, 7 * 24 * 60);
  if (errors.length) return { errors };
  return {
    input: {
      allowedShapes: f.allowedShapes,
      maxNodesPerGpr,
      ...(priorityMin != null && { priorityMin }),
      ...(priorityMax != null && { priorityMax }),
      maxDuration,
      defaultIdleTimeout,
      autoEviction: f.autoEviction,
      requeueOnEviction: f.requeueOnEviction,
      underuseBelowPercent,
      ...(periodMinutes != null && { underusePeriod: durationInput(0, periodMinutes) ?? undefined }),
    },
  };
}
