// The longest texts a pin may carry. A leaf on purpose: the validators, the wire checks and the management API's
// shapes (which the console page type-checks against in the browser's program) read the same numbers.

/** Longest target accepted, in UTF-16 code units: what the placement store holds (MAX_TARGET_LENGTH). */
export const MAX_PLACEMENT_TARGET_LENGTH = 256;
/** Longest accepted pin reason, in characters. */
export const MAX_REASON_LENGTH = 500;
/** Longest accepted pin author (`by`), in characters. */
export const MAX_BY_LENGTH = 128;
