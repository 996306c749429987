// Browser side of the console: the write actions, each through the REST route the CLI uses. A pin is shown
// as the server's dry run first and needs a reason; cordon, uncordon and drain ask for confirmation, a
// reason and who asks (sent as by/reason, as the CLI does); unpin and move now act at once.
/// <reference lib="dom" />
import { ApiError, api, type ExplainAnswer } from './api.js';
import { byId, el, replace } from './dom.js';
import { dryRunLines, type Line } from './insight.js';
import type { MemberJson, TypeView } from './model.js';
import type { RowActions } from './render.js';

type MemberAction = 'cordon' | 'uncordon' | 'drain';
const BY_KEY = 'actor-ts-console-by';
const MEMBER_ACTION_TEXT: Record<MemberAction, string> = {
  cordon: 'takes no new shards; the shards it hosts stay',
  uncordon: 'takes new shards again',
  drain: 'is cordoned and every shard it hosts is handed off now',
};

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
  /** The server said no member matches the target and the operator chose to pin anyway. */
  allowUnknown?: boolean;
}

const REASON_NOT_TAKEN =
  "this node's API does not take a reason for a pin (it predates pin reasons), so the pin cannot record why.";

export class Actions {
  private pending: PendingPin | undefined;
  private pendingMember: { readonly address: string; readonly action: MemberAction } | undefined;
  /** Set once the node rejected the `reason` field: its API predates pin reasons, which the dry run then says. */
  private reasonsUnsupported = false;
  /** Set once the member routes answered 404: the controls disappear. */
  memberActionsAvailable = true;

