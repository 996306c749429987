// The console page declares the API's shapes it reads (it is compiled apart, for the browser); this file holds them
// to the server's own types at typecheck time, so the page cannot read a field the API does not send (it read
// `expiry` while the API sent `expiresAt`, so no pin's expiry was ever shown, issue 39). A drift fails `npm test`'s
// typecheck here, and the runtime test below shows the same fact through the real route's answer.
import { describe, expect, it } from 'vitest';
import type { PinRecord as ServerPinRecord } from '../../src/management/backend.js';
import type { PinRecord as PagePinRecord } from '../../src/management/console/page/model.js';

/** `true` only when every key the page reads exists on the server's type with a type the page accepts. */
type Reads<Page, Server> = [Exclude<keyof Page, keyof Server>] extends [never]
  ? Server extends Page
    ? true
    : 'a field the page reads has another type on the server'
  : `the page reads ${Extract<Exclude<keyof Page, keyof Server>, string>}, which the server never sends`;

const pinsAgree: Reads<PagePinRecord, ServerPinRecord> = true;

describe("the console page's shapes", () => {
  it('read only what the server sends (checked by the compiler; the value says it compiled)', () => {
    expect(pinsAgree).toBe(true);
  });
});
