// The "New GPR" form as plain data: turning it into `waitTimeEstimates` / `createGpr` input,
// ordering the wait-time answers, and filling the form from the pool a user picks. Pure, so
// it is tested without a gateway.
import { durationInput, parseIsoDuration } from '../../lib/time';
import type { WorkloadKind } from '../../gql/graphql';

export interface GprForm {
  sliceId: string;
  name: string;
  nodes: string;
  gpusPerNode: string;
  gpuShape: string;
  instanceType: string;
  clusterId: string;
  priority: string;
  hours: string;
  minutes: string;
  idleHours: string;
  preemptible: boolean;
  /** The profile (GPR template) the form was filled from; '' for none. */
  templateId: string;
  /** Workload hints: the model, what it runs, and whether its nodes need RDMA. */
  model: string;
  kind: string;
  rdma: boolean;
}

export const EMPTY_FORM: GprForm = {
  sliceId: '',
  name: '',
  nodes: '1',
  gpusPerNode: '',
  gpuShape: '',
  instanceType: '',
  clusterId: '',
  priority: '100',
  hours: '1',
  minutes: '0',
  idleHours: '',
  preemptible: true,
  templateId: '',
  model: '',
  kind: '',
  rdma: false,
};

/** A profile as `gprTemplates` lists it. */
export interface Profile {
  id: string;
  nodeCount: number;
  gpusPerNode?: number | null;
  gpuShape?: string | null;
  instanceType?: string | null;
  priority: number;
  duration: string;
  idleTimeout?: string | null;
}

/** The form filled from a profile: its size, shape, priority, window and idle timeout. */
export function applyProfile(form: GprForm, profile: Profile): GprForm {
  const seconds = parseIsoDuration(profile.duration) ?? 3600;
  const idle = parseIsoDuration(profile.idleTimeout);
  return {
    ...form,
    templateId: profile.id,
    nodes: String(profile.nodeCount),
    gpusPerNode: profile.gpusPerNode != null ? String(profile.gpusPerNode) : '',
    gpuShape: profile.gpuShape ?? '',
    instanceType: profile.instanceType ?? '',
    priority: String(profile.priority),
    hours: String(Math.floor(seconds / 3600)),
    minutes: String(Math.floor((seconds % 3600) / 60)),
    idleHours: idle != null ? String(Math.round((idle / 3600) * 100) / 100) : '',
  };
}

/** One pool's answer to "Get wait time", as the gateway gives it. */
export interface WaitEstimate {
  cluster?: { id: string; name: string } | null;
  instanceType: string;
  gpuShape: string;
  freeNodes: number;
  healthyNodes: number;
  estimatedStartAt: string;
  estimatedWait?: string | null;
  startNoLaterThan: string;
}

/** A problem found before asking the gateway, shaped like a `UserError`. */
export interface FormError {
  field: string[];
  message: string;
}

const time = (iso: string | null | undefined) => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
};

/** Soonest expected start first; then the sooner promise, more free nodes, then by name. */
export function sortEstimates<T extends WaitEstimate>(rows: readonly T[]): T[] {
  return [...rows].sort(
    (a, b) =>
      time(a.estimatedStartAt) - time(b.estimatedStartAt) ||
      time(a.startNoLaterThan) - time(b.startNoLaterThan) ||
      b.freeNodes - a.freeNodes ||
      (a.cluster?.name ?? '').localeCompare(b.cluster?.name ?? '') ||
      a.instanceType.localeCompare(b.instanceType) ||
      a.gpuShape.localeCompare(b.gpuShape),
  );
}

/** A stable key for a pool row. */
export function estimateKey(row: Pick<WaitEstimate, 'cluster' | 'instanceType' | 'gpuShape'>): string {
  return `${row.cluster?.id ?? ''}|${row.instanceType}|${row.gpuShape}`;
}

/** The form after picking a pool: its shape, instance type and cluster. */
export function applyEstimate(form: GprForm, row: WaitEstimate): GprForm {
  return { ...form, gpuShape: row.gpuShape, instanceType: row.instanceType, clusterId: row.cluster?.id ?? '' };
}

/** Whether the form asks for exactly this pool. */
export function isChosen(form: GprForm, row: WaitEstimate): boolean {
  return (
    form.gpuShape === row.gpuShape && form.instanceType === row.instanceType && form.clusterId === (row.cluster?.id ?? '')
  );
}

/** Shapes to offer: the slice policy's allowed ones, or every shape of the pools when it allows any. */
export function shapeOptions(allowed: readonly string[] | null | undefined, pools: readonly { gpuShape: string }[] | null | undefined): string[] {
  const list = allowed && allowed.length > 0 ? allowed : (pools ?? []).map((p) => p.gpuShape);
  return [...new Set(list)].sort();
}

const int = (text: string): number | null => {
  const t = text.trim();
  if (!/^-?\d+$/.test(t)) return null;
  return Number(t);
};

