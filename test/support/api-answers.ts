// Reads a management API answer in a test through the API's declared shape (api-shapes.ts): the body must match the
// schema, and must carry no field the schema does not declare, so a route that sends more, less or other than its
// declared shape fails the test that reads it. The returned value is typed by the shape.
import type { TSchema } from 'typebox';
import Value from 'typebox/value';
import type { Shape } from '../../src/management/api-shapes.js';

export function checkedAnswer<S extends TSchema>(schema: S, body: unknown): Shape<S> {
  const errors = [...Value.Errors(schema, body)].map((error) => `${error.instancePath || '/'} ${error.message}`);
  if (errors.length > 0) {
    throw new Error(`answer does not match its declared shape: ${errors.join('; ')}\n${JSON.stringify(body)}`);
  }
  const declared = JSON.stringify(Value.Clean(schema, Value.Clone(body)));
  if (declared !== JSON.stringify(body)) {
    throw new Error(
      `answer carries fields its shape does not declare:\n  sent     ${JSON.stringify(body)}\n  declared ${declared}`,
    );
  }
  return body as Shape<S>;
}
