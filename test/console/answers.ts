// Answers of the management API for the console's unit tests, typed by the API's own shapes (api-shapes.ts): each
// builder fills what a test does not care about, so a test names only the fields it is about and cannot hand the
// page a field the API never sends.
import type { HealthAnswer, MemberJson, PinRecord } from '../../src/management/api-shapes.js';
import { ALONE_REPLICATION, MEMORY_STORAGE } from '../support/health-inputs.js';

export function memberJson(fields: Pick<MemberJson, 'address'> & Partial<MemberJson>): MemberJson {
  return { status: 'up', appVersion: '1.0.0', upNumber: 0, reachable: true, roles: [], ...fields };
}

export function pinRecord(fields: Pick<PinRecord, 'shardId' | 'target'> & Partial<PinRecord>): PinRecord {
  return {
    mode: 'prefer',
    expiresAt: null,
    reason: null,
    by: null,
    writer: 'app@127.0.0.1:2552',
    hlc: { wallMs: 1, counter: 0, node: 'app@127.0.0.1:2552' },
    ...fields,
  };
}

export function healthAnswer(fields: Partial<HealthAnswer>): HealthAnswer {
  return {
    status: 'ok',
    reasons: [],
    self: 'app@127.0.0.1:2552',
    pid: 1,
    placementStore: { generation: 0, slots: 0, baseSlots: 0, documentItems: 0 },
    replication: ALONE_REPLICATION,
    storage: MEMORY_STORAGE,
    ...fields,
  };
}
