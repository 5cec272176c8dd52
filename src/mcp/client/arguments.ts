import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';

/**
 * An MCP tool declares its arguments in JSON Schema (draft-07 or 2020-12, whichever its SDK writes). They are
 * checked here before the server is called, and reported as zod issues so the registry words them as it words a
 * built-in tool's: one `path: message` line each, which a model can fix its call from.
 */
const draft7 = new Ajv({ allErrors: true, strict: false });
const draft2020 = new Ajv2020({ allErrors: true, strict: false });

/** The schema as the model sees it: without `$schema`, which function-calling APIs do not take. */
export function modelParameters(inputSchema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...parameters } = inputSchema;
  return { type: 'object', ...parameters };
}

/** Compiles the schema (throws when the server's schema is not one Ajv can use). */
export function compileArguments(inputSchema: Record<string, unknown>): ValidateFunction {
  const dialect = typeof inputSchema.$schema === 'string' ? inputSchema.$schema : '';
  return (dialect.includes('2020-12') ? draft2020 : draft7).compile(dialect.includes('2020-12') ? inputSchema : modelParameters(inputSchema));
}

/** The zod schema the registry checks arguments with: JSON Schema validation, its errors as issues with their paths. */
export function argumentsSchema(validate: ValidateFunction): z.ZodType<Record<string, unknown>> {
  return z.record(z.string(), z.unknown()).superRefine((args, ctx) => {
    if (validate(args)) return;
    for (const issue of validate.errors ?? []) ctx.addIssue({ code: 'custom', path: issuePath(issue), message: issueMessage(issue) });
  });
}

/** The arguments' problems as `path: message` lines, for a tool whose schema was learnt at its first call. */
export function argumentProblems(validate: ValidateFunction, args: unknown): string[] {
  if (validate(args)) return [];
  return (validate.errors ?? []).map((issue) => `${issuePath(issue).join('.') || '(root)'}: ${issueMessage(issue)}`);
}

function issuePath(issue: ErrorObject): string[] {
  const path = issue.instancePath.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  // "must have required property 'visit'" belongs to the missing field, where a model looks for it.
  if (issue.keyword === 'required') path.push(String((issue.params as { missingProperty: string }).missingProperty));
  if (issue.keyword === 'additionalProperties') path.push(String((issue.params as { additionalProperty: string }).additionalProperty));
  return path;
}

function issueMessage(issue: ErrorObject): string {
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'additionalProperties') return 'is not a parameter of this tool';
  if (issue.keyword === 'enum') return `${issue.message}: ${((issue.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
  return issue.message ?? 'is invalid';
}
