/* eslint-disable */
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = T | null | undefined;
export type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
export type MakeOptional<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]?: Maybe<T[SubKey]> };
export type MakeMaybe<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]: Maybe<T[SubKey]> };
export type MakeEmpty<T extends { [key: string]: unknown }, K extends keyof T> = { [_ in K]?: never };
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /**
   * Implement the DateTime<Utc> scalar
   *
   * The input/output is a string in RFC3339 format.
   */
  DateTime: { input: string; output: string; }
  /** A duration such as `2h30m` or ISO 8601 `PT2H30M`; results are always ISO 8601. */
  Duration: { input: string; output: string; }
};

export type AccessToken = Node & {
  __typename?: 'AccessToken';
  /** Agent tokens: the cluster the agent reports for. */
  cluster?: Maybe<Cluster>;
  createdAt: Scalars['DateTime']['output'];
  expiresAt: Scalars['DateTime']['output'];
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  /**
   * Agent tokens: the node the agent reports for; null for a cluster-scoped agent token,
   * which reports for any node of its cluster.
   */
  nodeName?: Maybe<Scalars['String']['output']>;
  revokedAt?: Maybe<Scalars['DateTime']['output']>;
  role: Role;
  /** The slices and roles the token is limited to; `null` when it carries the user's roles. */
  sliceScopes?: Maybe<Array<TokenScope>>;
  user?: Maybe<User>;
};

