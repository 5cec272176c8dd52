import { sql } from 'drizzle-orm';
import { bigserial, boolean, customType, index, integer, json, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects } from './auth.js';
import { runColumns } from './run-columns.js';

/**
 * Trial data in REDCap's flat shape: a project (trial) has a data dictionary, an event schedule with
 * windows, and records keyed by (record id, event). Records keep their field values as JSON, as REDCap
 * exports them, so a dictionary change never needs a schema migration.
 */
export const FIELD_TYPES = ['text', 'integer', 'number', 'date', 'datetime', 'dropdown', 'radio', 'checkbox', 'yesno', 'truefalse', 'calc', 'notes', 'file'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const trialFields = pgTable(
  'trial_fields',
  {
    projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
    fieldName: text('field_name').notNull(),
    formName: text('form_name').notNull(),
    fieldType: text('field_type').$type<FieldType>().notNull(),
    label: text('label').notNull(),
    /** Choices of dropdown/radio/checkbox fields: code and label. */
    choices: jsonb('choices').$type<Array<{ code: string; label: string }>>().notNull().default([]),
    validationMin: text('validation_min'),
    validationMax: text('validation_max'),
    required: boolean('required').notNull().default(false),
    /** REDCap's "Identifier?" column: names, phone, address, birth date. Never sent to a model or a trace. */
    identifier: boolean('identifier').notNull().default(false),
    ordinal: integer('ordinal').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.fieldName] })],
);

export const trialEvents = pgTable(
  'trial_events',
  {
    projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
    eventName: text('event_name').notNull(),
    label: text('label').notNull(),
    /** Target day relative to the anchor date (enrolment), and the allowed window around it. */
    dayOffset: integer('day_offset').notNull(),
    windowBefore: integer('window_before').notNull().default(0),
    windowAfter: integer('window_after').notNull().default(0),
    /** The REDCap arm the event belongs to (`arm_num`); 1 in projects with one arm. */
    armNum: integer('arm_num').notNull().default(1),
    ordinal: integer('ordinal').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.eventName] })],
);

/** REDCap arms (`arm.csv`: arm_num, name), kept so events and reports can name the arm a subject is in. */
export const trialArms = pgTable(
  'trial_arms',
  {
    projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
    armNum: integer('arm_num').notNull(),
    name: text('name').notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.armNum] })],
);

export const trialRecords = pgTable(
  'trial_records',
  {
    projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
    recordId: text('record_id').notNull(),
    eventName: text('event_name').notNull(),
    site: text('site').notNull().default(''),
    data: jsonb('data').$type<Record<string, string | number | null>>().notNull(),
    /** Bumped on every change, so a QC result can say which version of the record it checked. */
    version: integer('version').notNull().default(1),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.recordId, t.eventName] }), index('trial_records_site_idx').on(t.projectId, t.site)],
);

/** A batch of SOP runs of one skill over many records. */
export const qcRuns = pgTable(
  'qc_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
    skillId: text('skill_id').notNull(),
    status: text('status').$type<'queued' | 'running' | 'completed' | 'failed' | 'cancelled'>().notNull(),
    total: integer('total').notNull(),
    trigger: text('trigger').$type<'manual' | 'cron'>().notNull().default('manual'),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [index('qc_runs_project_idx').on(t.projectId, t.createdAt)],
);

/** PENDING: created with its batch, not started yet. Stored as text, so adding a state needs no migration. */
export type TaskRunStatus = 'PENDING' | 'RUNNING' | 'SUSPENDED' | 'COMPLETED' | 'FAILED';

/**
 * One SOP run of a skill on one record (seed 000 section 4). Saved like a checkpoint: the current node and
 * the steps so far are written before the next node starts, so a resume continues from the latest state and
 * never replays history. `leaseUntil` lets another process take over a run whose worker died.
 */
export const taskRuns = pgTable(
  'task_runs',
  {
    ...runColumns<TaskRunStatus, ReviewRequest, { reviewer: string; decision: 'approve' | 'reject'; comment: string; decidedAt: string }>(),
    projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
    qcRunId: uuid('qc_run_id').references(() => qcRuns.id, { onDelete: 'cascade' }),
    skillId: text('skill_id').notNull(),
    recordId: text('record_id').notNull(),
    eventName: text('event_name').notNull().default(''),
    /** The skill version the run was created with (skill_versions): a run in flight keeps it when another is activated. */
    skillVersion: integer('skill_version'),
  },
  (t) => [
    // A batch checks each record once, however often its job is retried.
    uniqueIndex('task_runs_batch_record_uq').on(t.qcRunId, t.recordId, t.eventName),
    index('task_runs_status_idx').on(t.projectId, t.status),
  ],
);

export type SkillVersionStatus = 'draft' | 'active' | 'retired';

/**
 * QC skills (SOP flowcharts), one row per version, edited from the API and the console without a restart. A version
 * is a draft until it is activated; activating one retires the skill's previous active version, so at most one is
 * active (skill_versions_active_uq). Rows are never deleted: a task run pins the version it was created with.
 * The shipped YAML files seed versions once per file content (`seed_hash`).
 */
