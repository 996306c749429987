// The head every operator request to a type's coordinator and every answer to one shares: the message type,
// the entity type it concerns and the request number the answer is matched by (coordinator-client.ts).
// One declaration, so the request messages of every family (messages.ts, drain, insight) carry it alike.

/** A request or answer `T` with the fields `F` beyond the shared head. */
export type RequestMessage<T extends string, F extends object = object> = {
  readonly type: T;
  readonly typeName: string;
  readonly requestId: number;
} & Readonly<F>;
