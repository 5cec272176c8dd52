import { canViewIdentifiers } from '../../core/auth/identifier-access.js';
import type { User } from '../../core/auth/users.js';
import type { Db } from '../../core/db/connect.js';
import { ClinAgentError } from '../../core/errors.js';
import { baseFieldName } from '../identifiers.js';
import { getEvents, identifierFields } from '../store/dictionary.js';
import { allProjectIds } from './load-dictionaries.js';
import { ruleContents, skillReads, type SkillRead } from './rule-reads.js';

/** What the actor was doing, for the refusal: "You cannot dry-run a rule ...". */
export type IdentifierRuleAction = 'save' | 'activate' | 'dry-run' | 'import' | 'analyse the impact of';

/** One rule's reads of identifier fields in one project. */
interface IdentifierRead {
  rule: string;
  path: string;
  kind: SkillRead['kind'];
  /** The event a `whole` read names; absent for the whole record. */
  event?: string;
  /** The identifier fields it reads (for `computed` and `whole`, every identifier field it could reach). */
  fields: string[];
  /** A rule of the version being replaced that the new one changes or removes. */
  replaced?: boolean;
}

/**
 * Whoever may not see a field's value must not learn it through anything they make the system compute: a rule that
 * reads an identifier field answers "fires" or "passes" on its value, so one request per guessed digit gives the
 * value back (issue 32: `{"!": {"matches": [{"var": "phone"}, "^3"]}}` dry-run on one record, 52 requests for a
 * phone number). So a skill whose rules read an identifier field of a project is written, changed, dry-run,
 * imported, analysed and activated only by someone who sees identifiers in that project (an admin, its PI, or a
 * member with an admin's grant); anyone else gets FORBIDDEN naming the fields. This is the one check every path
 * goes through (skill-service.ts for drafts and activation, proposed-skill.ts for the skill tools).
 *
 * `projectIds` null: the skill applies to every project, so every project counts. `replaces`: the versions the
 * definition takes the place of (the active one, the newest draft); their rules it removes or changes count as
 * its own, since changing a rule that reads an identifier field is as much for those who see them as writing one.
 */
export async function assertMayUseIdentifierRules(
  db: Db,
  actor: Pick<User, 'id' | 'role'>,
  input: { projectIds: readonly string[] | null; definition: unknown; replaces?: readonly unknown[]; action: IdentifierRuleAction },
): Promise<void> {
  if (actor.role === 'admin') return; // admins see identifiers in every project (identifier-access.ts)
  const projectIds = input.projectIds ?? (await allProjectIds(db));
  const kept = ruleContents(input.definition);
  for (const projectId of projectIds) {
    const readsOf = await identifierReader(db, projectId);
    if (!readsOf) continue;
    const reads = readsOf(input.definition);
    for (const replaced of input.replaces ?? []) {
      const before = ruleContents(replaced);
      for (const read of readsOf(replaced)) {
        if (kept.get(read.rule) === before.get(read.rule) || reads.some((own) => own.rule === read.rule)) continue;
        reads.push({ ...read, replaced: true });
      }
    }
    if (reads.length && !(await canViewIdentifiers(db, projectId, actor))) throw refusal(projectId, actor, reads, input.action);
  }
}

/**
 * For the editor's checks (validate), which write and compute nothing: what assertMayUseIdentifierRules would say
 * on saving, one note per project, so the author learns it before writing more.
 */
export async function identifierRuleNotes(db: Db, actor: Pick<User, 'id' | 'role'>, projectIds: readonly string[], definition: unknown): Promise<string[]> {
  if (actor.role === 'admin') return [];
  const notes: string[] = [];
  for (const projectId of projectIds) {
    const reads = await identifierReadsIn(db, projectId, definition);
    if (reads.length && !(await canViewIdentifiers(db, projectId, actor))) notes.push(refusal(projectId, actor, reads, 'save').message);
  }
  return notes;
}

