import * as z from 'zod';
import { IsoTime } from './primitives';

/**
 * A condition's id: its kind and what it is about, joined by `.` (`heartbeat-silent.kitchen`,
 * `call-hung.mj2k9x1qz-3fa9c1d2`, `probe-failed.heartbeat-silent`). It is the key in the
 * conditions bucket, so only the characters a KV key takes.
 */
export const ConditionId = z.string().regex(/^[a-z0-9-]+\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/, {
  error: 'expected a condition id like "heartbeat-silent.kitchen" (mesh-control conditions lists them)',
});
/** See {@link ConditionId}. */
export type ConditionId = z.infer<typeof ConditionId>;

/** How pressing a condition is: `urgent` comes first in status and in `conditions`. */
export const ConditionSeverity = z.enum(['urgent', 'warning']);
/** See {@link ConditionSeverity}. */
export type ConditionSeverity = z.infer<typeof ConditionSeverity>;

/** A person's silence of a condition: who, why, when, and until when (at most a week). */
export const ConditionSilence = z.strictObject({
  by: z.string().min(1),
  why: z.string().min(1),
  at: IsoTime,
  until: IsoTime,
});
/** See {@link ConditionSilence}. */
export type ConditionSilence = z.infer<typeof ConditionSilence>;

/**
 * One condition as the conditions bucket `mesh-controller_conditions` keeps it, one key per
 * condition. Raised and cleared by the watchdog's observation only. A cleared one keeps its key
 * for ten minutes, so one raised again within them is the same condition: its count up, its
 * silence kept.
 */
export const Condition = z.strictObject({
  id: ConditionId,
  /** `heartbeat-silent`, `report-overdue`, `call-hung`, `doctor-failing`, `probe-failed`… */
  kind: z.string(),
  /** The row of the signals table that watches it (`S1`). */
  signal: z.string(),
  /** What it is about: a node, a call, a probe, a row of the signals table. */
  subject: z.string(),
  severity: ConditionSeverity,
  state: z.enum(['open', 'cleared']),
  /** What is wrong, for a person. */
  detail: z.string(),
  /** Where to look next (a command). */
  show: z.string(),
  /** When it was first raised (a reopening keeps it). */
  raised_at: IsoTime,
  /** When it was last raised, changed or cleared. */
  changed_at: IsoTime,
  cleared_at: IsoTime.nullable(),
  /** How many times it was raised: 1, and one more for each reopening within ten minutes of a clearing. */
  count: z.int().min(1),
  /** The lease epoch it was last written under; a controller under an earlier one does not write it. */
  epoch: z.int(),
  silence: ConditionSilence.nullable(),
});
/** See {@link Condition}. */
export type Condition = z.infer<typeof Condition>;

/** The transitions a condition goes through, each kept and published as an event of this name. */
export const ConditionEventName = z.enum(['condition-raised', 'condition-changed', 'condition-cleared']);
/** See {@link ConditionEventName}. */
export type ConditionEventName = z.infer<typeof ConditionEventName>;

/**
 * One transition, as kept 90 days in `mesh-controller_condition-history` and published on
 * `mesh.controller.event.<event>`: the condition at the top level as it stood after it, with
 * the event, when, what changed and why (a silence's reason; null for an observation).
 */
export const ConditionEvent = Condition.extend({
  event: ConditionEventName,
  at: IsoTime,
  change: z.string(),
  why: z.string().nullable(),
});
/** See {@link ConditionEvent}. */
export type ConditionEvent = z.infer<typeof ConditionEvent>;