function num(text: string): number | null {
  const t = text.trim();
  if (t === '') return 0;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

interface Workload {
  model?: string;
  kind?: WorkloadKind;
  rdma: boolean;
}

interface Common {
  workload?: Workload;
  sliceId: string;
  nodeCount: number;
  gpusPerNode?: number;
  priority: number;
  duration: string;
  preferredClusterIds: string[];
  gpuShape?: string;
  instanceType?: string;
}

function common(form: GprForm, errors: FormError[]): Common | null {
  if (!form.sliceId) errors.push({ field: ['input', 'sliceId'], message: 'Choose a slice.' });
  const nodeCount = int(form.nodes);
  if (nodeCount === null) errors.push({ field: ['input', 'nodeCount'], message: 'Nodes must be a whole number.' });
  let gpusPerNode: number | undefined;
  if (form.gpusPerNode.trim() !== '') {
    const g = int(form.gpusPerNode);
    if (g === null) errors.push({ field: ['input', 'gpusPerNode'], message: 'GPUs per node must be a whole number, or empty for every GPU of the node.' });
    else gpusPerNode = g;
  }
  const priority = int(form.priority);
  if (priority === null) errors.push({ field: ['input', 'priority'], message: 'Priority must be a whole number from 1 to 300.' });
  const h = num(form.hours);
  const m = num(form.minutes);
  const duration = h === null || m === null ? null : durationInput(h, m);
  if (duration === null) errors.push({ field: ['input', 'duration'], message: 'The duration must be longer than zero (hours and minutes).' });
  if (errors.length > 0 || nodeCount === null || priority === null || duration === null) return null;
  return {
    sliceId: form.sliceId,
    nodeCount,
    ...(gpusPerNode !== undefined ? { gpusPerNode } : {}),
    priority,
    duration,
    preferredClusterIds: form.clusterId ? [form.clusterId] : [],
    ...workload(form),
  };
}

/** The workload hints, when the form gives any (RDMA changes where a multi-node GPR can run). */
function workload(form: GprForm): { workload?: Workload } {
  const model = form.model.trim();
  if (!model && !form.kind && !form.rdma) return {};
  return { workload: { ...(model ? { model } : {}), ...(form.kind ? { kind: form.kind as WorkloadKind } : {}), rdma: form.rdma } };
}

/** `WaitTimeInput` for the form: every pool of the slice (shape and instance type left open). */
export function waitTimeInput(form: GprForm): { input: Common | null; errors: FormError[] } {
  const errors: FormError[] = [];
  const c = common(form, errors);
  if (!c) return { input: null, errors };
  // Every pool, so the user can compare them: the chosen cluster, shape and type only mark a row.
  return { input: { ...c, preferredClusterIds: [] }, errors };
}

export interface CreateInput extends Common {
  name: string;
  preemptible: boolean;
  idleTimeout?: string;
  templateId?: string;
}

/** `CreateGprInput` for the form, or the problems that keep it from being one. */
export function createInput(form: GprForm): { input: CreateInput | null; errors: FormError[] } {
  const errors: FormError[] = [];
  if (!form.name.trim()) errors.push({ field: ['input', 'name'], message: 'Give the GPR a name (a DNS label such as llama-finetune-3).' });
  let idleTimeout: string | undefined;
  if (form.idleHours.trim() !== '') {
    const n = num(form.idleHours);
    const d = n === null ? null : durationInput(n, 0);
    if (d === null) errors.push({ field: ['input', 'idleTimeout'], message: 'Idle timeout must be a positive number of hours, or empty for the slice default.' });
    else idleTimeout = d;
  }
  const c = common(form, errors);
  if (!c || errors.length > 0) return { input: null, errors };
  return {
    input: {
      ...c,
      name: form.name.trim(),
      preemptible: form.preemptible,
      ...(form.gpuShape ? { gpuShape: form.gpuShape } : {}),
      ...(form.instanceType ? { instanceType: form.instanceType } : {}),
      ...(idleTimeout ? { idleTimeout } : {}),
      // The profile it came from is recorded; every field is sent, so edits to the form win.
      ...(form.templateId ? { templateId: form.templateId } : {}),
    },
    errors,
  };
}

/** Which form field a `userErrors.field` path is about (`["input","nodeCount"]` → `nodeCount`). */
export function errorField(field: readonly string[] | null | undefined): string | null {
  if (!field || field.length === 0) return null;
  const rest = field[0] === 'input' ? field.slice(1) : field;
  return rest[0] ?? null;
}

/** Messages per field, and the ones about no field we show. */
export function splitErrors(
  errors: readonly { field?: readonly string[] | null; message: string }[],
  known: readonly string[],
): { byField: Record<string, string[]>; general: { field?: readonly string[] | null; message: string }[] } {
  const byField: Record<string, string[]> = {};
  const general: { field?: readonly string[] | null; message: string }[] = [];
  for (const e of errors) {
    const f = errorField(e.field);
    if (f && known.includes(f)) (byField[f] ??= []).push(e.message);
    else general.push(e);
  }
  return { byField, general };
}
