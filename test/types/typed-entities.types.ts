// Type-level tests of typed entity types (issue 37), checked by `npm run typecheck` (this file is compiled, not
// run): a reference from `entityRefFor(Type, id)` takes only the schema's input and answers the behavior's reply;
// `receive` gets the schema's output; `ctx.restored` has the state's type; a wrong message is a compile error
// (each `@ts-expect-error` below fails the typecheck if the line compiles). The plain form stays untyped.
import { z } from 'zod';
import type { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import { defineEntityType } from '../../src/sharding/core/typed-entity.js';
import type { EntityRef } from '../../src/sharding/core/entity-api.js';
import type { NodeEntityType } from '../../src/node/application.js';

const Cart = defineEntityType({
  typeName: 'Cart',
  message: z.discriminatedUnion('type', [
    z.object({ type: z.literal('add'), item: z.string(), quantity: z.string().transform(Number) }),
    z.object({ type: z.literal('get') }),
  ]),
  state: z.array(z.string()),
  durable: true,
  behavior: (ctx) => {
    const items: string[] = ctx.restored ?? [];
    return {
      receive(message) {
        if (message.type === 'add') {
          // The schema's output: quantity is a number here, a string on the wire.
          const quantity: number = message.quantity;
          for (let i = 0; i < quantity; i++) items.push(message.item);
        }
        return { items: [...items] };
      },
      snapshot: () => items,
    };
  },
});

declare const sharding: ClusterSharding;
const cart = sharding.entityRefFor(Cart, 'c1');
cart.tell({ type: 'add', item: 'tea', quantity: '2' });
void cart.send({ type: 'get' });
const answer: Promise<{ items: string[] }> = cart.ask({ type: 'get' });
void answer;

// @ts-expect-error an unknown message type
cart.tell({ type: 'remove', item: 'tea' }); // mutation
// @ts-expect-error the input's quantity is a string (the schema's input, not its output)
void cart.send({ type: 'add', item: 'tea', quantity: 2 });
// @ts-expect-error a message without its discriminant
void cart.ask({ item: 'tea' });
// @ts-expect-error the answer is not a number
const wrong: Promise<number> = cart.ask({ type: 'get' });
void wrong;

defineEntityType({
  typeName: 'Bad',
  message: z.object({ n: z.number() }),
  // @ts-expect-error receive gets the schema's output, whose n is a number, not a string
  behavior: () => ({ receive: (message: { n: string }) => message.n }),
});

// A typed type is an entity type startNode takes, options kept as given.
const types: NodeEntityType[] = [Cart];
const durable: boolean | undefined = Cart.durable;
void types;
void durable;

// The plain form: untyped references, as before.
const plain: EntityRef = sharding.entityRefFor('Counter', 'alice');
plain.tell({ anything: true });
