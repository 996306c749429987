// Browser side of the console: the write actions, each through the REST route the CLI uses. A pin is shown
// as a dry run first and needs a reason; unpin, move now and member actions act at once and refresh the page.
/// <reference lib="dom" />
import { ApiError, api } from './api.js';
import { byId, el, replace } from './dom.js';
import { dryRun, type MemberJson, type TypeView } from './model.js';
import type { RowActions } from './render.js';

export interface ActionContext {
  readonly views: () => readonly TypeView[];
  readonly members: () => readonly MemberJson[];
  /** Reads everything again and re-renders. */
  readonly refresh: () => Promise<void>;
  /** Shows an API failure (401 asks for the token). */
  readonly fail: (error: unknown) => void;
}

interface PendingPin {
  readonly typeName: string;
  readonly shardId: number;
  readonly target: string;
  readonly reason: string;
}

const REASON_NOT_TAKEN = "this node's API does not take a reason for a pin (it predates pin reasons), so the pin cannot record why.";

export class Actions {
  private pending: PendingPin | undefined;
  /** Set once the node rejected the `reason` field: its API predates pin reasons, which the dry run then says. */
  private reasonsUnsupported = false;
  /** Set once the member routes answered 404: the controls disappear. */
  memberActionsAvailable = true;

  constructor(private readonly context: ActionContext) {
    byId<HTMLFormElement>('pin-form').addEventListener('submit', (event) => {
      event.preventDefault();
      this.preview();
    });
    byId('pin-confirm').addEventListener('click', () => void this.confirm());
    byId('pin-cancel').addEventListener('click', () => this.closeDryRun());
    byId('move-now').addEventListener('click', () => {
      const form = this.readForm(false);
      if (form) void this.moveNow(form.typeName, form.shardId);
    });
  }

  /** The callbacks the rendered rows use. */
  rowActions(): RowActions {
    return {
      ...(this.memberActionsAvailable ? { member: (address: string, action: 'cordon' | 'uncordon' | 'drain') => void this.member(address, action) } : {}),
      unpin: (typeName, shardId) => void this.unpin(typeName, shardId),
      moveNow: (typeName, shardId) => void this.moveNow(typeName, shardId),
      pickShard: (typeName, shardId) => {
        byId<HTMLSelectElement>('pin-type').value = typeName;
        byId<HTMLInputElement>('pin-shard').value = String(shardId);
      },
    };
  }

  /** Keeps the form's type and target choices in step with what the page shows. */
  syncForm(): void {
    const select = byId<HTMLSelectElement>('pin-type');
    const chosen = select.value;
    const types = this.context.views().map((view) => view.typeName);
    // Rebuilt only when the types change: replacing the options every refresh would close an open drop-down.
    if (Array.from(select.options, (option) => option.value).join('\n') !== types.join('\n')) {
      select.replaceChildren(...types.map((name) => el('option', { value: name }, name)));
      if (types.includes(chosen)) select.value = chosen;
    }
    const live = this.context.members().filter((member) => member.status !== 'down' && member.status !== 'removed');
    replace('pin-targets', ...live.map((member) => el('option', { value: member.address })));
  }

  private readForm(needTarget: boolean): PendingPin | undefined {
    const typeName = byId<HTMLSelectElement>('pin-type').value;
    const shardText = byId<HTMLInputElement>('pin-shard').value.trim();
    const shardId = Number(shardText);
    const target = byId<HTMLInputElement>('pin-target').value.trim();
    const reason = byId<HTMLInputElement>('pin-reason').value.trim();
    if (typeName === '' || shardText === '' || !Number.isSafeInteger(shardId) || shardId < 0) {
      this.result('Give a type and a shard id (an integer from 0).');
      return undefined;
    }
    if (needTarget && (target === '' || (reason === '' && !this.reasonsUnsupported))) {
      this.result('A pin needs a target and a reason.');
      return undefined;
    }
    return { typeName, shardId, target, reason };
  }