export const skillVersions = pgTable(
  'skill_versions',
  {
    skillId: text('skill_id').notNull(),
    version: integer('version').notNull(),
    // json, not jsonb: the definition keeps its author's key order (nodes in flowchart order, rules as written).
    definition: json('definition').$type<Record<string, unknown>>().notNull(),
    /** The YAML the author wrote, comments included, so the editor shows it back as written. */
    sourceYaml: text('source_yaml').notNull(),
    status: text('status').$type<SkillVersionStatus>().notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    comment: text('comment').notNull().default(''),
    activatedBy: text('activated_by'),
    activatedAt: timestamp('activated_at', { withTimezone: true }),
    /** sha256 of the seed file this version came from; null for versions written through the API. */
    seedHash: text('seed_hash'),
    seedFile: text('seed_file'),
  },
  (t) => [
    primaryKey({ columns: [t.skillId, t.version] }),
    uniqueIndex('skill_versions_active_uq').on(t.skillId).where(sql`${t.status} = 'active'`),
    // One version per seed file content, however many processes seed at once.
    uniqueIndex('skill_versions_seed_uq').on(t.skillId, t.seedHash).where(sql`${t.seedHash} is not null`),
  ],
);

/**
 * A jsonb column for any JSON value, strings included. Drizzle's `jsonb` parses a value again when the driver
 * hands it back as a string, so the text "13900139000" (a phone number) would come back as a number and "007"
 * as text; both drivers already parse jsonb, so this type passes their value through unchanged.
 */
const jsonValue = customType<{ data: unknown; driverData: unknown }>({
  dataType: () => 'jsonb',
  toDriver: (value) => JSON.stringify(value ?? null),
  fromDriver: (value) => value,
});

/** What a suspended run shows its reviewer. `finding` is the query a reject opens (soft rule without a verdict). */
export interface ReviewRequest {
  kind: 'review_node' | 'soft_rule_unresolved';
  node: string;
  description: string;
  /** The technical reason, for the reviewer only (never sent to the site as a query). */
  reason?: string;
  finding?: { ruleId: string; field: string; message: string; severity: 'error' | 'warning' | 'info' };
  /** What a reject does to the queries the review holds back (the node's `on_reject_queries`). */
  onRejectQueries?: 'cancel' | 'close';
  /** sha256 of what the reviewer was shown; a decision after it changed is refused (agent/runs). */
  dataHash?: string;
}

/** `cancelled`: withdrawn before it reached the site (a rejected review), as opposed to closed after resolution. */
export type QueryStatus = 'open' | 'answered' | 'closed' | 'reopened' | 'cancelled';
/** Statuses in which a finding has its one live query; a second query for the same finding is never opened. */
export const ACTIVE_QUERY_STATUSES = ['open', 'answered', 'reopened'] as const;

/** A data query raised from a violation, with the EDC lifecycle open -> answered -> closed (or reopened). */
export const pendingActions = pgTable(
  'pending_actions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
    taskRunId: uuid('task_run_id').notNull().references(() => taskRuns.id, { onDelete: 'cascade' }),
    recordId: text('record_id').notNull(),
    eventName: text('event_name').notNull().default(''),
    site: text('site').notNull().default(''),
    nodeId: text('node_id').notNull(),
    ruleId: text('rule_id').notNull(),
    field: text('field').notNull(),
    message: text('message').notNull(),
    severity: text('severity').$type<'error' | 'warning' | 'info'>().notNull(),
    /** The value the rule read when it last fired (`v1_arm_1.age` -> 17). */
    value: jsonValue('value'),
    /**
     * sha256 of every value the rule read when it last fired (trial/sop/read-fingerprint.ts): a finding a person
     * decided (closed as verified, withdrawn by a rejected review) is raised again only once one of them changes.
     * Never sent to clients: a hash over values would let one who sees a field masked test guesses against it.
     */
    readFingerprint: text('read_fingerprint'),
    status: text('status').$type<QueryStatus>().notNull().default('open'),
    /** The run that last saw the finding fire; equals taskRunId until a later run confirms it. */
    lastTaskRunId: uuid('last_task_run_id'),
    /** A suspended run whose review holds this query back from the site; cleared on approve. */
    heldByTaskRunId: uuid('held_by_task_run_id'),
    /** Set when a later run found the data no longer violates the rule ("no longer fires as of run X"). */
    noLongerFires: jsonb('no_longer_fires').$type<{ taskRunId: string; qcRunId: string | null; at: string } | null>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // One live query per finding, however many runs (retries, resumes, re-runs, cron) see it fire.
    uniqueIndex('pending_actions_finding_uq')
      .on(t.projectId, t.recordId, t.eventName, t.ruleId, t.field)
      .where(sql`status IN ('open', 'answered', 'reopened')`),
    index('pending_actions_project_idx').on(t.projectId, t.status),
    index('pending_actions_record_idx').on(t.projectId, t.recordId),
  ],
);
