// Test helper for the management API tests: the fields of a placement as the API answers with it (sorted), written
// once so that every route test checks the same JSON shape.
export const PLACEMENT_FIELDS = ['by', 'expiresAt', 'hlc', 'mode', 'reason', 'shardId', 'target', 'writer'];