  private preview(): void {
    const pin = this.readForm(true);
    if (!pin) return;
    this.pending = pin;
    const view = this.context.views().find((candidate) => candidate.typeName === pin.typeName);
    const lines = dryRun(view, this.context.members(), pin.shardId, pin.target);
    if (this.reasonsUnsupported) lines.push({ text: REASON_NOT_TAKEN, warning: true });
    else if (pin.reason !== '') lines.push({ text: `Reason: ${pin.reason}`, warning: false });
    this.showDryRun(lines, this.reasonsUnsupported ? 'Pin without the reason' : 'Pin it');
    this.result('');
  }

  private showDryRun(lines: ReadonlyArray<{ readonly text: string; readonly warning: boolean }>, confirmLabel: string): void {
    replace('dry-run-lines', ...lines.map((line) => el('li', { class: line.warning ? 'warning' : undefined }, line.text)));
    byId('pin-confirm').textContent = confirmLabel;
    byId('dry-run').hidden = false;
  }

  private closeDryRun(): void {
    this.pending = undefined;
    byId('dry-run').hidden = true;
  }

  private async confirm(): Promise<void> {
    const pin = this.pending;
    if (!pin) return;
    const withReason = !this.reasonsUnsupported && pin.reason !== '';
    let written;
    try {
      written = await api.pin(pin.typeName, { shardId: pin.shardId, target: pin.target, ...(withReason ? { reason: pin.reason } : {}) });
    } catch (error) {
      // A node whose API predates pin reasons rejects the whole request and writes nothing. The operator
      // decides whether the pin goes in without its reason: the dry run says so and the button asks.
      if (withReason && error instanceof ApiError && error.status === 400 && error.message.includes('(reason)')) {
        this.reasonsUnsupported = true;
        byId<HTMLInputElement>('pin-reason').required = false;
        this.showDryRun([{ text: `Nothing was written: ${REASON_NOT_TAKEN}`, warning: true }], 'Pin without the reason');
        this.result('');
        return;
      }
      this.context.fail(error);
      return;
    }
    this.closeDryRun();
    const warnings = (written?.warnings ?? []).map((warning) => warning.message);
    const note = this.reasonsUnsupported && pin.reason !== '' ? ' (without the reason: this node does not record reasons)' : '';
    this.result([`Pinned shard ${pin.shardId} of ${pin.typeName} to ${pin.target}${note}.`, ...warnings].join(' '));
    await this.context.refresh();
  }

  private async unpin(typeName: string, shardId: number): Promise<void> {
    try {
      await api.unpin(typeName, shardId);
      this.result(`Unpinned shard ${shardId} of ${typeName}.`);
      await this.context.refresh();
    } catch (error) {
      this.context.fail(error);
    }
  }

  private async moveNow(typeName: string, shardId: number): Promise<void> {
    try {
      const outcome = await api.moveNow(typeName, [shardId]);
      const accepted = outcome?.accepted.includes(shardId) ?? false;
      this.result(accepted ? `Shard ${shardId} of ${typeName} is handing off.` : `Shard ${shardId} of ${typeName} has no home: nothing to move.`);
      await this.context.refresh();
    } catch (error) {
      this.context.fail(error);
    }
  }

  private async member(address: string, action: 'cordon' | 'uncordon' | 'drain'): Promise<void> {
    try {
      await api.memberAction(address, action);
      this.result(`${action} ${address}: done.`);
    } catch (error) {
      // The API's answer for a route it does not have; a 404 about the member itself is a real failure.
      if (error instanceof ApiError && error.status === 404 && error.message.startsWith('no route')) {
        this.memberActionsAvailable = false;
        this.result(`This node has no ${action} route.`);
      } else {
        this.context.fail(error);
      }
    }
    await this.context.refresh();
  }

  private result(text: string): void {
    byId('action-result').textContent = text;
  }
}
