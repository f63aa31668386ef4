import { actionsTagOf, chipMinWidth, chipOf, countdownText, elapsedText, noteText, type ChipCall } from './status-chip-model';
import { useNow } from './use-now';

function Countdown({ at }: { at: string }) {
  const now = useNow();
  return <span className="countdown">{countdownText(at, now)}</span>;
}

/** How long the oldest attempt still out has been out, ticking. */
export function Elapsed({ since }: { since: number }) {
  const now = useNow();
  return <span className="elapsed">{elapsedText(since, now)}</span>;
}

/**
 * Status of a call's Webhooks delivery (or why it was never forwarded), with its URLs' outcome at a
 * glance: "delivered · 1 of 5 URLs failed" (warning colour), "in flight 3s". The words are
 * status-chip-model.ts's.
 */
export function StatusChip({ call }: { call: ChipCall }) {
  const chip = chipOf(call);
  return (
    <span className={chip.className} title={chip.title} data-status={chip.status} style={{ minWidth: chipMinWidth(chip) }}>
      <span className="chip-word">{chip.label}</span>
      {chip.since !== null ? <Elapsed since={chip.since} /> : null}
      {chip.retryAt ? <Countdown at={chip.retryAt} /> : null}
      {chip.note ? (
        // The text is the long note; a narrow list shows data-short instead (screens.css).
        <span className="url-note" data-short={chip.noteShort ?? undefined}>
          {noteText(chip.note)}
        </span>
      ) : null}
    </span>
  );
}

/**
 * "Actions ×2" after a call's chip in the list: the call also went (or waits to go) through that
 * many Webhooks (Actions) requests, coloured by the worst of them. The tooltip lists each; a screen
 * reader hears the same as a sentence instead of the abbreviation. The words are status-chip-model.ts's.
 */
export function ActionsTag({ urls }: { urls: ChipCall['urls'] }) {
  const tag = actionsTagOf(urls);
  if (!tag) return null;
  return (
    <span className={`actions-tag actions-tag-${tag.state}`} title={tag.title} data-testid="actions-tag" data-state={tag.state}>
      <span aria-hidden="true" className="tag-long">
        {tag.label}
      </span>
      <span aria-hidden="true" className="tag-short">
        {tag.short}
      </span>
      <span className="sr-only">{tag.spoken}</span>
    </span>
  );
}

export function NextRetry({ at }: { at: string }) {
  return (
    <span data-testid="next-retry">
      next retry {new Date(at).toLocaleTimeString(undefined, { hour12: false })}
      <Countdown at={at} />
    </span>
  );
}