/** The reads of identifier fields of `projectId` by a skill definition's rules; empty when the project has none. */
async function identifierReadsIn(db: Db, projectId: string, definition: unknown): Promise<IdentifierRead[]> {
  return (await identifierReader(db, projectId))?.(definition) ?? [];
}

/** Reads of the project's identifier fields by a definition; undefined when the project has no identifier field. */
async function identifierReader(db: Db, projectId: string): Promise<((definition: unknown) => IdentifierRead[]) | undefined> {
  const identifiers = await identifierFields(db, projectId);
  if (!identifiers.length) return undefined;
  const events = new Set((await getEvents(db, projectId)).map((event) => event.eventName));
  const isIdentifier = (name: string) => identifiers.includes(baseFieldName(name));
  return (definition) => {
    const out: IdentifierRead[] = [];
    for (const read of skillReads(definition, { isEvent: (name) => events.has(name) })) {
      // A whole event holds every field recorded at it; which are there differs by record, so all are named.
      const fields = read.kind === 'field' ? [...new Set(read.segments.filter(isIdentifier).map(baseFieldName))] : identifiers;
      const event = read.kind === 'whole' ? read.segments[read.segments.length - 1] : undefined;
      if (fields.length) out.push({ rule: read.rule, path: read.path, kind: read.kind, ...(event === undefined ? {} : { event }), fields });
    }
    return out;
  };
}

function refusal(projectId: string, actor: Pick<User, 'id'>, reads: readonly IdentifierRead[], action: IdentifierRuleAction): ClinAgentError {
  const fields = [...new Set(reads.flatMap((read) => read.fields))];
  const described = reads.slice(0, 5).map(describe);
  const more = reads.length > 5 ? `; and ${reads.length - 5} more reads` : '';
  return new ClinAgentError(
    'FORBIDDEN',
    `You cannot ${action} a rule that reads identifier fields of project "${projectId}" (${fields.join(', ')}): you may not see them there, and a rule's verdict on a record would tell you their values. ${described.join('; ')}${more}. ` +
      `Remove ${fields.length > 1 ? 'these fields' : 'this field'} from the rules, or ask someone who sees identifiers in the trial (its PI or an admin) to write the rule; an admin can grant you identifier access (PATCH /api/projects/${projectId}/members/${actor.id} with {"canViewIdentifiers": true}).`,
    { projectId, fields, reads: reads.slice(0, 50), rules: refusedRules(reads), needs: ['identifier access'] },
  );
}

/**
 * Every refused rule with the identifier fields it reads: unlike `reads` (cut at 50 to bound the answer), complete,
 * so a caller can mark each rule refused (the REDCap rule import's preview) however many there are.
 */
function refusedRules(reads: readonly IdentifierRead[]): Array<{ rule: string; fields: string[] }> {
  const fieldsOf = new Map<string, Set<string>>();
  for (const read of reads) {
    const fields = fieldsOf.get(read.rule) ?? new Set<string>();
    for (const field of read.fields) fields.add(field);
    fieldsOf.set(read.rule, fields);
  }
  return [...fieldsOf].map(([rule, fields]) => ({ rule, fields: [...fields] }));
}

function describe(read: IdentifierRead): string {
  if (read.replaced) return `rule "${read.rule}", which this version changes or removes, reads ${read.fields.join(', ')} (${read.path} of the version it replaces)`;
  if (read.kind === 'computed') return `rule "${read.rule}" reads a field whose name is worked out when it runs (${read.path}), which can be any field, ${read.fields.join(', ')} included`;
  if (read.kind === 'whole') return `rule "${read.rule}" reads ${read.event === undefined ? 'the whole record' : `the whole event "${read.event}"`} (${read.path}), which holds ${read.fields.join(', ')}`;
  return `rule "${read.rule}" reads ${read.fields.join(', ')} (${read.path})`;
}
