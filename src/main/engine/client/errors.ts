import type { RuleViolation } from '../../../shared/message-rules';

export type AnalyticsErrorCode =
  | 'invalid_message'
  | 'message_too_large'
  | 'queue_full'
  | 'client_closed'
  | 'delivery_failed'
  | 'persistence_failed';

/** Base class of every error the client throws or reports, so callers can test `instanceof` once. */
export class AnalyticsError extends Error {
  constructor(
    readonly code: AnalyticsErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AnalyticsError';
  }
}

/** Thrown synchronously by identify/track/...: the message breaks a rule of SPEC §5; nothing was queued. */
export class AnalyticsValidationError extends AnalyticsError {
  /** The first offending field (dotted path; '' for the message itself). */
  readonly field: string;
  constructor(
    readonly type: string,
    readonly violations: RuleViolation[],
  ) {
    // A rule's message that already names its field ("userId or anonymousId is required") is not prefixed again.
    const text = violations.map((v) => (v.field && !v.message.startsWith(`${v.field} `) ? `${v.field} ${v.message}` : v.message)).join('; ');
    super('invalid_message', `invalid ${type} message: ${text}`);
    this.name = 'AnalyticsValidationError';
    this.field = violations[0]?.field ?? '';
  }
}

/** Thrown when the serialized message is over 32768 bytes; nothing was queued. */
export class MessageTooLargeError extends AnalyticsError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super('message_too_large', `message is ${bytes} bytes serialized, over the limit of ${limit} bytes (32 KB)`);
    this.name = 'MessageTooLargeError';
  }
}

/** Thrown when the queue already holds maxQueueSize messages; the caller decides what to do. */
export class QueueFullError extends AnalyticsError {
  constructor(readonly limit: number) {
    super('queue_full', `queue is full (${limit} messages waiting to be sent); message refused, nothing queued`);
    this.name = 'QueueFullError';
  }
}

/** Thrown by every call made after close(). */
export class ClientClosedError extends AnalyticsError {
  constructor() {
    super('client_closed', 'analytics client is closed: close() was called, no new messages are accepted');
    this.name = 'ClientClosedError';
  }
}

/** Reported (never thrown) through the `error` event and flush results when a batch is dropped. */
export class DeliveryError extends AnalyticsError {
  constructor(
    message: string,
    readonly status: number | null,
    readonly count: number,
    readonly retries: number,
    options?: { cause?: unknown },
  ) {
    super('delivery_failed', message, options);
    this.name = 'DeliveryError';
  }
}

/** Reported when the persistence seam throws while removing delivered or dropped messages. */
export class PersistenceError extends AnalyticsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('persistence_failed', message, options);
    this.name = 'PersistenceError';
  }
}