export type AccessTokenConnection = {
  __typename?: 'AccessTokenConnection';
  /** A list of edges. */
  edges: Array<AccessTokenEdge>;
  /** A list of nodes. */
  nodes: Array<AccessToken>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** How many items match the filters, across all pages. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type AccessTokenEdge = {
  __typename?: 'AccessTokenEdge';
  /** A cursor for use in pagination */
  cursor: Scalars['String']['output'];
  /** The item at the end of the edge */
  node: AccessToken;
};

export type AddSliceMemberInput = {
  role: SliceRole;
  sliceId: Scalars['ID']['input'];
  /** The user's exact name or e-mail address (instead of `userId`). */
  user?: InputMaybe<Scalars['String']['input']>;
  /** Admins may name anyone by id; owners only someone they already share a slice with. */
  userId?: InputMaybe<Scalars['ID']['input']>;
};

export type Alert = Node & {
  __typename?: 'Alert';
  clearedAt?: Maybe<Scalars['DateTime']['output']>;
  cluster?: Maybe<Cluster>;
  /** The GPR it is about, or that held the node when it was raised. */
  gpr?: Maybe<Gpr>;
  gpu?: Maybe<Gpu>;
  id: Scalars['ID']['output'];
  kind: AlertKind;
  /** What happened, in a sentence. */
  message: Scalars['String']['output'];
  node?: Maybe<GpuNode>;
  /** Not cleared yet. */
  open: Scalars['Boolean']['output'];
  raisedAt: Scalars['DateTime']['output'];
  /** Why it cleared; null while open. */
  resolution?: Maybe<Scalars['String']['output']>;
  severity: AlertSeverity;
  /** The slice whose GPR held the node (or is the GPR) when it was raised. */
  slice?: Maybe<Slice>;
  /**
   * What `value` was held against, in its unit: the threshold or limit, the ECC count before,
   * the stale threshold, the idle timeout.
   */
  threshold?: Maybe<Scalars['Float']['output']>;
  /**
   * What was measured when it was raised: °C (`OVER_TEMPERATURE`), W (`OVER_POWER`), the
   * most serious XID code (`XID_ERROR`), the uncorrected ECC count (`ECC_ERROR`), seconds
   * silent (`NODE_STALE`) or idle (`GPR_IDLE`).
   */
  value?: Maybe<Scalars['Float']['output']>;
};

export type AlertConnection = {
  __typename?: 'AlertConnection';
  /** A list of edges. */
  edges: Array<AlertEdge>;
  /** A list of nodes. */
  nodes: Array<Alert>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** How many items match the filters, across all pages. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type AlertEdge = {
  __typename?: 'AlertEdge';
  /** A cursor for use in pagination */
  cursor: Scalars['String']['output'];
  /** The item at the end of the edge */
  node: Alert;
};

/** What an alert is about. */
export type AlertKind =
  /** Uncorrectable ECC errors. */
  | 'ECC_ERROR'
  /** A provisioned GPR's GPUs sit idle. */
  | 'GPR_IDLE'
  /**
   * A provisioned GPR's GPUs averaged under the slice policy's utilisation floor for its
   * period: held, but under-used.
   */
  | 'GPR_UNDERUSED'
  /** The node's agent has gone silent. */
  | 'NODE_STALE'
  /** A GPU above its power threshold. */
  | 'OVER_POWER'
  /** A GPU above its temperature threshold. */
  | 'OVER_TEMPERATURE'
  /** The driver reported an XID error. */
  | 'XID_ERROR';

/** How urgent an alert is. */
export type AlertSeverity =
  | 'CRITICAL'
  | 'INFO'
  | 'WARNING';

/**
 * The alert thresholds of one GPU shape. A node that sets its own thresholds in
 * `upsertNodes` is held to those instead.
 */
export type AlertThreshold = {
  __typename?: 'AlertThreshold';
  gpuShape: Scalars['String']['output'];
  /** An open `OVER_POWER` clears below this, W (5 % of hysteresis). */
  powerClearsBelowWatts?: Maybe<Scalars['Float']['output']>;
  powerSource: ThresholdSource;
  /**
   * `OVER_POWER` is raised above this, W; null when the model has no built-in limit and
   * none is set (no power alerts).
   */
  powerWatts?: Maybe<Scalars['Float']['output']>;
  /** `OVER_TEMPERATURE` is raised above this, °C. */
  temperatureCelsius: Scalars['Float']['output'];
  /** An open `OVER_TEMPERATURE` clears below this, °C (5 °C of hysteresis). */
  temperatureClearsBelowCelsius: Scalars['Float']['output'];
  temperatureSource: ThresholdSource;
  /** When an admin last set them; null for built-in defaults. */
  updatedAt?: Maybe<Scalars['DateTime']['output']>;
};

/** Whether a GPR needed, and got, an admin's approval. */
export type ApprovalState =
  /** An admin approved it. */
  | 'APPROVED'
  /** Within policy: no approval needed. */
  | 'NOT_REQUIRED'
  /** Over policy: waiting for an admin. */
  | 'PENDING'
  /** An admin rejected it. */
  | 'REJECTED';

export type ApproveGprPayload = {
  __typename?: 'ApproveGprPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** An approval; fields given replace what was asked. */
export type ApproveWorkspaceRequestInput = {
  gpuHourQuota?: InputMaybe<Scalars['Int']['input']>;
  id: Scalars['ID']['input'];
  maxNodesPerGpr?: InputMaybe<Scalars['Int']['input']>;
  name?: InputMaybe<Scalars['String']['input']>;
  namespaces?: InputMaybe<Array<RequestedNamespaceInput>>;
  /** A note to the requester. */
  reason?: InputMaybe<Scalars['String']['input']>;
};

export type CancelGprPayload = {
  __typename?: 'CancelGprPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type CancelMaintenanceInput = {
  id: Scalars['ID']['input'];
};

/** The window as it was when cancelled (ahead), or as it ended (running). */
export type CancelMaintenancePayload = {
  __typename?: 'CancelMaintenancePayload';
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
  window?: Maybe<MaintenanceWindow>;
};

export type Cluster = Node & {
  __typename?: 'Cluster';
  cloud?: Maybe<Scalars['String']['output']>;
  createdAt: Scalars['DateTime']['output'];
  /** How EGS authenticates to the cluster (the kubeconfig itself is never returned). */
  credentials: CredentialSource;
  /**
   * Promises of GPRs planned to start within this are firm against arrivals below the high
   * band; `null`: none are.
   */
  firmHorizon?: Maybe<Scalars['Duration']['output']>;
  health: Health;
  id: Scalars['ID']['output'];
  /** When EGS last heard from the cluster. */
  lastContactAt?: Maybe<Scalars['DateTime']['output']>;
  name: Scalars['String']['output'];
  /** GPU nodes of this cluster. */
  nodes: GpuNodeConnection;
  /** How the slice's pods are steered onto its nodes (Kubernetes clusters). */
  podPlacement: PodPlacement;
  /** Node pools (instance type × GPU shape) of this cluster with their free and reserved counts. */
  pools: Array<Pool>;
  provider: ClusterProvider;
  region?: Maybe<Scalars['String']['output']>;
  registrationStatus: RegistrationStatus;
  /**
   * Admins: the path the cluster's API server calls the admission webhook on
   * (`podPlacement: WEBHOOK`), secret included: put it in the MutatingWebhookConfiguration.
   */
  webhookPath: Scalars['String']['output'];
};


export type ClusterNodesArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  filter?: InputMaybe<NodeFilter>;
  first?: InputMaybe<Scalars['Int']['input']>;
};

/** A cluster to ask for namespaces on. */
export type ClusterChoice = {
  __typename?: 'ClusterChoice';
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
};

/** How EGS reaches a cluster. */
export type ClusterProvider =
  /** A Kubernetes API server, through a kubeconfig or in-cluster credentials. */
  | 'KUBERNETES'
  /** An in-process simulation (demo, tests, benchmarks). */
  | 'SIMULATED';

export type CordonNodeInput = {
  id: Scalars['ID']['input'];
  /** Why (1–500 characters): shown on the node, and to the owner of a GPR it evicts. */
  reason: Scalars['String']['input'];
};

export type CordonNodePayload = {
  __typename?: 'CordonNodePayload';
  node?: Maybe<GpuNode>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type CreateGprInput = {
  /** The strict reserved window, e.g. `6h` or `PT6H`; required without a template. */
  duration?: InputMaybe<Scalars['Duration']['input']>;
  /** Reserve ahead: not before this time. */
  earliestStartAt?: InputMaybe<Scalars['DateTime']['input']>;
  /**
   * Omit to let the scheduler pick (a wait-time answer then covers every shape the slice
   * may use), or for the template's.
   */
  gpuShape?: InputMaybe<Scalars['String']['input']>;
  /** GPUs needed on each node; omit for every GPU of the node (or the template's). */
  gpusPerNode?: InputMaybe<Scalars['Int']['input']>;
  /**
   * Release after the GPUs stay idle this long; defaults to the template's, else the slice
   * policy's.
   */
  idleTimeout?: InputMaybe<Scalars['Duration']['input']>;
  /** Omit to let the scheduler pick, or for the template's. */
  instanceType?: InputMaybe<Scalars['String']['input']>;
  labels?: Array<LabelInput>;
  minGpuMemoryMib?: InputMaybe<Scalars['Int']['input']>;
  /** A DNS label, e.g. `llama-finetune-3`. */
  name: Scalars['String']['input'];
  /** Whole nodes, all from one pool; required without a template. */
  nodeCount?: InputMaybe<Scalars['Int']['input']>;
  preemptible?: Scalars['Boolean']['input'];
  /** Omit for any of the slice's clusters. */
  preferredClusterIds?: Array<Scalars['ID']['input']>;
  /** 1–300, higher runs first; omit for the template's, or 101. */
  priority?: InputMaybe<Scalars['Int']['input']>;
  /** Defaults to the slice policy. */
  requeueOnFailure?: InputMaybe<Scalars['Boolean']['input']>;
  sliceId: Scalars['ID']['input'];
  /**
   * A template (profile) published to the slice: what this input leaves out is taken from
   * it (`gprTemplates(sliceId:)` lists them).
   */
  templateId?: InputMaybe<Scalars['ID']['input']>;
  /** What the workload needs; `rdma` limits a multi-node GPR to pools that have it. */
  workload?: InputMaybe<WorkloadHintsInput>;
};

export type CreateGprPayload = {
  __typename?: 'CreateGprPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type CreateGprTemplateInput = {
  description?: InputMaybe<Scalars['String']['input']>;
  /** The reserved window, e.g. `6h` or `PT6H`. */
  duration: Scalars['Duration']['input'];
  /** Omit to let the scheduler pick. */
  gpuShape?: InputMaybe<Scalars['String']['input']>;
  /** Omit for every GPU of the node. */
  gpusPerNode?: InputMaybe<Scalars['Int']['input']>;
  /** Omit for the slice policy's default. */
  idleTimeout?: InputMaybe<Scalars['Duration']['input']>;
  /** Omit to let the scheduler pick. */
  instanceType?: InputMaybe<Scalars['String']['input']>;
  /** A DNS label, unique among templates. */
  name: Scalars['String']['input'];
  nodeCount: Scalars['Int']['input'];
  /** 1–300, higher runs first; default 101. */
  priority?: Scalars['Int']['input'];
};

export type CreateGprTemplatePayload = {
  __typename?: 'CreateGprTemplatePayload';
  template?: Maybe<GprTemplate>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type CreateNotificationChannelInput = {
  enabled?: Scalars['Boolean']['input'];
  /** For `ESTIMATE_MOVED`: only moves of at least this many minutes (1–10080; default 30). */
  estimateMovedMinutes?: InputMaybe<Scalars['Int']['input']>;
  kind: NotificationKind;
  /** Omit for provisioned, exit warning, released, preempted and failed. */
  milestones?: InputMaybe<Array<Milestone>>;
  /** 1–64 characters. */
  name: Scalars['String']['input'];
  /** A slice whose GPRs it hears of (its owners make these); omit for your own GPRs. */
  sliceId?: InputMaybe<Scalars['ID']['input']>;
  /** The webhook URL (https) or the e-mail address. */
  target: Scalars['String']['input'];
};

export type CreateSliceInput = {
  /** Clusters the slice may use; clusters of `namespaces` are added anyway. */
  clusterIds?: Array<Scalars['ID']['input']>;
  description?: InputMaybe<Scalars['String']['input']>;
  members?: Array<MemberInput>;
  /** A DNS label, unique among slices. */
  name: Scalars['String']['input'];
  namespaces?: Array<NamespaceInput>;
  /** Starts from the default policy (priorities 1–200, no limits, eviction allowed). */
  policy?: InputMaybe<SlicePolicyInput>;
};

export type CreateSlicePayload = {
  __typename?: 'CreateSlicePayload';
  slice?: Maybe<Slice>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type CreateSsoGroupRuleInput = {
  /** Instead: the group's members are admins. */
  grantsAdmin?: Scalars['Boolean']['input'];
  /** The group's name in the identity provider's groups claim. */
  group: Scalars['String']['input'];
  role?: InputMaybe<SliceRole>;
  /** With `role`: the slice the group's members join. */
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};

export type CreateTokenInput = {
  /** AGENT tokens: the cluster the agent reports for. */
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  /** What the token is for, e.g. `ci-pipeline`. */
  name: Scalars['String']['input'];
  /**
   * AGENT tokens: the one node the agent reports for. Leave it out for a cluster-scoped
   * token, which may register and report any node of `clusterId` (and nothing else): one
   * Kubernetes Secret for a whole DaemonSet.
   */
  nodeName?: InputMaybe<Scalars['String']['input']>;
  role: Role;
  /** Limit a USER token to these slices and at most these roles. */
  sliceScopes?: InputMaybe<Array<TokenScopeInput>>;
  /** Lifetime; 90 days when omitted, at most two years. */
  ttl?: InputMaybe<Scalars['Duration']['input']>;
  /** The user the token speaks for (ADMIN and USER tokens); defaults to the caller. */
  userId?: InputMaybe<Scalars['ID']['input']>;
};

/** A new token and its secret, which is shown only here. */
export type CreateTokenPayload = {
  __typename?: 'CreateTokenPayload';
  /**
   * What will end it sooner than its lifetime says, when something will: the token it was
   * made with (a single sign-on session above all, which lasts 12 h). An admin's AGENT
   * tokens are not tied to the token that made them.
   */
  notice?: Maybe<Scalars['String']['output']>;
  /** The bearer token text. Store it now: EGS keeps only its id. */
  secret?: Maybe<Scalars['String']['output']>;
  token?: Maybe<AccessToken>;
  userErrors: Array<UserError>;
};

export type CreateUserInput = {
  email?: InputMaybe<Scalars['String']['input']>;
  /** 1–64 lowercase letters, digits, `.`, `_`, `-`. */
  name: Scalars['String']['input'];
  /** `USER` (default) or `ADMIN`. */
  role?: Role;
};

export type CreateUserPayload = {
  __typename?: 'CreateUserPayload';
  user?: Maybe<User>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** How EGS authenticates to a cluster. */
export type CredentialSource =
  /** The service account of the pod EGS runs in. */
  | 'IN_CLUSTER'
  /** A kubeconfig given at registration, stored encrypted. */
  | 'KUBECONFIG'
  /** Simulated clusters need none. */
  | 'NONE';

export type DeleteGprTemplateInput = {
  id: Scalars['ID']['input'];
};

/** The deleted template, as it was. */
export type DeleteGprTemplatePayload = {
  __typename?: 'DeleteGprTemplatePayload';
  template?: Maybe<GprTemplate>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** The deleted channel, as it was. */
export type DeleteNotificationChannelPayload = {
  __typename?: 'DeleteNotificationChannelPayload';
  channel?: Maybe<NotificationChannel>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type DeleteSliceInput = {
  id: Scalars['ID']['input'];
};

/** The deleted slice, as it was. */
export type DeleteSlicePayload = {
  __typename?: 'DeleteSlicePayload';
  slice?: Maybe<Slice>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** Where a notification stands. */
export type DeliveryState =
  /** The receiver took it. */
  | 'DELIVERED'
  /** Given up: refused, or every attempt failed. */
  | 'FAILED'
  /** Waiting to be sent, or to be tried again. */
  | 'PENDING';

export type DrainNodeInput = {
  /**
   * Evict the GPR holding the node now (it is requeued at its priority) instead of letting
   * its window run out.
   */
  evict?: Scalars['Boolean']['input'];
  id: Scalars['ID']['input'];
  /** Why (1–500 characters): shown on the node, and to the owner of a GPR it evicts. */
  reason: Scalars['String']['input'];
};

export type DrainNodePayload = {
  __typename?: 'DrainNodePayload';
  node?: Maybe<GpuNode>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type EarlyReleaseGprPayload = {
  __typename?: 'EarlyReleaseGprPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** The stable codes in `extensions.code` and `userErrors.code`. */
export type ErrorCode =
  /** The object changed, already exists, or is in the wrong phase. */
  | 'CONFLICT'
  /** The token is valid but may not do this. */
  | 'FORBIDDEN'
  /** Our fault; logged on the server. */
  | 'INTERNAL'
  /** A value the caller can correct. */
  | 'INVALID_INPUT'
  /**
   * The user already holds as many of something (WebSocket connections, live
   * subscriptions, tokens) as allowed; close or revoke one first.
   */
  | 'LIMIT_EXCEEDED'
  /** No such object, or one the caller may not see. */
  | 'NOT_FOUND'
  /** Too many requests; retry later. */
  | 'RATE_LIMITED'
  /** A backing service (the database) cannot be reached; retry shortly. */
  | 'SERVICE_UNAVAILABLE'
  /** The operation could build more than a request may (lists multiplied out); ask for less. */
  | 'TOO_COMPLEX'
  /** No valid token was presented. */
  | 'UNAUTHENTICATED';

/** Events that can move a waiting GPR's estimates. */
export type EstimateMover =
  /** An admin changes priorities. */
  | 'ADMIN_REORDER'
  /** Running windows end early (only ever makes a start earlier). */
  | 'EARLY_RELEASE'
  /** A GPR of strictly higher priority arrives (or is approved or requeued) and needs the room. */
  | 'HIGHER_PRIORITY_ARRIVAL'
  /** A node of the planned pool fails or is cordoned. */
  | 'NODE_FAILURE'
  /** Running windows end later than predicted from history (never past their reserved end). */
  | 'RELEASE_LATER_THAN_PREDICTED';

export type EvictGprInput = {
  id: Scalars['ID']['input'];
  /** Why (1–500 characters): its owner reads it. */
  reason: Scalars['String']['input'];
  /** When given, refused if the GPR changed since this version. */
  version?: InputMaybe<Scalars['Int']['input']>;
};

export type EvictGprPayload = {
  __typename?: 'EvictGprPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type ExtendGprInput = {
  /** How much longer the window should be, e.g. `30m` or `PT2H` (whole minutes count). */
  by: Scalars['Duration']['input'];
  id: Scalars['ID']['input'];
  /** When given, refused if the GPR changed since this version. */
  version?: InputMaybe<Scalars['Int']['input']>;
};

export type ExtendGprPayload = {
  __typename?: 'ExtendGprPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type Gpr = Node & {
  __typename?: 'Gpr';
  approval: ApprovalState;
  /** Why approval is (or was) needed. */
  approvalReason?: Maybe<Scalars['String']['output']>;
  assignedCluster?: Maybe<Cluster>;
  assignedGpuShape?: Maybe<Scalars['String']['output']>;
  assignedInstanceType?: Maybe<Scalars['String']['output']>;
  completedAt?: Maybe<Scalars['DateTime']['output']>;
  createdAt: Scalars['DateTime']['output'];
  /** The strict reserved window. */
  duration: Scalars['Duration']['output'];
  /** An advance reservation: not before this time. */
  earliestStartAt?: Maybe<Scalars['DateTime']['output']>;
  /** Expected start: the middle of `startRange`. */
  estimatedStartAt?: Maybe<Scalars['DateTime']['output']>;
  /**
   * What could move `estimatedStartAt`, either way: it also predicts when running windows
   * end from what the slice and shape used before, so it moves when they end sooner or
   * later than predicted.
   */
  estimatedStartMovesOn?: Maybe<Array<EstimateMover>>;
  /** Time from now until the expected start. */
  estimatedWait?: Maybe<Scalars['Duration']['output']>;
  /** What happened to this GPR, oldest first. */
  events: GprEventConnection;
  /** When the window ends and the nodes go back. */
  exitAt?: Maybe<Scalars['DateTime']['output']>;
  /** How much `extendGpr` has added to the window in all. */
  extendedBy: Scalars['Duration']['output'];
  /** An extension waiting for an admin's decision (over the slice's extension grace). */
  extensionRequested?: Maybe<Scalars['Duration']['output']>;
  /**
   * Priority points fair share gave it when it was first ranked (its slice had used less GPU
   * time lately than the other slices with work here): it is ranked at `priority` plus these,
   * never past its band's top, and they never make it preempt anyone.
   */
  fairSharePoints: Scalars['Int']['output'];
  /** `null`: the scheduler picks. */
  gpuShape?: Maybe<Scalars['String']['output']>;
  /**
   * Utilisation, temperature and power over the latest samples of the GPUs on the nodes it
   * holds now (what `gpuSummary(gprId:)` gives); null while it holds none.
   */
  gpuSummary?: Maybe<GpuSummary>;
  /** GPUs wanted on each node; `null` means every GPU of the node. */
  gpusPerNode?: Maybe<Scalars['Int']['output']>;
  id: Scalars['ID']['output'];
  /** Released when all its GPUs stay idle this long; `null`: never. */
  idleTimeout?: Maybe<Scalars['Duration']['output']>;
  /** `null`: the scheduler picks. */
  instanceType?: Maybe<Scalars['String']['output']>;
  /** `<cluster>/<namespace>/<name>` of the `GPUProvisioningRequest` resource it came from. */
  kubernetesResource?: Maybe<Scalars['String']['output']>;
  labels: Array<Label>;
  minGpuMemoryMib?: Maybe<Scalars['Int']['output']>;
  name: Scalars['String']['output'];
  nodeCount: Scalars['Int']['output'];
  /** Nodes handed to the slice for this GPR. */
  nodes: Array<GpuNode>;
  phase: GprPhase;
  /** The GPR that preempted this one, when the caller may see it. */
  preemptedBy?: Maybe<Gpr>;
  preemptible: Scalars['Boolean']['output'];
  /** Empty: any of the slice's clusters. */
  preferredClusters: Array<Cluster>;
  /** 1–300; higher runs first. */
  priority: Scalars['Int']['output'];
  priorityBand: PriorityBand;
  provisionedAt?: Maybe<Scalars['DateTime']['output']>;
  /**
   * The steps of handing its nodes to the slice and of taking them back, as they went
   * (the pre-provisioning checklist); a new round of provisioning starts a new list.
   */
  provisioningSteps: Array<ProvisioningStep>;
  /** 1-based position in its queue while pending. */
  queuePosition?: Maybe<Scalars['Int']['output']>;
  /** Why it is in its phase, when there is more to say. */
  reason?: Maybe<Scalars['String']['output']>;
  releaseReason?: Maybe<ReleaseReason>;
  /** Who asked for it. */
  requester?: Maybe<User>;
  requeueOnFailure: Scalars['Boolean']['output'];
  slice?: Maybe<Slice>;
  /** Planned start: an upper bound unless higher-priority work arrives or a node fails. */
  startNoLaterThan?: Maybe<Scalars['DateTime']['output']>;
  /**
   * What could make `startNoLaterThan` later while the GPR waits. Nothing else can: a
   * later arrival of equal or lower priority, a fair-share change or a re-plan never does,
   * and early releases only make it earlier.
   */
  startNoLaterThanMovesLaterOn?: Maybe<Array<EstimateMover>>;
  /**
   * When it is likely to start, while it waits: before `p10` one time in ten, before `p90`
   * nine times in ten. Calibrated on how this gateway's past estimates turned out, so it
   * carries what a single estimate cannot (windows ending early, higher-priority arrivals).
   */
  startRange?: Maybe<StartRange>;
  /** The template (profile) it was created from, while it exists and the caller may see it. */
  template?: Maybe<GprTemplate>;
  updatedAt: Scalars['DateTime']['output'];
  /** Bumped by every change; pass it back to `updateGpr` to avoid overwriting someone else's edit. */
  version: Scalars['Int']['output'];
  /** What its workload needs, as its requester described it. */
  workload?: Maybe<WorkloadHints>;
};


export type GprEventsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};

export type GprActionInput = {
  id: Scalars['ID']['input'];
  /** When given, the action is refused if the GPR changed since this version. */
  version?: InputMaybe<Scalars['Int']['input']>;
};

export type GprConnection = {
  __typename?: 'GprConnection';
  /** A list of edges. */
  edges: Array<GprEdge>;
  /** A list of nodes. */
  nodes: Array<Gpr>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** How many items match the filters, across all pages. */
  totalCount: Scalars['Int']['output'];
};

export type GprDecisionInput = {
  id: Scalars['ID']['input'];
  /** Recorded in the GPR's events. */
  reason?: InputMaybe<Scalars['String']['input']>;
  version?: InputMaybe<Scalars['Int']['input']>;
};

/** An edge in a connection. */
export type GprEdge = {
  __typename?: 'GprEdge';
  /** A cursor for use in pagination */
  cursor: Scalars['String']['output'];
  /** The item at the end of the edge */
  node: Gpr;
};

export type GprEvent = Node & {
  __typename?: 'GprEvent';
  /** Who caused it: a user name, or `system`. */
  actor: Scalars['String']['output'];
  createdAt: Scalars['DateTime']['output'];
  gpr?: Maybe<Gpr>;
  id: Scalars['ID']['output'];
  kind: GprEventKind;
  message: Scalars['String']['output'];
  /** Monotonic across all events: resume a stream after the last one you saw. */
  sequence: Scalars['Int']['output'];
  slice?: Maybe<Slice>;
};

export type GprEventConnection = {
  __typename?: 'GprEventConnection';
  /** A list of edges. */
  edges: Array<GprEventEdge>;
  /** A list of nodes. */
  nodes: Array<GprEvent>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** How many items match the filters, across all pages. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type GprEventEdge = {
  __typename?: 'GprEventEdge';
  /** A cursor for use in pagination */
  cursor: Scalars['String']['output'];
  /** The item at the end of the edge */
  node: GprEvent;
};

/** What happened to a GPR. */
export type GprEventKind =
  | 'APPROVAL_REQUIRED'
  | 'APPROVED'
  | 'CANCELLED'
  | 'COMPLETED'
  | 'CREATED'
  /** A node failed inside the window and none was free to replace it. */
  | 'DEGRADED'
  | 'EARLY_RELEASED'
  | 'EDITED'
  | 'ESTIMATE_CHANGED'
  /** An admin evicted it (or drained its node): released, then queued again. */
  | 'EVICTED'
  | 'EXIT_WARNING'
  /** The window was made longer (`extendGpr`, or an admin approved an extension). */
  | 'EXTENDED'
  /** An admin refused a requested extension; the window stays as it was. */
  | 'EXTENSION_REJECTED'
  /** An extension over the slice's grace waits for an admin's decision. */
  | 'EXTENSION_REQUESTED'
  | 'FAILED'
  | 'IDLE_RELEASED'
  | 'NODE_REPLACED'
  | 'PRECHECK_FAILED'
  | 'PRECHECK_PASSED'
  | 'PREEMPTED'
  | 'PRIORITY_CHANGED'
  | 'PROGRESS_25'
  | 'PROGRESS_50'
  | 'PROGRESS_75'
  | 'PROVISIONED'
  | 'PROVISIONING_STARTED'
  | 'QUEUED'
  | 'REJECTED'
  | 'RELEASING'
  | 'REQUEUED';

export type GprExtensionRoom = {
  __typename?: 'GprExtensionRoom';
  /** Why not more: the promise in the way, or why it cannot be extended at all. */
  limitedBy?: Maybe<Scalars['String']['output']>;
  /** The most `extendGpr` accepts now (searched up to a week, in whole minutes). */
  maxNow: Scalars['Duration']['output'];
  /** Of that, how much applies at once; the rest waits for an admin's approval. */
  withoutApproval: Scalars['Duration']['output'];
};

export type GprFilter = {
  /**
   * Only GPRs an admin must decide on: `PENDING_APPROVAL` ones and provisioned ones with an
   * extension requested.
   */
  awaitingDecision?: Scalars['Boolean']['input'];
  /** Any of these phases. */
  phases?: InputMaybe<Array<GprPhase>>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};

/** Where a GPU Provision Request is in its life. */
export type GprPhase =
  /** Withdrawn by its requester or an admin before it was provisioned. */
  | 'CANCELLED'
  /** The window ended and the nodes went back. */
  | 'COMPLETED'
  /** Provisioning failed and the GPR is not requeued. */
  | 'FAILED'
  /** Outside the slice policy; waits for an admin to approve or reject it. */
  | 'PENDING_APPROVAL'
  /** Nodes belong to the slice until the window ends. */
  | 'PROVISIONED'
  /** Nodes are being handed to the slice. */
  | 'PROVISIONING'
  /** Waiting in the queue for nodes. */
  | 'QUEUED'
  /** Refused by an admin. */
  | 'REJECTED'
  /** Nodes are being taken back. */
  | 'RELEASING';

export type GprTemplate = {
  __typename?: 'GprTemplate';
  /** Published to every slice. */
  allSlices: Scalars['Boolean']['output'];
  createdAt: Scalars['DateTime']['output'];
  description?: Maybe<Scalars['String']['output']>;
  /** The reserved window of GPRs made from it. */
  duration: Scalars['Duration']['output'];
  /** `null`: the scheduler picks. */
  gpuShape?: Maybe<Scalars['String']['output']>;
  /** GPUs wanted on each node; `null` means every GPU of the node. */
  gpusPerNode?: Maybe<Scalars['Int']['output']>;
  id: Scalars['ID']['output'];
  /** `null`: the slice policy's default. */
  idleTimeout?: Maybe<Scalars['Duration']['output']>;
  /** `null`: the scheduler picks. */
  instanceType?: Maybe<Scalars['String']['output']>;
  name: Scalars['String']['output'];
  /** Whole nodes, all from one pool. */
  nodeCount: Scalars['Int']['output'];
  /** 1–300; higher runs first. */
  priority: Scalars['Int']['output'];
  /** The slices it is published to by name, of those the caller may see. */
  publishedTo: Array<Slice>;
  updatedAt: Scalars['DateTime']['output'];
};

export type Gpu = Node & {
  __typename?: 'Gpu';
  id: Scalars['ID']['output'];
  /** Index on its node, as NVML numbers it. */
  index: Scalars['Int']['output'];
  /**
   * The newest sample its agent reported; null when none, or when you may not read it
   * (admins read all; users read GPUs of nodes their slices' GPRs hold, from the node's
   * assignment on).
   */
  latestSample?: Maybe<GpuSample>;
  memoryMib: Scalars['Int']['output'];
  /**
   * History between `from` and `to` (default: the last 10 minutes) in steps of `step`:
   * 1 s resolution for the last 10 minutes, 1 min (steps of whole minutes) for 24 hours.
   * Steps without samples are left out; users see samples from their GPR's assignment of
   * the node on. `NOT_FOUND` when you may not read this GPU's metrics.
   */
  metrics: Array<GpuMetricPoint>;
  migEnabled: Scalars['Boolean']['output'];
  model: Scalars['String']['output'];
  node?: Maybe<GpuNode>;
  /**
   * The pods whose processes use it, each with every GPU of the node it uses; empty when
   * none, or when you may not read this GPU's metrics.
   */
  pods: Array<GpuPod>;
  /**
   * The processes running on it, with their pods, as its agent last reported them; empty
   * when none, or when you may not read this GPU's metrics.
   */
  processes: Array<GpuProcess>;
  uuid: Scalars['String']['output'];
};


export type GpuMetricsArgs = {
  from?: InputMaybe<Scalars['DateTime']['input']>;
  step?: InputMaybe<Scalars['Duration']['input']>;
  to?: InputMaybe<Scalars['DateTime']['input']>;
};

export type GpuConnection = {
  __typename?: 'GpuConnection';
  /** A list of edges. */
  edges: Array<GpuEdge>;
  /** A list of nodes. */
  nodes: Array<Gpu>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** How many items match the filters, across all pages. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type GpuEdge = {
  __typename?: 'GpuEdge';
  /** A cursor for use in pagination */
  cursor: Scalars['String']['output'];
  /** The item at the end of the edge */
  node: Gpu;
};

export type GpuFilter = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  model?: InputMaybe<Scalars['String']['input']>;
  nodeId?: InputMaybe<Scalars['ID']['input']>;
};

/** A GPU of a node as its agent (or an admin) reports it. */
export type GpuInput = {
  index: Scalars['Int']['input'];
  memoryMib: Scalars['Int']['input'];
  migEnabled?: Scalars['Boolean']['input'];
  model: Scalars['String']['input'];
  uuid: Scalars['String']['input'];
};

/** One step of a GPU's history: the averages of its samples, and their maxima in `max`. */
export type GpuMetricPoint = {
  __typename?: 'GpuMetricPoint';
  max: GpuMetricValues;
  memUsedMib: Scalars['Float']['output'];
  memUtil: Scalars['Float']['output'];
  power: Scalars['Float']['output'];
  /** Samples behind this point. */
  samples: Scalars['Int']['output'];
  temperature: Scalars['Float']['output'];
  /** Start of the step. */
  time: Scalars['DateTime']['output'];
  util: Scalars['Float']['output'];
};

/** The five charted values. */
export type GpuMetricValues = {
  __typename?: 'GpuMetricValues';
  memUsedMib: Scalars['Float']['output'];
  /** %. */
  memUtil: Scalars['Float']['output'];
  /** W. */
  power: Scalars['Float']['output'];
  /** °C. */
  temperature: Scalars['Float']['output'];
  /** %. */
  util: Scalars['Float']['output'];
};

/**
 * An update of a `gpuMetrics` subscription: the newest sample of each GPU that reported since
 * the last update.
 */
export type GpuMetricsUpdate = {
  __typename?: 'GpuMetricsUpdate';
  samples: Array<GpuSample>;
};

export type GpuNode = Node & {
  __typename?: 'GpuNode';
  /** The GPR holding this node, when the caller may see it. */
  allocatedGpr?: Maybe<Gpr>;
  cluster?: Maybe<Cluster>;
  /** Why, as the admin said. */
  cordonReason?: Maybe<Scalars['String']['output']>;
  /** Since when an admin has kept it out of scheduling (`cordonNode`, `drainNode`). */
  cordonedAt?: Maybe<Scalars['DateTime']['output']>;
  cordonedBy?: Maybe<Scalars['String']['output']>;
  /** The CUDA version the node's driver supports (`major.minor`), as its agent reports it. */
  cudaVersion?: Maybe<Scalars['String']['output']>;
  driverVersion?: Maybe<Scalars['String']['output']>;
  /** Memory of each GPU, in MiB. */
  gpuMemoryMib: Scalars['Int']['output'];
  /** The GPU product name, e.g. `NVIDIA-H100-80GB-HBM3`. */
  gpuShape: Scalars['String']['output'];
  /**
   * Utilisation, temperature and power over its GPUs' latest samples; null when you may
   * not read this node's metrics.
   */
  gpuSummary?: Maybe<GpuSummary>;
  gpus: Array<Gpu>;
  gpusPerNode: Scalars['Int']['output'];
  /** As reported, or `STALE` when the node's agent has been silent for 30 s. */
  health: Health;
  id: Scalars['ID']['output'];
  instanceType: Scalars['String']['output'];
  /** When the node's agent last reported. */
  lastHeartbeatAt?: Maybe<Scalars['DateTime']['output']>;
  /**
   * Maintenance windows planned on it that are not over, soonest first
   * (`planMaintenance`).
   */
  maintenanceWindows: Array<MaintenanceWindow>;
  name: Scalars['String']['output'];
  /**
   * The pods whose processes use its GPUs, with the GPUs each uses, as its agent last
   * reported them; empty when you may not read this node's metrics (users: from their
   * GPR's assignment of the node on).
   */
  pods: Array<GpuPod>;
  powerThresholdWatts?: Maybe<Scalars['Float']['output']>;
  /** An RDMA network (InfiniBand or RoCE) to its pool's other nodes. */
  rdma: Scalars['Boolean']['output'];
  /** `CORDONED`: out of scheduling; `DRAINING`: cordoned while a GPR still holds it. */
  state: NodeState;
  temperatureThresholdCelsius?: Maybe<Scalars['Float']['output']>;
  /**
   * Average utilisation (%) over the latest samples of its GPUs; null when none reported
   * or when you may not read this node's metrics (held by another slice's GPR).
   */
  utilization?: Maybe<Scalars['Float']['output']>;
  /** The cluster zone (`topology.kubernetes.io/zone`) of a discovered node. */
  zone?: Maybe<Scalars['String']['output']>;
};

export type GpuNodeConnection = {
  __typename?: 'GpuNodeConnection';
  /** A list of edges. */
  edges: Array<GpuNodeEdge>;
  /** A list of nodes. */
  nodes: Array<GpuNode>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** How many items match the filters, across all pages. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type GpuNodeEdge = {
  __typename?: 'GpuNodeEdge';
  /** A cursor for use in pagination */
  cursor: Scalars['String']['output'];
  /** The item at the end of the edge */
  node: GpuNode;
};

/** How to order the `gpus` list. */
export type GpuOrder =
  /** Highest utilisation first. */
  | 'BUSIEST_FIRST'
  /** Highest power draw first. */
  | 'HIGHEST_POWER_FIRST'
  /** Hottest first (then highest power). GPUs without a sample you may read come last. */
  | 'HOT_SPOTS_FIRST'
  /** Oldest first (the default; stable cursors). */
  | 'ID'
  /** Lowest utilisation first: GPUs held but not used. */
  | 'IDLEST_FIRST';

/** A pod using GPUs of one node, with the GPUs it uses. */
export type GpuPod = {
  __typename?: 'GpuPod';
  /** Containers whose processes use the GPUs. */
  containers: Array<Scalars['String']['output']>;
  /** The GPUs its processes use, with their latest samples (`Gpu.latestSample`). */
  gpus: Array<Gpu>;
  name?: Maybe<Scalars['String']['output']>;
  /** Null when the node's agent could not list its pods. */
  namespace?: Maybe<Scalars['String']['output']>;
  node?: Maybe<GpuNode>;
  /** Its processes on those GPUs. */
  processes: Array<GpuProcess>;
  /** When the node's agent last reported it. */
  reportedAt: Scalars['DateTime']['output'];
  uid: Scalars['String']['output'];
  /** GPU memory its processes hold, MiB. */
  usedMemoryMib: Scalars['Float']['output'];
};

export type GpuProcess = {
  __typename?: 'GpuProcess';
  /** In the host's PID namespace. */
  pid: Scalars['Int']['output'];
  /** Null for a process outside any pod. */
  pod?: Maybe<PodRef>;
  /** When the agent reported it. */
  reportedAt: Scalars['DateTime']['output'];
  /** GPU memory it holds, MiB; null when the driver does not say. */
  usedMemoryMib?: Maybe<Scalars['Float']['output']>;
};

export type GpuProcessInput = {
  /** In the host's PID namespace. */
  pid: Scalars['Int']['input'];
  /** Null for a process outside any pod. */
  pod?: InputMaybe<PodInput>;
  /** GPU memory it holds, MiB (at most the GPU's memory). */
  usedMemoryMib?: InputMaybe<Scalars['Float']['input']>;
};

/** One sample of one GPU. Times are whole seconds. */
export type GpuSample = {
  __typename?: 'GpuSample';
  /** Corrected (single-bit) ECC errors, as the driver counts them. */
  eccCorrected?: Maybe<Scalars['Int']['output']>;
  /** Uncorrected (double-bit) ECC errors, as the driver counts them. */
  eccUncorrected?: Maybe<Scalars['Int']['output']>;
  gpuId: Scalars['ID']['output'];
  /** Framebuffer memory in use, MiB. */
  memUsedMib: Scalars['Float']['output'];
  /** Memory-controller utilisation, %. */
  memUtil: Scalars['Float']['output'];
  nodeId: Scalars['ID']['output'];
  /** W. */
  power: Scalars['Float']['output'];
  /** MHz. */
  smClockMhz: Scalars['Float']['output'];
  /** °C. */
  temperature: Scalars['Float']['output'];
  time: Scalars['DateTime']['output'];
  /** GPU utilisation, %. */
  util: Scalars['Float']['output'];
  uuid: Scalars['String']['output'];
  /** XID error codes reported with this sample. */
  xidErrors: Array<Scalars['Int']['output']>;
};

/** One sample of one GPU, as an agent reports it. */
export type GpuSampleInput = {
  /** Corrected (single-bit) ECC errors, as the driver counts them. */
  eccCorrected?: InputMaybe<Scalars['Int']['input']>;
  /** Uncorrected (double-bit) ECC errors, as the driver counts them. */
  eccUncorrected?: InputMaybe<Scalars['Int']['input']>;
  /** Framebuffer memory in use, MiB (at most the GPU's memory). */
  memUsedMib: Scalars['Float']['input'];
  /** Memory-controller utilisation, 0–100 %. */
  memUtil: Scalars['Float']['input'];
  /** 0–5000 W. */
  power: Scalars['Float']['input'];
  /** 0–10000 MHz. */
  smClockMhz: Scalars['Float']['input'];
  /** −50–150 °C. */
  temperature: Scalars['Float']['input'];
  /** When the sample was taken (whole seconds count; at most 60 s ahead, at most 24 h old). */
  timestamp: Scalars['DateTime']['input'];
  /** GPU utilisation, 0–100 %. */
  util: Scalars['Float']['input'];
  /** The GPU's UUID (`nvidia-smi -L`); must be a GPU of the reported node. */
  uuid: Scalars['String']['input'];
  /** XID error codes the driver reported since the last sample. */
  xidErrors?: Array<Scalars['Int']['input']>;
};

/** Aggregates over the latest samples of a node's, GPR's or slice's GPUs (for dashboards). */
export type GpuSummary = {
  __typename?: 'GpuSummary';
  averageMemoryUtilization?: Maybe<Scalars['Float']['output']>;
  averageTemperature?: Maybe<Scalars['Float']['output']>;
  /** %; null when no GPU reported. */
  averageUtilization?: Maybe<Scalars['Float']['output']>;
  gpuCount: Scalars['Int']['output'];
  highestPowerGpu?: Maybe<Gpu>;
  hottestGpu?: Maybe<Gpu>;
  /** Reporting GPUs under 1 % utilisation. */
  idleGpuCount: Scalars['Int']['output'];
  memoryUsedMib?: Maybe<Scalars['Float']['output']>;
  /** The newest of the latest samples. */
  newestSampleAt?: Maybe<Scalars['DateTime']['output']>;
  /** The oldest of the latest samples: how current this summary is. */
  oldestSampleAt?: Maybe<Scalars['DateTime']['output']>;
  /** Sum over the GPUs, W. */
  powerWatts?: Maybe<Scalars['Float']['output']>;
  /** GPUs that have reported a sample. */
  reportingGpuCount: Scalars['Int']['output'];
};

export type GpuWorkloadInput = {
  /** Everything running on it now (at most 256); empty when idle. */
  processes: Array<GpuProcessInput>;
  /** The GPU's UUID; must be a GPU of the reported node. */
  uuid: Scalars['String']['input'];
};

/** Health of a cluster or node. */
export type Health =
  /** Reporting and within limits. */
  | 'HEALTHY'
  /** Its agent has been silent past the threshold. */
  | 'STALE'
  /** Reporting a fault. */
  | 'UNHEALTHY'
  /** Never reported. */
  | 'UNKNOWN';

export type InventoryChange = {
  __typename?: 'InventoryChange';
  /** When the change was seen. */
  at: Scalars['DateTime']['output'];
  cluster?: Maybe<Cluster>;
  clusterId: Scalars['ID']['output'];
  /** Health after the change, as `GpuNode.health` reads it. */
  health: Health;
  kind: InventoryChangeKind;
  /** The node after the change; null when it was removed. */
  node?: Maybe<GpuNode>;
  nodeId: Scalars['ID']['output'];
  nodeName: Scalars['String']['output'];
  /** Health before the change; null for a new node. */
  previousHealth?: Maybe<Health>;
  state: NodeState;
};

/** What happened to a node. */
export type InventoryChangeKind =
  /** Handed to a GPR (or to another one). */
  | 'ALLOCATED'
  /**
   * Its health as readers see it changed: reported `HEALTHY`/`UNHEALTHY`, or `STALE` when
   * its agent fell silent, and back when it reports again.
   */
  | 'HEALTH_CHANGED'
  /** Registered (`upsertNodes`). */
  | 'NODE_ADDED'
  /** Removed (`removeNode`, or its cluster was removed). */
  | 'NODE_REMOVED'
  /** Its description changed (instance type, shape, GPUs, memory, driver, thresholds). */
  | 'NODE_UPDATED'
  /** Given back to the pool. */
  | 'RELEASED'
  /** Its state changed otherwise (e.g. cordoned, draining). */
  | 'STATE_CHANGED';

/** A `key = value` label. */
export type Label = {
  __typename?: 'Label';
  key: Scalars['String']['output'];
  value: Scalars['String']['output'];
};

/** A `key = value` label. */
export type LabelInput = {
  key: Scalars['String']['input'];
  value: Scalars['String']['input'];
};

export type MaintenanceWindow = {
  __typename?: 'MaintenanceWindow';
  createdAt: Scalars['DateTime']['output'];
  createdBy: Scalars['String']['output'];
  endsAt: Scalars['DateTime']['output'];
  finishedAt?: Maybe<Scalars['DateTime']['output']>;
  id: Scalars['ID']['output'];
  node?: Maybe<GpuNode>;
  reason: Scalars['String']['output'];
  /** When the node was cordoned for it. */
  startedAt?: Maybe<Scalars['DateTime']['output']>;
  startsAt: Scalars['DateTime']['output'];
  state: MaintenanceWindowState;
};

/** Where a window stands at `now`. */
export type MaintenanceWindowState =
  /** Running: the node is cordoned for it. */
  | 'ACTIVE'
  /** Over: the node was given back (or the window was cancelled while it ran). */
  | 'FINISHED'
  /** Ahead: the scheduler plans around it. */
  | 'PLANNED';

export type MemberInput = {
  role: SliceRole;
  userId: Scalars['ID']['input'];
};

export type Membership = {
  __typename?: 'Membership';
  role: SliceRole;
  slice?: Maybe<Slice>;
};

/** A moment in a GPR's life a notification channel can be told of. */
export type Milestone =
  /** It or an extension waits for an admin, or an admin decided. */
  | 'APPROVAL'
  /** Its promised or expected start moved by more than the channel's threshold. */
  | 'ESTIMATE_MOVED'
  /** Its window ends soon. */
  | 'EXIT_WARNING'
  /** Provisioning failed. */
  | 'FAILED'
  /** A higher-priority GPR took its nodes. */
  | 'PREEMPTED'
  /** A quarter of its window has passed. */
  | 'PROGRESS_25'
  /** Half of its window has passed. */
  | 'PROGRESS_50'
  /** Three quarters of its window have passed. */
  | 'PROGRESS_75'
  /** Its nodes are the slice's. */
  | 'PROVISIONED'
  /** It joined the queue. */
  | 'QUEUED'
  /** Its nodes went back (the window ended, it was released early or went idle). */
  | 'RELEASED';

export type Mutation = {
  __typename?: 'Mutation';
  /**
   * Adds a member or changes their role (admins and slice owners). Name the user by `user`
   * (exact name or e-mail) or, when you already share a slice with them, by `userId`.
   */
  addSliceMember: SliceMemberPayload;
  /** Gives a namespace on a cluster to the slice (admin). */
  addSliceNamespace: SliceNamespacePayload;
  /**
   * Approves a GPR held for being over policy (admin); it joins the queue. On a provisioned
   * GPR, approves its requested extension (refused if a promise made since is in the way).
   */
  approveGpr: ApproveGprPayload;
  /**
   * Approves a request (admins), with edits where given: creates the slice with the requester
   * as its owner.
   */
  approveWorkspaceRequest: WorkspaceRequestPayload;
  /** Withdraws a pending GPR (slice editors). */
  cancelGpr: CancelGprPayload;
  /**
   * Cancels a window (admins): one ahead is removed; one running ends now and the node is
   * back (unless an admin cordoned it otherwise meanwhile).
   */
  cancelMaintenance: CancelMaintenancePayload;
  /**
   * Keeps a node out of scheduling (admins): no new GPR gets it; a GPR holding it keeps it
   * until its window ends, then the node reads `CORDONED`.
   */
  cordonNode: CordonNodePayload;
  /**
   * Asks for GPU nodes for a slice (slice editors). Lands `QUEUED`, or `PENDING_APPROVAL`
   * when over the slice policy. With `templateId`, starts from a template published to the
   * slice: what the input leaves out is the template's.
   */
  createGpr: CreateGprPayload;
  /** Creates a GPR template (admin). */
  createGprTemplate: CreateGprTemplatePayload;
  /**
   * Makes a notification channel: yours (milestones of the GPRs you ask for), or a slice's
   * (all its GPRs; slice owners). A JSON webhook's signing key is in the payload, once.
   */
  createNotificationChannel: NotificationChannelPayload;
  /** Creates a slice with namespaces, members and a policy (admin). */
  createSlice: CreateSlicePayload;
  /** Adds a group rule (admins); it applies at each member's next sign-in. */
  createSsoGroupRule: SsoGroupRulePayload;
  /** Issues a token. Admins issue any; users issue USER tokens for themselves within their roles. */
  createToken: CreateTokenPayload;
  /** Creates a user (admin). Give them slice roles with `addSliceMember` and a token with `createToken`. */
  createUser: CreateUserPayload;
  /** Deletes a GPR template (admin); refused while a slice's auto-GPR uses it. */
  deleteGprTemplate: DeleteGprTemplatePayload;
  /** Deletes a channel; what it had not sent yet goes with it. */
  deleteNotificationChannel: DeleteNotificationChannelPayload;
  /** Deletes a slice and its history (admin); refused while it has unfinished GPRs. */
  deleteSlice: DeleteSlicePayload;
  /** Deletes a group rule (admins); what it granted goes at each member's next sign-in. */
  deleteSsoGroupRule: SsoGroupRulePayload;
  /**
   * Cordons a node and empties it (admins): with `evict`, the GPR holding it is evicted now
   * and requeued at its priority; without, it runs out its window (the node reads
   * `DRAINING` until then).
   */
  drainNode: DrainNodePayload;
  /** Gives a provisioned GPR's nodes back before its window ends (slice editors). */
  earlyReleaseGpr: EarlyReleaseGprPayload;
  /**
   * Takes a provisioned GPR's nodes back and puts it in the queue again at its priority
   * (admins); its owner sees `reason` on the GPR and in its events (`EVICTED`, `REQUEUED`).
   */
  evictGpr: EvictGprPayload;
  /**
   * Makes a provisioned GPR's window longer (slice editors). Within the slice's extension
   * grace it applies at once (`EXTENDED`); beyond it, it waits for an admin's decision
   * (`extensionRequested`, decided with `approveGpr` / `rejectGpr`). Refused, changing
   * nothing, when a waiting GPR's promised start would move later; `gprExtensionRoom` says
   * how much fits now.
   */
  extendGpr: ExtendGprPayload;
  /**
   * Plans a node out of service from `startsAt` to `endsAt` (admins). The scheduler plans
   * around it at once: no GPR is placed on the node across it, and a waiting GPR whose
   * promise it moves is told why. When it begins the node is cordoned (a GPR still on it is
   * evicted and requeued); when it ends the node is back.
   */
  planMaintenance: PlanMaintenancePayload;
  /**
   * Sets the slices a template is published to (admin): their members see it in
   * `gprTemplates` and create GPRs from it.
   */
  publishGprTemplate: PublishGprTemplatePayload;
  /** Rolls usage up now instead of at the next minute (admins). */
  refreshUsage: RefreshUsagePayload;
  /** Registers a cluster (admin). */
  registerCluster: RegisterClusterPayload;
  /**
   * Rejects a GPR held for being over policy (admin); on a provisioned GPR, its requested
   * extension (the window stays).
   */
  rejectGpr: RejectGprPayload;
  /** Refuses a request (admins), saying why. */
  rejectWorkspaceRequest: WorkspaceRequestPayload;
  /** Removes a cluster with its nodes and slice namespaces (admin); refused while GPRs hold nodes there. */
  removeCluster: RemoveClusterPayload;
  /**
   * Removes a GPU node and its GPUs from the inventory (admins). Refused with `CONFLICT`
   * while a GPR holds the node: release it first, or report it `UNHEALTHY` to have it
   * replaced.
   */
  removeNode: RemoveNodePayload;
  /** Removes a member (admins and slice owners). */
  removeSliceMember: SliceMemberPayload;
  /** Takes a namespace away from the slice (admin). */
  removeSliceNamespace: SliceNamespacePayload;
  /**
   * Stores a batch of GPU samples of one node (its agent, or an admin): all or nothing.
   * Samples already stored (same GPU and second) are counted as duplicates, so resending
   * after a reconnect is safe. An agent's report is also its node's heartbeat.
   */
  reportGpuSamples: ReportGpuSamplesPayload;
  /**
   * Replaces the processes (and their pods) on one node's GPUs (its agent, or an admin):
   * all or nothing. Agents send it when the mapping changes and at least every minute.
   */
  reportGpuWorkloads: ReportGpuWorkloadsPayload;
  /** Asks the admins for a workspace (at most 3 waiting per user). */
  requestWorkspace: WorkspaceRequestPayload;
  /** Revokes a token at once (admins any, users their own). */
  revokeToken: RevokeTokenPayload;
  /**
   * Sets the temperature threshold and power limit of a GPU shape (admins); null restores
   * a built-in default. Values out of range are refused and nothing changes. Open alerts
   * clear, and new ones are raised, against the new values from the next sample on.
   */
  setAlertThreshold: SetAlertThresholdPayload;
  /** Changes a GPR's priority (admin). */
  setGprPriority: SetGprPriorityPayload;
  /** Sets the private-workspace policy (admins); it applies to users made from now on. */
  setPersonalWorkspacePolicy: PersonalWorkspacePolicyPayload;
  /**
   * Sets the template auto-GPR uses for the slice's Pending GPU pods and turns it on or off
   * (admin).
   */
  setSliceAutoGpr: SetSliceAutoGprPayload;
  /** Changes the slice policy (admin): omitted fields keep their value, `null` removes a limit. */
  setSlicePolicy: SetSlicePolicyPayload;
  /**
   * Signs a node agent in with its pod's ServiceAccount token, which the cluster reviews:
   * needs no EGS token, and gives one that speaks for the pod's node only. Cut an agent off
   * in the cluster (its ServiceAccount or pod); revoking the EGS token lasts until it signs
   * in again.
   */
  signInAgent: SignInAgentPayload;
  /**
   * Issues a kubeconfig for a slice's namespaces on a Kubernetes cluster (admins and the
   * slice's owners), revoking the one issued before.
   */
  sliceKubeconfig: SliceKubeconfigPayload;
  /**
   * Sends a test message through a channel now and says whether it arrived (recorded on the
   * channel like any delivery).
   */
  testNotificationChannel: TestNotificationChannelPayload;
  /** Puts a cordoned or drained node back in the pool (admins). */
  uncordonNode: UncordonNodePayload;
  /** Renames a cluster or changes its cloud and region (admin). */
  updateCluster: UpdateClusterPayload;
  /** Edits a pending GPR (slice editors), given the version you read. */
  updateGpr: UpdateGprPayload;
  /** Changes a GPR template (admin); GPRs already made from it keep what they asked for. */
  updateGprTemplate: UpdateGprTemplatePayload;
  updateNotificationChannel: NotificationChannelPayload;
  /** Renames a slice, changes its description or the clusters it may use (admin). */
  updateSlice: UpdateSlicePayload;
  /**
   * Creates or updates GPU nodes of a cluster and their GPUs, all or nothing (admins, or an
   * agent for its own node; a cluster-scoped agent token for any node of its cluster). Fields
   * left out keep their values on existing nodes.
   */
  upsertNodes: UpsertNodesPayload;
  /** Takes back a waiting request (its requester). */
  withdrawWorkspaceRequest: WorkspaceRequestPayload;
};


export type MutationAddSliceMemberArgs = {
  input: AddSliceMemberInput;
};


export type MutationAddSliceNamespaceArgs = {
  input: SliceNamespaceInput;
};


export type MutationApproveGprArgs = {
  input: GprDecisionInput;
};


export type MutationApproveWorkspaceRequestArgs = {
  input: ApproveWorkspaceRequestInput;
};


export type MutationCancelGprArgs = {
  input: GprActionInput;
};


export type MutationCancelMaintenanceArgs = {
  input: CancelMaintenanceInput;
};


export type MutationCordonNodeArgs = {
  input: CordonNodeInput;
};


export type MutationCreateGprArgs = {
  input: CreateGprInput;
};


export type MutationCreateGprTemplateArgs = {
  input: CreateGprTemplateInput;
};


export type MutationCreateNotificationChannelArgs = {
  input: CreateNotificationChannelInput;
};


export type MutationCreateSliceArgs = {
  input: CreateSliceInput;
};


export type MutationCreateSsoGroupRuleArgs = {
  input: CreateSsoGroupRuleInput;
};


export type MutationCreateTokenArgs = {
  input: CreateTokenInput;
};


export type MutationCreateUserArgs = {
  input: CreateUserInput;
};


export type MutationDeleteGprTemplateArgs = {
  input: DeleteGprTemplateInput;
};


export type MutationDeleteNotificationChannelArgs = {
  input: NotificationChannelRef;
};


export type MutationDeleteSliceArgs = {
  input: DeleteSliceInput;
};


export type MutationDeleteSsoGroupRuleArgs = {
  input: SsoGroupRuleRef;
};


export type MutationDrainNodeArgs = {
  input: DrainNodeInput;
};


export type MutationEarlyReleaseGprArgs = {
  input: GprActionInput;
};


export type MutationEvictGprArgs = {
  input: EvictGprInput;
};


export type MutationExtendGprArgs = {
  input: ExtendGprInput;
};


export type MutationPlanMaintenanceArgs = {
  input: PlanMaintenanceInput;
};


export type MutationPublishGprTemplateArgs = {
  input: PublishGprTemplateInput;
};


export type MutationRegisterClusterArgs = {
  input: RegisterClusterInput;
};


export type MutationRejectGprArgs = {
  input: GprDecisionInput;
};


export type MutationRejectWorkspaceRequestArgs = {
  input: RejectWorkspaceRequestInput;
};


export type MutationRemoveClusterArgs = {
  input: RemoveClusterInput;
};


export type MutationRemoveNodeArgs = {
  input: RemoveNodeInput;
};


export type MutationRemoveSliceMemberArgs = {
  input: RemoveSliceMemberInput;
};


export type MutationRemoveSliceNamespaceArgs = {
  input: SliceNamespaceInput;
};


export type MutationReportGpuSamplesArgs = {
  input: ReportGpuSamplesInput;
};


export type MutationReportGpuWorkloadsArgs = {
  input: ReportGpuWorkloadsInput;
};


export type MutationRequestWorkspaceArgs = {
  input: RequestWorkspaceInput;
};


export type MutationRevokeTokenArgs = {
  input: RevokeTokenInput;
};


export type MutationSetAlertThresholdArgs = {
  input: SetAlertThresholdInput;
};


export type MutationSetGprPriorityArgs = {
  input: SetGprPriorityInput;
};


export type MutationSetPersonalWorkspacePolicyArgs = {
  input: SetPersonalWorkspacePolicyInput;
};


export type MutationSetSliceAutoGprArgs = {
  input: SetSliceAutoGprInput;
};


export type MutationSetSlicePolicyArgs = {
  input: SetSlicePolicyInput;
};


export type MutationSignInAgentArgs = {
  input: SignInAgentInput;
};


export type MutationSliceKubeconfigArgs = {
  input: SliceKubeconfigInput;
};


export type MutationTestNotificationChannelArgs = {
  input: NotificationChannelRef;
};


export type MutationUncordonNodeArgs = {
  input: UncordonNodeInput;
};


export type MutationUpdateClusterArgs = {
  input: UpdateClusterInput;
};


export type MutationUpdateGprArgs = {
  input: UpdateGprInput;
};


export type MutationUpdateGprTemplateArgs = {
  input: UpdateGprTemplateInput;
};


export type MutationUpdateNotificationChannelArgs = {
  input: UpdateNotificationChannelInput;
};


export type MutationUpdateSliceArgs = {
  input: UpdateSliceInput;
};


export type MutationUpsertNodesArgs = {
  input: UpsertNodesInput;
};


export type MutationWithdrawWorkspaceRequestArgs = {
  input: WorkspaceRequestRef;
};

export type NamedContainer = {
  __typename?: 'NamedContainer';
  /** Without the runtime's scheme, as in the process's cgroup. */
  id: Scalars['String']['output'];
  name: Scalars['String']['output'];
};

/** A pod on the reporting node, as its cluster names it. */
export type NamedPod = {
  __typename?: 'NamedPod';
  containers: Array<NamedContainer>;
  name: Scalars['String']['output'];
  namespace: Scalars['String']['output'];
  uid: Scalars['String']['output'];
};

export type NamespaceInput = {
  clusterId: Scalars['ID']['input'];
  /** A Kubernetes namespace name (DNS label). */
  name: Scalars['String']['input'];
};

/** An object with a global id. */
export type Node = {
  id: Scalars['ID']['output'];
};

export type NodeFilter = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  gpuShape?: InputMaybe<Scalars['String']['input']>;
  health?: InputMaybe<Health>;
  instanceType?: InputMaybe<Scalars['String']['input']>;
  state?: InputMaybe<NodeState>;
};

/**
 * A node to create or update. On an existing node, a field left out keeps its value (an
 * agent re-registering after a restart leaves an admin's thresholds alone), and an explicit
 * `null` clears a nullable one.
 */
export type NodeInput = {
  /** The CUDA version the driver supports, `major.minor`. Left out: unchanged; `null`: cleared. */
  cudaVersion?: InputMaybe<Scalars['String']['input']>;
  /** Left out: unchanged; `null`: cleared. */
  driverVersion?: InputMaybe<Scalars['String']['input']>;
  gpuMemoryMib: Scalars['Int']['input'];
  gpuShape: Scalars['String']['input'];
  /** When given, the node's GPUs become exactly these. */
  gpus?: InputMaybe<Array<GpuInput>>;
  gpusPerNode: Scalars['Int']['input'];
  /**
   * `HEALTHY` or `UNHEALTHY` as the reporter sees it (an agent after an XID or ECC fault,
   * an admin taking a failed node out). Absent: unchanged. A provisioned GPR on a node that
   * turns unhealthy gets a replacement from its pool, or runs degraded if none is free.
   */
  health?: InputMaybe<Health>;
  /** E.g. `p5.48xlarge`. Required for a new node; left out: unchanged. */
  instanceType?: InputMaybe<Scalars['String']['input']>;
  name: Scalars['String']['input'];
  /**
   * The node's own power alert threshold, W (instead of its shape's). Left out: unchanged
   * (none for a new node); `null`: cleared.
   */
  powerThresholdWatts?: InputMaybe<Scalars['Float']['input']>;
  /**
   * Whether the node has an RDMA network (InfiniBand or RoCE) to its pool's other nodes.
   * Left out: unchanged (none for a new node).
   */
  rdma?: InputMaybe<Scalars['Boolean']['input']>;
  /**
   * The node's own temperature alert threshold, °C (instead of its shape's). Left out:
   * unchanged (none for a new node); `null`: cleared.
   */
  temperatureThresholdCelsius?: InputMaybe<Scalars['Float']['input']>;
};

/** Whether a node can be handed to a slice. */
export type NodeState =
  /** Free for the scheduler. */
  | 'AVAILABLE'
  /** Taken out of scheduling by an admin. */
  | 'CORDONED'
  /** Being returned to the pool. */
  | 'DRAINING'
  /** Held by a provisioned GPR. */
  | 'RESERVED';

export type NotificationChannel = {
  __typename?: 'NotificationChannel';
  createdAt: Scalars['DateTime']['output'];
  /** Its newest deliveries (at most 100), kept a week. */
  deliveries: Array<NotificationDelivery>;
  enabled: Scalars['Boolean']['output'];
  /** For `ESTIMATE_MOVED`: moves of at least this many minutes (30 when `null`). */
  estimateMovedMinutes?: Maybe<Scalars['Int']['output']>;
  /** Whether its last delivery was given up. */
  failing: Scalars['Boolean']['output'];
  /** Deliveries given up since the last one that arrived. */
  failuresInARow: Scalars['Int']['output'];
  id: Scalars['ID']['output'];
  kind: NotificationKind;
  lastDeliveredAt?: Maybe<Scalars['DateTime']['output']>;
  /** Why the last delivery that was given up failed. */
  lastError?: Maybe<Scalars['String']['output']>;
  lastFailedAt?: Maybe<Scalars['DateTime']['output']>;
  milestones: Array<Milestone>;
  name: Scalars['String']['output'];
  /** Whether its bodies carry `X-EGS-Signature` (JSON webhooks). */
  signed: Scalars['Boolean']['output'];
  /** The slice whose GPRs it hears of; `null` for a user's own channel (their GPRs). */
  slice?: Maybe<Slice>;
  /**
   * Where it sends: the address of an e-mail channel; the scheme and host of a URL (its
   * path may be a secret, so it is never shown again).
   */
  target: Scalars['String']['output'];
};


export type NotificationChannelDeliveriesArgs = {
  first?: Scalars['Int']['input'];
};

/** A channel made or changed. */
export type NotificationChannelPayload = {
  __typename?: 'NotificationChannelPayload';
  channel?: Maybe<NotificationChannel>;
  /**
   * The key a JSON webhook's bodies are signed with (`X-EGS-Signature`): only here, when the
   * channel is made or the key rotated. EGS shows it no other time.
   */
  signingSecret?: Maybe<Scalars['String']['output']>;
  userErrors: Array<UserError>;
};

export type NotificationChannelRef = {
  id: Scalars['ID']['input'];
};

export type NotificationDelivery = {
  __typename?: 'NotificationDelivery';
  attempts: Scalars['Int']['output'];
  createdAt: Scalars['DateTime']['output'];
  deliveredAt?: Maybe<Scalars['DateTime']['output']>;
  /** The GPR it was about, when the caller may still see it. */
  gpr?: Maybe<Gpr>;
  id: Scalars['ID']['output'];
  lastError?: Maybe<Scalars['String']['output']>;
  milestone: Scalars['String']['output'];
  /** When it is tried next, while pending. */
  nextAttemptAt?: Maybe<Scalars['DateTime']['output']>;
  state: DeliveryState;
};

/** Where a notification channel sends. */
export type NotificationKind =
  /** An e-mail address, through the gateway's SMTP server (`EGS_SMTP_URL`). */
  | 'EMAIL'
  /** A Slack incoming webhook (`https://hooks.slack.com/services/…`). */
  | 'SLACK'
  /** Any HTTPS endpoint: a JSON body signed with the channel's key (`X-EGS-Signature`). */
  | 'WEBHOOK';

/** What this gateway can send. */
export type NotificationOptions = {
  __typename?: 'NotificationOptions';
  /** What a channel made without choosing hears of. */
  defaultMilestones: Array<Milestone>;
  /** Whether e-mail channels can be made (the operator set an SMTP server). */
  email: Scalars['Boolean']['output'];
  /** Whether URLs must be public https ones (the operator did not allow private targets). */
  publicTargetsOnly: Scalars['Boolean']['output'];
};

/** Information about pagination in a connection */
export type PageInfo = {
  __typename?: 'PageInfo';
  /** When paginating forwards, the cursor to continue. */
  endCursor?: Maybe<Scalars['String']['output']>;
  /** When paginating forwards, are there more items? */
  hasNextPage: Scalars['Boolean']['output'];
  /** When paginating backwards, are there more items? */
  hasPreviousPage: Scalars['Boolean']['output'];
  /** When paginating backwards, the cursor to continue. */
  startCursor?: Maybe<Scalars['String']['output']>;
};

/** The policy as admins read it. */
export type PersonalWorkspacePolicy = {
  __typename?: 'PersonalWorkspacePolicy';
  clusterId: Scalars['ID']['output'];
  clusterName?: Maybe<Scalars['String']['output']>;
  enabled: Scalars['Boolean']['output'];
  gpuHourQuota?: Maybe<Scalars['Int']['output']>;
  maxNodesPerGpr?: Maybe<Scalars['Int']['output']>;
};

export type PersonalWorkspacePolicyPayload = {
  __typename?: 'PersonalWorkspacePolicyPayload';
  policy?: Maybe<PersonalWorkspacePolicy>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type PlanMaintenanceInput = {
  /** Until when (at most 30 days after the start). */
  endsAt: Scalars['DateTime']['input'];
  nodeId: Scalars['ID']['input'];
  /** Why (1–500 characters): owners of the GPRs it moves read it. */
  reason: Scalars['String']['input'];
  /** From when the node is out (a start up to 5 minutes past is taken as now). */
  startsAt: Scalars['DateTime']['input'];
};

export type PlanMaintenancePayload = {
  __typename?: 'PlanMaintenancePayload';
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
  window?: Maybe<MaintenanceWindow>;
};

export type PodInput = {
  container?: InputMaybe<Scalars['String']['input']>;
  /**
   * The process's container id (from its cgroup, without the runtime's scheme): how the
   * gateway names the container on a Kubernetes cluster.
   */
  containerId?: InputMaybe<Scalars['String']['input']>;
  name?: InputMaybe<Scalars['String']['input']>;
  /**
   * The pod's namespace, name and container, for a simulated cluster only: on a Kubernetes
   * cluster the gateway names the pod from the cluster's own list of the node's pods, and
   * these are ignored.
   */
  namespace?: InputMaybe<Scalars['String']['input']>;
  /** The pod's UID (from the process's cgroup). */
  uid: Scalars['String']['input'];
};

/**
 * How a Kubernetes cluster keeps other pods off a slice's nodes and steers the slice's
 * pods onto them.
 */
export type PodPlacement =
  /**
   * Namespace annotations read by the `PodNodeSelector` and
   * `PodTolerationRestriction` admission plugins (enabled on the API server).
   */
  | 'ADMISSION_PLUGINS'
  /**
   * EGS's own mutating admission webhook (`/kubernetes/mutate`), for clusters without
   * those plugins. The namespace annotations are written too.
   */
  | 'WEBHOOK';

/**
 * The Kubernetes pod (and container) a GPU process belongs to. Only the UID is known when the
 * cluster lists no such pod on the node (or could not be asked when the agent reported).
 */
export type PodRef = {
  __typename?: 'PodRef';
  container?: Maybe<Scalars['String']['output']>;
  name?: Maybe<Scalars['String']['output']>;
  namespace?: Maybe<Scalars['String']['output']>;
  uid: Scalars['String']['output'];
};

/** Nodes of one cluster with the same instance type and GPU shape: the unit the scheduler plans on. */
export type Pool = {
  __typename?: 'Pool';
  cluster?: Maybe<Cluster>;
  /** Healthy, available and not held by a GPR. */
  freeNodes: Scalars['Int']['output'];
  /** Memory per GPU in MiB (the smallest in the pool). */
  gpuMemoryMib: Scalars['Int']['output'];
  gpuShape: Scalars['String']['output'];
  /** GPUs per node (the smallest in the pool). */
  gpusPerNode: Scalars['Int']['output'];
  instanceType: Scalars['String']['output'];
  /** Every node has an RDMA network: multi-node GPRs that need one are planned here. */
  rdma: Scalars['Boolean']['output'];
  /** Held by GPRs. */
  reservedNodes: Scalars['Int']['output'];
  totalNodes: Scalars['Int']['output'];
  /** Draining, cordoned, unhealthy or stale. */
  unavailableNodes: Scalars['Int']['output'];
};

/** One pool's answer to "Get wait time". */
export type PoolWaitEstimate = {
  __typename?: 'PoolWaitEstimate';
  cluster?: Maybe<Cluster>;
  /** Expected start: the middle of `startRange`. */
  estimatedStartAt: Scalars['DateTime']['output'];
  estimatedWait: Scalars['Duration']['output'];
  /** Healthy nodes of the pool not reserved right now. */
  freeNodes: Scalars['Int']['output'];
  gpuShape: Scalars['String']['output'];
  healthyNodes: Scalars['Int']['output'];
  instanceType: Scalars['String']['output'];
  /** Guaranteed start unless higher-priority work arrives or a node fails. */
  startNoLaterThan: Scalars['DateTime']['output'];
  /**
   * When it would likely start: before `p10` one time in ten, before `p90` nine in ten
   * (calibrated on how past estimates turned out).
   */
  startRange: StartRange;
  /**
   * What it waits behind, in words: the slice's own GPR that holds nodes (a slice runs one
   * GPR at a time), or the pool's reservations. Null when it would start now.
   */
  waitsFor?: Maybe<Scalars['String']['output']>;
  /**
   * Running GPRs of lower priority it would preempt to start now, where their slices allow
   * eviction (0: it does not preempt; then it waits as the estimates say).
   */
  wouldPreempt: Scalars['Int']['output'];
};

/** Priority bands: low 1–100, medium 101–200, high 201–300. */
export type PriorityBand =
  | 'HIGH'
  | 'LOW'
  | 'MEDIUM';

export type ProvisioningStep = {
  __typename?: 'ProvisioningStep';
  /** How many times it was started (retries and resumptions by a new leader). */
  attempts: Scalars['Int']['output'];
  finishedAt?: Maybe<Scalars['DateTime']['output']>;
  /** What it did, or why it failed. */
  message: Scalars['String']['output'];
  operation: StepOperation;
  startedAt: Scalars['DateTime']['output'];
  status: StepStatus;
  /**
   * `PRECHECK`, `LABEL_AND_TAINT`, `POD_PLACEMENT`, `EVENTS`; at release `CORDON`, `EVICT`,
   * `UNLABEL`, `POD_PLACEMENT_REMOVED`, `POSTCHECK` (simulated clusters: `HAND_OVER`,
   * `TAKE_BACK`).
   */
  step: Scalars['String']['output'];
};

export type PublishGprTemplateInput = {
  /** Every slice, present and future. */
  allSlices?: Scalars['Boolean']['input'];
  id: Scalars['ID']['input'];
  /** The slices whose members may start GPRs from it (replaces the list it had). */
  sliceIds?: Array<Scalars['ID']['input']>;
};

export type PublishGprTemplatePayload = {
  __typename?: 'PublishGprTemplatePayload';
  template?: Maybe<GprTemplate>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type Query = {
  __typename?: 'Query';
  /** The alert thresholds of every GPU shape in the inventory or configured (admins). */
  alertThresholds: Array<AlertThreshold>;
  /**
   * Alerts you may read, newest first: of one slice or cluster, of one kind, open or
   * cleared. Users read the alerts of their slices' GPRs and of the nodes those held;
   * alerts about nodes no slice held are for admins.
   */
  alerts: AlertConnection;
  cluster: Cluster;
  /** Every registered cluster. */
  clusters: Array<Cluster>;
  gpr: Gpr;
  /**
   * GPR events the caller may see, oldest first ("Events can be searched", seed 001): narrow
   * by GPR, slice, kinds, time (`since` ≤ createdAt < `until`) and text (in the message or
   * the actor, ignoring case; looked for in the newest 20,000 events the other filters leave:
   * narrow by time to search older ones). Pages forward (`first`, `after`) or back (`last`, `before`;
   * `last` alone gives the newest).
   */
  gprEvents: GprEventConnection;
  /**
   * How much longer a provisioned GPR's window may be made now (`extendGpr`) without a
   * waiting GPR's promised start moving later, how much of that needs no approval, and why
   * not more. Changes nothing. A planning question: it costs 1,000 of the query budget,
   * and a request may ask at most 4.
   */
  gprExtensionRoom: GprExtensionRoom;
  gprTemplate: GprTemplate;
  /**
   * The GPR templates (profiles) the caller may see, by name: every one for admins, those
   * published to the caller's slices for others. With `sliceId`, those the slice's GPRs may
   * start from.
   */
  gprTemplates: Array<GprTemplate>;
  /** GPRs in the caller's slices (all for admins), newest first. */
  gprs: GprConnection;
  /**
   * Utilisation, temperature and power over the latest samples of a node's, a GPR's or a
   * slice's GPUs (give exactly one). A GPR or slice covers the nodes it holds now.
   */
  gpuSummary: GpuSummary;
  /**
   * GPUs across nodes, filtered; `orderBy: HOT_SPOTS_FIRST` (or another metrics order) for
   * dashboards, ranked by the latest samples you may read.
   */
  gpus: GpuConnection;
  /**
   * Maintenance windows, soonest first: those not over, or with `includeFinished` the
   * finished ones too (latest 500). Anyone signed in may read them: they say when nodes are
   * out.
   */
  maintenanceWindows: Array<MaintenanceWindow>;
  /** Any object by its global id. */
  node: Node;
  /** GPU nodes across clusters, filtered. */
  nodes: GpuNodeConnection;
  notificationChannel: NotificationChannel;
  /**
   * The channels the caller manages: their own and those of the slices they own; with
   * `sliceId`, that slice's (its owners).
   */
  notificationChannels: Array<NotificationChannel>;
  notificationOptions: NotificationOptions;
  /** Whether every new user gets a private workspace, where and how big (admins; null until set). */
  personalWorkspacePolicy?: Maybe<PersonalWorkspacePolicy>;
  /** Pools (cluster × instance type × GPU shape) with total, free, reserved and unavailable nodes. */
  pools: Array<Pool>;
  /** The queue in order (admins): every waiting GPR, or those of one slice or one pool. */
  queue: Array<Gpr>;
  /** One slice, by id or by name. */
  slice: Slice;
  /** Slices the caller is a member of (all slices for admins), by name. */
  slices: SliceConnection;
  /** The single sign-on group rules (admins). */
  ssoGroupRules: Array<SsoGroupRule>;
  /** Tokens: all for admins, your own for users. Newest first. */
  tokens: AccessTokenConnection;
  /**
   * Usage over the days `from` to `to` (YYYY-MM-DD, UTC, both included, at most 366):
   * across slices for admins, or of one slice (`sliceId`) for its owners.
   */
  usage: UsageReport;
  /** All users (admin). */
  users: Array<User>;
  /** Who the token speaks for. */
  viewer: Viewer;
  /**
   * "Get wait time": when a GPR like this would start in every pool the slice may use, if
   * submitted now, soonest first. Changes nothing. A planning question: it costs
   * 1,000 of the query budget, and a request may ask at most 4.
   */
  waitTimeEstimates: Array<PoolWaitEstimate>;
  /**
   * What would move if the changes were made (admins): every waiting GPR whose promise or
   * expected start would change, soonest first, with both. Answered on a copy of the
   * scheduler; nothing changes. A planning question: it costs 1,000 of the query budget.
   */
  whatIf: Array<WhatIfMove>;
  /**
   * The pods in a slice's namespaces that use GPUs its GPRs hold, each with its GPUs (and
   * their latest samples) and processes, as the nodes' agents last reported them since each
   * node was handed to the slice. `NOT_FOUND` for a slice you may not see.
   */
  workloads: Array<GpuPod>;
  /**
   * The clusters a workspace may be asked on (ids and names only: a user who belongs to no
   * slice yet sees no cluster elsewhere).
   */
  workspaceClusters: Array<ClusterChoice>;
  /** Workspace requests, newest first: every one for admins, your own for others. */
  workspaceRequests: Array<WorkspaceRequest>;
};


export type QueryAlertsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  kind?: InputMaybe<AlertKind>;
  open?: InputMaybe<Scalars['Boolean']['input']>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};


export type QueryClusterArgs = {
  id: Scalars['ID']['input'];
};


export type QueryGprArgs = {
  id: Scalars['ID']['input'];
};


export type QueryGprEventsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
  gprId?: InputMaybe<Scalars['ID']['input']>;
  kinds?: InputMaybe<Array<GprEventKind>>;
  last?: InputMaybe<Scalars['Int']['input']>;
  since?: InputMaybe<Scalars['DateTime']['input']>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
  text?: InputMaybe<Scalars['String']['input']>;
  until?: InputMaybe<Scalars['DateTime']['input']>;
};


export type QueryGprExtensionRoomArgs = {
  id: Scalars['ID']['input'];
};


export type QueryGprTemplateArgs = {
  id: Scalars['ID']['input'];
};


export type QueryGprTemplatesArgs = {
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};


export type QueryGprsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  filter?: InputMaybe<GprFilter>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryGpuSummaryArgs = {
  gprId?: InputMaybe<Scalars['ID']['input']>;
  nodeId?: InputMaybe<Scalars['ID']['input']>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};


export type QueryGpusArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  filter?: InputMaybe<GpuFilter>;
  first?: InputMaybe<Scalars['Int']['input']>;
  orderBy?: GpuOrder;
};


export type QueryMaintenanceWindowsArgs = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  includeFinished?: Scalars['Boolean']['input'];
  nodeId?: InputMaybe<Scalars['ID']['input']>;
};


export type QueryNodeArgs = {
  id: Scalars['ID']['input'];
};


export type QueryNodesArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  filter?: InputMaybe<NodeFilter>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryNotificationChannelArgs = {
  id: Scalars['ID']['input'];
};


export type QueryNotificationChannelsArgs = {
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};


export type QueryPoolsArgs = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  gpuShape?: InputMaybe<Scalars['String']['input']>;
};


export type QueryQueueArgs = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  first?: Scalars['Int']['input'];
  gpuShape?: InputMaybe<Scalars['String']['input']>;
  instanceType?: InputMaybe<Scalars['String']['input']>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};


export type QuerySliceArgs = {
  id?: InputMaybe<Scalars['ID']['input']>;
  name?: InputMaybe<Scalars['String']['input']>;
};


export type QuerySlicesArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryTokensArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  first?: InputMaybe<Scalars['Int']['input']>;
};


export type QueryUsageArgs = {
  from: Scalars['String']['input'];
  sliceId?: InputMaybe<Scalars['ID']['input']>;
  to: Scalars['String']['input'];
};


export type QueryWaitTimeEstimatesArgs = {
  input: WaitTimeInput;
};


export type QueryWhatIfArgs = {
  input: WhatIfInput;
};


export type QueryWorkloadsArgs = {
  sliceId: Scalars['ID']['input'];
};


export type QueryWorkspaceRequestsArgs = {
  state?: InputMaybe<WorkspaceRequestState>;
};

/** The result of `refreshUsage`. */
export type RefreshUsagePayload = {
  __typename?: 'RefreshUsagePayload';
  refreshedAt?: Maybe<Scalars['DateTime']['output']>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type RegisterClusterInput = {
  cloud?: InputMaybe<Scalars['String']['input']>;
  /** KUBERNETES: use the service account of the pod EGS runs in instead of a kubeconfig. */
  inCluster?: Scalars['Boolean']['input'];
  /**
   * KUBERNETES: a self-contained kubeconfig (inline token or client certificate; no `exec`
   * plugins or file paths). Stored encrypted and never returned.
   */
  kubeconfig?: InputMaybe<Scalars['String']['input']>;
  /** A DNS label, unique among clusters. */
  name: Scalars['String']['input'];
  /**
   * KUBERNETES: how the slice's pods are steered onto its nodes (default: the admission
   * plugins' namespace annotations).
   */
  podPlacement?: InputMaybe<PodPlacement>;
  provider: ClusterProvider;
  region?: InputMaybe<Scalars['String']['input']>;
};

export type RegisterClusterPayload = {
  __typename?: 'RegisterClusterPayload';
  cluster?: Maybe<Cluster>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** Where a cluster is in its registration. */
export type RegistrationStatus =
  /** Contact failed; see the cluster's health. */
  | 'FAILED'
  /** Registered, not yet contacted. */
  | 'PENDING'
  /** Contacted and in use. */
  | 'REGISTERED';

export type RejectGprPayload = {
  __typename?: 'RejectGprPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type RejectWorkspaceRequestInput = {
  id: Scalars['ID']['input'];
  /** Why (1–500 characters): the requester reads it. */
  reason: Scalars['String']['input'];
};

/** Why a GPR's nodes were taken back. */
export type ReleaseReason =
  /** An admin released it. */
  | 'ADMIN'
  /** The requester released the nodes early. */
  | 'EARLY_RELEASED'
  /** An admin evicted it (or drained its node): it goes back to the queue at its priority. */
  | 'EVICTED'
  /** The reserved window ended. */
  | 'EXPIRED'
  /** All GPUs stayed idle for the idle timeout. */
  | 'IDLE_TIMEOUT'
  /** A node failed and could not be replaced. */
  | 'NODE_FAILURE'
  /** A higher-priority GPR needed the nodes. */
  | 'PREEMPTED';

export type RemoveClusterInput = {
  id: Scalars['ID']['input'];
};

/** The removed cluster, as it was. */
export type RemoveClusterPayload = {
  __typename?: 'RemoveClusterPayload';
  cluster?: Maybe<Cluster>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type RemoveNodeInput = {
  id: Scalars['ID']['input'];
};

/** The node as it was when removed. */
export type RemoveNodePayload = {
  __typename?: 'RemoveNodePayload';
  node?: Maybe<GpuNode>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type RemoveSliceMemberInput = {
  sliceId: Scalars['ID']['input'];
  userId: Scalars['ID']['input'];
};

/**
 * Samples of one node's GPUs: name the node by `nodeId`, or by `clusterId` and `nodeName`
 * as in `upsertNodes` (what an agent token names).
 */
export type ReportGpuSamplesInput = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  nodeId?: InputMaybe<Scalars['ID']['input']>;
  nodeName?: InputMaybe<Scalars['String']['input']>;
  /** At most 10,000, of any of the node's GPUs, in any order. */
  samples: Array<GpuSampleInput>;
};

export type ReportGpuSamplesPayload = {
  __typename?: 'ReportGpuSamplesPayload';
  /** Samples stored. */
  accepted: Scalars['Int']['output'];
  /** Samples already stored (same GPU and second), e.g. resent after a reconnect. */
  duplicates: Scalars['Int']['output'];
  /**
   * How long the node's agent may gather samples before it reports again: 0 (send each
   * sample as it is taken) while anyone watches the node's GPUs live, on any replica;
   * otherwise the gateway's `--unwatched-report-interval` (5 by default, at most 10). Samples
   * keep their timestamps, so the history has every second either way; `latestSample`, the
   * alert rules and the heartbeat see them up to this much later.
   */
  reportIntervalSeconds: Scalars['Int']['output'];
  /** Problems with the input; when there are any, nothing was stored. */
  userErrors: Array<UserError>;
};

/**
 * The processes on one node's GPUs now: name the node by `nodeId`, or by `clusterId` and
 * `nodeName` (what an agent token names).
 */
export type ReportGpuWorkloadsInput = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  /** The node's GPUs; a GPU of the node left out has no processes afterwards. */
  gpus: Array<GpuWorkloadInput>;
  nodeId?: InputMaybe<Scalars['ID']['input']>;
  nodeName?: InputMaybe<Scalars['String']['input']>;
};

export type ReportGpuWorkloadsPayload = {
  __typename?: 'ReportGpuWorkloadsPayload';
  /**
   * The reported pods as their Kubernetes cluster names them (none on a simulated cluster,
   * nor for a UID that is not on the node): the agent labels its own metrics with these.
   */
  namedPods: Array<NamedPod>;
  /** Processes stored. */
  processes: Scalars['Int']['output'];
  /** Problems with the input; when there are any, nothing was stored. */
  userErrors: Array<UserError>;
};

export type RequestWorkspaceInput = {
  /** The size: GPU-hours per quota period. */
  gpuHourQuota?: InputMaybe<Scalars['Int']['input']>;
  /** The size: most nodes one GPR may take. */
  maxNodesPerGpr?: InputMaybe<Scalars['Int']['input']>;
  /** The slice name (a DNS label, unique). */
  name: Scalars['String']['input'];
  /** 1–8 namespaces, on the clusters where the work runs. */
  namespaces: Array<RequestedNamespaceInput>;
  /** What it is for (1–2,000 characters). */
  purpose: Scalars['String']['input'];
};

export type RequestedNamespaceInput = {
  clusterId: Scalars['ID']['input'];
  name: Scalars['String']['input'];
};

/** A namespace a request asks for. */
export type RequestedNamespaceView = {
  __typename?: 'RequestedNamespaceView';
  clusterId: Scalars['ID']['output'];
  clusterName?: Maybe<Scalars['String']['output']>;
  name: Scalars['String']['output'];
};

export type RevokeTokenInput = {
  id: Scalars['ID']['input'];
};

export type RevokeTokenPayload = {
  __typename?: 'RevokeTokenPayload';
  token?: Maybe<AccessToken>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** Who a token speaks for. */
export type Role =
  /** Platform team: everything. */
  | 'ADMIN'
  /** A node agent reporting for one node of one cluster. */
  | 'AGENT'
  /** A member of one or more slices. */
  | 'USER';

export type SetAlertThresholdInput = {
  /**
   * The GPU shape, as nodes report it (e.g. `NVIDIA-H100-80GB-HBM3`); it need not be in the
   * inventory yet.
   */
  gpuShape: Scalars['String']['input'];
  /** 10–5000 W; null restores the model's built-in limit (or none). */
  powerWatts?: InputMaybe<Scalars['Float']['input']>;
  /** 40–120 °C; null restores the built-in 87 °C. */
  temperatureCelsius?: InputMaybe<Scalars['Float']['input']>;
};

export type SetAlertThresholdPayload = {
  __typename?: 'SetAlertThresholdPayload';
  threshold?: Maybe<AlertThreshold>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type SetGprPriorityInput = {
  id: Scalars['ID']['input'];
  priority: Scalars['Int']['input'];
  version?: InputMaybe<Scalars['Int']['input']>;
};

export type SetGprPriorityPayload = {
  __typename?: 'SetGprPriorityPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type SetPersonalWorkspacePolicyInput = {
  /** The cluster the workspaces' namespaces are made on. */
  clusterId: Scalars['ID']['input'];
  enabled: Scalars['Boolean']['input'];
  gpuHourQuota?: InputMaybe<Scalars['Int']['input']>;
  maxNodesPerGpr?: InputMaybe<Scalars['Int']['input']>;
};

export type SetSliceAutoGprInput = {
  enabled: Scalars['Boolean']['input'];
  sliceId: Scalars['ID']['input'];
  /** `null` clears it (and needs `enabled: false`). */
  templateId?: InputMaybe<Scalars['ID']['input']>;
};

export type SetSliceAutoGprPayload = {
  __typename?: 'SetSliceAutoGprPayload';
  slice?: Maybe<Slice>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type SetSlicePolicyInput = {
  policy: SlicePolicyInput;
  sliceId: Scalars['ID']['input'];
};

export type SetSlicePolicyPayload = {
  __typename?: 'SetSlicePolicyPayload';
  slice?: Maybe<Slice>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type SignInAgentInput = {
  /** The Kubernetes cluster the agent's node is in. */
  clusterId: Scalars['ID']['input'];
  /** The agent pod's projected ServiceAccount token (audience `egs`), as mounted. */
  serviceAccountToken: Scalars['String']['input'];
};

/** A token for the node the agent runs on, good for an hour: sign in again before it lapses. */
export type SignInAgentPayload = {
  __typename?: 'SignInAgentPayload';
  expiresAt?: Maybe<Scalars['DateTime']['output']>;
  /** The node the cluster says the agent's pod runs on. */
  nodeName?: Maybe<Scalars['String']['output']>;
  /** The bearer token for `upsertNodes` and the reports of this node only. */
  token?: Maybe<Scalars['String']['output']>;
  userErrors: Array<UserError>;
};

export type Slice = Node & {
  __typename?: 'Slice';
  /** Auto-GPR: a GPR from a template when one of the slice's GPU pods stays Pending. */
  autoGpr: SliceAutoGpr;
  /** Clusters the slice may use. */
  clusters: Array<Cluster>;
  createdAt: Scalars['DateTime']['output'];
  description?: Maybe<Scalars['String']['output']>;
  /** This slice's GPRs, newest first. */
  gprs: GprConnection;
  /**
   * Utilisation, temperature and power over the latest samples of the GPUs on the nodes its
   * GPRs hold now (what `gpuSummary(sliceId:)` gives, under the same rules); null while they
   * hold none.
   */
  gpuSummary?: Maybe<GpuSummary>;
  id: Scalars['ID']['output'];
  members: Array<SliceMember>;
  name: Scalars['String']['output'];
  namespaces: Array<SliceNamespace>;
  policy: SlicePolicy;
  updatedAt: Scalars['DateTime']['output'];
  /** The caller's role here (admins are owners everywhere). */
  viewerRole?: Maybe<SliceRole>;
};


export type SliceGprsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  filter?: InputMaybe<GprFilter>;
  first?: InputMaybe<Scalars['Int']['input']>;
};

export type SliceAutoGpr = {
  __typename?: 'SliceAutoGpr';
  /** Whether EGS acts on the slice's Pending GPU pods. */
  enabled: Scalars['Boolean']['output'];
  /** The template its GPRs are made from. */
  template?: Maybe<GprTemplate>;
};

export type SliceConnection = {
  __typename?: 'SliceConnection';
  /** A list of edges. */
  edges: Array<SliceEdge>;
  /** A list of nodes. */
  nodes: Array<Slice>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
  /** How many items match the filters, across all pages. */
  totalCount: Scalars['Int']['output'];
};

/** An edge in a connection. */
export type SliceEdge = {
  __typename?: 'SliceEdge';
  /** A cursor for use in pagination */
  cursor: Scalars['String']['output'];
  /** The item at the end of the edge */
  node: Slice;
};

export type SliceKubeconfigInput = {
  clusterId: Scalars['ID']['input'];
  /** How long the token lives: 30 days when omitted, 10 minutes to 1 year. */
  expiresIn?: InputMaybe<Scalars['Duration']['input']>;
  sliceId: Scalars['ID']['input'];
};

/**
 * A kubeconfig for the slice's namespaces on one cluster. It is shown only here: EGS keeps no
 * copy, and asking again revokes the previous one.
 */
export type SliceKubeconfigPayload = {
  __typename?: 'SliceKubeconfigPayload';
  expiresAt?: Maybe<Scalars['DateTime']['output']>;
  /** The kubeconfig YAML (its token is a secret). */
  kubeconfig?: Maybe<Scalars['String']['output']>;
  /** The namespaces where it may act; the first is the context's namespace. */
  namespaces: Array<Scalars['String']['output']>;
  /** `<namespace>/<name>` of the ServiceAccount the token speaks for. */
  serviceAccount?: Maybe<Scalars['String']['output']>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type SliceMember = {
  __typename?: 'SliceMember';
  createdAt: Scalars['DateTime']['output'];
  role: SliceRole;
  user?: Maybe<User>;
};

export type SliceMemberPayload = {
  __typename?: 'SliceMemberPayload';
  slice?: Maybe<Slice>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type SliceNamespace = {
  __typename?: 'SliceNamespace';
  cluster?: Maybe<Cluster>;
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
};

export type SliceNamespaceInput = {
  clusterId: Scalars['ID']['input'];
  name: Scalars['String']['input'];
  sliceId: Scalars['ID']['input'];
};

export type SliceNamespacePayload = {
  __typename?: 'SliceNamespacePayload';
  slice?: Maybe<Slice>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type SlicePolicy = {
  __typename?: 'SlicePolicy';
  /** GPU shapes the slice may ask for; empty means any. */
  allowedShapes: Array<Scalars['String']['output']>;
  /** Whether the slice's GPRs may be preempted by higher-priority ones. */
  autoEviction: Scalars['Boolean']['output'];
  /** Idle timeout for GPRs that set none. */
  defaultIdleTimeout?: Maybe<Scalars['Duration']['output']>;
  /**
   * How much a GPR's window may be extended in all without an admin's approval (30 min
   * unless set); never past a waiting GPR's promise.
   */
  extensionGrace: Scalars['Duration']['output'];
  /** GPU-hours per quota period; over it, GPRs need approval. */
  gpuHourQuota?: Maybe<Scalars['Int']['output']>;
  /**
   * Whether the slice's kubeconfigs may read Secrets and exec, attach or port-forward into
   * pods (off unless an admin turns it on).
   */
  kubeconfigSecretsAndExec: Scalars['Boolean']['output'];
  /** Longest reserved window; longer GPRs are rejected. */
  maxDuration?: Maybe<Scalars['Duration']['output']>;
  /** Most GPUs per GPR without approval. */
  maxGpusPerGpr?: Maybe<Scalars['Int']['output']>;
  /** Longest idle timeout a GPR may set; also forbids turning it off. */
  maxIdleTimeout?: Maybe<Scalars['Duration']['output']>;
  /** Most nodes per GPR without approval. */
  maxNodesPerGpr?: Maybe<Scalars['Int']['output']>;
  /** Most pending GPRs at once; more need approval. */
  maxQueuedGprs?: Maybe<Scalars['Int']['output']>;
  /** Highest priority the slice's GPRs may ask for without approval. */
  priorityMax: Scalars['Int']['output'];
  /** Lowest priority the slice's GPRs may ask for without approval. */
  priorityMin: Scalars['Int']['output'];
  quotaPeriod: Scalars['Duration']['output'];
  /** Whether an evicted GPR goes back to the queue. */
  requeueOnEviction: Scalars['Boolean']['output'];
  /** Whether a GPR whose provisioning failed goes back to the queue. */
  requeueOnFailure: Scalars['Boolean']['output'];
  /**
   * A provisioned GPR whose GPUs average under this utilisation (percent) over
   * `underusePeriod` raises `GPR_UNDERUSED`; `null`: no such warning.
   */
  underuseBelowPercent?: Maybe<Scalars['Int']['output']>;
  underusePeriod: Scalars['Duration']['output'];
};

/** Changes to a slice policy: omitted fields keep their value, `null` removes a limit. */
export type SlicePolicyInput = {
  allowedShapes?: InputMaybe<Array<Scalars['String']['input']>>;
  autoEviction?: InputMaybe<Scalars['Boolean']['input']>;
  defaultIdleTimeout?: InputMaybe<Scalars['Duration']['input']>;
  /** `0` sends every extension to an admin. */
  extensionGrace?: InputMaybe<Scalars['Duration']['input']>;
  gpuHourQuota?: InputMaybe<Scalars['Int']['input']>;
  kubeconfigSecretsAndExec?: InputMaybe<Scalars['Boolean']['input']>;
  maxDuration?: InputMaybe<Scalars['Duration']['input']>;
  maxGpusPerGpr?: InputMaybe<Scalars['Int']['input']>;
  maxIdleTimeout?: InputMaybe<Scalars['Duration']['input']>;
  maxNodesPerGpr?: InputMaybe<Scalars['Int']['input']>;
  maxQueuedGprs?: InputMaybe<Scalars['Int']['input']>;
  priorityMax?: InputMaybe<Scalars['Int']['input']>;
  priorityMin?: InputMaybe<Scalars['Int']['input']>;
  quotaPeriod?: InputMaybe<Scalars['Duration']['input']>;
  requeueOnEviction?: InputMaybe<Scalars['Boolean']['input']>;
  requeueOnFailure?: InputMaybe<Scalars['Boolean']['input']>;
  /** 1–100; `null` turns the under-use warning off. */
  underuseBelowPercent?: InputMaybe<Scalars['Int']['input']>;
  /** 5 minutes to 7 days. */
  underusePeriod?: InputMaybe<Scalars['Duration']['input']>;
};

/** A member's rights within one slice. */
export type SliceRole =
  /** Creates and manages GPRs in the slice. */
  | 'EDITOR'
  /** Manages members and policy-free settings of the slice, and all its GPRs. */
  | 'OWNER'
  /** Reads the slice and its GPRs. */
  | 'VIEWER';

export type SsoGroupRule = {
  __typename?: 'SsoGroupRule';
  createdAt: Scalars['DateTime']['output'];
  grantsAdmin: Scalars['Boolean']['output'];
  /** The group, as the identity provider's groups claim names it. */
  group: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  role?: Maybe<SliceRole>;
  slice?: Maybe<Slice>;
};

export type SsoGroupRulePayload = {
  __typename?: 'SsoGroupRulePayload';
  rule?: Maybe<SsoGroupRule>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type SsoGroupRuleRef = {
  id: Scalars['ID']['input'];
};

/** A start-time range (see `Gpr.startRange`). */
export type StartRange = {
  __typename?: 'StartRange';
  /** It starts before this one time in ten. */
  p10: Scalars['DateTime']['output'];
  /** The middle: `estimatedStartAt`. */
  p50: Scalars['DateTime']['output'];
  /** It starts before this nine times in ten. */
  p90: Scalars['DateTime']['output'];
};

/** Which job a provisioning step belongs to. */
export type StepOperation =
  /** Handing nodes to the slice. */
  | 'PROVISION'
  /** Taking them back. */
  | 'RELEASE';

/** Where a provisioning or release step is. */
export type StepStatus =
  | 'DONE'
  /** Failed on its last attempt; see its message. Transient failures are retried. */
  | 'FAILED'
  /** Started and not yet finished (or interrupted; the next leader runs it again). */
  | 'RUNNING';

export type Subscription = {
  __typename?: 'Subscription';
  /**
   * Every alert raised or cleared from now on that you may read (the rules of the `alerts`
   * list), of one slice or one cluster if you name it: the alert as it was raised
   * (`open: true`), then again when it clears (`open: false`). Transitions stored on any
   * replica arrive within a second.
   */
  alerts: Alert;
  /**
   * GPR events the caller may see, live, narrowed by GPR or slice. With `after` (the id of
   * the last event you saw, or its `sequence`), every stored event after it comes first,
   * then live ones, with no gap or repeat between the two: reconnect with the last id you
   * received and nothing is lost.
   */
  gprEvents: GprEvent;
  /**
   * Live samples of one GPU, a node, the nodes a GPR holds, or the nodes a slice's GPRs
   * hold (give exactly one), coalesced to `interval` (default and minimum 1s): each update
   * carries the newest sample of every GPU that reported since the last one. A slow client
   * skips to the newest samples; it never holds up others.
   */
  gpuMetrics: GpuMetricsUpdate;
  /**
   * Changes of the GPU nodes of a cluster (or of every cluster), from now on: nodes added
   * and removed, health changes (`STALE` when an agent falls silent for 30 s, and back),
   * nodes allocated to and released by GPRs, state and description changes. A change made
   * through any replica arrives within a couple of seconds (at once on this one).
   */
  inventoryChanged: InventoryChange;
  /**
   * The queue as `queue(...)` shows it (one slice for its members; any view for admins):
   * now, then again whenever a position, promise or estimate in it changes. Subscribers of
   * the same view share one read per burst of changes (at most two a second).
   */
  queueChanged: Array<Gpr>;
};


export type SubscriptionAlertsArgs = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};


export type SubscriptionGprEventsArgs = {
  after?: InputMaybe<Scalars['ID']['input']>;
  gprId?: InputMaybe<Scalars['ID']['input']>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};


export type SubscriptionGpuMetricsArgs = {
  gprId?: InputMaybe<Scalars['ID']['input']>;
  gpuId?: InputMaybe<Scalars['ID']['input']>;
  interval?: InputMaybe<Scalars['Duration']['input']>;
  nodeId?: InputMaybe<Scalars['ID']['input']>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};


export type SubscriptionInventoryChangedArgs = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
};


export type SubscriptionQueueChangedArgs = {
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  first?: Scalars['Int']['input'];
  gpuShape?: InputMaybe<Scalars['String']['input']>;
  instanceType?: InputMaybe<Scalars['String']['input']>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
};

/** What came of a test message. */
export type TestNotificationChannelPayload = {
  __typename?: 'TestNotificationChannelPayload';
  /** The channel, with the outcome recorded. */
  channel?: Maybe<NotificationChannel>;
  /** Whether the receiver took it. */
  delivered: Scalars['Boolean']['output'];
  /** Why not, when it did not. */
  error?: Maybe<Scalars['String']['output']>;
  userErrors: Array<UserError>;
};

/** Where a threshold in force comes from. */
export type ThresholdSource =
  /** EGS's default: 87 °C, and the power limit of the GPU model when EGS knows it. */
  | 'BUILT_IN'
  /** Set by an admin with `setAlertThreshold`. */
  | 'CONFIGURED';

/** One slice a token may act in, and the most it may do there. */
export type TokenScope = {
  __typename?: 'TokenScope';
  role: SliceRole;
  /** `null` when the caller may not see the slice. */
  slice?: Maybe<Slice>;
};

export type TokenScopeInput = {
  role: SliceRole;
  sliceId: Scalars['ID']['input'];
};

export type UncordonNodeInput = {
  id: Scalars['ID']['input'];
};

export type UncordonNodePayload = {
  __typename?: 'UncordonNodePayload';
  node?: Maybe<GpuNode>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type UpdateClusterInput = {
  /** `null` clears it. */
  cloud?: InputMaybe<Scalars['String']['input']>;
  /**
   * Promises of GPRs planned to start within this are kept against arrivals below the high
   * band (priority 201 and up), which plan around them: fewer promises move, those arrivals
   * may wait longer. Up to 7 days; `null` or 0: none (the default).
   */
  firmHorizon?: InputMaybe<Scalars['Duration']['input']>;
  id: Scalars['ID']['input'];
  /** Replaces the stored kubeconfig (Kubernetes clusters). */
  kubeconfig?: InputMaybe<Scalars['String']['input']>;
  name?: InputMaybe<Scalars['String']['input']>;
  podPlacement?: InputMaybe<PodPlacement>;
  /** `null` clears it. */
  region?: InputMaybe<Scalars['String']['input']>;
};

export type UpdateClusterPayload = {
  __typename?: 'UpdateClusterPayload';
  cluster?: Maybe<Cluster>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type UpdateGprInput = {
  duration?: InputMaybe<Scalars['Duration']['input']>;
  earliestStartAt?: InputMaybe<Scalars['DateTime']['input']>;
  gpuShape?: InputMaybe<Scalars['String']['input']>;
  gpusPerNode?: InputMaybe<Scalars['Int']['input']>;
  id: Scalars['ID']['input'];
  idleTimeout?: InputMaybe<Scalars['Duration']['input']>;
  instanceType?: InputMaybe<Scalars['String']['input']>;
  labels?: InputMaybe<Array<LabelInput>>;
  minGpuMemoryMib?: InputMaybe<Scalars['Int']['input']>;
  name?: InputMaybe<Scalars['String']['input']>;
  nodeCount?: InputMaybe<Scalars['Int']['input']>;
  preemptible?: InputMaybe<Scalars['Boolean']['input']>;
  preferredClusterIds?: InputMaybe<Array<Scalars['ID']['input']>>;
  priority?: InputMaybe<Scalars['Int']['input']>;
  /** The version you read; the update is refused if the GPR changed since. */
  version: Scalars['Int']['input'];
};

export type UpdateGprPayload = {
  __typename?: 'UpdateGprPayload';
  gpr?: Maybe<Gpr>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** Omitted fields keep their value; `null` clears an optional one. */
export type UpdateGprTemplateInput = {
  description?: InputMaybe<Scalars['String']['input']>;
  duration?: InputMaybe<Scalars['Duration']['input']>;
  gpuShape?: InputMaybe<Scalars['String']['input']>;
  gpusPerNode?: InputMaybe<Scalars['Int']['input']>;
  id: Scalars['ID']['input'];
  idleTimeout?: InputMaybe<Scalars['Duration']['input']>;
  instanceType?: InputMaybe<Scalars['String']['input']>;
  name?: InputMaybe<Scalars['String']['input']>;
  nodeCount?: InputMaybe<Scalars['Int']['input']>;
  priority?: InputMaybe<Scalars['Int']['input']>;
};

export type UpdateGprTemplatePayload = {
  __typename?: 'UpdateGprTemplatePayload';
  template?: Maybe<GprTemplate>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** Omitted fields keep their value. */
export type UpdateNotificationChannelInput = {
  enabled?: InputMaybe<Scalars['Boolean']['input']>;
  /** `null` goes back to the default (30). */
  estimateMovedMinutes?: InputMaybe<Scalars['Int']['input']>;
  id: Scalars['ID']['input'];
  milestones?: InputMaybe<Array<Milestone>>;
  name?: InputMaybe<Scalars['String']['input']>;
  /** A new signing key for a JSON webhook (the old one stops at once). */
  rotateSigningSecret?: Scalars['Boolean']['input'];
  target?: InputMaybe<Scalars['String']['input']>;
};

export type UpdateSliceInput = {
  /** When given, the slice may use exactly these clusters. */
  clusterIds?: InputMaybe<Array<Scalars['ID']['input']>>;
  /** `null` clears it. */
  description?: InputMaybe<Scalars['String']['input']>;
  id: Scalars['ID']['input'];
  name?: InputMaybe<Scalars['String']['input']>;
};

export type UpdateSlicePayload = {
  __typename?: 'UpdateSlicePayload';
  slice?: Maybe<Slice>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type UpsertNodesInput = {
  clusterId: Scalars['ID']['input'];
  nodes: Array<NodeInput>;
};

export type UpsertNodesPayload = {
  __typename?: 'UpsertNodesPayload';
  nodes?: Maybe<Array<GpuNode>>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

/** The dimensions usage rows may be grouped by. */
export type UsageDimension =
  | 'CLUSTER'
  | 'DAY'
  | 'GPU_SHAPE'
  | 'SLICE'
  | 'USER';

/** What a row is about; a dimension the rows were not grouped by is null. */
export type UsageGroup = {
  __typename?: 'UsageGroup';
  clusterId?: Maybe<Scalars['ID']['output']>;
  /** The cluster's name (`-` for a GPR not placed on one yet). */
  clusterName?: Maybe<Scalars['String']['output']>;
  /** The UTC day, as YYYY-MM-DD. */
  day?: Maybe<Scalars['String']['output']>;
  /** The GPU shape (`any` for a GPR that named none and was not placed). */
  gpuShape?: Maybe<Scalars['String']['output']>;
  priority?: Maybe<Scalars['Int']['output']>;
  sliceId?: Maybe<Scalars['ID']['output']>;
  sliceName?: Maybe<Scalars['String']['output']>;
  /** The requester's name (`-` when none is known). */
  user?: Maybe<Scalars['String']['output']>;
};

export type UsageReport = {
  __typename?: 'UsageReport';
  /** The first day, YYYY-MM-DD. */
  from: Scalars['String']['output'];
  /** When the rollups last ran (every minute; today's figures grow until the day ends). */
  refreshedAt?: Maybe<Scalars['DateTime']['output']>;
  sliceId?: Maybe<Scalars['ID']['output']>;
  /** The last day, YYYY-MM-DD (included). */
  to: Scalars['String']['output'];
  /** GPU-hours reserved, used and waited for, grouped (no dimension: the totals). */
  usage: Array<UsageRow>;
  /** `usage` as CSV, for spreadsheets and billing. */
  usageCsv: Scalars['String']['output'];
  /** Measured utilisation (for a slice: of the GPUs it held). */
  utilisation: Array<UtilisationRow>;
  /** `utilisation` as CSV. */
  utilisationCsv: Scalars['String']['output'];
  /** How long GPRs waited for their window, by the day it began. */
  waits: Array<WaitRow>;
  /** `waits` as CSV. */
  waitsCsv: Scalars['String']['output'];
};


export type UsageReportUsageArgs = {
  groupBy?: Array<UsageDimension>;
};


export type UsageReportUsageCsvArgs = {
  groupBy: Array<UsageDimension>;
};


export type UsageReportUtilisationArgs = {
  groupBy?: Array<UtilisationDimension>;
};


export type UsageReportUtilisationCsvArgs = {
  groupBy: Array<UtilisationDimension>;
};


export type UsageReportWaitsArgs = {
  groupBy?: Array<WaitDimension>;
};


export type UsageReportWaitsCsvArgs = {
  groupBy: Array<WaitDimension>;
};

/** GPU-hours of a group. */
export type UsageRow = {
  __typename?: 'UsageRow';
  /** Windows that began. */
  gprsStarted: Scalars['Int']['output'];
  group: UsageGroup;
  /** The windows as booked (to their planned end, however early they ended). */
  reservedGpuHours: Scalars['Float']['output'];
  /** Held from provisioning until the release began. */
  usedGpuHours: Scalars['Float']['output'];
  /** Asked for while waiting in the queue or for approval: demand not yet met. */
  waitingGpuHours: Scalars['Float']['output'];
};

export type User = Node & {
  __typename?: 'User';
  createdAt: Scalars['DateTime']['output'];
  email?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  /** Slices this user belongs to, with their role (as far as the caller may see). */
  memberships: Array<Membership>;
  name: Scalars['String']['output'];
  role: Role;
};

/** A problem with one input field, as reported in `userErrors`. */
export type UserError = {
  __typename?: 'UserError';
  code: ErrorCode;
  /** Path to the input field, e.g. `["input", "priority"]`; empty when not about one field. */
  field: Array<Scalars['String']['output']>;
  /** What is wrong and how to fix it. */
  message: Scalars['String']['output'];
};

/** The dimensions utilisation rows may be grouped by. */
export type UtilisationDimension =
  | 'CLUSTER'
  | 'DAY'
  | 'SLICE';

/** Measured GPU time of a group, sampled every minute from the GPUs' latest samples. */
export type UtilisationRow = {
  __typename?: 'UtilisationRow';
  /** Reporting GPU-hours weighted by utilisation. */
  busyGpuHours: Scalars['Float']['output'];
  /** GPUs in the inventory × hours. */
  gpuHours: Scalars['Float']['output'];
  group: UsageGroup;
  /** GPU-hours held by a slice's GPR. */
  heldGpuHours: Scalars['Float']['output'];
  /** Utilisation of the held GPUs alone; null without reports. */
  heldUtilisationPercent?: Maybe<Scalars['Float']['output']>;
  /** Of those, hours whose agent had reported. */
  reportingGpuHours: Scalars['Float']['output'];
  /** Busy ÷ reporting; null without reports. */
  utilisationPercent?: Maybe<Scalars['Float']['output']>;
};

export type Viewer = {
  __typename?: 'Viewer';
  /** The user's id, or the token's for agents. */
  id: Scalars['ID']['output'];
  /** Slices the token may act in, with the effective role. */
  memberships: Array<Membership>;
  name: Scalars['String']['output'];
  role: Role;
  /** The token used for this request. */
  token?: Maybe<AccessToken>;
  user?: Maybe<User>;
};

/** The dimensions wait rows may be grouped by. */
export type WaitDimension =
  | 'DAY'
  | 'GPU_SHAPE'
  | 'PRIORITY'
  | 'SLICE';

/** How long the GPRs of a group that started waited for their window. */
export type WaitRow = {
  __typename?: 'WaitRow';
  group: UsageGroup;
  maxWaitSeconds: Scalars['Int']['output'];
  meanWaitSeconds: Scalars['Float']['output'];
  started: Scalars['Int']['output'];
  within1hPercent: Scalars['Float']['output'];
  within4hPercent: Scalars['Float']['output'];
  /** Percent of starts that waited at most 15 minutes, 1, 4 and 24 hours. */
  within15mPercent: Scalars['Float']['output'];
  within24hPercent: Scalars['Float']['output'];
};

/**
 * What a GPR asks for and from when: everything its wait depends on. `waitTimeEstimates`
 * takes it alone (a GPR you are thinking of submitting); `createGpr` takes it with the rest.
 */
export type WaitTimeInput = {
  /** The strict reserved window, e.g. `6h` or `PT6H`; required without a template. */
  duration?: InputMaybe<Scalars['Duration']['input']>;
  /** Reserve ahead: not before this time. */
  earliestStartAt?: InputMaybe<Scalars['DateTime']['input']>;
  /**
   * Omit to let the scheduler pick (a wait-time answer then covers every shape the slice
   * may use), or for the template's.
   */
  gpuShape?: InputMaybe<Scalars['String']['input']>;
  /** GPUs needed on each node; omit for every GPU of the node (or the template's). */
  gpusPerNode?: InputMaybe<Scalars['Int']['input']>;
  /** Omit to let the scheduler pick, or for the template's. */
  instanceType?: InputMaybe<Scalars['String']['input']>;
  minGpuMemoryMib?: InputMaybe<Scalars['Int']['input']>;
  /** Whole nodes, all from one pool; required without a template. */
  nodeCount?: InputMaybe<Scalars['Int']['input']>;
  /** Omit for any of the slice's clusters. */
  preferredClusterIds?: Array<Scalars['ID']['input']>;
  /** 1–300, higher runs first; omit for the template's, or 101. */
  priority?: InputMaybe<Scalars['Int']['input']>;
  sliceId: Scalars['ID']['input'];
  /**
   * A template (profile) published to the slice: what this input leaves out is taken from
   * it (`gprTemplates(sliceId:)` lists them).
   */
  templateId?: InputMaybe<Scalars['ID']['input']>;
  /** What the workload needs; `rdma` limits a multi-node GPR to pools that have it. */
  workload?: InputMaybe<WorkloadHintsInput>;
};

/** One change to weigh: give exactly one of the fields. */
export type WhatIfChangeInput = {
  /** More nodes in a pool (as its nodes are: GPUs and memory). */
  addNodes?: InputMaybe<WhatIfNodesInput>;
  /** A node cordoned (its holder keeps it to the end of its window). */
  cordonNode?: InputMaybe<Scalars['ID']['input']>;
  /** A waiting GPR raised (or lowered). */
  gprPriority?: InputMaybe<WhatIfPriorityInput>;
  /** A waiting GPR resized. */
  gprSize?: InputMaybe<WhatIfSizeInput>;
  /** A maintenance window. */
  maintenance?: InputMaybe<WhatIfWindowInput>;
  /** A GPR not yet asked for, as "Get wait time" takes it. */
  newGpr?: InputMaybe<WaitTimeInput>;
  /**
   * Fewer: free nodes first, then those whose holders finish soonest (they keep them to the
   * end of their windows).
   */
  removeNodes?: InputMaybe<WhatIfNodesInput>;
};

export type WhatIfInput = {
  /** 1 to 20 changes, weighed together. */
  changes: Array<WhatIfChangeInput>;
};

/** How one GPR's start would move. */
export type WhatIfMove = {
  __typename?: 'WhatIfMove';
  expectedAfter?: Maybe<Scalars['DateTime']['output']>;
  /** Its expected start now and after. */
  expectedBefore?: Maybe<Scalars['DateTime']['output']>;
  /** The GPR; `null` for the one not yet asked for. */
  gpr?: Maybe<Gpr>;
  promiseAfter?: Maybe<Scalars['DateTime']['output']>;
  /** Its promise (`startNoLaterThan`) now and after the changes; `null`: it fits nowhere. */
  promiseBefore?: Maybe<Scalars['DateTime']['output']>;
  /** Seconds the promise moves: positive later, negative earlier; `null` when it appears or goes. */
  promiseShiftSeconds?: Maybe<Scalars['Int']['output']>;
};

/** Nodes of one pool (cluster, instance type, GPU shape) to add or take away. */
export type WhatIfNodesInput = {
  clusterId: Scalars['ID']['input'];
  /** 1 to 1,000. */
  count: Scalars['Int']['input'];
  gpuShape: Scalars['String']['input'];
  instanceType: Scalars['String']['input'];
};

/** A waiting GPR at another priority. */
export type WhatIfPriorityInput = {
  gprId: Scalars['ID']['input'];
  /** 1 to 300. */
  priority: Scalars['Int']['input'];
};

/** A waiting GPR of another size. */
export type WhatIfSizeInput = {
  duration: Scalars['Duration']['input'];
  gprId: Scalars['ID']['input'];
  nodeCount: Scalars['Int']['input'];
};

/** A node planned out of service. */
export type WhatIfWindowInput = {
  endsAt: Scalars['DateTime']['input'];
  nodeId: Scalars['ID']['input'];
  startsAt: Scalars['DateTime']['input'];
};

export type WorkloadHints = {
  __typename?: 'WorkloadHints';
  framework?: Maybe<Scalars['String']['output']>;
  kind?: Maybe<WorkloadKind>;
  model?: Maybe<Scalars['String']['output']>;
  /** Parameters, in billions. */
  modelBillions?: Maybe<Scalars['Float']['output']>;
  /** Its nodes talk over RDMA: planned only in pools that have it (with more than one node). */
  rdma: Scalars['Boolean']['output'];
};

/**
 * What a GPR's workload needs (all optional), shown with it and grouped by in the workloads
 * view.
 */
export type WorkloadHintsInput = {
  /** e.g. `pytorch`, `jax`, `vllm`. */
  framework?: InputMaybe<Scalars['String']['input']>;
  kind?: InputMaybe<WorkloadKind>;
  /** e.g. `llama-3-70b`. */
  model?: InputMaybe<Scalars['String']['input']>;
  /** Parameters, in billions. */
  modelBillions?: InputMaybe<Scalars['Float']['input']>;
  /**
   * The nodes talk over RDMA (InfiniBand or RoCE): a multi-node GPR waits for a pool whose
   * every node has it.
   */
  rdma?: Scalars['Boolean']['input'];
};

/** What a GPR's nodes will run. */
export type WorkloadKind =
  | 'FINE_TUNING'
  | 'INFERENCE'
  /** Notebooks and other hands-on work. */
  | 'INTERACTIVE'
  | 'TRAINING';

export type WorkspaceRequest = {
  __typename?: 'WorkspaceRequest';
  createdAt: Scalars['DateTime']['output'];
  decidedAt?: Maybe<Scalars['DateTime']['output']>;
  decidedBy?: Maybe<Scalars['String']['output']>;
  /** Why it was rejected (or what the approval said). */
  decisionReason?: Maybe<Scalars['String']['output']>;
  gpuHourQuota?: Maybe<Scalars['Int']['output']>;
  id: Scalars['ID']['output'];
  maxNodesPerGpr?: Maybe<Scalars['Int']['output']>;
  /** The slice name asked for. */
  name: Scalars['String']['output'];
  namespaces: Array<RequestedNamespaceView>;
  purpose: Scalars['String']['output'];
  /** Who asked. */
  requester?: Maybe<Scalars['String']['output']>;
  /** The slice the approval created, when the caller may see it. */
  slice?: Maybe<Slice>;
  state: WorkspaceRequestState;
};

export type WorkspaceRequestPayload = {
  __typename?: 'WorkspaceRequestPayload';
  request?: Maybe<WorkspaceRequest>;
  /** Problems with the input that the caller can fix; empty on success. */
  userErrors: Array<UserError>;
};

export type WorkspaceRequestRef = {
  id: Scalars['ID']['input'];
};

/** Where a user's request for a workspace (slice) stands. */
export type WorkspaceRequestState =
  /** An admin approved it: the slice exists, with the requester as its owner. */
  | 'APPROVED'
  /** Waiting for an admin. */
  | 'PENDING'
  /** An admin refused it, saying why. */
  | 'REJECTED'
  /** The requester took it back. */
  | 'WITHDRAWN';

export type BellEventsSubscriptionVariables = Exact<{
  after?: InputMaybe<Scalars['ID']['input']>;
}>;


export type BellEventsSubscription = { __typename?: 'Subscription', gprEvents: { __typename?: 'GprEvent', id: string, kind: GprEventKind, message: string, actor: string, createdAt: string, gpr?: { __typename?: 'Gpr', id: string, name: string } | null } };

export type BellAlertsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type BellAlertsSubscription = { __typename?: 'Subscription', alerts: { __typename?: 'Alert', id: string, kind: AlertKind, severity: AlertSeverity, message: string, open: boolean, raisedAt: string, clearedAt?: string | null, resolution?: string | null, gpr?: { __typename?: 'Gpr', id: string, name: string } | null, gpu?: { __typename?: 'Gpu', id: string } | null } };

export type CreateGprSlicesQueryVariables = Exact<{ [key: string]: never; }>;


export type CreateGprSlicesQuery = { __typename?: 'Query', slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string, viewerRole?: SliceRole | null, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, priorityMin: number, priorityMax: number, maxDuration?: string | null, maxNodesPerGpr?: number | null, maxGpusPerGpr?: number | null, defaultIdleTimeout?: string | null, maxIdleTimeout?: string | null, autoEviction: boolean } }> } };

export type CreateGprPoolsQueryVariables = Exact<{ [key: string]: never; }>;


export type CreateGprPoolsQuery = { __typename?: 'Query', pools: Array<{ __typename?: 'Pool', gpuShape: string, instanceType: string, gpusPerNode: number, freeNodes: number, totalNodes: number, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }> };

export type CreateGprWaitTimesQueryVariables = Exact<{
  input: WaitTimeInput;
}>;


export type CreateGprWaitTimesQuery = { __typename?: 'Query', waitTimeEstimates: Array<{ __typename?: 'PoolWaitEstimate', instanceType: string, gpuShape: string, freeNodes: number, healthyNodes: number, estimatedStartAt: string, estimatedWait: string, startNoLaterThan: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null, startRange: { __typename?: 'StartRange', p10: string, p90: string } }> };

export type CreateGprProfilesQueryVariables = Exact<{
  sliceId: Scalars['ID']['input'];
}>;


export type CreateGprProfilesQuery = { __typename?: 'Query', gprTemplates: Array<{ __typename?: 'GprTemplate', id: string, name: string, description?: string | null, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, priority: number, duration: string, idleTimeout?: string | null }> };

export type CreateGprSubmitMutationVariables = Exact<{
  input: CreateGprInput;
}>;


export type CreateGprSubmitMutation = { __typename?: 'Mutation', createGpr: { __typename?: 'CreateGprPayload', gpr?: { __typename?: 'Gpr', id: string, phase: GprPhase } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type EventsSearchQueryVariables = Exact<{
  text?: InputMaybe<Scalars['String']['input']>;
  kinds?: InputMaybe<Array<GprEventKind> | GprEventKind>;
  sliceId?: InputMaybe<Scalars['ID']['input']>;
  gprId?: InputMaybe<Scalars['ID']['input']>;
  since?: InputMaybe<Scalars['DateTime']['input']>;
  until?: InputMaybe<Scalars['DateTime']['input']>;
  before?: InputMaybe<Scalars['String']['input']>;
}>;


export type EventsSearchQuery = { __typename?: 'Query', gprEvents: { __typename?: 'GprEventConnection', totalCount: number, pageInfo: { __typename?: 'PageInfo', hasPreviousPage: boolean, startCursor?: string | null }, nodes: Array<{ __typename?: 'GprEvent', id: string, kind: GprEventKind, message: string, actor: string, createdAt: string, gpr?: { __typename?: 'Gpr', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null }> } };

export type EventsSlicesQueryVariables = Exact<{ [key: string]: never; }>;


export type EventsSlicesQuery = { __typename?: 'Query', slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string }> } };

export type GprDetailQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type GprDetailQuery = { __typename?: 'Query', gpr: { __typename?: 'Gpr', id: string, name: string, phase: GprPhase, version: number, reason?: string | null, approval: ApprovalState, approvalReason?: string | null, priority: number, priorityBand: PriorityBand, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, duration: string, idleTimeout?: string | null, preemptible: boolean, createdAt: string, earliestStartAt?: string | null, provisionedAt?: string | null, exitAt?: string | null, extendedBy: string, extensionRequested?: string | null, completedAt?: string | null, estimatedStartAt?: string | null, estimatedStartMovesOn?: Array<EstimateMover> | null, startNoLaterThan?: string | null, startNoLaterThanMovesLaterOn?: Array<EstimateMover> | null, queuePosition?: number | null, releaseReason?: ReleaseReason | null, kubernetesResource?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null, preferredClusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, workload?: { __typename?: 'WorkloadHints', model?: string | null, modelBillions?: number | null, framework?: string | null, kind?: WorkloadKind | null, rdma: boolean } | null, startRange?: { __typename?: 'StartRange', p10: string, p90: string } | null, preemptedBy?: { __typename?: 'Gpr', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string, viewerRole?: SliceRole | null } | null, requester?: { __typename?: 'User', id: string, name: string } | null, labels: Array<{ __typename?: 'Label', key: string, value: string }>, nodes: Array<{ __typename?: 'GpuNode', id: string, name: string, instanceType: string, gpuShape: string, gpusPerNode: number, health: Health, state: NodeState, utilization?: number | null, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, provisioningSteps: Array<{ __typename?: 'ProvisioningStep', operation: StepOperation, step: string, status: StepStatus, message: string, attempts: number, startedAt: string, finishedAt?: string | null }> } };

export type GprDetailEventsQueryVariables = Exact<{
  id: Scalars['ID']['input'];
  after?: InputMaybe<Scalars['String']['input']>;
}>;


export type GprDetailEventsQuery = { __typename?: 'Query', gprEvents: { __typename?: 'GprEventConnection', nodes: Array<{ __typename?: 'GprEvent', id: string, kind: GprEventKind, message: string, actor: string, createdAt: string, sequence: number }>, pageInfo: { __typename?: 'PageInfo', hasNextPage: boolean, endCursor?: string | null } } };

export type GprDetailLiveSubscriptionVariables = Exact<{
  gprId: Scalars['ID']['input'];
  after?: InputMaybe<Scalars['ID']['input']>;
}>;


export type GprDetailLiveSubscription = { __typename?: 'Subscription', gprEvents: { __typename?: 'GprEvent', id: string, kind: GprEventKind, message: string, actor: string, createdAt: string, sequence: number } };

export type GpuDashboardInfoQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type GpuDashboardInfoQuery = { __typename?: 'Query', node:
    | { __typename?: 'AccessToken' }
    | { __typename?: 'Alert' }
    | { __typename?: 'Cluster' }
    | { __typename?: 'Gpr' }
    | { __typename?: 'GprEvent' }
    | { __typename?: 'Gpu', id: string, index: number, uuid: string, model: string, memoryMib: number, migEnabled: boolean, latestSample?: { __typename?: 'GpuSample', time: string, util: number, memUtil: number, memUsedMib: number, temperature: number, power: number, smClockMhz: number, eccCorrected?: number | null, eccUncorrected?: number | null, xidErrors: Array<number> } | null, node?: { __typename?: 'GpuNode', id: string, name: string, gpuShape: string, health: Health, state: NodeState, instanceType: string, driverVersion?: string | null, cudaVersion?: string | null, lastHeartbeatAt?: string | null, temperatureThresholdCelsius?: number | null, powerThresholdWatts?: number | null, cluster?: { __typename?: 'Cluster', id: string, name: string } | null, allocatedGpr?: { __typename?: 'Gpr', id: string, name: string, exitAt?: string | null, slice?: { __typename?: 'Slice', id: string, name: string } | null } | null } | null, processes: Array<{ __typename?: 'GpuProcess', pid: number, usedMemoryMib?: number | null, reportedAt: string, pod?: { __typename?: 'PodRef', uid: string, namespace?: string | null, name?: string | null, container?: string | null } | null }> }
    | { __typename?: 'GpuNode' }
    | { __typename?: 'Slice' }
    | { __typename?: 'User' }
   };

export type GpuDashboardHistoryQueryVariables = Exact<{
  id: Scalars['ID']['input'];
  from?: InputMaybe<Scalars['DateTime']['input']>;
  to?: InputMaybe<Scalars['DateTime']['input']>;
  step?: InputMaybe<Scalars['Duration']['input']>;
}>;


export type GpuDashboardHistoryQuery = { __typename?: 'Query', node:
    | { __typename?: 'AccessToken' }
    | { __typename?: 'Alert' }
    | { __typename?: 'Cluster' }
    | { __typename?: 'Gpr' }
    | { __typename?: 'GprEvent' }
    | { __typename?: 'Gpu', id: string, metrics: Array<{ __typename?: 'GpuMetricPoint', time: string, util: number, memUtil: number, memUsedMib: number, temperature: number, power: number }> }
    | { __typename?: 'GpuNode' }
    | { __typename?: 'Slice' }
    | { __typename?: 'User' }
   };

export type GpuDashboardLiveSubscriptionVariables = Exact<{
  gpuId: Scalars['ID']['input'];
  interval: Scalars['Duration']['input'];
}>;


export type GpuDashboardLiveSubscription = { __typename?: 'Subscription', gpuMetrics: { __typename?: 'GpuMetricsUpdate', samples: Array<{ __typename?: 'GpuSample', gpuId: string, time: string, util: number, memUtil: number, memUsedMib: number, temperature: number, power: number }> } };

export type GpusTableQueryVariables = Exact<{
  first?: InputMaybe<Scalars['Int']['input']>;
  after?: InputMaybe<Scalars['String']['input']>;
}>;


export type GpusTableQuery = { __typename?: 'Query', gpus: { __typename?: 'GpuConnection', totalCount: number, pageInfo: { __typename?: 'PageInfo', hasNextPage: boolean, endCursor?: string | null }, nodes: Array<{ __typename?: 'Gpu', id: string, index: number, uuid: string, model: string, memoryMib: number, latestSample?: { __typename?: 'GpuSample', time: string, util: number, memUtil: number, memUsedMib: number, temperature: number, power: number } | null, node?: { __typename?: 'GpuNode', id: string, name: string, gpuShape: string, health: Health, state: NodeState, temperatureThresholdCelsius?: number | null, powerThresholdWatts?: number | null, cluster?: { __typename?: 'Cluster', id: string, name: string } | null, allocatedGpr?: { __typename?: 'Gpr', id: string, name: string, slice?: { __typename?: 'Slice', id: string, name: string } | null } | null } | null }> } };

export type HomeOverviewQueryVariables = Exact<{ [key: string]: never; }>;


export type HomeOverviewQuery = { __typename?: 'Query', slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string, viewerRole?: SliceRole | null, gpuSummary?: { __typename?: 'GpuSummary', gpuCount: number, averageUtilization?: number | null } | null }> }, gprs: { __typename?: 'GprConnection', totalCount: number, nodes: Array<{ __typename?: 'Gpr', id: string, name: string, phase: GprPhase, priority: number, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, assignedGpuShape?: string | null, queuePosition?: number | null, estimatedStartAt?: string | null, exitAt?: string | null, createdAt: string, requester?: { __typename?: 'User', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null, nodes: Array<{ __typename?: 'GpuNode', id: string, gpusPerNode: number }> }> }, alerts: { __typename?: 'AlertConnection', nodes: Array<{ __typename?: 'Alert', id: string, kind: AlertKind, severity: AlertSeverity, message: string, open: boolean, raisedAt: string, slice?: { __typename?: 'Slice', id: string, name: string } | null, gpr?: { __typename?: 'Gpr', id: string, name: string } | null, node?: { __typename?: 'GpuNode', id: string, name: string } | null }> } };

export type HomeAlertsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type HomeAlertsSubscription = { __typename?: 'Subscription', alerts: { __typename?: 'Alert', id: string, kind: AlertKind, severity: AlertSeverity, message: string, open: boolean, raisedAt: string, slice?: { __typename?: 'Slice', id: string, name: string } | null, gpr?: { __typename?: 'Gpr', id: string, name: string } | null, node?: { __typename?: 'GpuNode', id: string, name: string } | null } };

export type NotificationsQueryVariables = Exact<{ [key: string]: never; }>;


export type NotificationsQuery = { __typename?: 'Query', notificationOptions: { __typename?: 'NotificationOptions', email: boolean, publicTargetsOnly: boolean, defaultMilestones: Array<Milestone> }, notificationChannels: Array<{ __typename?: 'NotificationChannel', id: string, name: string, kind: NotificationKind, target: string, milestones: Array<Milestone>, estimateMovedMinutes?: number | null, enabled: boolean, signed: boolean, failing: boolean, failuresInARow: number, lastError?: string | null, lastDeliveredAt?: string | null, lastFailedAt?: string | null, slice?: { __typename?: 'Slice', id: string, name: string } | null, deliveries: Array<{ __typename?: 'NotificationDelivery', id: string, milestone: string, state: DeliveryState, attempts: number, lastError?: string | null, createdAt: string, deliveredAt?: string | null, nextAttemptAt?: string | null, gpr?: { __typename?: 'Gpr', id: string, name: string } | null }> }>, viewer: { __typename?: 'Viewer', memberships: Array<{ __typename?: 'Membership', role: SliceRole, slice?: { __typename?: 'Slice', id: string, name: string } | null }> }, slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string }> } };

export type CreateNotificationChannelMutationVariables = Exact<{
  input: CreateNotificationChannelInput;
}>;


export type CreateNotificationChannelMutation = { __typename?: 'Mutation', createNotificationChannel: { __typename?: 'NotificationChannelPayload', signingSecret?: string | null, channel?: { __typename?: 'NotificationChannel', id: string, name: string } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type UpdateNotificationChannelMutationVariables = Exact<{
  input: UpdateNotificationChannelInput;
}>;


export type UpdateNotificationChannelMutation = { __typename?: 'Mutation', updateNotificationChannel: { __typename?: 'NotificationChannelPayload', channel?: { __typename?: 'NotificationChannel', id: string, enabled: boolean } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type DeleteNotificationChannelMutationVariables = Exact<{
  input: NotificationChannelRef;
}>;


export type DeleteNotificationChannelMutation = { __typename?: 'Mutation', deleteNotificationChannel: { __typename?: 'DeleteNotificationChannelPayload', channel?: { __typename?: 'NotificationChannel', id: string } | null, userErrors: Array<{ __typename?: 'UserError', message: string }> } };

export type TestNotificationChannelMutationVariables = Exact<{
  input: NotificationChannelRef;
}>;


export type TestNotificationChannelMutation = { __typename?: 'Mutation', testNotificationChannel: { __typename?: 'TestNotificationChannelPayload', delivered: boolean, error?: string | null, userErrors: Array<{ __typename?: 'UserError', message: string }> } };

export type QueueSlicesQueryVariables = Exact<{ [key: string]: never; }>;


export type QueueSlicesQuery = { __typename?: 'Query', slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string, viewerRole?: SliceRole | null }> } };

export type QueueLiveSubscriptionVariables = Exact<{
  sliceId: Scalars['ID']['input'];
}>;


export type QueueLiveSubscription = { __typename?: 'Subscription', queueChanged: Array<{ __typename?: 'Gpr', id: string, name: string, phase: GprPhase, version: number, priority: number, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, duration: string, queuePosition?: number | null, estimatedStartAt?: string | null, startNoLaterThan?: string | null, requester?: { __typename?: 'User', id: string, name: string } | null }> };

export type QueueOthersQueryVariables = Exact<{
  sliceId: Scalars['ID']['input'];
}>;


export type QueueOthersQuery = { __typename?: 'Query', gprs: { __typename?: 'GprConnection', nodes: Array<{ __typename?: 'Gpr', id: string, name: string, phase: GprPhase, version: number, priority: number, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, duration: string, approvalReason?: string | null, provisionedAt?: string | null, exitAt?: string | null, createdAt: string, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null, requester?: { __typename?: 'User', id: string, name: string } | null }> } };

export type QueueEventsSubscriptionVariables = Exact<{
  sliceId: Scalars['ID']['input'];
}>;


export type QueueEventsSubscription = { __typename?: 'Subscription', gprEvents: { __typename?: 'GprEvent', id: string, kind: GprEventKind, gpr?: { __typename?: 'Gpr', id: string } | null } };

export type QueueUpdateMutationVariables = Exact<{
  input: UpdateGprInput;
}>;


export type QueueUpdateMutation = { __typename?: 'Mutation', updateGpr: { __typename?: 'UpdateGprPayload', gpr?: { __typename?: 'Gpr', id: string, version: number, priority: number, nodeCount: number, duration: string } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type UsageScopesQueryVariables = Exact<{ [key: string]: never; }>;


export type UsageScopesQuery = { __typename?: 'Query', viewer: { __typename?: 'Viewer', memberships: Array<{ __typename?: 'Membership', role: SliceRole, slice?: { __typename?: 'Slice', id: string, name: string } | null }> } };

export type UsageAdminSlicesQueryVariables = Exact<{ [key: string]: never; }>;


export type UsageAdminSlicesQuery = { __typename?: 'Query', slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string }> } };

export type UsageReportQueryVariables = Exact<{
  from: Scalars['String']['input'];
  to: Scalars['String']['input'];
  slice?: InputMaybe<Scalars['ID']['input']>;
  by: Array<UsageDimension> | UsageDimension;
}>;


export type UsageReportQuery = { __typename?: 'Query', usage: { __typename?: 'UsageReport', refreshedAt?: string | null, days: Array<{ __typename?: 'UsageRow', reservedGpuHours: number, usedGpuHours: number, waitingGpuHours: number, group: { __typename?: 'UsageGroup', day?: string | null } }>, totals: Array<{ __typename?: 'UsageRow', reservedGpuHours: number, usedGpuHours: number, waitingGpuHours: number, gprsStarted: number }>, rows: Array<{ __typename?: 'UsageRow', reservedGpuHours: number, usedGpuHours: number, waitingGpuHours: number, gprsStarted: number, group: { __typename?: 'UsageGroup', sliceName?: string | null, user?: string | null, gpuShape?: string | null, clusterName?: string | null } }>, waits: Array<{ __typename?: 'WaitRow', started: number, meanWaitSeconds: number, maxWaitSeconds: number, within1hPercent: number, within24hPercent: number, group: { __typename?: 'UsageGroup', gpuShape?: string | null, priority?: number | null } }>, utilisation: Array<{ __typename?: 'UtilisationRow', gpuHours: number, busyGpuHours: number, utilisationPercent?: number | null, heldGpuHours: number, heldUtilisationPercent?: number | null, group: { __typename?: 'UsageGroup', clusterName?: string | null } }> } };

export type UsageCsvQueryVariables = Exact<{
  from: Scalars['String']['input'];
  to: Scalars['String']['input'];
  slice?: InputMaybe<Scalars['ID']['input']>;
  by: Array<UsageDimension> | UsageDimension;
}>;


export type UsageCsvQuery = { __typename?: 'Query', usage: { __typename?: 'UsageReport', usageCsv: string } };

export type RefreshUsageMutationVariables = Exact<{ [key: string]: never; }>;


export type RefreshUsageMutation = { __typename?: 'Mutation', refreshUsage: { __typename?: 'RefreshUsagePayload', refreshedAt?: string | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type WorkloadsSlicesQueryVariables = Exact<{ [key: string]: never; }>;


export type WorkloadsSlicesQuery = { __typename?: 'Query', slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string }> } };

export type WorkloadsPodsQueryVariables = Exact<{
  sliceId: Scalars['ID']['input'];
}>;


export type WorkloadsPodsQuery = { __typename?: 'Query', slice: { __typename?: 'Slice', id: string, name: string, gpuSummary?: { __typename?: 'GpuSummary', gpuCount: number, reportingGpuCount: number, idleGpuCount: number, averageUtilization?: number | null, averageMemoryUtilization?: number | null, averageTemperature?: number | null, powerWatts?: number | null, memoryUsedMib?: number | null, newestSampleAt?: string | null, hottestGpu?: { __typename?: 'Gpu', id: string, index: number, model: string, latestSample?: { __typename?: 'GpuSample', temperature: number } | null, node?: { __typename?: 'GpuNode', name: string } | null } | null, highestPowerGpu?: { __typename?: 'Gpu', id: string, index: number, model: string, latestSample?: { __typename?: 'GpuSample', power: number } | null, node?: { __typename?: 'GpuNode', name: string } | null } | null } | null }, workloads: Array<{ __typename?: 'GpuPod', uid: string, name?: string | null, namespace?: string | null, containers: Array<string>, reportedAt: string, usedMemoryMib: number, node?: { __typename?: 'GpuNode', id: string, name: string, gpuShape: string, temperatureThresholdCelsius?: number | null, powerThresholdWatts?: number | null, cluster?: { __typename?: 'Cluster', name: string } | null, allocatedGpr?: { __typename?: 'Gpr', id: string, name: string, workload?: { __typename?: 'WorkloadHints', model?: string | null, kind?: WorkloadKind | null } | null } | null } | null, gpus: Array<{ __typename?: 'Gpu', id: string, index: number, uuid: string, model: string, memoryMib: number, latestSample?: { __typename?: 'GpuSample', gpuId: string, time: string, util: number, memUtil: number, memUsedMib: number, temperature: number, power: number } | null }>, processes: Array<{ __typename?: 'GpuProcess', pid: number, usedMemoryMib?: number | null, pod?: { __typename?: 'PodRef', container?: string | null } | null }> }> };

export type WorkloadsLiveSubscriptionVariables = Exact<{
  sliceId: Scalars['ID']['input'];
}>;


export type WorkloadsLiveSubscription = { __typename?: 'Subscription', gpuMetrics: { __typename?: 'GpuMetricsUpdate', samples: Array<{ __typename?: 'GpuSample', gpuId: string, time: string, util: number, memUtil: number, memUsedMib: number, temperature: number, power: number }> } };

export type WorkspacesQueryVariables = Exact<{ [key: string]: never; }>;


export type WorkspacesQuery = { __typename?: 'Query', workspaceRequests: Array<{ __typename?: 'WorkspaceRequest', id: string, name: string, purpose: string, state: WorkspaceRequestState, requester?: string | null, maxNodesPerGpr?: number | null, gpuHourQuota?: number | null, decidedBy?: string | null, decisionReason?: string | null, createdAt: string, namespaces: Array<{ __typename?: 'RequestedNamespaceView', clusterName?: string | null, name: string }>, slice?: { __typename?: 'Slice', id: string, name: string } | null }>, workspaceClusters: Array<{ __typename?: 'ClusterChoice', id: string, name: string }> };

export type RequestWorkspaceMutationVariables = Exact<{
  input: RequestWorkspaceInput;
}>;


export type RequestWorkspaceMutation = { __typename?: 'Mutation', requestWorkspace: { __typename?: 'WorkspaceRequestPayload', request?: { __typename?: 'WorkspaceRequest', id: string } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type ApproveWorkspaceRequestMutationVariables = Exact<{
  input: ApproveWorkspaceRequestInput;
}>;


export type ApproveWorkspaceRequestMutation = { __typename?: 'Mutation', approveWorkspaceRequest: { __typename?: 'WorkspaceRequestPayload', request?: { __typename?: 'WorkspaceRequest', id: string, state: WorkspaceRequestState } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type RejectWorkspaceRequestMutationVariables = Exact<{
  input: RejectWorkspaceRequestInput;
}>;


export type RejectWorkspaceRequestMutation = { __typename?: 'Mutation', rejectWorkspaceRequest: { __typename?: 'WorkspaceRequestPayload', request?: { __typename?: 'WorkspaceRequest', id: string, state: WorkspaceRequestState } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type PersonalWorkspacePolicyQueryVariables = Exact<{ [key: string]: never; }>;


export type PersonalWorkspacePolicyQuery = { __typename?: 'Query', personalWorkspacePolicy?: { __typename?: 'PersonalWorkspacePolicy', enabled: boolean, clusterId: string, clusterName?: string | null, maxNodesPerGpr?: number | null, gpuHourQuota?: number | null } | null };

export type SetPersonalWorkspacePolicyMutationVariables = Exact<{
  input: SetPersonalWorkspacePolicyInput;
}>;


export type SetPersonalWorkspacePolicyMutation = { __typename?: 'Mutation', setPersonalWorkspacePolicy: { __typename?: 'PersonalWorkspacePolicyPayload', policy?: { __typename?: 'PersonalWorkspacePolicy', enabled: boolean } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type AdminQueueGprFragment = { __typename?: 'Gpr', id: string, name: string, version: number, phase: GprPhase, priority: number, priorityBand: PriorityBand, queuePosition?: number | null, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, duration: string, estimatedStartAt?: string | null, startNoLaterThan?: string | null, approvalReason?: string | null, extensionRequested?: string | null, createdAt: string, provisionedAt?: string | null, exitAt?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null, requester?: { __typename?: 'User', id: string, name: string } | null };

export type AdminQueueQueryVariables = Exact<{
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  gpuShape?: InputMaybe<Scalars['String']['input']>;
}>;


export type AdminQueueQuery = { __typename?: 'Query', queue: Array<{ __typename?: 'Gpr', id: string, name: string, version: number, phase: GprPhase, priority: number, priorityBand: PriorityBand, queuePosition?: number | null, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, duration: string, estimatedStartAt?: string | null, startNoLaterThan?: string | null, approvalReason?: string | null, extensionRequested?: string | null, createdAt: string, provisionedAt?: string | null, exitAt?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null, requester?: { __typename?: 'User', id: string, name: string } | null }> };

export type AdminQueueSideQueryVariables = Exact<{ [key: string]: never; }>;


export type AdminQueueSideQuery = { __typename?: 'Query', clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, pools: Array<{ __typename?: 'Pool', gpuShape: string }>, pending: { __typename?: 'GprConnection', totalCount: number, nodes: Array<{ __typename?: 'Gpr', id: string, name: string, version: number, phase: GprPhase, priority: number, priorityBand: PriorityBand, queuePosition?: number | null, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, duration: string, estimatedStartAt?: string | null, startNoLaterThan?: string | null, approvalReason?: string | null, extensionRequested?: string | null, createdAt: string, provisionedAt?: string | null, exitAt?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null, requester?: { __typename?: 'User', id: string, name: string } | null }> }, running: { __typename?: 'GprConnection', totalCount: number, nodes: Array<{ __typename?: 'Gpr', id: string, name: string, version: number, phase: GprPhase, priority: number, priorityBand: PriorityBand, queuePosition?: number | null, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, duration: string, estimatedStartAt?: string | null, startNoLaterThan?: string | null, approvalReason?: string | null, extensionRequested?: string | null, createdAt: string, provisionedAt?: string | null, exitAt?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null, requester?: { __typename?: 'User', id: string, name: string } | null }> } };

export type AdminQueueLiveSubscriptionVariables = Exact<{
  clusterId?: InputMaybe<Scalars['ID']['input']>;
  gpuShape?: InputMaybe<Scalars['String']['input']>;
}>;


export type AdminQueueLiveSubscription = { __typename?: 'Subscription', queueChanged: Array<{ __typename?: 'Gpr', id: string, name: string, version: number, phase: GprPhase, priority: number, priorityBand: PriorityBand, queuePosition?: number | null, nodeCount: number, gpusPerNode?: number | null, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, duration: string, estimatedStartAt?: string | null, startNoLaterThan?: string | null, approvalReason?: string | null, extensionRequested?: string | null, createdAt: string, provisionedAt?: string | null, exitAt?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null, requester?: { __typename?: 'User', id: string, name: string } | null }> };

export type AdminQueueSetPriorityMutationVariables = Exact<{
  input: SetGprPriorityInput;
}>;


export type AdminQueueSetPriorityMutation = { __typename?: 'Mutation', setGprPriority: { __typename?: 'SetGprPriorityPayload', gpr?: { __typename?: 'Gpr', id: string, priority: number, version: number, queuePosition?: number | null } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminQueueApproveMutationVariables = Exact<{
  input: GprDecisionInput;
}>;


export type AdminQueueApproveMutation = { __typename?: 'Mutation', approveGpr: { __typename?: 'ApproveGprPayload', gpr?: { __typename?: 'Gpr', id: string, phase: GprPhase, version: number } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminQueueRejectMutationVariables = Exact<{
  input: GprDecisionInput;
}>;


export type AdminQueueRejectMutation = { __typename?: 'Mutation', rejectGpr: { __typename?: 'RejectGprPayload', gpr?: { __typename?: 'Gpr', id: string, phase: GprPhase, version: number } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminQueueEarlyReleaseMutationVariables = Exact<{
  input: GprActionInput;
}>;


export type AdminQueueEarlyReleaseMutation = { __typename?: 'Mutation', earlyReleaseGpr: { __typename?: 'EarlyReleaseGprPayload', gpr?: { __typename?: 'Gpr', id: string, phase: GprPhase, version: number } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminClustersQueryVariables = Exact<{ [key: string]: never; }>;


export type AdminClustersQuery = { __typename?: 'Query', clusters: Array<{ __typename?: 'Cluster', id: string, name: string, provider: ClusterProvider, cloud?: string | null, region?: string | null, health: Health, registrationStatus: RegistrationStatus, lastContactAt?: string | null, pools: Array<{ __typename?: 'Pool', totalNodes: number, freeNodes: number, reservedNodes: number, unavailableNodes: number, gpusPerNode: number }> }> };

export type AdminClusterDetailQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type AdminClusterDetailQuery = { __typename?: 'Query', cluster: { __typename?: 'Cluster', id: string, name: string, pools: Array<{ __typename?: 'Pool', instanceType: string, gpuShape: string, gpusPerNode: number, gpuMemoryMib: number, totalNodes: number, freeNodes: number, reservedNodes: number, unavailableNodes: number }>, nodes: { __typename?: 'GpuNodeConnection', totalCount: number, nodes: Array<{ __typename?: 'GpuNode', id: string, name: string, instanceType: string, gpuShape: string, gpusPerNode: number, gpuMemoryMib: number, health: Health, state: NodeState, cordonedAt?: string | null, cordonReason?: string | null, cordonedBy?: string | null, zone?: string | null, utilization?: number | null, lastHeartbeatAt?: string | null, allocatedGpr?: { __typename?: 'Gpr', id: string, name: string, slice?: { __typename?: 'Slice', id: string, name: string } | null } | null }> } }, queue: Array<{ __typename?: 'Gpr', id: string, name: string, phase: GprPhase, nodeCount: number, duration: string, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, estimatedStartAt?: string | null, startNoLaterThan?: string | null, provisionedAt?: string | null, exitAt?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null }>, running: { __typename?: 'GprConnection', nodes: Array<{ __typename?: 'Gpr', id: string, name: string, phase: GprPhase, nodeCount: number, duration: string, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, estimatedStartAt?: string | null, startNoLaterThan?: string | null, provisionedAt?: string | null, exitAt?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null }> } };

export type AdminClusterPlannedFragment = { __typename?: 'Gpr', id: string, name: string, phase: GprPhase, nodeCount: number, duration: string, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, estimatedStartAt?: string | null, startNoLaterThan?: string | null, provisionedAt?: string | null, exitAt?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null };

export type AdminClustersInventorySubscriptionVariables = Exact<{
  clusterId?: InputMaybe<Scalars['ID']['input']>;
}>;


export type AdminClustersInventorySubscription = { __typename?: 'Subscription', inventoryChanged: { __typename?: 'InventoryChange', at: string, nodeId: string, kind: InventoryChangeKind } };

export type AdminClustersQueueSubscriptionVariables = Exact<{
  clusterId?: InputMaybe<Scalars['ID']['input']>;
}>;


export type AdminClustersQueueSubscription = { __typename?: 'Subscription', queueChanged: Array<{ __typename?: 'Gpr', id: string }> };

export type AdminDashboardAlertFragment = { __typename?: 'Alert', id: string, kind: AlertKind, severity: AlertSeverity, message: string, open: boolean, raisedAt: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null, node?: { __typename?: 'GpuNode', id: string, name: string } | null, gpr?: { __typename?: 'Gpr', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null };

export type AdminDashboardQueuedFragment = { __typename?: 'Gpr', id: string, name: string, nodeCount: number, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null };

export type AdminDashboardQueryVariables = Exact<{ [key: string]: never; }>;


export type AdminDashboardQuery = { __typename?: 'Query', pools: Array<{ __typename?: 'Pool', instanceType: string, gpuShape: string, gpusPerNode: number, totalNodes: number, freeNodes: number, reservedNodes: number, unavailableNodes: number, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, nodes: { __typename?: 'GpuNodeConnection', totalCount: number, nodes: Array<{ __typename?: 'GpuNode', id: string, gpuShape: string, utilization?: number | null, cluster?: { __typename?: 'Cluster', id: string } | null }> }, queue: Array<{ __typename?: 'Gpr', id: string, name: string, nodeCount: number, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, pending: { __typename?: 'GprConnection', totalCount: number }, alerts: { __typename?: 'AlertConnection', totalCount: number, nodes: Array<{ __typename?: 'Alert', id: string, kind: AlertKind, severity: AlertSeverity, message: string, open: boolean, raisedAt: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null, node?: { __typename?: 'GpuNode', id: string, name: string } | null, gpr?: { __typename?: 'Gpr', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null }> } };

export type AdminDashboardInventorySubscriptionVariables = Exact<{ [key: string]: never; }>;


export type AdminDashboardInventorySubscription = { __typename?: 'Subscription', inventoryChanged: { __typename?: 'InventoryChange', at: string, nodeId: string } };

export type AdminDashboardQueueLiveSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type AdminDashboardQueueLiveSubscription = { __typename?: 'Subscription', queueChanged: Array<{ __typename?: 'Gpr', id: string, name: string, nodeCount: number, gpuShape?: string | null, instanceType?: string | null, assignedGpuShape?: string | null, assignedInstanceType?: string | null, assignedCluster?: { __typename?: 'Cluster', id: string, name: string } | null }> };

export type AdminDashboardAlertsSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type AdminDashboardAlertsSubscription = { __typename?: 'Subscription', alerts: { __typename?: 'Alert', id: string, kind: AlertKind, severity: AlertSeverity, message: string, open: boolean, raisedAt: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null, node?: { __typename?: 'GpuNode', id: string, name: string } | null, gpr?: { __typename?: 'Gpr', id: string, name: string } | null, slice?: { __typename?: 'Slice', id: string, name: string } | null } };

export type AdminDashboardUsageQueryVariables = Exact<{
  from: Scalars['String']['input'];
  to: Scalars['String']['input'];
}>;


export type AdminDashboardUsageQuery = { __typename?: 'Query', usage: { __typename?: 'UsageReport', days: Array<{ __typename?: 'UsageRow', reservedGpuHours: number, usedGpuHours: number, waitingGpuHours: number, group: { __typename?: 'UsageGroup', day?: string | null } }> } };

export type AdminMaintenanceWindowsQueryVariables = Exact<{
  clusterId: Scalars['ID']['input'];
}>;


export type AdminMaintenanceWindowsQuery = { __typename?: 'Query', maintenanceWindows: Array<{ __typename?: 'MaintenanceWindow', id: string, state: MaintenanceWindowState, startsAt: string, endsAt: string, reason: string, createdBy: string, node?: { __typename?: 'GpuNode', id: string, name: string } | null }> };

export type AdminPlanMaintenanceMutationVariables = Exact<{
  input: PlanMaintenanceInput;
}>;


export type AdminPlanMaintenanceMutation = { __typename?: 'Mutation', planMaintenance: { __typename?: 'PlanMaintenancePayload', window?: { __typename?: 'MaintenanceWindow', id: string } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type AdminCancelMaintenanceMutationVariables = Exact<{
  input: CancelMaintenanceInput;
}>;


export type AdminCancelMaintenanceMutation = { __typename?: 'Mutation', cancelMaintenance: { __typename?: 'CancelMaintenancePayload', window?: { __typename?: 'MaintenanceWindow', id: string } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type AdminCordonNodeMutationVariables = Exact<{
  input: CordonNodeInput;
}>;


export type AdminCordonNodeMutation = { __typename?: 'Mutation', cordonNode: { __typename?: 'CordonNodePayload', node?: { __typename?: 'GpuNode', id: string, state: NodeState, cordonReason?: string | null } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type AdminDrainNodeMutationVariables = Exact<{
  input: DrainNodeInput;
}>;


export type AdminDrainNodeMutation = { __typename?: 'Mutation', drainNode: { __typename?: 'DrainNodePayload', node?: { __typename?: 'GpuNode', id: string, state: NodeState, cordonReason?: string | null } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type AdminUncordonNodeMutationVariables = Exact<{
  input: UncordonNodeInput;
}>;


export type AdminUncordonNodeMutation = { __typename?: 'Mutation', uncordonNode: { __typename?: 'UncordonNodePayload', node?: { __typename?: 'GpuNode', id: string, state: NodeState } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type AdminSsoRulesQueryVariables = Exact<{ [key: string]: never; }>;


export type AdminSsoRulesQuery = { __typename?: 'Query', ssoGroupRules: Array<{ __typename?: 'SsoGroupRule', id: string, group: string, role?: SliceRole | null, grantsAdmin: boolean, createdAt: string, slice?: { __typename?: 'Slice', id: string, name: string } | null }>, slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string }> } };

export type AdminSsoCreateRuleMutationVariables = Exact<{
  input: CreateSsoGroupRuleInput;
}>;


export type AdminSsoCreateRuleMutation = { __typename?: 'Mutation', createSsoGroupRule: { __typename?: 'SsoGroupRulePayload', rule?: { __typename?: 'SsoGroupRule', id: string } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type AdminSsoDeleteRuleMutationVariables = Exact<{
  input: SsoGroupRuleRef;
}>;


export type AdminSsoDeleteRuleMutation = { __typename?: 'Mutation', deleteSsoGroupRule: { __typename?: 'SsoGroupRulePayload', rule?: { __typename?: 'SsoGroupRule', id: string } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string }> } };

export type AdminSliceFragment = { __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } };

export type AdminSlicesQueryVariables = Exact<{ [key: string]: never; }>;


export type AdminSlicesQuery = { __typename?: 'Query', slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } }> }, users: Array<{ __typename?: 'User', id: string, name: string }>, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, pools: Array<{ __typename?: 'Pool', gpuShape: string }> };

export type AdminSlicesCreateMutationVariables = Exact<{
  input: CreateSliceInput;
}>;


export type AdminSlicesCreateMutation = { __typename?: 'Mutation', createSlice: { __typename?: 'CreateSlicePayload', slice?: { __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminSlicesUpdateMutationVariables = Exact<{
  input: UpdateSliceInput;
}>;


export type AdminSlicesUpdateMutation = { __typename?: 'Mutation', updateSlice: { __typename?: 'UpdateSlicePayload', slice?: { __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminSlicesAddNamespaceMutationVariables = Exact<{
  input: SliceNamespaceInput;
}>;


export type AdminSlicesAddNamespaceMutation = { __typename?: 'Mutation', addSliceNamespace: { __typename?: 'SliceNamespacePayload', slice?: { __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminSlicesRemoveNamespaceMutationVariables = Exact<{
  input: SliceNamespaceInput;
}>;


export type AdminSlicesRemoveNamespaceMutation = { __typename?: 'Mutation', removeSliceNamespace: { __typename?: 'SliceNamespacePayload', slice?: { __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminSlicesAddMemberMutationVariables = Exact<{
  input: AddSliceMemberInput;
}>;


export type AdminSlicesAddMemberMutation = { __typename?: 'Mutation', addSliceMember: { __typename?: 'SliceMemberPayload', slice?: { __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminSlicesRemoveMemberMutationVariables = Exact<{
  input: RemoveSliceMemberInput;
}>;


export type AdminSlicesRemoveMemberMutation = { __typename?: 'Mutation', removeSliceMember: { __typename?: 'SliceMemberPayload', slice?: { __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminSlicesSetPolicyMutationVariables = Exact<{
  input: SetSlicePolicyInput;
}>;


export type AdminSlicesSetPolicyMutation = { __typename?: 'Mutation', setSlicePolicy: { __typename?: 'SetSlicePolicyPayload', slice?: { __typename?: 'Slice', id: string, name: string, description?: string | null, createdAt: string, updatedAt: string, clusters: Array<{ __typename?: 'Cluster', id: string, name: string }>, namespaces: Array<{ __typename?: 'SliceNamespace', id: string, name: string, cluster?: { __typename?: 'Cluster', id: string, name: string } | null }>, members: Array<{ __typename?: 'SliceMember', role: SliceRole, user?: { __typename?: 'User', id: string, name: string } | null }>, policy: { __typename?: 'SlicePolicy', allowedShapes: Array<string>, maxNodesPerGpr?: number | null, priorityMin: number, priorityMax: number, maxDuration?: string | null, defaultIdleTimeout?: string | null, autoEviction: boolean, requeueOnEviction: boolean, underuseBelowPercent?: number | null, underusePeriod: string } } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminTokensQueryVariables = Exact<{ [key: string]: never; }>;


export type AdminTokensQuery = { __typename?: 'Query', tokens: { __typename?: 'AccessTokenConnection', totalCount: number, nodes: Array<{ __typename?: 'AccessToken', id: string, name: string, role: Role, createdAt: string, expiresAt: string, revokedAt?: string | null, nodeName?: string | null, cluster?: { __typename?: 'Cluster', id: string, name: string } | null, user?: { __typename?: 'User', id: string, name: string } | null, sliceScopes?: Array<{ __typename?: 'TokenScope', role: SliceRole, slice?: { __typename?: 'Slice', id: string, name: string } | null }> | null }> }, users: Array<{ __typename?: 'User', id: string, name: string, role: Role }>, slices: { __typename?: 'SliceConnection', nodes: Array<{ __typename?: 'Slice', id: string, name: string }> } };

export type AdminTokensCreateMutationVariables = Exact<{
  input: CreateTokenInput;
}>;


export type AdminTokensCreateMutation = { __typename?: 'Mutation', createToken: { __typename?: 'CreateTokenPayload', secret?: string | null, token?: { __typename?: 'AccessToken', id: string, name: string, expiresAt: string } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminTokensRevokeMutationVariables = Exact<{
  input: RevokeTokenInput;
}>;


export type AdminTokensRevokeMutation = { __typename?: 'Mutation', revokeToken: { __typename?: 'RevokeTokenPayload', token?: { __typename?: 'AccessToken', id: string, revokedAt?: string | null } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminWhatIfQueryVariables = Exact<{
  input: WhatIfInput;
}>;


export type AdminWhatIfQuery = { __typename?: 'Query', whatIf: Array<{ __typename?: 'WhatIfMove', promiseBefore?: string | null, promiseAfter?: string | null, expectedAfter?: string | null, promiseShiftSeconds?: number | null, gpr?: { __typename?: 'Gpr', id: string, name: string, slice?: { __typename?: 'Slice', name: string } | null } | null }> };

export type UserExtendRoomQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type UserExtendRoomQuery = { __typename?: 'Query', gprExtensionRoom: { __typename?: 'GprExtensionRoom', maxNow: string, withoutApproval: string, limitedBy?: string | null } };

export type UserExtendGprMutationVariables = Exact<{
  input: ExtendGprInput;
}>;


export type UserExtendGprMutation = { __typename?: 'Mutation', extendGpr: { __typename?: 'ExtendGprPayload', gpr?: { __typename?: 'Gpr', id: string, version: number, exitAt?: string | null, extendedBy: string, extensionRequested?: string | null } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type UserGprActionsCancelMutationVariables = Exact<{
  input: GprActionInput;
}>;


export type UserGprActionsCancelMutation = { __typename?: 'Mutation', cancelGpr: { __typename?: 'CancelGprPayload', gpr?: { __typename?: 'Gpr', id: string, phase: GprPhase, version: number } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type UserGprActionsEarlyReleaseMutationVariables = Exact<{
  input: GprActionInput;
}>;


export type UserGprActionsEarlyReleaseMutation = { __typename?: 'Mutation', earlyReleaseGpr: { __typename?: 'EarlyReleaseGprPayload', gpr?: { __typename?: 'Gpr', id: string, phase: GprPhase, version: number, exitAt?: string | null } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type AdminEvictGprMutationVariables = Exact<{
  input: EvictGprInput;
}>;


export type AdminEvictGprMutation = { __typename?: 'Mutation', evictGpr: { __typename?: 'EvictGprPayload', gpr?: { __typename?: 'Gpr', id: string, phase: GprPhase, version: number, reason?: string | null } | null, userErrors: Array<{ __typename?: 'UserError', field: Array<string>, message: string, code: ErrorCode }> } };

export type ViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ViewerQuery = { __typename?: 'Query', viewer: { __typename?: 'Viewer', id: string, name: string, role: Role, memberships: Array<{ __typename?: 'Membership', role: SliceRole, slice?: { __typename?: 'Slice', id: string, name: string } | null }> } };

export const AdminQueueGprFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminQueueGpr"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityBand"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"requester"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"approvalReason"}},{"kind":"Field","name":{"kind":"Name","value":"extensionRequested"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"provisionedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}}]}}]} as unknown as DocumentNode<AdminQueueGprFragment, unknown>;
export const AdminClusterPlannedFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminClusterPlanned"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"provisionedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}}]}}]} as unknown as DocumentNode<AdminClusterPlannedFragment, unknown>;
export const AdminDashboardAlertFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminDashboardAlert"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Alert"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"severity"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"open"}},{"kind":"Field","name":{"kind":"Name","value":"raisedAt"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<AdminDashboardAlertFragment, unknown>;
export const AdminDashboardQueuedFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminDashboardQueued"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<AdminDashboardQueuedFragment, unknown>;
export const AdminSliceFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSliceFragment, unknown>;
export const BellEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"BellEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gprEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<BellEventsSubscription, BellEventsSubscriptionVariables>;
export const BellAlertsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"BellAlerts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"alerts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"severity"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"open"}},{"kind":"Field","name":{"kind":"Name","value":"raisedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clearedAt"}},{"kind":"Field","name":{"kind":"Name","value":"resolution"}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpu"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]}}]} as unknown as DocumentNode<BellAlertsSubscription, BellAlertsSubscriptionVariables>;
export const CreateGprSlicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CreateGprSlices"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"viewerRole"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"maxGpusPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"maxIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}}]}}]}}]}}]}}]} as unknown as DocumentNode<CreateGprSlicesQuery, CreateGprSlicesQueryVariables>;
export const CreateGprPoolsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CreateGprPools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"freeNodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalNodes"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<CreateGprPoolsQuery, CreateGprPoolsQueryVariables>;
export const CreateGprWaitTimesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CreateGprWaitTimes"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"WaitTimeInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"waitTimeEstimates"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"freeNodes"}},{"kind":"Field","name":{"kind":"Name","value":"healthyNodes"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedWait"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"startRange"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"p10"}},{"kind":"Field","name":{"kind":"Name","value":"p90"}}]}}]}}]}}]} as unknown as DocumentNode<CreateGprWaitTimesQuery, CreateGprWaitTimesQueryVariables>;
export const CreateGprProfilesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"CreateGprProfiles"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gprTemplates"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"idleTimeout"}}]}}]}}]} as unknown as DocumentNode<CreateGprProfilesQuery, CreateGprProfilesQueryVariables>;
export const CreateGprSubmitDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateGprSubmit"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateGprInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<CreateGprSubmitMutation, CreateGprSubmitMutationVariables>;
export const EventsSearchDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"EventsSearch"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"text"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"kinds"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"GprEventKind"}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"gprId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"since"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"until"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"before"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gprEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"text"},"value":{"kind":"Variable","name":{"kind":"Name","value":"text"}}},{"kind":"Argument","name":{"kind":"Name","value":"kinds"},"value":{"kind":"Variable","name":{"kind":"Name","value":"kinds"}}},{"kind":"Argument","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}}},{"kind":"Argument","name":{"kind":"Name","value":"gprId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"gprId"}}},{"kind":"Argument","name":{"kind":"Name","value":"since"},"value":{"kind":"Variable","name":{"kind":"Name","value":"since"}}},{"kind":"Argument","name":{"kind":"Name","value":"until"},"value":{"kind":"Variable","name":{"kind":"Name","value":"until"}}},{"kind":"Argument","name":{"kind":"Name","value":"last"},"value":{"kind":"IntValue","value":"50"}},{"kind":"Argument","name":{"kind":"Name","value":"before"},"value":{"kind":"Variable","name":{"kind":"Name","value":"before"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasPreviousPage"}},{"kind":"Field","name":{"kind":"Name","value":"startCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]} as unknown as DocumentNode<EventsSearchQuery, EventsSearchQueryVariables>;
export const EventsSlicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"EventsSlices"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<EventsSlicesQuery, EventsSlicesQueryVariables>;
export const GprDetailDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"GprDetail"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"approval"}},{"kind":"Field","name":{"kind":"Name","value":"approvalReason"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityBand"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"preferredClusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"idleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"preemptible"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"earliestStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"provisionedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}},{"kind":"Field","name":{"kind":"Name","value":"extendedBy"}},{"kind":"Field","name":{"kind":"Name","value":"extensionRequested"}},{"kind":"Field","name":{"kind":"Name","value":"workload"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"modelBillions"}},{"kind":"Field","name":{"kind":"Name","value":"framework"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"rdma"}}]}},{"kind":"Field","name":{"kind":"Name","value":"completedAt"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartMovesOn"}},{"kind":"Field","name":{"kind":"Name","value":"startRange"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"p10"}},{"kind":"Field","name":{"kind":"Name","value":"p90"}}]}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThanMovesLaterOn"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"releaseReason"}},{"kind":"Field","name":{"kind":"Name","value":"kubernetesResource"}},{"kind":"Field","name":{"kind":"Name","value":"preemptedBy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"viewerRole"}}]}},{"kind":"Field","name":{"kind":"Name","value":"requester"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"labels"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"value"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"utilization"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"provisioningSteps"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"operation"}},{"kind":"Field","name":{"kind":"Name","value":"step"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"attempts"}},{"kind":"Field","name":{"kind":"Name","value":"startedAt"}},{"kind":"Field","name":{"kind":"Name","value":"finishedAt"}}]}}]}}]}}]} as unknown as DocumentNode<GprDetailQuery, GprDetailQueryVariables>;
export const GprDetailEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"GprDetailEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gprEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"gprId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"sequence"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<GprDetailEventsQuery, GprDetailEventsQueryVariables>;
export const GprDetailLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"GprDetailLive"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"gprId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gprEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"gprId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"gprId"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"sequence"}}]}}]}}]} as unknown as DocumentNode<GprDetailLiveSubscription, GprDetailLiveSubscriptionVariables>;
export const GpuDashboardInfoDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"GpuDashboardInfo"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpu"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"uuid"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"migEnabled"}},{"kind":"Field","name":{"kind":"Name","value":"latestSample"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"time"}},{"kind":"Field","name":{"kind":"Name","value":"util"}},{"kind":"Field","name":{"kind":"Name","value":"memUtil"}},{"kind":"Field","name":{"kind":"Name","value":"memUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"temperature"}},{"kind":"Field","name":{"kind":"Name","value":"power"}},{"kind":"Field","name":{"kind":"Name","value":"smClockMhz"}},{"kind":"Field","name":{"kind":"Name","value":"eccCorrected"}},{"kind":"Field","name":{"kind":"Name","value":"eccUncorrected"}},{"kind":"Field","name":{"kind":"Name","value":"xidErrors"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"driverVersion"}},{"kind":"Field","name":{"kind":"Name","value":"cudaVersion"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeatAt"}},{"kind":"Field","name":{"kind":"Name","value":"temperatureThresholdCelsius"}},{"kind":"Field","name":{"kind":"Name","value":"powerThresholdWatts"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"allocatedGpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"processes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pid"}},{"kind":"Field","name":{"kind":"Name","value":"usedMemoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"reportedAt"}},{"kind":"Field","name":{"kind":"Name","value":"pod"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"uid"}},{"kind":"Field","name":{"kind":"Name","value":"namespace"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"container"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<GpuDashboardInfoQuery, GpuDashboardInfoQueryVariables>;
export const GpuDashboardHistoryDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"GpuDashboardHistory"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"step"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Duration"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpu"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"metrics"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"step"},"value":{"kind":"Variable","name":{"kind":"Name","value":"step"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"time"}},{"kind":"Field","name":{"kind":"Name","value":"util"}},{"kind":"Field","name":{"kind":"Name","value":"memUtil"}},{"kind":"Field","name":{"kind":"Name","value":"memUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"temperature"}},{"kind":"Field","name":{"kind":"Name","value":"power"}}]}}]}}]}}]}}]} as unknown as DocumentNode<GpuDashboardHistoryQuery, GpuDashboardHistoryQueryVariables>;
export const GpuDashboardLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"GpuDashboardLive"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"gpuId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"interval"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Duration"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuMetrics"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"gpuId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"gpuId"}}},{"kind":"Argument","name":{"kind":"Name","value":"interval"},"value":{"kind":"Variable","name":{"kind":"Name","value":"interval"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"samples"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuId"}},{"kind":"Field","name":{"kind":"Name","value":"time"}},{"kind":"Field","name":{"kind":"Name","value":"util"}},{"kind":"Field","name":{"kind":"Name","value":"memUtil"}},{"kind":"Field","name":{"kind":"Name","value":"memUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"temperature"}},{"kind":"Field","name":{"kind":"Name","value":"power"}}]}}]}}]}}]} as unknown as DocumentNode<GpuDashboardLiveSubscription, GpuDashboardLiveSubscriptionVariables>;
export const GpusTableDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"GpusTable"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpus"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"orderBy"},"value":{"kind":"EnumValue","value":"HOT_SPOTS_FIRST"}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"uuid"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"latestSample"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"time"}},{"kind":"Field","name":{"kind":"Name","value":"util"}},{"kind":"Field","name":{"kind":"Name","value":"memUtil"}},{"kind":"Field","name":{"kind":"Name","value":"memUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"temperature"}},{"kind":"Field","name":{"kind":"Name","value":"power"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"temperatureThresholdCelsius"}},{"kind":"Field","name":{"kind":"Name","value":"powerThresholdWatts"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"allocatedGpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<GpusTableQuery, GpusTableQueryVariables>;
export const HomeOverviewDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"HomeOverview"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"viewerRole"}},{"kind":"Field","name":{"kind":"Name","value":"gpuSummary"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"averageUtilization"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"gprs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"requester"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"alerts"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"open"},"value":{"kind":"BooleanValue","value":true}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"severity"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"open"}},{"kind":"Field","name":{"kind":"Name","value":"raisedAt"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]} as unknown as DocumentNode<HomeOverviewQuery, HomeOverviewQueryVariables>;
export const HomeAlertsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"HomeAlerts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"alerts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"severity"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"open"}},{"kind":"Field","name":{"kind":"Name","value":"raisedAt"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<HomeAlertsSubscription, HomeAlertsSubscriptionVariables>;
export const NotificationsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Notifications"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"notificationOptions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"publicTargetsOnly"}},{"kind":"Field","name":{"kind":"Name","value":"defaultMilestones"}}]}},{"kind":"Field","name":{"kind":"Name","value":"notificationChannels"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"milestones"}},{"kind":"Field","name":{"kind":"Name","value":"estimateMovedMinutes"}},{"kind":"Field","name":{"kind":"Name","value":"enabled"}},{"kind":"Field","name":{"kind":"Name","value":"signed"}},{"kind":"Field","name":{"kind":"Name","value":"failing"}},{"kind":"Field","name":{"kind":"Name","value":"failuresInARow"}},{"kind":"Field","name":{"kind":"Name","value":"lastError"}},{"kind":"Field","name":{"kind":"Name","value":"lastDeliveredAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastFailedAt"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"deliveries"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"10"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"milestone"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"attempts"}},{"kind":"Field","name":{"kind":"Name","value":"lastError"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"deliveredAt"}},{"kind":"Field","name":{"kind":"Name","value":"nextAttemptAt"}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"memberships"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<NotificationsQuery, NotificationsQueryVariables>;
export const CreateNotificationChannelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateNotificationChannel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateNotificationChannelInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createNotificationChannel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"channel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"signingSecret"}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<CreateNotificationChannelMutation, CreateNotificationChannelMutationVariables>;
export const UpdateNotificationChannelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateNotificationChannel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateNotificationChannelInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateNotificationChannel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"channel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"enabled"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<UpdateNotificationChannelMutation, UpdateNotificationChannelMutationVariables>;
export const DeleteNotificationChannelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteNotificationChannel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"NotificationChannelRef"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteNotificationChannel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"channel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<DeleteNotificationChannelMutation, DeleteNotificationChannelMutationVariables>;
export const TestNotificationChannelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"TestNotificationChannel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"NotificationChannelRef"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"testNotificationChannel"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"delivered"}},{"kind":"Field","name":{"kind":"Name","value":"error"}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<TestNotificationChannelMutation, TestNotificationChannelMutationVariables>;
export const QueueSlicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"QueueSlices"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"viewerRole"}}]}}]}}]}}]} as unknown as DocumentNode<QueueSlicesQuery, QueueSlicesQueryVariables>;
export const QueueLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"QueueLive"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queueChanged"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"requester"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<QueueLiveSubscription, QueueLiveSubscriptionVariables>;
export const QueueOthersDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"QueueOthers"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gprs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}}},{"kind":"ObjectField","name":{"kind":"Name","value":"phases"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"PENDING_APPROVAL"},{"kind":"EnumValue","value":"PROVISIONING"},{"kind":"EnumValue","value":"PROVISIONED"},{"kind":"EnumValue","value":"RELEASING"}]}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"approvalReason"}},{"kind":"Field","name":{"kind":"Name","value":"provisionedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"requester"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]} as unknown as DocumentNode<QueueOthersQuery, QueueOthersQueryVariables>;
export const QueueEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"QueueEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gprEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]}}]} as unknown as DocumentNode<QueueEventsSubscription, QueueEventsSubscriptionVariables>;
export const QueueUpdateDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"QueueUpdate"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateGprInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"duration"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<QueueUpdateMutation, QueueUpdateMutationVariables>;
export const UsageScopesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UsageScopes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"memberships"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]} as unknown as DocumentNode<UsageScopesQuery, UsageScopesQueryVariables>;
export const UsageAdminSlicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UsageAdminSlices"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<UsageAdminSlicesQuery, UsageAdminSlicesQueryVariables>;
export const UsageReportDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UsageReport"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slice"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"by"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UsageDimension"}}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slice"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refreshedAt"}},{"kind":"Field","alias":{"kind":"Name","value":"days"},"name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"DAY"}]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"group"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}}]}},{"kind":"Field","name":{"kind":"Name","value":"reservedGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"usedGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"waitingGpuHours"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"totals"},"name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"ListValue","values":[]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reservedGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"usedGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"waitingGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"gprsStarted"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"rows"},"name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"by"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"group"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sliceName"}},{"kind":"Field","name":{"kind":"Name","value":"user"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"clusterName"}}]}},{"kind":"Field","name":{"kind":"Name","value":"reservedGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"usedGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"waitingGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"gprsStarted"}}]}},{"kind":"Field","name":{"kind":"Name","value":"waits"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"GPU_SHAPE"},{"kind":"EnumValue","value":"PRIORITY"}]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"group"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}}]}},{"kind":"Field","name":{"kind":"Name","value":"started"}},{"kind":"Field","name":{"kind":"Name","value":"meanWaitSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"maxWaitSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"within1hPercent"}},{"kind":"Field","name":{"kind":"Name","value":"within24hPercent"}}]}},{"kind":"Field","name":{"kind":"Name","value":"utilisation"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"CLUSTER"}]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"group"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"clusterName"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"busyGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"utilisationPercent"}},{"kind":"Field","name":{"kind":"Name","value":"heldGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"heldUtilisationPercent"}}]}}]}}]}}]} as unknown as DocumentNode<UsageReportQuery, UsageReportQueryVariables>;
export const UsageCsvDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UsageCsv"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slice"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"by"}},"type":{"kind":"NonNullType","type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UsageDimension"}}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}},{"kind":"Argument","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slice"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usageCsv"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"by"}}}]}]}}]}}]} as unknown as DocumentNode<UsageCsvQuery, UsageCsvQueryVariables>;
export const RefreshUsageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RefreshUsage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refreshUsage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"refreshedAt"}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<RefreshUsageMutation, RefreshUsageMutationVariables>;
export const WorkloadsSlicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WorkloadsSlices"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<WorkloadsSlicesQuery, WorkloadsSlicesQueryVariables>;
export const WorkloadsPodsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WorkloadsPods"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slice"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"gpuSummary"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"reportingGpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"idleGpuCount"}},{"kind":"Field","name":{"kind":"Name","value":"averageUtilization"}},{"kind":"Field","name":{"kind":"Name","value":"averageMemoryUtilization"}},{"kind":"Field","name":{"kind":"Name","value":"averageTemperature"}},{"kind":"Field","name":{"kind":"Name","value":"powerWatts"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"newestSampleAt"}},{"kind":"Field","name":{"kind":"Name","value":"hottestGpu"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"latestSample"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"temperature"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"highestPowerGpu"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"latestSample"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"power"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"workloads"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"uid"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"namespace"}},{"kind":"Field","name":{"kind":"Name","value":"containers"}},{"kind":"Field","name":{"kind":"Name","value":"reportedAt"}},{"kind":"Field","name":{"kind":"Name","value":"usedMemoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"temperatureThresholdCelsius"}},{"kind":"Field","name":{"kind":"Name","value":"powerThresholdWatts"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"allocatedGpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"workload"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"uuid"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"latestSample"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuId"}},{"kind":"Field","name":{"kind":"Name","value":"time"}},{"kind":"Field","name":{"kind":"Name","value":"util"}},{"kind":"Field","name":{"kind":"Name","value":"memUtil"}},{"kind":"Field","name":{"kind":"Name","value":"memUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"temperature"}},{"kind":"Field","name":{"kind":"Name","value":"power"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"processes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pid"}},{"kind":"Field","name":{"kind":"Name","value":"usedMemoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"pod"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"container"}}]}}]}}]}}]}}]} as unknown as DocumentNode<WorkloadsPodsQuery, WorkloadsPodsQueryVariables>;
export const WorkloadsLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"WorkloadsLive"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuMetrics"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"sliceId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"sliceId"}}},{"kind":"Argument","name":{"kind":"Name","value":"interval"},"value":{"kind":"StringValue","value":"PT2S","block":false}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"samples"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuId"}},{"kind":"Field","name":{"kind":"Name","value":"time"}},{"kind":"Field","name":{"kind":"Name","value":"util"}},{"kind":"Field","name":{"kind":"Name","value":"memUtil"}},{"kind":"Field","name":{"kind":"Name","value":"memUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"temperature"}},{"kind":"Field","name":{"kind":"Name","value":"power"}}]}}]}}]}}]} as unknown as DocumentNode<WorkloadsLiveSubscription, WorkloadsLiveSubscriptionVariables>;
export const WorkspacesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Workspaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"workspaceRequests"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"purpose"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"requester"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"gpuHourQuota"}},{"kind":"Field","name":{"kind":"Name","value":"decidedBy"}},{"kind":"Field","name":{"kind":"Name","value":"decisionReason"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"clusterName"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"workspaceClusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<WorkspacesQuery, WorkspacesQueryVariables>;
export const RequestWorkspaceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RequestWorkspace"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RequestWorkspaceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"requestWorkspace"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<RequestWorkspaceMutation, RequestWorkspaceMutationVariables>;
export const ApproveWorkspaceRequestDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ApproveWorkspaceRequest"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ApproveWorkspaceRequestInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"approveWorkspaceRequest"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<ApproveWorkspaceRequestMutation, ApproveWorkspaceRequestMutationVariables>;
export const RejectWorkspaceRequestDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RejectWorkspaceRequest"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RejectWorkspaceRequestInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rejectWorkspaceRequest"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"request"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<RejectWorkspaceRequestMutation, RejectWorkspaceRequestMutationVariables>;
export const PersonalWorkspacePolicyDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"PersonalWorkspacePolicy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"personalWorkspacePolicy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"enabled"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"clusterName"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"gpuHourQuota"}}]}}]}}]} as unknown as DocumentNode<PersonalWorkspacePolicyQuery, PersonalWorkspacePolicyQueryVariables>;
export const SetPersonalWorkspacePolicyDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetPersonalWorkspacePolicy"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SetPersonalWorkspacePolicyInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setPersonalWorkspacePolicy"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"enabled"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<SetPersonalWorkspacePolicyMutation, SetPersonalWorkspacePolicyMutationVariables>;
export const AdminQueueDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminQueue"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"gpuShape"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queue"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}},{"kind":"Argument","name":{"kind":"Name","value":"gpuShape"},"value":{"kind":"Variable","name":{"kind":"Name","value":"gpuShape"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"500"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminQueueGpr"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminQueueGpr"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityBand"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"requester"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"approvalReason"}},{"kind":"Field","name":{"kind":"Name","value":"extensionRequested"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"provisionedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}}]}}]} as unknown as DocumentNode<AdminQueueQuery, AdminQueueQueryVariables>;
export const AdminQueueSideDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminQueueSide"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"pending"},"name":{"kind":"Name","value":"gprs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"awaitingDecision"},"value":{"kind":"BooleanValue","value":true}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminQueueGpr"}}]}}]}},{"kind":"Field","alias":{"kind":"Name","value":"running"},"name":{"kind":"Name","value":"gprs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"phases"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"PROVISIONED"}]}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminQueueGpr"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminQueueGpr"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityBand"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"requester"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"approvalReason"}},{"kind":"Field","name":{"kind":"Name","value":"extensionRequested"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"provisionedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}}]}}]} as unknown as DocumentNode<AdminQueueSideQuery, AdminQueueSideQueryVariables>;
export const AdminQueueLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"AdminQueueLive"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"gpuShape"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queueChanged"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}},{"kind":"Argument","name":{"kind":"Name","value":"gpuShape"},"value":{"kind":"Variable","name":{"kind":"Name","value":"gpuShape"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"500"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminQueueGpr"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminQueueGpr"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityBand"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"requester"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"approvalReason"}},{"kind":"Field","name":{"kind":"Name","value":"extensionRequested"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"provisionedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}}]}}]} as unknown as DocumentNode<AdminQueueLiveSubscription, AdminQueueLiveSubscriptionVariables>;
export const AdminQueueSetPriorityDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminQueueSetPriority"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SetGprPriorityInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setGprPriority"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<AdminQueueSetPriorityMutation, AdminQueueSetPriorityMutationVariables>;
export const AdminQueueApproveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminQueueApprove"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"GprDecisionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"approveGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<AdminQueueApproveMutation, AdminQueueApproveMutationVariables>;
export const AdminQueueRejectDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminQueueReject"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"GprDecisionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rejectGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<AdminQueueRejectMutation, AdminQueueRejectMutationVariables>;
export const AdminQueueEarlyReleaseDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminQueueEarlyRelease"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"GprActionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"earlyReleaseGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<AdminQueueEarlyReleaseMutation, AdminQueueEarlyReleaseMutationVariables>;
export const AdminClustersDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminClusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"provider"}},{"kind":"Field","name":{"kind":"Name","value":"cloud"}},{"kind":"Field","name":{"kind":"Name","value":"region"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"registrationStatus"}},{"kind":"Field","name":{"kind":"Name","value":"lastContactAt"}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalNodes"}},{"kind":"Field","name":{"kind":"Name","value":"freeNodes"}},{"kind":"Field","name":{"kind":"Name","value":"reservedNodes"}},{"kind":"Field","name":{"kind":"Name","value":"unavailableNodes"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}}]}}]}}]}}]} as unknown as DocumentNode<AdminClustersQuery, AdminClustersQueryVariables>;
export const AdminClusterDetailDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminClusterDetail"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cluster"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuMemoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"totalNodes"}},{"kind":"Field","name":{"kind":"Name","value":"freeNodes"}},{"kind":"Field","name":{"kind":"Name","value":"reservedNodes"}},{"kind":"Field","name":{"kind":"Name","value":"unavailableNodes"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"gpuMemoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"cordonedAt"}},{"kind":"Field","name":{"kind":"Name","value":"cordonReason"}},{"kind":"Field","name":{"kind":"Name","value":"cordonedBy"}},{"kind":"Field","name":{"kind":"Name","value":"zone"}},{"kind":"Field","name":{"kind":"Name","value":"utilization"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeatAt"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedGpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"queue"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"500"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminClusterPlanned"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"running"},"name":{"kind":"Name","value":"gprs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"phases"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"PROVISIONING"},{"kind":"EnumValue","value":"PROVISIONED"},{"kind":"EnumValue","value":"RELEASING"}]}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminClusterPlanned"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminClusterPlanned"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"duration"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStartAt"}},{"kind":"Field","name":{"kind":"Name","value":"startNoLaterThan"}},{"kind":"Field","name":{"kind":"Name","value":"provisionedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}}]}}]} as unknown as DocumentNode<AdminClusterDetailQuery, AdminClusterDetailQueryVariables>;
export const AdminClustersInventoryDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"AdminClustersInventory"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"inventoryChanged"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"nodeId"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}}]}}]}}]} as unknown as DocumentNode<AdminClustersInventorySubscription, AdminClustersInventorySubscriptionVariables>;
export const AdminClustersQueueDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"AdminClustersQueue"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queueChanged"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"500"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<AdminClustersQueueSubscription, AdminClustersQueueSubscriptionVariables>;
export const AdminDashboardDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminDashboard"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"gpusPerNode"}},{"kind":"Field","name":{"kind":"Name","value":"totalNodes"}},{"kind":"Field","name":{"kind":"Name","value":"freeNodes"}},{"kind":"Field","name":{"kind":"Name","value":"reservedNodes"}},{"kind":"Field","name":{"kind":"Name","value":"unavailableNodes"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"utilization"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"queue"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"500"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminDashboardQueued"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"pending"},"name":{"kind":"Name","value":"gprs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"phases"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"PENDING_APPROVAL"}]}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"1"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"alerts"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"open"},"value":{"kind":"BooleanValue","value":true}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"50"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminDashboardAlert"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminDashboardQueued"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminDashboardAlert"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Alert"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"severity"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"open"}},{"kind":"Field","name":{"kind":"Name","value":"raisedAt"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<AdminDashboardQuery, AdminDashboardQueryVariables>;
export const AdminDashboardInventoryDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"AdminDashboardInventory"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"inventoryChanged"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"nodeId"}}]}}]}}]} as unknown as DocumentNode<AdminDashboardInventorySubscription, AdminDashboardInventorySubscriptionVariables>;
export const AdminDashboardQueueLiveDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"AdminDashboardQueueLive"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queueChanged"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"500"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminDashboardQueued"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminDashboardQueued"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Gpr"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodeCount"}},{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"instanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedGpuShape"}},{"kind":"Field","name":{"kind":"Name","value":"assignedInstanceType"}},{"kind":"Field","name":{"kind":"Name","value":"assignedCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<AdminDashboardQueueLiveSubscription, AdminDashboardQueueLiveSubscriptionVariables>;
export const AdminDashboardAlertsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"AdminDashboardAlerts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"alerts"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminDashboardAlert"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminDashboardAlert"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Alert"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"kind"}},{"kind":"Field","name":{"kind":"Name","value":"severity"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"open"}},{"kind":"Field","name":{"kind":"Name","value":"raisedAt"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<AdminDashboardAlertsSubscription, AdminDashboardAlertsSubscriptionVariables>;
export const AdminDashboardUsageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminDashboardUsage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"from"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"to"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","alias":{"kind":"Name","value":"days"},"name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"DAY"}]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"group"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}}]}},{"kind":"Field","name":{"kind":"Name","value":"reservedGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"usedGpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"waitingGpuHours"}}]}}]}}]}}]} as unknown as DocumentNode<AdminDashboardUsageQuery, AdminDashboardUsageQueryVariables>;
export const AdminMaintenanceWindowsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminMaintenanceWindows"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"maintenanceWindows"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"startsAt"}},{"kind":"Field","name":{"kind":"Name","value":"endsAt"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}},{"kind":"Field","name":{"kind":"Name","value":"createdBy"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<AdminMaintenanceWindowsQuery, AdminMaintenanceWindowsQueryVariables>;
export const AdminPlanMaintenanceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminPlanMaintenance"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PlanMaintenanceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"planMaintenance"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"window"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<AdminPlanMaintenanceMutation, AdminPlanMaintenanceMutationVariables>;
export const AdminCancelMaintenanceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminCancelMaintenance"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CancelMaintenanceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cancelMaintenance"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"window"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<AdminCancelMaintenanceMutation, AdminCancelMaintenanceMutationVariables>;
export const AdminCordonNodeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminCordonNode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CordonNodeInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cordonNode"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"cordonReason"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<AdminCordonNodeMutation, AdminCordonNodeMutationVariables>;
export const AdminDrainNodeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminDrainNode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"DrainNodeInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"drainNode"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"cordonReason"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<AdminDrainNodeMutation, AdminDrainNodeMutationVariables>;
export const AdminUncordonNodeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminUncordonNode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UncordonNodeInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"uncordonNode"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<AdminUncordonNodeMutation, AdminUncordonNodeMutationVariables>;
export const AdminSsoRulesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminSsoRules"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"ssoGroupRules"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"group"}},{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"grantsAdmin"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<AdminSsoRulesQuery, AdminSsoRulesQueryVariables>;
export const AdminSsoCreateRuleDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSsoCreateRule"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateSsoGroupRuleInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createSsoGroupRule"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rule"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<AdminSsoCreateRuleMutation, AdminSsoCreateRuleMutationVariables>;
export const AdminSsoDeleteRuleDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSsoDeleteRule"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SsoGroupRuleRef"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteSsoGroupRule"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rule"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<AdminSsoDeleteRuleMutation, AdminSsoDeleteRuleMutationVariables>;
export const AdminSlicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminSlices"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminSlice"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"users"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpuShape"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSlicesQuery, AdminSlicesQueryVariables>;
export const AdminSlicesCreateDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSlicesCreate"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateSliceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createSlice"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminSlice"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSlicesCreateMutation, AdminSlicesCreateMutationVariables>;
export const AdminSlicesUpdateDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSlicesUpdate"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateSliceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateSlice"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminSlice"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSlicesUpdateMutation, AdminSlicesUpdateMutationVariables>;
export const AdminSlicesAddNamespaceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSlicesAddNamespace"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SliceNamespaceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addSliceNamespace"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminSlice"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSlicesAddNamespaceMutation, AdminSlicesAddNamespaceMutationVariables>;
export const AdminSlicesRemoveNamespaceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSlicesRemoveNamespace"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SliceNamespaceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"removeSliceNamespace"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminSlice"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSlicesRemoveNamespaceMutation, AdminSlicesRemoveNamespaceMutationVariables>;
export const AdminSlicesAddMemberDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSlicesAddMember"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AddSliceMemberInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addSliceMember"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminSlice"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSlicesAddMemberMutation, AdminSlicesAddMemberMutationVariables>;
export const AdminSlicesRemoveMemberDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSlicesRemoveMember"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RemoveSliceMemberInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"removeSliceMember"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminSlice"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSlicesRemoveMemberMutation, AdminSlicesRemoveMemberMutationVariables>;
export const AdminSlicesSetPolicyDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminSlicesSetPolicy"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SetSlicePolicyInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setSlicePolicy"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"AdminSlice"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"AdminSlice"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Slice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"description"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"namespaces"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"policy"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"allowedShapes"}},{"kind":"Field","name":{"kind":"Name","value":"maxNodesPerGpr"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMin"}},{"kind":"Field","name":{"kind":"Name","value":"priorityMax"}},{"kind":"Field","name":{"kind":"Name","value":"maxDuration"}},{"kind":"Field","name":{"kind":"Name","value":"defaultIdleTimeout"}},{"kind":"Field","name":{"kind":"Name","value":"autoEviction"}},{"kind":"Field","name":{"kind":"Name","value":"requeueOnEviction"}},{"kind":"Field","name":{"kind":"Name","value":"underuseBelowPercent"}},{"kind":"Field","name":{"kind":"Name","value":"underusePeriod"}}]}}]}}]} as unknown as DocumentNode<AdminSlicesSetPolicyMutation, AdminSlicesSetPolicyMutationVariables>;
export const AdminTokensDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tokens"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}},{"kind":"Field","name":{"kind":"Name","value":"revokedAt"}},{"kind":"Field","name":{"kind":"Name","value":"nodeName"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"sliceScopes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"users"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"role"}}]}},{"kind":"Field","name":{"kind":"Name","value":"slices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"IntValue","value":"100"}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<AdminTokensQuery, AdminTokensQueryVariables>;
export const AdminTokensCreateDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminTokensCreate"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateTokenInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"secret"}},{"kind":"Field","name":{"kind":"Name","value":"token"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<AdminTokensCreateMutation, AdminTokensCreateMutationVariables>;
export const AdminTokensRevokeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminTokensRevoke"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RevokeTokenInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"revokeToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"token"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"revokedAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<AdminTokensRevokeMutation, AdminTokensRevokeMutationVariables>;
export const AdminWhatIfDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AdminWhatIf"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"WhatIfInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"whatIf"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"promiseBefore"}},{"kind":"Field","name":{"kind":"Name","value":"promiseAfter"}},{"kind":"Field","name":{"kind":"Name","value":"expectedAfter"}},{"kind":"Field","name":{"kind":"Name","value":"promiseShiftSeconds"}}]}}]}}]} as unknown as DocumentNode<AdminWhatIfQuery, AdminWhatIfQueryVariables>;
export const UserExtendRoomDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UserExtendRoom"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gprExtensionRoom"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"maxNow"}},{"kind":"Field","name":{"kind":"Name","value":"withoutApproval"}},{"kind":"Field","name":{"kind":"Name","value":"limitedBy"}}]}}]}}]} as unknown as DocumentNode<UserExtendRoomQuery, UserExtendRoomQueryVariables>;
export const UserExtendGprDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UserExtendGpr"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ExtendGprInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"extendGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}},{"kind":"Field","name":{"kind":"Name","value":"extendedBy"}},{"kind":"Field","name":{"kind":"Name","value":"extensionRequested"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<UserExtendGprMutation, UserExtendGprMutationVariables>;
export const UserGprActionsCancelDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UserGprActionsCancel"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"GprActionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cancelGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<UserGprActionsCancelMutation, UserGprActionsCancelMutationVariables>;
export const UserGprActionsEarlyReleaseDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UserGprActionsEarlyRelease"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"GprActionInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"earlyReleaseGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"exitAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<UserGprActionsEarlyReleaseMutation, UserGprActionsEarlyReleaseMutationVariables>;
export const AdminEvictGprDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AdminEvictGpr"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"EvictGprInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"evictGpr"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"gpr"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"phase"}},{"kind":"Field","name":{"kind":"Name","value":"version"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<AdminEvictGprMutation, AdminEvictGprMutationVariables>;
export const ViewerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"memberships"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"slice"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ViewerQuery, ViewerQueryVariables>;