  constructor(private readonly context: ActionContext) {
    byId<HTMLFormElement>('pin-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.preview();
    });
    byId('pin-confirm').addEventListener('click', () => void this.confirm());
    byId('pin-cancel').addEventListener('click', () => this.closeDryRun());
    byId('move-now').addEventListener('click', () => {
      const form = this.readForm(false);
      if (form) void this.moveNow(form.typeName, form.shardId);
    });
    byId('member-ok').addEventListener('click', () => void this.confirmMember());
    byId('member-cancel').addEventListener('click', () => {
      this.pendingMember = undefined;
      byId('member-confirm').hidden = true;
    });
    byId<HTMLInputElement>('member-by').value = localStorage.getItem(BY_KEY) ?? '';
  }

  /** The callbacks the rendered rows use. */
  rowActions(): RowActions {
    return {
      ...(this.memberActionsAvailable
        ? { member: (address: string, action: MemberAction) => this.askMember(address, action) }
        : {}),
      unpin: (typeName, shardId) => void this.unpin(typeName, shardId),
      moveNow: (typeName, shardId) => void this.moveNow(typeName, shardId),
      pickShard: (typeName, shardId) => {
        byId<HTMLSelectElement>('pin-type').value = typeName;
        byId<HTMLInputElement>('pin-shard').value = String(shardId);
        void this.explain(typeName, shardId);
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

  /** The server's dry run (with the token, like every call): what the pin would start now. */
  private async preview(): Promise<void> {
    const pin = this.readForm(true);
    if (!pin) return;
    this.pending = undefined;
    const view = this.context.views().find((candidate) => candidate.typeName === pin.typeName);
    const body = (withReason: boolean, allowUnknown: boolean) => ({
      shardId: pin.shardId,
      target: pin.target,
      ...(withReason && pin.reason !== '' ? { reason: pin.reason } : {}),
      ...(allowUnknown ? { allowUnknownTarget: true } : {}),
    });
    let lines: Line[];
    let label = this.reasonsUnsupported ? 'Pin without the reason' : 'Pin it';
    try {
      lines = dryRunLines(
        view,
        pin.shardId,
        pin.target,
        await api.dryRunPin(pin.typeName, body(!this.reasonsUnsupported, false)),
      );
    } catch (error) {
      if (
        error instanceof ApiError &&
        error.status === 400 &&
        error.message.includes('(reason)') &&
        !this.reasonsUnsupported
      ) {
        // A node whose API predates pin reasons: say so, and judge the pin without one.
        this.reasonsUnsupported = true;
        byId<HTMLInputElement>('pin-reason').required = false;
        return this.preview();
      }
      if (!(error instanceof ApiError && error.code === 'unknown_target')) return this.context.fail(error);
      // No member matches: a typo loses the shard its home. Pinning anyway is for a node yet to join.
      pin.allowUnknown = true;
      const answer = await api.dryRunPin(pin.typeName, body(!this.reasonsUnsupported, true)).catch(() => undefined);
      lines = [{ text: error.message, warning: true }, ...dryRunLines(view, pin.shardId, pin.target, answer)];
      label = 'Pin anyway (a node that has not joined yet)';
    }
    this.pending = pin;
    if (this.reasonsUnsupported) lines.push({ text: REASON_NOT_TAKEN, warning: true });
    else if (pin.reason !== '') lines.push({ text: `Reason: ${pin.reason}`, warning: false });
    this.showDryRun(lines, label);
    this.result('');
  }

  private showDryRun(lines: ReadonlyArray<Line>, confirmLabel: string): void {
    replace(
      'dry-run-lines',
      ...lines.map((line) => el('li', { class: line.warning ? 'warning' : undefined }, line.text)),
    );
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
      written = await api.pin(pin.typeName, {
        shardId: pin.shardId,
        target: pin.target,
        ...(withReason ? { reason: pin.reason } : {}),
        ...(pin.allowUnknown === true ? { allowUnknownTarget: true } : {}),
      });
    } catch (error) {
      // A node whose API predates pin reasons rejects the whole request and writes nothing. The operator
      // decides whether the pin goes in without its reason: the dry run says so and the button asks.
      if (withReason && error instanceof ApiError && error.status === 400 && error.message.includes('(reason)')) {
        this.reasonsUnsupported = true;
        byId<HTMLInputElement>('pin-reason').required = false;
        this.showDryRun(
          [{ text: `Nothing was written: ${REASON_NOT_TAKEN}`, warning: true }],
          'Pin without the reason',
        );
        this.result('');
        return;
      }
      this.context.fail(error);
      return;
    }
    this.closeDryRun();
    const warnings = (written?.warnings ?? []).map((warning) => warning.message);
    const note =
      this.reasonsUnsupported && pin.reason !== '' ? ' (without the reason: this node does not record reasons)' : '';
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
      this.result(
        accepted
          ? `Shard ${shardId} of ${typeName} is handing off.`
          : `Shard ${shardId} of ${typeName} has no home: nothing to move.`,
      );
      await this.context.refresh();
    } catch (error) {
      this.context.fail(error);
    }
  }

  /** Asks before a member action: what it does, why (required) and who asks (kept for the next time). */
  private askMember(address: string, action: MemberAction): void {
    this.pendingMember = { address, action };
    byId('member-confirm-title').textContent = `${action[0]?.toUpperCase()}${action.slice(1)} ${address}?`;
    byId('member-confirm-what').textContent = `${address} ${MEMBER_ACTION_TEXT[action]}.`;
    byId('member-ok').textContent = `${action[0]?.toUpperCase()}${action.slice(1)}`;
    byId<HTMLInputElement>('member-reason').value = '';
    byId('member-confirm').hidden = false;
    byId<HTMLInputElement>('member-reason').focus();
  }

  private async confirmMember(): Promise<void> {
    const pending = this.pendingMember;
    if (!pending) return;
    const reason = byId<HTMLInputElement>('member-reason').value.trim();
    const by = byId<HTMLInputElement>('member-by').value.trim();
    if (reason === '' || by === '') {
      this.result(`A ${pending.action} needs a reason and who asks.`);
      return;
    }
    localStorage.setItem(BY_KEY, by);
    this.pendingMember = undefined;
    byId('member-confirm').hidden = true;
    await this.member(pending.address, pending.action, { by, reason });
  }

  /** Why a clicked shard is where it is, as the type's coordinator explains it. */
  private async explain(typeName: string, shardId: number): Promise<void> {
    let answer: ExplainAnswer | undefined;
    try {
      answer = await api.explain(typeName, shardId);
    } catch (error) {
      replace(
        'explain',
        el(
          'p',
          { class: 'muted' },
          `Shard ${shardId} of ${typeName}: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
      return;
    }
    const rows = Object.entries(answer ?? {})
      .filter(([key]) => key !== 'message')
      .map(([key, value]) => [
        el('dt', {}, key),
        el('dd', {}, typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)),
      ]);
    replace(
      'explain',
      el('h3', {}, `Shard ${shardId} of ${typeName}`),
      el('p', { id: 'explain-message' }, answer?.message ?? ''),
      el('dl', { class: 'kv' }, ...rows.flat()),
    );
  }

  private async member(
    address: string,
    action: MemberAction,
    provenance: { by: string; reason: string },
  ): Promise<void> {
    try {
      await api.memberAction(address, action, provenance);
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
