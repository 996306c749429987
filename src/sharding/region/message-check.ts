// The host's check of a typed entity's messages (issue 37): every message from outside the entity (a tell, ask
// or send, whether it crossed the wire or not) is validated against the type's Standard Schema before `receive`,
// which gets the schema's output. A message the schema refuses never reaches `receive`: an ask or send fails with
// `invalid_message` and the issues, a tell is dropped; both are counted. A schema that throws, or whose promise
// rejects, refuses the message the same way (its error as the issue): a broken schema cannot crash the host.
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { errorText } from '../../cluster/transport/message-codec.js';

export type CheckResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** Checks one message; synchronous when the schema is (no promise per message for the common case). */
export type MessageCheck = (message: unknown) => CheckResult | Promise<CheckResult>;

/** Issues listed in a refusal, at most (a refusal travels to the asker and into logs). */
const MAX_ISSUES = 10;

export function messageCheck(schema: StandardSchemaV1): MessageCheck {
  const validate = schema['~standard'].validate;
  return (message) => {
    let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
    try {
      result = validate(message);
    } catch (error) {
      return schemaFailed(error);
    }
    return result instanceof Promise ? result.then(toCheck, schemaFailed) : toCheck(result);
  };
}

function toCheck(result: StandardSchemaV1.Result<unknown>): CheckResult {
  if (result.issues === undefined) return { ok: true, value: result.value };
  const listed = result.issues.slice(0, MAX_ISSUES).map(describeIssue);
  const more = result.issues.length > MAX_ISSUES ? ` (and ${result.issues.length - MAX_ISSUES} more)` : '';
  return { ok: false, error: `invalid message: ${listed.join('; ')}${more}` };
}

function describeIssue(issue: StandardSchemaV1.Issue): string {
  const path = (issue.path ?? []).map((segment) =>
    String(typeof segment === 'object' && segment !== null ? segment.key : segment),
  );
  const text = errorText(issue.message);
  return path.length === 0 ? text : `${path.join('.')}: ${text}`;
}

function schemaFailed(error: unknown): CheckResult {
  return { ok: false, error: `invalid message: the message schema failed: ${errorText(error)}` };
}
